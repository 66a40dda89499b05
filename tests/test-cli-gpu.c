/* test-cli-gpu.c — `reshard run` and `reshard calibrate` with the GPU transports, from the
 * command line, in every build configuration.
 *
 * RS_BUILT_WITH_CUDA (set by tests/meson.build) says whether this build has the CUDA
 * transports. Without them, both names exit 2 saying the binary was built without CUDA
 * (a usage error: this binary cannot do it). With them, on a machine without a GPU, both
 * exit 1 saying that no CUDA device was found (a runtime failure); on a machine with one,
 * a small refit on cuda-local validates and exits 0. */
#include "test-util.h"

#include <string.h>

static gboolean
built_with_cuda(void)
{
    return g_strcmp0(g_getenv("RS_BUILT_WITH_CUDA"), "1") == 0;
}

static void
check_exit(const RunResult *r, const char *transport)
{
    if (!built_with_cuda()) {
        g_assert_cmpint(r->exit_code, ==, 2);
        assert_contains(r->err, "built without CUDA");
        return;
    }
    if (r->exit_code == 0)
        return; /* a GPU is present (one per rank for nccl) and the work validated */
    if (strstr(r->err, "no CUDA device was found") != NULL) {
        g_assert_cmpint(r->exit_code, ==, 1);
        return;
    }
    /* nccl with a device: a build without NCCL (exit 2), or too few GPUs for the ranks. */
    g_assert_cmpint(r->exit_code, !=, 0);
    g_assert_cmpint(r->exit_code, !=, 3);
}

static void
test_run(gconstpointer data)
{
    const char *transport = data;
    const char *args[] = {"run", "--transport", transport, "--shape", "64x32", "--src-mesh", "2",
                          "--src-placements", "S(0)", "--dst-mesh", "2", "--dst-placements",
                          "S(1)", "--timeout", "60", NULL};
    RunResult r = run_reshard(args);
    check_exit(&r, transport);
    run_result_clear(&r);
}

static void
test_calibrate(gconstpointer data)
{
    const char *transport = data;
    /* Two sizes: one fits no bandwidth and is refused. */
    const char *args[] = {"calibrate", "--transport", transport, "--ranks", "2", "--sizes",
                          "4KiB,1MiB", "--runs", "1", "--copy-runs", "64B", "--copy-bytes",
                          "64KiB", "--format", "json", NULL};
    RunResult r = run_reshard(args);
    check_exit(&r, transport);
    run_result_clear(&r);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    static const char *const names[] = {"cuda-local", "nccl"};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *run = g_strdup_printf("/cli-gpu/run/%s", names[i]);
        g_autofree char *cal = g_strdup_printf("/cli-gpu/calibrate/%s", names[i]);
        g_test_add_data_func(run, names[i], test_run);
        g_test_add_data_func(cal, names[i], test_calibrate);
    }
    return g_test_run();
}

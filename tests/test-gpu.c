/* test-gpu.c — the `gpu` suite: the CUDA kernels against the host implementation, and
 * refits on the cuda-local and nccl transports, on a machine with a GPU.
 *
 * Without a device every test that needs one calls g_test_skip with the reason (the
 * runtime's answer to cudaGetDeviceCount), so the suite passes on CI machines; the one test
 * that needs none checks that both transports then refuse to open with "no CUDA device was
 * found". With a device:
 *   /gpu/kernels/...    pack, unpack (with arbitrary byte ranges, as chunks cut them), local
 *                       copies, the pattern fill and check, on random strided, stepped,
 *                       transposed boxes of every element size, compared byte for byte with
 *                       rs_region_pack/unpack/copy and rs_pattern_fill_box on the host;
 *   /gpu/cuda-local/... every planner case (tests/exec-cases.h) under every strategy,
 *                       validated on the device; a corrupted byte reported exactly as on the
 *                       host transport;
 *   /gpu/nccl/...       the same cases when the machine has a GPU for every rank.
 */
#include "exec/cuda-kernels.h"
#include "exec/cuda-private.h"
#include "exec/pattern.h"
#include "exec/region.h"

#include "exec-cases.h"
#include "region-cases.h"

#include <string.h>

static int n_devices;
static char *no_device_reason;

static gboolean
need_devices(int n)
{
    if (n_devices >= n)
        return TRUE;
    if (n_devices == 0) {
        g_test_skip(no_device_reason);
    } else {
        g_autofree char *msg = g_strdup_printf("needs %d GPUs, this machine has %d", n, n_devices);
        g_test_skip(msg);
    }
    return FALSE;
}

static void
cuda_ok(cudaError_t rc, const char *call)
{
    if (rc != cudaSuccess)
        g_error("%s: %s", call, cudaGetErrorString(rc));
}

static guint8 *
device_copy_of(const guint8 *host, gsize n)
{
    void *p = NULL;
    cuda_ok(cudaMalloc(&p, MAX(n, 1)), "cudaMalloc");
    cuda_ok(cudaMemcpy(p, host, n, cudaMemcpyHostToDevice), "cudaMemcpy");
    return p;
}

static void
download(guint8 *host, const guint8 *dev, gsize n)
{
    cuda_ok(cudaDeviceSynchronize(), "kernel");
    cuda_ok(cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost), "cudaMemcpy");
}

/* Pack and unpack on the device against the host. */
static void
test_kernels_move(gconstpointer data)
{
    if (!need_devices(1))
        return;
    guint e = GPOINTER_TO_UINT(data);
    GRand *rng = g_rand_new_with_seed(4000 + e);
    for (guint iter = 0; iter < 100; iter++) {
        RandomCase c;
        random_case(rng, &c);
        gsize buf_bytes = c.buffer_elems * e;
        g_autofree guint8 *host = random_bytes(rng, buf_bytes);
        guint8 *dev = device_copy_of(host, buf_bytes);
        RsRegion hr, dr;
        rs_region_init(&hr, host, &c.local, &c.piece, e);
        rs_region_init(&dr, dev, &c.local, &c.piece, e);
        guint64 from = iter % 2 ? (guint64)g_rand_int_range(rng, 0, (gint32)hr.n_bytes) : 0;
        guint64 to = hr.n_bytes;
        gsize n = (gsize)(to - from);
        g_autofree guint8 *want = g_malloc0(n + 1);
        g_autofree guint8 *got = g_malloc0(n + 1);
        rs_region_pack(&hr, from, to, want);
        guint8 *wire = device_copy_of(got, n);
        cuda_ok((cudaError_t)rs_cuda_launch_move(&dr, from, to, wire, 1, NULL), "pack kernel");
        download(got, wire, n);
        g_assert_cmpmem(got, n, want, n);
        /* Unpack other bytes into both buffers. */
        g_autofree guint8 *in = random_bytes(rng, n);
        cuda_ok(cudaMemcpy(wire, in, n, cudaMemcpyHostToDevice), "cudaMemcpy");
        rs_region_unpack(&hr, from, to, in);
        cuda_ok((cudaError_t)rs_cuda_launch_move(&dr, from, to, wire, 0, NULL), "unpack kernel");
        g_autofree guint8 *back = g_malloc(buf_bytes + 1);
        download(back, dev, buf_bytes);
        g_assert_cmpmem(back, buf_bytes, host, buf_bytes);
        cudaFree(wire);
        cudaFree(dev);
    }
    g_rand_free(rng);
}

/* Local copies and the pattern on the device against the host. */
static void
test_kernels_pattern(gconstpointer data)
{
    if (!need_devices(1))
        return;
    guint e = GPOINTER_TO_UINT(data);
    GRand *rng = g_rand_new_with_seed(5000 + e);
    for (guint iter = 0; iter < 100; iter++) {
        RandomCase c;
        random_case(rng, &c);
        gsize buf_bytes = c.buffer_elems * e;
        guint64 seed = rs_pattern_seed(iter);
        g_autofree guint8 *want = g_malloc0(buf_bytes);
        g_autofree guint8 *got = g_malloc0(buf_bytes);
        rs_pattern_fill_box(seed, c.n_dims, c.shape, &c.local, want, e);
        guint8 *dev = device_copy_of(got, buf_bytes);
        RsBoxIndex bi;
        rs_box_index_init(&bi, c.n_dims, c.shape, &c.local);
        cuda_ok((cudaError_t)rs_cuda_launch_fill(&bi, seed, e, dev, NULL), "fill kernel");
        download(got, dev, buf_bytes);
        g_assert_cmpmem(got, buf_bytes, want, buf_bytes);
        /* The check kernel: clean, then one corrupted element found at its k. */
        unsigned long long init[2] = {0, G_MAXUINT64}, res[2];
        unsigned long long *dres =
            (unsigned long long *)device_copy_of((guint8 *)init, sizeof init);
        cuda_ok((cudaError_t)rs_cuda_launch_check(&bi, seed, e, dev, dres, NULL), "check");
        download((guint8 *)res, (guint8 *)dres, sizeof res);
        g_assert_cmpuint(res[0], ==, 0);
        guint64 k = (guint64)g_rand_int_range(rng, 0, (gint32)bi.n_elems), g, l;
        rs_box_index_elem(&bi, k, &g, &l);
        cuda_ok((cudaError_t)rs_cuda_launch_xor_byte(dev + l * e, NULL), "xor kernel");
        cuda_ok(cudaMemcpy(dres, init, sizeof init, cudaMemcpyHostToDevice), "cudaMemcpy");
        cuda_ok((cudaError_t)rs_cuda_launch_check(&bi, seed, e, dev, dres, NULL), "check");
        download((guint8 *)res, (guint8 *)dres, sizeof res);
        g_assert_cmpuint(res[0], ==, 1);
        g_assert_cmpuint(res[1], ==, k);
        /* Undo the corruption: the copy below starts from the host's clean image. */
        cuda_ok((cudaError_t)rs_cuda_launch_xor_byte(dev + l * e, NULL), "xor kernel");
        /* A local copy of the piece into a row-major box of its own. */
        RsLocalBox dst_local = {0};
        dst_local.box = c.piece;
        gint64 s = 1;
        for (gint d = (gint)c.n_dims - 1; d >= 0; d--) {
            dst_local.strides_elems[d] = s;
            s *= rs_box_get_count(&c.piece, (guint)d);
        }
        gsize dst_bytes = (gsize)s * e;
        g_autofree guint8 *dst_want = g_malloc0(dst_bytes);
        g_autofree guint8 *dst_got = g_malloc0(dst_bytes);
        guint8 *ddev = device_copy_of(dst_got, dst_bytes);
        RsRegion hs, hd, ds, dd;
        rs_region_init(&hs, got, &c.local, &c.piece, e);
        rs_region_init(&hd, dst_want, &dst_local, &c.piece, e);
        rs_region_init(&ds, dev, &c.local, &c.piece, e);
        rs_region_init(&dd, ddev, &dst_local, &c.piece, e);
        rs_region_copy(&hd, &hs);
        cuda_ok((cudaError_t)rs_cuda_launch_copy(&dd, &ds, NULL), "copy kernel");
        download(dst_got, ddev, dst_bytes);
        g_assert_cmpmem(dst_got, dst_bytes, dst_want, dst_bytes);
        cudaFree(ddev);
        cudaFree(dres);
        cudaFree(dev);
    }
    g_rand_free(rng);
}

static void
run_case_on(const char *transport, const CaseRow *row)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    add_tensor(refit, &row->tensor);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTransport) t = rs_transport_open(transport, NULL, &error);
    if (g_error_matches(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNAVAILABLE)) {
        g_test_skip(error->message); /* nccl in a build without NCCL */
        return;
    }
    g_assert_no_error(error);
    for (guint s = 0; s < RS_STRATEGY_N; s++) {
        g_autoptr(RsPlan) plan = rs_plan_build(refit, (RsStrategy)s, &error);
        g_assert_no_error(error);
        RsExecOptions opts = {.chunk_bytes = 24, .window = 3, .n_runs = 2, .timeout_s = 60};
        RsExecResult res;
        if (!rs_exec_run(t, plan, refit, &opts, &res, &error))
            g_error("%s on %s: %s", rs_strategy_get_name((RsStrategy)s), transport,
                    error->message);
        if (res.n_bad_elems != 0) {
            g_autofree char *what = rs_exec_mismatch_format(&res.first_bad, refit);
            g_error("%s on %s: %" G_GUINT64_FORMAT " bad elements, first %s",
                    rs_strategy_get_name((RsStrategy)s), transport, res.n_bad_elems, what);
        }
        g_assert_true(res.validated);
        g_assert_cmpuint(res.n_runs, ==, 2);
        g_assert_cmpuint(res.n_ranks, ==, row->n_ranks);
        g_assert_cmpuint(res.bytes_moved, ==, rs_plan_get_bytes_moved(plan));
        rs_exec_result_clear(&res);
    }
}

static void
test_cuda_local_case(gconstpointer data)
{
    if (need_devices(1))
        run_case_on("cuda-local", data);
}

static void
test_nccl_case(gconstpointer data)
{
    const CaseRow *row = data;
    if (need_devices((int)row->n_ranks))
        run_case_on("nccl", row);
}

/* The corrupted byte of test-exec.c, on cuda-local: the same element and bytes. */
static void
test_cuda_local_corrupt(void)
{
    if (!need_devices(1))
        return;
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec spec = {"w", "8x8", RS_DTYPE_F32, "2", "S(0)", "0,1", "2", "S(1)", "0,1"};
    add_tensor(refit, &spec);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    guint m01 = G_MAXUINT;
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++)
        if (rs_plan_get_message(plan, m)->src == 0 && rs_plan_get_message(plan, m)->dst == 1)
            m01 = m;
    g_autoptr(RsTransport) host = rs_transport_open("host", NULL, &error);
    g_autoptr(RsTransport) gpu = rs_transport_open("cuda-local", NULL, &error);
    g_assert_no_error(error);
    const guint64 chunks[] = {0, 16, 3};
    for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
        RsExecOptions opts = {.chunk_bytes = chunks[c], .corrupt = TRUE, .corrupt_message = m01,
                              .corrupt_byte = 21};
        RsExecResult a, b;
        g_assert_true(rs_exec_run(host, plan, refit, &opts, &a, &error));
        g_assert_true(rs_exec_run(gpu, plan, refit, &opts, &b, &error));
        g_assert_no_error(error);
        g_assert_cmpuint(b.n_bad_elems, ==, 1);
        g_autofree char *ta = rs_exec_mismatch_format(&a.first_bad, refit);
        g_autofree char *tb = rs_exec_mismatch_format(&b.first_bad, refit);
        g_assert_cmpstr(tb, ==, ta);
        rs_exec_result_clear(&a);
        rs_exec_result_clear(&b);
    }
}

/* Without a device both transports refuse to open, naming the cause (reshard exits 1). */
static void
test_no_device(void)
{
    if (n_devices > 0) {
        g_test_skip("this machine has a CUDA device");
        return;
    }
    const char *names[] = {"cuda-local", "nccl"};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(RsTransport) t = rs_transport_open(names[i], NULL, &error);
        g_assert_null(t);
        if (g_error_matches(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNAVAILABLE))
            continue; /* nccl in a build with CUDA but without NCCL */
        g_assert_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED);
        g_assert_nonnull(strstr(error->message, "no CUDA device was found"));
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_autoptr(GError) error = NULL;
    n_devices = rs_cuda_get_device_count(&error);
    no_device_reason = g_strdup(error ? error->message : "");
    g_test_add_func("/gpu/no-device", test_no_device);
    for (guint i = 0; i < G_N_ELEMENTS(elem_sizes); i++) {
        gconstpointer e = GUINT_TO_POINTER(elem_sizes[i]);
        g_autofree char *move = g_strdup_printf("/gpu/kernels/move/elem-%u", elem_sizes[i]);
        g_autofree char *pattern =
            g_strdup_printf("/gpu/kernels/pattern-copy/elem-%u", elem_sizes[i]);
        g_test_add_data_func(move, e, test_kernels_move);
        g_test_add_data_func(pattern, e, test_kernels_pattern);
    }
    for (guint i = 0; i < G_N_ELEMENTS(case_rows); i++) {
        g_autofree char *a = g_strdup_printf("/gpu/cuda-local/cases/%s", case_rows[i].id);
        g_autofree char *b = g_strdup_printf("/gpu/nccl/cases/%s", case_rows[i].id);
        g_test_add_data_func(a, &case_rows[i], test_cuda_local_case);
        g_test_add_data_func(b, &case_rows[i], test_nccl_case);
    }
    g_test_add_func("/gpu/cuda-local/corrupt-byte", test_cuda_local_corrupt);
    int rc = g_test_run();
    g_free(no_device_reason);
    return rc;
}

/* test-cli.c — the reshard command as a user meets it: the default scenario's JSON, and
 * bad input giving exit code 2 with a message naming the field (and file:line). */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

typedef struct {
    gint exit_code;
    char *out;
    char *err;
} RunResult;

static void
run_result_clear(RunResult *r)
{
    g_free(r->out);
    g_free(r->err);
}

static RunResult
run_reshard(const char *const *args)
{
    const char *bin = g_getenv("RESHARD_BIN");
    g_assert_nonnull(bin);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)bin);
    for (guint i = 0; args[i] != NULL; i++)
        g_ptr_array_add(argv, (gpointer)args[i]);
    g_ptr_array_add(argv, NULL);
    RunResult r = {0};
    gint status;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &r.out, &r.err, &status, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(status));
    r.exit_code = WEXITSTATUS(status);
    return r;
}

static char *
write_temp(const char *name, const char *text)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("rs-cli-XXXXXX", &error);
    g_assert_no_error(error);
    char *path = g_build_filename(dir, name, NULL);
    g_assert_true(g_file_set_contents(path, text, -1, &error));
    return path;
}

static void
assert_contains(const char *haystack, const char *needle)
{
    if (strstr(haystack, needle) == NULL)
        g_error("\"%s\" does not contain \"%s\"", haystack, needle);
}

/* The default scenario: DeepSeek-V3 BF16, 256 → 256 GPUs. */
static void
test_default_json(void)
{
    const char *args[] = {"simulate", "--format", "json", "-q", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(json_parser_load_from_data(parser, r.out, -1, &error));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonObject *model = json_object_get_object_member(root, "model");
    g_assert_cmpint(json_object_get_int_member(model, "params"), ==, 671026419200);
    g_assert_cmpint(json_object_get_int_member(model, "bytes"), ==,
                    671026419200ll * 2 + 58 * 256 * 2);
    JsonArray *strategies = json_object_get_array_member(root, "strategies");
    g_assert_cmpuint(json_array_get_length(strategies), ==, 2);
    double bound = json_object_get_double_member(root, "lower_bound_s");
    g_assert_cmpfloat(bound, >, 0);
    guint64 model_bytes = json_object_get_int_member(model, "bytes");
    for (guint i = 0; i < 2; i++) {
        JsonObject *s = json_array_get_object_element(strategies, i);
        const char *name = json_object_get_string_member(s, "name");
        guint64 moved = json_object_get_int_member(s, "bytes_moved");
        if (strcmp(name, "direct") == 0) {
            /* 8 inference replicas each receive the model once, plus the replicated
             * tensors once per tp rank. */
            g_assert_cmpuint(moved, >=, 8 * model_bytes);
            g_assert_cmpuint(moved, <, 9 * model_bytes);
        } else {
            g_assert_cmpstr(name, ==, "gather-broadcast");
            /* Every one of the 256 inference GPUs receives the whole model. */
            g_assert_cmpuint(moved, >=, 256 * model_bytes);
        }
        g_assert_cmpfloat(json_object_get_double_member(s, "predicted_s"), >=, bound);
    }
    run_result_clear(&r);
}

typedef struct {
    const char *const args[12];
    const char *file_name; /* a temp file written with file_text; "@" in args is its path */
    const char *file_text;
    gint exit_code;
    const char *fragments[3];
} CliCase;

static const CliCase cli_cases[] = {
    {{"simulate", "--model", "nosuch", NULL},
     NULL, NULL, 2, {"unknown model \"nosuch\"", "deepseek-v3", NULL}},
    {{"simulate", "--model", "@", NULL},
     "bad.yaml", "name: x\nfamily: llama\nhidden_size: [4096\n", 2, {"bad.yaml:4:1", NULL}},
    {{"simulate", "--train", "megatron:tp=1,pp=16,dp=8", NULL},
     NULL, NULL, 2, {"train: megatron", "= 128 ranks, but 256 GPUs are given", NULL}},
    {{"simulate", "--topology", "@", NULL},
     "topo.yaml",
     "name: t\nnodes: 64\ngpus_per_node: 8\nnvlink:\n  bandwidth: 450 Gb/s\n"
     "nic:\n  bandwidth: 400 Gbit/s\n",
     2, {"topo.yaml:5:14: nvlink.bandwidth", "ambiguous, use Gbit/s or GB/s", NULL}},
    {{"simulate", "--nodes", "16", NULL},
     NULL, NULL, 2, {"GPU 128 is not in topology dgx-h100 with 16 nodes", NULL}},
    {{"simulate", "--strategy", "teleport", NULL},
     NULL, NULL, 2, {"unknown strategy \"teleport\"", NULL}},
    {{"simulate", "--format", "xml", NULL}, NULL, NULL, 2, {"unknown format", NULL}},
    {{"simulate", "--dtype", "bf17", NULL}, NULL, NULL, 2, {"--dtype: unknown dtype", NULL}},
    {{"simulate", "--infer", "vllm:tp=3", NULL},
     NULL, NULL, 2, {"infer: vllm", "does not divide the 256 GPUs", NULL}},
    {{"simulate", "--scenario", "@", NULL},
     "s.yaml", "model: deepseek-v3\ntopology: dgx-h100\ntrain:\n  convention: megatron\n"
     "  gpus: 0-7\n  tq: 2\n",
     2, {"s.yaml:6:3: train.tq", "known: tp, cp, pp, dp, ep, etp", NULL}},
    {{"simulate", "--bogus", NULL}, NULL, NULL, 2, {"Unknown option --bogus", NULL}},
    {{"frobnicate", NULL}, NULL, NULL, 2, {"unknown command", NULL}},
};

static void
test_cli_case(gconstpointer data)
{
    const CliCase *c = data;
    g_autofree char *path = NULL;
    const char *args[12];
    if (c->file_name != NULL)
        path = write_temp(c->file_name, c->file_text);
    guint n = 0;
    for (; c->args[n] != NULL; n++)
        args[n] = strcmp(c->args[n], "@") == 0 ? path : c->args[n];
    args[n++] = "-q";
    args[n] = NULL;
    /* "-q" after a command that is not one is harmless: the command is rejected first. */
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, c->exit_code);
    g_assert_cmpstr(r.out, ==, "");
    for (guint i = 0; c->fragments[i] != NULL; i++)
        assert_contains(r.err, c->fragments[i]);
    run_result_clear(&r);
}

static void
test_help(void)
{
    const char *args[] = {"help", "simulate", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "--scenario");
    assert_contains(r.out, "--infer");
    run_result_clear(&r);
    const char *args2[] = {"help", NULL};
    r = run_reshard(args2);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "simulate");
    assert_contains(r.out, "models");
    run_result_clear(&r);
}

static void
test_models(void)
{
    const char *args[] = {"models", "--format", "csv", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "deepseek-v3,DeepSeek-V3,deepseek_v3,61,1025,671026419200,");
    assert_contains(r.out, "llama-3.1-8b,Llama-3.1-8B,llama,32,291,8030261248,");
    run_result_clear(&r);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cli/simulate/default-json", test_default_json);
    for (guint i = 0; i < G_N_ELEMENTS(cli_cases); i++) {
        g_autofree char *path = g_strdup_printf("/cli/errors/%u", i);
        g_test_add_data_func(path, &cli_cases[i], test_cli_case);
    }
    g_test_add_func("/cli/help", test_help);
    g_test_add_func("/cli/models", test_models);
    return g_test_run();
}

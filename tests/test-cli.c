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
        /* The flow-level model predicts; the first-order estimate is kept beside it. */
        g_assert_cmpstr(json_object_get_string_member(s, "network_model"), ==, "flow");
        g_assert_cmpfloat(json_object_get_double_member(s, "first_order_s"), >=, bound);
        JsonObject *flow = json_object_get_object_member(s, "flow");
        g_assert_cmpfloat(json_object_get_double_member(flow, "total_s"), ==,
                          json_object_get_double_member(s, "predicted_s"));
        JsonObject *bottleneck = json_object_get_object_member(flow, "bottleneck_link");
        g_assert_true(g_str_has_suffix(json_object_get_string_member(bottleneck, "name"),
                                       "nic-egress"));
        /* Direct: every one of the 512 GPUs sends or receives; gather-broadcast: every
         * inference GPU and the training GPUs gathered from. */
        guint n_finish =
            json_array_get_length(json_object_get_array_member(flow, "gpu_finish_s"));
        if (strcmp(name, "direct") == 0)
            g_assert_cmpuint(n_finish, ==, 512);
        else
            g_assert_cmpuint(n_finish, >, 256);
    }
    JsonObject *cuts = json_object_get_object_member(root, "cuts_s");
    g_assert_cmpfloat(json_object_get_double_member(cuts, "nvlink-domain-ingress"), ==, bound);
    g_assert_cmpfloat(json_object_get_double_member(cuts, "gpu-egress"), >, 0);
    run_result_clear(&r);
}

static JsonObject *
parse_object(JsonParser *parser, const char *text)
{
    g_autoptr(GError) error = NULL;
    g_assert_true(json_parser_load_from_data(parser, text, -1, &error));
    g_assert_no_error(error);
    return json_node_get_object(json_parser_get_root(parser));
}

/* --network bottleneck keeps the first-order estimate as the prediction. */
static void
test_bottleneck_json(void)
{
    const char *args[] = {"simulate", "--network", "bottleneck", "--strategy", "direct",
                          "--format", "json", "-q", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_object(parser, r.out);
    JsonObject *s =
        json_array_get_object_element(json_object_get_array_member(root, "strategies"), 0);
    g_assert_cmpstr(json_object_get_string_member(s, "network_model"), ==, "bottleneck");
    g_assert_cmpfloat(json_object_get_double_member(s, "predicted_s"), ==,
                      json_object_get_double_member(s, "first_order_s"));
    g_assert_false(json_object_has_member(s, "flow"));
    run_result_clear(&r);
}

/* An explicit message list on tests/data/two-node.yaml (NIC 5 GB/s, 10 us per NIC link,
 * 2 us overhead; NVLink 100 GB/s, 1 us): a relay 0 → 2 → 3 of 10 MB in 4 chunks of 2.5 MB
 * (the first hop over the network, the second over NVLink) and a 1 MB NVLink message in
 * phase 1. Hop 1: 22 us + 2 ms; hop 2's last chunk leaves when hop 1 ends and takes
 * 2.5 MB / 100 GB/s = 25 us: 2.047 ms. Phase 1: 4 us + 10 us. */
static void
test_messages(void)
{
    g_autofree char *dir = NULL;
    {
        g_autoptr(GError) error = NULL;
        dir = g_dir_make_tmp("rs-cli-XXXXXX", &error);
        g_assert_no_error(error);
    }
    g_autofree char *in = g_build_filename(dir, "m.csv", NULL);
    g_autofree char *trace = g_build_filename(dir, "t.csv", NULL);
    g_autofree char *links = g_build_filename(dir, "l.csv", NULL);
    g_assert_true(g_file_set_contents(in,
                                      "message,src,dst,bytes,phase,depends_on\n"
                                      "7,0,2,10000000,0,\n"
                                      "8,2,3,10000000,0,7\n"
                                      "9,1,0,1000000,1,\n",
                                      -1, NULL));
    const char *data = g_getenv("G_TEST_SRCDIR");
    g_autofree char *topo = g_build_filename(data, "data", "two-node.yaml", NULL);
    const char *args[] = {"simulate", "--messages", in, "--topology", topo, "--chunk-size",
                          "2.5 MB", "--trace", trace, "--link-stats", links, "--format", "json",
                          "-q", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_object(parser, r.out);
    double phase0 = 22e-6 + 10e6 / 5e9 + 2.5e6 / 100e9;
    g_assert_cmpfloat_with_epsilon(json_object_get_double_member(root, "predicted_s"),
                                   phase0 + 14e-6, 1e-12);
    g_assert_cmpint(json_object_get_int_member(root, "bytes_moved"), ==, 21000000);
    g_assert_cmpstr(json_object_get_string_member(root, "bottleneck_link"), ==, "gpu0.nic-egress");
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(trace, &text, NULL, NULL));
    assert_contains(text, "message,src,dst,bytes,phase,start_s,end_s,route,depends_on\n");
    assert_contains(text, ",gpu0.nic-egress;gpu2.nic-ingress,\n");
    assert_contains(text, "8,2,3,10000000,0,");
    assert_contains(text, ",gpu2.nvlink-egress;gpu3.nvlink-ingress,7\n");
    g_autofree char *csv = NULL;
    g_assert_true(g_file_get_contents(links, &csv, NULL, NULL));
    assert_contains(csv, "\ngpu0.nic-egress,nic-egress,5e+09,1e-05,0,10000000,0.002,0.002,");
    run_result_clear(&r);
}

/* With several strategies, --trace and --link-stats write one file per strategy. */
static void
test_simulate_trace_files(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = g_dir_make_tmp("rs-cli-XXXXXX", &error);
    g_assert_no_error(error);
    g_autofree char *trace = g_build_filename(dir, "t.csv", NULL);
    g_autofree char *links = g_build_filename(dir, "l.csv", NULL);
    const char *args[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                          "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer", "vllm:tp=4",
                          "--infer-gpus", "8-15", "--trace", trace, "--link-stats", links, "-q",
                          NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    const char *const strategies[] = {"direct", "gather-broadcast"};
    for (guint i = 0; i < G_N_ELEMENTS(strategies); i++) {
        g_autofree char *name = g_strdup_printf("t-%s.csv", strategies[i]);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        g_autofree char *meta = g_strdup_printf("# strategy: %s\n", strategies[i]);
        assert_contains(text, meta);
        assert_contains(text, "# source: simulated\n");
        assert_contains(text, "\nmessage,src,dst,bytes,phase,start_s,end_s,route,depends_on\n0,");
        g_autofree char *lname = g_strdup_printf("l-%s.csv", strategies[i]);
        g_autofree char *lpath = g_build_filename(dir, lname, NULL);
        g_assert_true(g_file_test(lpath, G_FILE_TEST_IS_REGULAR));
    }
    g_assert_false(g_file_test(trace, G_FILE_TEST_EXISTS));
    run_result_clear(&r);
}

/* `reshard topology show` lists every link of the test fabric. */
static void
test_topology_show(void)
{
    const char *data = g_getenv("G_TEST_SRCDIR");
    g_autofree char *topo = g_build_filename(data, "data", "small-fabric.yaml", NULL);
    const char *args[] = {"topology", "show", topo, "--links", "--format", "csv", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "id,link,kind,bw_bytes_per_s,efficiency,capacity_bytes_per_s,"
                           "latency_s,dominated\n"
                           "0,gpu0.nvlink-egress,nvlink-egress,1e+11,1,1e+11,1e-06,0\n");
    assert_contains(r.out, "\n2,gpu0.pcie-egress,pcie-egress,1.6e+10,1,1.6e+10,5e-07,1\n");
    assert_contains(r.out, "\n103,su1.rail1.downlink,downlink,2e+10,1,2e+10,0,0\n");
    run_result_clear(&r);
    const char *args2[] = {"topology", "show", "dgx-h100", "--nodes", "64", NULL};
    r = run_reshard(args2);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "GPUs       512 H100 SXM5 80GB, 80 GiB each, on 64 nodes of 8\n");
    assert_contains(r.out, "2 scalable units of 32 nodes; 16 leaves");
    assert_contains(r.out, "3,104 directed links");
    run_result_clear(&r);
    const char *args3[] = {"topology", "show", "gb200-nvl72", "--nic-bw", "800Gbit/s",
                           "--format", "json", NULL};
    r = run_reshard(args3);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_object(parser, r.out);
    g_assert_cmpint(json_object_get_int_member(root, "gpus_per_nvlink_domain"), ==, 72);
    run_result_clear(&r);
    const char *args4[] = {"topology", "list", NULL};
    r = run_reshard(args4);
    g_assert_cmpstr(r.out, ==, "dgx-b200\ndgx-h100\ngb200-nvl72\ngb300-nvl72\n");
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
    {{"simulate", "--network", "packet", NULL}, NULL, NULL, 2, {"--network: unknown model", NULL}},
    {{"simulate", "--rates", "fast", NULL}, NULL, NULL, 2, {"--rates: unknown mode", NULL}},
    {{"simulate", "--nic-bw", "800", NULL},
     NULL, NULL, 2, {"--nic-bw: bandwidth \"800\": missing unit", NULL}},
    {{"simulate", "--nic-bw", "800 Gb/s", NULL},
     NULL, NULL, 2, {"ambiguous, use Gbit/s or GB/s", NULL}},
    {{"simulate", "--oversubscription", "0.5", NULL}, NULL, NULL, 2,
     {"--oversubscription: \"0.5\": expected a ratio >= 1", NULL}},
    {{"simulate", "--chunk-size", "4 Mb", NULL},
     NULL, NULL, 2, {"--chunk-size: size", "ambiguous", NULL}},
    {{"simulate", "--network", "bottleneck", "--trace", "x.csv", NULL}, NULL, NULL, 2,
     {"need the flow model", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv", "src,dst,bytes\n0,1,100\n0,1,1e6\n", 2, {"m.csv:3: column bytes: \"1e6\"", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv", "message,src,dst,bytes,depends_on\n0,0,1,100,1\n1,1,2,100,0\n", 2,
     {"m.csv: message 0 is part of a dependency cycle", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv", "src,dst,bytes\n0,256,100\n", 2,
     {"m.csv: message 0: rank 256 is not a GPU of topology dgx-h100 (256 GPUs)", NULL}},
    {{"topology", "show", "@", NULL},
     "t.yaml", "name: t\nnodes: 2\ngpus_per_node: 2\nnvlink: {bandwidth: 100 GB/s}\n"
     "nic: {bandwidth: 100 Gbps}\n",
     2, {"t.yaml:5:18: nic.bandwidth: bandwidth \"100 Gbps\": ambiguous", NULL}},
    {{"topology", "show", "nosuch", NULL},
     NULL, NULL, 2, {"unknown topology \"nosuch\"", "dgx-h100", NULL}},
    {{"topology", "frob", NULL}, NULL, NULL, 2, {"expected \"show NAME|FILE\" or \"list\"", NULL}},
    {{"topology", "show", "dgx-h100", "--pxn", "--no-pxn", NULL},
     NULL, NULL, 2, {"contradict", NULL}},
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
    assert_contains(r.out, "topology");
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
    g_test_add_func("/cli/simulate/bottleneck-json", test_bottleneck_json);
    g_test_add_func("/cli/simulate/messages", test_messages);
    g_test_add_func("/cli/simulate/trace-files", test_simulate_trace_files);
    g_test_add_func("/cli/topology/show", test_topology_show);
    for (guint i = 0; i < G_N_ELEMENTS(cli_cases); i++) {
        g_autofree char *path = g_strdup_printf("/cli/errors/%u", i);
        g_test_add_data_func(path, &cli_cases[i], test_cli_case);
    }
    g_test_add_func("/cli/help", test_help);
    g_test_add_func("/cli/models", test_models);
    return g_test_run();
}

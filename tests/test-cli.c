/* test-cli.c — the reshard command as a user meets it: the default scenario's JSON, and
 * bad input giving exit code 2 with a message naming the field (and file:line). */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-util.h"

/* make_temp_dir()'s folders go when their test ends, with what the test wrote there: every
 * run of the suites had left about 2,000 of them in the temporary directory (15,637 under
 * /tmp on 2026-12-07). The child test runs with $TMPDIR a fresh folder that must end empty. */
static void
test_temp_dir_removed(void)
{
    if (g_test_subprocess()) {
        g_autofree char *dir = make_temp_dir();
        g_assert_true(g_str_has_prefix(dir, g_getenv("TMPDIR")));
        g_autofree char *sub = g_build_filename(dir, "plots", NULL);
        g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
        g_autofree char *file = g_build_filename(sub, "a.dat", NULL);
        g_assert_true(g_file_set_contents(file, "1 2\n", -1, NULL));
        return;
    }
    g_autoptr(GError) error = NULL;
    /* A new folder: g_dir_make_tmp() replaces the template's six Xs with a unique name. */
    g_autofree char *tmp = g_dir_make_tmp("rs-tmpdir-XXXXXX", &error);
    g_assert_no_error(error);
    g_autofree char *saved = g_strdup(g_getenv("TMPDIR"));
    g_setenv("TMPDIR", tmp, TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    if (saved != NULL)
        g_setenv("TMPDIR", saved, TRUE);
    else
        g_unsetenv("TMPDIR");
    g_test_trap_assert_passed();
    g_autoptr(GDir) d = g_dir_open(tmp, 0, &error);
    g_assert_no_error(error);
    const char *left = g_dir_read_name(d);
    if (left != NULL)
        g_error("the test left %s in %s", left, tmp);
    g_assert_cmpint(g_rmdir(tmp), ==, 0);
}

/* The default scenario: DeepSeek-V3 BF16, 256 → 256 GPUs, every strategy side by side
 * (first-order model here: the flow model of every strategy takes minutes, and
 * default-flow-json checks the flow fields on one). */
static void
test_default_json(void)
{
    const char *args[] = {"simulate", "--network", "bottleneck", "--format", "json", "-q", NULL};
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
    const char *names[] = {"nccl-broadcast", "direct", "node-aware", "hierarchical", "auto"};
    g_assert_cmpuint(json_array_get_length(strategies), ==, G_N_ELEMENTS(names));
    double bound = json_object_get_double_member(root, "lower_bound_s");
    g_assert_cmpfloat(bound, >, 0);
    guint64 model_bytes = json_object_get_int_member(model, "bytes");
    guint64 moved[G_N_ELEMENTS(names)], network[G_N_ELEMENTS(names)];
    double time_s[G_N_ELEMENTS(names)];
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        JsonObject *s = json_array_get_object_element(strategies, i);
        g_assert_cmpstr(json_object_get_string_member(s, "name"), ==, names[i]);
        moved[i] = json_object_get_int_member(s, "bytes_moved");
        network[i] = json_object_get_int_member(s, "bytes_network");
        time_s[i] = json_object_get_double_member(s, "predicted_s");
        g_assert_cmpfloat(time_s[i], >=, bound);
        g_assert_cmpstr(json_object_get_string_member(s, "network_model"), ==, "bottleneck");
        /* Staging per round stays within the bound the planner was given. */
        g_assert_cmpint(json_object_get_int_member(s, "max_round_staging_bytes"), <=,
                        json_object_get_int_member(root, "staging_bytes"));
    }
    /* Every one of the 256 inference GPUs receives the whole model. */
    g_assert_cmpuint(moved[0], >=, 256 * model_bytes);
    /* direct: 8 inference replicas each receive the model once, plus the replicated
     * tensors once per tp rank; node-aware moves the same bytes from other replicas. */
    g_assert_cmpuint(moved[1], >=, 8 * model_bytes);
    g_assert_cmpuint(moved[1], <, 9 * model_bytes);
    g_assert_cmpuint(moved[2], ==, moved[1]);
    /* hierarchical: the replicated tensors cross the network once per NVLink domain (4
     * per replica), not once per GPU (32); the rest is forwarded over NVLink. */
    g_assert_cmpuint(network[3], >=, 8 * model_bytes);
    g_assert_cmpuint(network[3], <, network[1]);
    g_assert_cmpuint(moved[3] - network[3], ==,
                     json_object_get_int_member(json_array_get_object_element(strategies, 3),
                                                "bytes_nvlink"));
    /* auto keeps the fastest. */
    for (guint i = 0; i < 4; i++)
        g_assert_cmpfloat(time_s[4], <=, time_s[i]);
    g_assert_nonnull(strstr(json_object_get_string_member(root, "auto_reason"), "hierarchical"));
    JsonObject *cuts = json_object_get_object_member(root, "cuts_s");
    g_assert_cmpfloat(json_object_get_double_member(cuts, "nvlink-domain-ingress"), ==, bound);
    g_assert_cmpfloat(json_object_get_double_member(cuts, "gpu-egress"), >, 0);
    run_result_clear(&r);
}

/* The default scenario under the flow model, for one strategy. */
static void
test_default_flow_json(void)
{
    const char *args[] = {"simulate", "--strategy", "direct", "--format", "json", "-q", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(json_parser_load_from_data(parser, r.out, -1, &error));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *strategies = json_object_get_array_member(root, "strategies");
    g_assert_cmpuint(json_array_get_length(strategies), ==, 1);
    double bound = json_object_get_double_member(root, "lower_bound_s");
    JsonObject *s = json_array_get_object_element(strategies, 0);
    g_assert_cmpstr(json_object_get_string_member(s, "name"), ==, "direct");
    g_assert_cmpfloat(json_object_get_double_member(s, "predicted_s"), >=, bound);
    /* The flow-level model predicts; the first-order estimate is kept beside it. */
    g_assert_cmpstr(json_object_get_string_member(s, "network_model"), ==, "flow");
    g_assert_cmpfloat(json_object_get_double_member(s, "first_order_s"), >=, bound);
    JsonObject *flow = json_object_get_object_member(s, "flow");
    g_assert_cmpfloat(json_object_get_double_member(flow, "total_s"), ==,
                      json_object_get_double_member(s, "predicted_s"));
    JsonObject *bottleneck = json_object_get_object_member(flow, "bottleneck_link");
    g_assert_true(
        g_str_has_suffix(json_object_get_string_member(bottleneck, "name"), "nic-egress"));
    /* Every one of the 512 GPUs sends or receives. */
    g_assert_cmpuint(json_array_get_length(json_object_get_array_member(flow, "gpu_finish_s")),
                     ==, 512);
    run_result_clear(&r);
}

/* The shipped scenarios of the planner targets: model, GPUs and layouts as their comments
 * state; the hierarchical plan stays within staging and (first-order model) within 15% of
 * the lower bound. Kimi-K3 runs on its first 3 layers here (the whole model takes ~20 s
 * and 5 GB to plan); so do DeepSeek-V3 and Kimi-K2 on H100 in the default suite (the whole
 * models take 9 s and 19 s on 2 cores; the slow suite runs them whole, scenario_full_cases).
 * Three layers sit on the first pipeline stage only, so their efficiency is lower: the
 * bound is then the figure measured when the rows were written, rounded down. */
typedef struct {
    const char *scenario;
    const char *layers;
    gint64 params;
    gint64 gpus;
    const char *train, *train_gpus, *infer, *infer_gpus;
    double min_efficiency;
} ScenarioCase;

static const ScenarioCase scenario_cases[] = {
    {"deepseek-v3-h100", "0-2", 1750450176, 512, "megatron tp=1 cp=1 pp=16 dp=16 ep=16 etp=1",
     "0-255", "vllm tp=32 replicas=8", "256-511", 0.20},
    {"deepseek-v3-gb200", NULL, 671026419200, 288, "megatron tp=1 cp=1 pp=4 dp=32 ep=16 etp=1",
     "0-127", "vllm tp=8 replicas=16", "144-271", 0.85},
    {"qwen3-235b-gb200", NULL, 235093634560, 144, "megatron tp=4 cp=1 pp=4 dp=4 ep=16 etp=1",
     "0-63", "vllm tp=8 replicas=8", "72-135", 0.85},
    {"kimi-k2-h100-fp8", "0-2", 34616230656, 384, "megatron tp=1 cp=1 pp=16 dp=16 ep=16 etp=1",
     "0-255", "vllm tp=16 replicas=8", "256-383", 0.40},
    {"qwen3-30b-colocated", NULL, 30532122624, 64, "megatron tp=2 cp=1 pp=2 dp=16 ep=8 etp=1",
     "0-63", "vllm tp=4 replicas=16", "0-63", 0.85},
    /* 64 GPUs of each 72-GPU rack (gpus_per_domain): 24 racks; lists count the job's GPUs. */
    {"kimi-k3-gb300", "0-2", 61627887008, 1728, "megatron tp=2 cp=1 pp=8 dp=64 ep=64 etp=1",
     "0-1023", "vllm tp=8 dp=64 ep replicas=1", "1024-1535", 0.0},
    /* NCCL M2N's calibration cases: 64 of each rack's 72 GPUs. Layers 0-2 of DeepSeek-V3
     * all sit on stage 0's 32 GPUs (of 128), hence the low efficiency floor. */
    {"m2n-deepseek-v3-gb200", "0-2", 1750450176, 288,
     "megatron tp=1 cp=1 pp=4 dp=32 ep=16 etp=1", "0-63,72-135", "vllm tp=8 replicas=16",
     "144-207,216-279", 0.20},
    {"m2n-qwen3-235b-gb200", "0-2", 7463265024, 144, "megatron tp=2 cp=2 pp=4 dp=4 ep=16 etp=1",
     "0-63", "vllm tp=8 replicas=8", "72-135", 0.70},
};

/* The slow suite: the scenarios the default suite runs on three layers, whole. */
static const ScenarioCase scenario_full_cases[] = {
    {"deepseek-v3-h100", NULL, 671026419200, 512, "megatron tp=1 cp=1 pp=16 dp=16 ep=16 etp=1",
     "0-255", "vllm tp=32 replicas=8", "256-511", 0.85},
    {"kimi-k2-h100-fp8", NULL, 1026408232448, 384, "megatron tp=1 cp=1 pp=16 dp=16 ep=16 etp=1",
     "0-255", "vllm tp=16 replicas=8", "256-383", 0.85},
};

/* The relay chunk and model each strategy's flow simulation ran with (JSON "flow"), for
 * `simulate --all-strategies` on a small scenario plus @extra (NULL-terminated, up to 4):
 * @names and the expected chunk bytes and relay model of each. */
static void
check_relay_steps(const char *const *extra, const char *const *names, const guint64 *chunks,
                  const char *const *relays, guint n)
{
    const char *args[24] = {"simulate",     "--model",      "llama-3.1-8b",    "--nodes", "2",
                            "--train",      "megatron:tp=2", "--train-gpus",   "0-7",
                            "--infer",      "vllm:tp=4",    "--infer-gpus",    "8-15",
                            "--all-strategies", "--format", "json",            "-q"};
    guint a = 17;
    for (guint i = 0; extra[i] != NULL; i++)
        args[a++] = extra[i];
    args[a] = NULL;
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(json_parser_load_from_data(parser, r.out, -1, &error));
    JsonArray *strategies =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)),
                                     "strategies");
    guint found = 0;
    for (guint i = 0; i < json_array_get_length(strategies); i++) {
        JsonObject *s = json_array_get_object_element(strategies, i);
        for (guint k = 0; k < n; k++) {
            if (strcmp(json_object_get_string_member(s, "name"), names[k]) != 0)
                continue;
            JsonObject *flow = json_object_get_object_member(s, "flow");
            g_assert_cmpint(json_object_get_int_member(flow, "relay_chunk_bytes"), ==, chunks[k]);
            g_assert_cmpstr(json_object_get_string_member(flow, "relays"), ==, relays[k]);
            found++;
        }
    }
    g_assert_cmpuint(found, ==, n);
    run_result_clear(&r);
}

/* nccl-broadcast and checkpoint-engine run NCCL's ring at its 512 KiB step as fluid relays,
 * the others the 4 MiB chunked default; --relays or --chunk-size apply to every strategy. */
static void
test_relay_steps(void)
{
    const char *names[] = {"nccl-broadcast", "checkpoint-engine", "direct", "m2n"};
    const char *none[] = {NULL};
    const guint64 plan_steps[] = {512 << 10, 512 << 10, 4 << 20, 4 << 20};
    const char *plan_models[] = {"fluid", "fluid", "chunked", "chunked"};
    check_relay_steps(none, names, plan_steps, plan_models, G_N_ELEMENTS(names));
    const char *chunked[] = {"--relays", "chunked", NULL};
    const guint64 four[] = {4 << 20, 4 << 20, 4 << 20, 4 << 20};
    const char *all_chunked[] = {"chunked", "chunked", "chunked", "chunked"};
    check_relay_steps(chunked, names, four, all_chunked, G_N_ELEMENTS(names));
    const char *one_mib[] = {"--chunk-size", "1MiB", NULL};
    const guint64 one[] = {1 << 20, 1 << 20, 1 << 20, 1 << 20};
    check_relay_steps(one_mib, names, one, all_chunked, G_N_ELEMENTS(names));
    /* The executor's window for the plans reshard run executes as its own; the baseline's
     * and the peers' calls stay whole phases (NCCL's rings fluid at its step, m2n's chain in
     * the chunked model). */
    const char *window[] = {"--relays", "window", "--window", "4", NULL};
    const char *window_models[] = {"fluid", "fluid", "window", "chunked"};
    check_relay_steps(window, names, plan_steps, window_models, G_N_ELEMENTS(names));
}

/* --check says that it passed, with what it verified. */
static void
test_check_reports(void)
{
    const char *args[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                          "megatron:tp=2", "--train-gpus", "0-7", "--infer", "vllm:tp=4",
                          "--infer-gpus", "8-15", "--strategy", "direct", "--network",
                          "bottleneck", "--check", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.err, "check passed for direct: 3096 transfers; every destination element");
    run_result_clear(&r);
}

/* Times under 0.1 s keep three significant digits: Llama-3.1-8B (16.06 GB) into one
 * DGX H100 node over its 8 NICs at 380 GB/s achievable is 0.0423 s, not "0.000". */
static void
test_small_times_digits(void)
{
    const char *args[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                          "megatron:tp=2", "--train-gpus", "0-7", "--infer", "vllm:tp=4",
                          "--infer-gpus", "8-15", "--strategy", "direct", "-q", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "lower bound 0.0423 s, binding cut: NVLink domain 1 ingress");
    /* The header says which parts of the default scenario the flags replaced. */
    assert_contains(r.out, "scenario   deepseek-v3-h100 (with --model, --nodes, --train, "
                           "--train-gpus, --infer, --infer-gpus from the command line)");
    /* Flow time as the executor runs the plan (its 2 rounds are not waited for: 0.171 s
     * with --relays rounds), then the bound. */
    assert_contains(r.out, "0.0846   0.0423");
    run_result_clear(&r);
    /* The per-strategy lines too (they printed "load 0.000 s", "busy 0.000 s"); the last GPU
     * is the inference GPU receiving the last byte (it named GPU 5, a training GPU sending
     * it). */
    const char *flow[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                          "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer", "vllm:tp=4",
                          "--infer-gpus", "8-15", "--strategy", "direct", "--scale", "16",
                          "--layers", "29-30", "-q", NULL};
    r = run_reshard(flow);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "direct: bottleneck gpu0.nic-egress, 0.00 GB, load 1.8e-05 s = 31% of "
                           "the time; last GPU 14 at 5.88e-05 s\n");
    run_result_clear(&r);
    const char *busy[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                          "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer", "vllm:tp=4",
                          "--infer-gpus", "8-15", "--strategy", "direct", "--network",
                          "bottleneck", "--scale", "1000000", "-q", NULL};
    r = run_reshard(busy);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "busiest link (direct): gpu0.nic-egress, 0.00 GB, busy 3.38e-08 s\n");
    run_result_clear(&r);
    /* The lines under the table name the plan its row shows: hierarchical with domain
     * relays is "hierarchical+relays" there too (they read "hierarchical", the name the
     * auto line gives the plan without relays). */
    const char *relays[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "4", "--train",
                            "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer",
                            "vllm:tp=8,dp=3", "--infer-gpus", "8-31", "--strategy",
                            "hierarchical", "--domain-relays", "on", "--layers", "29-30", "-q",
                            NULL};
    r = run_reshard(relays);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "hierarchical+relays: bottleneck gpu4.nic-egress, 0.17 GB, load "
                           "0.00353 s = 78% of the time; last GPU 19 at 0.00451 s\n");
    run_result_clear(&r);
    relays[17] = "--network";
    relays[18] = "bottleneck";
    r = run_reshard(relays);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "busiest link (hierarchical+relays): gpu7.nic-egress, 3.01 GB, busy "
                           "0.0634 s\n");
    run_result_clear(&r);
}

/* -v's debug lines go to stderr (GLib's default writer put them on stdout, inside the
 * JSON), each run's work line naming its candidate. */
static void
test_verbose_stderr(void)
{
    const char *args[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "4", "--train",
                          "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer",
                          "vllm:tp=8,dp=3", "--infer-gpus", "8-31", "--strategy", "direct",
                          "--format", "json", "-q", "-v", NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_json(parser, r.out);
    g_assert_true(json_object_has_member(root, "strategies"));
    g_assert_null(strstr(r.out, "DEBUG"));
    assert_contains(r.err, "direct: flow model: 84 messages, ");
    run_result_clear(&r);
    /* The progress lines count in the singular and say "with local copies" only when
     * there are some ("1 candidates", "84 network messages (84 with local copies)"). */
    args[17] = NULL;
    r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.err, "planning and simulating 1 candidate ...\n"
                           "simulating direct: 84 network messages ...\n");
    run_result_clear(&r);
}

/* Errors found when a scenario is built name the file, line and field they come from, or
 * the flag that overrode it. */
static void
test_scenario_build_errors_where(void)
{
    g_autofree char *path = write_temp(
        "s.yaml", "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\n"
                  "train: {convention: megatron, gpus: 0-7, tp: 2}\n"
                  "infer:\n  convention: vllm\n  gpus: 8-16\n  tp: 3\n");
    const char *gpus[] = {"simulate", "--scenario", path, "--strategy", "direct", "-q", NULL};
    RunResult r = run_reshard(gpus);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "s.yaml:7:9: infer.gpus: GPU 16 is not in topology");
    run_result_clear(&r);
    const char *tp[] = {"simulate", "--scenario", path, "--strategy", "direct", "-q",
                        "--infer-gpus", "8-15", NULL};
    r = run_reshard(tp);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "s.yaml:6:3: infer: vllm tp=3: tp = 3 does not divide the 8 GPUs");
    run_result_clear(&r);
    const char *flag[] = {"simulate", "--scenario", path, "--strategy", "direct", "-q",
                          "--infer-gpus", "8-15", "--infer", "vllm:tp=6", NULL};
    r = run_reshard(flag);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "--infer: vllm tp=6");
    run_result_clear(&r);
    const char *model[] = {"simulate", "--scenario", path, "--model", "nosuch", "-q", NULL};
    r = run_reshard(model);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "--model: ");
    run_result_clear(&r);
    /* A tp the heads refuse names the tp line (it named the infer: line); given by the
     * flag, the flag. */
    g_autofree char *heads = write_temp(
        "h.yaml", "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\n"
                  "train: {convention: megatron, gpus: 0-7, tp: 2}\n"
                  "infer:\n  convention: vllm\n  gpus: 8-13\n  tp: 3\n");
    const char *head_tp[] = {"simulate", "--scenario", heads, "--strategy", "direct", "-q", NULL};
    r = run_reshard(head_tp);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "h.yaml:8:7: infer.tp: vllm tp=3 replicas=2: tp=3 and the 32 "
                           "attention heads of model.layers.0.self_attn.q_proj.weight");
    g_assert_cmpstr(r.out, ==, "");
    run_result_clear(&r);
    const char *head_flag[] = {"simulate", "--scenario", heads, "--strategy", "direct", "-q",
                               "--infer", "vllm:tp=6", NULL};
    r = run_reshard(head_flag);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "--infer: vllm tp=6 replicas=1: tp=6 and the 32 attention heads");
    run_result_clear(&r);
}

/* The header names the dtypes moved: FP8 weights with their bf16 remainder and f32 block
 * scales, not "bf16". */
/* --strategy list in JSON and CSV (it printed its text whatever --format said): one row per
 * strategy, auto last with no source. */
static void
test_strategy_list_formats(void)
{
    const char *json_args[] = {"simulate", "--strategy", "list", "--format", "json", NULL};
    RunResult r = run_reshard(json_args);
    assert_exit_code(&r, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_json(parser, r.out);
    JsonArray *rows = json_object_get_array_member(root, "strategies");
    guint n = json_array_get_length(rows);
    g_assert_cmpuint(n, ==, 10); /* the nine of --help's --strategy, and auto */
    JsonObject *first = json_array_get_object_element(rows, 0);
    g_assert_cmpstr(json_object_get_string_member(first, "strategy"), ==, "direct");
    g_assert_cmpstr(json_object_get_string_member(first, "kind"), ==, "ours");
    g_assert_cmpstr(json_object_get_string_member(first, "source"), ==, "reshard plan/direct.c");
    JsonObject *last = json_array_get_object_element(rows, n - 1);
    g_assert_cmpstr(json_object_get_string_member(last, "strategy"), ==, "auto");
    g_assert_true(json_object_get_null_member(last, "source"));
    run_result_clear(&r);
    const char *csv_args[] = {"simulate", "--strategy", "list", "--format", "csv", NULL};
    r = run_reshard(csv_args);
    assert_exit_code(&r, 0);
    g_assert_true(g_str_has_prefix(r.out, "strategy,kind,description,source\ndirect,ours,"));
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 12); /* header, 10 rows, "" */
    run_result_clear(&r);
}

static void
test_wire_dtypes_header(void)
{
    const char *args[] = {"simulate", "--scenario", "kimi-k2-h100-fp8", "--strategy", "direct",
                          "--network", "bottleneck", "-q", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "1029.17 GB as fp8-e4m3 1023.89 GB + bf16 5.03 GB + f32 0.25 GB");
    run_result_clear(&r);
    /* A share too small for GB in a unit that shows it: DeepSeek-V3's f32 router biases,
     * 2 layers x 256 experts x 4 B, read "f32 0.00 GB". */
    const char *small_args[] = {"simulate", "--layers", "3-4", "--strategy", "direct",
                                "--network", "bottleneck", "-q", NULL};
    r = run_reshard(small_args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "46.03 GB as bf16 46.03 GB + f32 2048 B, 34 tensors");
    run_result_clear(&r);
}

/* Converted to MXFP4 at the source, 5 rows of 63 values are 157.5 bytes: the source shards
 * split a byte and are refused, as a tensor stored in MXFP4 is (315 values counted as 158
 * bytes, exit 0). An even last extent converts: 10 x 64 values are 320 bytes and 20
 * scales of 32-value blocks. */
static void
test_plan_mxfp4_conversion_odd_rows(void)
{
    const char *args[] = {"plan", "--shape", "10x63", "--dtype", "bf16", "--dst-dtype",
                          "mxfp4", "--src-mesh", "2", "--src-placements", "S(0)",
                          "--dst-mesh", "1", "--dst-placements", "R", "--dst-ranks", "2", NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 2);
    assert_contains(r.err, "--dst-dtype mxfp4: tensor: source: rank 0 holds [0:5, 0:63] of the "
                           "tensor [0:10, 0:63], which splits a byte");
    run_result_clear(&r);
    args[2] = "10x64";
    r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "moved     340 bytes between ranks");
    run_result_clear(&r);
}

/* `models --mtp` lists every model, counting MTP layers where a model has them (the check
 * that --mtp asks something of one model refused the whole listing at gpt-oss). */
static void
test_models_mtp_listing(void)
{
    const char *args[] = {"models", "--mtp", NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "684,489,845,504"); /* DeepSeek-V3 with its MTP layer */
    assert_contains(r.out, "gpt-oss-20b");
    run_result_clear(&r);
}

/* --dst-dtype fp8-e4m3 on a tensor whose 128-row blocks no source holds whole: the plan
 * moves bf16 and said only "bf16 on the wire"; it now says the destination quantises. */
static void
test_plan_fp8_quantised_on_load(void)
{
    const char *args[] = {"plan", "--shape", "10x64", "--dtype", "bf16", "--dst-dtype",
                          "fp8-e4m3", "--src-mesh", "2", "--src-placements", "S(0)",
                          "--dst-mesh", "1", "--dst-placements", "R", "--dst-ranks", "2", NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "tensor    10x64, bf16 on the source, bf16 on the wire (no source "
                           "rank holds a fp8-e4m3 block whole: the destination quantises to "
                           "fp8-e4m3 on load)\n");
    assert_contains(r.out, "moved     1280 bytes between ranks");
    run_result_clear(&r);
    args[2] = "256x64"; /* each source holds a whole block: fp8 on the wire */
    r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "tensor    256x64, bf16 on the source, fp8-e4m3 on the wire\n");
    run_result_clear(&r);
}

/* gpt-oss under vLLM tp=8 served in MXFP4: vLLM loads the experts in whole 32-value blocks
 * (models/gpt_oss.py, _load_weights_mxfp4: cdiv(90 blocks, 8) = 12 a rank, 384 columns of
 * down_proj's I = 2880, rank 7 the last 192). The torch.chunk split (360 a rank) cut
 * blocks and was refused ("destination rank 256, box [0:32, 0:2880, 0:360]"); now the
 * layout is vLLM's and the refit plans and checks. */
static void
test_gpt_oss_mxfp4_vllm(void)
{
    const char *layout[] = {"layout", "--model", "gpt-oss-20b", "--infer", "vllm:tp=8",
                            "--infer-dtype", "mxfp4", "--tensor",
                            "model.layers.0.mlp.experts.down_proj", "--rank", "7", NULL};
    RunResult r = run_reshard(layout);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "[0:32, 0:2880, 2688:2880]");
    assert_contains(r.out, "[32, 2880, 384] = 35389440 (17694720 not in these boxes)");
    /* The header says what the engine holds, not only what the checkpoint stores (it
     * read "bf16" alone). */
    assert_contains(r.out, "tensor  model.layers.0.mlp.experts.down_proj, [32, 2880, 2880] bf16, "
                           "served as mxfp4 (expert-row, a decoder layer)\n");
    run_result_clear(&r);
    /* Under FP8 the stacked expert biases [32, 5760] stay BF16, as under MXFP4 and as every
     * bias does (2-D, they counted as weight matrices). */
    layout[6] = "fp8-e4m3";
    layout[8] = "model.layers.0.mlp.experts.gate_up_proj_bias";
    layout[9] = NULL;
    r = run_reshard(layout);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "tensor  model.layers.0.mlp.experts.gate_up_proj_bias, [32, 5760] "
                           "bf16 (expert-column, a decoder layer)\n");
    run_result_clear(&r);
    /* The weight itself under FP8 and tp=8: vLLM's 720 columns of gate_up per rank end off
     * the 128-blocks, so the block scales cannot be laid out. simulate refused it; layout
     * showed the boxes and exited 0. */
    layout[8] = "model.layers.0.mlp.experts.gate_up_proj";
    r = run_reshard(layout);
    assert_exit_code(&r, 2);
    assert_contains(r.err, "reshard layout: --infer-dtype: model.layers.0.mlp.experts.gate_up_proj "
                           "to fp8-e4m3: destination rank 0, box [0:32, 0:720, 0:2880]: dim 1 "
                           "ends at 720 (not the tensor's end), not aligned to blocks of 128");
    g_assert_cmpstr(r.out, ==, "");
    run_result_clear(&r);
    const char *args[] = {"simulate", "--model", "gpt-oss-20b", "--infer-dtype", "mxfp4",
                          "--infer", "vllm:tp=8", "--strategy", "direct", "--network",
                          "bottleneck", "--check", NULL};
    r = run_reshard(args);
    if (r.exit_code != 0)
        g_error("exit %d: %s", r.exit_code, r.err);
    assert_contains(r.err, "check passed for direct");
    run_result_clear(&r);
}

/* A routed expert by its checkpoint name (DeepSeek-V3's "experts.5.down_proj.weight"):
 * expert 5 of the stacked [256, 7168, 2048] tensor. Under Megatron ep=16 stage 1 holds
 * layer 3 on GPUs 16-31, experts 0-15 on GPU 16, so only GPU 16 is listed, expert 5 at
 * offset 5 x 7168 x 2048 = 73400320 of its [16, 7168, 2048] buffer. Under vLLM tp=4 every
 * rank holds 192 of expert 7's 768 gate rows, 7 x 384 x 2048 into the fused w13 buffer.
 * The name was refused ("no tensor or fused buffer named"). */
static void
test_layout_one_expert(void)
{
    const char *ep[] = {"layout", "--model", "deepseek-v3", "--train", "megatron:pp=16,ep=16,dp=16",
                        "--tensor", "model.layers.3.mlp.experts.5.down_proj.weight", NULL};
    RunResult r = run_reshard(ep);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "expert  model.layers.3.mlp.experts.5.down_proj.weight: expert 5 of "
                           "256, rows 5:6 of dim 0 of\n"
                           "tensor  model.layers.3.mlp.experts.down_proj.weight, [256, 7168, "
                           "2048] bf16");
    assert_contains(r.out, "\n16    model.layers.3.mlp.experts.down_proj.weight  [5:6, 0:7168, "
                           "0:2048]                  73400320  14680064  [16, 7168, 2048]");
    g_assert_null(strstr(r.out, "\n17 "));
    /* The layout line names who holds the expert (it read "ranks 16-31 ...; the ranks
     * holding it", the stacked tensor's). */
    assert_contains(r.out, "ranks 16-31, R,S(0),S(2); held by rank 16\n");
    run_result_clear(&r);
    /* A rank outside the expert's says so of the expert (it said "of this tensor", which
     * GPU 17 does hold: experts 16 to 31), and the JSON names the expert. */
    const char *ep_rank[] = {"layout", "--model", "deepseek-v3", "--train",
                             "megatron:pp=16,ep=16,dp=16", "--tensor",
                             "model.layers.3.mlp.experts.5.down_proj.weight", "--rank", "17",
                             NULL};
    r = run_reshard(ep_rank);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "\n(rank 17 holds nothing of this expert)\n");
    run_result_clear(&r);
    ep_rank[7] = "--format";
    ep_rank[8] = "json";
    r = run_reshard(ep_rank);
    assert_exit_code(&r, 0);
    /* Rank 16's buffer holds its 16 experts; expert 5 starts after 5 of 7168 x 2048. */
    assert_contains(r.out, "\"expert\":5,\"ranks\":[{\"rank\":16,\"buffer_shape\":[16,7168,2048],"
                           "\"buffer_elems\":234881024,\"boxes\":[{\"tensor\":"
                           "\"model.layers.3.mlp.experts.down_proj.weight\",\"lo\":[5,0,0],"
                           "\"hi\":[6,7168,2048],\"step\":[1,1,1],\"offset_elems\":73400320,"
                           "\"elems\":14680064}]}]}");
    run_result_clear(&r);
    const char *tp[] = {"layout", "--model", "qwen3-30b-a3b", "--infer", "vllm:tp=4", "--tensor",
                        "model.layers.0.mlp.experts.7.gate_proj.weight", "--format", "csv", NULL};
    r = run_reshard(tp);
    assert_exit_code(&r, 0);
    for (guint rank = 0; rank < 4; rank++) {
        g_autofree char *row = g_strdup_printf(
            "\n%u,model.layers.0.mlp.experts.gate_proj.weight,7;%u;0,8;%u;2048,1;1;1,5505024,"
            "393216,128;384;2048,7\n",
            rank, 192 * rank, 192 * (rank + 1));
        assert_contains(r.out, row);
    }
    run_result_clear(&r);
}

/* vLLM's dense mesh holds a copy per engine replica and per vLLM dp rank: it is labelled
 * replica (it read [dp=2, tp=2] for two engines of tp=2, dp=1). */
static void
test_vllm_dense_mesh_label(void)
{
    const char *engines[] = {"layout", "--model", "qwen3-30b-a3b", "--infer",
                             "vllm:tp=2,replicas=2", "--tensor",
                             "model.layers.0.self_attn.qkv_proj.weight", NULL};
    RunResult r = run_reshard(engines);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "layout  vllm tp=2 replicas=2 on GPUs 0-3\n"
                           "        mesh [replica=2, tp=2] ranks 0-3, R,qkv(");
    run_result_clear(&r);
    const char *dp[] = {"layout", "--model", "qwen3-30b-a3b", "--infer", "vllm:tp=2,dp=2,replicas=2",
                        "--tensor", "model.layers.0.mlp.experts.w13_weight", NULL};
    r = run_reshard(dp);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "mesh [replica=2, moe_tp=4] ranks 0-7");
    run_result_clear(&r);
    dp[6] = "model.layers.0.self_attn.qkv_proj.weight";
    r = run_reshard(dp);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "mesh [replica=4, tp=2] ranks 0-7");
    run_result_clear(&r);
}

/* FSDP2 rows finer than FP8's 128 x 128 blocks (dp=16 over k_proj's 512 rows: 32 a rank):
 * no source holds a block whole, so the weights cross unquantised and the plan succeeds
 * (it failed: "rank 16 needs elements [0:256, 0:2048] that no source rank holds"). The
 * inference side is 8 engines of tp=2. Under vLLM's own data parallelism (dp=8 in one
 * engine) the experts' tensor parallelism spans dp x tp = 16 ranks, 768 / 16 = 48 rows of
 * gate_proj a rank, which FP8's 128-row blocks do not fit: vLLM refuses that layout
 * ("The output_size of gate's and up's weight = 48 is not divisible by weight quantization
 * block_n = 128", layers/quantization/fp8.py, Fp8MoEMethod.create_weights), and so does the
 * plan. */
static void
test_fsdp2_fp8_plans(void)
{
    const char *args[] = {"simulate", "--model", "qwen3-30b-a3b", "--infer-dtype", "fp8-e4m3",
                          "--topology", "dgx-h100", "--nodes", "4", "--train", "fsdp2:dp=16",
                          "--train-gpus", "0-15", "--infer", "vllm:tp=2,replicas=8",
                          "--infer-gpus", "16-31", "--strategy", "direct", "--network",
                          "bottleneck", "--check", NULL};
    RunResult r = run_reshard(args);
    if (r.exit_code != 0)
        g_error("exit %d: %s", r.exit_code, r.err);
    assert_contains(r.err, "check passed for direct");
    run_result_clear(&r);
    args[14] = "vllm:tp=2,dp=8";
    r = run_reshard(args);
    assert_exit_code(&r, 2);
    /* (The message says which end breaks the alignment: it named "buffer position 0",
     * which is aligned.) */
    assert_contains(r.err, "model.layers.0.mlp.experts.gate_proj.weight to fp8-e4m3: "
                           "destination rank 16, box [0:128, 0:48, 0:2048]: dim 1 ends at 48 "
                           "(not the tensor's end), not aligned to blocks of 128 elements");
    run_result_clear(&r);
}

/* --gpus-per-domain 64: GPU lists count the first 64 GPUs of each 72-GPU rack, so
 * inference GPUs 64-127 are GPUs 72-135; more than a domain holds is refused. */
static void
test_gpus_per_domain(void)
{
    const char *args[] = {"simulate", "--scenario", "qwen3-235b-gb200", "--gpus-per-domain",
                          "64", "--train-gpus", "0-63", "--infer-gpus", "64-127", "--strategy",
                          "direct", "--network", "bottleneck", "--layers", "3-3", NULL};
    RunResult r = run_reshard(args);
    if (r.exit_code != 0)
        g_error("exit %d: %s", r.exit_code, r.err);
    assert_contains(r.out, "replica 0, stage 0: GPUs 72-79, tp=8");
    assert_contains(r.out, "replica 7, stage 0: GPUs 128-135, tp=8");
    run_result_clear(&r);
    const char *bad[] = {"simulate", "--scenario", "qwen3-235b-gb200", "--gpus-per-domain",
                         "80", "--strategy", "direct", "--network", "bottleneck", "-q", NULL};
    r = run_reshard(bad);
    g_assert_cmpint(r.exit_code, ==, 2);
    /* The flag is named as the user typed it (it used to read "gpus_per_domain"). */
    g_assert_cmpstr(r.err, ==,
                    "reshard simulate: --gpus-per-domain: 80 is more than the 72 GPUs of an "
                    "NVLink domain of gb200-nvl72\n");
    run_result_clear(&r);
    /* From a scenario file: the file, line and column of the key (it used to name none). */
    g_autofree char *bad_path =
        write_temp("bad.yaml", "model: qwen3-235b-a22b\ntopology: gb200-nvl72\nnodes: 36\n"
                               "gpus_per_domain: 80\n"
                               "train: {convention: megatron, gpus: 0-63, tp: 4, pp: 4, ep: 16}\n"
                               "infer: {convention: vllm, gpus: 64-127, tp: 8, replicas: 8}\n");
    const char *bad_file[] = {"simulate", "--scenario", bad_path, "--network", "bottleneck",
                              "-q", NULL};
    r = run_reshard(bad_file);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_autofree char *want = g_strdup_printf(
        "reshard simulate: %s:4:18: gpus_per_domain: 80 is more than the 72 GPUs of an NVLink "
        "domain of gb200-nvl72\n",
        bad_path);
    g_assert_cmpstr(r.err, ==, want);
    run_result_clear(&r);

    /* The scenario keys: the same mapping; the bound counts the job's 64 NICs of rack 1
     * (64 x 47.5 GB/s); with idle GPUs lent and GPUs named one by one, all 72 of the rack
     * (case 1); lent under gpus_per_domain, still only the job's 64 (case 2: the rack's
     * other 8 belong to no job of ours). */
    for (guint lend = 0; lend < 3; lend++) {
        const char *yaml[] = {
            "model: qwen3-235b-a22b\ntopology: gb200-nvl72\nnodes: 36\n"
            "layers: 3-3\ngpus_per_domain: 64\n"
            "train: {convention: megatron, gpus: 0-63, tp: 4, pp: 4, ep: 16, etp: 1}\n"
            "infer: {convention: vllm, gpus: 64-127, tp: 8, replicas: 8}\n",
            "model: qwen3-235b-a22b\ntopology: gb200-nvl72\nnodes: 36\n"
            "layers: 3-3\nuse_idle_gpus: true\n"
            "train: {convention: megatron, gpus: 0-63, tp: 4, pp: 4, ep: 16, etp: 1}\n"
            "infer: {convention: vllm, gpus: 72-135, tp: 8, replicas: 8}\n",
            "model: qwen3-235b-a22b\ntopology: gb200-nvl72\nnodes: 36\n"
            "layers: 3-3\ngpus_per_domain: 64\nuse_idle_gpus: true\n"
            "train: {convention: megatron, gpus: 0-63, tp: 4, pp: 4, ep: 16, etp: 1}\n"
            "infer: {convention: vllm, gpus: 64-127, tp: 8, replicas: 8}\n"};
        g_autofree char *path = write_temp("s.yaml", yaml[lend]);
        const char *file[] = {"simulate", "--scenario", path, "--strategy", "direct",
                              "--network", "bottleneck", NULL};
        r = run_reshard(file);
        if (r.exit_code != 0)
            g_error("exit %d: %s", r.exit_code, r.err);
        assert_contains(r.out, "replica 0, stage 0: GPUs 72-79, tp=8");
        assert_contains(r.out, lend == 1
                                   ? "NVLink domain 1 ingress (its NICs): 4.976 GB over 3420 GB/s"
                                   : "NVLink domain 1 ingress (its NICs): 4.976 GB over 3040 GB/s");
        run_result_clear(&r);
    }
}

/* A layer range the model lacks is the range's fault: --layers, or the scenario file's
 * layers key with its line, is named, not the model file alone (it read
 * "models/deepseek-v3.yaml: layers 100-200: ..."). */
static void
test_layer_range_named(void)
{
    const char *args[] = {"simulate", "--layers", "100-200", "--network", "bottleneck", "-q",
                          NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    assert_contains(r.err, "reshard simulate: --layers 100-200: the model in ");
    assert_contains(r.err, "deepseek-v3.yaml has layers 0-60\n");
    run_result_clear(&r);
    g_autofree char *path =
        write_temp("layers.yaml", "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\n"
                                  "layers: 40-41\n"
                                  "train: {convention: megatron, gpus: 0-7, tp: 2, pp: 2}\n"
                                  "infer: {convention: vllm, gpus: 8-15, tp: 4}\n");
    const char *file[] = {"simulate", "--scenario", path, "--network", "bottleneck", "-q", NULL};
    r = run_reshard(file);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_autofree char *want = g_strdup_printf("reshard simulate: %s:4:9: layers 40-41: the model in ",
                                            path);
    assert_contains(r.err, want);
    assert_contains(r.err, "llama-3.1-8b.yaml has layers 0-31\n");
    run_result_clear(&r);
}

static void
test_shipped_scenario(gconstpointer data)
{
    const ScenarioCase *c = data;
    const char *args[] = {"simulate", "--scenario", c->scenario, "--strategy", "hierarchical",
                          "--network", "bottleneck", "--format", "json", "-q",
                          c->layers ? "--layers" : NULL, c->layers, NULL};
    RunResult r = run_reshard(args);
    if (r.exit_code != 0)
        g_error("%s: exit %d: %s", c->scenario, r.exit_code, r.err);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_json(parser, r.out);
    g_assert_cmpstr(json_object_get_string_member(root, "scenario"), ==, c->scenario);
    g_assert_cmpint(json_object_get_int_member(json_object_get_object_member(root, "model"),
                                               "params"),
                    ==, c->params);
    g_assert_cmpint(json_object_get_int_member(json_object_get_object_member(root, "topology"),
                                               "gpus"),
                    ==, c->gpus);
    JsonObject *train = json_object_get_object_member(root, "train");
    JsonObject *infer = json_object_get_object_member(root, "infer");
    g_assert_cmpstr(json_object_get_string_member(train, "layout"), ==, c->train);
    g_assert_cmpstr(json_object_get_string_member(train, "gpus"), ==, c->train_gpus);
    g_assert_cmpstr(json_object_get_string_member(infer, "layout"), ==, c->infer);
    g_assert_cmpstr(json_object_get_string_member(infer, "gpus"), ==, c->infer_gpus);
    JsonObject *s =
        json_array_get_object_element(json_object_get_array_member(root, "strategies"), 0);
    g_assert_cmpstr(json_object_get_string_member(s, "name"), ==, "hierarchical");
    g_assert_cmpint(json_object_get_int_member(s, "max_round_staging_bytes"), <=,
                    json_object_get_int_member(root, "staging_bytes"));
    /* The plan's links against the bound (which counts links only): the prediction less
     * its GPU copies (pack, unpack: sim/gpu-cost.h), which the four parts name. */
    double predicted_s = json_object_get_double_member(s, "predicted_s");
    double copy_s = json_object_get_double_member(s, "gpu_copy_s");
    g_assert_cmpfloat_with_epsilon(json_object_get_double_member(s, "network_s") +
                                       json_object_get_double_member(s, "nvlink_s") + copy_s +
                                       json_object_get_double_member(s, "fixed_s"),
                                   json_object_get_double_member(s, "first_order_s"),
                                   1e-9 * predicted_s);
    double bound_s = json_object_get_double_member(s, "efficiency") * predicted_s;
    g_assert_cmpfloat(bound_s / (predicted_s - copy_s), >=, c->min_efficiency);
    run_result_clear(&r);
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
    JsonObject *root = parse_json(parser, r.out);
    JsonObject *s =
        json_array_get_object_element(json_object_get_array_member(root, "strategies"), 0);
    g_assert_cmpstr(json_object_get_string_member(s, "network_model"), ==, "bottleneck");
    g_assert_cmpfloat(json_object_get_double_member(s, "predicted_s"), ==,
                      json_object_get_double_member(s, "first_order_s"));
    g_assert_false(json_object_has_member(s, "flow"));
    run_result_clear(&r);
}

/* --relays picks the model and the last line names it (--relays fluid used to leave the
 * chunked model in place); each candidate's time goes to stderr as soon as it is known. */
static void
test_relays_models(void)
{
    static const char *const models[][2] = {
        {"rounds", "each rank posts its rounds one after another"},
        {"chunked", "relays pipelined in chunks of 4 MiB"},
        {"fluid", "relays pipelined as fluid flows in chunks of 4 MiB"},
        {"window", "the executor's schedule: chunk operations of 4 MiB in key order, at most 8 "
                   "in flight per rank"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
        const char *args[] = {"simulate", "--strategy", "direct", "--layers", "3-3",
                              "--relays", models[i][0], NULL};
        RunResult r = run_reshard(args);
        g_assert_cmpint(r.exit_code, ==, 0);
        assert_contains(r.out, models[i][1]);
        assert_contains(r.err, "direct: ");
        assert_contains(r.err, "s (flow model), evaluated in ");
        run_result_clear(&r);
    }
}

/* --threads: candidates planned and simulated at once give the same output, byte for
 * byte, as one at a time (flow model, every candidate; the single-row auto's trace is the
 * fastest candidate's, ties to the first); a count outside 1-1024 is refused. */
static void
test_threads_same_output(void)
{
    /* g_dir_make_tmp() replaces the template's six Xs with a unique name. */
    g_autofree char *dir = g_dir_make_tmp("rs-threads-XXXXXX", NULL);
    g_assert_nonnull(dir);
    char *out[2] = {NULL, NULL};
    char *trace[2] = {NULL, NULL};
    const char *threads[] = {"1", "3"};
    for (guint k = 0; k < 2; k++) {
        g_autofree char *path = g_strdup_printf("%s/trace-%s.csv", dir, threads[k]);
        const char *args[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--layers", "3-4",
                              "--strategy", "auto", "--threads", threads[k], "--trace", path,
                              "--format", "csv", NULL};
        RunResult r = run_reshard(args);
        g_assert_cmpint(r.exit_code, ==, 0);
        if (k == 1)
            assert_contains(r.err, "planning and simulating 5 candidates, 3 at once ...");
        out[k] = g_strdup(r.out);
        g_assert_true(g_file_get_contents(path, &trace[k], NULL, NULL));
        g_unlink(path);
        g_autofree char *meta = g_strconcat(path, ".meta", NULL);
        g_unlink(meta);
        run_result_clear(&r);
    }
    g_assert_cmpstr(out[0], ==, out[1]);
    g_assert_cmpstr(trace[0], ==, trace[1]);
    g_assert_cmpuint(strlen(trace[0]), >, 100);
    for (guint k = 0; k < 2; k++) {
        g_free(out[k]);
        g_free(trace[k]);
    }
    g_rmdir(dir);
    const char *bad[] = {"simulate", "--network", "bottleneck", "--threads", "0", NULL};
    RunResult r = run_reshard(bad);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "--threads");
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
    g_autofree char *dir = make_temp_dir();
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
    JsonObject *root = parse_json(parser, r.out);
    double phase0 = 22e-6 + 10e6 / 5e9 + 2.5e6 / 100e9;
    g_assert_cmpfloat_with_epsilon(json_object_get_double_member(root, "predicted_s"),
                                   phase0 + 14e-6, 1e-12);
    g_assert_cmpint(json_object_get_int_member(root, "bytes_moved"), ==, 21000000);
    g_assert_cmpstr(json_object_get_string_member(root, "bottleneck_link"), ==, "gpu0.nic-egress");
    g_autofree char *text = read_file(trace);
    assert_contains(text, "message,src,dst,bytes,phase,start_s,end_s,route,depends_on\n");
    assert_contains(text, ",gpu0.nic-egress;gpu2.nic-ingress,\n");
    assert_contains(text, "8,2,3,10000000,0,");
    assert_contains(text, ",gpu2.nvlink-egress;gpu3.nvlink-ingress,7\n");
    g_autofree char *csv = read_file(links);
    assert_contains(csv, "\ngpu0.nic-egress,nic-egress,5e+09,1e-05,0,10000000,0.002,0.002,");
    run_result_clear(&r);
}

/* --messages on a topology with GPU costs: a local copy row (bytes, no layout) costs one
 * contiguous copy kernel, 1 us launch + (10^9 B + 2 × 32 B penalty) / 1000 GB/s =
 * 1.001000000064 ms, where it cost 0 s; a network row is read in place (no pack): 0 → 2
 * of 1 MB over the NICs at 5 GB/s, 2 us overhead + 2 × 10 us latency + 0.2 ms. */
static void
test_messages_local_copy_cost(void)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *in = g_build_filename(dir, "m.csv", NULL);
    g_autofree char *topo = g_build_filename(dir, "gpu-costs.yaml", NULL);
    g_assert_true(g_file_set_contents(in,
                                      "message,src,dst,bytes,phase,depends_on\n"
                                      "1,0,0,1000000000,0,\n"
                                      "2,0,2,1000000,1,\n",
                                      -1, NULL));
    g_assert_true(g_file_set_contents(
        topo,
        "name: gpu-costs\nnodes: 2\ngpus_per_node: 2\n"
        "gpu:\n  model: test GPU\n  memory: 1 GiB\n  kernel_copy_bandwidth: 1000 GB/s\n"
        "  kernel_launch: 1 us\n  strided_row_penalty: 32 B\n"
        "nvlink:\n  bandwidth: 100 GB/s\n  efficiency: 1.0\n  latency: 1 us\n"
        "nic:\n  bandwidth: 80 Gbit/s\n  efficiency: 0.5\n  latency: 10 us\n"
        "software:\n  message_overhead: 2 us\n",
        -1, NULL));
    const char *args[] = {"simulate", "--messages", in,       "--topology", topo,
                          "--format", "json",       "-q",     NULL};
    RunResult r = run_reshard(args);
    if (r.exit_code != 0)
        g_error("exit %d: %s", r.exit_code, r.err);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_json(parser, r.out);
    double copy_s = 1e-6 + (1e9 + 2 * 32) / 1e12;
    double send_s = 2e-6 + 2 * 10e-6 + 1e6 / 5e9;
    g_assert_cmpfloat_with_epsilon(json_object_get_double_member(root, "predicted_s"),
                                   copy_s + send_s, 1e-12);
    run_result_clear(&r);
}

/* A message list whose bytes cross no link (one empty message) has no bound: it printed
 * "efficiency 0%" and JSON gave efficiency 0, bound 0 s and bottleneck "". */
static void
test_replay_no_bound(void)
{
    g_autofree char *in = write_temp("empty-message.csv", "src,dst,bytes\n0,8,0\n");
    const char *text[] = {"simulate", "--messages", in,   "--topology", "dgx-h100",
                          "--nodes",  "2",          "-q", NULL};
    RunResult r = run_reshard(text);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "bound      none: no byte crosses a link");
    g_assert_null(strstr(r.out, "efficiency"));
    run_result_clear(&r);
    const char *json[] = {"simulate", "--messages", in,     "--topology", "dgx-h100", "--nodes",
                          "2",        "--format",   "json", "-q",         NULL};
    r = run_reshard(json);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_json(parser, r.out);
    g_assert_true(json_object_get_null_member(root, "efficiency"));
    g_assert_true(json_object_get_null_member(root, "link_load_bound_s"));
    g_assert_true(json_object_get_null_member(root, "bottleneck_link"));
    g_assert_cmpint(json_object_get_int_member(root, "last_gpu"), ==, 8); /* the receiver */
    run_result_clear(&r);
}

/* With several strategies, --trace and --link-stats write one file per strategy. */
static void
test_simulate_trace_files(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *trace = g_build_filename(dir, "t.csv", NULL);
    g_autofree char *links = g_build_filename(dir, "l.csv", NULL);
    const char *args[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                          "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer", "vllm:tp=4",
                          "--infer-gpus", "8-15", "--trace", trace, "--link-stats", links, "-q",
                          NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    const char *const strategies[] = {"direct", "nccl-broadcast"};
    for (guint i = 0; i < G_N_ELEMENTS(strategies); i++) {
        g_autofree char *name = g_strdup_printf("t-%s.csv", strategies[i]);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *text = read_file(path);
        /* No comment lines: the metadata is in the sidecar FILE.meta. */
        g_assert_true(g_str_has_prefix(
            text, "message,src,dst,bytes,phase,start_s,end_s,route,depends_on\n0,"));
        g_assert_null(strstr(text, "#"));
        g_autofree char *meta_path = g_strconcat(path, ".meta", NULL);
        g_autofree char *meta_text = read_file(meta_path);
        g_autofree char *meta = g_strdup_printf("strategy=%s\n", strategies[i]);
        assert_contains(meta_text, "[trace]\n");
        assert_contains(meta_text, meta);
        assert_contains(meta_text, "source=simulated\n");
        g_autofree char *lname = g_strdup_printf("l-%s.csv", strategies[i]);
        g_autofree char *lpath = g_build_filename(dir, lname, NULL);
        g_assert_true(g_file_test(lpath, G_FILE_TEST_IS_REGULAR));
    }
    g_assert_false(g_file_test(trace, G_FILE_TEST_EXISTS));
    /* One file per plan simulated: the candidate auto tried without a row (the hierarchical
     * row shows the plan without domain relays) too; auto's row is one of them. */
    g_autofree char *relays = g_build_filename(dir, "t-hierarchical+relays.csv", NULL);
    g_assert_true(g_file_test(relays, G_FILE_TEST_IS_REGULAR));
    g_autofree char *auto_trace = g_build_filename(dir, "t-auto.csv", NULL);
    g_assert_false(g_file_test(auto_trace, G_FILE_TEST_EXISTS));
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
    JsonObject *root = parse_json(parser, r.out);
    g_assert_cmpint(json_object_get_int_member(root, "gpus_per_nvlink_domain"), ==, 72);
    run_result_clear(&r);
    const char *args4[] = {"topology", "list", NULL};
    r = run_reshard(args4);
    g_assert_cmpstr(r.out, ==, "dgx-b200\ndgx-h100\ngb200-nvl72\ngb300-nvl72\n");
    run_result_clear(&r);
}

typedef struct {
    const char *const args[16];
    const char *file_name; /* a temp file written with file_text; "@" in args is its path */
    const char *file_text;
    gint exit_code;
    const char *fragments[3];
} CliCase;

static const CliCase cli_cases[] = {
    /* A required name given empty was taken (a topology titled ""). */
    {{"topology", "show", "@", NULL},
     "empty-name.yaml",
     "name:\nnodes: 2\ngpus_per_node: 2\nnvlink: {bandwidth: 100 GB/s}\n"
     "nic: {bandwidth: 10 GB/s}\n",
     2,
     {"empty-name.yaml:1:6: name: must not be empty", NULL}},
    {{"models", "--model", "@", NULL},
     "empty-model-name.yaml",
     "name: \"\"\nfamily: llama\n",
     2,
     {"empty-model-name.yaml:1:7: name: must not be empty", NULL}},
    {{"simulate", "--model", "nosuch", NULL},
     NULL,
     NULL,
     2,
     {"unknown model \"nosuch\"", "deepseek-v3", NULL}},
    {{"simulate", "--model", "@", NULL},
     "bad.yaml",
     "name: x\nfamily: llama\nhidden_size: [4096\n",
     2,
     {"bad.yaml:4:1", NULL}},
    {{"simulate", "--train", "megatron:tp=1,pp=16,dp=8", NULL},
     NULL,
     NULL,
     2,
     {"train: megatron", "= 128 ranks, but 256 GPUs are given", NULL}},
    {{"simulate", "--topology", "@", NULL},
     "topo.yaml",
     "name: t\nnodes: 64\ngpus_per_node: 8\nnvlink:\n  bandwidth: 450 Gb/s\n"
     "nic:\n  bandwidth: 400 Gbit/s\n",
     2,
     {"topo.yaml:5:14: nvlink.bandwidth", "ambiguous, use Gbit/s or GB/s", NULL}},
    {{"simulate", "--nodes", "16", NULL},
     NULL,
     NULL,
     2,
     {"GPU 128 is not in topology dgx-h100 with 16 nodes", NULL}},
    {{"simulate", "--strategy", "teleport", NULL},
     NULL,
     NULL,
     2,
     {"unknown strategy \"teleport\"", NULL}},
    {{"simulate", "--format", "xml", NULL}, NULL, NULL, 2, {"unknown format", NULL}},
    {{"simulate", "--dtype", "bf17", NULL}, NULL, NULL, 2, {"--dtype: unknown dtype", NULL}},
    {{"simulate", "--infer", "vllm:tp=3", NULL},
     NULL,
     NULL,
     2,
     {"infer: vllm", "does not divide the 256 GPUs", NULL}},
    {{"simulate", "--scenario", "@", NULL},
     "s.yaml",
     "model: deepseek-v3\ntopology: dgx-h100\ntrain:\n  convention: megatron\n"
     "  gpus: 0-7\n  tq: 2\n",
     2,
     {"s.yaml:6:3: train.tq", "known: tp, cp, pp, dp, ep, etp", NULL}},
    {{"simulate", "--bogus", NULL}, NULL, NULL, 2, {"Unknown option --bogus", NULL}},
    {{"frobnicate", NULL}, NULL, NULL, 2, {"unknown command", NULL}},
    /* vLLM tp=32 cuts DeepSeek-V3's 128-row FP8 blocks: the stored form cannot be laid out. */
    {{"simulate", "--stored", "--strategy", "direct", NULL},
     NULL,
     NULL,
     2,
     {"infer: vllm tp=32 replicas=8: model.layers.0.mlp.gate_proj.weight",
      "not aligned to blocks of 128 elements", NULL}},
    /* reshard layout / plan: bad input names the flag, exit 2. */
    {{"layout", "--shape", "8x4", "--mesh", "2", "--placements", "P", NULL},
     NULL,
     NULL,
     2,
     {"--placements: placement 0 is Partial", NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=3", "--tensor",
      "model.layers.0.self_attn.q_proj.weight", NULL},
     NULL,
     NULL,
     2,
     {"--infer: vllm tp=3 replicas=1: tp=3 and the 32 attention heads of "
      "model.layers.0.self_attn.q_proj.weight",
      NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--train", "megatron:tp=16", "--tensor",
      "lm_head.weight", NULL},
     NULL,
     NULL,
     2,
     {"--train: megatron", "tp=16 does not divide the 8 key/value heads", NULL}},
    {{"layout", "--shape", "48x4", "--mesh", "3", "--placements", "S(0)", "--fused", "qkv:32,8",
      NULL},
     NULL,
     NULL,
     2,
     {"--fused: tp=3 does not divide the 32 query heads", NULL}},
    {{"layout", "--shape", "64x4", "--mesh", "12", "--placements", "S(0)", "--fused", "qkv:48,8",
      NULL},
     NULL,
     NULL,
     2,
     {"--fused: 8 KV heads and tp=12: neither divides the other", NULL}},
    {{"plan", "--shape", "8x4", "--src-mesh", "2", "--src-placements", "S(2)", "--dst-mesh", "2",
      "--dst-placements", "R", NULL},
     NULL,
     NULL,
     2,
     {"--src-placements: placement 0 is S(2) but the tensor has 2 dims", NULL}},
    {{"layout", "--shape", "8", "--mesh", "2x2", "--ranks", "0-2", "--placements", "R,R", NULL},
     NULL,
     NULL,
     2,
     {"--mesh/--ranks: mesh [2,2] has 4 positions but 3 ranks were given", NULL}},
    {{"layout", "--shape", "8x4", "--mesh", "2", "--placements", "SS(0)", NULL},
     NULL,
     NULL,
     2,
     {"--placements: placements \"SS(0)\"", NULL}},
    {{"layout", "--shape", "8x4", "--mesh", "2", "--placements", "R", "--fused", "gate-up", NULL},
     NULL,
     NULL,
     2,
     {"--fused needs exactly one S(d) placement", NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=4", "--tensor", "q_proj", NULL},
     NULL,
     NULL,
     2,
     {"--tensor: no tensor or fused buffer named \"q_proj\"", NULL}},
    /* The hint names the tensors of the same layer (it named layer 0's for layer 3) and,
     * for a bare module name, the first few that hold it. */
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=4", "--tensor",
      "model.layers.3.mlp.gate.weight", NULL},
     NULL,
     NULL,
     2,
     {"in Llama-3.1-8B (similar: model.layers.3.mlp.gate_proj.weight, "
      "model.layers.3.mlp.up_proj.weight, model.layers.3.mlp.down_proj.weight)",
      NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=4", "--tensor",
      "model.layers.3.self_attn.q_proj.weights", NULL},
     NULL,
     NULL,
     2,
     {"in Llama-3.1-8B (similar: model.layers.3.self_attn.q_proj.weight)", NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=4", "--tensor", "o_proj", NULL},
     NULL,
     NULL,
     2,
     {"(similar: model.layers.0.self_attn.o_proj.weight, model.layers.1.self_attn.o_proj.weight, "
      "model.layers.2.self_attn.o_proj.weight, ...)",
      NULL}},
    /* A misspelt top-level name shares no module and no last components: the names a few
     * edits away (it gave no hint). */
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=4", "--tensor", "lm_heads.weight",
      NULL},
     NULL,
     NULL,
     2,
     {"named \"lm_heads.weight\" in Llama-3.1-8B (similar: lm_head.weight)\n", NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=4", "--tensor",
      "model.embed_token.weight", NULL},
     NULL,
     NULL,
     2,
     {"in Llama-3.1-8B (similar: model.embed_tokens.weight)\n", NULL}},
    /* A layer past the decoder's: DeepSeek-V3's 61 is its multi-token-prediction layer,
     * which --mtp lays out; the refusal gave no clue. */
    {{"layout", "--model", "deepseek-v3", "--infer", "vllm:tp=8", "--tensor",
      "model.layers.61.self_attn.kv_a_layernorm.weight", NULL},
     NULL,
     NULL,
     2,
     {"(similar: model.layers.0.self_attn.kv_a_layernorm.weight, ",
      ", ...); DeepSeek-V3 has 61 decoder layers (0-60), and a layer after them is a "
      "multi-token-prediction layer, laid out with --mtp where the config has one",
      NULL}},
    {{"layout", "--model", "deepseek-v3", "--infer", "vllm:tp=8", "--mtp", "--tensor",
      "model.layers.62.self_attn.kv_a_layernorm.weight", NULL},
     NULL,
     NULL,
     2,
     {"; DeepSeek-V3 has 61 decoder layers (0-60) and its multi-token-prediction layers "
      "after them",
      NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--train", "megatron:pp=2,pp-layers=10,10", "--tensor",
      "lm_head.weight", NULL},
     NULL,
     NULL,
     2,
     {"pp-layers add up to 20 layers but Llama-3.1-8B has 32", NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--shape", "8", NULL},
     NULL,
     NULL,
     2,
     {"not both", NULL}},
    {{"plan", "--shape", "8x4", "--src-mesh", "1", "--src-placements", "R", "--dst-mesh", "3",
      "--dst-placements", "S(0)", "--dst-ranks", "1-3", "--dst-dtype", "fp8", NULL},
     NULL,
     NULL,
     2,
     {"--dst-dtype fp8-e4m3: tensor to fp8-e4m3: destination rank 1", NULL}},
    {{"plan", "--model", "llama-3.1-8b", "--train", "fsdp2:dp=4", "--infer", "vllm:tp=4",
      "--infer-dtype", "mxfp5", NULL},
     NULL,
     NULL,
     2,
     {"--infer-dtype: unknown dtype \"mxfp5\"", NULL}},
    {{"simulate", "--network", "packet", NULL}, NULL, NULL, 2, {"--network: unknown model", NULL}},
    {{"simulate", "--rates", "fast", NULL}, NULL, NULL, 2, {"--rates: unknown mode", NULL}},
    {{"simulate", "--relays", "ring", NULL},
     NULL,
     NULL,
     2,
     {"--relays: unknown model \"ring\" (known: chunked, fluid, rounds, window)", NULL}},
    {{"simulate", "--window", "4", NULL},
     NULL,
     NULL,
     2,
     {"--window applies to the executor's schedule: give --relays window", NULL}},
    {{"simulate", "--relays", "window", "--window", "0", NULL},
     NULL,
     NULL,
     2,
     {"--window 0: must be at least 1", NULL}},
    {{"run", "--shape", "8x4", "--compare", "--compare-posting", "rounds", NULL},
     NULL,
     NULL,
     2,
     {"--compare-posting: unknown model \"rounds\" (known: window, phases)", NULL}},
    {{"run", "--shape", "8x4", "--compare-posting", "phases", NULL},
     NULL,
     NULL,
     2,
     {"--compare-posting applies to --compare: give both", NULL}},
    /* --format json printed the text rules, exit 0. */
    {{"models", "--rules", "--format", "json", NULL},
     NULL,
     NULL,
     2,
     {"--rules prints text: --format json does not apply to it", NULL}},
    /* Conversions that lose the values (complex to real, float to integer) were planned and
     * run without a word. */
    {{"plan", "--shape", "8x8", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "S(1)", "--dtype", "c64", "--dst-dtype", "f32", NULL},
     NULL,
     NULL,
     2,
     {"--dst-dtype f32: tensor: c64 to f32: it would lose its values (complex to "
      "floating-point); a tensor converts between floating-point formats (f64, f32, bf16, f16, "
      "fp8, mxfp4) or between complex ones",
      NULL}},
    {{"run", "--shape", "8x8", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "S(1)", "--dtype", "bf16", "--dst-dtype", "i8", NULL},
     NULL,
     NULL,
     2,
     {"tensor: bf16 to i8: it would lose its values (floating-point to integer)", NULL}},
    {{"plan", "--shape", "8x8", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "S(1)", "--dtype", "i32", "--dst-dtype", "i64", NULL},
     NULL,
     NULL,
     2,
     {"tensor: i32 to i64: an integer tensor keeps its dtype; a tensor converts between "
      "floating-point formats",
      NULL}},
    /* An MXFP4 shard that splits a byte: 10 values on 2 ranks were planned as 2 x 3 bytes
     * of a 5-byte tensor, and the layout printed without a word. */
    {{"plan", "--shape", "10", "--dtype", "mxfp4", "--src-mesh", "2", "--src-placements", "S(0)",
      "--dst-mesh", "1", "--dst-placements", "R", "--dst-ranks", "2", NULL},
     NULL,
     NULL,
     2,
     {"--dtype mxfp4: tensor: source: rank 0 holds [0:5] of the tensor [0:10] at local element 0, which "
      "splits a byte: mxfp4 packs 2 values per byte along the last dim",
      NULL}},
    {{"layout", "--shape", "3x9", "--mesh", "3", "--placements", "S(0)", "--dtype", "mxfp4", NULL},
     NULL,
     NULL,
     2,
     {"--dtype mxfp4: rank 0 holds [0:1, 0:9] of the tensor [0:3, 0:9], which splits a byte", NULL}},
    /* A quoted number or boolean is a string in YAML; tp: "2" was read as 2. */
    {{"simulate", "--scenario", "@", "--network", "bottleneck", NULL},
     "quoted.yaml",
     "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\n"
     "train: {convention: megatron, gpus: 0-7, tp: \"2\", pp: 2}\n"
     "infer: {convention: vllm, gpus: 8-15, tp: 4}\n",
     2,
     {"quoted.yaml:4:46: train.tp: \"2\" is quoted, a string: expected an integer, written "
      "without quotes",
      NULL}},
    {{"simulate", "--scenario", "@", "--network", "bottleneck", NULL},
     "quoted-bool.yaml",
     "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: '2'\nuse_idle_gpus: 'true'\n"
     "train: {convention: megatron, gpus: 0-7, tp: 2, pp: 2}\n"
     "infer: {convention: vllm, gpus: 8-15, tp: 4, ep: \"true\"}\n",
     2,
     {"quoted-bool.yaml:3:8: nodes: \"2\" is quoted, a string: expected an integer", NULL}},
    {{"simulate", "--scenario", "@", "--network", "bottleneck", NULL},
     "quoted-switch.yaml",
     "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\n"
     "train: {convention: megatron, gpus: 0-7, tp: 2, pp: 2}\n"
     "infer: {convention: vllm, gpus: 8-15, tp: 4, ep: \"true\"}\n",
     2,
     {"quoted-switch.yaml:5:50: infer.ep: \"true\" is quoted, a string: expected true or false",
      NULL}},
    {{"sweep", "--sweep", "@", "--strategies", "direct", NULL},
     "quoted-grid.yaml",
     "tp: [\"8\", 32]\n",
     2,
     {"quoted-grid.yaml:1:6: tp: \"8\" is quoted, a string: expected a positive integer", NULL}},
    {{"sweep", "--sweep", "@", "--strategies", "direct", NULL},
     "quoted-ep.yaml",
     "ep: [off, 'on']\n",
     2,
     {"quoted-ep.yaml:1:11: ep: \"on\" is quoted, a string: expected off or on", NULL}},
    /* Sizes whose product passes 2^63 wrapped: to 0 (n_gpus % 0 killed the process with
     * SIGFPE) or to a small number that passed the world check. */
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=16777216,dp=16777216,pp=16777216",
      "--gpus", "0-7", "--tensor", "model.layers.0.mlp.down_proj.weight", NULL},
     NULL,
     NULL,
     2,
     {"tp x pp x dp = more than 2^63 does not divide the 8 GPUs given", NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--train", "megatron:tp=16777216,pp=16777216,cp=16777216",
      "--gpus", "0-7", "--tensor", "model.layers.0.mlp.down_proj.weight", NULL},
     NULL,
     NULL,
     2,
     {"tp x cp x pp = more than 2^63 does not divide the 8 GPUs given", NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=8,dp=1241737,pp=1084757,replicas=5135573",
      "--gpus", "0-7", "--tensor", "model.layers.0.mlp.down_proj.weight", NULL},
     NULL,
     NULL,
     2,
     {"tp x pp x dp x replicas = more than 2^63 ranks, but 8 GPUs are given", NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=16777216,pp=16777216", "--tensor",
      "model.layers.0.mlp.down_proj.weight", NULL},
     NULL,
     NULL,
     2,
     {"--infer: vllm tp=16777216 pp=16777216: 281474976710656 ranks, more than the 1048576 GPUs",
      NULL}},
    {{"layout", "--shape", "8x8", "--mesh", "2", "--placements", "S(0)", "--infer-dtype", "mxfp4",
      NULL},
     NULL,
     NULL,
     2,
     {"--infer-dtype applies to --model with --infer; a single tensor takes --dtype", NULL}},
    /* --mtp on a model without MTP layers was a silent no-op. */
    {{"models", "--model", "llama-3.1-8b", "--mtp", NULL},
     NULL,
     NULL,
     2,
     {"reshard models: --mtp: Llama-3.1-8B has no multi-token-prediction layers to include",
      NULL}},
    {{"simulate", "--model", "qwen3-8b", "--mtp", "--network", "bottleneck", NULL},
     NULL,
     NULL,
     2,
     {"reshard simulate: --mtp: Qwen3-8B has no multi-token-prediction layers to include",
      NULL}},
    {{"simulate", "--scenario", "@", "--network", "bottleneck", NULL},
     "mtp.yaml",
     "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\nmtp: true\n"
     "train: {convention: megatron, gpus: 0-7, tp: 2, pp: 2}\n"
     "infer: {convention: vllm, gpus: 8-15, tp: 4}\n",
     2,
     {"mtp.yaml:4:6: mtp: Llama-3.1-8B has no multi-token-prediction layers to include", NULL}},
    /* The serving dtype of `layout` belongs to an inference layout. */
    {{"layout", "--model", "gpt-oss-20b", "--train", "megatron:tp=2", "--infer-dtype", "mxfp4",
      "--tensor", "model.layers.0.mlp.experts.down_proj", NULL},
     NULL,
     NULL,
     2,
     {"--infer-dtype needs --infer", NULL}},
    /* A bare number was read as seconds; every other duration needs its unit. */
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--tp", "4", "--target", "1", NULL},
     NULL,
     NULL,
     2,
     {"--target: duration \"1\": missing unit (use s, ms, us or ns)", NULL}},
    /* MXFP4 applies to routed experts only: on a dense model it converted nothing and the
     * refit was priced in bf16 under mxfp4's name, exit 0. */
    {{"simulate", "--model", "llama-3.1-8b", "--infer-dtype", "mxfp4", "--network",
      "bottleneck", NULL},
     NULL,
     NULL,
     2,
     {"mxfp4 applies to routed expert weights only (as gpt-oss and Kimi-K3 store them), and "
      "Llama-3.1-8B has none: it would be served as stored (bf16)",
      NULL}},
    /* A routed expert past the model's count, by its checkpoint name; a checkpoint never
     * writes a leading zero (experts.05. was read as expert 5). */
    {{"layout", "--model", "qwen3-30b-a3b", "--infer", "vllm:tp=4", "--tensor",
      "model.layers.0.mlp.experts.4294967301.gate_proj.weight", NULL},
     NULL,
     NULL,
     2,
     {"expert 4294967301 of model.layers.0.mlp.experts.gate_proj.weight, which has 128 experts",
      NULL}},
    {{"layout", "--model", "qwen3-30b-a3b", "--infer", "vllm:tp=4", "--tensor",
      "model.layers.0.mlp.experts.05.gate_proj.weight", NULL},
     NULL,
     NULL,
     2,
     {"no tensor or fused buffer named \"model.layers.0.mlp.experts.05.gate_proj.weight\"",
      NULL}},
    /* A routed expert past the model's count, by its checkpoint name. */
    {{"layout", "--model", "qwen3-30b-a3b", "--infer", "vllm:tp=4", "--tensor",
      "model.layers.0.mlp.experts.128.gate_proj.weight", NULL},
     NULL,
     NULL,
     2,
     {"reshard layout: --tensor: model.layers.0.mlp.experts.128.gate_proj.weight: expert 128 "
      "of model.layers.0.mlp.experts.gate_proj.weight, which has 128 experts (0..127)",
      NULL}},
    /* `layout` builds no refit, where that rule lived: it laid a dense model out under
     * --infer-dtype mxfp4 and exited 0. */
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=4", "--infer-dtype", "mxfp4",
      "--tensor", "model.layers.0.mlp.down_proj.weight", NULL},
     NULL,
     NULL,
     2,
     {"reshard layout: --infer-dtype: mxfp4 applies to routed expert weights only (as gpt-oss "
      "and Kimi-K3 store them), and Llama-3.1-8B has none: it would be served as stored (bf16)",
      NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=4", "--infer-dtype", "i8",
      "--tensor", "q_proj", NULL},
     NULL,
     NULL,
     2,
     {"reshard layout: --infer-dtype: i8 is integer: Llama-3.1-8B's floating-point weights "
      "would lose their values",
      NULL}},
    /* An integer or complex inference dtype was refused as if it were a coverage problem
     * ("applies to linear weights of 2 or more dims only, and ... has none"), and a
     * scenario file's infer_dtype was not named. */
    {{"simulate", "--scenario", "qwen3-30b-colocated", "--infer-dtype", "i8", "--network",
      "bottleneck", NULL},
     NULL,
     NULL,
     2,
     {"--infer-dtype: i8 is integer: Qwen3-30B-A3B's floating-point weights would lose their "
      "values (floating-point to integer)",
      NULL}},
    {{"simulate", "--scenario", "@", "--network", "bottleneck", NULL},
     "s.yaml",
     "model: qwen3-30b-a3b\ntopology: dgx-h100\nnodes: 2\ninfer_dtype: c64\n"
     "train: {convention: megatron, gpus: 0-7, tp: 4}\n"
     "infer: {convention: vllm, gpus: 8-15, tp: 4}\n",
     2,
     {"s.yaml:4:14: infer_dtype: c64 is complex: Qwen3-30B-A3B's floating-point weights would "
      "lose their values (floating-point to complex)",
      NULL}},
    /* Aliases of aliases: a 1 KB model YAML took 5 GB and a minute before its first key
     * was checked (each level 10 times the last). */
    {{"models", "--model", "@", NULL},
     "bomb.yaml",
     "zz0: &z0 [a, a, a, a, a, a, a, a, a, a]\n"
     "zz1: &z1 [*z0, *z0, *z0, *z0, *z0, *z0, *z0, *z0, *z0, *z0]\n"
     "zz2: &z2 [*z1, *z1, *z1, *z1, *z1, *z1, *z1, *z1, *z1, *z1]\n"
     "zz3: &z3 [*z2, *z2, *z2, *z2, *z2, *z2, *z2, *z2, *z2, *z2]\n"
     "zz4: &z4 [*z3, *z3, *z3, *z3, *z3, *z3, *z3, *z3, *z3, *z3]\n"
     "zz5: &z5 [*z4, *z4, *z4, *z4, *z4, *z4, *z4, *z4, *z4, *z4]\n"
     "zz6: &z6 [*z5, *z5, *z5, *z5, *z5, *z5, *z5, *z5, *z5, *z5]\n",
     2,
     {"the file expands to more than 100000 values (aliases of aliases?)", NULL}},
    /* vLLM's ep is a switch: ep=1 was read as "on", where megatron's and sglang's ep=1 is a
     * size of one (no expert parallelism). */
    {{"simulate", "--infer", "vllm:tp=8,ep=1", "--network", "bottleneck", NULL},
     NULL,
     NULL,
     2,
     {"\"vllm:tp=8,ep=1\": ep=1: ep is a switch, on or off, not a size (give ep or ep=off)",
      NULL}},
    /* A model_type of another family than family: was taken silently (family won). */
    {{"models", "--model", "@", NULL},
     "m.yaml",
     "name: x\nfamily: llama\nmodel_type: qwen3\n",
     2,
     {"m.yaml:3:13: model_type: qwen3 is the qwen3 family, but family: llama; give one of them",
      NULL}},
    /* An empty --plot prefix (or a folder's) wrote hidden .dat, .gp, .png and .svg. */
    {{"compare", "pred.csv", "meas.csv", "--plot", "", NULL},
     NULL,
     NULL,
     2,
     {"--plot \"\": empty prefix (the files would be .png, .svg, ...)", NULL}},
    {{"compare", "pred.csv", "meas.csv", "--plot", ".", NULL},
     NULL,
     NULL,
     2,
     {"--plot \".\": empty prefix (the files would be ..png", NULL}},
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--tp", "4", "--plot", "/tmp/", NULL},
     NULL,
     NULL,
     2,
     {"--plot \"/tmp/\": empty prefix (the files would be /tmp/.png", NULL}},
    /* A folder that takes no file (/proc, even for root, whose permissions allow it):
     * the trace failed at the end, exit 1, naming its temporary "/proc/x.6PLUZ3". */
    {{"simulate", "--scenario", "qwen3-30b-colocated", "--trace", "/proc/x.csv", NULL},
     NULL,
     NULL,
     2,
     {"--trace /proc/x.csv: folder /proc takes no new file (No such file or directory)", NULL}},
    /* With --gpus-per-domain the user numbers the job's GPUs: GPU 8 of 4 per domain on two
     * nodes was reported as "GPU 16 is not in topology", a GPU never written. */
    {{"simulate", "--scenario", "@", "--network", "bottleneck", "--gpus-per-domain", "4",
      "--infer-gpus", "4-8", NULL},
     "gpd.yaml",
     "name: gpd\nmodel: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\n"
     "train: {convention: megatron, gpus: 0-3, tp: 2, pp: 2}\n"
     "infer: {convention: vllm, gpus: 4-7, tp: 4}\n",
     2,
     {"--infer-gpus: infer.gpus: GPU 8 is beyond the 8 GPUs the job holds (gpus_per_domain 4 "
      "of each of the 2 NVLink domains of dgx-h100 with 2 nodes)",
      NULL}},
    /* One NIC bandwidth twice under two spellings swept the same points twice (exit 0); an
     * empty --nic-bws fell back to the scenario's; dp and gpus both in a grid file were
     * refused without the file's name or line. */
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--nic-bws", "400Gbit/s,50GB/s", NULL},
     NULL,
     NULL,
     2,
     {"--nic-bws: \"50GB/s\" is \"400Gbit/s\" again, 50 GB/s", NULL}},
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--sweep", "@", NULL},
     "bw.yaml",
     "tp: [4]\nnic_bw: [400 Gbit/s, 50 GB/s]\n",
     2,
     {"bw.yaml:2:22: nic_bw: \"50 GB/s\" is 50 GB/s, given before (line 2, column 10", NULL}},
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--nic-bws", "", NULL},
     NULL,
     NULL,
     2,
     {"--nic-bws \"\": an empty list", NULL}},
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--sweep", "@", NULL},
     "dpg.yaml",
     "dp: [2]\ngpus: [8]\n",
     2,
     {"dpg.yaml:2:7: gpus: dp and gpus are one axis given twice", NULL}},
    /* Empty sweep axes fell back to the scenario's value, exit 0; --shape "" blamed the
     * placements; --name "a: b" made a topology its own check refused after measuring. */
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--tp", "", NULL},
     NULL,
     NULL,
     2,
     {"--tp \"\": an empty list; give its values, like --tp 4,8", NULL}},
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--sweep", "@", NULL},
     "sweep.yaml",
     "pp: [1]\ntp: []\n",
     2,
     {"sweep.yaml:2:5: tp: an empty list; give its values or leave the key out", NULL}},
    /* A sweep file's values are checked where they stand (a bad strategy was blamed on
     * --strategies, never given; a bad dtype or topology failed only its points). */
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--sweep", "@", NULL},
     "sweep.yaml",
     "tp: [4]\nstrategy: [direct, nonsense]\n",
     2,
     {"sweep.yaml:2:20: strategy: unknown strategy \"nonsense\"", "or auto", NULL}},
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--sweep", "@", NULL},
     "sweep.yaml",
     "infer_dtype: [bf16, bf17]\n",
     2,
     {"sweep.yaml:1:21: infer_dtype: unknown dtype \"bf17\"", NULL}},
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--sweep", "@", NULL},
     "sweep.yaml",
     "topology: [dgx-h100, nowhere]\n",
     2,
     {"sweep.yaml:1:22: topology: unknown topology \"nowhere\"", NULL}},
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--sweep", "@", NULL},
     "sweep.yaml",
     "tp: [4, 8, 4]\n",
     2,
     {"sweep.yaml:1:12: tp: 4 given twice (first at line 1, column 6)", NULL}},
    {{"sweep", "--scenario", "qwen3-30b-colocated", "--topologies", "@", NULL},
     "zero.yaml",
     "name: z\nnodes: 8\ngpus_per_node: 8\nnvlink:\n  bandwidth: 0 GB/s\nnic:\n  bandwidth: 50 GB/s\n",
     2,
     {"--topologies: ", "zero.yaml:5:14: nvlink.bandwidth: bandwidth \"0 GB/s\": must be greater "
      "than zero",
      NULL}},
    /* A scenario's description must be text (a list was accepted); a required model field
     * present without a value is said so, not "missing". */
    {{"simulate", "--scenario", "@", "--network", "bottleneck", NULL},
     "desc.yaml",
     "name: x\ndescription: [1, 2]\nmodel: qwen3-30b-a3b\ntopology: dgx-h100\n",
     2,
     {"desc.yaml:2:14: description: expected a single value", NULL}},
    {{"models", "--model", "@", NULL},
     "noname.yaml",
     "name:\nfamily: llama\n",
     2,
     {"noname.yaml:1:6: name: required field has no value (empty or null)", NULL}},
    /* One message size fits no bandwidth: it came out infinite and was written as 1 PB/s. */
    {{"calibrate", "--ranks", "2", "--sizes", "64KiB", NULL},
     NULL,
     NULL,
     2,
     {"--sizes 64KiB: give at least two different message sizes", NULL}},
    {{"calibrate", "--ranks", "2", "--sizes", "4KiB,4KiB", NULL},
     NULL,
     NULL,
     2,
     {"--sizes 4KiB,4KiB: give at least two different message sizes", NULL}},
    /* --compare without a topology was refused only after the whole run and its report. */
    {{"run", "--shape", "64x64", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "S(1)", "--dst-ranks", "2-3", "--compare", NULL},
     NULL,
     NULL,
     2,
     {"--compare needs a topology to simulate on (--topology)", NULL}},
    /* "-" as a file output made a file named "-" (only report -o takes standard output). */
    {{"run", "--shape", "64x64", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "S(1)", "--trace", "-", NULL},
     NULL,
     NULL,
     2,
     {"--trace -: this output is a file, not standard output", NULL}},
    /* Flow-model options under the first-order model were ignored, the output unchanged. */
    {{"simulate", "--network", "bottleneck", "--relays", "window", NULL},
     NULL,
     NULL,
     2,
     {"--relays applies to the flow model, not --network bottleneck", NULL}},
    {{"simulate", "--network", "bottleneck", "--chunk-size", "1MiB", NULL},
     NULL,
     NULL,
     2,
     {"--chunk-size applies to the flow model, not --network bottleneck", NULL}},
    /* --runs had no bound: 10^9 runs of a tiny reshard ran on with no output. */
    {{"run", "--shape", "8x8", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "S(1)", "--runs", "1000000000", NULL},
     NULL,
     NULL,
     2,
     {"--runs 1000000000: must be an integer from 1 to 10000", NULL}},
    {{"layout", "--shape", "", "--mesh", "2", "--placements", "S(0)", NULL},
     NULL,
     NULL,
     2,
     {"--shape \"\": empty; expected 1 to 6 sizes like 200x200", NULL}},
    {{"calibrate", "--name", "a: b", "--ranks", "2", NULL},
     NULL,
     NULL,
     2,
     {"--name \"a: b\": a topology name is letters, digits and . _ + -", NULL}},
    /* Buffers past the machine's memory for one tensor: the hint named --scale and
     * --layers, which a single tensor has not. */
    {{"run", "--shape", "64x64", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh",
      "2", "--dst-placements", "S(1)", "--window", "10000000", NULL},
     NULL,
     NULL,
     2,
     {"give a smaller --chunk-size or --window", NULL}},
    /* A quoted scalar's escapes make control characters once unescaped: a topology named
     * "t\e[2J" cleared the terminal in `topology show` (the file's bytes are text). */
    {{"topology", "show", "@", NULL},
     "esc.yaml",
     "name: \"t\\e[2J\"\n",
     2,
     {"esc.yaml:1:7: name: the scalar holds the control character U+001B", NULL}},
    {{"topology", "show", "@", NULL},
     "esc-item.yaml",
     "name: ok\ncopy:\n  - \"a\\u009b\"\n",
     2,
     {"esc-item.yaml:3:5: copy: the scalar holds the control character U+009B", NULL}},
    {{"topology", "show", "@", NULL},
     "esc-key.yaml",
     "\"k\\a\": 1\n",
     2,
     {"esc-key.yaml:1:1: the scalar holds the control character U+0007", NULL}},
    /* "\0" was no control character to the check (the character was its "none found"),
     * and the value was cut short; the first bad scalar of the file is named, not one of
     * the top mapping after it. */
    {{"topology", "show", "@", NULL},
     "esc-nul.yaml",
     "name: t\ndescription: \"a\\0b\"\nnodes: 2\n",
     2,
     {"esc-nul.yaml:2:14: description: the scalar holds the control character U+0000", NULL}},
    {{"topology", "show", "@", NULL},
     "esc-first.yaml",
     "name: t\ngpu:\n  model: \"bad\\e\"\nzzz: \"late\\e\"\n",
     2,
     {"esc-first.yaml:3:10: model: the scalar holds the control character U+001B", NULL}},
    /* A value under a key that is a list: no key to name (its text was read as a scalar's). */
    {{"topology", "show", "@", NULL},
     "esc-complex.yaml",
     "? [a, b]\n: \"x\\e\"\n",
     2,
     {"esc-complex.yaml:2:3: the scalar holds the control character U+001B", NULL}},
    /* Nesting past 64 levels: 100,000 levels overflowed the stack (SIGSEGV) in the model
     * readers and json-glib, and libyaml took time quadratic in the depth. */
    {{"models", "--model", "@", NULL},
     "deep.yaml",
     "name: x\nfamily: llama\nrope_scaling: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
     2,
     {"deep.yaml:3:", "nested deeper than 64 levels", NULL}},
    {{"models", "--model", "@", NULL},
     "deep-block.yaml",
     "name: x\na0:\n a1:\n  a2:\n   a3:\n    a4:\n     a5:\n      a6:\n       a7:\n        a8:\n         a9:\n          a10:\n           a11:\n            a12:\n             a13:\n              a14:\n               a15:\n                a16:\n                 a17:\n                  a18:\n                   a19:\n                    a20:\n                     a21:\n                      a22:\n                       a23:\n                        a24:\n                         a25:\n                          a26:\n                           a27:\n                            a28:\n                             a29:\n                              a30:\n                               a31:\n                                a32:\n                                 a33:\n                                  a34:\n                                   a35:\n                                    a36:\n                                     a37:\n                                      a38:\n                                       a39:\n                                        a40:\n                                         a41:\n                                          a42:\n                                           a43:\n                                            a44:\n                                             a45:\n                                              a46:\n                                               a47:\n                                                a48:\n                                                 a49:\n                                                  a50:\n                                                   a51:\n                                                    a52:\n                                                     a53:\n                                                      a54:\n                                                       a55:\n                                                        a56:\n                                                         a57:\n                                                          a58:\n                                                           a59:\n                                                            a60:\n                                                             a61:\n                                                              a62:\n                                                               a63:\n                                                                a64:\n                                                                 a65:\n                                                                  a66:\n                                                                   a67:\n                                                                    a68:\n                                                                     a69:\n",
     2,
     {"deep-block.yaml:66:", "nested deeper than 64 levels", NULL}},
    {{"models", "--model", "@", NULL},
     "config.json",
     "{\"model_type\": \"llama\", \"hidden_size\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
     2,
     {"config.json:1:", "the config.json nests deeper than 64 levels", NULL}},
    /* json-glib's scanner wraps integers past 64 bits (-18446744073709551617 read as 1: a
     * one-layer model, exit 0), reads 1e400 as infinity and keeps the last of a key given
     * twice: each refused where it stands. */
    {{"models", "--model", "@", NULL},
     "config.json",
     "{\"model_type\": \"llama\",\n \"num_hidden_layers\": -18446744073709551617}",
     2,
     {"config.json:2:23: num_hidden_layers: the integer -18446744073709551617 is outside the "
      "64-bit range a JSON reader keeps (-2^63 to 2^63 - 1)",
      NULL}},
    {{"models", "--model", "@", NULL},
     "config.json",
     "{\"model_type\": \"llama\", \"rope_scaling\": {\"factor\": 1e400}}",
     2,
     {"config.json:1:52: rope_scaling.factor: the number 1e400 is beyond the range of a double",
      NULL}},
    {{"models", "--model", "@", NULL},
     "config.json",
     "{\"model_type\": \"llama\", \"hidden_size\": 4096,\n \"hidden_size\": 8192}",
     2,
     {"config.json:2:2: hidden_size: field given twice (first at line 1, column 25)", NULL}},
    /* A second YAML document (after "---", or anything after "...") was ignored, and what
     * it said with it; one document per file. */
    {{"simulate", "--scenario", "@", "--network", "bottleneck", NULL},
     "two.yaml",
     "name: x\nmodel: qwen3-30b-a3b\ntopology: dgx-h100\n---\nnodes: 7\n",
     2,
     {"two.yaml:4:1: a second YAML document; a file holds one", NULL}},
    {{"models", "--model", "@", NULL},
     "end.yaml",
     "name: x\nfamily: llama\n...\ngarbage: [\n",
     2,
     {"end.yaml:4:1: did not find expected <document start>", NULL}},
    /* A scenario file without layouts: the file and the missing keys named (it named
     * neither). */
    {{"simulate", "--scenario", "@", "--network", "bottleneck", NULL},
     "nolayout.yaml",
     "name: x\nmodel: qwen3-30b-a3b\ntopology: dgx-h100\n",
     2,
     {"nolayout.yaml: a scenario needs a model", "missing: train, infer", NULL}},
    /* Host transport settings past their limits aborted on allocation (8 GiB × depth of
     * eager slots per channel; a ring of 2^31 entries); MXFP4 failed to allocate a 0-byte
     * buffer and advised --scale. */
    {{"run", "--shape", "64x64", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh",
      "2", "--dst-placements", "S(1)", "--eager-size", "8GiB", NULL},
     NULL,
     NULL,
     2,
     {"--eager-size: 8GiB is above the largest, 1 MiB", NULL}},
    {{"run", "--shape", "64x64", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh",
      "2", "--dst-placements", "S(1)", "--queue-depth", "2147483647", NULL},
     NULL,
     NULL,
     2,
     {"--queue-depth 2147483647: must be an integer from 1 to 1024", NULL}},
    {{"run", "--shape", "64x64", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh",
      "2", "--dst-placements", "S(1)", "--dtype", "mxfp4", NULL},
     NULL,
     NULL,
     2,
     {"\"tensor\" is mxfp4 on the wire: the executor moves whole-byte elements", NULL}},
    {{"simulate", "--nic-bw", "800", NULL},
     NULL,
     NULL,
     2,
     {"--nic-bw: bandwidth \"800\": missing unit", NULL}},
    {{"simulate", "--nic-bw", "800 Gb/s", NULL},
     NULL,
     NULL,
     2,
     {"ambiguous, use Gbit/s or GB/s", NULL}},
    {{"simulate", "--nic-bw", "1e300GB/s", NULL},
     NULL,
     NULL,
     2,
     {"--nic-bw: bandwidth \"1e300GB/s\": above the largest accepted, 1 PB/s (1000 TB/s)", NULL}},
    {{"sweep", "--nic-bws", "400Gbit/s,1e30GB/s", NULL},
     NULL,
     NULL,
     2,
     {"--nic-bws: bandwidth \"1e30GB/s\": above the largest accepted, 1 PB/s", NULL}},
    {{"simulate", "--oversubscription", "1000", NULL},
     NULL,
     NULL,
     2,
     {"--oversubscription: \"1000\": expected a ratio from 1 to 64", NULL}},
    {{"simulate", "--oversubscription", "0.5", NULL},
     NULL,
     NULL,
     2,
     {"--oversubscription: \"0.5\": expected a ratio from 1 to 64", NULL}},
    {{"simulate", "--chunk-size", "4 Mb", NULL},
     NULL,
     NULL,
     2,
     {"--chunk-size: size", "ambiguous", NULL}},
    {{"simulate", "--network", "bottleneck", "--trace", "x.csv", NULL},
     NULL,
     NULL,
     2,
     {"need the flow model", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv",
     "src,dst,bytes\n0,1,100\n0,1,1e6\n",
     2,
     {"m.csv:3: column bytes: \"1e6\"", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv",
     "message,src,dst,bytes,depends_on\n0,0,1,100,1\n1,1,2,100,0\n",
     2,
     {"m.csv:2: message 0: is part of, or waits on, a dependency cycle", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv",
     "src,dst,bytes\n0,256,100\n",
     2,
     {"m.csv:2: message 0: rank 256 is not a GPU of topology dgx-h100 (256 GPUs)", NULL}},
    /* A dependency on a later phase named row indexes ("message 1 depends on message 0")
     * and no line. */
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv",
     "message,src,dst,bytes,phase,depends_on\n10,0,1,100,1,\n20,1,2,100,0,10\n",
     2,
     {"m.csv:3: message 20: depends on message 10, which belongs to a later phase (1, this "
      "message 0)",
      NULL}},
    /* Row errors name the file's line and its own message ids, not internal indexes. */
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv",
     "message,src,dst,bytes,depends_on\n5,0,1,100,\n7,0,999,5,\n",
     2,
     {"m.csv:3: message 7: rank 999 is not a GPU of topology dgx-h100", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv",
     "message,src,dst,bytes,depends_on\n9,2,3,5,\n5,0,1,100,7\n7,1,2,5,5\n",
     2,
     {"m.csv:3: message 5: is part of, or waits on, a dependency cycle", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv",
     "message,src,dst,bytes,depends_on\n5,0,1,100,\n6,0,1,100,8\n",
     2,
     {"m.csv:3: message 6 depends on message 8, which is not in the file", NULL}},
    {{"topology", "show", "@", NULL},
     "t.yaml",
     "name: t\nnodes: 2\ngpus_per_node: 2\nnvlink: {bandwidth: 100 GB/s}\n"
     "nic: {bandwidth: 100 Gbps}\n",
     2,
     {"t.yaml:5:18: nic.bandwidth: bandwidth \"100 Gbps\": ambiguous", NULL}},
    {{"topology", "show", "nosuch", NULL},
     NULL,
     NULL,
     2,
     {"unknown topology \"nosuch\"", "dgx-h100", NULL}},
    {{"topology", "frob", NULL}, NULL, NULL, 2, {"expected \"show NAME|FILE\" or \"list\"", NULL}},
    {{"topology", "show", "dgx-h100", "--pxn", "--no-pxn", NULL},
     NULL,
     NULL,
     2,
     {"contradict", NULL}},
    /* An integer option given as 0 is an error naming it, never "the default". */
    {{"simulate", "--strategy", "direct", "--max-ops-per-group", "0", NULL},
     NULL,
     NULL,
     2,
     {"--max-ops-per-group 0: must be at least 1", NULL}},
    {{"simulate", "--strategy", "direct", "--nodes", "0", NULL},
     NULL,
     NULL,
     2,
     {"--nodes 0: must be an integer from 1 to 262144", NULL}},
    {{"simulate", "--strategy", "direct", "--scale", "0", NULL},
     NULL,
     NULL,
     2,
     {"--scale 0: must be at least 1", NULL}},
    {{"simulate", "--strategy", "direct", "--scale", "-2", NULL},
     NULL,
     NULL,
     2,
     {"--scale -2: must be at least 1", NULL}},
    {{"topology", "show", "dgx-h100", "--nodes", "x", NULL},
     NULL,
     NULL,
     2,
     {"--nodes \"x\": expected an integer", NULL}},
    {{"layout", "--shape", "8x4", "--mesh", "2", "--placements", "S(0)", "--pad", "0", NULL},
     NULL,
     NULL,
     2,
     {"--pad 0: must be at least 1", NULL}},
    {{"plan", "--shape", "8x4", "--src-mesh", "2", "--src-placements", "S(0)", "--src-pad", "0",
      "--dst-mesh", "2", "--dst-placements", "R", NULL},
     NULL,
     NULL,
     2,
     {"--src-pad 0: must be at least 1", NULL}},
    {{"run", "--shape", "8x4", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "R", "--dst-ranks", "2-3", "--window", "0", NULL},
     NULL,
     NULL,
     2,
     {"--window 0: must be at least 1", NULL}},
    {{"run", "--shape", "8x4", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "R", "--dst-ranks", "2-3", "--runs", "0", NULL},
     NULL,
     NULL,
     2,
     {"--runs 0: must be an integer from 1 to 10000", NULL}},
    {{"run", "--shape", "8x4", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "R", "--dst-ranks", "2-3", "--queue-depth", "0", NULL},
     NULL,
     NULL,
     2,
     {"--queue-depth 0: must be an integer from 1 to 1024", NULL}},
    {{"calibrate", "--ranks", "0", NULL}, NULL, NULL, 2, {"--ranks 0: must be an integer from 2 to 262144", NULL}},
    /* Above RS_MAX_RANKS the mesh could not be built: an assertion, then SIGSEGV. */
    {{"calibrate", "--ranks", "262145", NULL},
     NULL,
     NULL,
     2,
     {"--ranks 262145: must be an integer from 2 to 262144", NULL}},
    /* The host transport's queues between every pair of ranks (80 bytes each) were not in
     * the memory check: 10^5 ranks took 24 GB and the machine's OOM killer ended it. */
    {{"calibrate", "--ranks", "100000", "--sizes", "4KiB,64KiB", "--runs", "1", NULL},
     NULL,
     NULL,
     2,
     {"GB of host transport queues, more than the", "fewer --ranks", NULL}},
    {{"run", "--shape", "4", "--src-mesh", "1", "--src-placements", "R", "--src-ranks", "0",
      "--dst-mesh", "60000", "--dst-placements", "R", "--dst-ranks", "1-60000", NULL},
     NULL,
     NULL,
     2,
     {"the 60001 ranks need 1.97 GB of buffers and 295.91 GB of host transport queues", NULL}},
    {{"calibrate", "--concurrency", "0", NULL},
     NULL,
     NULL,
     2,
     {"--concurrency 0: must be an integer from 1 to 262144", NULL}},
    {{"calibrate", "--runs", "0", NULL}, NULL, NULL, 2, {"--runs 0: must be an integer from 1 to 10000", NULL}},
    {{"calibrate", "--window", "0", NULL}, NULL, NULL, 2, {"--window 0: must be at least 1", NULL}},
    {{"models", "--model", "llama-3.1-8b", "--tensors", "--layer", "99", NULL},
     NULL,
     NULL,
     2,
     {"--layer 99: the model has layers 0-31", NULL}},
    /* One of the two used to be ignored without a word. */
    {{"simulate", "--strategy", "direct", "--all-strategies", NULL},
     NULL,
     NULL,
     2,
     {"--strategy direct and --all-strategies: give one", NULL}},
    /* list printed the strategies and ignored --all-strategies. */
    {{"simulate", "--strategy", "list", "--all-strategies", NULL},
     NULL,
     NULL,
     2,
     {"--strategy list and --all-strategies: give one", NULL}},
    {{"layout", "--shape", "4294967296x4294967296x4294967296", "--mesh", "2", "--placements",
      "S(0)", NULL},
     NULL,
     NULL,
     2,
     {"--shape \"4294967296x4294967296x4294967296\": more than 2^62 elements", NULL}},
    {{"plan", "--shape", "4294967296x4294967296", "--src-mesh", "2", "--src-placements", "S(0)",
      "--dst-mesh", "2", "--dst-placements", "R", NULL},
     NULL,
     NULL,
     2,
     {"--shape \"4294967296x4294967296\": more than 2^62 elements", NULL}},
    {{"simulate", "--strategy", "foo", NULL},
     NULL,
     NULL,
     2,
     {"--strategy: unknown strategy \"foo\" (known: gather-broadcast, direct, node-aware, "
      "hierarchical, nccl-broadcast, m2n, m2n-direct, checkpoint-engine, rdma-p2p, auto, all, "
      "list)", NULL}},
    {{"run", "--strategy", "auto", NULL},
     NULL, NULL, 2,
     {"unknown strategy \"auto\" (known: gather-broadcast, direct, node-aware, hierarchical, "
      "nccl-broadcast, m2n, m2n-direct, checkpoint-engine, rdma-p2p)",
      NULL}},
    /* A key given twice inside train: or infer:, or a parameter twice in a spec, is refused
     * like a top-level key given twice. */
    {{"simulate", "--scenario", "@", "--strategy", "direct", NULL},
     "dup.yaml",
     "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\ntrain:\n"
     "  convention: megatron\n  gpus: 0-7\n  tp: 2\n  tp: 4\ninfer:\n  convention: vllm\n"
     "  gpus: 8-15\n",
     2,
     {"dup.yaml:8:3: train.tp: field given twice", NULL}},
    {{"simulate", "--scenario", "@", "--strategy", "direct", NULL},
     "dup2.yaml",
     "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\ntrain:\n"
     "  convention: megatron\n  gpus: 0-7\ninfer:\n  convention: vllm\n  gpus: 8-15\n"
     "  gpus: 8-11\n",
     2,
     {"dup2.yaml:10:3: infer.gpus: field given twice", NULL}},
    {{"simulate", "--train", "megatron:tp=2,tp=4", "--strategy", "direct", NULL},
     NULL,
     NULL,
     2,
     {"--train: \"megatron:tp=2,tp=4\": tp given twice", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", "--model", "llama-3.1-8b", NULL},
     "m.csv",
     "src,dst,bytes\n0,1,100\n",
     2,
     {"--model does not apply with --messages", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", "--train", "megatron:tp=2", NULL},
     "m.csv",
     "src,dst,bytes\n0,1,100\n",
     2,
     {"--train does not apply with --messages", NULL}},
    /* An option given twice is refused, not read as its last value (run kept the second
     * --fault and dropped the first), in every command and in both spellings. */
    {{"run", "--fault", "drop:0", "--fault", "delay:1:1ms", NULL},
     NULL,
     NULL,
     2,
     {"--fault given twice: give it once (a repeated option would keep only its last value)",
      NULL}},
    {{"simulate", "-f", "csv", "--strategy", "direct", "-f", "json", NULL},
     NULL,
     NULL,
     2,
     {"reshard simulate: -f given twice", NULL}},
    {{"simulate", "--nodes=2", "--nodes", "4", NULL}, NULL, NULL, 2, {"--nodes given twice", NULL}},
    {{"topology", "show", "dgx-h100", "--nodes", "2", "--nodes", "3", NULL},
     NULL,
     NULL,
     2,
     {"reshard topology: --nodes given twice", NULL}},
    {{"compare", "a.csv", "b.csv", "--format", "csv", "--format=json", NULL},
     NULL,
     NULL,
     2,
     {"reshard compare: --format given twice", NULL}},
    /* layout's model flags with a single tensor are refused (they were ignored). */
    {{"layout", "--shape", "8x8", "--mesh", "2", "--placements", "S(0)", "--tensor", "w", NULL},
     NULL,
     NULL,
     2,
     {"--tensor applies to a model tensor: give it with --model", NULL}},
    {{"layout", "--shape", "8x8", "--mesh", "2", "--placements", "S(0)", "--gpus", "4-5", NULL},
     NULL,
     NULL,
     2,
     {"--gpus applies to a model tensor", NULL}},
    {{"layout", "--shape", "8x8", "--mesh", "2", "--placements", "S(0)", "--mtp", NULL},
     NULL,
     NULL,
     2,
     {"--mtp applies to a model tensor", NULL}},
    /* Every command's option errors name the option. */
    {{"simulate", "--format", "xml", NULL},
     NULL,
     NULL,
     2,
     {"--format: unknown format \"xml\"", NULL}},
    {{"run", "--format", "xml", NULL}, NULL, NULL, 2, {"--format: unknown format \"xml\"", NULL}},
    {{"models", "--format", "xml", NULL},
     NULL,
     NULL,
     2,
     {"--format: unknown format \"xml\"", NULL}},
    {{"topology", "list", "--format", "xml", NULL},
     NULL,
     NULL,
     2,
     {"--format: unknown format \"xml\"", NULL}},
    /* calibrate writes table or json: its message lists those and no other. */
    {{"calibrate", "--format", "xml", NULL},
     NULL,
     NULL,
     2,
     {"--format: unknown format \"xml\" (known: table, json)", NULL}},
    {{"calibrate", "--format", "csv", NULL},
     NULL,
     NULL,
     2,
     {"--format: unknown format \"csv\" (known: table, json)", NULL}},
    {{"run", "--strategy", "foo", NULL},
     NULL,
     NULL,
     2,
     {"--strategy: unknown strategy \"foo\"", NULL}},
    {{"run", "--transport", "foo", NULL},
     NULL,
     NULL,
     2,
     {"--transport: unknown transport \"foo\"", NULL}},
    {{"calibrate", "--transport", "foo", NULL},
     NULL,
     NULL,
     2,
     {"--transport: unknown transport \"foo\"", NULL}},
    {{"simulate", "--messages", "/nonexist/m.csv", "--topology", "dgx-h100", NULL},
     NULL,
     NULL,
     2,
     {"--messages: ", "/nonexist/m.csv", NULL}},
    /* A list with no messages, an empty --sizes and a scenario beside --topology are refused,
     * not simulated or measured as if nothing were wrong. */
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "m.csv",
     "src,dst,bytes\n",
     2,
     {"m.csv: no messages", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", "--scenario", "kimi-k2-h100-fp8",
      NULL},
     "m.csv",
     "src,dst,bytes\n0,1,100\n",
     2,
     {"--scenario does not apply with --messages", NULL}},
    {{"calibrate", "--sizes", "", NULL}, NULL, NULL, 2, {"--sizes: no sizes given", NULL}},
    /* help and version take no extra argument, like every other command. */
    {{"version", "extra", NULL},
     NULL,
     NULL,
     2,
     {"reshard version: unexpected argument \"extra\"", NULL}},
    {{"help", "simulate", "extra", NULL},
     NULL,
     NULL,
     2,
     {"reshard help: unexpected argument \"extra\"", NULL}},
    {{"help", "help", "extra", NULL},
     NULL,
     NULL,
     2,
     {"reshard help: unexpected argument \"extra\"", NULL}},
    /* A side given by its flag is named once ("--train: train: ..." before). */
    {{"simulate", "--train", "megatron:tp=3", NULL},
     NULL,
     NULL,
     2,
     {"reshard simulate: --train: megatron tp=3 ", "does not divide the 256 GPUs", NULL}},
    {{"simulate", "--infer", "vllm:tp=3", NULL},
     NULL,
     NULL,
     2,
     {"reshard simulate: --infer: vllm tp=3: tp = 3 does not divide", NULL}},
    /* --rank names a rank of the layout. */
    {{"layout", "--shape", "8x4", "--mesh", "2", "--placements", "S(0)", "--rank", "-1", NULL},
     NULL,
     NULL,
     2,
     {"--rank -1: must be at least 0", NULL}},
    {{"layout", "--shape", "8x4", "--mesh", "2", "--placements", "S(0)", "--rank", "2", NULL},
     NULL,
     NULL,
     2,
     {"--rank 2: not in the layout, whose ranks are 0-1", NULL}},
    {{"layout", "--model", "llama-3.1-8b", "--train", "megatron:tp=2", "--tensor", "lm_head.weight",
      "--rank", "4", NULL},
     NULL,
     NULL,
     2,
     {"--rank 4: not in the layout, whose ranks are 0-1", NULL}},
    /* An integer too large names the allowed range, not "at least 1". */
    {{"simulate", "--strategy", "direct", "--nodes", "99999999999", NULL},
     NULL,
     NULL,
     2,
     {"--nodes 99999999999: must be an integer from 1 to 262144", NULL}},
    {{"simulate", "--strategy", "direct", "--max-ops-per-group", "99999999999", NULL},
     NULL,
     NULL,
     2,
     {"--max-ops-per-group 99999999999: must be an integer from 1 to 2147483647", NULL}},
    {{"simulate", "--strategy", "direct", "--scale", "99999999999", NULL},
     NULL,
     NULL,
     2,
     {"--scale 99999999999: must be an integer from 1 to 2147483647", NULL}},
    {{"run", "--shape", "8x4", "--runs", "99999999999", NULL},
     NULL,
     NULL,
     2,
     {"--runs 99999999999: must be an integer from 1 to 10000", NULL}},
    {{"run", "--shape", "8x4", "--window", "4294967296", NULL},
     NULL,
     NULL,
     2,
     {"--window 4294967296: must be an integer from 1 to 2147483647", NULL}},
    {{"calibrate", "--ranks", "4294967298", NULL},
     NULL,
     NULL,
     2,
     {"--ranks 4294967298: must be an integer from 2 to 262144", NULL}},
    {{"simulate", "--scenario", "@", "--strategy", "direct", NULL},
     "big.yaml",
     "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\ntrain:\n"
     "  convention: megatron\n  gpus: 0-7\n  tp: 99999999999\ninfer:\n  convention: vllm\n"
     "  gpus: 8-15\n",
     2,
     {"big.yaml:7:7: train.tp", "tp=99999999999 must be an integer from 1 to 16777216", NULL}},
    /* Counts from outside are bounded before anything proportional to them is allocated
     * (these ran for minutes, took gigabytes or aborted in an allocation). */
    {{"run", "--shape", "8x4", "--src-mesh", "2", "--src-placements", "S(0)", "--src-ranks",
      "0-2000000000", "--dst-mesh", "2", "--dst-placements", "S(0)", NULL},
     NULL,
     NULL,
     2,
     {"--src-ranks: ranks \"0-2000000000\": names a rank, above the limit of 262144 GPUs "
      "(ranks 0-262143)",
      NULL}},
    {{"simulate", "--strategy", "direct", "--train-gpus", "0-100,0-262143", NULL},
     NULL,
     NULL,
     2,
     {"--train-gpus: ranks \"0-100,0-262143\": names more ranks, above the limit of 262144 GPUs",
      NULL}},
    {{"run", "--shape", "8x4", "--src-mesh", "1073741824", "--src-placements", "S(0)", "--dst-mesh",
      "2", "--dst-placements", "S(0)", NULL},
     NULL,
     NULL,
     2,
     {"--src-mesh/--src-ranks: mesh has more than 262144 positions, the limit (RS_MAX_RANKS)",
      NULL}},
    {{"layout", "--shape", "8x4", "--mesh", "1024x1024", "--placements", "S(0),R", NULL},
     NULL,
     NULL,
     2,
     {"mesh has more than 262144 positions, the limit (RS_MAX_RANKS)", NULL}},
    {{"simulate", "--strategy", "direct", "--nodes", "1000000", NULL},
     NULL,
     NULL,
     2,
     {"--nodes 1000000: must be an integer from 1 to 262144", NULL}},
    /* Too many GPUs from --nodes blamed the topology file's gpus_per_node line. */
    {{"simulate", "--strategy", "direct", "--nodes", "40000", NULL},
     NULL,
     NULL,
     2,
     {"reshard simulate: --nodes: 40000 nodes of 8 GPUs is above the limit of 262144 GPUs "
      "(RS_MAX_RANKS): at most 32768 nodes",
      NULL}},
    {{"plan", "--model", "llama-3.1-8b", "--train", "megatron:tp=16777216,pp=16777216", "--infer",
      "vllm:tp=2", NULL},
     NULL,
     NULL,
     2,
     {"--train: megatron tp=16777216 pp=16777216: 281474976710656 ranks from GPU 0, above the "
      "limit of 262144 GPUs",
      NULL}},
    /* A folder given as a file says so (it read "not found"). */
    {{"simulate", "--scenario", "/", NULL},
     NULL,
     NULL,
     2,
     {"reshard simulate: scenario file \"/\": is a folder, not a file", NULL}},
    {{"simulate", "--messages", "/", "--topology", "dgx-h100", NULL},
     NULL,
     NULL,
     2,
     {"reshard simulate: --messages: /: is a folder, not a file", NULL}},
    /* A binary messages file is refused at its first bad byte, echoing none of it. */
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "bin.csv",
     "src,dst,bytes\n0,1,\x01\xff\xfe\n",
     2,
     {"bin.csv:2:5: byte 0x01 is not text: a messages file is CSV text (UTF-8)", NULL}},
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "bin.csv",
     "src,dst,b\xc3\n0,1,2\n",
     2,
     {"bin.csv:1:10: byte 0xc3 is not text", NULL}},
    /* A field too long to quote whole is cut. */
    {{"simulate", "--messages", "@", "--topology", "dgx-h100", NULL},
     "long.csv",
     "src,dst,bytes\n0,1,0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab\n",
     2,
     {"long.csv:2: column bytes: \"0123456789abcdef0123456789abcdef01234567…\" is not", NULL}},
    /* --timeout nan would never fire; an injected fault without validation would pass. */
    {{"run", "--shape", "8x4", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "S(1)", "--timeout", "nan", NULL},
     NULL,
     NULL,
     2,
     {"--timeout nan: must be a finite number of seconds", NULL}},
    {{"run", "--shape", "8x4", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "S(1)", "--timeout", "inf", NULL},
     NULL,
     NULL,
     2,
     {"--timeout inf: must be a finite number of seconds", NULL}},
    {{"run", "--shape", "8x4", "--src-mesh", "2", "--src-placements", "S(0)", "--dst-mesh", "2",
      "--dst-placements", "S(1)", "--corrupt-byte", "1:0", "--no-validate", NULL},
     NULL,
     NULL,
     2,
     {"--corrupt-byte: an injected fault needs validation; drop --no-validate", NULL}},
};

static void
test_cli_case(gconstpointer data)
{
    const CliCase *c = data;
    g_autofree char *path = NULL;
    const char *args[18];
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

/* Under a UTF-8 locale GLib's messages keep their quotes (the C locale turns them into
 * '?'), and numbers keep '.' as the decimal separator. */
static void
test_locale(void)
{
    const char *env[] = {"LANG=C.UTF-8", "LC_ALL=", "LC_MESSAGES=", "LC_CTYPE=", NULL};
    const char *args[] = {"simulate", "--messages", "nonexist.csv", "--topology", "dgx-h100",
                          NULL};
    RunResult r = run_reshard_env(args, env);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "\u201cnonexist.csv\u201d");
    run_result_clear(&r);
    const char *args2[] = {"topology", "show", "dgx-h100", "--nodes", "2", "--links", "--format",
                           "csv", NULL};
    r = run_reshard_env(args2, env);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "\n0,gpu0.nvlink-egress,nvlink-egress,4.5e+11,0.82,3.69e+11,1.7e-06,0\n");
    run_result_clear(&r);
}

/* report's help listed --messages and --plot, which report refuses: they are hidden from
 * it (and still refused), and simulate's help keeps them. */
static void
test_report_help_options(void)
{
    const char *report[] = {"report", "--help-all", NULL};
    RunResult r = run_reshard(report);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_assert_null(strstr(r.out, "--messages="));
    g_assert_null(strstr(r.out, "--plot="));
    assert_contains(r.out, "--trace=");
    run_result_clear(&r);
    const char *simulate[] = {"simulate", "--help-all", NULL};
    r = run_reshard(simulate);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "--messages=FILE.csv");
    assert_contains(r.out, "--plot=PREFIX");
    run_result_clear(&r);
    const char *refused[] = {"report", "--plot", "p", "-q", NULL};
    r = run_reshard(refused);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "--plot does not apply to a report");
    run_result_clear(&r);
}

/* Progress counts the network messages the tables count, local copies beside them, and names
 * the scenario with the flags that replaced parts of it (it once named the default scenario
 * alone while resolving a run built from flags). */
static void
test_progress_messages(void)
{
    const char *args[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                          "megatron:tp=2", "--train-gpus", "0-7", "--infer", "vllm:tp=4",
                          "--infer-gpus", "8-15", "--strategy", "gather-broadcast", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.err, "simulating gather-broadcast: 34 network messages (43 with local "
                           "copies)");
    assert_contains(r.err, "resolving layouts of deepseek-v3-h100 (with --model, --nodes, "
                           "--train, --train-gpus, --infer, --infer-gpus from the command "
                           "line) ...");
    run_result_clear(&r);
}

/* The help of --strategy lists what each command accepts. */
static void
test_help_strategies(void)
{
    const char *const commands[] = {"plan", "run", "simulate"};
    const char *const lists[] = {
        "gather-broadcast, direct, node-aware, hierarchical, nccl-broadcast, m2n, m2n-direct, "
        "checkpoint-engine or rdma-p2p (default direct)",
        "gather-broadcast, direct, node-aware, hierarchical, nccl-broadcast, m2n, m2n-direct, "
        "checkpoint-engine or rdma-p2p (default direct)",
        "gather-broadcast, direct, node-aware, hierarchical, nccl-broadcast, m2n, m2n-direct, "
        "checkpoint-engine, rdma-p2p, auto, all or list (default: ours, nccl-broadcast and "
        "auto; list: what each is)"};
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++) {
        const char *args[] = {"help", commands[i], NULL};
        RunResult r = run_reshard(args);
        g_assert_cmpint(r.exit_code, ==, 0);
        assert_contains(r.out, lists[i]);
        run_result_clear(&r);
    }
}

/* Inside one NVLink domain hierarchical sends each box straight to the rank needing it: it
 * staged rank 1's rows [4:8, 0:2] at rank 0 (a GPU of the sender's own domain that needs
 * none of it) and forwarded them to rank 2, 160 bytes against direct's 128. */
static void
test_hierarchical_one_domain(void)
{
    const char *args[] = {"plan",       "--shape",      "8x4",        "--src-mesh",
                          "2",          "--src-placements", "S(0)",   "--dst-mesh",
                          "2",          "--dst-placements", "S(1)",   "--dst-ranks",
                          "2-3",        "--strategy",   "hierarchical", "--format",
                          "json",       NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_json(parser, r.out);
    g_assert_cmpint(json_object_get_int_member(root, "bytes_moved"), ==, 128);
    JsonArray *transfers = json_object_get_array_member(root, "transfers");
    g_assert_cmpuint(json_array_get_length(transfers), ==, 4);
    for (guint i = 0; i < 4; i++) {
        JsonObject *t = json_array_get_object_element(transfers, i);
        /* sources 0 and 1 send, destinations 2 and 3 receive: no rank forwards */
        g_assert_cmpint(json_object_get_int_member(t, "src"), <=, 1);
        g_assert_cmpint(json_object_get_int_member(t, "dst"), >=, 2);
        g_assert_cmpint(json_object_get_int_member(t, "bytes"), ==, 32);
    }
    run_result_clear(&r);
}

/* run refuses an MXFP4 refit before it plans or starts (it printed "planning direct" and
 * "running 2 transfers" first). */
static void
test_run_mxfp4_refused_first(void)
{
    const char *args[] = {"run", "--shape", "7x64", "--src-mesh", "1", "--src-placements", "R",
                          "--src-ranks", "0", "--dst-mesh", "1", "--dst-placements", "R",
                          "--dst-ranks", "1", "--dst-dtype", "mxfp4", NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 2);
    assert_contains(r.err, "\"tensor\" is mxfp4 on the wire: the executor moves whole-byte "
                           "elements");
    g_assert_null(strstr(r.err, "planning"));
    g_assert_null(strstr(r.err, "running"));
    g_assert_cmpstr(r.out, ==, "");
    run_result_clear(&r);
}

/* Every name under Commands in the usage has help: help and version included. */
static void
test_help_builtins(void)
{
    const char *args[] = {"help", "help", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "Usage: reshard COMMAND");
    run_result_clear(&r);
    const char *args2[] = {"help", "version", NULL};
    r = run_reshard(args2);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "reshard version");
    run_result_clear(&r);
    /* COMMAND --help works for these two as for every command (both exited 2). */
    const char *args3[] = {"version", "--help", NULL};
    r = run_reshard(args3);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "Usage:\n  reshard version\n");
    run_result_clear(&r);
    const char *args4[] = {"help", "--help", NULL};
    r = run_reshard(args4);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "Usage: reshard COMMAND");
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

/* Runs reshard and parses its JSON output. */
static JsonNode *
run_json(const char *const *args)
{
    RunResult r = run_reshard(args);
    if (r.exit_code != 0)
        g_error("exit %d: %s", r.exit_code, r.err);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(json_parser_load_from_data(parser, r.out, -1, &error));
    run_result_clear(&r);
    return json_node_copy(json_parser_get_root(parser));
}

/* "lo:hi" per dim of a JSON box, with ":step" where not 1, and "@offset" when present. */
static char *
json_box(JsonObject *box)
{
    JsonArray *lo = json_object_get_array_member(box, "lo");
    JsonArray *hi = json_object_get_array_member(box, "hi");
    JsonArray *step = json_object_get_array_member(box, "step");
    GString *s = g_string_new("[");
    for (guint d = 0; d < json_array_get_length(lo); d++) {
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, d ? ", " : "",
                               json_array_get_int_element(lo, d),
                               json_array_get_int_element(hi, d));
        if (json_array_get_int_element(step, d) != 1)
            g_string_append_printf(s, ":%" G_GINT64_FORMAT, json_array_get_int_element(step, d));
    }
    g_string_append_c(s, ']');
    if (json_object_has_member(box, "offset_elems"))
        g_string_append_printf(s, "@%" G_GINT64_FORMAT,
                               json_object_get_int_member(box, "offset_elems"));
    return g_string_free(s, FALSE);
}

/* "rank:box@offset;…" of a `reshard layout --format json` answer. */
static char *
layout_summary(JsonNode *root)
{
    JsonArray *ranks = json_object_get_array_member(json_node_get_object(root), "ranks");
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(ranks); i++) {
        JsonObject *rank = json_array_get_object_element(ranks, i);
        JsonArray *boxes = json_object_get_array_member(rank, "boxes");
        for (guint b = 0; b < json_array_get_length(boxes); b++) {
            g_autofree char *box = json_box(json_array_get_object_element(boxes, b));
            g_string_append_printf(s, "%s%" G_GINT64_FORMAT ":%s", s->len ? ";" : "",
                                   json_object_get_int_member(rank, "rank"), box);
        }
    }
    return g_string_free(s, FALSE);
}

typedef struct {
    const char *name;
    const char *const args[18];
    const char *expected;
} JsonCase;

static const JsonCase layout_cases[] = {
    /* C05: (0,0) row 0, (0,1) row 2, (1,0) row 1, (1,1) row 3. */
    {"C05", {"layout", "--shape", "4x1", "--mesh", "2x2", "--placements",
             "_StridedShard(dim=0, split_factor=2),S(0)", "--format", "json", NULL},
     "0:[0:1, 0:1]@0;1:[2:3, 0:1]@0;2:[1:2, 0:1]@0;3:[3:4, 0:1]@0"},
    /* C06: rank 5 holds Q rows 80..95, K row 133, V row 141. */
    {"C06", {"layout", "--shape", "144x4", "--dtype", "bf16", "--mesh", "8", "--placements", "S(0)",
             "--fused", "qkv:128,8", "--rank", "5", "--format", "json", NULL},
     "5:[80:96, 0:4]@0;5:[133:134, 0:4]@64;5:[141:142, 0:4]@68"},
    /* C07: rank 0 rows 0,1,4,5; rank 1 rows 2,3,6,7. */
    {"C07", {"layout", "--shape", "8x2", "--mesh", "2", "--placements", "S(0)", "--fused",
             "gate-up", "--format", "json", NULL},
     "0:[0:2, 0:2]@0;0:[4:6, 0:2]@4;1:[2:4, 0:2]@0;1:[6:8, 0:2]@4"},
    /* gpt-oss interleaved gate/up [8 rows] as [gate; up] over 2: strided boxes. */
    {"interleaved", {"layout", "--shape", "8x3", "--mesh", "2", "--placements", "S(0)", "--fused",
                     "interleaved", "--rank", "1", "--format", "json", NULL},
     "1:[4:7:2, 0:3]@0;1:[5:8:2, 0:3]@6"},
    /* vLLM vocabulary padding: 1000 rows padded to 1024, 256 per rank. */
    {"pad", {"layout", "--shape", "1000x2", "--mesh", "4", "--placements", "S(0)", "--pad", "64",
             "--rank", "3", "--format", "json", NULL},
     "3:[768:1000, 0:2]@0"},
    /* A model's fused buffer: vLLM qkv_proj of Llama-3.1-8B on tp rank 1 of 4. */
    {"model-fused-buffer", {"layout", "--model", "llama-3.1-8b", "--infer", "vllm:tp=4", "--gpus",
                            "8-11", "--tensor", "model.layers.0.self_attn.qkv_proj.weight",
                            "--rank", "9", "--format", "json", NULL},
     "9:[1024:2048, 0:4096]@0;9:[256:512, 0:4096]@4194304;9:[256:512, 0:4096]@5242880"},
};

static void
test_layout_json(gconstpointer data)
{
    const JsonCase *c = data;
    g_autoptr(JsonNode) root = run_json(c->args);
    g_autofree char *got = layout_summary(root);
    g_assert_cmpstr(got, ==, c->expected);
}

/* The box and tensor names of layout JSON: every box names its tensor. */
static void
test_layout_json_tensor_names(void)
{
    const char *args[] = {"layout", "--model", "llama-3.1-8b", "--train", "megatron:tp=2,pp=2",
                          "--tensor", "model.layers.16.mlp.linear_fc1.weight", "--rank", "2",
                          "--format", "json", NULL};
    g_autoptr(JsonNode) root = run_json(args);
    JsonArray *ranks = json_object_get_array_member(json_node_get_object(root), "ranks");
    g_assert_cmpuint(json_array_get_length(ranks), ==, 1);
    JsonObject *rank = json_array_get_object_element(ranks, 0);
    g_assert_cmpint(json_object_get_int_member(rank, "rank"), ==, 2);
    JsonArray *boxes = json_object_get_array_member(rank, "boxes");
    g_assert_cmpuint(json_array_get_length(boxes), ==, 2);
    JsonObject *gate = json_array_get_object_element(boxes, 0);
    JsonObject *up_box = json_array_get_object_element(boxes, 1);
    g_assert_cmpstr(json_object_get_string_member(gate, "tensor"), ==,
                    "model.layers.16.mlp.gate_proj.weight");
    g_assert_cmpstr(json_object_get_string_member(up_box, "tensor"), ==,
                    "model.layers.16.mlp.up_proj.weight");
    g_autofree char *up = json_box(json_array_get_object_element(boxes, 1));
    g_assert_cmpstr(up, ==, "[0:7168, 0:4096]@29360128");
}

/* C16 through the command: [8,4] f32 to bf16, 64 bytes; and C05's gather. */
static void
test_plan_json(void)
{
    const char *args[] = {"plan", "--shape", "8x4", "--dtype", "f32", "--dst-dtype", "bf16",
                          "--src-mesh", "1", "--src-placements", "R", "--src-ranks", "0",
                          "--dst-mesh", "1", "--dst-placements", "R", "--dst-ranks", "1",
                          "--format", "json", NULL};
    g_autoptr(JsonNode) root = run_json(args);
    JsonObject *o = json_node_get_object(root);
    g_assert_cmpint(json_object_get_int_member(o, "bytes_moved"), ==, 64);
    g_assert_cmpint(json_object_get_int_member(o, "local_bytes"), ==, 0);
    JsonArray *transfers = json_object_get_array_member(o, "transfers");
    g_assert_cmpuint(json_array_get_length(transfers), ==, 1);
    JsonObject *t = json_array_get_object_element(transfers, 0);
    g_assert_cmpint(json_object_get_int_member(t, "src"), ==, 0);
    g_assert_cmpint(json_object_get_int_member(t, "dst"), ==, 1);
    g_assert_cmpint(json_object_get_int_member(t, "bytes"), ==, 64);
    g_autofree char *box = json_box(t);
    g_assert_cmpstr(box, ==, "[0:8, 0:4]");

    const char *c05[] = {"plan", "--shape", "4x1", "--src-mesh", "2x2", "--src-placements",
                         "SS(0,2),S(0)", "--dst-mesh", "2x2", "--dst-placements", "R,R",
                         "--format", "json", "--check", NULL};
    g_autoptr(JsonNode) gather = run_json(c05);
    o = json_node_get_object(gather);
    g_assert_cmpint(json_object_get_int_member(o, "bytes_moved"), ==, 48);
    g_assert_cmpint(json_object_get_int_member(o, "local_bytes"), ==, 16);
    transfers = json_object_get_array_member(o, "transfers");
    g_assert_cmpuint(json_array_get_length(transfers), ==, 16);
    /* Rank 1 (dp 0, tp 1) sends row 2 to rank 2. */
    gboolean found = FALSE;
    for (guint i = 0; i < json_array_get_length(transfers); i++) {
        JsonObject *x = json_array_get_object_element(transfers, i);
        if (json_object_get_int_member(x, "src") == 1 &&
            json_object_get_int_member(x, "dst") == 2) {
            g_autofree char *b = json_box(x);
            g_assert_cmpstr(b, ==, "[2:3, 0:1]");
            found = TRUE;
        }
    }
    g_assert_true(found);
}

/* A model refit between conventions, checked (exit 0) and filtered to one fused buffer. */
static void
test_plan_model(void)
{
    const char *args[] = {"plan", "--model", "llama-3.1-8b", "--train", "megatron:tp=2,pp=2",
                          "--infer", "vllm:tp=4", "--tensor",
                          "model.layers.0.self_attn.qkv_proj.weight", "--check", "--format",
                          "json", NULL};
    g_autoptr(JsonNode) root = run_json(args);
    JsonObject *o = json_node_get_object(root);
    /* q, k, v of layer 0 (6144 x 4096 bf16) all cross from GPUs 0-3 to GPUs 4-7. */
    g_assert_cmpint(json_object_get_int_member(o, "bytes_moved"), ==, 6144ll * 4096 * 2);
    g_assert_cmpint(json_object_get_int_member(o, "local_bytes"), ==, 0);
}

/* A scenario file with list and switch parameters. */
static void
test_scenario_params(void)
{
    g_autofree char *path = write_temp(
        "typed.yaml", "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\n"
                      "train: {convention: megatron, gpus: 0-7, tp: 2, pp: 2,\n"
                      "        pp-layers: [12, 20]}\n"
                      "infer: {convention: vllm, gpus: 8-15, tp: 4, ep: true}\n");
    const char *args[] = {"simulate", "--scenario", path, "--check", "--format", "json", "-q",
                          NULL};
    g_autoptr(JsonNode) root = run_json(args);
    JsonObject *o = json_node_get_object(root);
    assert_contains(json_object_get_string_member(json_object_get_object_member(o, "train"),
                                                  "layout"),
                    "pp-layers=12,20");
    assert_contains(json_object_get_string_member(json_object_get_object_member(o, "infer"),
                                                  "layout"),
                    "vllm tp=4 ep replicas=2");
    g_autofree char *bad = write_temp(
        "bad-list.yaml", "model: llama-3.1-8b\ntopology: dgx-h100\nnodes: 2\n"
                         "train: {convention: megatron, gpus: 0-7, tp: 2, pp: [2]}\n"
                         "infer: {convention: vllm, gpus: 8-15, tp: 4}\n");
    const char *bad_args[] = {"simulate", "--scenario", bad, "-q", NULL};
    RunResult r = run_reshard(bad_args);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "bad-list.yaml:4:");
    assert_contains(r.err, "train.pp");
    run_result_clear(&r);
}

/* Every shipped model with its exact total, stored bytes, and the published check. */
static void
test_models_zoo(void)
{
    const char *args[] = {"models", "--format", "csv", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    const char *rows[] = {
        "deepseek-v3,DeepSeek-V3,deepseek_v3,61,1025,671026419200,",
        "glm-4.5,GLM-4.5,glm4_moe,92,",
        "gpt-oss-120b,gpt-oss-120b,gpt_oss,36,615,116829156672,",
        "gpt-oss-20b,gpt-oss-20b,gpt_oss,24,411,20914757184,",
        "kimi-k2,Kimi-K2,deepseek_v3,61,",
        "kimi-k3,Kimi-K3,kimi_k3,93,",
        "llama-3.1-405b,Llama-3.1-405B,llama,126,1137,405853388800,",
        "llama-3.1-70b,Llama-3.1-70B,llama,80,723,70553706496,",
        "mixtral-8x22b,Mixtral-8x22B,mixtral,56,563,140620634112,",
        "qwen3-235b-a22b,Qwen3-235B-A22B,qwen3_moe,94,1131,235093634560,",
        "qwen3-30b-a3b,Qwen3-30B-A3B,qwen3_moe,48,579,30532122624,",
        "qwen3-32b,Qwen3-32B,qwen3,64,707,32762123264,",
        "qwen3-8b,Qwen3-8B,qwen3,36,399,8190735360,",
        "qwen3.8-2.4t-a95b,Qwen3.8-2.4T-A95B,qwen3_next,92,",
        /* Exact figures: "exact"; rounded ones: the distance; then the stored bytes. */
        ",352797829024,exact,705595686528,f32:56960;bf16:705595629568\n",
        ",1026408232448,exact,1029173249888,f32:250072928;bf16:5029935104;"
        "fp8-e4m3:1023893241856\n",
        ",2779484476000,",
        ",-0.73% of 2.8T,1559965606912,f32:44489728;bf16:113465051136;u8:1446456066048\n",
        ",2419804697984,",
        ",+0.83% of 2.4T,4839609395968,bf16:4839609395968\n",
        ",exact,13761264768,bf16:3608919168;u8:10152345600\n",
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++)
        assert_contains(r.out, rows[i]);
    run_result_clear(&r);

    const char *table[] = {"models", NULL};
    r = run_reshard(table);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "w/o embeddings");
    assert_contains(r.out, "2,779,484,476,000");
    assert_contains(r.out, "w/o embeddings: less the input token embeddings");
    run_result_clear(&r);
}

static void
test_models_tensors(void)
{
    const char *args[] = {"models", "--model", "deepseek-v3", "--tensors", "--stored", "--layer",
                          "3", "--format", "csv", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "name,shape,dtype,role,layer,heads,params,bytes\n");
    assert_contains(r.out, "model.layers.3.mlp.experts.down_proj.weight_scale_inv,256x56x16,f32,"
                           "expert-row,3,,0,917504\n");
    assert_contains(r.out, "model.layers.3.self_attn.q_b_proj.weight,24576x1536,fp8-e4m3,"
                           "column-parallel,3,128,37748736,37748736\n");
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 1 + 28 + 1);
    run_result_clear(&r);
    const char *rules[] = {"models", "--rules", NULL};
    r = run_reshard(rules);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "-> expert-row");
    run_result_clear(&r);
    const char *bad[] = {"models", "--tensors", NULL};
    r = run_reshard(bad);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "--tensors, --stored and --layer need --model");
    run_result_clear(&r);
}

/* Writes a safetensors file: length, @header, @data_bytes zero bytes. */
static void
write_safetensors_file(const char *path, const char *header, gsize data_bytes)
{
    gsize n = strlen(header);
    g_autofree char *bytes = g_malloc0(8 + n + data_bytes);
    for (guint i = 0; i < 8; i++)
        bytes[i] = (char)((guint64)n >> (8 * i));
    memcpy(bytes + 8, header, n);
    g_assert_true(g_file_set_contents(path, bytes, (gssize)(8 + n + data_bytes), NULL));
}

/* `--model` takes a config.json and a safetensors checkpoint; bad ones exit 2 naming the
 * file (and for a header, the byte offset). */
static void
test_model_imports(void)
{
    g_autofree char *config = write_temp("config.json",
                                         "{\"model_type\": \"llama\", \"hidden_size\": 64,\n"
                                         " \"intermediate_size\": 128, \"num_hidden_layers\": 2,\n"
                                         " \"num_attention_heads\": 4, \"num_key_value_heads\": 2,\n"
                                         " \"vocab_size\": 100, \"tie_word_embeddings\": false}\n");
    const char *models[] = {"models", "--model", config, "--format", "csv", NULL};
    RunResult r = run_reshard(models);
    g_assert_cmpint(r.exit_code, ==, 0);
    /* 2 × 100·64 + 64 + 2 × (2 × 64 + 64·64 + 2 × 32·64 + 64·64 + 3 × 128·64). */
    assert_contains(r.out, ",llama,2,21,86848,86848,bf16,");
    run_result_clear(&r);

    /* A checkpoint of that model, with the config beside it: simulate and check. */
    g_autofree char *dir = g_path_get_dirname(config);
    g_autofree char *ckpt = g_build_filename(dir, "model.safetensors", NULL);
    GString *header = g_string_new("{");
    guint64 offset = 0;
    struct {
        const char *name;
        gint64 rows, cols;
    } tensors[] = {
        {"model.embed_tokens.weight", 100, 64},
        {"model.layers.0.input_layernorm.weight", 64, 0},
        {"model.layers.0.self_attn.q_proj.weight", 64, 64},
        {"model.layers.0.self_attn.k_proj.weight", 32, 64},
        {"model.layers.0.self_attn.v_proj.weight", 32, 64},
        {"model.layers.0.self_attn.o_proj.weight", 64, 64},
        {"model.layers.0.post_attention_layernorm.weight", 64, 0},
        {"model.layers.0.mlp.gate_proj.weight", 128, 64},
        {"model.layers.0.mlp.up_proj.weight", 128, 64},
        {"model.layers.0.mlp.down_proj.weight", 64, 128},
        {"model.norm.weight", 64, 0},
        {"lm_head.weight", 100, 64},
    };
    for (guint i = 0; i < G_N_ELEMENTS(tensors); i++) {
        guint64 bytes = 2 * (guint64)tensors[i].rows * (tensors[i].cols ? tensors[i].cols : 1);
        g_autofree char *shape =
            tensors[i].cols ? g_strdup_printf("%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT,
                                              tensors[i].rows, tensors[i].cols)
                            : g_strdup_printf("%" G_GINT64_FORMAT, tensors[i].rows);
        g_string_append_printf(header,
                               "%s\"%s\": {\"dtype\": \"BF16\", \"shape\": [%s], "
                               "\"data_offsets\": [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]}",
                               i ? ", " : "", tensors[i].name, shape, offset, offset + bytes);
        offset += bytes;
    }
    g_string_append_c(header, '}');
    write_safetensors_file(ckpt, header->str, offset);
    g_string_free(header, TRUE);
    /* The config says 2 layers, the checkpoint holds 1: fine for a refit of what it holds,
     * with a warning. */
    const char *simulate[] = {"simulate", "--model", ckpt, "--nodes", "2", "--train",
                              "megatron:tp=2", "--train-gpus", "0-1", "--infer", "vllm:tp=4",
                              "--infer-gpus", "8-11", "--check", "--format", "json", "-q", NULL};
    r = run_reshard(simulate);
    if (r.exit_code != 0)
        g_error("simulate failed: %s", r.err);
    /* One layer: 2 × 100·64 + 64 + 36,992. */
    assert_contains(r.out, "\"params\" : 49856");
    run_result_clear(&r);
    /* ... and says so: the layer without tensors was silent (a shard read alone looks the
     * same). */
    const char *listed[] = {"models", "--model", ckpt, NULL};
    r = run_reshard(listed);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.err, "num_hidden_layers: 1 of the 2 decoder layers have no tensors in ");
    assert_contains(r.err, "model.safetensors (layer 1): only what the checkpoint holds is refit");
    run_result_clear(&r);

    /* A checkpoint without tensors: 0 layers, 0 parameters, exit 0, before. */
    g_autofree char *empty = g_build_filename(dir, "empty.safetensors", NULL);
    write_safetensors_file(empty, "{\"__metadata__\": {\"format\": \"pt\"}}", 0);
    const char *empty_args[] = {"models", "--model", empty, NULL};
    r = run_reshard(empty_args);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "empty.safetensors: the checkpoint holds no tensors");
    run_result_clear(&r);

    /* A truncated header: exit 2 with the byte offset. */
    g_autofree char *bad = g_build_filename(dir, "bad.safetensors", NULL);
    write_safetensors_file(bad, "{\"t\": {\"dtype\": \"BF16\", \"shape\": [4], "
                                "\"data_offsets\": [0, 8]}}", 4);
    const char *bad_args[] = {"simulate", "--model", bad, "-q", NULL};
    r = run_reshard(bad_args);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    assert_contains(r.err, "bad.safetensors: byte offset 9: tensor \"t\": data_offsets end 8 "
                           "lies beyond the data section of 4 bytes");
    run_result_clear(&r);

    /* An unknown model_type lists the families. */
    g_autofree char *unknown = write_temp("config.json", "{\"model_type\": \"mamba\"}");
    const char *unknown_args[] = {"models", "--model", unknown, NULL};
    r = run_reshard(unknown_args);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "model_type: unknown model_type \"mamba\" (supported families: "
                           "llama, deepseek_v3, qwen3, qwen3_moe, mixtral, gpt_oss, glm4_moe, "
                           "kimi_k3, qwen3_next");
    run_result_clear(&r);
}

/* `stored: true` (or --stored) moves the checkpoint's bytes: DeepSeek-V3 in FP8 with its
 * block scales. */
static void
test_simulate_stored(void)
{
    g_autofree char *path = write_temp("s.yaml",
                                       "model: deepseek-v3\nstored: true\ntopology: dgx-h100\n"
                                       "nodes: 64\ntrain: {convention: megatron, gpus: 0-255, "
                                       "pp: 16, ep: 16}\n"
                                       "infer: {convention: vllm, gpus: 256-511, tp: 16}\n");
    const char *args[] = {"simulate", "--scenario", path, "--strategy", "direct", "--format",
                          "json", "-q", NULL};
    RunResult r = run_reshard(args);
    if (r.exit_code != 0)
        g_error("simulate failed: %s", r.err);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(json_parser_load_from_data(parser, r.out, -1, &error));
    JsonObject *model =
        json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)), "model");
    g_assert_cmpint(json_object_get_int_member(model, "params"), ==, 671026419200);
    g_assert_cmpint(json_object_get_int_member(model, "bytes"), ==, 673150611808);
    run_result_clear(&r);
}

/* A total that misses its published figure is a failed check: exit 3. */
static void
test_models_mismatch(void)
{
    g_autofree char *path = write_temp("m.yaml",
                                       "name: Claims-8.3B\nfamily: llama\n"
                                       "published_params: 8.3B\nhidden_size: 4096\n"
                                       "intermediate_size: 14336\nnum_hidden_layers: 32\n"
                                       "num_attention_heads: 32\nnum_key_value_heads: 8\n"
                                       "vocab_size: 128256\n");
    const char *args[] = {"models", "--model", path, NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 3);
    assert_contains(r.out, "MISMATCH -3.25% of 8.3B");
    assert_contains(r.err, "Claims-8.3B: generated 8030261248 parameters, -3.25% from the "
                           "published rounded figure 8300000000 (more than 1%)");
    run_result_clear(&r);
}

/* A model whose MLP share overflows 64 bits is bad input for every command that loads it
 * (exit 2, the field and file named), not a wrapped parameter count or an abort. */
static void
test_model_overflow(void)
{
    g_autofree char *path = write_temp(
        "ov2.yaml", "name: ov2\nfamily: llama\nhidden_size: 1048576\n"
                    "intermediate_size: 1099511627776\nnum_hidden_layers: 32\n"
                    "num_attention_heads: 32\nnum_key_value_heads: 8\nhead_dim: 128\n"
                    "vocab_size: 128256\n");
    const char *models[] = {"models", "--model", path, NULL};
    const char *plan[] = {"plan", "--model", path, "--train", "megatron:tp=2,pp=2", "--infer",
                          "vllm:tp=4", "--tensor", "model.layers.0.mlp.up_proj.weight", NULL};
    const char *const *cmds[] = {models, plan};
    for (guint i = 0; i < G_N_ELEMENTS(cmds); i++) {
        RunResult r = run_reshard(cmds[i]);
        g_assert_cmpint(r.exit_code, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        assert_contains(r.err, "ov2.yaml:4:20: num_hidden_layers x intermediate_size x "
                               "hidden_size overflows");
        run_result_clear(&r);
    }
}

/* An output path whose folder is missing is a usage error of every command that writes
 * files, found before any work: exit 2 naming the option and path, and no file written
 * (before, simulate wrote the first strategy's trace and run and calibrate exited 1). */
static void
test_output_paths(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *trace = g_build_filename(dir, "tr.csv", NULL);
    g_autofree char *missing = g_build_filename(dir, "nonexist", "x.csv", NULL);
    const char *simulate[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                              "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer",
                              "vllm:tp=4", "--infer-gpus", "8-15", "--trace", trace,
                              "--link-stats", missing, "-q", NULL};
    const char *run[] = {"run", "--shape", "8x8", "--trace", missing, "-q", NULL};
    const char *calibrate[] = {"calibrate", "--output", missing, "-q", NULL};
    const char *const *cmds[] = {simulate, run, calibrate};
    const char *options[] = {"--link-stats", "--trace", "--output"};
    for (guint i = 0; i < G_N_ELEMENTS(cmds); i++) {
        RunResult r = run_reshard(cmds[i]);
        g_assert_cmpint(r.exit_code, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        g_autofree char *msg = g_strdup_printf("%s %s: folder %s/nonexist does not exist",
                                               options[i], missing, dir);
        assert_contains(r.err, msg);
        run_result_clear(&r);
    }
    /* Nothing of the simulation was written: not the plain name, not any strategy's. */
    g_autoptr(GDir) d = g_dir_open(dir, 0, &error);
    g_assert_no_error(error);
    g_assert_null(g_dir_read_name(d));
}

/* Two outputs naming one file are a usage error found before any work (the link stats used
 * to overwrite the trace), for one strategy and for several (FILE-STRATEGY.csv each). */
static void
test_same_output_twice(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *same = g_build_filename(dir, "same.csv", NULL);
    g_autofree char *dotted = g_build_filename(dir, ".", "same.csv", NULL);
    const char *strategies[] = {"direct", "all"};
    for (guint i = 0; i < G_N_ELEMENTS(strategies); i++) {
        const char *args[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                              "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer",
                              "vllm:tp=4", "--infer-gpus", "8-15", "--strategy", strategies[i],
                              "--trace", same, "--link-stats", dotted, "-q", NULL};
        RunResult r = run_reshard(args);
        g_assert_cmpint(r.exit_code, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        g_autofree char *msg = g_strdup_printf(
            "reshard simulate: --link-stats %s: the same file as --trace %s; give each output "
            "its own path\n",
            dotted, same);
        g_assert_cmpstr(r.err, ==, msg);
        run_result_clear(&r);
    }
    g_autoptr(GDir) d = g_dir_open(dir, 0, &error);
    g_assert_no_error(error);
    g_assert_null(g_dir_read_name(d));
}

/* Outputs whose derived files collide are found before any work too: a trace named as one
 * of --plot's data files (PREFIX-links.dat), link stats or (reshard run) a timeline named
 * as a trace's metadata sidecar (PATH.meta). Each used to overwrite the other. */
static void
test_derived_output_collisions(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *dat = g_build_filename(dir, "p-links.dat", NULL);
    g_autofree char *prefix = g_build_filename(dir, "p", NULL);
    g_autofree char *csv = g_build_filename(dir, "a.csv", NULL);
    g_autofree char *meta = g_build_filename(dir, "a.csv.meta", NULL);
    const char *pairs[][4] = {{"--trace", dat, "--plot", prefix},
                              {"--trace", csv, "--link-stats", meta}};
    g_autofree char *want0 = g_strdup_printf(
        "reshard simulate: --plot %s: the same file as --trace %s; give each output its own "
        "path\n",
        dat, dat);
    g_autofree char *want1 = g_strdup_printf(
        "reshard simulate: --link-stats %s: the same file as --trace (its metadata sidecar) %s; "
        "give each output its own path\n",
        meta, meta);
    const char *want[] = {want0, want1};
    for (guint i = 0; i < G_N_ELEMENTS(pairs); i++) {
        const char *args[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                              "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer",
                              "vllm:tp=4", "--infer-gpus", "8-15", "--strategy", "direct",
                              pairs[i][0], pairs[i][1], pairs[i][2], pairs[i][3], "-q", NULL};
        RunResult r = run_reshard(args);
        g_assert_cmpint(r.exit_code, ==, 2);
        g_assert_cmpstr(r.out, ==, "");
        g_assert_cmpstr(r.err, ==, want[i]);
        run_result_clear(&r);
    }
    /* Through a symbolic link (to the folder, or to the file), the same file is caught; so
     * is the report's --output, and a plot file that is a folder. */
    g_autofree char *here = g_build_filename(dir, "here", NULL);
    g_assert_cmpint(symlink(".", here), ==, 0);
    g_autofree char *via_here = g_build_filename(dir, "here", "a.csv", NULL);
    g_autofree char *b = g_build_filename(dir, "b.csv", NULL);
    g_autofree char *link = g_build_filename(dir, "l.csv", NULL);
    g_assert_true(g_file_set_contents(b, "x\n", -1, NULL));
    g_assert_cmpint(symlink("b.csv", link), ==, 0);
    g_autofree char *html = g_build_filename(dir, "r.html", NULL);
    g_autofree char *folder = g_build_filename(dir, "p-links.svg", NULL);
    g_assert_cmpint(g_mkdir(folder, 0700), ==, 0);
    const char *more[][5] = {{"simulate", "--trace", csv, "--link-stats", via_here},
                             {"simulate", "--trace", b, "--link-stats", link},
                             {"report", "--output", html, "--trace", html},
                             {"simulate", "--plot", prefix, NULL, NULL},
                             {"simulate", "--plot", "", NULL, NULL}};
    g_autofree char *want_more0 = g_strdup_printf(
        "reshard simulate: --link-stats %s: the same file as --trace %s; give each output its "
        "own path\n",
        via_here, csv);
    g_autofree char *want_more1 = g_strdup_printf(
        "reshard simulate: --link-stats %s: the same file as --trace %s; give each output its "
        "own path\n",
        link, b);
    g_autofree char *want_more2 = g_strdup_printf(
        "reshard report: --output %s: the same file as --trace %s; give each output its own "
        "path\n",
        html, html);
    g_autofree char *want_more3 =
        g_strdup_printf("reshard simulate: --plot %s: is a folder\n", folder);
    const char *want_more[] = {want_more0, want_more1, want_more2, want_more3,
                               "reshard simulate: --plot: empty prefix (the files would be "
                               "-strategies.png, ...)\n"};
    for (guint i = 0; i < G_N_ELEMENTS(more); i++) {
        const char *args[] = {more[i][0], "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                              "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer",
                              "vllm:tp=4", "--infer-gpus", "8-15", "--strategy", "direct",
                              "-q", more[i][1], more[i][2], more[i][3], more[i][4], NULL};
        RunResult r = run_reshard(args);
        g_assert_cmpint(r.exit_code, ==, 2);
        g_assert_cmpstr(r.err, ==, want_more[i]);
        run_result_clear(&r);
    }
    g_assert_cmpint(g_rmdir(folder), ==, 0);
    g_assert_cmpint(g_unlink(link), ==, 0);
    g_assert_cmpint(g_unlink(b), ==, 0);
    g_assert_cmpint(g_unlink(here), ==, 0);
    /* reshard run: its timeline named as its trace's sidecar. */
    const char *run_args[] = {"run", "--trace", csv, "--timeline", meta, "-q", NULL};
    RunResult r = run_reshard(run_args);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_autofree char *want_run = g_strdup_printf(
        "reshard run: --timeline %s: the same file as --trace (its metadata sidecar) %s; give "
        "each output its own path\n",
        meta, meta);
    g_assert_cmpstr(r.err, ==, want_run);
    run_result_clear(&r);
    g_autoptr(GDir) d = g_dir_open(dir, 0, &error);
    g_assert_no_error(error);
    g_assert_null(g_dir_read_name(d));
}

/* An output naming an input of the command (the scenario, its model or topology, the
 * messages file), by its own name or by a hard or symbolic link, is a usage error, and the
 * input keeps its bytes (--trace used to replace the scenario with CSV). */
typedef struct {
    const char *option; /* the output flag */
    const char *target; /* the input file it names: s, m, t or msg */
    const char *alias;  /* NULL, "hard" or "sym" */
    gboolean messages;  /* simulate --messages rather than the scenario */
    gboolean run;       /* reshard run rather than simulate */
} SameAsInputCase;

static const SameAsInputCase same_as_input_cases[] = {
    {"--trace", "s.yaml", NULL, FALSE, FALSE},
    {"--link-stats", "m.yaml", NULL, FALSE, FALSE},
    {"--trace", "t.yaml", "hard", FALSE, FALSE},
    {"--link-stats", "t.yaml", "sym", FALSE, FALSE},
    {"--trace", "msg.csv", NULL, TRUE, FALSE},
    {"--link-stats", "t.yaml", "hard", TRUE, FALSE},
    {"--trace", "s.yaml", NULL, FALSE, TRUE},
    {"--trace", "m.yaml", "sym", FALSE, TRUE},
};

static void
test_output_is_input(gconstpointer data)
{
    const SameAsInputCase *c = data;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *model_src = g_build_filename(g_getenv("RESHARD_DATA_DIR"), "models",
                                                  "llama-3.1-8b.yaml", NULL);
    g_autofree char *model_text = read_file(model_src);
    g_autofree char *topo_src = data_path("two-node.yaml");
    g_autofree char *topo_text = read_file(topo_src);
    g_autofree char *m = g_build_filename(dir, "m.yaml", NULL);
    g_autofree char *t = g_build_filename(dir, "t.yaml", NULL);
    g_autofree char *sc = g_build_filename(dir, "s.yaml", NULL);
    g_autofree char *msg = g_build_filename(dir, "msg.csv", NULL);
    g_autofree char *scenario_text = g_strdup_printf(
        "model: %s\ntopology: %s\nnodes: 2\ntrain:\n  convention: megatron\n  gpus: 0-1\n"
        "  tp: 2\ninfer:\n  convention: vllm\n  gpus: 2-3\n  tp: 2\n",
        m, t);
    g_assert_true(g_file_set_contents(m, model_text, -1, NULL));
    g_assert_true(g_file_set_contents(t, topo_text, -1, NULL));
    g_assert_true(g_file_set_contents(sc, scenario_text, -1, NULL));
    g_assert_true(g_file_set_contents(msg, "src,dst,bytes\n0,2,1000\n", -1, NULL));
    g_autofree char *target = g_build_filename(dir, c->target, NULL);
    g_autofree char *out = NULL;
    if (c->alias == NULL) {
        out = g_strdup(target);
    } else {
        out = g_build_filename(dir, "alias.csv", NULL);
        int rc = strcmp(c->alias, "hard") == 0 ? link(target, out) : symlink(target, out);
        g_assert_cmpint(rc, ==, 0);
    }
    g_autofree char *before = read_file(target);
    const char *args[16];
    guint n = 0;
    args[n++] = c->run ? "run" : "simulate";
    if (c->messages) {
        args[n++] = "--messages";
        args[n++] = msg;
        args[n++] = "--topology";
        args[n++] = t;
    } else {
        args[n++] = "--scenario";
        args[n++] = sc;
        args[n++] = "--strategy";
        args[n++] = "direct";
    }
    args[n++] = c->option;
    args[n++] = out;
    args[n++] = "-q";
    args[n] = NULL;
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    g_autofree char *msg_text =
        g_strdup_printf("%s %s: is an input of this command (%s)", c->option, out, target);
    assert_contains(r.err, msg_text);
    g_autofree char *after = read_file(target);
    g_assert_cmpstr(after, ==, before);
    run_result_clear(&r);
}

/* reshard plan says what each transfer crosses: NVLink inside a DGX H100 node (GPUs 0-1 to
 * 2-3), the network to another node (8-9), and without a topology only that it goes
 * between ranks (every transfer read "network"). */
static void
test_plan_transfer_kind(void)
{
    const struct {
        const char *infer_gpus;
        const char *kind;
    } cases[] = {{"2-3", "nvlink"}, {"8-9", "network"}};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *args[] = {"plan",
                              "--model",
                              "llama-3.1-8b",
                              "--train",
                              "megatron:tp=2",
                              "--infer",
                              "vllm:tp=2",
                              "--infer-gpus",
                              cases[i].infer_gpus,
                              "--tensor",
                              "model.layers.0.self_attn.o_proj.weight",
                              NULL};
        RunResult r = run_reshard(args);
        g_assert_cmpint(r.exit_code, ==, 0);
        g_autofree char *row = g_strdup_printf("16777216  %s\n", cases[i].kind);
        g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
        guint n_rows = 0;
        for (guint l = 0; lines[l] != NULL; l++)
            if (strstr(lines[l], "o_proj.weight  [") != NULL) {
                g_autofree char *line = g_strconcat(lines[l], "\n", NULL);
                g_assert_true(g_str_has_suffix(line, row));
                n_rows++;
            }
        g_assert_cmpuint(n_rows, ==, 2);
        run_result_clear(&r);
    }
    const char *tensor[] = {
        "plan", "--shape",    "8x4", "--src-mesh",       "2",    "--src-placements",
        "S(0)", "--dst-mesh", "2",   "--dst-placements", "S(1)", "--dst-ranks",
        "2,3",  NULL};
    RunResult r = run_reshard(tensor);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "0        1    3  tensor  [4:8, 2:4]                            32  "
                           "between ranks\n");
    g_assert_null(strstr(r.out, "network"));
    run_result_clear(&r);
}

/* `reshard help CMD` (and CMD --help) shows CMD's own usage line: its summary starts as the
 * command's line in `reshard help` does (report showed simulate's). */
static void
test_help_usage_lines(void)
{
    const char *list_args[] = {"help", NULL};
    RunResult list = run_reshard(list_args);
    g_assert_cmpint(list.exit_code, ==, 0);
    g_auto(GStrv) lines = g_strsplit(list.out, "\n", -1);
    guint n_checked = 0;
    gboolean in_commands = FALSE;
    for (guint i = 0; lines[i] != NULL; i++) {
        if (g_str_has_prefix(lines[i], "Commands:")) {
            in_commands = TRUE;
            continue;
        }
        if (!in_commands || !g_str_has_prefix(lines[i], "  "))
            continue;
        g_auto(GStrv) words = g_strsplit_set(g_strstrip(lines[i]), " ", -1);
        g_autoptr(GPtrArray) kept = g_ptr_array_new();
        for (guint w = 0; words[w] != NULL; w++)
            if (*words[w] != '\0')
                g_ptr_array_add(kept, words[w]);
        const char *name = g_ptr_array_index(kept, 0);
        if (strcmp(name, "help") == 0 || strcmp(name, "version") == 0)
            continue;
        g_autofree char *first_words = g_strdup_printf("%s %s", (char *)g_ptr_array_index(kept, 1),
                                                       (char *)g_ptr_array_index(kept, 2));
        g_autofree char *want = g_ascii_strdown(first_words, -1);
        for (guint form = 0; form < 2; form++) {
            const char *args[] = {form ? name : "help", form ? "--help" : name, NULL};
            RunResult r = run_reshard(args);
            g_assert_cmpint(r.exit_code, ==, 0);
            g_autofree char *usage_prefix = g_strdup_printf("Usage:\n  reshard %s ", name);
            g_assert_true(g_str_has_prefix(r.out, usage_prefix));
            const char *nl = strchr(r.out + strlen("Usage:\n"), '\n');
            g_autofree char *usage = g_strndup(r.out, nl - r.out);
            const char *dash = strstr(usage, " - ");
            g_assert_nonnull(dash);
            g_autofree char *got = g_ascii_strdown(dash + 3, -1);
            if (!g_str_has_prefix(got, want))
                g_error("reshard help %s: usage \"%s\" does not start as \"%s\"", name, usage,
                        want);
            run_result_clear(&r);
        }
        n_checked++;
    }
    g_assert_cmpuint(n_checked, ==, 10);
    run_result_clear(&list);
}

/* `reshard report --help` names the formats report writes (it showed simulate's "table,
 * csv or json", each of which report refuses), and simulate keeps its own. */
static void
test_help_report_format(void)
{
    const char *help_args[] = {"report", "--help", NULL};
    RunResult r = run_reshard(help_args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_assert_nonnull(strstr(r.out, "--format=FORMAT             html or md (default html)\n"));
    g_assert_null(strstr(r.out, "table, csv or json"));
    run_result_clear(&r);
    const char *refused_args[] = {"report", "--format", "table", NULL};
    r = run_reshard(refused_args);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_assert_nonnull(strstr(r.err, "a report is html (default) or md"));
    run_result_clear(&r);
    const char *simulate_args[] = {"simulate", "--help", NULL};
    r = run_reshard(simulate_args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_assert_nonnull(strstr(r.out, "--format=FORMAT             table, csv or json (default table)"));
    run_result_clear(&r);
}

/* `topology list` in the format asked for (plain names under csv and json before). */
static void
test_topology_list_formats(void)
{
    const char *json_args[] = {"topology", "list", "--format", "json", NULL};
    RunResult r = run_reshard(json_args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, r.out, -1, NULL));
    JsonArray *names = json_node_get_array(json_parser_get_root(parser));
    g_assert_cmpuint(json_array_get_length(names), >=, 4);
    g_assert_cmpstr(json_array_get_string_element(names, 1), ==, "dgx-h100");
    run_result_clear(&r);
    const char *csv_args[] = {"topology", "list", "--format", "csv", NULL};
    r = run_reshard(csv_args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_assert_true(g_str_has_prefix(r.out, "name\ndgx-b200\ndgx-h100\n"));
    run_result_clear(&r);
}

/* `report -o -` writes the document on standard output; it wrote a file named "-". */
static void
test_report_stdout(void)
{
    g_assert_false(g_file_test("-", G_FILE_TEST_EXISTS));
    const char *args[] = {"report", "--scenario", "qwen3-30b-colocated", "--network",
                          "bottleneck", "--format", "md", "-o", "-", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_assert_true(g_str_has_prefix(r.out, "# reshard report: qwen3-30b-colocated"));
    g_assert_nonnull(strstr(r.out, "\n## Scenario and layouts\n"));
    g_assert_false(g_file_test("-", G_FILE_TEST_EXISTS));
    run_result_clear(&r);
}

/* Files that are not text are named as such at their first bad byte (a binary YAML read
 * as "empty document", invalid UTF-8 without its place), a YAML escape that makes a
 * control character is refused where it is (a model name: it was printed unescaped on
 * stdout elsewhere, a topology's name in `topology show`), and names from the command line
 * reach the terminal with their control bytes spelled out (an ESC in a tensor name, a
 * command name). */
typedef struct {
    const char *file;    /* a file name in a fresh folder, or NULL */
    const char *content; /* its bytes */
    gsize len;
    const char *args[12]; /* "@" stands for the file's path */
    const char *fragment; /* in stderr, after the path */
} NotTextCase;

static const NotTextCase not_text_cases[] = {
    {"s.yaml",
     "\x00\x01\x02"
     "binary\x00\xff",
     11,
     {"simulate", "--scenario", "@", NULL},
     ":1:1: byte offset 0: byte 0x00 is not text (a control character); a YAML file is UTF-8 "
     "text"},
    {"t.yaml",
     "name: t\nnodes: caf\xe9\n",
     0,
     {"topology", "show", "@", NULL},
     ":2:11: byte offset 18: byte 0xe9 is not valid UTF-8; a YAML file is UTF-8 text"},
    {"config.json",
     "{\"model_type\": \"llama\",\n \"x\xff\": 1}",
     0,
     {"models", "--model", "@", NULL},
     ":2:4: byte offset 27: byte 0xff is not valid UTF-8; a config.json is UTF-8 text"},
    {"s.yaml",
     "name: t\nmodel: \"no\\x1bsuch\"\ntopology: dgx-h100\n"
     "train: {convention: megatron, gpus: 0-7, tp: 8}\n"
     "infer: {convention: vllm, gpus: 8-15, tp: 8}\n",
     0,
     {"simulate", "--scenario", "@", "-q", NULL},
     ":2:8: model: the scalar holds the control character U+001B (an escape in quotes)"},
    {NULL,
     NULL,
     0,
     {"plan", "--model", "llama-3.1-8b", "--train", "megatron:tp=2", "--infer", "vllm:tp=2",
      "--tensor", "ab\x1b[31mcd", NULL},
     "reshard plan: --tensor: no tensor or fused buffer named \"ab\\x1b[31mcd\""},
    {NULL, NULL, 0, {"x\x1by", NULL}, "reshard: unknown command \"x\\x1by\""},
};

static void
test_not_text(gconstpointer data)
{
    const NotTextCase *c = data;
    g_autofree char *dir = make_temp_dir();
    g_autofree char *path = c->file ? g_build_filename(dir, c->file, NULL) : NULL;
    if (path != NULL)
        g_assert_true(g_file_set_contents(path, c->content, c->len ? (gssize)c->len : -1, NULL));
    const char *args[12];
    guint n = 0;
    for (; c->args[n] != NULL; n++)
        args[n] = strcmp(c->args[n], "@") == 0 ? path : c->args[n];
    args[n] = NULL;
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, c->fragment);
    for (const char *p = r.err; *p != '\0'; p++)
        g_assert_true((guchar)*p >= 0x20 || *p == '\n' || *p == '\t');
    run_result_clear(&r);
}

/* Every shard of a sharded checkpoint is an input: --trace naming the second shard of a
 * model.safetensors.index.json, given as the model or through a model YAML's
 * `safetensors:`, is refused and the shard keeps its bytes (only the index itself was
 * guarded). */
static void
test_output_is_shard(gconstpointer via_yaml)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *s1 = g_build_filename(dir, "model-00001-of-00002.safetensors", NULL);
    g_autofree char *s2 = g_build_filename(dir, "model-00002-of-00002.safetensors", NULL);
    g_autofree char *index = g_build_filename(dir, "model.safetensors.index.json", NULL);
    write_safetensors_file(s1,
                           "{\"model.embed_tokens.weight\": {\"dtype\": \"BF16\", \"shape\": "
                           "[16, 8], \"data_offsets\": [0, 256]}}",
                           256);
    write_safetensors_file(s2,
                           "{\"lm_head.weight\": {\"dtype\": \"BF16\", \"shape\": [16, 8], "
                           "\"data_offsets\": [0, 256]}}",
                           256);
    g_assert_true(g_file_set_contents(
        index,
        "{\"weight_map\": {\"model.embed_tokens.weight\": \"model-00001-of-00002.safetensors\", "
        "\"lm_head.weight\": \"model-00002-of-00002.safetensors\"}}",
        -1, NULL));
    g_autofree char *yaml = g_build_filename(dir, "m.yaml", NULL);
    g_assert_true(g_file_set_contents(
        yaml, "name: tiny\nsafetensors: model.safetensors.index.json\n", -1, NULL));
    g_autofree char *before = NULL;
    gsize n_before = 0;
    g_assert_true(g_file_get_contents(s2, &before, &n_before, NULL));
    const char *args[] = {"simulate",
                          "--model",
                          via_yaml ? yaml : index,
                          "--nodes",
                          "2",
                          "--train",
                          "megatron:tp=1",
                          "--train-gpus",
                          "0",
                          "--infer",
                          "vllm:tp=1",
                          "--infer-gpus",
                          "8",
                          "--strategy",
                          "direct",
                          "--trace",
                          s2,
                          "-q",
                          NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    g_autofree char *msg = g_strdup_printf("--trace %s: is an input of this command (%s)", s2, s2);
    assert_contains(r.err, msg);
    g_autofree char *after = NULL;
    gsize n_after = 0;
    g_assert_true(g_file_get_contents(s2, &after, &n_after, NULL));
    g_assert_cmpmem(after, n_after, before, n_before);
    run_result_clear(&r);
}

/* A staging bound under 1 MiB is a usage error (16 B used to abort, allocating 4 GiB for
 * billions of buckets). */
static void
test_tiny_staging(void)
{
    const char *args[] = {"simulate", "--model", "llama-3.1-8b", "--nodes", "2", "--train",
                          "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer", "vllm:tp=4",
                          "--infer-gpus", "8-15", "--strategy", "direct", "--network",
                          "bottleneck", "--staging-bytes", "16B", "-q", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 2);
    g_assert_cmpstr(r.out, ==, "");
    assert_contains(r.err,
                    "--staging-bytes: 16B is below the smallest allowed, 1048576 B (1 MiB)");
    run_result_clear(&r);
}

/* Is there a /dev/full (writes fail with "no space")? Skips the test when not. */
static gboolean
have_dev_full(void)
{
    if (g_file_test("/dev/full", G_FILE_TEST_EXISTS))
        return TRUE;
    g_test_skip("no /dev/full");
    return FALSE;
}

/* Results that cannot be written to standard output (/dev/full: no space) end with exit 1
 * and a message on stderr, never exit 0 with the results lost. */
static void
test_stdout_write_error(void)
{
    if (!have_dev_full())
        return;
    g_autoptr(GError) error = NULL;
    g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
    g_subprocess_launcher_set_stdout_file_path(l, "/dev/full");
    g_autoptr(GSubprocess) p =
        g_subprocess_launcher_spawn(l, &error, g_getenv("RESHARD_BIN"), "models", NULL);
    g_assert_no_error(error);
    g_autofree char *err = NULL;
    g_assert_true(g_subprocess_communicate_utf8(p, NULL, NULL, NULL, &err, &error));
    g_assert_no_error(error);
    g_assert_cmpint(g_subprocess_get_exit_status(p), ==, 1);
    assert_contains(err, "writing the results to standard output failed: No space left on device");
}

/* `report -o - | true`: the reader gone, SIGPIPE ends the command, and its temporary plot
 * folder goes with it (an empty "reshard-report-" folder stayed in $TMPDIR). */
static void
test_report_sigpipe_temp_dir(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *tmp = make_temp_dir();
    g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                 G_SUBPROCESS_FLAGS_STDERR_SILENCE);
    g_subprocess_launcher_setenv(l, "TMPDIR", tmp, TRUE);
    g_autoptr(GSubprocess) p = g_subprocess_launcher_spawn(
        l, &error, g_getenv("RESHARD_BIN"), "report", "--model", "llama-3.1-8b", "--nodes", "2",
        "--train", "megatron:tp=2,pp=2", "--train-gpus", "0-7", "--infer", "vllm:tp=4",
        "--infer-gpus", "8-15", "-q", "-o", "-", NULL);
    g_assert_no_error(error);
    /* The reader goes away before the document is written. */
    g_assert_true(g_input_stream_close(g_subprocess_get_stdout_pipe(p), NULL, &error));
    g_assert_true(g_subprocess_wait(p, NULL, &error));
    g_assert_true(g_subprocess_get_if_signaled(p));
    g_assert_cmpint(g_subprocess_get_term_sig(p), ==, SIGPIPE);
    g_autoptr(GDir) d = g_dir_open(tmp, 0, &error);
    g_assert_no_error(error);
    const char *left = g_dir_read_name(d);
    if (left != NULL)
        g_error("%s left in $TMPDIR", left);
    g_rmdir(tmp);
}

/* The table's hierarchical row says which of its plans it shows: "hierarchical+relays"
 * when domain relays won (it read "hierarchical" while the auto line's "hierarchical" is
 * the plan without relays); CSV keeps the strategy's name; without relays, "hierarchical". */
static void
test_hierarchical_row_label(void)
{
    const char *relays_args[] = {"simulate", "--layers", "3-5", "--network", "bottleneck",
                                 "--strategy", "hierarchical", "-q", NULL};
    RunResult r = run_reshard(relays_args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "\nhierarchical+relays     710.0      155.2       554.8 ");
    assert_contains(r.out, "hierarchical: domains relay to each other");
    run_result_clear(&r);
    const char *csv_args[] = {"simulate", "--layers", "3-5", "--network", "bottleneck",
                              "--strategy", "hierarchical", "-q", "--format", "csv", NULL};
    r = run_reshard(csv_args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "\nhierarchical,709973901312,");
    run_result_clear(&r);
    const char *off_args[] = {"simulate", "--layers", "3-5", "--network", "bottleneck",
                              "--strategy", "hierarchical", "--domain-relays", "off", "-q", NULL};
    r = run_reshard(off_args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "\nhierarchical     580.8       26.0       554.8 ");
    g_assert_null(strstr(r.out, "+relays"));
    run_result_clear(&r);
}

/* --messages without --topology runs on the scenario's topology and says so (it named the
 * topology only, so that the help's "on --topology" read as if one were required); one
 * message is "1 message". */
static void
test_messages_default_topology(void)
{
    g_autofree char *csv = write_temp("one.csv", "src,dst,bytes\n0,8,1000000\n");
    const char *args[] = {"simulate", "--messages", csv, NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.err, "simulating 1 message of ");
    assert_contains(r.err, " on dgx-h100 (the topology of scenario deepseek-v3-h100; --topology "
                           "to choose) ...");
    assert_contains(r.out, ": 1 message (1 over links), 1 phase, 0.001 GB moved");
    run_result_clear(&r);
}

/* Counts of one in the singular ("1 transfers listed, 1 phase(s)", "1 placements for a
 * 2-dim mesh", "on 1 nodes of 2"). */
static void
test_singular_counts(void)
{
    const char *plan[] = {"plan", "--shape", "8x4", "--src-mesh", "1", "--src-placements", "R",
                          "--dst-mesh", "1", "--dst-placements", "R", NULL};
    RunResult r = run_reshard(plan);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "strategy  direct: 1 transfer listed, 1 phase\n");
    run_result_clear(&r);
    const char *layout[] = {"layout", "--shape", "8x4", "--mesh", "2x2", "--placements", "S(0)",
                            NULL};
    r = run_reshard(layout);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "1 placement for a 2-dim mesh");
    run_result_clear(&r);
    g_autofree char *topo = write_temp("one.yaml", "name: one\nnodes: 1\ngpus_per_node: 2\n"
                                                   "gpu: {model: g, memory: 1 GiB}\n"
                                                   "nvlink: {bandwidth: 1 GB/s}\n"
                                                   "nic: {bandwidth: 1 GB/s}\n");
    const char *show[] = {"topology", "show", topo, NULL};
    r = run_reshard(show);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "GPUs       2 g, 1 GiB each, on 1 node of 2\n");
    run_result_clear(&r);
}

/* The last pipeline stage names MTP only for a model that has MTP layers (Qwen3-30B-A3B has
 * none; it read "+ final norm, head, MTP"). */
static void
test_last_stage_mtp(void)
{
    const char *qwen[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--network",
                          "bottleneck", NULL};
    RunResult r = run_reshard(qwen);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "layers 24-47 + final norm, head\n");
    run_result_clear(&r);
    const char *dsv3[] = {"simulate", "--scenario", "deepseek-v3-h100", "--mtp", "--network",
                          "bottleneck", "--strategy", "direct", NULL};
    r = run_reshard(dsv3);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "layers 57-60 + final norm, head, MTP\n");
    run_result_clear(&r);
}

/* A layout the sweep sets is blamed on the sweep point, not on the scenario file's infer
 * line it never came from; the failed point's NIC bandwidth is left blank, not 0.0. */
static void
test_sweep_point_blame(void)
{
    const char *args[] = {"sweep", "--scenario", "qwen3-30b-colocated", "--tp", "3", "--network",
                          "bottleneck", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "(point 0: sweep point: infer: vllm tp=3 replicas=16: tp=3 and the 32 "
                           "attention heads");
    g_assert_null(strstr(r.err, "qwen3-30b-colocated.yaml:"));
    assert_contains(r.out, "sweep      1 point: 0 planned");
    g_assert_null(strstr(r.out, "0.0"));
    run_result_clear(&r);
    /* A point past RS_MAX_RANKS blamed "--nodes: 131073 nodes", a flag never given. */
    const char *huge[] = {"sweep",         "--scenario", "qwen3-30b-colocated",
                          "--no-progress", "--tp",       "4",
                          "--gpus",        "1048576",    NULL};
    r = run_reshard(huge);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "(point 0: the point's 1048576 inference GPUs, from GPU 0 (on the "
                           "training side's), need 1048576 GPUs of dgx-h100, above the limit "
                           "of 262144 GPUs");
    g_assert_null(strstr(r.err, "--nodes"));
    run_result_clear(&r);
    /* A scenario that holds 4 GPUs of each rack (gpus_per_domain) numbers the job's GPUs:
     * the point's inference GPUs go in the next rack's 4, on 2 racks of 18 nodes. They were
     * placed from physical GPU 72 (job GPU 72: 1296 once mapped), past the job's 8, and every
     * point of a kimi-k3-gb300 sweep failed so. */
    g_autofree char *gpd =
        write_temp("gpd-sweep.yaml", "name: gpd-sweep\nmodel: llama-3.1-8b\ntopology: gb200-nvl72\n"
                                     "nodes: 36\ngpus_per_domain: 4\n"
                                     "train: {convention: megatron, gpus: 0-3, tp: 4}\n"
                                     "infer: {convention: vllm, gpus: 4-7, tp: 4}\n");
    const char *held[] = {"sweep",    "--scenario", gpd,         "--tp",       "4",
                          "--gpus",   "4",          "--network", "bottleneck", "--no-progress",
                          "--format", "csv",        NULL};
    r = run_reshard(held);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "\n0,vllm tp=4 dp=1 pp=1 replicas=1,4,1,1,1,false,4,36,gb200-nvl72,");
    run_result_clear(&r);
    /* Its row has no node count (it showed the scenario's 8 nodes). */
    const char *huge_csv[] = {"sweep",         "--scenario", "qwen3-30b-colocated",
                              "--no-progress", "--tp",       "4",
                              "--gpus",        "1048576",    "--format",
                              "csv",           NULL};
    r = run_reshard(huge_csv);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.out, ",1048576,,dgx-h100,");
    run_result_clear(&r);
    /* --plot may not replace an input: the sweep file grid.dat (it was not noted). */
    g_autofree char *grid = write_temp("grid.dat", "tp: [4]\n");
    g_autofree char *prefix = g_strndup(grid, strlen(grid) - strlen(".dat"));
    const char *plot[] = {"sweep", "--scenario", "qwen3-30b-colocated", "--sweep", grid,
                          "--plot", prefix, "--network", "bottleneck", NULL};
    r = run_reshard(plot);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "is an input of this command");
    g_autofree char *after = NULL;
    g_assert_true(g_file_get_contents(grid, &after, NULL, NULL));
    g_assert_cmpstr(after, ==, "tp: [4]\n");
    run_result_clear(&r);
}

/* An output that is a symbolic link is written where the link points: that folder must
 * take a new file too. A link to /proc/x.csv, to a missing folder, or a loop passed the
 * check of the link's own folder and failed at the end, exit 1, naming a temporary file. */
static void
test_output_link_targets(void)
{
    g_autofree char *dir = g_dir_make_tmp("rs-cli-links-XXXXXX", NULL);
    g_assert_nonnull(dir);
    const struct {
        const char *name, *target, *message;
    } rows[] = {
        {"proc.csv", "/proc/x.csv", "folder /proc takes no new file (No such file or directory)"},
        {"gone.csv", "/nonexist/d/t.csv", "folder /nonexist/d does not exist"},
        {"loop.csv", "loop.csv", "a symbolic link that resolves to no file (a loop"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        g_autofree char *link = g_build_filename(dir, rows[i].name, NULL);
        g_assert_cmpint(symlink(rows[i].target, link), ==, 0);
        const char *args[] = {"simulate",   "--scenario", "qwen3-30b-colocated",
                              "--strategy", "direct",     "--trace",
                              link,         "-q",         NULL};
        RunResult r = run_reshard(args);
        g_assert_cmpint(r.exit_code, ==, 2);
        g_autofree char *want = g_strdup_printf("--trace %s: %s", link, rows[i].message);
        assert_contains(r.err, want);
        g_assert_cmpstr(r.out, ==, "");
        run_result_clear(&r);
        g_assert_cmpint(g_unlink(link), ==, 0);
    }
    g_assert_cmpint(g_rmdir(dir), ==, 0); /* nothing else left: no probe, no trace */
}

/* Files named indirectly that are FIFOs are not read (the read blocked for ever): a
 * messages file's .meta sidecar is skipped, an index's shard refused. */
static void
test_indirect_fifos(void)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *messages = g_build_filename(dir, "m.csv", NULL);
    g_autofree char *meta = g_build_filename(dir, "m.csv.meta", NULL);
    g_assert_true(g_file_set_contents(messages, "src,dst,bytes\n0,1,5\n", -1, NULL));
    g_assert_cmpint(mkfifo(meta, 0600), ==, 0);
    const char *sim[] = {"simulate", "--messages", messages, "--topology", "dgx-h100", NULL};
    RunResult r = run_reshard(sim);
    g_assert_cmpint(r.exit_code, ==, 0);
    run_result_clear(&r);
    g_autofree char *shard = g_build_filename(dir, "a.safetensors", NULL);
    g_autofree char *index = g_build_filename(dir, "model.safetensors.index.json", NULL);
    g_assert_cmpint(mkfifo(shard, 0600), ==, 0);
    g_assert_true(
        g_file_set_contents(index, "{\"weight_map\": {\"w\": \"a.safetensors\"}}", -1, NULL));
    const char *models[] = {"models", "--model", index, NULL};
    r = run_reshard(models);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "a.safetensors: is not a regular file");
    run_result_clear(&r);
    g_unlink(meta);
    g_unlink(shard);
}

/* An interrupted command leaves none of its outputs (a SIGINT while the timeline was
 * written left the finished trace behind). Made deterministic with a FIFO: the trace is
 * written first, then opening the timeline, a FIFO without a reader, blocks; SIGINT then. */
static void
test_interrupt_removes_outputs(void)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *trace = g_build_filename(dir, "t.csv", NULL);
    g_autofree char *fifo = g_build_filename(dir, "timeline.json", NULL);
    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    g_autoptr(GError) error = NULL;
    g_autoptr(GSubprocess) p = g_subprocess_new(
        G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE, &error,
        g_getenv("RESHARD_BIN"), "simulate", "--scenario", "qwen3-30b-colocated", "--strategy",
        "direct", "--trace", trace, "--timeline", fifo, "-q", NULL);
    g_assert_no_error(error);
    for (guint i = 0; i < 600 && !g_file_test(trace, G_FILE_TEST_EXISTS); i++)
        g_usleep(100000);
    g_assert_true(g_file_test(trace, G_FILE_TEST_EXISTS));
    g_usleep(200000); /* (the trace's sidecar, then the blocking open) */
    g_subprocess_send_signal(p, SIGINT);
    g_assert_true(g_subprocess_wait(p, NULL, &error));
    g_assert_true(g_subprocess_get_if_signaled(p));
    g_assert_cmpint(g_subprocess_get_term_sig(p), ==, SIGINT);
    g_assert_false(g_file_test(trace, G_FILE_TEST_EXISTS));
    g_autofree char *meta = g_strconcat(trace, ".meta", NULL);
    g_assert_false(g_file_test(meta, G_FILE_TEST_EXISTS));
    g_unlink(fifo);
}

/* A scalable unit's leaf downlinks as the binding cut (tests/data/small-fabric.yaml: two
 * units of 8 GPUs, 40 GB/s into each unit): all of Llama-3.1-8B's 16,060,522,496 bf16
 * bytes enter unit 1, where inference runs; named in the table and in JSON. */
static void
test_bound_leaf_cut(void)
{
    g_autofree char *topo = data_path("small-fabric.yaml");
    const char *args[] = {"simulate", "--topology", topo, "--model", "llama-3.1-8b", "--train",
                          "megatron:tp=2,pp=4", "--train-gpus", "0-7", "--infer", "vllm:tp=8",
                          "--infer-gpus", "8-15", "--strategy", "direct", "-q", NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "binding cut: scalable unit 1 ingress (leaf downlinks): 16.06 GB over "
                           "40 GB/s");
    run_result_clear(&r);
    const char *json_args[] = {"simulate", "--topology", topo, "--model", "llama-3.1-8b",
                               "--train", "megatron:tp=2,pp=4", "--train-gpus", "0-7", "--infer",
                               "vllm:tp=8", "--infer-gpus", "8-15", "--strategy", "direct",
                               "--format", "json", "-q", NULL};
    r = run_reshard(json_args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_json(parser, r.out);
    JsonObject *cut = json_object_get_object_member(root, "binding_cut");
    g_assert_nonnull(cut);
    g_assert_cmpstr(json_object_get_string_member(cut, "kind"), ==, "scalable-unit-ingress");
    g_assert_cmpstr(json_object_get_string_member(cut, "links"), ==, "leaf");
    g_assert_cmpint(json_object_get_int_member(cut, "bytes"), ==, 16060522496);
    run_result_clear(&r);
}

/* An output file that cannot be written (/dev/full: no space) is a failure while running,
 * exit 1, its path named once (--link-stats said "/dev/full: /dev/full: write failed";
 * --trace ended with exit 2, as for bad input). */
static void
test_output_write_error(void)
{
    if (!have_dev_full())
        return;
    const char *flags[] = {"--trace", "--link-stats", "--timeline"};
    for (guint i = 0; i < G_N_ELEMENTS(flags); i++) {
        const char *args[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--strategy",
                              "direct", flags[i], "/dev/full", NULL};
        RunResult r = run_reshard(args);
        if (r.exit_code != 1 || strstr(r.err, "/dev/full: /dev/full") != NULL)
            g_error("%s /dev/full: exit %d, stderr:\n%s", flags[i], r.exit_code, r.err);
        assert_contains(r.err, "reshard simulate: /dev/full: write failed: No space left on device");
        run_result_clear(&r);
    }
    /* The same on the other commands' output files and on simulate's --messages path
     * (reshard run said "--trace /dev/full: /dev/full: write failed", calibrate likewise). */
    g_autofree char *messages = write_temp("m.csv", "message,src,dst,bytes,phase,depends_on\n"
                                                    "1,0,2,1000000,0,\n");
    g_autofree char *topo = data_path("two-node.yaml");
    const char *run_args[] = {"run", "--shape", "64x64", "--src-mesh", "2", "--src-placements",
                              "S(0)", "--dst-mesh", "2", "--dst-placements", "S(1)",
                              "--trace", "/dev/full", NULL};
    const char *calibrate_args[] = {"calibrate", "--ranks", "2", "--sizes", "4KiB,16MiB", "--runs",
                                    "1", "--copy-runs", "4KiB", "--copy-bytes", "64KiB",
                                    "--output", "/dev/full", NULL};
    const char *messages_args[] = {"simulate", "--messages", messages, "--topology", topo,
                                   "--link-stats", "/dev/full", "-q", NULL};
    const char *const *others[] = {run_args, calibrate_args, messages_args};
    for (guint i = 0; i < G_N_ELEMENTS(others); i++) {
        RunResult r = run_reshard(others[i]);
        if (r.exit_code != 1 || strstr(r.err, "/dev/full: /dev/full") != NULL ||
            strstr(r.err, "/dev/full: write failed: No space left on device") == NULL)
            g_error("reshard %s ... /dev/full: exit %d, stderr:\n%s", others[i][0], r.exit_code,
                    r.err);
        run_result_clear(&r);
    }
}

/* A command that fails after writing some outputs leaves the earlier run's files as they
 * were: the trace it replaced had the failed run's rows while its .meta came and went, a
 * mix of two runs. The plot fails (a gnuplot that exits 1) after the trace is written. */
static void
test_failure_restores_replaced_outputs(void)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *trace = g_build_filename(dir, "tr.csv", NULL);
    g_autofree char *meta = g_build_filename(dir, "tr.csv.meta", NULL);
    g_autofree char *plot = g_build_filename(dir, "p", NULL);
    g_assert_true(g_file_set_contents(trace, "OLD\n", -1, NULL));
    g_assert_true(g_file_set_contents(meta, "OLDMETA\n", -1, NULL));
    const char *args[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--layers", "3-3",
                          "--strategy", "direct", "--trace", trace, "--plot", plot, "-q", NULL};
    const char *env[] = {"RESHARD_GNUPLOT=/bin/false", NULL};
    RunResult r = run_reshard_env(args, env);
    assert_exit_code(&r, 1);
    run_result_clear(&r);
    g_autofree char *t = read_file(trace);
    g_autofree char *m = read_file(meta);
    g_assert_cmpstr(t, ==, "OLD\n");
    g_assert_cmpstr(m, ==, "OLDMETA\n");
    /* Nothing else is left in the folder: no plot file, no file moved aside. */
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    guint n = 0;
    for (const char *name; (name = g_dir_read_name(d)) != NULL; n++)
        g_assert_true(g_str_equal(name, "tr.csv") || g_str_equal(name, "tr.csv.meta"));
    g_assert_cmpuint(n, ==, 2);
    /* On success the new files replace them and the moved-aside ones are gone. */
    const char *ok_args[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--layers", "3-3",
                             "--strategy", "direct", "--trace", trace, "-q", NULL};
    r = run_reshard(ok_args);
    assert_exit_code(&r, 0);
    run_result_clear(&r);
    g_autofree char *t2 = read_file(trace);
    g_assert_true(g_str_has_prefix(t2, "message,src,dst,bytes,phase,start_s,end_s"));
    g_autoptr(GDir) d2 = g_dir_open(dir, 0, NULL);
    n = 0;
    for (const char *name; (name = g_dir_read_name(d2)) != NULL; n++)
        g_assert_true(g_str_equal(name, "tr.csv") || g_str_equal(name, "tr.csv.meta"));
    g_assert_cmpuint(n, ==, 2);
}

/* The ways out that skipped the put-back (review of the change): a reader of standard
 * output that went away (SIGPIPE: the files moved aside stayed hidden), a standard output
 * that failed at the last flush (exit 1, yet the new files kept and the old ones gone),
 * and an output that is a symbolic link (its target was overwritten and never put back). */
static void
test_failure_restores_outputs_other_ways(void)
{
    g_autofree char *dir = make_temp_dir();
    const char *bin = g_getenv("RESHARD_BIN");
    const char *exts[] = {"dat", "gp", "png", "svg"};
    const char *ways[] = {"| true", "> /dev/full"};
    for (guint w = 0; w < G_N_ELEMENTS(ways); w++) {
        for (guint e = 0; e < G_N_ELEMENTS(exts); e++) {
            g_autofree char *f = g_strdup_printf("%s/p-strategies.%s", dir, exts[e]);
            g_assert_true(g_file_set_contents(f, "old\n", -1, NULL));
        }
        g_autofree char *cmd = g_strdup_printf(
            "cd '%s' && '%s' simulate --network bottleneck --layers 2 --format json --plot p -q %s",
            dir, bin, ways[w]);
        g_autofree char *out = NULL, *err = NULL;
        gint status = 0;
        const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
        g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                   &err, &status, NULL));
        for (guint e = 0; e < G_N_ELEMENTS(exts); e++) {
            g_autofree char *f = g_strdup_printf("%s/p-strategies.%s", dir, exts[e]);
            g_autofree char *text = read_file(f);
            g_assert_cmpstr(text, ==, "old\n");
        }
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        for (const char *name; (name = g_dir_read_name(d)) != NULL;)
            g_assert_null(strstr(name, "reshard-old"));
    }
    /* Through a symbolic link: the file it names comes back. */
    g_autofree char *target = g_build_filename(dir, "target.csv", NULL);
    g_autofree char *link = g_build_filename(dir, "link.csv", NULL);
    g_assert_true(g_file_set_contents(target, "OLDTARGET\n", -1, NULL));
    g_assert_cmpint(symlink("target.csv", link), ==, 0);
    g_autofree char *plot = g_build_filename(dir, "q", NULL);
    const char *args[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--layers", "3-3",
                          "--strategy", "direct", "--trace", link, "--plot", plot, "-q", NULL};
    const char *env[] = {"RESHARD_GNUPLOT=/bin/false", NULL};
    RunResult r = run_reshard_env(args, env);
    assert_exit_code(&r, 1);
    run_result_clear(&r);
    g_autofree char *t = read_file(target);
    g_assert_cmpstr(t, ==, "OLDTARGET\n");
    /* A topology whose root has an unknown key freed an uninitialised pointer. */
    g_autofree char *topo = g_build_filename(dir, "t.yaml", NULL);
    g_assert_true(g_file_set_contents(topo, "name: t\nbogus_key: 1\n", -1, NULL));
    const char *show[] = {"topology", "show", topo, NULL};
    r = run_reshard(show);
    assert_exit_code(&r, 2);
    assert_contains(r.err, "bogus_key: unknown field");
    g_assert_null(strstr(r.err, "CRITICAL"));
    run_result_clear(&r);
}

/* Under --layers the header listed each stage's full layer range and its embedding and
 * head, which the cut model does not have. */
static void
test_layers_header(void)
{
    const char *args[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--layers", "3-4",
                          "--network", "bottleneck", "-q", NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "             stage 0: GPUs 0-31, layers 3-4\n"
                           "             stage 1: GPUs 32-63, layers none\n");
    assert_contains(r.out, "replica 0, stage 0: GPUs 0-3, tp=4, layers 3-4\n");
    g_assert_null(strstr(r.out, "embedding"));
    g_assert_null(strstr(r.out, "head"));
    run_result_clear(&r);
    const char *full[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--network",
                          "bottleneck", "-q", NULL};
    r = run_reshard(full);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "stage 0: GPUs 0-31, layers 0-23 + embedding\n");
    assert_contains(r.out, "stage 1: GPUs 32-63, layers 24-47 + final norm, head\n");
    run_result_clear(&r);
}

/* A GPU cut's links are its NVLink and its NIC (369 + 47.5 GB/s here): the JSON said
 * "nic", which read as the NIC alone being the limit. */
static void
test_binding_cut_gpu_links(void)
{
    const char *args[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--layers", "3-3",
                          "--infer", "vllm:tp=2,dp=16", "--infer-gpus", "0-31", "--network",
                          "bottleneck", "--format", "json", "-q", NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *cut = json_object_get_object_member(parse_json(parser, r.out), "binding_cut");
    g_assert_cmpstr(json_object_get_string_member(cut, "kind"), ==, "gpu-ingress");
    g_assert_cmpstr(json_object_get_string_member(cut, "links"), ==, "nvlink+nic");
    g_assert_cmpfloat_with_epsilon(json_object_get_double_member(cut, "capacity_bytes_per_s"),
                                   450e9 * 0.82 + 50e9 * 0.95, 1.0);
    run_result_clear(&r);
}

/* The records name the scenario with what the command line replaced: the JSON said
 * "deepseek-v3-h100" and nothing else, and a trace's .meta the same, for runs whose parts
 * all came from flags. */
static void
test_scenario_overrides_recorded(void)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *trace = g_build_filename(dir, "tr.csv", NULL);
    const char *args[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--layers", "3-3",
                          "--strategy", "direct", "--trace", trace, "--format", "json", "-q",
                          NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_json(parser, r.out);
    g_assert_cmpstr(json_object_get_string_member(root, "scenario"), ==, "qwen3-30b-colocated");
    g_assert_cmpstr(json_object_get_string_member(root, "scenario_overrides"), ==, "--layers");
    run_result_clear(&r);
    g_autofree char *meta_path = g_strconcat(trace, ".meta", NULL);
    g_autofree char *meta = read_file(meta_path);
    assert_contains(meta, "scenario=qwen3-30b-colocated (with --layers from the command line)\n");
    const char *plain[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--network",
                           "bottleneck", "--format", "json", "-q", NULL};
    r = run_reshard(plain);
    assert_exit_code(&r, 0);
    g_autoptr(JsonParser) parser2 = json_parser_new();
    root = parse_json(parser2, r.out);
    g_assert_true(json_object_get_null_member(root, "scenario_overrides"));
    run_result_clear(&r);
    /* simulate's own --dtype counts too (it is not one of the scenario flags). */
    const char *dtype[] = {"simulate", "--scenario", "qwen3-30b-colocated", "--dtype", "f32",
                           "--network", "bottleneck", "--format", "json", "-q", NULL};
    r = run_reshard(dtype);
    assert_exit_code(&r, 0);
    g_autoptr(JsonParser) parser3 = json_parser_new();
    root = parse_json(parser3, r.out);
    g_assert_cmpstr(json_object_get_string_member(root, "scenario_overrides"), ==, "--dtype");
    run_result_clear(&r);
}

/* A scenario's relative `model:` and `topology:` paths are relative to its own folder (as a
 * model YAML's `safetensors:` is): they were looked up from the current folder, so a
 * scenario in sub/ read the current folder's m.yaml, another model, without a word, or
 * "not found" from anywhere else. The model beside the scenario has a name of its own. */
static void
test_scenario_relative_paths(void)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *sub = g_build_filename(dir, "sub", NULL);
    g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
    const char *src = g_getenv("G_TEST_SRCDIR");
    g_autofree char *shipped_model = g_build_filename(src, "..", "models", "llama-3.1-8b.yaml", NULL);
    g_autofree char *shipped_topo = g_build_filename(src, "..", "topologies", "dgx-h100.yaml", NULL);
    g_autofree char *model_text = read_file(shipped_model);
    g_autofree char *topo_text = read_file(shipped_topo);
    g_autoptr(GString) renamed = g_string_new(model_text);
    g_assert_cmpuint(g_string_replace(renamed, "name: Llama-3.1-8B\n", "name: BesideLlama\n", 1), ==, 1);
    g_autofree char *model = g_build_filename(sub, "m.yaml", NULL);
    g_autofree char *topo = g_build_filename(sub, "t.yaml", NULL);
    g_autofree char *scenario = g_build_filename(sub, "rel.yaml", NULL);
    g_assert_true(g_file_set_contents(model, renamed->str, -1, NULL));
    g_assert_true(g_file_set_contents(topo, topo_text, -1, NULL));
    g_assert_true(g_file_set_contents(scenario,
                                      "model: m.yaml\n"
                                      "topology: t.yaml\n"
                                      "nodes: 2\n"
                                      "train: {convention: megatron, gpus: 0-7, tp: 8}\n"
                                      "infer: {convention: vllm, gpus: 8-15, tp: 8}\n",
                                      -1, NULL));
    const char *args[] = {"simulate", "--scenario", scenario, "--network", "bottleneck", "-q", NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "BesideLlama");
    run_result_clear(&r);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cli/util/temp-dir-removed", test_temp_dir_removed);
    g_test_add_func("/cli/simulate/default-json", test_default_json);
    g_test_add_func("/cli/simulate/scenario-relative-paths", test_scenario_relative_paths);
    g_test_add_func("/cli/simulate/scenario-overrides-recorded", test_scenario_overrides_recorded);
    g_test_add_func("/cli/simulate/binding-cut-gpu-links", test_binding_cut_gpu_links);
    g_test_add_func("/cli/simulate/layers-header", test_layers_header);
    g_test_add_func("/cli/simulate/failure-restores-outputs", test_failure_restores_replaced_outputs);
    g_test_add_func("/cli/simulate/failure-restores-outputs-other-ways",
                    test_failure_restores_outputs_other_ways);
    g_test_add_func("/cli/simulate/threads-same-output", test_threads_same_output);
    g_test_add_func("/cli/simulate/default-flow-json", test_default_flow_json);
    g_test_add_func("/cli/simulate/relay-steps", test_relay_steps);
    g_test_add_func("/cli/simulate/wire-dtypes-header", test_wire_dtypes_header);
    g_test_add_func("/cli/simulate/strategy-list-formats", test_strategy_list_formats);
    g_test_add_func("/cli/run/mxfp4-refused-first", test_run_mxfp4_refused_first);
    g_test_add_func("/cli/plan/hierarchical-one-domain", test_hierarchical_one_domain);
    g_test_add_func("/cli/simulate/fsdp2-fp8-plans", test_fsdp2_fp8_plans);
    g_test_add_func("/cli/simulate/gpt-oss-mxfp4-vllm", test_gpt_oss_mxfp4_vllm);
    g_test_add_func("/cli/layout/vllm-dense-mesh-label", test_vllm_dense_mesh_label);
    g_test_add_func("/cli/layout/one-expert", test_layout_one_expert);
    g_test_add_func("/cli/plan/fp8-quantised-on-load", test_plan_fp8_quantised_on_load);
    g_test_add_func("/cli/models/mtp-listing", test_models_mtp_listing);
    g_test_add_func("/cli/plan/mxfp4-conversion-odd-rows", test_plan_mxfp4_conversion_odd_rows);
    g_test_add_func("/cli/simulate/gpus-per-domain", test_gpus_per_domain);
    g_test_add_func("/cli/simulate/layer-range-named", test_layer_range_named);
    g_test_add_func("/cli/simulate/small-times-digits", test_small_times_digits);
    g_test_add_func("/cli/simulate/verbose-stderr", test_verbose_stderr);
    g_test_add_func("/cli/simulate/check-reports", test_check_reports);
    g_test_add_func("/cli/simulate/scenario-errors-where", test_scenario_build_errors_where);
    for (guint i = 0; i < G_N_ELEMENTS(scenario_cases); i++) {
        g_autofree char *path =
            g_strdup_printf("/cli/simulate/scenario/%s", scenario_cases[i].scenario);
        g_test_add_data_func(path, &scenario_cases[i], test_shipped_scenario);
    }
    for (guint i = 0; g_test_slow() && i < G_N_ELEMENTS(scenario_full_cases); i++) {
        g_autofree char *path =
            g_strdup_printf("/cli/slow/scenario/%s", scenario_full_cases[i].scenario);
        g_test_add_data_func(path, &scenario_full_cases[i], test_shipped_scenario);
    }
    g_test_add_func("/cli/simulate/bottleneck-json", test_bottleneck_json);
    g_test_add_func("/cli/simulate/messages", test_messages);
    g_test_add_func("/cli/simulate/messages-local-copy-cost", test_messages_local_copy_cost);
    g_test_add_func("/cli/simulate/trace-files", test_simulate_trace_files);
    g_test_add_func("/cli/topology/show", test_topology_show);
    for (guint i = 0; i < G_N_ELEMENTS(cli_cases); i++) {
        g_autofree char *path = g_strdup_printf("/cli/errors/%u", i);
        g_test_add_data_func(path, &cli_cases[i], test_cli_case);
    }
    g_test_add_func("/cli/report/stdout", test_report_stdout);
    g_test_add_func("/cli/topology/list-formats", test_topology_list_formats);
    g_test_add_func("/cli/help", test_help);
    g_test_add_func("/cli/help/builtins", test_help_builtins);
    g_test_add_func("/cli/help/strategies", test_help_strategies);
    g_test_add_func("/cli/locale", test_locale);
    g_test_add_func("/cli/simulate/progress-messages", test_progress_messages);
    g_test_add_func("/cli/report/help-options", test_report_help_options);
    g_test_add_func("/cli/report/sigpipe-temp-dir", test_report_sigpipe_temp_dir);
    g_test_add_func("/cli/simulate/replay-no-bound", test_replay_no_bound);
    g_test_add_func("/cli/models", test_models);
    g_test_add_func("/cli/stdout-write-error", test_stdout_write_error);
    g_test_add_func("/cli/relays-models", test_relays_models);
    for (guint i = 0; i < G_N_ELEMENTS(layout_cases); i++) {
        g_autofree char *path = g_strdup_printf("/cli/layout/json/%s", layout_cases[i].name);
        g_test_add_data_func(path, &layout_cases[i], test_layout_json);
    }
    g_test_add_func("/cli/layout/json/tensor-names", test_layout_json_tensor_names);
    g_test_add_func("/cli/plan/json", test_plan_json);
    g_test_add_func("/cli/plan/model", test_plan_model);
    g_test_add_func("/cli/simulate/scenario-params", test_scenario_params);
    g_test_add_func("/cli/models/zoo", test_models_zoo);
    g_test_add_func("/cli/models/tensors", test_models_tensors);
    g_test_add_func("/cli/models/mismatch", test_models_mismatch);
    g_test_add_func("/cli/model-imports", test_model_imports);
    g_test_add_func("/cli/simulate/stored", test_simulate_stored);
    g_test_add_func("/cli/models/overflow", test_model_overflow);
    g_test_add_func("/cli/output-paths", test_output_paths);
    g_test_add_func("/cli/simulate/tiny-staging", test_tiny_staging);
    g_test_add_data_func("/cli/output-is-shard/index", NULL, test_output_is_shard);
    g_test_add_data_func("/cli/output-is-shard/model-yaml", "yaml", test_output_is_shard);
    g_test_add_func("/cli/help/usage-lines", test_help_usage_lines);
    g_test_add_func("/cli/help/report-format", test_help_report_format);
    g_test_add_func("/cli/simulate/output-write-error", test_output_write_error);
    g_test_add_func("/cli/simulate/bound-leaf-cut", test_bound_leaf_cut);
    g_test_add_func("/cli/singular-counts", test_singular_counts);
    g_test_add_func("/cli/indirect-fifos", test_indirect_fifos);
    g_test_add_func("/cli/interrupt-removes-outputs", test_interrupt_removes_outputs);
    g_test_add_func("/cli/sweep/point-blame", test_sweep_point_blame);
    g_test_add_func("/cli/output/link-targets", test_output_link_targets);
    g_test_add_func("/cli/simulate/last-stage-mtp", test_last_stage_mtp);
    g_test_add_func("/cli/simulate/messages-default-topology", test_messages_default_topology);
    g_test_add_func("/cli/simulate/hierarchical-row-label", test_hierarchical_row_label);
    g_test_add_func("/cli/plan/transfer-kind", test_plan_transfer_kind);
    for (guint i = 0; i < G_N_ELEMENTS(not_text_cases); i++) {
        g_autofree char *name = g_strdup_printf("/cli/not-text/%u", i);
        g_test_add_data_func(name, &not_text_cases[i], test_not_text);
    }
    g_test_add_func("/cli/simulate/same-output-twice", test_same_output_twice);
    g_test_add_func("/cli/simulate/derived-output-collisions", test_derived_output_collisions);
    for (guint i = 0; i < G_N_ELEMENTS(same_as_input_cases); i++) {
        g_autofree char *path = g_strdup_printf("/cli/output-is-input/%u", i);
        g_test_add_data_func(path, &same_as_input_cases[i], test_output_is_input);
    }
    return g_test_run();
}

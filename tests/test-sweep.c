/* test-sweep.c — memory feasibility (analysis/memory.h), the sweep grid, its queries and
 * its determinism across thread counts and MPI ranks (analysis/sweep.h), and the
 * `reshard sweep` command. */
#include "analysis/memory.h"
#include "analysis/sweep.h"
#include "base/data.h"
#include "base/dtype.h"
#include "base/yaml-reader.h"
#include "layout/layout.h"
#include "layout/scenario.h"
#include "topologies/topology.h"

#include "tests/test-util.h"

#include <math.h>
#include <string.h>

static RsTopology *
small_fabric(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = data_path("small-fabric.yaml");
    RsTopology *t = rs_topology_load_file(path, NULL, &error);
    g_assert_no_error(error);
    return t;
}

/* Hand-computed: w [1024, 512] held as f32 on GPU 0 (2,097,152 bytes) served as bf16,
 * sharded S(0) over GPUs 8 and 9 (512 rows each: 524,288 bytes); q [256, 256] held as bf16
 * on GPU 0 (131,072 bytes) served as FP8 e4m3, replicated on 8 and 9 (65,536 bytes each
 * plus its 2 x 2 f32 block scales, 16 bytes, on the inference side only). */
static RsRefit *
make_refit(void)
{
    g_autoptr(GError) error = NULL;
    RsRefit *refit = rs_refit_new();
    const gint64 w_shape[] = {1024, 512};
    const guint32 src_ranks[] = {0};
    g_autoptr(RsLayout) w_src = rs_layout_new_replicated(2, w_shape, src_ranks, 1);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("2", "8,9", &error);
    g_assert_no_error(error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0};
    g_autoptr(RsLayout) w_dst = rs_layout_new_dtensor(2, w_shape, mesh, &s0, 1, &error);
    g_assert_no_error(error);
    RsRefitEntry w = {"w", RS_DTYPE_F32, RS_DTYPE_BF16, NULL, NULL};
    g_assert_true(rs_refit_add_converted(refit, &w, w_src, w_dst, &error));
    const gint64 q_shape[] = {256, 256};
    const guint32 dst_ranks[] = {8, 9};
    g_autoptr(RsLayout) q_src = rs_layout_new_replicated(2, q_shape, src_ranks, 1);
    g_autoptr(RsLayout) q_dst = rs_layout_new_replicated(2, q_shape, dst_ranks, 2);
    RsRefitEntry q = {"q.weight", RS_DTYPE_BF16, RS_DTYPE_FP8_E4M3, NULL, NULL};
    g_assert_true(rs_refit_add_converted(refit, &q, q_src, q_dst, &error));
    g_assert_no_error(error);
    return refit;
}

static void
test_memory_hand_computed(void)
{
    g_autoptr(RsTopology) topo = small_fabric();
    g_autoptr(RsRefit) refit = make_refit();
    g_assert_cmpuint(rs_refit_get_n_tensors(refit), ==, 3); /* w, q.weight, its scales */
    RsMemoryOptions o = {1000, {10, 20}};
    RsMemoryResult m;
    rs_memory_compute(refit, topo, &o, &m);
    const RsMemorySideResult *t = &m.side[RS_MEMORY_TRAIN], *i = &m.side[RS_MEMORY_INFER];
    g_assert_cmpuint(t->n_gpus, ==, 1);
    g_assert_cmpuint(t->max_gpu, ==, 0);
    g_assert_cmpuint(t->weights_bytes, ==, 2097152 + 131072);
    g_assert_cmpuint(t->total_bytes, ==, 2097152 + 131072 + 1000 + 10);
    g_assert_cmpuint(i->n_gpus, ==, 2);
    g_assert_cmpuint(i->max_gpu, ==, 8); /* a tie: the lower GPU */
    g_assert_cmpuint(i->weights_bytes, ==, 524288 + 65536 + 16);
    g_assert_cmpuint(i->total_bytes, ==, 524288 + 65536 + 16 + 1000 + 20);
    g_assert_cmpuint(i->capacity_bytes, ==, G_GUINT64_CONSTANT(1) << 30);
    g_assert_true(m.feasible);
    /* A reserve that leaves less than the weights: infeasible on that side only. */
    o.reserve_bytes[RS_MEMORY_INFER] = (G_GUINT64_CONSTANT(1) << 30) - 524288;
    rs_memory_compute(refit, topo, &o, &m);
    g_assert_true(m.side[RS_MEMORY_TRAIN].feasible);
    g_assert_false(m.side[RS_MEMORY_INFER].feasible);
    g_assert_false(m.feasible);
    g_autofree char *lines = rs_memory_format_lines(&m);
    g_assert_nonnull(strstr(lines, "memory     infer GPU 8: 0.00 GB weights"));
    g_assert_nonnull(strstr(lines, "INFEASIBLE"));
}

/* The case: DeepSeek-V3 BF16 under vLLM tp=8 needs 169.56 GB of weights per GPU,
 * more than an 80 GiB H100 holds; the shipped tp=32 layout fits. As one engine of vLLM
 * dp=32 (--data-parallel-size) the experts' tensor parallelism spans all 256 GPUs: the 58
 * MoE layers' 256 x 3 x 7168 x 2048 expert weights (1,307,817,541,632 bytes) take 1/256
 * each, 5,108,662,272 bytes, beside the 6,083,551,232 bytes of dense weights tp=8 leaves
 * (169,560,743,936 - 1,307,817,541,632 / 8): 11,192,213,504 bytes, which fit. */
static void
test_memory_deepseek_tp8(void)
{
    const struct {
        gint64 tp, replicas, dp;
        guint64 weights_bytes;
        gboolean feasible;
    } cases[] = {
        {8, 32, 1, G_GUINT64_CONSTANT(169560743936), FALSE},
        {32, 8, 1, 0, TRUE},
        {8, 1, 32, G_GUINT64_CONSTANT(11192213504), TRUE},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autoptr(GError) error = NULL;
        g_autofree char *path = rs_data_find("scenarios", "deepseek-v3-h100", &error);
        g_autoptr(RsScenario) s = rs_scenario_load_file(path, &error);
        g_assert_no_error(error);
        g_assert_true(rs_convention_set(s->infer, "tp", cases[c].tp, &error));
        g_assert_true(rs_convention_set(s->infer, "replicas", cases[c].replicas, &error));
        g_assert_true(rs_convention_set(s->infer, "dp", cases[c].dp, &error));
        RsScenarioBuild b;
        g_assert_true(rs_scenario_build(s, &b, &error));
        g_assert_no_error(error);
        RsMemoryOptions o = {0, {0, 0}};
        RsMemoryResult m;
        rs_memory_compute(b.refit, b.topology, &o, &m);
        if (cases[c].weights_bytes)
            g_assert_cmpuint(m.side[RS_MEMORY_INFER].weights_bytes, ==, cases[c].weights_bytes);
        g_assert_cmpint(m.side[RS_MEMORY_INFER].feasible, ==, cases[c].feasible);
        g_assert_true(m.side[RS_MEMORY_TRAIN].feasible);
        rs_scenario_build_clear(&b);
    }
}

/* --- the grid --- */

static void
test_grid_points(void)
{
    g_autoptr(GError) error = NULL;
    RsSweepGrid g;
    rs_sweep_grid_init(&g);
    const gint64 tps[] = {8, 16, 32}, gpus[] = {64, 80, 256};
    g_array_append_vals(g.tp, tps, 3);
    g_array_append_vals(g.gpus, gpus, 3);
    gboolean ep[] = {FALSE, TRUE};
    g_array_append_vals(g.ep, ep, 2);
    g_autoptr(GArray) pts = rs_sweep_make_points(&g, &error);
    g_assert_no_error(error);
    /* 80 is a multiple of 8 and 16 (dp 10, 5) but not of 32: 8 counts x 2 ep. */
    g_assert_cmpuint(pts->len, ==, 16);
    const RsSweepPoint *p = (const RsSweepPoint *)pts->data;
    g_assert_cmpint(p[0].tp, ==, 8);
    g_assert_cmpint(p[0].dp, ==, 8);
    g_assert_cmpint(p[0].ep, ==, 0);
    g_assert_cmpint(p[1].ep, ==, 1);
    g_assert_cmpint(p[3].dp, ==, 10);
    g_assert_cmpint(p[14].tp, ==, 32);
    g_assert_cmpint(p[14].dp, ==, 8);
    g_assert_cmpstr(p[15].strategy, ==, "auto");
    g_assert_cmpuint(p[15].index, ==, 15);
    /* No count divisible: no point. */
    g_array_set_size(g.gpus, 0);
    gint64 odd = 100;
    g_array_append_val(g.gpus, odd);
    g_array_set_size(g.tp, 1);
    g_array_index(g.tp, gint64, 0) = 64;
    g_autoptr(GArray) none = rs_sweep_make_points(&g, &error);
    g_assert_null(none);
    g_assert_error(error, RS_SWEEP_ERROR, RS_SWEEP_ERROR_INVALID);
    rs_sweep_grid_clear(&g);
}

static void
test_grid_file(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = write_temp("grid.yaml", "tp: [8, 16]\ngpus: 128\nep: [false, true]\n"
                                                    "nic_bw: [400 Gbit/s, 800 Gbit/s]\n"
                                                    "strategy: [direct, auto]\n");
    RsSweepGrid g;
    rs_sweep_grid_init(&g);
    g_assert_true(rs_sweep_grid_load_file(path, &g, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(g.tp->len, ==, 2);
    g_assert_cmpuint(g.gpus->len, ==, 1);
    g_assert_cmpuint(g.ep->len, ==, 2);
    g_assert_cmpfloat(g_array_index(g.nic_bw, double, 1), ==, 100e9);
    g_assert_cmpstr(g.strategies->pdata[1], ==, "auto");
    rs_sweep_grid_clear(&g);
    g_autofree char *bad = write_temp("bad.yaml", "tp: [8, x]\n");
    rs_sweep_grid_init(&g);
    g_assert_false(rs_sweep_grid_load_file(bad, &g, &error));
    g_assert_error(error, RS_YAML_ERROR, RS_YAML_ERROR_VALUE);
    g_assert_nonnull(strstr(error->message, "bad.yaml:1:"));
    g_assert_nonnull(strstr(error->message, "tp"));
    g_clear_error(&error);
    rs_sweep_grid_clear(&g);
    g_autofree char *unknown = write_temp("unknown.yaml", "tensor_parallel: [8]\n");
    rs_sweep_grid_init(&g);
    g_assert_false(rs_sweep_grid_load_file(unknown, &g, &error));
    g_assert_error(error, RS_YAML_ERROR, RS_YAML_ERROR_UNKNOWN_KEY);
    g_clear_error(&error);
    rs_sweep_grid_clear(&g);
    /* ep takes off/on as the flag does (and false/true): its error named only the latter. */
    g_autofree char *ep = write_temp("ep.yaml", "ep: [off, maybe]\n");
    rs_sweep_grid_init(&g);
    g_assert_false(rs_sweep_grid_load_file(ep, &g, &error));
    g_assert_error(error, RS_YAML_ERROR, RS_YAML_ERROR_VALUE);
    g_assert_nonnull(strstr(error->message, "ep.yaml:1:"));
    g_assert_nonnull(strstr(error->message, "\"maybe\": expected off or on (or false or true)"));
    rs_sweep_grid_clear(&g);
}

/* --- the queries on hand-made results --- */

static void
set_result(RsSweepResult *r, guint gpus, double time_s, gboolean feasible)
{
    memset(r, 0, sizeof *r);
    r->ok = TRUE;
    r->n_infer_gpus = gpus;
    r->time_s = time_s;
    r->memory.feasible = feasible;
}

static void
test_queries(void)
{
    RsSweepResult r[7];
    set_result(&r[0], 64, 2.0, TRUE);
    set_result(&r[1], 64, 1.5, TRUE);
    set_result(&r[2], 128, 0.9, FALSE); /* the fastest, but does not fit */
    set_result(&r[3], 128, 1.2, TRUE);
    set_result(&r[4], 256, 1.3, TRUE); /* more GPUs, slower: not on the front */
    set_result(&r[5], 256, 0.8, TRUE);
    set_result(&r[6], 32, 0.5, TRUE);
    r[6].ok = FALSE; /* a layout that was refused */
    g_autoptr(GArray) under = rs_sweep_select(r, 7, RS_SWEEP_SELECT_UNDER_TARGET, 1.3);
    const guint want_under[] = {3, 5, 4};
    g_assert_cmpuint(under->len, ==, 3);
    for (guint i = 0; i < 3; i++)
        g_assert_cmpuint(g_array_index(under, guint, i), ==, want_under[i]);
    g_autoptr(GArray) fastest = rs_sweep_select(r, 7, RS_SWEEP_SELECT_FASTEST, 0);
    const guint want_fastest[] = {1, 3, 5};
    g_assert_cmpuint(fastest->len, ==, 3);
    for (guint i = 0; i < 3; i++)
        g_assert_cmpuint(g_array_index(fastest, guint, i), ==, want_fastest[i]);
    set_result(&r[5], 256, 1.25, TRUE); /* slower than 128 GPUs' 1.2 s: off the front */
    g_autoptr(GArray) pareto = rs_sweep_select(r, 7, RS_SWEEP_SELECT_PARETO, 0);
    g_assert_cmpuint(pareto->len, ==, 2);
    g_assert_cmpuint(g_array_index(pareto, guint, 0), ==, 1);
    g_assert_cmpuint(g_array_index(pareto, guint, 1), ==, 3);
    g_autoptr(GArray) all = rs_sweep_select(r, 7, RS_SWEEP_SELECT_ALL, 0);
    g_assert_cmpuint(all->len, ==, 7);
}

static void
test_variant_round_trip(void)
{
    RsSweepResult r = {0}, back;
    r.ok = TRUE;
    r.infer_layout = g_strdup("vllm tp=8 dp=4");
    r.n_train_gpus = 256;
    r.n_infer_gpus = 32;
    r.n_nodes = 36;
    r.topology_name = g_strdup("dgx-h100");
    r.nic_bw_bytes_per_s = 50e9;
    r.dtype = g_strdup("bf16");
    r.chosen = g_strdup("hierarchical+relays");
    r.time_s = 0.966;
    r.bound_s = 0.887;
    r.bytes_moved = 11710800000;
    r.network_bytes = 10785900000;
    r.n_messages = 127045;
    r.memory.side[RS_MEMORY_INFER].max_gpu = 256;
    r.memory.side[RS_MEMORY_INFER].weights_bytes = 49e9;
    r.memory.side[RS_MEMORY_INFER].feasible = TRUE;
    r.memory.side[RS_MEMORY_TRAIN].feasible = TRUE;
    r.memory.side[RS_MEMORY_INFER].capacity_bytes = 85899345920;
    r.memory.side[RS_MEMORY_INFER].n_gpus = 32;
    r.memory.side[RS_MEMORY_TRAIN].n_gpus = 256;
    r.infer_tp = 8;
    r.infer_dp = 2;
    r.infer_replicas = 2;
    r.infer_ep = 1;
    g_autoptr(GVariant) v = g_variant_ref_sink(rs_sweep_result_to_variant(&r));
    rs_sweep_result_from_variant(v, &back);
    g_assert_true(back.ok);
    g_assert_null(back.error);
    g_assert_cmpstr(back.infer_layout, ==, r.infer_layout);
    g_assert_cmpstr(back.chosen, ==, r.chosen);
    g_assert_cmpuint(back.n_nodes, ==, 36);
    g_assert_cmpfloat(back.time_s, ==, 0.966);
    g_assert_cmpuint(back.n_messages, ==, 127045);
    g_assert_cmpuint(back.memory.side[RS_MEMORY_INFER].max_gpu, ==, 256);
    g_assert_cmpuint(back.memory.side[RS_MEMORY_INFER].n_gpus, ==, 32);
    g_assert_cmpuint(back.memory.side[RS_MEMORY_TRAIN].n_gpus, ==, 256);
    g_assert_true(back.memory.feasible);
    g_assert_cmpint(back.infer_tp, ==, 8);
    g_assert_cmpint(back.infer_dp, ==, 2);
    g_assert_cmpint(back.infer_replicas, ==, 2);
    g_assert_cmpint(back.infer_ep, ==, 1);
    rs_sweep_result_clear(&r);
    rs_sweep_result_clear(&back);
}

/* --- a sweep of the library: nodes derived, and the same table whatever the threads --- */

static RsScenario *
scaled_scenario(gpointer data, GError **error)
{
    g_autofree char *path = rs_data_find("scenarios", "deepseek-v3-h100", error);
    if (path == NULL)
        return NULL;
    RsScenario *s = rs_scenario_load_file(path, error);
    if (s != NULL) {
        s->scale = 16;
        s->has_layer_range = TRUE;
        s->first_layer = s->last_layer = 29;
    }
    return s;
}

static char *
sweep_csv(guint n_threads, RsSweepResult **results_out, GArray **points_out)
{
    g_autoptr(GError) error = NULL;
    RsSweepGrid g;
    rs_sweep_grid_init(&g);
    const gint64 tps[] = {4, 8, 16}, gpus[] = {16, 32, 64};
    g_array_append_vals(g.tp, tps, 3);
    g_array_append_vals(g.gpus, gpus, 3);
    g_ptr_array_add(g.strategies, g_strdup("direct"));
    GArray *pts = rs_sweep_make_points(&g, &error);
    rs_sweep_grid_clear(&g);
    g_assert_no_error(error);
    RsSweepOptions o = {0};
    o.new_scenario = scaled_scenario;
    o.n_threads = n_threads;
    o.n_ranks = 1;
    RsSweepResult *res = g_new0(RsSweepResult, pts->len);
    g_assert_true(rs_sweep_run(pts, &o, res, &error));
    g_assert_no_error(error);
    GString *csv = g_string_new(NULL);
    rs_sweep_report((const RsSweepPoint *)pts->data, res, pts->len, 0, RS_SWEEP_SELECT_ALL,
                    RS_FORMAT_CSV, csv);
    *results_out = res;
    *points_out = pts;
    return g_string_free(csv, FALSE);
}

static void
free_results(RsSweepResult *res, GArray *pts)
{
    for (guint i = 0; i < pts->len; i++)
        rs_sweep_result_clear(&res[i]);
    g_free(res);
    g_array_unref(pts);
}

static void
test_sweep_threads(void)
{
    RsSweepResult *r1, *r2;
    GArray *p1, *p2;
    g_autofree char *one = sweep_csv(1, &r1, &p1);
    g_autofree char *two = sweep_csv(2, &r2, &p2);
    g_assert_cmpstr(one, ==, two);
    g_assert_cmpuint(p1->len, ==, 9);
    /* 256 training GPUs fill 32 nodes of 8; 16 inference GPUs start on node 32: 34 nodes. */
    g_assert_true(r1[0].ok);
    g_assert_cmpuint(r1[0].n_infer_gpus, ==, 16);
    g_assert_cmpuint(r1[0].n_nodes, ==, 34);
    g_assert_cmpuint(r1[2].n_infer_gpus, ==, 64);
    g_assert_cmpuint(r1[2].n_nodes, ==, 40);
    g_assert_cmpstr(r1[0].infer_layout, ==, "vllm tp=4 dp=4 pp=1 replicas=1");
    g_assert_cmpstr(r1[0].chosen, ==, "direct");
    g_assert_true(g_str_has_prefix(
        one, "point,infer_layout,tp,pp,dp,replicas,ep,infer_gpus,nodes,topology,"
             "nic_bw_bytes_per_s,infer_dtype,strategy,chosen,bytes_moved,network_bytes,messages,"
             "time_s,bound_s,efficiency,infer_gpu_bytes,train_gpu_bytes,gpu_memory_bytes,"
             "feasible\n0,vllm tp=4 dp=4 pp=1 replicas=1,4,1,4,1,false,16,34,dgx-h100,5e+10,"
             "bf16,direct,direct,"));
    /* The sizes the sweep did not set are the resolved ones (they were empty: ep here, and
     * dp whenever it was derived from the GPU count). */
    g_assert_cmpint(r1[2].infer_dp, ==, 16);
    g_assert_cmpint(r1[2].infer_ep, ==, 0);
    /* Every point bounded: time at or above its bound. */
    for (guint i = 0; i < p1->len; i++)
        g_assert_cmpfloat(r1[i].time_s, >=, r1[i].bound_s);
    free_results(r1, p1);
    free_results(r2, p2);
}

/* --- the command --- */

static const char *const cli_grid[] = {"sweep",      "--scale",  "16",
                                       "--layers",   "29-30",    "--tp",
                                       "1,2,4,8,16", "--gpus",   "16,32,64,128,256",
                                       "--ep",       "off,on",   "--strategies",
                                       "direct",     "--format", "csv",
                                       "-q",         NULL};

static char *
cli_sweep(const char *threads, guint mpi_np)
{
    GPtrArray *args = g_ptr_array_new();
    for (guint i = 0; cli_grid[i]; i++)
        g_ptr_array_add(args, (gpointer)cli_grid[i]);
    g_ptr_array_add(args, "-j");
    g_ptr_array_add(args, (gpointer)threads);
    g_ptr_array_add(args, NULL);
    RunResult r = run_reshard_full((const char *const *)args->pdata, NULL, mpi_np);
    g_ptr_array_unref(args);
    if (r.exit_code != 0)
        g_printerr("%s", r.err);
    assert_exit_code(&r, 0);
    char *out = g_strdup(r.out);
    run_result_clear(&r);
    return out;
}

/* A 50-point sweep: the same CSV on 1 and 2 threads, and under mpirun with 4 processes. */
static void
test_cli_sweep_deterministic(void)
{
    g_autofree char *one = cli_sweep("1", 0);
    g_autofree char *two = cli_sweep("2", 0);
    g_assert_cmpstr(one, ==, two);
    g_auto(GStrv) lines = g_strsplit(one, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 52); /* header, 50 points, the final "" */
    if (g_getenv("MPIRUN") == NULL || *g_getenv("MPIRUN") == '\0') {
        g_test_message("no MPIRUN: the MPI case is left out");
        return;
    }
    g_autofree char *mpi = cli_sweep("1", 4);
    g_assert_cmpstr(one, ==, mpi);
}

/* Under mpirun, a rank that fails (here rank 1 of an MPMD launch, given a scenario file
 * that does not exist) reports to rank 0 at the gather: rank 0 prints the failure naming
 * the rank and the job exits 2, at once, instead of rank 0 waiting for results that never
 * come (it hung there, with rank 1 in MPI_Finalize). */
static void
test_cli_sweep_mpi_rank_fails(void)
{
    const char *mpirun = g_getenv("MPIRUN");
    if (mpirun == NULL || *mpirun == '\0') {
        g_test_message("no MPIRUN: left out");
        return;
    }
    const char *bin = g_getenv("RESHARD_BIN");
    const char *argv[] = {"timeout",
                          "120",
                          mpirun,
                          "--oversubscribe",
                          "--allow-run-as-root",
                          "-np",
                          "1",
                          bin,
                          "sweep",
                          "--scenario",
                          "qwen3-30b-colocated",
                          "--tp",
                          "2,4",
                          "--gpus",
                          "64",
                          "-q",
                          ":",
                          "-np",
                          "1",
                          bin,
                          "sweep",
                          "--scenario",
                          "/nonexistent/missing.yaml",
                          "--tp",
                          "2,4",
                          "--gpus",
                          "64",
                          "-q",
                          NULL};
    g_autofree char *out = NULL, *err = NULL;
    gint status = 0;
    g_autoptr(GError) error = NULL;
    gint64 start = g_get_monotonic_time();
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                               &err, &status, &error));
    g_assert_no_error(error);
    double elapsed_s = (g_get_monotonic_time() - start) / 1e6;
    g_test_message("a failing rank: exit %d after %.2f s", WEXITSTATUS(status), elapsed_s);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 2);
    assert_contains(err, "reshard sweep: rank 1: scenario file \"/nonexistent/missing.yaml\": "
                         "not found");
    g_assert_cmpstr(out, ==, "");
}

/* Stderr a pipe (not a terminal): the start line and no \r-drawn bar (it wrote one
 * \r line per point into a redirected log). */
static void
test_cli_sweep_no_bar_off_tty(void)
{
    const char *args[] = {"sweep",  "--scale",  "16",     "--layers", "29-30",
                          "--tp",   "1,2",      "--gpus", "16",       "--strategies",
                          "direct", "--format", "csv",    NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.err, "sweeping 2 points of deepseek-v3-h100 (with --scale, --layers from "
                           "the command line) ...");
    g_assert_null(strchr(r.err, '\r'));
    g_assert_null(strstr(r.err, "points/s"));
    run_result_clear(&r);
}

/* A hand-written topology that states no gpu.memory: its defaults are said once (on no
 * other command), and the points' memory is "not checked", neither "of 0 GB" nor "fits". */
static void
test_cli_sweep_unknown_memory(void)
{
    g_autofree char *topo =
        write_temp("sweep-w4.yaml", "name: w\nnodes: 4\ngpus_per_node: 2\n"
                                    "nvlink: {bandwidth: 100 GB/s}\n"
                                    "nic: {bandwidth: 10 GB/s, efficiency: 0.5, latency: 1 us}\n");
    /* The text run sweeps tp 1 and 2 over the topology axis too; the JSON run tp 1. */
    const char *args[] = {"sweep",    "--model",      "llama-3.1-8b", "--topology", topo,
                          "--train",  "megatron:tp=2", "--train-gpus", "0-3",       "--gpus",
                          "2",        "--strategies", "direct",       "--tp",       "1,2",
                          "--topologies", topo,       NULL,           NULL,         NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    /* gpu, nvlink.efficiency, nvlink.latency, software.message_overhead, fabric */
    g_assert_cmpuint(count_occurrences(r.err, "reshard sweep: warning: "), ==, 5);
    assert_contains(r.err, "sweep-w4.yaml: nvlink.latency not given: taking 0 us\n");
    assert_contains(r.out, "sweep      2 points: 2 planned, 0 fit in GPU memory, 2 not checked "
                           "(their topology states no gpu.memory)");
    run_result_clear(&r);
    args[14] = "1";
    args[15] = "--format";
    args[16] = "json";
    args[17] = "-q";
    r = run_reshard(args);
    assert_exit_code(&r, 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *root = parse_json(parser, r.out);
    JsonObject *point =
        json_array_get_object_element(json_object_get_array_member(root, "points"), 0);
    g_assert_true(json_object_get_null_member(point, "gpu_memory_bytes"));
    g_assert_true(json_object_get_null_member(point, "feasible"));
    /* tp=1: each inference GPU holds the 8,030,261,248 bf16 parameters (16,060,522,496
     * bytes) and the 1 GiB of staging a topology without GPU memory gets. */
    g_assert_cmpint(json_object_get_int_member(point, "infer_gpu_bytes"), ==,
                    16060522496 + 1073741824);
    run_result_clear(&r);
}

/* The tp=8 DeepSeek-V3 layout (the scenario's 8 engine replicas, now of tp=8) is reported
 * infeasible in the table and never recommended. On 256 GPUs (--gpus) a point is one
 * engine of vLLM dp = 256 / tp, whose experts span all 256 GPUs: tp=8 then fits
 * (test_memory_deepseek_tp8: 11.19 GB of weights a GPU). */
static void
test_cli_sweep_infeasible(void)
{
    const char *args[] = {"sweep", "--tp", "8,32", "--strategies", "direct", "--target",
                          "10s",   "-q",   NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "sweep      2 points: 2 planned, 1 fit in GPU memory");
    assert_contains(r.out, "under 10 s: fewest GPUs 256, vllm tp=32 replicas=8");
    g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
    guint n_tp8 = 0;
    for (guint i = 0; lines[i]; i++)
        if (strstr(lines[i], "vllm tp=8 replicas=8") != NULL) {
            n_tp8++;
            g_assert_true(g_str_has_suffix(lines[i], " no"));
        }
    g_assert_cmpuint(n_tp8, ==, 1); /* the points table only: in no query */
    run_result_clear(&r);
    const char *one_engine[] = {"sweep",  "--tp",     "8,32", "--gpus", "256", "--strategies",
                                "direct", "--target", "10s",  "-q",     NULL};
    r = run_reshard(one_engine);
    assert_exit_code(&r, 0);
    assert_contains(r.out, "sweep      2 points: 2 planned, 2 fit in GPU memory");
    assert_contains(r.out, "vllm tp=8 dp=32 pp=1 replicas=1 ");
    run_result_clear(&r);
    const char *warn[] = {"simulate", "--network", "bottleneck", "--strategy", "direct",
                          "--infer",  "vllm:tp=8", "--format",   "json",       NULL};
    r = run_reshard(warn);
    assert_exit_code(&r, 0);
    assert_contains(r.err, "warning: the inference layout does not fit in GPU memory: GPU 256 "
                           "needs 174.93 GB (169.56 GB weights + 5.37 GB staging + 0.00 GB "
                           "reserve) of 85.90 GB");
    assert_contains(r.out, "\"weights_bytes\" : 169560743936");
    run_result_clear(&r);
    /* CSV: every row says whether the scenario fits (its last column). */
    const char *csv[] = {"simulate",  "--network", "bottleneck", "--strategy", "direct", "--infer",
                         "vllm:tp=8", "--format",  "csv",        "-q",         NULL};
    r = run_reshard(csv);
    assert_exit_code(&r, 0);
    assert_contains(r.out, ",variant,memory_feasible\ndirect,");
    g_assert_true(g_str_has_suffix(r.out, ",false\n"));
    run_result_clear(&r);
}

/* A scenario whose inference layout gives no copy count (vllm's replicas): every sweep
 * point keeps the scenario's inference GPUs where tp x pp divides them (the point that
 * changes nothing is the scenario; it took 1 replica, 4 of the 8 GPUs), and only a tp that
 * does not divide them grows the count. */
static void
test_cli_sweep_scenario_dp(void)
{
    g_autofree char *path = write_temp("l8.yaml", "name: l8\n"
                                                  "model: llama-3.1-8b\n"
                                                  "dtype: bf16\n"
                                                  "topology: dgx-h100\n"
                                                  "nodes: 2\n"
                                                  "train: {convention: megatron, gpus: 0-7, tp: 2, "
                                                  "pp: 2}\n"
                                                  "infer: {convention: vllm, gpus: 8-15, tp: 4}\n");
    const char *args[] = {"sweep", "--scenario", path, "--tp", "2,4,16", "--network",
                          "bottleneck", "--format", "csv", "-q", NULL};
    RunResult r = run_reshard(args);
    assert_exit_code(&r, 0);
    /* point, layout (replicas derived from the GPUs), tp, pp, dp (vLLM's data-parallel
     * size: 1), replicas (tp × pp × dp × replicas = the inference GPUs), ep, inference
     * GPUs, nodes, topology */
    assert_contains(r.out, "\n0,vllm tp=2 replicas=4,2,1,1,4,false,8,2,dgx-h100,");
    assert_contains(r.out, "\n1,vllm tp=4 replicas=2,4,1,1,2,false,8,2,dgx-h100,");
    assert_contains(r.out, "\n2,vllm tp=16 replicas=1,16,1,1,1,false,16,3,dgx-h100,");
    run_result_clear(&r);
    /* sglang's dp-attention groups share tp's ranks: 16 GPUs at tp=8 are refused as
     * simulate refuses them (the convention derives dp; a dp=2 set by the sweep would have
     * changed the layout's meaning, and dp=1 on 8 GPUs swept a layout the scenario is not). */
    g_autofree char *sg = write_temp("sg.yaml", "name: sg\n"
                                                "model: qwen3-30b-a3b\n"
                                                "dtype: bf16\n"
                                                "topology: dgx-h100\n"
                                                "nodes: 4\n"
                                                "train: {convention: megatron, gpus: 0-15, tp: 2, "
                                                "pp: 2, ep: 4}\n"
                                                "infer: {convention: sglang, gpus: 16-31, tp: 8, "
                                                "dp-attention: true}\n");
    const char *sg_args[] = {"sweep", "--scenario", sg, "--network", "bottleneck", "--format",
                             "csv", "-q", NULL};
    r = run_reshard(sg_args);
    assert_exit_code(&r, 2);
    assert_contains(r.err, "sg.yaml:7:8: infer: sglang tp=8 dp=1 dp-attention: tp (dp-attention "
                           "shares its ranks) = 8 ranks, but 16 GPUs are given");
    run_result_clear(&r);
}

static void
test_cli_sweep_errors(void)
{
    const struct {
        const char *args[8];
        const char *message;
    } cases[] = {
        {{"sweep", "--tp", "0", NULL}, "--tp"},
        /* Every point refused (32 heads, tp=64): exit 2 with a summary, not 0. */
        {{"sweep", "--scenario", "qwen3-30b-colocated", "--tp", "64", "--gpus", "64", NULL},
         "none of the 1 points could be planned (point 0: "},
        {{"sweep", "--strategies", "fast", NULL}, "--strategies: unknown strategy \"fast\""},
        /* A bad dtype or topology failed only its points (exit 1, or 0 beside good ones);
         * a value given twice swept the same points twice. */
        {{"sweep", "--infer-dtypes", "bf16,bf17", NULL}, "--infer-dtypes: unknown dtype \"bf17\""},
        {{"sweep", "--topologies", "dgx-h100,nowhere", NULL},
         "--topologies: unknown topology \"nowhere\""},
        {{"sweep", "--tp", "4,4", NULL}, "--tp: 4 given twice"},
        {{"sweep", "--strategies", "auto,direct,auto", NULL}, "--strategies: \"auto\" given twice"},
        {{"sweep", "--tp", "64", "--gpus", "100", NULL}, "the grid has no point"},
        {{"sweep", "--select", "under-target", "--format", "csv", NULL},
         "--select under-target needs --target"},
        /* A selection the table or JSON ignored; a dp axis beside gpus dropped silently. */
        {{"sweep", "--select", "pareto", "--format", "json", NULL},
         "--select applies to --format csv"},
        {{"sweep", "--tp", "4", "--gpus", "8", "--dp", "3", NULL},
         "dp and gpus are one axis given twice"},
        {{"sweep", "--infer-gpus", "0-7", NULL}, "--infer-gpus does not apply to a sweep"},
        {{"sweep", "--ep", "maybe", NULL}, "--ep: \"maybe\": expected off or on"},
        {{"sweep", "--infer-memory-reserve", "lots", NULL}, "--infer-memory-reserve: "},
        {{"run", "--shape", "8x8", "--infer-memory-reserve", "8GB", NULL},
         "--infer-memory-reserve applies to simulate, sweep and report"},
        {{"plan", "--shape", "8x8", "--train-memory-reserve", "8GB", NULL},
         "--train-memory-reserve applies to simulate, sweep and report"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        RunResult r = run_reshard(cases[i].args);
        assert_exit_code(&r, 2);
        assert_contains(r.err, cases[i].message);
        run_result_clear(&r);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sweep/memory/hand-computed", test_memory_hand_computed);
    g_test_add_func("/sweep/memory/deepseek-v3-tp8", test_memory_deepseek_tp8);
    g_test_add_func("/sweep/grid/points", test_grid_points);
    g_test_add_func("/sweep/grid/file", test_grid_file);
    g_test_add_func("/sweep/queries", test_queries);
    g_test_add_func("/sweep/variant", test_variant_round_trip);
    g_test_add_func("/sweep/run/threads", test_sweep_threads);
    g_test_add_func("/sweep/cli/deterministic", test_cli_sweep_deterministic);
    g_test_add_func("/sweep/cli/infeasible", test_cli_sweep_infeasible);
    g_test_add_func("/sweep/cli/unknown-memory", test_cli_sweep_unknown_memory);
    g_test_add_func("/sweep/cli/no-bar-off-tty", test_cli_sweep_no_bar_off_tty);
    g_test_add_func("/sweep/cli/errors", test_cli_sweep_errors);
    g_test_add_func("/sweep/cli/scenario-dp", test_cli_sweep_scenario_dp);
    g_test_add_func("/sweep/cli/mpi-rank-fails", test_cli_sweep_mpi_rank_fails);
    return g_test_run();
}

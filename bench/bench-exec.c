/* bench-exec.c — the executor against the prediction, and large messages against memcpy.
 *
 * For 4 ranks (training and inference colocated on ranks 0-3) and 8 ranks (training on 0-3,
 * inference on 4-7): calibrate the host transport in this process (reshard calibrate with
 * K = 4, the ranks receiving at once in both layouts; its copy sweep gives the topology's
 * copy rates), then for a scaled DeepSeek-V3 and a scaled Qwen3-30B-A3B under each
 * strategy, plan on the calibrated topology, run the refit (validated) several times and
 * print the median measured time next to the first-order prediction of the same plan
 * (rs_cost_estimate_full: links, copies by run length, fixed costs), with the relative
 * error, and beside it the prediction of the same points fitted without the chunk term
 * (exec/calibrate.h: overhead per message and bandwidth only), the model before it; the
 * summary gives the median |error| and the cases within 20% of both. Also prints single-thread memcpy
 * bandwidth and one large message through the executor, measured in the same run, and
 * their ratio. Prints ratios and figures; it asserts nothing about speed (exit 3 only when
 * a validation fails). Run it on a quiet machine: other processes on the cores change
 * every figure (the load average is printed). */
#include "base/stats.h"
#include "exec/calibrate.h"
#include "sim/cost.h"
#include "layout/scenario.h"

#include "rs-config.h"

#include <locale.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    const char *label;
    const char *model; /* shipped name or path relative to the source tree */
    guint scale;
    gint first_layer, last_layer;
} BenchModel;

typedef struct {
    const char *label;
    guint n_ranks;
    const char *train, *train_gpus, *infer, *infer_gpus;
} BenchLayout;

/* Scales that keep the rows a tensor-parallel split of the experts leaves (the down
 * projection split on its last dim over tp=4) at 128 and 192 bytes; full-size models have
 * 1 KiB rows and more. --scale 16 leaves 64-byte rows, whose strided copies cost several
 * times a contiguous copy on a CPU: the --fine option runs those too. Layers 29-30 and
 * 23-24 sit on both sides of the pipeline-stage boundary (pp=2), so both stages send. */
static const BenchModel models[] = {
    {"DeepSeek-V3 1/8 layers 29-30", "deepseek-v3", 8, 29, 30},
    {"Qwen3-30B-A3B 1/2 layers 23-24", "qwen3-30b-a3b", 2, 23, 24},
};

static const BenchModel fine_models[] = {
    {"DeepSeek-V3 1/16 layers 29-30", "deepseek-v3", 16, 29, 30},
    {"Qwen3-30B-A3B 1/4 layers 23-24", "qwen3-30b-a3b", 4, 23, 24},
};

static const BenchLayout layouts[] = {
    {"4 ranks, colocated", 4, "megatron:tp=1,pp=2,ep=2", "0-3", "vllm:tp=4", "0-3"},
    {"8 ranks, 0-3 -> 4-7", 8, "megatron:tp=1,pp=2,ep=2", "0-3", "vllm:tp=4", "4-7"},
};

static gint opt_runs = 5;
static gboolean opt_quick;
static gboolean opt_fine;

static GOptionEntry entries[] = {
    {"runs", 'r', 0, G_OPTION_ARG_INT, &opt_runs, "Measured runs per case (median; default 5)",
     "N"},
    {"quick", 0, 0, G_OPTION_ARG_NONE, &opt_quick, "One model, smaller calibration", NULL},
    {"fine", 0, 0, G_OPTION_ARG_NONE, &opt_fine,
     "Also run the models scaled further (64- and 96-byte rows)", NULL},
    {NULL},
};

static double
load_average(void)
{
    double load = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fscanf(f, "%lf", &load) != 1)
            load = NAN;
        fclose(f);
    }
    return load;
}

/* Prints the median |error| of @errors and how many are within 20%. */
static void
print_error_summary(const char *what, const GArray *errors)
{
    g_autoptr(GArray) abs_errors = g_array_new(FALSE, FALSE, sizeof(double));
    guint within = 0;
    for (guint i = 0; i < errors->len; i++) {
        double e = fabs(g_array_index(errors, double, i));
        g_array_append_val(abs_errors, e);
        within += e <= 0.20;
    }
    printf("%s: median |error| %.1f%%, %u of %u cases within 20%%\n", what,
           100 * rs_stats_median((const double *)abs_errors->data, abs_errors->len), within,
           errors->len);
}

static void
die(const char *what, const GError *error)
{
    g_printerr("bench-exec: %s: %s\n", what, error->message);
    exit(1);
}

/* What the cases accumulate: the table, the prediction errors and the references. */
typedef struct {
    RsTransport *transport;
    char *dir; /* temporary folder holding host.yaml */
    GString *table;
    GArray *errors, *fine_errors; /* double: (predicted - measured) / measured */
    GArray *errors_2term;         /* the same with the two-term fit (no chunk overhead) */
    RsTopology *topo_2term;       /* that fit's topology, for the current layout */
    double memcpy_bw, large_bw;
    guint64 large_bytes;
    int exit_code;
} Bench;

/* Stage: calibrates the host transport for @lay (layout @li) and writes its topology to
 * @topo_path; the first layout's references are kept. */
static void
calibrate_layout(Bench *b, guint li, const char *topo_path)
{
    const BenchLayout *lay = &layouts[li];
    g_autoptr(GError) error = NULL;
    RsCalibrateOptions copts = {.n_ranks = lay->n_ranks, .concurrency = 4,
                                .n_runs = opt_quick ? 3 : 5,
                                .reference_bytes = li == 0 ? 256 << 20 : 0};
    RsCalibration cal;
    fprintf(stderr, "calibrating %u ranks ...\n", lay->n_ranks);
    if (!rs_calibrate_run(b->transport, &copts, &cal, &error))
        die("calibration", error);
    if (li == 0) {
        b->memcpy_bw = cal.memcpy_bytes_per_s;
        b->large_bw = cal.large_bytes_per_s;
        b->large_bytes = cal.reference_bytes;
    }
    printf("calibration, %u ranks: K=%u overhead %.2f us, %.2f us per chunk of %" G_GUINT64_FORMAT
           " B, bandwidth %.3f GB/s per rank, fit error RMS %.1f%% max %.1f%%\n",
           lay->n_ranks, cal.concurrency, cal.overhead_s * 1e6, cal.chunk_overhead_s * 1e6,
           cal.chunk_bytes, cal.bw_bytes_per_s / 1e9, 100 * cal.rms_error, 100 * cal.max_error);
    g_autofree char *yaml = rs_calibration_to_topology(&cal, "bench-host", "bench-exec");
    if (!g_file_set_contents(topo_path, yaml, -1, &error))
        die("topology", error);
    /* The same points fitted without the chunk term: the model before it, compared in the
     * same run. */
    rs_calibration_fit_terms(&cal, FALSE);
    printf("  two-term fit (no chunk term): overhead %.2f us, bandwidth %.3f GB/s per rank, "
           "fit error RMS %.1f%% max %.1f%%\n",
           cal.overhead_s * 1e6, cal.bw_bytes_per_s / 1e9, 100 * cal.rms_error,
           100 * cal.max_error);
    g_clear_pointer(&b->topo_2term, rs_topology_free);
    b->topo_2term = rs_calibration_load_topology(&cal, "bench-host-2term", "bench-exec", &error);
    if (b->topo_2term == NULL)
        die("topology", error);
    rs_calibration_clear(&cal);
}

/* Stage: the refit of model @bm under layout @lay on the topology at @topo_path. */
static void
build_case(const BenchModel *bm, const BenchLayout *lay, const char *topo_path,
           RsScenarioBuild *build)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsScenario) s = rs_scenario_new();
    s->name = g_strdup(bm->label);
    s->model = g_str_has_suffix(bm->model, ".yaml")
                   ? g_build_filename(RS_SOURCE_DATA_DIR, bm->model, NULL)
                   : g_strdup(bm->model);
    s->topology = g_strdup(topo_path);
    s->scale = bm->scale;
    s->has_layer_range = TRUE;
    s->first_layer = bm->first_layer;
    s->last_layer = bm->last_layer;
    s->train = rs_convention_parse(lay->train, &error);
    s->infer = rs_convention_parse(lay->infer, &error);
    if (s->train == NULL || s->infer == NULL ||
        !rs_ranks_parse(lay->train_gpus, &s->train_gpus, &error) ||
        !rs_ranks_parse(lay->infer_gpus, &s->infer_gpus, &error))
        die("layout", error);
    if (!rs_scenario_build(s, build, &error))
        die(bm->label, error);
}

/* Stage: plans the case with @strategy, predicts it, runs it (one warm-up run, then the
 * measured ones) and adds its row and its error. */
static void
run_case(Bench *b, const BenchModel *bm, const BenchLayout *lay, const RsScenarioBuild *build,
         RsStrategy strategy, gboolean fine)
{
    g_autoptr(GError) error = NULL;
    RsPlanOptions plan_options;
    rs_plan_options_init(&plan_options, build->topology);
    g_autoptr(RsPlan) plan = rs_plan_build_full(build->refit, strategy, &plan_options, &error);
    if (plan == NULL)
        die("plan", error);
    RsCostEstimate cost;
    if (!rs_cost_estimate_chunked(plan, build->refit, build->topology,
                                  RS_EXEC_DEFAULT_CHUNK_BYTES, &cost, &error))
        die("prediction", error);
    fprintf(stderr, "running %s, %s, %s ...\n", bm->label, lay->label,
            rs_strategy_get_name(strategy));
    RsExecOptions eo = {.n_runs = (guint)opt_runs + 1};
    RsExecResult res;
    if (!rs_exec_run(b->transport, plan, build->refit, &eo, &res, &error))
        die("run", error);
    if (res.n_bad_elems > 0) {
        g_autofree char *what = rs_exec_mismatch_format(&res.first_bad, build->refit);
        g_printerr("bench-exec: validation failed: %s\n", what);
        b->exit_code = 3;
    }
    double median = res.run_s->len > 1
                        ? rs_stats_median(&g_array_index(res.run_s, double, 1), res.run_s->len - 1)
                        : 0;
    double err = (cost.predicted_s - median) / median;
    g_array_append_val(fine ? b->fine_errors : b->errors, err);
    RsCostEstimate cost2;
    if (!rs_cost_estimate_chunked(plan, build->refit, b->topo_2term, RS_EXEC_DEFAULT_CHUNK_BYTES,
                                  &cost2, &error))
        die("prediction", error);
    double err2 = (cost2.predicted_s - median) / median;
    if (!fine)
        g_array_append_val(b->errors_2term, err2);
    g_string_append_printf(b->table,
                           "%-36s  %-20s  %-16s  %8.3f  %8.3f  %11.4f  %11.4f  %+7.1f%%  %11.4f  "
                           "%+7.1f%%%s\n",
                           bm->label, lay->label, rs_strategy_get_name(strategy),
                           res.bytes_moved / 1e9, res.local_bytes / 1e9, median,
                           cost.predicted_s, 100 * err, cost2.predicted_s, 100 * err2,
                           fine ? "  (fine rows)" : "");
    rs_exec_result_clear(&res);
}

/* Stage: the table, the error summaries and the large-message reference. */
static void
print_results(const Bench *b)
{
    printf("\n%s\n", b->table->str);
    print_error_summary("prediction error (error = (predicted - measured) / measured)",
                        b->errors);
    print_error_summary("the same, two-term fit (no chunk term)", b->errors_2term);
    if (b->fine_errors->len > 0)
        print_error_summary("fine-row cases (64- and 96-byte rows)", b->fine_errors);
    printf("large messages: one %.0f MiB message rank 0 -> 1 %.3f GB/s; single-thread memcpy "
           "%.3f GB/s; ratio %.2f (target >= 0.70)\n",
           b->large_bytes / 1048576.0, b->large_bw / 1e9, b->memcpy_bw / 1e9,
           b->memcpy_bw > 0 ? b->large_bw / b->memcpy_bw : 0.0);
    printf("load average at end %.2f\n", load_average());
}

int
main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    g_autoptr(GError) error = NULL;
    g_autoptr(GOptionContext) context = g_option_context_new("- executor benchmark");
    g_option_context_add_main_entries(context, entries, NULL);
    if (!g_option_context_parse(context, &argc, &argv, &error)) {
        g_printerr("bench-exec: %s\n", error->message);
        return 2;
    }
    if (argc > 1) {
        g_printerr("bench-exec: unexpected argument \"%s\" (see --help)\n", argv[1]);
        return 2;
    }
    if (g_getenv("RESHARD_DATA_DIR") == NULL)
        g_setenv("RESHARD_DATA_DIR", RS_SOURCE_DATA_DIR, TRUE);
    Bench b = {0};
    g_autoptr(RsTransport) transport = rs_transport_open("host", NULL, &error);
    if (transport == NULL)
        die("transport", error);
    b.transport = transport;
    printf("load average at start %.2f on %d CPUs\n\n", load_average(), g_get_num_processors());
    g_autofree char *dir = g_dir_make_tmp("bench-exec-XXXXXX", &error);
    if (dir == NULL)
        die("temporary directory", error);
    g_autofree char *topo_path = g_build_filename(dir, "host.yaml", NULL);
    g_autoptr(GArray) errors = b.errors = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) fine_errors = b.fine_errors = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GString) table = b.table = g_string_new(NULL);
    g_autoptr(GArray) errors_2term = b.errors_2term = g_array_new(FALSE, FALSE, sizeof(double));
    g_string_append_printf(table, "%-36s  %-20s  %-16s  %8s  %8s  %11s  %11s  %8s  %11s  %8s\n",
                           "model", "layout", "strategy", "GB moved", "GB local", "measured s",
                           "predicted s", "error", "2-term s", "error");
    guint n_models = opt_quick ? 1u : G_N_ELEMENTS(models);
    guint n_fine = opt_fine ? G_N_ELEMENTS(fine_models) : 0u;
    for (guint li = 0; li < G_N_ELEMENTS(layouts); li++) {
        calibrate_layout(&b, li, topo_path);
        for (guint mi = 0; mi < n_models + n_fine; mi++) {
            const BenchModel *bm = mi < n_models ? &models[mi] : &fine_models[mi - n_models];
            RsScenarioBuild build;
            build_case(bm, &layouts[li], topo_path, &build);
            for (guint st = 0; st < RS_STRATEGY_N; st++)
                run_case(&b, bm, &layouts[li], &build, (RsStrategy)st, mi >= n_models);
            rs_scenario_build_clear(&build);
        }
    }
    print_results(&b);
    g_clear_pointer(&b.topo_2term, rs_topology_free);
    g_unlink(topo_path);
    g_rmdir(dir);
    return b.exit_code;
}

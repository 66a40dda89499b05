/* cmd-sweep.c — `reshard sweep`: a grid of inference layouts, GPU counts, fabrics, dtypes
 * and strategies over a scenario (analysis/sweep.h), each point planned, estimated (or
 * simulated) and checked against GPU memory, with the queries users ask: the fewest GPUs
 * under --target, the fastest layout per GPU count, the Pareto front. Under mpirun the
 * points are split over the ranks and rank 0 prints (analysis/sweep-mpi.h). This file
 * parses the flags, runs the grid and prints. */
#include "cli/cli.h"
#include "cli/outputs.h"

#include "analysis/plot.h"
#include "analysis/report.h"
#include "analysis/sweep-mpi.h"
#include "analysis/sweep.h"
#include "base/data.h"
#include "base/units.h"
#include "cli/scenario-args.h"
#include "cli/topology-args.h"

#include <stdio.h>
#include <unistd.h>
#include <string.h>

#define DEFAULT_SCENARIO "deepseek-v3-h100"

static RsScenarioArgs sargs;
static char *opt_sweep_file;
static char *opt_tp, *opt_pp, *opt_dp, *opt_gpus, *opt_ep;
static char *opt_topologies, *opt_nic_bw, *opt_infer_dtypes, *opt_strategies;
static char *opt_target;
static char *opt_network;
static char *opt_threads;
static char *opt_format;
static char *opt_select;
static char *opt_staging;
static char *opt_plot;
static gboolean opt_no_progress;

static GOptionEntry entries[] = {
    {"sweep", 0, 0, G_OPTION_ARG_FILENAME, &opt_sweep_file,
     "A sweep YAML whose keys are the axes (tp, pp, dp, gpus, ep, topology, nic_bw, "
     "infer_dtype, strategy), each a list; flags given too replace its axes",
     "FILE.yaml"},
    {"tp", 0, 0, G_OPTION_ARG_STRING, &opt_tp, "Inference tensor-parallel sizes", "LIST"},
    {"pp", 0, 0, G_OPTION_ARG_STRING, &opt_pp, "Inference pipeline-parallel sizes", "LIST"},
    {"dp", 0, 0, G_OPTION_ARG_STRING, &opt_dp, "Inference data-parallel sizes", "LIST"},
    {"gpus", 0, 0, G_OPTION_ARG_STRING, &opt_gpus,
     "Inference GPU counts (dp = GPUs / (tp x pp); counts tp x pp does not divide are left "
     "out; nodes are derived)",
     "LIST"},
    {"ep", 0, 0, G_OPTION_ARG_STRING, &opt_ep, "Expert parallelism of the inference layout",
     "off,on"},
    {"topologies", 0, 0, G_OPTION_ARG_STRING, &opt_topologies, "Topology names or files", "LIST"},
    {"nic-bws", 0, 0, G_OPTION_ARG_STRING, &opt_nic_bw,
     "NIC bandwidths per direction, with their unit", "400Gbit/s,800Gbit/s"},
    {"infer-dtypes", 0, 0, G_OPTION_ARG_STRING, &opt_infer_dtypes,
     "Inference dtypes (bf16, fp8-e4m3, mxfp4)", "LIST"},
    {"strategies", 0, 0, G_OPTION_ARG_STRING, &opt_strategies,
     "Strategies, or auto (every candidate, the fastest kept; default)", "LIST"},
    {"target", 0, 0, G_OPTION_ARG_STRING, &opt_target,
     "Refit time to reach: the query lists the feasible points under it, fewest GPUs first",
     "TIME"},
    {"network", 0, 0, G_OPTION_ARG_STRING, &opt_network,
     "bottleneck (first-order estimate, default: seconds per point) or flow (flow-level "
     "simulation: minutes per point at full scale)",
     "MODEL"},
    {"threads", 'j', 0, G_OPTION_ARG_STRING, &opt_threads,
     "Points run at once (default: every core)", "N"},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table, csv or json (default table)",
     "FORMAT"},
    {"select", 0, 0, G_OPTION_ARG_STRING, &opt_select,
     "CSV: the rows to write: all (default), under-target, fastest or pareto", "ROWS"},
    {"staging-bytes", 0, 0, G_OPTION_ARG_STRING, &opt_staging,
     "Bucket size and per-rank staging per round, with a unit (default 1/16 of GPU memory)",
     "SIZE"},
    {"plot", 0, 0, G_OPTION_ARG_FILENAME, &opt_plot,
     "Plot refit time against GPUs with the Pareto front: PREFIX.png, PREFIX.svg and the "
     "data PREFIX.dat (gnuplot)",
     "PREFIX"},
    {"no-progress", 0, 0, G_OPTION_ARG_NONE, &opt_no_progress, "No progress bar on stderr", NULL},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    GOptionContext *context =
        g_option_context_new("- sweep inference layouts, GPU counts and fabrics");
    g_option_context_set_summary(
        context,
        "Plans and estimates a refit for every point of a grid over the inference layout\n"
        "(tp, pp, dp or GPU count, ep), topologies, NIC bandwidths, inference dtypes and\n"
        "strategies, starting from a scenario (the default one unless --scenario). Each\n"
        "point's node count is derived, its memory per GPU checked (weights + staging +\n"
        "reserve); infeasible points are marked and never recommended. Points run on every\n"
        "core; under `mpirun -np N` they are split over the ranks and rank 0 prints.");
    g_option_context_set_description(
        context, "Examples:\n"
                 "  reshard sweep --tp 8,16,32 --gpus 64,128,256 --ep off,on --target 1s\n"
                 "  reshard sweep --sweep grid.yaml --format csv > points.csv\n"
                 "  reshard sweep --tp 8,16 --gpus 128,256 --nic-bws 400Gbit/s,800Gbit/s "
                 "--plot sweep\n"
                 "  mpirun -np 4 reshard sweep --tp 4,8,16,32 --gpus 64,128,256,512\n");
    g_option_context_add_main_entries(context, entries, NULL);
    g_option_context_add_group(context, rs_scenario_args_make_group(&sargs));
    rs_cli_add_common_options(context);
    return context;
}

static gboolean
parse_ints(const char *flag, const char *text, GArray *out, GError **error)
{
    if (text == NULL)
        return TRUE;
    g_array_set_size(out, 0);
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    if (items[0] == NULL) { /* "": an empty axis, which would fall back to the scenario's */
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s \"\": an empty list; give its values, like %s 4,8", flag, flag);
        return FALSE;
    }
    for (guint i = 0; items[i] != NULL; i++) {
        gint64 v;
        if (!rs_cli_parse_int(flag, g_strstrip(items[i]), 1, G_MAXINT32, &v, error))
            return FALSE;
        for (guint j = 0; j < out->len; j++)
            if (g_array_index(out, gint64, j) == v) {
                g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                            "%s: %" G_GINT64_FORMAT " given twice (it would sweep the same "
                            "points twice)",
                            flag, v);
                return FALSE;
            }
        g_array_append_val(out, v);
    }
    return TRUE;
}

/* A list flag of axis @key (rs_sweep_check_axis_value()): every value checked, none twice. */
static gboolean
parse_strings(const char *flag, const char *key, const char *text, GPtrArray *out,
              GError **error)
{
    if (text == NULL)
        return TRUE;
    g_ptr_array_set_size(out, 0);
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    if (items[0] == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s \"\": an empty list; give its values", flag);
        return FALSE;
    }
    for (guint i = 0; items[i] != NULL; i++) {
        const char *v = g_strstrip(items[i]);
        g_autoptr(GError) local = NULL;
        if (!rs_sweep_check_axis_value(key, v, &local)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: %s", flag,
                        local->message);
            return FALSE;
        }
        for (guint j = 0; j < out->len; j++)
            if (strcmp(out->pdata[j], v) == 0) {
                g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                            "%s: \"%s\" given twice (it would sweep the same points twice)",
                            flag, v);
                return FALSE;
            }
        g_ptr_array_add(out, g_strdup(v));
    }
    return TRUE;
}

static gboolean
parse_grid(RsSweepGrid *g, GError **error)
{
    if (opt_sweep_file != NULL && !rs_sweep_grid_load_file(opt_sweep_file, g, error))
        return FALSE;
    if (!parse_ints("--tp", opt_tp, g->tp, error) || !parse_ints("--pp", opt_pp, g->pp, error) ||
        !parse_ints("--dp", opt_dp, g->dp, error) ||
        !parse_ints("--gpus", opt_gpus, g->gpus, error))
        return FALSE;
    if (opt_ep != NULL) {
        g_array_set_size(g->ep, 0);
        g_auto(GStrv) items = g_strsplit(opt_ep, ",", -1);
        if (items[0] == NULL) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--ep \"\": an empty list; give on, off or on,off");
            return FALSE;
        }
        for (guint i = 0; items[i] != NULL; i++) {
            const char *v = g_strstrip(items[i]);
            gboolean on = strcmp(v, "on") == 0 || strcmp(v, "true") == 0;
            if (!on && strcmp(v, "off") != 0 && strcmp(v, "false") != 0) {
                g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                            "--ep: \"%s\": expected off or on", v);
                return FALSE;
            }
            g_array_append_val(g->ep, on);
        }
    }
    if (!parse_strings("--topologies", "topology", opt_topologies, g->topologies, error))
        return FALSE;
    /* The topology axis's files are inputs too (the points swap them in after their
     * scenario's inputs were noted); shipped names are not files. */
    for (guint i = 0; i < g->topologies->len; i++)
        if (g_file_test(g->topologies->pdata[i], G_FILE_TEST_IS_REGULAR))
            rs_cli_note_input(g->topologies->pdata[i]);
    if (!parse_strings("--infer-dtypes", "infer_dtype", opt_infer_dtypes, g->infer_dtypes,
                       error) ||
        !parse_strings("--strategies", "strategy", opt_strategies, g->strategies, error))
        return FALSE;
    if (opt_nic_bw != NULL) {
        g_array_set_size(g->nic_bw, 0);
        g_auto(GStrv) items = g_strsplit(opt_nic_bw, ",", -1);
        if (items[0] == NULL) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--nic-bws \"\": an empty list; give its values, like --nic-bws "
                        "400Gbit/s,800Gbit/s");
            return FALSE;
        }
        for (guint i = 0; items[i] != NULL; i++) {
            double bw;
            g_autoptr(GError) local = NULL;
            if (!rs_units_parse_bandwidth(g_strstrip(items[i]), &bw, &local)) {
                g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--nic-bws: %s",
                            local->message);
                return FALSE;
            }
            /* By value: 400Gbit/s and 50GB/s are one bandwidth. */
            for (guint j = 0; j < g->nic_bw->len; j++)
                if (g_array_index(g->nic_bw, double, j) == bw) {
                    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                                "--nic-bws: \"%s\" is \"%s\" again, %g GB/s (it would sweep "
                                "the same points twice)",
                                items[i], g_strstrip(items[j]), bw / 1e9);
                    return FALSE;
                }
            g_array_append_val(g->nic_bw, bw);
        }
    }
    /* Topology, dtype and strategy names were checked as they were read (file or flag). */
    return TRUE;
}

/* The base scenario of every point, loaded afresh for each (thread-safe: reads only the
 * parsed flags). */
static RsScenario *
new_scenario(gpointer user_data, GError **error)
{
    return rs_scenario_args_load(&sargs, DEFAULT_SCENARIO, NULL, error);
}

typedef struct {
    RsFormat format;
    RsSweepSelect select;
    double target_s;
    gboolean use_flow;
    RsFlowSimOptions flow;
    gint64 threads;
    guint64 staging_bytes;
    RsMemoryOptions memory;
} Settings;

static gboolean
parse_settings(Settings *set, GError **error)
{
    memset(set, 0, sizeof *set);
    if (!rs_cli_parse_format(opt_format, &set->format, error))
        return FALSE;
    set->select = RS_SWEEP_SELECT_ALL;
    if (opt_select != NULL) {
        static const char *const names[] = {"all", "under-target", "fastest", "pareto"};
        guint i = 0;
        while (i < G_N_ELEMENTS(names) && strcmp(opt_select, names[i]) != 0)
            i++;
        if (i == G_N_ELEMENTS(names)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--select: \"%s\": expected all, under-target, fastest or pareto",
                        opt_select);
            return FALSE;
        }
        set->select = (RsSweepSelect)i;
        /* The table and JSON print every point and every query: a selection would be
         * ignored. */
        if (set->format != RS_FORMAT_CSV) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--select applies to --format csv (the table and JSON print every "
                        "point with the queries' lists)");
            return FALSE;
        }
    }
    if (opt_target != NULL) {
        /* With its unit, as every duration (a bare 1 read as 1 s; 1 could as well mean
         * 1 ms). */
        g_autoptr(GError) local = NULL;
        if (!rs_units_parse_duration(opt_target, &set->target_s, &local)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--target: %s",
                        local->message);
            return FALSE;
        }
        if (!(set->target_s > 0)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--target: must be above 0 s");
            return FALSE;
        }
    }
    if (set->select == RS_SWEEP_SELECT_UNDER_TARGET && opt_target == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--select under-target needs --target");
        return FALSE;
    }
    rs_flow_sim_options_init(&set->flow);
    if (opt_network != NULL && strcmp(opt_network, "flow") == 0)
        set->use_flow = TRUE;
    else if (opt_network != NULL && strcmp(opt_network, "bottleneck") != 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--network: unknown model \"%s\" (known: bottleneck, flow)", opt_network);
        return FALSE;
    }
    set->threads = 0;
    if (!rs_cli_parse_int("--threads", opt_threads, 1, 1024, &set->threads, error))
        return FALSE;
    if (opt_staging != NULL) {
        g_autoptr(GError) local = NULL;
        if (!rs_units_parse_size(opt_staging, &set->staging_bytes, &local)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--staging-bytes: %s",
                        local->message);
            return FALSE;
        }
    }
    if (!rs_scenario_args_get_memory_options(&sargs, 0, &set->memory, error))
        return FALSE;
    rs_cli_note_input(opt_sweep_file);
    if (opt_plot != NULL && !rs_cli_check_plot_outputs("--plot", opt_plot, error))
        return FALSE;
    return TRUE;
}

/* The defaults each topology of the sweep takes (rs_cli_print_topology_warnings()), once per
 * file however many points use it: @names, the topology axis's (empty: @base's alone). A file
 * that does not load is left to the points, which report it. */
static void
print_topology_warnings(const GPtrArray *names, const RsScenario *base)
{
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    guint n = names->len > 0 ? names->len : 1;
    for (guint i = 0; i < n; i++) {
        const char *name = names->len > 0 ? g_ptr_array_index(names, i) : base->topology;
        g_autofree char *path = name ? rs_data_find("topologies", name, NULL) : NULL;
        if (path == NULL || !g_hash_table_add(seen, g_strdup(path)))
            continue;
        g_autoptr(RsTopology) topo = rs_topology_load_file(path, NULL, NULL);
        rs_cli_print_topology_warnings(topo);
    }
}

/* Every rank, failed or not, meets the others at the gather: a rank that gave up early
 * (a file it cannot read) reports to rank 0 there instead of leaving it waiting, and rank
 * 0 prints the failure and exits with its code. */
static int
sweep(const char *cmd, const Settings *set, guint rank, guint n_ranks)
{
    g_autoptr(GError) error = NULL;
    int fail_code = RS_EXIT_OK;
    RsSweepGrid grid;
    rs_sweep_grid_init(&grid);
    g_autoptr(GArray) points = NULL;
    gboolean ok = parse_grid(&grid, &error) && (points = rs_sweep_make_points(&grid, &error));
    g_autoptr(GPtrArray) topology_names = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; grid.topologies != NULL && i < grid.topologies->len; i++)
        g_ptr_array_add(topology_names, g_strdup(g_ptr_array_index(grid.topologies, i)));
    rs_sweep_grid_clear(&grid);
    if (!ok)
        fail_code = RS_EXIT_USAGE;
    guint n_points = points ? points->len : 0;
    g_autofree RsSweepResult *results = g_new0(RsSweepResult, MAX(n_points, 1));
    /* The base scenario once before the grid: a bad file is one error, not one per point. */
    g_autoptr(RsScenario) base = ok ? new_scenario(NULL, &error) : NULL;
    if (ok && base == NULL) {
        fail_code = RS_EXIT_USAGE;
        ok = FALSE;
    }
    if (ok) {
        RsSweepOptions o = {0};
        o.new_scenario = new_scenario;
        o.flow_options = set->use_flow ? &set->flow : NULL;
        o.staging_bytes = set->staging_bytes;
        o.reserve_bytes[0] = set->memory.reserve_bytes[0];
        o.reserve_bytes[1] = set->memory.reserve_bytes[1];
        o.n_threads = (guint)set->threads;
        /* The bar redraws itself with \r: a terminal only, as simulate's (a file or pipe gets
         * the one line "sweeping N points" below and no bar). */
        o.progress = !rs_cli_quiet && !opt_no_progress && rank == 0 && isatty(STDERR_FILENO);
        o.rank = rank;
        o.n_ranks = n_ranks;
        if (rank == 0) {
            print_topology_warnings(topology_names, base);
            g_autofree char *over =
                n_ranks > 1 ? g_strdup_printf(" over %u MPI ranks", n_ranks) : g_strdup("");
            g_autofree char *overrides = rs_scenario_args_format_overrides(&sargs);
            g_autofree char *scenario = rs_report_format_scenario(base->name, overrides);
            rs_cli_progress("sweeping %u point%s of %s%s ...", n_points, n_points == 1 ? "" : "s",
                            scenario, over);
        }
        if (!rs_sweep_run(points, &o, results, &error)) {
            fail_code = RS_EXIT_RUNTIME;
            ok = FALSE;
        }
    }
    g_autoptr(GError) gather_error = NULL;
    guint reported_code = 0;
    int code = RS_EXIT_OK;
    if (!rs_sweep_mpi_gather(results, n_points, rank, n_ranks, ok ? NULL : error, (guint)fail_code,
                             &reported_code, &gather_error)) {
        if (rank == 0)
            code = rs_cli_fail(cmd, gather_error,
                               reported_code ? (int)reported_code : RS_EXIT_RUNTIME);
        else if (!ok)
            code = fail_code; /* rank 0 prints it */
        else
            code = rs_cli_fail(cmd, gather_error, RS_EXIT_RUNTIME);
    }
    if (code == RS_EXIT_OK && rank == 0) {
        const RsSweepPoint *pts = (const RsSweepPoint *)points->data;
        g_autoptr(GString) out = g_string_new(NULL);
        rs_sweep_report(pts, results, n_points, set->target_s, set->select, set->format, out);
        /* The points read their scenarios, models and topologies since the first check. */
        if (opt_plot != NULL && !rs_cli_begin_plot_outputs("--plot", opt_plot, &error)) {
            code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        } else if (opt_plot != NULL &&
                   !rs_plot_sweep(pts, results, n_points, opt_plot, &error)) {
            code = rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
        } else {
            fputs(out->str, stdout);
        }
        /* A sweep none of whose points could be planned answers nothing: the table shows
         * each point's error, and the exit status says so. */
        guint n_ok = 0, first_failed = 0;
        for (guint i = n_points; i-- > 0;) {
            if (results[i].ok)
                n_ok++;
            else
                first_failed = i;
        }
        if (code == RS_EXIT_OK && n_points > 0 && n_ok == 0) {
            g_autoptr(GError) none = g_error_new(
                G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "none of the %u points could be planned (point %u: %s)", n_points, first_failed,
                results[first_failed].error ? results[first_failed].error : "no result");
            code = rs_cli_fail(cmd, none, RS_EXIT_USAGE);
        }
    }
    for (guint i = 0; i < n_points; i++)
        rs_sweep_result_clear(&results[i]);
    return code;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "sweep";
    int code = RS_EXIT_OK;
    if (!rs_cli_parse(cmd, make_context, &argc, &argv, &code))
        return code;
    g_autoptr(GError) error = NULL;
    Settings set;
    if (!parse_settings(&set, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (sargs.infer_gpus != NULL) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--infer-gpus does not apply to a sweep: each point's inference GPUs "
                    "follow the training GPUs");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    guint rank = 0, n_ranks = 1;
    if (!rs_sweep_mpi_start(&rank, &n_ranks, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    code = sweep(cmd, &set, rank, n_ranks);
    rs_sweep_mpi_finish();
    return code;
}

const RsCommand rs_command_sweep = {
    "sweep",
    "Sweep inference layouts, GPU counts and fabrics; answer the capacity questions",
    run,
    make_context,
};

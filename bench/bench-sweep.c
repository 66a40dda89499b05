/* bench-sweep.c — how `reshard sweep` scales with threads, and that it is deterministic.
 *
 * Runs one grid of DeepSeek-V3 inference layouts on DGX H100 (the shipped scenario
 * deepseek-v3-h100: its Megatron training layout on 256 GPUs; vLLM tp 2, 4, 8, 16, 32 ×
 * pp 1, 2 × ep off, on × 64 to 640 inference GPUs in steps of 64: 200 points, the node
 * count derived), first-order estimate, one strategy, on 1 thread and then on 2 (or
 * --threads N), and prints each run's wall time, points per second, and the speed-up of
 * each run against the 1-thread run of the same process, and whether the CSV of every
 * run is byte-identical to the first's.
 *
 * Usage: bench-sweep [--scale F] [--strategy NAME] [--threads N] [--points N]
 * (--scale divides the model's widths, to run the same grid faster; --points keeps the
 * first N points). Not a test: it measures; it exits 1 only when the CSVs differ.
 */
#include "analysis/sweep.h"
#include "base/data.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static guint scale = 1;

static RsScenario *
base_scenario(gpointer data, GError **error)
{
    g_autofree char *path = rs_data_find("scenarios", "deepseek-v3-h100", error);
    if (path == NULL)
        return NULL;
    RsScenario *s = rs_scenario_load_file(path, error);
    if (s != NULL && scale > 1)
        s->scale = scale;
    return s;
}

static char *
run_grid(GArray *points, guint n_threads, double *wall_s)
{
    g_autoptr(GError) error = NULL;
    RsSweepOptions o = {0};
    o.new_scenario = base_scenario;
    o.n_threads = n_threads;
    o.n_ranks = 1;
    RsSweepResult *res = g_new0(RsSweepResult, points->len);
    gint64 t0 = g_get_monotonic_time();
    if (!rs_sweep_run(points, &o, res, &error)) {
        fprintf(stderr, "bench-sweep: %s\n", error->message);
        exit(1);
    }
    *wall_s = (g_get_monotonic_time() - t0) / 1e6;
    GString *csv = g_string_new(NULL);
    rs_sweep_report((const RsSweepPoint *)points->data, res, points->len, 0, RS_SWEEP_SELECT_ALL,
                    RS_FORMAT_CSV, csv);
    for (guint i = 0; i < points->len; i++)
        rs_sweep_result_clear(&res[i]);
    g_free(res);
    return g_string_free(csv, FALSE);
}

int
main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    /* GOption, as the other benchmarks: --help prints the usage instead of running (a
     * hand-made loop took "--help" for a run with defaults). */
    gchar *opt_strategy = NULL;
    gint opt_scale = 1, opt_threads = 2, opt_points = 0;
    GOptionEntry entries[] = {
        {"scale", 0, 0, G_OPTION_ARG_INT, &opt_scale,
         "Divide the model's widths by F (the same grid, faster; default 1)", "F"},
        {"strategy", 0, 0, G_OPTION_ARG_STRING, &opt_strategy,
         "The one strategy of every point (default direct)", "NAME"},
        {"threads", 0, 0, G_OPTION_ARG_INT, &opt_threads, "The second run's threads (default 2)",
         "N"},
        {"points", 0, 0, G_OPTION_ARG_INT, &opt_points,
         "Keep only the first N points (default all 200)", "N"},
        {NULL},
    };
    g_autoptr(GError) parse_error = NULL;
    g_autoptr(GOptionContext) context =
        g_option_context_new("- sweep thread scaling and determinism benchmark");
    g_option_context_add_main_entries(context, entries, NULL);
    if (!g_option_context_parse(context, &argc, &argv, &parse_error) || argc > 1 || opt_scale < 1 ||
        opt_threads < 1 || opt_threads > 1024 || opt_points < 0) {
        fprintf(stderr, "bench-sweep: %s\n",
                parse_error ? parse_error->message
                            : "expected --scale >= 1, --threads 1..1024, --points >= 0 and no "
                              "other argument");
        return 2;
    }
    scale = (guint)opt_scale;
    const char *strategy = opt_strategy ? opt_strategy : "direct";
    guint max_threads = (guint)opt_threads, max_points = (guint)opt_points;
    RsSweepGrid g;
    rs_sweep_grid_init(&g);
    const gint64 tps[] = {2, 4, 8, 16, 32}, pps[] = {1, 2};
    g_array_append_vals(g.tp, tps, G_N_ELEMENTS(tps));
    g_array_append_vals(g.pp, pps, G_N_ELEMENTS(pps));
    for (gint64 n = 64; n <= 640; n += 64)
        g_array_append_val(g.gpus, n);
    gboolean ep[] = {FALSE, TRUE};
    g_array_append_vals(g.ep, ep, 2);
    g_ptr_array_add(g.strategies, g_strdup(strategy));
    g_autoptr(GError) error = NULL;
    g_autoptr(GArray) points = rs_sweep_make_points(&g, &error);
    rs_sweep_grid_clear(&g);
    if (points == NULL) {
        fprintf(stderr, "bench-sweep: %s\n", error->message);
        return 1;
    }
    if (max_points > 0 && max_points < points->len)
        g_array_set_size(points, max_points);
    printf("sweep of %u points: DeepSeek-V3%s on dgx-h100, strategy %s, first-order estimate; "
           "%u cores\n",
           points->len, scale > 1 ? g_strdup_printf(" (scale 1/%u)", scale) : "", strategy,
           g_get_num_processors());
    printf("threads  wall s  points/s  speed-up  same CSV\n");
    g_autofree char *first = NULL;
    double first_s = 0;
    int code = 0;
    for (guint t = 1; t <= max_threads; t++) {
        if (t > 1 && t < max_threads && t != 2)
            continue;
        double wall_s;
        char *csv = run_grid(points, t, &wall_s);
        gboolean same = first == NULL || strcmp(first, csv) == 0;
        if (first == NULL) {
            first = csv;
            first_s = wall_s;
        } else {
            g_free(csv);
        }
        code |= !same;
        printf("%7u  %6.1f  %8.2f  %7.2fx  %s\n", t, wall_s, points->len / wall_s, first_s / wall_s,
               same ? "yes" : "NO");
        fflush(stdout);
    }
    return code;
}

/* plot.c — the plots of plot.h. Each writes its data and script next to the images and
 * runs one gnuplot process (GSubprocess) fed the script on stdin: the PNG terminal first,
 * then `replot` into the SVG terminal, so both images show the same plot. */
#include "analysis/plot.h"
#include "base/output.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-plot-error-quark, rs_plot_error)
/* clang-format on */

/* @text as a gnuplot double-quoted string (backslash and quote escaped). */
static char *
gp_quote(const char *text)
{
    GString *s = g_string_new("\"");
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_c(s, '\\');
        g_string_append_c(s, *p);
    }
    g_string_append_c(s, '"');
    return g_string_free(s, FALSE);
}

static void
remove_outputs(const char *prefix)
{
    static const char *const ext[] = {".dat", ".gp", ".png", ".svg"};
    for (guint i = 0; i < G_N_ELEMENTS(ext); i++) {
        g_autofree char *path = g_strconcat(prefix, ext[i], NULL);
        g_unlink(path);
    }
}

static char *
find_gnuplot(GError **error)
{
    const char *name = g_getenv("RESHARD_GNUPLOT");
    if (name == NULL || *name == '\0')
        name = "gnuplot";
    char *path = g_path_is_absolute(name) && g_file_test(name, G_FILE_TEST_IS_EXECUTABLE)
                     ? g_strdup(name)
                     : g_find_program_in_path(name);
    if (path == NULL)
        g_set_error(error, RS_PLOT_ERROR, RS_PLOT_ERROR_NO_GNUPLOT,
                    "plots need gnuplot, and \"%s\" is not installed or not on PATH; install "
                    "it (Debian/Ubuntu: apt-get install gnuplot-nox, or run "
                    "scripts/install-deps.sh) or set RESHARD_GNUPLOT to its path",
                    name);
    return path;
}

/* How a finished @proc ended: "exit status N" or "signal N". Returns: (transfer full). */
static char *
describe_end(GSubprocess *proc)
{
    return g_subprocess_get_if_exited(proc)
               ? g_strdup_printf("exit status %d", g_subprocess_get_exit_status(proc))
               : g_strdup_printf("signal %d", g_subprocess_get_term_sig(proc));
}

gboolean
rs_plot_render(const char *prefix, const char *data, const char *script, guint width, guint height,
               GError **error)
{
    g_autofree char *gnuplot = find_gnuplot(error);
    if (gnuplot == NULL)
        return FALSE;
    g_autofree char *dat = g_strconcat(prefix, ".dat", NULL);
    g_autofree char *gp = g_strconcat(prefix, ".gp", NULL);
    g_autofree char *png = g_strconcat(prefix, ".png", NULL);
    g_autofree char *svg = g_strconcat(prefix, ".svg", NULL);
    g_autofree char *qpng = gp_quote(png);
    g_autofree char *qsvg = gp_quote(svg);
    g_autofree char *text = g_strdup_printf(
        "# written by reshard; render with: gnuplot %s\n"
        "set terminal pngcairo size %u,%u enhanced font \"DejaVu Sans,11\"\n"
        "set output %s\n"
        "%s"
        "set terminal svg size %u,%u enhanced font \"DejaVu Sans,11\" background \"white\"\n"
        "set output %s\n"
        "replot\n"
        "unset output\n",
        gp, width, height, qpng, script, width, height, qsvg);
    if (!rs_output_write_file(dat, data, -1, error) || !rs_output_write_file(gp, text, -1, error)) {
        g_prefix_error(error, "%s: ", prefix);
        remove_outputs(prefix);
        return FALSE;
    }
    g_autoptr(GSubprocess) proc =
        g_subprocess_new(G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                             G_SUBPROCESS_FLAGS_STDERR_PIPE,
                         error, gnuplot, NULL);
    if (proc == NULL) {
        remove_outputs(prefix);
        return FALSE;
    }
    g_autofree char *err_text = NULL;
    /* A gnuplot that ends before it read the script closes the pipe: the write then fails
     * (EPIPE) instead of killing the process with SIGPIPE (exit 141, no message, the .dat
     * and .gp left behind). */
    struct sigaction ignore, old_pipe;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    gboolean restore = sigaction(SIGPIPE, &ignore, &old_pipe) == 0;
    g_autoptr(GError) local = NULL;
    gboolean ok = g_subprocess_communicate_utf8(proc, text, NULL, NULL, &err_text, &local);
    if (restore)
        sigaction(SIGPIPE, &old_pipe, NULL);
    if (!ok && g_error_matches(local, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE)) {
        g_subprocess_wait(proc, NULL, NULL);
        g_autofree char *how = describe_end(proc);
        g_set_error(error, RS_PLOT_ERROR, RS_PLOT_ERROR_FAILED,
                    "gnuplot (%s) ended before it read the script for %s (%s)", gnuplot, gp, how);
    } else if (!ok) {
        g_propagate_error(error, g_steal_pointer(&local));
    }
    if (ok && !(g_subprocess_get_if_exited(proc) && g_subprocess_get_exit_status(proc) == 0)) {
        g_autofree char *how = describe_end(proc);
        g_set_error(error, RS_PLOT_ERROR, RS_PLOT_ERROR_FAILED, "gnuplot failed on %s (%s): %s",
                    gp, how, err_text ? g_strstrip(err_text) : "");
        ok = FALSE;
    }
    if (ok && (!g_file_test(png, G_FILE_TEST_EXISTS) || !g_file_test(svg, G_FILE_TEST_EXISTS))) {
        g_set_error(error, RS_PLOT_ERROR, RS_PLOT_ERROR_FAILED, "gnuplot wrote no image for %s: %s",
                    gp, err_text ? err_text : "");
        ok = FALSE;
    }
    if (!ok)
        remove_outputs(prefix);
    return ok;
}

static char *
dat_name(const char *prefix)
{
    g_autofree char *dat = g_strconcat(prefix, ".dat", NULL);
    return gp_quote(dat);
}

static gboolean
empty_error(const char *what, GError **error)
{
    g_set_error(error, RS_PLOT_ERROR, RS_PLOT_ERROR_EMPTY, "nothing to plot: %s", what);
    return FALSE;
}

/* --- strategies --- */

gboolean
rs_plot_strategies(const RsPlotBar *bars, guint n, double bound_s, const char *prefix,
                   GError **error)
{
    if (n == 0)
        return empty_error("no strategy", error);
    g_autoptr(GString) data =
        g_string_new("# index label network_s nvlink_s copy_s fixed_s time_s\n");
    for (guint i = 0; i < n; i++) {
        g_autofree char *label = gp_quote(bars[i].label);
        g_string_append_printf(data, "%u %s %.9g %.9g %.9g %.9g %.9g\n", i, label,
                               bars[i].network_s, bars[i].nvlink_s, bars[i].copy_s, bars[i].fixed_s,
                               bars[i].time_s);
    }
    g_autofree char *d = dat_name(prefix);
    g_autofree char *script = g_strdup_printf(
        "set title \"Refit time per strategy: first-order parts, predicted time and the lower "
        "bound\"\n"
        "set ylabel \"seconds\"\n"
        "set style data histograms\n"
        "set style histogram rowstacked\n"
        "set style fill solid 0.75 border -1\n"
        "set boxwidth 0.6\n"
        "set yrange [0:*]\n"
        "set key outside right top\n"
        "set xtics rotate by -20\n"
        "plot %s using 3:xtic(2) title \"network (busiest link)\" lc rgb \"#1f77b4\", \\\n"
        "  '' using 4 title \"NVLink (busiest link)\" lc rgb \"#2ca02c\", \\\n"
        "  '' using 5 title \"copies\" lc rgb \"#ff7f0e\", \\\n"
        "  '' using 6 title \"fixed costs\" lc rgb \"#7f7f7f\", \\\n"
        "  '' using 0:7 with points pt 7 ps 1.6 lc rgb \"black\" title \"predicted time\", \\\n"
        "  %.9g with lines dt 2 lw 2 lc rgb \"#d62728\" title \"lower bound\"\n",
        d, bound_s);
    return rs_plot_render(prefix, data->str, script, RS_PLOT_WIDTH, RS_PLOT_HEIGHT, error);
}

/* --- timeline --- */

/* At most this many destination GPUs get a row of the timeline (every k-th one beyond). */
#define TIMELINE_MAX_GPUS 64

gboolean
rs_plot_timeline(const RsTrace *trace, const char *prefix, GError **error)
{
    guint n_rows = rs_trace_get_n_rows(trace);
    guint32 max_dst = 0;
    for (guint i = 0; i < n_rows; i++)
        max_dst = MAX(max_dst, rs_trace_get_row(trace, i)->dst);
    /* The distinct destinations, by index: rank[g] is g's place among them. */
    g_autofree gint *rank = g_new(gint, max_dst + 1);
    for (guint32 g = 0; g <= max_dst; g++)
        rank[g] = -1;
    for (guint i = 0; i < n_rows; i++)
        rank[rs_trace_get_row(trace, i)->dst] = 0;
    guint n_dst = 0;
    for (guint32 g = 0; g <= max_dst; g++)
        if (rank[g] == 0)
            rank[g] = (gint)n_dst++;
    guint every = (n_dst + TIMELINE_MAX_GPUS - 1) / TIMELINE_MAX_GPUS;
    every = MAX(every, 1);
    g_autoptr(GString) data = g_string_new("# message src dst phase start_s end_s bytes\n");
    guint n = 0;
    for (guint i = 0; i < n_rows; i++) {
        const RsTraceRow *r = rs_trace_get_row(trace, i);
        if (isnan(r->start_s) || isnan(r->end_s) || r->src == r->dst ||
            rank[r->dst] % (gint)every != 0)
            continue;
        g_string_append_printf(data, "%u %u %u %u %.9g %.9g %" G_GUINT64_FORMAT "\n", r->message,
                               r->src, r->dst, r->phase, r->start_s, r->end_s, r->size_bytes);
        n++;
    }
    if (n == 0)
        return empty_error("no message with start and end times", error);
    g_autofree char *which = every > 1
                                 ? g_strdup_printf("one in %u of %u destination GPUs", every, n_dst)
                                 : g_strdup_printf("%u destination GPUs", n_dst);
    g_autofree char *d = dat_name(prefix);
    g_autofree char *script = g_strdup_printf(
        "set title \"Per-GPU timeline of messages (%s; a segment per message on its "
        "destination's row; colour: phase)\"\n"
        "set xlabel \"seconds\"\n"
        "set ylabel \"destination GPU\"\n"
        "set key off\n"
        "set palette defined (0 \"#1f77b4\", 1 \"#ff7f0e\", 2 \"#2ca02c\", 3 \"#d62728\")\n"
        "unset colorbox\n"
        "plot %s using 5:3:($6-$5):(0):4 with vectors nohead lw 1 lc palette\n",
        which, d);
    return rs_plot_render(prefix, data->str, script, RS_PLOT_WIDTH, RS_PLOT_HEIGHT, error);
}

/* --- link utilisation --- */

typedef struct {
    guint32 link;
    double load_s; /* bytes / capacity */
} LinkLoad;

/* Most loaded first: the time its bytes take at its capacity (by bytes, NVLink links
 * carrying more at half their rate hid the NIC that bound the whole run). */
static gint
by_load_desc(gconstpointer a, gconstpointer b)
{
    const LinkLoad *x = a, *y = b;
    if (x->load_s != y->load_s)
        return x->load_s > y->load_s ? -1 : 1;
    return x->link < y->link ? -1 : x->link > y->link;
}

static gint
by_link(gconstpointer a, gconstpointer b)
{
    const LinkLoad *x = a, *y = b;
    return x->link < y->link ? -1 : x->link > y->link;
}

gboolean
rs_plot_links(const RsFlowSimResult *flow, const RsTopology *topo, guint max_links,
              const char *prefix, GError **error)
{
    if (flow->n_buckets == 0 || flow->link_timeline_bytes == NULL)
        return empty_error("the simulation kept no utilisation timeline", error);
    g_autoptr(GArray) loads = g_array_new(FALSE, FALSE, sizeof(LinkLoad));
    for (guint32 l = 0; l < flow->n_links; l++)
        if (flow->link_bytes[l] > 0) {
            double cap = rs_link_get_capacity_bytes_per_s(rs_topology_get_link(topo, l));
            LinkLoad ll = {l, cap > 0 ? (double)flow->link_bytes[l] / cap : INFINITY};
            g_array_append_val(loads, ll);
        }
    if (loads->len == 0)
        return empty_error("no link carried bytes", error);
    g_array_sort(loads, by_load_desc);
    g_array_set_size(loads, MIN(loads->len, MAX(max_links, 1)));
    g_array_sort(loads, by_link);
    g_autoptr(GString) data = g_string_new("# time_s row utilisation link\n");
    g_autoptr(GString) ytics = g_string_new("set ytics (");
    for (guint row = 0; row < loads->len; row++) {
        guint32 l = g_array_index(loads, LinkLoad, row).link;
        double cap = rs_link_get_capacity_bytes_per_s(rs_topology_get_link(topo, l));
        g_autofree char *name = rs_topology_format_link(topo, l);
        g_autofree char *qname = gp_quote(name);
        g_string_append_printf(ytics, "%s%s %u", row ? ", " : "", qname, row);
        for (guint b = 0; b < flow->n_buckets; b++) {
            double u =
                flow->link_timeline_bytes[(gsize)l * flow->n_buckets + b] / (cap * flow->bucket_s);
            g_string_append_printf(data, "%.9g %u %.6f %s\n", (b + 0.5) * flow->bucket_s, row, u,
                                   name);
        }
        g_string_append_c(data, '\n');
    }
    g_string_append(ytics, ") font \",8\"\n");
    g_autofree char *d = dat_name(prefix);
    g_autofree char *script = g_strdup_printf(
        "set title \"Link utilisation over time (the %u most loaded links; colour: fraction "
        "of capacity)\"\n"
        "set xlabel \"seconds\"\n"
        "%s"
        "set cbrange [0:1]\n"
        "set cblabel \"utilisation\"\n"
        "set palette rgbformulae 33,13,10\n"
        "set key off\n"
        "set yrange [-0.5:%u.5]\n"
        "set xrange [0:%.9g]\n"
        "plot %s using 1:2:3 with image\n",
        loads->len, loads->len <= 48 ? ytics->str : "set ylabel \"link (by id)\"\n", loads->len - 1,
        /* The run, not the buckets' span (the last buckets can lie past its end). */
        flow->total_s > 0 ? MIN(flow->total_s, flow->n_buckets * flow->bucket_s)
                          : flow->n_buckets * flow->bucket_s,
        d);
    return rs_plot_render(prefix, data->str, script, RS_PLOT_WIDTH, RS_PLOT_HEIGHT, error);
}

/* --- traffic matrix --- */

gboolean
rs_plot_traffic(const RsTrace *trace, guint gpus_per_node, const char *prefix, GError **error)
{
    guint32 max_gpu = 0;
    guint n_rows = rs_trace_get_n_rows(trace);
    for (guint i = 0; i < n_rows; i++) {
        const RsTraceRow *r = rs_trace_get_row(trace, i);
        max_gpu = MAX(max_gpu, MAX(r->src, r->dst));
    }
    guint group = max_gpu + 1 > 512 ? MAX(gpus_per_node, 1) : 1;
    guint n = max_gpu / group + 1;
    /* Only the groups that send or receive get a row or column. */
    g_autofree gboolean *is_src = g_new0(gboolean, n);
    g_autofree gboolean *is_dst = g_new0(gboolean, n);
    g_autoptr(GHashTable) bytes =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    guint n_moved = 0;
    for (guint i = 0; i < n_rows; i++) {
        const RsTraceRow *r = rs_trace_get_row(trace, i);
        if (r->src == r->dst)
            continue;
        guint s = r->src / group, t = r->dst / group;
        is_src[s] = is_dst[t] = TRUE;
        gint64 key = (gint64)s * n + t;
        guint64 *v = g_hash_table_lookup(bytes, &key);
        if (v == NULL) {
            v = g_new0(guint64, 1);
            g_hash_table_insert(bytes, g_memdup2(&key, sizeof key), v);
        }
        *v += r->size_bytes;
        n_moved++;
    }
    if (n_moved == 0)
        return empty_error("no message between two GPUs", error);
    g_autoptr(GString) data = g_string_new("# dst src gb\n");
    for (guint s = 0; s < n; s++) {
        if (!is_src[s])
            continue;
        for (guint t = 0; t < n; t++) {
            if (!is_dst[t])
                continue;
            gint64 key = (gint64)s * n + t;
            guint64 *v = g_hash_table_lookup(bytes, &key);
            g_string_append_printf(data, "%u %u %.9g\n", t * group, s * group, v ? *v / 1e9 : 0.0);
        }
        g_string_append_c(data, '\n');
    }
    g_autofree char *d = dat_name(prefix);
    const char *unit = group > 1 ? "node (first GPU)" : "GPU";
    g_autofree char *script =
        g_strdup_printf("set title \"Traffic matrix: GB from each source to each destination %s\"\n"
                        "set xlabel \"destination %s\"\n"
                        "set ylabel \"source %s\"\n"
                        "set cblabel \"GB\"\n"
                        "set palette rgbformulae 7,5,15\n"
                        "set key off\n"
                        "plot %s using 1:2:3 with image\n",
                        unit, unit, unit, d);
    return rs_plot_render(prefix, data->str, script, RS_PLOT_WIDTH, RS_PLOT_HEIGHT, error);
}

/* --- predicted against measured --- */

gboolean
rs_plot_compare(const double *predicted_s, const double *measured_s, guint n, const char *prefix,
                GError **error)
{
    g_autoptr(GString) data = g_string_new("# predicted_s measured_s\n");
    guint kept = 0;
    for (guint i = 0; i < n; i++)
        if (predicted_s[i] > 0 && measured_s[i] > 0) {
            g_string_append_printf(data, "%.9g %.9g\n", predicted_s[i], measured_s[i]);
            kept++;
        }
    if (kept == 0)
        return empty_error("no message with both times", error);
    g_autofree char *d = dat_name(prefix);
    g_autofree char *script = g_strdup_printf(
        "set title \"Predicted against measured message time (y = x: exact)\"\n"
        "set xlabel \"measured s\"\n"
        "set ylabel \"predicted s\"\n"
        "set logscale xy\n"
        "set key top left\n"
        "plot %s using 2:1 with points pt 7 ps 0.6 lc rgb \"#1f77b4\" title \"messages\", \\\n"
        "  x with lines dt 2 lc rgb \"#d62728\" title \"y = x\"\n",
        d);
    return rs_plot_render(prefix, data->str, script, RS_PLOT_WIDTH, RS_PLOT_HEIGHT, error);
}

/* --- sweep --- */

static gint
compare_int64(gconstpointer a, gconstpointer b)
{
    gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
    return x < y ? -1 : x > y;
}

gboolean
rs_plot_sweep(const RsSweepPoint *points, const RsSweepResult *results, guint n, const char *prefix,
              GError **error)
{
    /* Block 0: the fastest feasible point per (tp, GPUs), by tp then GPUs; block 1: the
     * Pareto front; block 2: infeasible points. Blocks are split by two blank lines
     * (gnuplot's `index`). */
    g_autoptr(GString) data = g_string_new("# gpus time_s tp point\n");
    g_autoptr(GArray) tps = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (guint i = 0; i < n; i++) {
        gint64 tp = points[i].tp;
        gboolean seen = FALSE;
        for (guint k = 0; k < tps->len; k++)
            seen |= g_array_index(tps, gint64, k) == tp;
        if (!seen)
            g_array_append_val(tps, tp);
    }
    g_array_sort(tps, compare_int64);
    guint n_curve = 0, n_bad = 0;
    for (guint k = 0; k < tps->len; k++) {
        gint64 tp = g_array_index(tps, gint64, k);
        g_autoptr(GArray) fastest =
            rs_sweep_select(results, n, RS_SWEEP_SELECT_UNDER_TARGET, INFINITY);
        guint last_gpus = 0;
        for (guint j = 0; j < fastest->len; j++) {
            guint i = g_array_index(fastest, guint, j);
            if (points[i].tp != tp || results[i].n_infer_gpus == last_gpus)
                continue;
            last_gpus = results[i].n_infer_gpus;
            g_string_append_printf(data, "%u %.9g %" G_GINT64_FORMAT " %u\n",
                                   results[i].n_infer_gpus, results[i].time_s, tp, i);
            n_curve++;
        }
    }
    g_string_append(data, "\n\n");
    g_autoptr(GArray) pareto = rs_sweep_select(results, n, RS_SWEEP_SELECT_PARETO, 0);
    for (guint j = 0; j < pareto->len; j++) {
        guint i = g_array_index(pareto, guint, j);
        g_string_append_printf(data, "%u %.9g %" G_GINT64_FORMAT " %u\n", results[i].n_infer_gpus,
                               results[i].time_s, points[i].tp, i);
    }
    g_string_append(data, "\n\n");
    for (guint i = 0; i < n; i++)
        if (results[i].ok && !results[i].memory.feasible) {
            g_string_append_printf(data, "%u %.9g %" G_GINT64_FORMAT " %u\n",
                                   results[i].n_infer_gpus, results[i].time_s, points[i].tp, i);
            n_bad++;
        }
    if (n_curve == 0 && n_bad == 0)
        return empty_error("no point was planned", error);
    g_autofree char *d = dat_name(prefix);
    g_autoptr(GString) script = g_string_new(
        "set title \"Refit time against inference GPUs (fastest feasible layout per tp; "
        "Pareto front)\"\n"
        "set xlabel \"inference GPUs\"\n"
        "set ylabel \"refit time s\"\n"
        "set logscale x 2\n"
        "set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n"
        "set key outside right top\n"
        "plot ");
    const char *sep = "";
    for (guint k = 0; k < tps->len && n_curve > 0; k++) {
        gint64 tp = g_array_index(tps, gint64, k);
        g_autofree char *title =
            tp ? g_strdup_printf("tp=%" G_GINT64_FORMAT, tp) : g_strdup("the scenario's tp");
        g_string_append_printf(script,
                               "%s%s index 0 using ($3==%" G_GINT64_FORMAT
                               " ? $1 : 1/0):2 with linespoints pt 7 title \"%s\"",
                               sep, d, tp, title);
        sep = ", \\\n  ";
    }
    if (pareto->len > 0) {
        g_string_append_printf(script,
                               "%s%s index 1 using 1:2 with linespoints lw 3 pt 6 ps 2 lc rgb "
                               "\"black\" title \"Pareto front\"",
                               sep, d);
        sep = ", \\\n  ";
    }
    if (n_bad > 0)
        g_string_append_printf(script,
                               "%s%s index 2 using 1:2 with points pt 2 ps 1.5 lc rgb "
                               "\"#d62728\" title \"does not fit in GPU memory\"",
                               sep, d);
    g_string_append_c(script, '\n');
    return rs_plot_render(prefix, data->str, script->str, RS_PLOT_WIDTH, RS_PLOT_HEIGHT, error);
}

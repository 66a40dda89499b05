/* cmd-compare.c — `reshard compare PREDICTED MEASURED`: two traces (base/trace.h: the
 * simulator's and the executor's) compared per phase, message-size class and link class
 * (analysis/compare.h), with the messages of largest error; --plot draws predicted
 * against measured with y = x. */
#include "cli/cli.h"
#include "cli/outputs.h"

#include "analysis/compare.h"
#include "analysis/plot.h"

#include <stdio.h>

static char *opt_format;
static char *opt_plot;

static GOptionEntry entries[] = {
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table, csv or json (default table)",
     "FORMAT"},
    {"plot", 0, 0, G_OPTION_ARG_FILENAME, &opt_plot,
     "Plot predicted against measured message times (PREFIX.png, PREFIX.svg, and the "
     "gnuplot data and script PREFIX.dat, PREFIX.gp)",
     "PREFIX"},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    GOptionContext *context =
        g_option_context_new("PREDICTED.csv MEASURED.csv - compare a prediction with a run");
    g_option_context_set_summary(
        context, "Matches the messages of a predicted trace (reshard simulate --trace) and a\n"
                 "measured one (reshard run --trace) by id and prints, per phase, message-size\n"
                 "class and link class, predicted and measured seconds with the relative\n"
                 "error, the median and 90th percentile of the messages' |errors|, and the\n"
                 "messages with the largest error.");
    g_option_context_set_description(context,
                                     "Examples:\n"
                                     "  reshard compare predicted.csv measured.csv\n"
                                     "  reshard compare p.csv m.csv --format json --plot cmp\n");
    g_option_context_add_main_entries(context, entries, NULL);
    rs_cli_add_common_options(context);
    return context;
}

static RsTrace *
read_trace(const char *what, const char *path, GError **error)
{
    RsTrace *t = rs_trace_read_file(path, error);
    if (t == NULL && g_error_matches(*error, RS_TRACE_ERROR, RS_TRACE_ERROR_IO))
        g_prefix_error(error, "%s: ", what);
    return t;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "compare";
    g_autoptr(GError) error = NULL;
    GOptionContext *context = make_context();
    gboolean parsed = rs_cli_check_repeated_options(argc, argv, &error) &&
                      g_option_context_parse(context, &argc, &argv, &error);
    g_option_context_free(context);
    if (!parsed || argc != 3) {
        rs_cli_printerr("reshard compare: %s\nTry 'reshard help compare'.\n",
                        parsed ? "expected two trace files: PREDICTED MEASURED" : error->message);
        return RS_EXIT_USAGE;
    }
    RsFormat format;
    if (!rs_cli_parse_format(opt_format, &format, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    /* The plot's four files (rs_plot_render()) may not replace either trace. */
    rs_cli_note_input(argv[1]);
    rs_cli_note_input(argv[2]);
    if (opt_plot != NULL && !rs_cli_check_plot_outputs("--plot", opt_plot, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsTrace) predicted = read_trace("PREDICTED", argv[1], &error);
    if (predicted == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsTrace) measured = read_trace("MEASURED", argv[2], &error);
    if (measured == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsCompare) c = rs_compare_new(predicted, measured, &error);
    if (c == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_plot != NULL) {
        guint n;
        const RsCompareMessage *m = rs_compare_get_messages(c, &n);
        g_autofree double *p = g_new(double, n);
        g_autofree double *q = g_new(double, n);
        for (guint i = 0; i < n; i++) {
            p[i] = m[i].predicted_s;
            q[i] = m[i].measured_s;
        }
        if (!rs_cli_begin_plot_outputs("--plot", opt_plot, &error))
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        if (!rs_plot_compare(p, q, n, opt_plot, &error)) /* (it removes its files) */
            return rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    }
    g_autoptr(GString) out = g_string_new(NULL);
    rs_compare_report(c, format, out);
    fputs(out->str, stdout);
    return RS_EXIT_OK;
}

const RsCommand rs_command_compare = {
    "compare",
    "Compare a predicted trace with a measured one: per phase, size and link class",
    run,
    make_context,
};

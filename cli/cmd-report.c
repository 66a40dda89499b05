/* cmd-report.c — `reshard report`: the refit of a scenario planned and simulated as
 * `reshard simulate` does (every simulate option applies), written as one self-contained
 * HTML file with its plots inlined as SVG, or as Markdown (analysis/report-html.h). */
#include "cli/cli.h"

static char *opt_output;

static GOptionEntry entries[] = {
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output,
     "The document to write (default report.html; report.md with --format md; - for standard output)", "FILE"},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    GOptionContext *context = rs_cli_simulate_make_context(
        "- write a self-contained HTML (or Markdown) report of a simulated refit");
    g_option_context_set_summary(
        context, "Plans and simulates a scenario as `reshard simulate` does and writes one\n"
                 "self-contained HTML file (--format md: Markdown) with the scenario, both\n"
                 "layouts, the memory per GPU, the strategies table, the lower bound, the\n"
                 "plots (time per strategy, per-GPU timeline, link utilisation, traffic\n"
                 "matrix; SVG inlined, nothing fetched to view it) and the provenance.\n"
                 "gnuplot draws the plots. --format is html (default) or md.");
    g_option_context_set_description(
        context, "Examples:\n"
                 "  reshard report                          # the default scenario\n"
                 "  reshard report --scenario deepseek-v3-gb200 --output gb200.html\n"
                 "  reshard report --format md --network bottleneck -o report.md\n");
    g_option_context_add_main_entries(context, entries, NULL);
    return context;
}

static int
run(int argc, char **argv)
{
    int code = RS_EXIT_OK;
    if (!rs_cli_parse("report", make_context, &argc, &argv, &code))
        return code;
    return rs_cli_simulate_report(opt_output);
}

const RsCommand rs_command_report = {
    "report",
    "Write a self-contained HTML (or Markdown) report of a simulated refit with its plots",
    run,
    make_context,
};

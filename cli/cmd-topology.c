/* cmd-topology.c — `reshard topology show NAME|FILE` and `reshard topology list`: the link
 * graph a topology file describes, so any route and capacity can be checked by hand or
 * replayed in another simulator. */
#include "cli/cli.h"

#include <json-glib/json-glib.h>

#include "analysis/report.h"
#include "cli/topology-args.h"
#include "base/data.h"

#include <stdio.h>
#include <string.h>

static gboolean opt_links;
static char *opt_format;

static GOptionEntry entries[] = {
    {"links", 'l', 0, G_OPTION_ARG_NONE, &opt_links,
     "List every directed link with its capacity and latency", NULL},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format,
     "table, csv (one row per link) or json (default table)", "FORMAT"},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    GOptionContext *context =
        g_option_context_new("show NAME|FILE | list - show a topology or list them");
    g_option_context_set_summary(
        context, "show: prints the nodes, NVLink domains, rail-optimized fabric (scalable\n"
                 "units, leaves, spine, oversubscription, PXN), each link kind with its\n"
                 "bandwidth, efficiency, capacity and latency, example routes and totals.\n"
                 "list: prints the shipped topology names.");
    g_option_context_set_description(
        context, "Examples:\n"
                 "  reshard topology show dgx-h100 --nodes 64\n"
                 "  reshard topology show gb200-nvl72 --nodes 144 --nic-bw 800Gbit/s\n"
                 "  reshard topology show tests/data/small-fabric.yaml --links --format csv\n");
    g_option_context_add_main_entries(context, entries, NULL);
    g_option_context_add_group(context, rs_topology_args_group_new());
    rs_cli_add_common_options(context);
    return context;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "topology";
    int code = RS_EXIT_OK;
    GOptionContext *context = make_context();
    /* The action and the name are positional: let GOption keep them. */
    g_option_context_set_strict_posix(context, FALSE);
    g_autoptr(GError) error = NULL;
    gboolean ok = rs_cli_check_repeated_options(argc, argv, &error) &&
                  g_option_context_parse(context, &argc, &argv, &error);
    g_option_context_free(context);
    if (!ok) {
        rs_cli_printerr("reshard %s: %s\nTry 'reshard help %s'.\n", cmd, error->message, cmd);
        return RS_EXIT_USAGE;
    }
    if (rs_cli_verbose)
        g_setenv("G_MESSAGES_DEBUG", "all", TRUE);
    RsFormat format;
    if (!rs_cli_parse_format(opt_format, &format, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        /* In the format asked for (it printed plain names under csv and json). */
        g_auto(GStrv) names = rs_data_list("topologies");
        if (format == RS_FORMAT_JSON) {
            g_autoptr(JsonBuilder) b = json_builder_new();
            json_builder_begin_array(b);
            for (guint i = 0; names[i] != NULL; i++)
                json_builder_add_string_value(b, names[i]);
            json_builder_end_array(b);
            g_autoptr(JsonGenerator) gen = json_generator_new();
            g_autoptr(JsonNode) root = json_builder_get_root(b);
            json_generator_set_root(gen, root);
            json_generator_set_pretty(gen, TRUE);
            g_autofree char *text = json_generator_to_data(gen, NULL);
            printf("%s\n", text);
            return RS_EXIT_OK;
        }
        if (format == RS_FORMAT_CSV)
            printf("name\n");
        for (guint i = 0; names[i] != NULL; i++)
            printf("%s\n", names[i]);
        return RS_EXIT_OK;
    }
    if (argc != 3 || strcmp(argv[1], "show") != 0) {
        rs_cli_printerr(
            "reshard %s: expected \"show NAME|FILE\" or \"list\"\nTry 'reshard help %s'.\n", cmd,
            cmd);
        return RS_EXIT_USAGE;
    }
    RsTopologyOverrides ov;
    if (!rs_topology_args_get(&ov, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autofree char *path = rs_data_find("topologies", argv[2], &error);
    if (path == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsTopology) topo = rs_topology_load_file(path, &ov, &error);
    if (topo == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    rs_cli_print_topology_warnings(topo);
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_topology(topo, opt_links, format, out);
    fputs(out->str, stdout);
    return code;
}

const RsCommand rs_command_topology = {
    "topology",
    "Show a topology: nodes, NVLink domains, fabric, links and routes",
    run,
    make_context,
};

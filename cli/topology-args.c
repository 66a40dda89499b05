/* topology-args.c — parsing of the topology override flags; see topology-args.h. */
#include "cli/topology-args.h"
#include "cli/outputs.h"

#include "cli/cli.h"

#include "base/data.h"
#include "base/mesh.h"
#include "base/units.h"

#include <math.h>

static char *opt_nodes; /* an integer, as text (rs_cli_parse_int) */
static char *opt_nic_bw;
static char *opt_oversubscription;
static gboolean opt_pxn;
static gboolean opt_no_pxn;

static GOptionEntry entries[] = {
    {"nodes", 'n', 0, G_OPTION_ARG_STRING, &opt_nodes, "Number of nodes of the topology", "N"},
    {"nic-bw", 0, 0, G_OPTION_ARG_STRING, &opt_nic_bw,
     "NIC bandwidth per direction, with its unit (800Gbit/s)", "BW"},
    {"oversubscription", 0, 0, G_OPTION_ARG_STRING, &opt_oversubscription,
     "Leaf downlink:uplink ratio (1, 2 or 2:1)", "X"},
    {"pxn", 0, 0, G_OPTION_ARG_NONE, &opt_pxn,
     "Route rail-mismatched traffic over NVLink to the right rail first", NULL},
    {"no-pxn", 0, 0, G_OPTION_ARG_NONE, &opt_no_pxn, "Never route over NVLink to another NIC",
     NULL},
    {NULL},
};

GOptionGroup *
rs_topology_args_group_new(void)
{
    GOptionGroup *group = g_option_group_new("topology", "Topology overrides:",
                                             "Show the topology override options", NULL, NULL);
    g_option_group_add_entries(group, entries);
    return group;
}

static gboolean
bad_value(GError **error, const char *flag, const char *message)
{
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: %s", flag, message);
    return FALSE;
}

gboolean
rs_topology_args_get(RsTopologyOverrides *ov, GError **error)
{
    *ov = (RsTopologyOverrides){0};
    /* n_nodes 0 keeps the topology's (or the scenario's) count; --nodes 0 is an error. */
    gint64 nodes = 0;
    /* At most one node per GPU of RS_MAX_RANKS; the topology then checks nodes × its GPUs
     * per node against it (naming --nodes). */
    if (!rs_cli_parse_int("--nodes", opt_nodes, 1, RS_MAX_RANKS, &nodes, error))
        return FALSE;
    ov->n_nodes = (guint)nodes;
    if (opt_nic_bw != NULL) {
        g_autoptr(GError) local = NULL;
        if (!rs_units_parse_bandwidth(opt_nic_bw, &ov->nic_bw_bytes_per_s, &local))
            return bad_value(error, "--nic-bw", local->message);
    }
    if (opt_oversubscription != NULL) {
        double v = 0;
        if (!rs_topology_parse_oversubscription(opt_oversubscription, &v)) {
            g_autofree char *m = g_strdup_printf("\"%s\": %s", opt_oversubscription,
                                                 RS_TOPOLOGY_OVERSUBSCRIPTION_EXPECTED);
            return bad_value(error, "--oversubscription", m);
        }
        ov->oversubscription = v;
    }
    if (opt_pxn && opt_no_pxn)
        return bad_value(error, "--pxn", "--pxn and --no-pxn contradict each other");
    ov->pxn = opt_pxn      ? RS_TOPOLOGY_PXN_ON
              : opt_no_pxn ? RS_TOPOLOGY_PXN_OFF
                           : RS_TOPOLOGY_PXN_KEEP;
    return TRUE;
}

void
rs_cli_print_topology_warnings(const RsTopology *topo)
{
    for (guint i = 0; topo != NULL && i < rs_topology_get_n_warnings(topo); i++)
        rs_cli_warn(NULL, "%s", rs_topology_get_warning(topo, i));
}

RsTopology *
rs_topology_args_load(const char *name, GError **error)
{
    g_autofree char *path = rs_data_find("topologies", name, error);
    if (path == NULL)
        return NULL;
    RsTopologyOverrides ov;
    if (!rs_topology_args_get(&ov, error))
        return NULL;
    rs_cli_note_input(path);
    RsTopology *topo = rs_topology_load_file(path, &ov, error);
    rs_cli_print_topology_warnings(topo);
    return topo;
}

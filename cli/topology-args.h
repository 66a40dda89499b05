/* topology-args.h — the flags that override a topology file's figures, shared by
 * `reshard topology`, `reshard simulate` and any command that loads a topology:
 *   --nodes N, --nic-bw BW (with a unit: 800Gbit/s, 100GB/s), --oversubscription X (or
 *   "X:1"), --pxn / --no-pxn. */
#pragma once

#include <glib.h>

#include "topologies/topology.h"

G_BEGIN_DECLS

/**
 * rs_topology_args_group_new:
 * Returns: (transfer full): an option group with the flags above, to add to a context.
 * The values live in static storage; one command runs per process.
 */
GOptionGroup *rs_topology_args_group_new(void);

/**
 * rs_topology_args_get:
 * @ov: (out caller-allocates): the overrides given (zero for flags not given)
 * @error: G_OPTION_ERROR_BAD_VALUE naming the flag: a NIC bandwidth without a unit or with
 *   an ambiguous one, an oversubscription below 1, a negative node count, or both --pxn and
 *   --no-pxn
 *
 * Returns: TRUE on success.
 */
gboolean rs_topology_args_get(RsTopologyOverrides *ov, GError **error);

/**
 * rs_cli_print_topology_warnings:
 * @topo: (nullable): a loaded topology
 *
 * Prints the defaults its file's loading took (rs_topology_get_warning()) on stderr,
 * "reshard CMD: warning: …" (the program name g_get_prgname() holds), one a line: a
 * default is said, never silent, as for a model's (rs_cli_print_model_warnings()); through
 * rs_cli_warn(), so nothing on a secondary rank.
 */
void rs_cli_print_topology_warnings(const RsTopology *topo);

/**
 * rs_topology_args_load:
 * @name: a shipped topology name or a path
 * @error: RS_DATA_ERROR (not found), RS_YAML_ERROR (a bad file), or the errors of
 *   rs_topology_args_get()
 *
 * Returns: (transfer full): the topology with the flags above applied, or NULL.
 */
RsTopology *rs_topology_args_load(const char *name, GError **error);

G_END_DECLS

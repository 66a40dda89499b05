/* topology.h — the GPUs of a cluster and the directed links between them.
 *
 * A topology file (topologies/NAME.yaml) describes nodes of GPUs, NVLink domains (groups of
 * nodes whose GPUs reach each other over NVLink through NVSwitch: 1 node of 8 for a DGX
 * H100, 18 trays of 4 for an NVL72 rack), one NIC per GPU on a rail-optimized scale-out
 * fabric, and per-message software overhead. Every figure carries its unit.
 *
 * The graph: each GPU g has four directed links, in this order of link id (4·g + k):
 *   k=0 NVLink egress  (GPU → NVSwitch), k=1 NVLink ingress (NVSwitch → GPU),
 *   k=2 NIC egress     (NIC → fabric),   k=3 NIC ingress    (fabric → NIC).
 * NVSwitch and the fabric core are non-blocking (DGX BasePOD / SuperPOD reference
 * architectures), so they add latency but no capacity limit. GPU indices are global:
 * node n holds GPUs [n·gpus_per_node, (n+1)·gpus_per_node); a GPU's rail is its index
 * within its node.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define RS_TOPOLOGY_ERROR (rs_topology_error_quark())
GQuark rs_topology_error_quark(void);

typedef enum {
    RS_TOPOLOGY_ERROR_INVALID, /* values that do not describe a cluster */
} RsTopologyError;

typedef enum {
    RS_LINK_NVLINK_EGRESS,
    RS_LINK_NVLINK_INGRESS,
    RS_LINK_NIC_EGRESS,
    RS_LINK_NIC_INGRESS,
    RS_LINK_KIND_N
} RsLinkKind;

/* Longest route, in links. */
#define RS_TOPOLOGY_MAX_ROUTE 8

typedef struct {
    RsLinkKind kind;
    double bw_bytes_per_s; /* peak bandwidth of this direction */
    double efficiency;     /* achievable fraction of the peak, (0, 1] */
    double latency_s;      /* paid once per message crossing the link */
} RsLink;

typedef struct {
    guint n_nodes; /* 0 keeps the file's node count */
} RsTopologyOverrides;

typedef struct _RsTopology RsTopology;

/**
 * rs_topology_load_file:
 * @path: a topology YAML file
 * @overrides: (nullable): values that replace the file's
 * @error: RS_YAML_ERROR for unreadable or malformed YAML, a missing or unknown field, or a
 *   value without or with an ambiguous unit ("path:14:16: nic.bandwidth: bandwidth
 *   \"400 Gb/s\": ambiguous, use Gbit/s or GB/s"); RS_TOPOLOGY_ERROR_INVALID when
 *   nodes_per_nvlink_domain does not divide the node count
 *
 * Returns: (transfer full): the topology, or NULL on error.
 */
RsTopology *rs_topology_load_file(const char *path, const RsTopologyOverrides *overrides,
                                  GError **error);

/** rs_topology_load_string: as rs_topology_load_file() from text; @name is used in messages. */
RsTopology *rs_topology_load_string(const char *text, const char *name,
                                    const RsTopologyOverrides *overrides, GError **error);

void rs_topology_free(RsTopology *topo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsTopology, rs_topology_free)

/** rs_topology_get_name: Returns: (transfer none): the topology's name. */
const char *rs_topology_get_name(const RsTopology *topo);
/** rs_topology_get_gpu_model: Returns: (transfer none): e.g. "H100 SXM5 80GB". */
const char *rs_topology_get_gpu_model(const RsTopology *topo);
/** rs_topology_get_gpu_memory_bytes: Returns: memory of one GPU, bytes. */
guint64 rs_topology_get_gpu_memory_bytes(const RsTopology *topo);
guint rs_topology_get_n_nodes(const RsTopology *topo);
guint rs_topology_get_gpus_per_node(const RsTopology *topo);
guint rs_topology_get_n_gpus(const RsTopology *topo);
/** rs_topology_get_gpus_per_nvlink_domain: Returns: GPUs in one NVLink domain. */
guint rs_topology_get_gpus_per_nvlink_domain(const RsTopology *topo);
guint rs_topology_get_n_nvlink_domains(const RsTopology *topo);
/** rs_topology_get_nvlink_domain: Returns: the NVLink domain index of @gpu. */
guint rs_topology_get_nvlink_domain(const RsTopology *topo, guint32 gpu);
/** rs_topology_get_node: Returns: the node index of @gpu. */
guint rs_topology_get_node(const RsTopology *topo, guint32 gpu);
/** rs_topology_get_rail: Returns: the rail of @gpu (its index within its node). */
guint rs_topology_get_rail(const RsTopology *topo, guint32 gpu);
/** rs_topology_get_message_overhead_s: Returns: software cost per message, seconds. */
double rs_topology_get_message_overhead_s(const RsTopology *topo);

guint rs_topology_get_n_links(const RsTopology *topo);
/** rs_topology_get_link: Returns: (transfer none): link @link_id, alive as @topo. */
const RsLink *rs_topology_get_link(const RsTopology *topo, guint32 link_id);
/** rs_topology_get_link_gpu: Returns: the GPU link @link_id belongs to. */
guint32 rs_topology_get_link_gpu(const RsTopology *topo, guint32 link_id);
/** rs_topology_get_gpu_link: Returns: the id of @gpu's link of @kind. */
guint32 rs_topology_get_gpu_link(const RsTopology *topo, guint32 gpu, RsLinkKind kind);
/** rs_topology_format_link: Returns: (transfer full): "gpu12.nic-egress". */
char *rs_topology_format_link(const RsTopology *topo, guint32 link_id);
/** rs_link_kind_get_name: Returns: (transfer none): "nvlink-egress", "nic-ingress", … */
const char *rs_link_kind_get_name(RsLinkKind kind);
/** rs_link_get_capacity_bytes_per_s: Returns: bw_bytes_per_s × efficiency. */
double rs_link_get_capacity_bytes_per_s(const RsLink *link);

/**
 * rs_topology_route:
 * @src, @dst: GPUs of the topology
 * @links: (out caller-allocates) (array fixed-size=8): link ids crossed, in order
 *
 * Same GPU: no links (a local copy). Same NVLink domain: NVLink egress of @src, NVLink
 * ingress of @dst. Otherwise: NIC egress of @src, NIC ingress of @dst (the NIC of a GPU's
 * own rail; the fabric core is non-blocking).
 *
 * Returns: the number of links written.
 */
guint rs_topology_route(const RsTopology *topo, guint32 src, guint32 dst, guint32 *links);

/**
 * rs_topology_get_message_latency_s:
 * Returns: the fixed cost of one message from @src to @dst: the software overhead plus the
 * latency of every link on its route (0 for @src == @dst).
 */
double rs_topology_get_message_latency_s(const RsTopology *topo, guint32 src, guint32 dst);

/** rs_topology_format_summary: Returns: (transfer full): a one-line description. */
char *rs_topology_format_summary(const RsTopology *topo);

G_END_DECLS

/* topologies/ — the cluster a refit runs on. It owns topology loading from a fabric file
 * (this header: nodes, NVLink domains, NICs, rails, leaves and spine as directed links
 * with bandwidth, efficiency and latency; routes between GPUs, with PXN; copy rates) and
 * the shipped fabric files beside it (dgx-h100.yaml, dgx-b200.yaml, gb200-nvl72.yaml,
 * gb300-nvl72.yaml). It uses base/ only; scenarios (layout/), plans and the simulator
 * read topologies, and `reshard calibrate` writes a fabric file from measurements.
 *
 * topology.h — the GPUs of a cluster and the directed links between them.
 *
 * A topology file (topologies/NAME.yaml) describes nodes of GPUs, NVLink domains (groups of
 * nodes whose GPUs reach each other over NVLink through NVSwitch: 1 node of 8 for a DGX
 * H100, 18 trays of 4 for an NVL72 rack), one NIC per GPU attached over PCIe, a
 * rail-optimized two-tier fat tree (NIC k of every node of a scalable unit on leaf k of that
 * unit; leaves joined by a spine), and a per-message software overhead. Every figure
 * carries its unit.
 *
 * The graph is an explicit array of directed links, each with a peak bandwidth, an
 * achievable efficiency (capacity = bandwidth × efficiency) and a latency:
 *   per GPU g, in this order of link id:
 *     nvlink-egress  (GPU → NVSwitch)      nvlink-ingress (NVSwitch → GPU)
 *     pcie-egress    (GPU → its NIC)       pcie-ingress   (NIC → GPU)     [only with `pcie`]
 *     nic-egress     (NIC → leaf)          nic-ingress    (leaf → NIC)
 *   then per leaf (scalable unit u, rail r):
 *     uplink   (leaf → spine), downlink (spine → leaf): the aggregate of the leaf's spine
 *     ports, bandwidth = (NICs on the leaf) × NIC bandwidth / oversubscription.
 * NVSwitch, the leaves' and the spine's switching are non-blocking (DGX BasePOD and SuperPOD
 * reference architectures), so they add latency but no capacity limit; ECMP is taken as
 * spreading a leaf's traffic evenly over its uplinks, which the aggregate link models.
 *
 * GPU indices are global: node n holds GPUs [n·gpus_per_node, (n+1)·gpus_per_node); a GPU's
 * rail is its index within its node; NVLink domain d holds nodes
 * [d·nodes_per_nvlink_domain, …); scalable unit u holds nodes [u·scalable_unit_nodes, …)
 * (the last one may be partial). An NVLink domain never spans two scalable units.
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
    RS_LINK_NIC_EGRESS,    /* NIC → leaf */
    RS_LINK_NIC_INGRESS,   /* leaf → NIC */
    RS_LINK_PCIE_EGRESS,   /* GPU → NIC */
    RS_LINK_PCIE_INGRESS,  /* NIC → GPU */
    RS_LINK_LEAF_UPLINK,   /* leaf → spine */
    RS_LINK_LEAF_DOWNLINK, /* spine → leaf */
    RS_LINK_KIND_N
} RsLinkKind;

/* Longest route, in links: PXN over NVLink, then PCIe, NIC, uplink, downlink, NIC, PCIe. */
#define RS_TOPOLOGY_MAX_ROUTE 8
/* The smallest gpu.memory a topology accepts (the default staging is 1/16 of it). */
#define RS_TOPOLOGY_MIN_GPU_MEMORY_BYTES (G_GUINT64_CONSTANT(16) << 20)
/* The largest GPU memory accepted, 16 TiB: fifty times the largest GPU shipped (288 GB HBM3e
 * of the B300, NVIDIA Blackwell Ultra datasheet); more is a typo. */
#define RS_TOPOLOGY_MAX_GPU_MEMORY_BYTES (G_GUINT64_CONSTANT(16) << 40)
/* The largest leaf oversubscription (downlink:uplink) accepted: 64:1, beyond any fabric a
 * training cluster is built with (1:1 to 4:1 in practice). */
#define RS_TOPOLOGY_MAX_OVERSUBSCRIPTION 64.0

/**
 * rs_topology_parse_oversubscription:
 * @text: "2", "1.5", "2:1" or "3:2": a leaf's downlink over its uplink bandwidth
 * @out: (out): the ratio, from 1 to RS_TOPOLOGY_MAX_OVERSUBSCRIPTION
 *
 * Returns: FALSE (and leaves @out) when @text is not a number or a ratio A:B of positive
 * finite numbers whose quotient lies from 1 to RS_TOPOLOGY_MAX_OVERSUBSCRIPTION.
 */
gboolean rs_topology_parse_oversubscription(const char *text, double *out);

/* The wording both readers use for a value rs_topology_parse_oversubscription() refuses. */
#define RS_TOPOLOGY_OVERSUBSCRIPTION_EXPECTED \
    "expected a ratio from 1 to 64 such as 2, 1.5, 2:1 or 3:2"

typedef struct {
    RsLinkKind kind;
    double bw_bytes_per_s; /* peak bandwidth of this direction, bytes/s */
    double efficiency;     /* achievable fraction of the peak, (0, 1] */
    double latency_s;      /* paid once per message crossing the link, seconds */
    guint32 owner;         /* the GPU of a per-GPU link; the leaf (u·n_rails + r) of a leaf link */
} RsLink;

typedef enum {
    RS_TOPOLOGY_PXN_KEEP = 0, /* as the file says */
    RS_TOPOLOGY_PXN_ON,
    RS_TOPOLOGY_PXN_OFF,
} RsTopologyPxn;

/* Values that replace the file's; zero keeps the file's value. */
typedef struct {
    guint n_nodes;
    double nic_bw_bytes_per_s; /* per direction, bytes/s */
    double oversubscription;   /* >= 1 */
    RsTopologyPxn pxn;
} RsTopologyOverrides;

typedef struct _RsTopology RsTopology;

/* Which side of a copy is cut into runs: the bytes read (the source's memory) or the bytes
 * written (the destination's). */
typedef enum {
    RS_COPY_READ,
    RS_COPY_WRITE,
    RS_COPY_SIDE_N
} RsCopySide;

/* Who copies at once: one rank alone, or the ranks of a node that receive at once in the
 * refits to predict (reshard calibrate's K; rates are their sum). */
typedef enum {
    RS_COPY_ONE_RANK,
    RS_COPY_NODE,
    RS_COPY_SCOPE_N
} RsCopyScope;

/* How fast ranks copy bytes in memory (the topology's optional `copy` section, measured
 * by reshard calibrate): bytes per second when one side of the copy is made of runs of
 * @run_bytes adjacent bytes, spaced out (reshard calibrate: one run in every 4 of a padded
 * buffer), and the other side is contiguous; for bytes received from another rank
 * (bytes_per_s) and for local copies, a rank's own source or staging bytes into its
 * destination shard (local_bytes_per_s). */
typedef struct {
    guint64 run_bytes;
    double bytes_per_s[RS_COPY_SIDE_N][RS_COPY_SCOPE_N];
    double local_bytes_per_s[RS_COPY_SIDE_N][RS_COPY_SCOPE_N];
} RsCopyRate;

/**
 * rs_copy_rate_get_key:
 * @local: a local copy's rate, else a received message's
 * Returns: (transfer none): the copy section's key of that rate: "read_one_rank",
 *   "write_node", "local_read_node", …
 */
const char *rs_copy_rate_get_key(gboolean local, RsCopySide side, RsCopyScope scope);

/** rs_copy_rate_get: Returns: the rate of @rate named by (@local, @side, @scope), bytes/s. */
double rs_copy_rate_get(const RsCopyRate *rate, gboolean local, RsCopySide side,
                        RsCopyScope scope);

/* What a GPU costs besides moving bytes over links (the topology's optional `gpu:` keys
 * beyond model and memory; one GPU type per topology file). Every field 0 when absent:
 * zero costs, an infinitely fast GPU, so topologies without them keep their answers. The
 * shipped files cite each figure (datasheet, NVIDIA documentation or a published
 * measurement); sim/gpu-cost.h turns them into per-message and per-round times. */
typedef struct {
    double hbm_bytes_per_s;         /* device memory bandwidth, datasheet (`hbm_bandwidth`) */
    double kernel_copy_bytes_per_s; /* bytes a pack/unpack kernel copies per second, each
                                     * byte read once and written once: HBM traffic is twice
                                     * this (`kernel_copy_bandwidth`) */
    double copy_engine_bytes_per_s; /* bytes per second of cudaMemcpyAsync device to device
                                     * on the copy engines (`copy_engine_bandwidth`) */
    double h2d_bytes_per_s;         /* host-to-device copy per GPU, PCIe or C2C
                                     * (`h2d_bandwidth`) */
    double kernel_launch_s;         /* one kernel launch or NCCL group post, seconds
                                     * (`kernel_launch`) */
    double stream_sync_s;           /* one stream or event synchronisation, seconds
                                     * (`stream_sync`) */
    double strided_row_penalty;     /* bytes of memory traffic each run of adjacent bytes
                                     * adds to a copy: a run of r bytes costs as r + penalty
                                     * bytes (the DRAM access granularity a run's unaligned
                                     * ends waste; `strided_row_penalty`, a size) */
} RsGpuCosts;

/**
 * rs_topology_get_gpu_costs:
 * Returns: (transfer none): the GPU costs of @topo, never NULL (all zero when the file
 *   gives none), alive as @topo.
 */
const RsGpuCosts *rs_topology_get_gpu_costs(const RsTopology *topo);

/**
 * rs_topology_load_file:
 * @path: a topology YAML file
 * @overrides: (nullable): values that replace the file's
 * @error: RS_YAML_ERROR for unreadable or malformed YAML, a missing or unknown field, or a
 *   value without or with an ambiguous unit ("path:14:16: nic.bandwidth: bandwidth
 *   \"400 Gb/s\": ambiguous, use Gbit/s or GB/s"); RS_TOPOLOGY_ERROR_INVALID when
 *   nodes_per_nvlink_domain does not divide the node count or the scalable unit, or an
 *   override is out of range
 *
 * File keys: name, description, nodes, gpus_per_node, nodes_per_nvlink_domain (default 1),
 * gpu {model, memory, and optionally hbm_bandwidth, kernel_copy_bandwidth,
 * copy_engine_bandwidth, h2d_bandwidth (bandwidths), kernel_launch, stream_sync (durations),
 * strided_row_penalty (a size): RsGpuCosts; a negative value is an error naming its field},
 * nvlink / nic / pcie {bandwidth, efficiency (default 1), latency
 * (default 0)} (pcie optional: without it the NIC is taken as attached to the GPU
 * directly), fabric {scalable_unit_nodes (default: all nodes), oversubscription (a number
 * >= 1 or "N:1", default 1), switch_latency (per leaf or spine crossed, default 0),
 * uplink_efficiency (default: the NIC's), pxn (default false)}, software {message_overhead,
 * chunk_overhead (a duration, default 0) and chunk_size (the size it was measured at,
 * required with a positive chunk_overhead): the executor's fixed cost per chunk operation,
 * which reshard calibrate fits},
 * copy {runs: a list, by strictly increasing bytes, of {bytes, read_one_rank, read_node,
 * write_one_rank, write_node, and optionally local_read_one_rank, local_read_node,
 * local_write_one_rank, local_write_node (an entry without one takes its own message
 * rate)}} (optional:
 * RsCopyRate; "copy.runs[2].read_node: must be positive" names a bad entry).
 *
 * Returns: (transfer full): the topology, or NULL on error.
 */
RsTopology *rs_topology_load_file(const char *path, const RsTopologyOverrides *overrides,
                                  GError **error);

/**
 * rs_topology_check_file:
 * @path: a topology YAML file
 * @error: the errors rs_topology_load_file() gives for the file's fields (syntax, unknown
 *   or missing fields, values, units)
 *
 * Checks a topology file before it is used with overrides that can change its node count
 * (a sweep's points): every field as rs_topology_load_file() reads it, but not whether
 * the node counts tile (nodes_per_nvlink_domain, scalable units, RS_MAX_RANKS), which
 * depend on the overrides. Returns: TRUE when the fields are valid.
 */
gboolean rs_topology_check_file(const char *path, GError **error);

/** rs_topology_load_string: as rs_topology_load_file() from text; @name is used in messages. */
RsTopology *rs_topology_load_string(const char *text, const char *name,
                                    const RsTopologyOverrides *overrides, GError **error);

void rs_topology_free(RsTopology *topo);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsTopology, rs_topology_free)

/**
 * rs_topology_get_n_warnings:
 *
 * Returns: how many defaults the file's loading took for keys it omits that change the
 * figures: a link class's efficiency (1.0) or latency (0 us), software.message_overhead
 * (0 us), and, when nodes of more than one NVLink domain share the fabric, the fabric
 * section or its switch_latency (0 us) and pxn (false). The shipped topologies state them
 * all; a calibrated one (one node) states what it measured.
 */
guint rs_topology_get_n_warnings(const RsTopology *topo);

/**
 * rs_topology_get_warning:
 * @index: below rs_topology_get_n_warnings()
 *
 * Returns: (transfer none): "PATH: nvlink.efficiency not given: taking 1.0 (...)".
 */
const char *rs_topology_get_warning(const RsTopology *topo, guint index);

/** rs_topology_get_name: Returns: (transfer none): the topology's name. */
const char *rs_topology_get_name(const RsTopology *topo);
/** rs_topology_get_description: Returns: (transfer none): one line, "" when none. */
const char *rs_topology_get_description(const RsTopology *topo);
/** rs_topology_get_gpu_model: Returns: (transfer none): e.g. "H100 SXM5 80GB". */
const char *rs_topology_get_gpu_model(const RsTopology *topo);
/** rs_topology_get_gpu_memory_bytes: Returns: memory of one GPU, bytes (0 when unknown). */
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
/** rs_topology_get_n_rails: Returns: rails per scalable unit (= GPUs per node). */
guint rs_topology_get_n_rails(const RsTopology *topo);
/** rs_topology_get_scalable_unit_nodes: Returns: nodes per (full) scalable unit. */
guint rs_topology_get_scalable_unit_nodes(const RsTopology *topo);
guint rs_topology_get_n_scalable_units(const RsTopology *topo);

/**
 * rs_topology_describe_scalable_units:
 * @topo: the topology
 *
 * Its scalable units in words: "2 scalable units of 32 nodes", and where the node count is
 * not a multiple of the unit, what the last one holds: "7 scalable units of 5 nodes, the
 * last with 2" (32 nodes), "1 scalable unit, 2 of its 5 nodes".
 *
 * Returns: (transfer full): the text; free with g_free().
 */
char *rs_topology_describe_scalable_units(const RsTopology *topo);
/** rs_topology_get_scalable_unit: Returns: the scalable unit of @gpu. */
guint rs_topology_get_scalable_unit(const RsTopology *topo, guint32 gpu);
/** rs_topology_get_oversubscription: Returns: leaf downlink / uplink bandwidth, >= 1. */
double rs_topology_get_oversubscription(const RsTopology *topo);
/** rs_topology_get_switch_latency_s: Returns: latency per leaf or spine crossed, seconds. */
double rs_topology_get_switch_latency_s(const RsTopology *topo);
/** rs_topology_has_pcie: Returns: TRUE when GPU↔NIC PCIe links are modelled. */
gboolean rs_topology_has_pcie(const RsTopology *topo);
/** rs_topology_has_pxn: Returns: TRUE when rail-mismatched traffic goes over NVLink first. */
gboolean rs_topology_has_pxn(const RsTopology *topo);
/**
 * rs_topology_set_job_gpus:
 * @gpus: (array length=n_gpus) (nullable): the GPUs the job holds (both layouts' GPUs);
 *   NULL or @n_gpus 0: every GPU (the default)
 *
 * GPUs outside the job carry no traffic: a route never takes PXN through one (the message
 * leaves through its own NIC instead), planners never pick one as a relay, and the lower
 * bound does not count its NIC in a cut. GPUs beyond the topology are ignored.
 */
void rs_topology_set_job_gpus(RsTopology *topo, const guint32 *gpus, guint n_gpus);
/** rs_topology_gpu_in_job: Returns: TRUE when @gpu may carry traffic (in the job, or no job
 * set). */
gboolean rs_topology_gpu_in_job(const RsTopology *topo, guint32 gpu);
/** rs_topology_has_job: Returns: TRUE when a job restricts the GPUs. */
gboolean rs_topology_has_job(const RsTopology *topo);
/** rs_topology_get_message_overhead_s: Returns: software cost per message, seconds. */
double rs_topology_get_message_overhead_s(const RsTopology *topo);

/**
 * rs_topology_get_chunk_overhead_s:
 * @chunk_size_bytes_out: (out) (optional): the chunk it was measured at, bytes (0 when none)
 *
 * The executor's fixed cost per chunk operation (software.chunk_overhead): a message of S
 * bytes is cut into ⌈S / chunk⌉ transport calls (exec/executor.c), each paying it on the
 * sending and on the receiving rank, beside the message's own overhead. Written by
 * reshard calibrate (exec/calibrate.h); 0 on the shipped fabrics, whose message overhead
 * stands for the whole software cost.
 *
 * Returns: seconds per chunk operation, 0 when the topology gives none.
 */
double rs_topology_get_chunk_overhead_s(const RsTopology *topo, guint64 *chunk_size_bytes_out);

/**
 * rs_topology_count_chunks:
 * @size_bytes: a message's size, bytes
 * @chunk_bytes: the executor's chunk, bytes; 0: the topology's chunk_size
 *
 * Returns: ⌈@size_bytes / chunk⌉, the chunk operations of the message (1 for any positive
 *   size when no chunk is known, 0 for an empty message).
 */
guint64 rs_topology_count_chunks(const RsTopology *topo, guint64 size_bytes, guint64 chunk_bytes);

/**
 * rs_topology_get_copy_rates:
 * @topo: the topology
 * @n_out: (out): entries, 0 when the topology has no copy section
 * Returns: (transfer none) (array length=n_out) (nullable): the copy rates by increasing
 * run length, alive as @topo.
 */
const RsCopyRate *rs_topology_get_copy_rates(const RsTopology *topo, guint *n_out);

/**
 * rs_topology_get_copy_bytes_per_s:
 * @run_bytes: length of the runs of adjacent bytes on @side
 * @local: a local copy (src == dst), else bytes received from another rank
 * @side: the side cut into runs (the other contiguous)
 * @scope: one rank alone, or the receiving ranks of a node at once (their sum)
 *
 * Interpolates the copy section linearly in log(run bytes) between the two entries around
 * @run_bytes. Longer runs than the table get its last entry (copies of long runs stream at
 * memory bandwidth); shorter runs get its first entry, which understates their cost when
 * per-run work dominates, so calibrations start at 1-byte runs (reshard calibrate's
 * default sweep).
 *
 * Returns: bytes per second; INFINITY without a copy section (copies are not modelled).
 */
double rs_topology_get_copy_bytes_per_s(const RsTopology *topo, guint64 run_bytes,
                                        gboolean local, RsCopySide side, RsCopyScope scope);

/**
 * rs_topology_get_copy_s_per_byte:
 * @read_run_bytes: run length of the bytes read
 * @write_run_bytes: run length of the bytes written
 * @local: a local copy (src == dst), else bytes received from another rank
 * @scope: one rank alone, or a node (seconds per byte of the node's total)
 *
 * Cost of a copy whose both sides may be cut into runs: each side adds its extra cost over
 * a contiguous copy, 1/read(@read_run_bytes) + 1/write(@write_run_bytes) − 1/contiguous,
 * where contiguous is the faster of read and write at the table's longest run; never below
 * either side's own cost. A calibration point (one side cut, the other contiguous) is
 * reproduced exactly when read and write agree at the longest run, and over-estimated by
 * their difference otherwise. Returns: seconds per byte; 0 without a copy section.
 */
double rs_topology_get_copy_s_per_byte(const RsTopology *topo, guint64 read_run_bytes,
                                       guint64 write_run_bytes, gboolean local,
                                       RsCopyScope scope);

guint rs_topology_get_n_links(const RsTopology *topo);
/** rs_topology_get_link: Returns: (transfer none): link @link_id, alive as @topo. */
const RsLink *rs_topology_get_link(const RsTopology *topo, guint32 link_id);
/** rs_topology_get_link_gpu: Returns: the GPU a per-GPU link belongs to, G_MAXUINT32 for a
 * leaf link. */
guint32 rs_topology_get_link_gpu(const RsTopology *topo, guint32 link_id);
/**
 * rs_topology_get_gpu_link:
 * @kind: a per-GPU kind (NVLink, PCIe, NIC)
 * Returns: the id of @gpu's link of @kind, G_MAXUINT32 when the topology has no such link
 * (PCIe without a `pcie` section).
 */
guint32 rs_topology_get_gpu_link(const RsTopology *topo, guint32 gpu, RsLinkKind kind);
/**
 * rs_topology_get_leaf_link:
 * @unit: scalable unit; @rail: rail; @kind: RS_LINK_LEAF_UPLINK or RS_LINK_LEAF_DOWNLINK
 * Returns: the link id.
 */
guint32 rs_topology_get_leaf_link(const RsTopology *topo, guint unit, guint rail, RsLinkKind kind);
/**
 * rs_topology_link_is_dominated:
 *
 * A link is dominated when no feasible set of flow rates can saturate it before a link
 * every one of its flows also crosses: a GPU's PCIe link and its NIC link carry exactly the
 * same flows in each direction, so the larger of the two is dominated (PCIe on a tie); a
 * leaf's uplink (downlink) only carries flows that left (enter) a NIC of that leaf, so it
 * is dominated when its capacity is at least the sum of those NICs' capacities (PCIe
 * included), e.g. with oversubscription 1. The flow simulator and the lower bound skip
 * dominated links; they still carry bytes.
 *
 * Returns: TRUE when @link_id is dominated.
 */
gboolean rs_topology_link_is_dominated(const RsTopology *topo, guint32 link_id);
/** rs_topology_format_link: Returns: (transfer full): "gpu12.nic-egress", "su1.rail3.uplink". */
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
 * ingress of @dst (through the non-blocking NVSwitch). Otherwise the GPU's NIC on its rail:
 * PCIe egress, NIC egress, then, when the leaves differ (other rail or other scalable unit),
 * the uplink of the source's leaf and the downlink of the destination's leaf (through the
 * spine), then NIC ingress and PCIe ingress of @dst. With PXN, when the rails differ, the
 * route first crosses NVLink to the GPU of @src's node on @dst's rail and leaves through
 * that GPU's NIC (NCCL's PXN), so it stays on one leaf when the scalable unit is the same;
 * not when that GPU is outside the job (rs_topology_set_job_gpus).
 *
 * Returns: the number of links written, at most RS_TOPOLOGY_MAX_ROUTE.
 */
guint rs_topology_route(const RsTopology *topo, guint32 src, guint32 dst, guint32 *links);

/**
 * rs_topology_get_route_latency_s:
 * Returns: the latency of the route from @src to @dst: the latency of every link crossed
 * plus switch_latency per leaf or spine crossed (0 for @src == @dst), seconds; the software
 * overhead is not included.
 */
double rs_topology_get_route_latency_s(const RsTopology *topo, guint32 src, guint32 dst);

/**
 * rs_topology_get_message_latency_s:
 * Returns: the fixed cost of one message from @src to @dst: the software overhead plus the
 * route latency (0 for @src == @dst), seconds.
 */
double rs_topology_get_message_latency_s(const RsTopology *topo, guint32 src, guint32 dst);

/** rs_topology_format_summary: Returns: (transfer full): a one-line description. */
char *rs_topology_format_summary(const RsTopology *topo);

G_END_DECLS

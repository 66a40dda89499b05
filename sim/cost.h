/* cost.h — the first-order cost model of a plan on a topology (the lower bound is in
 * sim/lower-bound.h).
 *
 * First-order model: within a phase, every message crosses the links of its route; a link
 * carrying B bytes at capacity C (peak × efficiency) is busy B / C seconds. A phase lasts
 * as long as its busiest link (or, with a topology's copy section, its copies when they
 * take longer: rs_cost_estimate_full) plus the fixed per-message costs of its busiest rank
 * (the sum, over the messages the rank sends or receives, of software overhead plus route
 * latency, plus, where the topology gives one, the executor's cost per chunk operation
 * times the message's chunks: ranks post their messages one after another). Phases add up. Relays are taken
 * as perfectly pipelined. This is the classic bottleneck (alpha-beta) estimate; the
 * flow-level simulator refines it.
 */
#pragma once

#include <glib.h>

#include "plan/plan.h"
#include "layout/refit.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define RS_COST_ERROR (rs_cost_error_quark())
GQuark rs_cost_error_quark(void);

typedef enum {
    RS_COST_ERROR_RANK, /* a rank of the plan or refit is not a GPU of the topology */
} RsCostError;

typedef struct {
    double predicted_s;             /* estimated refit time, seconds */
    guint64 bytes_moved;            /* bytes between distinct GPUs */
    guint64 bytes_nvlink;           /* of which inside an NVLink domain */
    guint64 bytes_network;          /* of which across the scale-out fabric */
    guint64 local_bytes;            /* local copies (not moved) */
    guint64 max_gpu_ingress_bytes;  /* most bytes received by one GPU as destination */
    guint32 max_gpu_ingress_gpu;
    guint64 max_nic_egress_bytes; /* most bytes sent by one NIC (PXN traffic included) */
    guint32 max_nic_egress_gpu;
    guint n_messages;               /* network messages (src != dst) */
    guint n_phases;
    guint32 busiest_link;           /* link id with the longest busy time over the whole
                                     * refit (its bytes summed over every phase) */
    double busiest_link_s;          /* that busy time, seconds */
    guint64 busiest_link_bytes;     /* its bytes over every phase */
    /* The parts of predicted_s, summed over phases (each phase takes the larger of its link
     * and copy times, plus its fixed costs). */
    double link_s;    /* Σ phases: busiest link's busy time */
    double copy_s;    /* Σ phases: copy time (rs_cost_estimate_full with a copy section,
                       * plus the GPU's pack, unpack and local copies: sim/gpu-cost.h) */
    double latency_s; /* Σ phases: busiest rank's per-message costs */
    guint copy_bound_phases; /* phases whose copy time exceeds their link time */
    /* Where predicted_s goes; the four sum to predicted_s. Per phase, its link time counts
     * as network_s when its busiest link is a scale-out link (PCIe, NIC, leaf), else as
     * nvlink_s; its copies (a copy section's, or the GPU's pack, unpack and local copies:
     * sim/gpu-cost.h) as gpu_copy_s; its fixed costs (software overhead, route latency,
     * kernel launches, round launch and synchronisation) as fixed_s. */
    double network_s;
    double nvlink_s;
    double gpu_copy_s;
    double fixed_s;
} RsCostEstimate;

/**
 * rs_cost_estimate:
 * @plan: the plan
 * @topo: the topology its ranks are GPUs of
 * @out: (out caller-allocates): the estimate
 * @error: RS_COST_ERROR_RANK when a rank is not a GPU of @topo
 *
 * O(n_transfers + n_phases × n_links).
 *
 * Returns: TRUE on success.
 */
gboolean rs_cost_estimate(const RsPlan *plan, const RsTopology *topo, RsCostEstimate *out,
                          GError **error);

/**
 * rs_cost_estimate_full:
 * @plan: a plan of @refit
 * @refit: (nullable): the tensors @plan moves, with their layouts (which memory runs each
 *   transfer reads and writes); NULL: copies are not charged
 * @topo: the topology its ranks are GPUs of
 * @out: (out caller-allocates): the estimate
 * @error: RS_COST_ERROR_RANK when a rank is not a GPU of @topo, or (with copies charged)
 *   a transfer's rank has no entry in the layout it reads or writes (a plan that fails
 *   rs_plan_check)
 *
 * rs_cost_estimate() plus, when @topo has a copy section (RsCopyRate: measured on the
 * executor's own machine by reshard calibrate), the cost of copying bytes in memory: every
 * transfer, local copies included, is charged to its destination rank (the receiver copies
 * a message into its shards, as the host transport's single-copy path does; a local copy,
 * src == dst, goes at the section's local_ rates), cut into the pieces its source and
 * destination boxes make, each piece at the cost of the runs of adjacent bytes it is made
 * of on its read and its write side (rs_topology_get_copy_s_per_byte; a staging buffer
 * holds its tensor row-major). A phase's copy time is the larger of its busiest rank's
 * copies at the one-rank rate and each node's copies at the node rate (ranks of a node
 * share its cores and memory); the phase lasts max(link time, copy time) plus its fixed
 * costs. Without a copy section the result equals rs_cost_estimate().
 *
 * With the topology's GPU costs (rs_topology_get_gpu_costs, sim/gpu-cost.h) each phase
 * also pays its busiest rank's GPU copies (the packs it sends and the unpacks and local
 * copies it receives: they run on the rank's stream before and after its transfers, so
 * they add to the link time) and, among its fixed costs, each rank's kernel launches and
 * one round cost (launch + synchronisation) per round it takes part in.
 *
 * O(n_transfers × source boxes × destination boxes of a transfer's ranks) with a copy
 * section.
 *
 * Returns: TRUE on success.
 */
gboolean rs_cost_estimate_full(const RsPlan *plan, const RsRefit *refit, const RsTopology *topo,
                               RsCostEstimate *out, GError **error);

/**
 * rs_cost_estimate_chunked:
 * @chunk_bytes: the executor's chunk (reshard run's --chunk-size), bytes; 0: the
 *   topology's software.chunk_size
 *
 * rs_cost_estimate_full() with each message's chunk operations counted in chunks of
 * @chunk_bytes: a message of S bytes between two ranks adds chunk_overhead × ⌈S / chunk⌉
 * (rs_topology_get_chunk_overhead_s()) to the fixed costs of both. Equal to
 * rs_cost_estimate_full() on a topology without a chunk overhead.
 *
 * Returns: TRUE on success.
 */
gboolean rs_cost_estimate_chunked(const RsPlan *plan, const RsRefit *refit,
                                  const RsTopology *topo, guint64 chunk_bytes,
                                  RsCostEstimate *out, GError **error);

G_END_DECLS

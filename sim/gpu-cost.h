/* gpu-cost.h — what a plan costs its GPUs besides moving bytes over links: pack and unpack
 * copies through HBM, kernel launches, and the launch and synchronisation of each round,
 * from the topology's GPU costs (RsGpuCosts) and the plan's pack method and round sync.
 *
 * Per message, by the plan's RsPackMethod (how exec/ runs it):
 *  RS_PACK_KERNEL (our executor: exec/executor.c post_op() and move_chunk(), kernels of
 *    exec/cuda-kernels.cu): the sender packs each piece of the message (a transfer cut by
 *    the local boxes of the memory it reads, rs_transfer_get_side_boxes()) into its pack
 *    buffer with one move_kernel launch, unless the piece is one contiguous run of that
 *    memory (then NCCL reads it in place, chunk_in_place()); the receiver unpacks alike.
 *    A local copy (src == dst) is one copy_kernel launch per piece, cut on both sides.
 *  RS_PACK_COPY_ENGINE: every piece goes through a staging slot on both sides, one
 *    cudaMemcpyAsync per piece, at the copy engines' rate (contiguous pieces too).
 *  RS_PACK_HOST_H2D: the sender's bytes are first copied host to device (one copy per
 *    message at h2d_bytes_per_s); the receiver unpacks with kernels as RS_PACK_KERNEL.
 *  RS_PACK_NONE: nothing.
 * A piece of b bytes whose memory on the side copied is r runs of adjacent bytes costs
 * (b + r × strided_row_penalty) / rate seconds, rate the kernel or copy-engine rate (the
 * run count comes from rs_local_box_get_run_elems(), the same run-length machinery the
 * host copy section uses); a local copy counts the runs of both sides. Each launch costs
 * kernel_launch_s.
 *
 * Per round and rank (round_fixed_s): RS_ROUND_SYNC_GROUP, one group post (kernel_launch_s)
 * and one event synchronisation (stream_sync_s), exec/transport-nccl.c; RS_ROUND_SYNC_WORLD_
 * BARRIER adds a barrier of the world: ceil(log2 P) rounds of the topology's slowest message
 * latency for P GPUs (the dissemination barrier, Hensgen, Finkel and Manber, "Two algorithms
 * for barrier synchronization", IJPP 1988).
 *
 * All zero on a topology without GPU costs: predictions are then the links' alone.
 */
#pragma once

#include <glib.h>

#include "layout/refit.h"
#include "plan/plan.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

typedef struct {
    guint n_messages;
    double *pre_copy_s;   /* [n_messages]: the sender's copy time before the first byte
                           * (a local copy: its whole copy time) */
    double *pre_fixed_s;  /* [n_messages]: the sender's launches before the first byte */
    double *post_copy_s;  /* [n_messages]: the receiver's copy time after the last byte */
    double *post_fixed_s; /* [n_messages]: the receiver's launches after the last byte */
    /* For the flow model (RsFlowSimOptions), in the order the executor's stream runs the
     * copies: a network message's first byte waits for every pack (copies and launches)
     * of its round on its sender and on its receiver (both launch the round's group after
     * their packs), its arrival for the receiver's unpacks of the round up to its own (in
     * the plan's message order); a local copy, its own pre + post. Posting whole phases,
     * rs_gpu_cost_queue_rounds() (the peers) or rs_gpu_cost_queue_chunks() (the plans
     * exec/ runs) rewrites them. */
    double *pre_s;  /* [n_messages] */
    double *post_s; /* [n_messages] */
    double round_fixed_s; /* per round and rank: launch + synchronisation, seconds */
} RsGpuCostTimes;

/**
 * rs_gpu_cost_times_new:
 * @n_messages: entries of each per-message array (0 allowed)
 *
 * Times of @n_messages messages, every entry and round_fixed_s 0 s: GPU-side costs none
 * (what rs_gpu_cost_compute() returns for a topology without costs), for callers that fill
 * them themselves (tests, a trace's own figures).
 *
 * Returns: (transfer full): the times, free with rs_gpu_cost_times_free(). Aborts when
 *   memory runs out (g_new0).
 */
RsGpuCostTimes *rs_gpu_cost_times_new(guint n_messages);

/**
 * rs_gpu_cost_compute:
 * @plan: a plan of @refit
 * @refit: the tensors and layouts @plan moves (which memory runs each piece is)
 * @topo: the topology whose GPU costs apply (rs_topology_get_gpu_costs())
 * @error: RS_COST_ERROR_RANK when a transfer's rank holds no shard of the layout it reads
 *   or writes (a plan that fails rs_plan_check)
 *
 * Computes the times described above, message i of @plan in entry i. O(n_transfers ×
 * boxes per rank).
 *
 * Returns: (transfer full) (nullable): the times, free with rs_gpu_cost_times_free(); NULL
 *   on error.
 */
RsGpuCostTimes *rs_gpu_cost_compute(const RsPlan *plan, const RsRefit *refit,
                                    const RsTopology *topo, GError **error);

/**
 * rs_gpu_cost_queue_rounds:
 * @plan: the plan @times were computed for (rs_gpu_cost_compute())
 * @times: (inout): its times; pre_s is rewritten
 *
 * For a flow model that posts whole phases (RS_FLOW_SIM_POST_PHASES, the default), for the
 * peers' plans (a call packs its buckets before it runs; our plans use
 * rs_gpu_cost_queue_chunks()), where no rank waits for a round: a rank's stream still
 * runs its rounds' launches, packs and
 * synchronisations one after another (exec/executor.c posts its window in the plan's key
 * order on one stream), so a network message of round r in phase p waits, on each of its
 * two ranks, for Σ over that rank's rounds r' ≤ r of phase p of (its packs in r' +
 * round_fixed_s), and pre_s becomes the larger of the two sums. Local copies keep their
 * own time. With RS_FLOW_SIM_POST_ROUNDS the flow model applies round_fixed_s itself and
 * this must not be called. O(n_messages) (per-rank sorted tables of (round, rank)).
 */
void rs_gpu_cost_queue_rounds(const RsPlan *plan, RsGpuCostTimes *times);

/**
 * rs_gpu_cost_queue_chunks:
 * @plan: the plan @times were computed for (rs_gpu_cost_compute()); one exec/ runs (ours
 *   and the strawman: RS_STRATEGY_KIND_OURS, RS_STRATEGY_KIND_STRAWMAN)
 * @chunk_bytes: the executor's chunk, bytes (RsFlowSimOptions.chunk_bytes; 0: a message is
 *   one chunk, which `reshard run` does not accept)
 * @times: (inout): its times; pre_s and post_s of network messages are rewritten
 *
 * For RS_FLOW_SIM_POST_PHASES: the sender's side of RS_FLOW_SIM_POST_WINDOW as the window
 * grows, an executor that packs each chunk operation when it posts it (exec/executor.c
 * post_op, move_chunk) on a stream that runs beside its transfers. The rank's stream packs
 * in key order, the first chunk of a message without dependencies (slot 0) before any
 * second chunk, so a network message's first byte waits for the first-chunk packs of its
 * rank's messages of the phase up to it, its own included, plus one round_fixed_s per
 * round of the phase the rank sends in up to its own; its arrival waits for the unpack
 * of its last chunk only:
 *   pre_s[m] = Σ_{m' ≤ m, src(m') = src(m), phase(m') = phase(m)} s(m') · (pre_copy_s[m'] +
 *              pre_fixed_s[m']) + round_fixed_s · |{rounds r ≤ round(m) of phase(m) in
 *              which src(m) sends}|,
 *   post_s[m] = l(m) · (post_copy_s[m] + post_fixed_s[m]),
 *   s(m) = chunk_bytes / size(m) and l(m) = (size(m) − (⌈size(m) / chunk_bytes⌉ − 1) ·
 *   chunk_bytes) / size(m) when size(m) > chunk_bytes > 0, else 1 (s: the first chunk's
 *   share, l: the last chunk's). Zero-byte messages (exec/ posts none) and local copies
 *   keep their times.
 * Approximations, each stated: messages go in plan order (phase, round, src, dst, …)
 * where exec/schedule.c orders a slot by colour (a message's pre_s may differ by the
 * rank's other first-chunk packs); a relay's pack counts from the phase's start, beside
 * the wait for what it forwards; unpacks do not queue on the receiver's stream (the window
 * model queues them: at most one chunk's unpack per message arriving at once); the later
 * chunks' packs keep ahead of the links (measured: the busiest rank's packs and unpacks
 * took 0.020–0.029 s of 0.082–0.157 s, docs/DESIGN.md "Packs chunk by chunk"); the
 * round costs stand for exec/'s group launches and synchronisations, which follow its
 * progress calls, not the plan's rounds. Not what exec/ does on a GPU today: the NCCL
 * transport runs each progress call's operations as one group on the same stream as the
 * packs (exec/transport-nccl.c flush_group) and unpacks once the group ended
 * (poll_groups), so there packs and transfers do not overlap; cuda-local queues a receive
 * copy behind the receiver's packs. This is the figure of an executor that packs on a
 * stream of its own, as whole phases are the figure of one whose window never binds.
 * O(n_messages).
 */
void rs_gpu_cost_queue_chunks(const RsPlan *plan, guint64 chunk_bytes, RsGpuCostTimes *times);

void rs_gpu_cost_times_free(RsGpuCostTimes *times);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsGpuCostTimes, rs_gpu_cost_times_free)

/**
 * rs_gpu_cost_contiguous_local_copy_s:
 * @costs: a topology's GPU costs (rs_topology_get_gpu_costs())
 * @bytes: the copy's size, bytes
 *
 * The time of a local copy of @bytes from one contiguous run to another, as
 * rs_gpu_cost_compute() charges a local copy under RS_PACK_KERNEL: one copy_kernel launch
 * (kernel_launch_s) plus (bytes + 2 × strided_row_penalty) / kernel_copy_bytes_per_s, a run
 * on each side. For messages that state bytes but no layout (`simulate --messages`).
 *
 * Returns: seconds; 0 for 0 bytes, and the launch alone where the topology gives no
 *   kernel copy rate.
 */
double rs_gpu_cost_contiguous_local_copy_s(const RsGpuCosts *costs, guint64 bytes);

/**
 * rs_gpu_cost_has_costs:
 * Returns: TRUE when @topo gives any GPU cost (else every time above is 0).
 */
gboolean rs_gpu_cost_has_costs(const RsTopology *topo);

G_END_DECLS

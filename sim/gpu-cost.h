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
     * the plan's message order); a local copy, its own pre + post. */
    double *pre_s;  /* [n_messages] */
    double *post_s; /* [n_messages] */
    double round_fixed_s; /* per round and rank: launch + synchronisation, seconds */
} RsGpuCostTimes;

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
 * For a flow model that posts whole phases (RS_FLOW_SIM_POST_PHASES, the default), where no
 * rank waits for a round: a rank's stream still runs its rounds' launches, packs and
 * synchronisations one after another (exec/executor.c posts its window in the plan's key
 * order on one stream), so a network message of round r in phase p waits, on each of its
 * two ranks, for Σ over that rank's rounds r' ≤ r of phase p of (its packs in r' +
 * round_fixed_s), and pre_s becomes the larger of the two sums. Local copies keep their
 * own time. With RS_FLOW_SIM_POST_ROUNDS the flow model applies round_fixed_s itself and
 * this must not be called. O(n_messages) expected (a hash table of (round, rank)).
 */
void rs_gpu_cost_queue_rounds(const RsPlan *plan, RsGpuCostTimes *times);

/**
 * rs_gpu_cost_queue_chunks:
 * @plan: the plan @times were computed for (rs_gpu_cost_compute()); one our executor runs
 *   (direct, node-aware, hierarchical: round sync RS_ROUND_SYNC_GROUP)
 * @chunk_bytes: the executor's chunk, bytes (RsFlowSimOptions.chunk_bytes; 0: a message is
 *   one chunk)
 * @times: (inout): its times; pre_s and post_s of network messages are rewritten
 *
 * For RS_FLOW_SIM_POST_PHASES, the limit of RS_FLOW_SIM_POST_WINDOW as the window grows:
 * exec/executor.c packs each chunk operation when it posts it and unpacks each as it
 * arrives (move_chunk()), so with a window that never binds every operation of a phase is
 * posted at once and a rank's stream packs them in key order, the first chunk of every
 * message (slot 0) before any second chunk. A network message's first byte then waits
 * for the first-chunk packs of the rank's messages up to it in the phase, its own
 * included, plus one round_fixed_s per round the rank sends in up to its own (the group
 * launches and synchronisations; the window model does not charge them), and its arrival
 * for the unpack of its last chunk only:
 *   pre_s[m] = Σ_{m' ≤ m, src(m') = src(m), phase(m') = phase(m)} s(m') · (pre_copy_s[m'] +
 *              pre_fixed_s[m']) + round_fixed_s · |{rounds ≤ round(m) where src(m) sends}|,
 *   post_s[m] = s(m) · (post_copy_s[m] + post_fixed_s[m]),
 *   s(m) = min(1, chunk_bytes / size_bytes(m)).
 * Messages go in plan order (phase, round, src, dst, …); exec/schedule.c orders a slot by
 * colour, which permutes a rank's first chunks: a message's pre_s may differ by the other
 * first-chunk packs of its rank, at most (its messages in the phase) × one chunk's pack.
 * Assumes the stream keeps ahead of the links for the later chunks (a rank's packs and
 * unpacks at the copy rate take less time than its links: H100 1,247 GB/s against
 * 369 GB/s of NVLink each way, GB200 2,980 against 774 GB/s). Replaces the round queue
 * of rs_gpu_cost_queue_rounds() for our plans: that one charges a round's every pack
 * before its first send and a message's whole unpack after its last byte, which is
 * neither the window's limit nor what exec/ runs. Local copies keep their own time.
 * O(n_messages).
 */
void rs_gpu_cost_queue_chunks(const RsPlan *plan, guint64 chunk_bytes, RsGpuCostTimes *times);

void rs_gpu_cost_times_free(RsGpuCostTimes *times);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsGpuCostTimes, rs_gpu_cost_times_free)

/**
 * rs_gpu_cost_has_costs:
 * Returns: TRUE when @topo gives any GPU cost (else every time above is 0).
 */
gboolean rs_gpu_cost_has_costs(const RsTopology *topo);

G_END_DECLS

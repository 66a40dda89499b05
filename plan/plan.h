/* plan/ — what moves where, from a refit and (for the topology-aware strategies) a fabric.
 * It uses layout/ and topologies/ (and base/); sim/ and exec/ read its plans. It owns:
 *   plan.h, plan.c        the plan: transfers, messages, phases, rounds, relays, options
 *                         (this header); plan-private.h the struct and the builder calls
 *   build.c               the dispatcher: a strategy's builder, then the rounds
 *   builder.c             source groups (which ranks hold each box) and emitting transfers
 *   gather-broadcast.c, direct.c, node-aware.c, hierarchical.c
 *                         one strategy each
 *   balance.c             source selection by bytes over replicas, NICs and links, shared
 *                         by node-aware and hierarchical (balance-private.h)
 *   rounds.c              transfers to messages, phases and bounded rounds in one global
 *                         order
 *   check.c               the invariant checker (rs_plan_check)
 *   auto.h, auto.c        plan every candidate, keep the fastest by a given cost model
 *   policy.h, policy.c    the strategy policy: candidates for the rows asked for, the
 *                         hierarchical row's relay mode, the auto row and its reason
 *
 */
/* plan.h — what moves where: transfers, messages and phases of one refit.
 *
 * A transfer is one (src rank, dst rank, box of one tensor) piece. A message is the
 * transfers of one (src, dst, phase), packed into one buffer. Phases run one after
 * another; the messages of a phase may run concurrently, except that a relay message
 * waits for the messages it forwards (its dependencies). A transfer with src == dst is a
 * local copy: it is part of the plan but moves no bytes between ranks.
 *
 * A plan never holds buffer pointers; executors map boxes to buffers through the layouts.
 */
#pragma once

#include <glib.h>

#include "base/box.h"
#include "layout/refit.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define RS_PLAN_ERROR (rs_plan_error_quark())
GQuark rs_plan_error_quark(void);

typedef enum {
    RS_PLAN_ERROR_UNCOVERED, /* a destination needs elements no source rank holds */
    RS_PLAN_ERROR_INVALID,   /* the invariant checker found a wrong plan */
    RS_PLAN_ERROR_UNKNOWN_STRATEGY,
    RS_PLAN_ERROR_TOO_LARGE, /* the staging bound would cut the weights into too many pieces */
    RS_PLAN_ERROR_NOT_A_GPU, /* a rank of a layout is not a GPU of the topology (bad input) */
} RsPlanError;

/* The most network transfers a plan may hold (each takes about 100 bytes, several times over
 * while the plan is built); a staging bound that would need more is refused. */
#define RS_PLAN_MAX_TRANSFERS (1u << 27)

/* Peak memory building a plan takes per network transfer, bytes: the transfer, its message
 * and the builder's and rounds' working arrays. Measured on this toolkit (x86-64, glibc):
 * the peak resident growth of rs_plan_build_full() for one 2^33-element F32 tensor from
 * one rank to 8 replicas in 1 MiB buckets (262,144 transfers, one message each) was 780 B
 * per transfer with direct, node-aware and hierarchical and 563 B with gather-broadcast;
 * the larger figure is used, so the estimate errs high. */
#define RS_PLAN_BUILD_BYTES_PER_TRANSFER 800

/* The step NCCL's ring broadcast pipelines in, bytes: NCCL_BUFFSIZE's default 4 MiB
 * (NVIDIA/nccl src/init.cc, DEFAULT_BUFFSIZE) over NCCL_STEPS 8 (src/include/device.h),
 * one step per chunk (BROADCAST_CHUNKSTEPS 1, src/include/collectives.h): 512 KiB. */
#define RS_NCCL_BROADCAST_STEP_BYTES (512u << 10)

typedef enum {
    RS_STRATEGY_GATHER_BROADCAST, /* a strawman: one gather root, one chain, one NIC */
    RS_STRATEGY_DIRECT,
    RS_STRATEGY_NODE_AWARE,
    RS_STRATEGY_HIERARCHICAL,
    RS_STRATEGY_NCCL_BROADCAST,    /* the RL frameworks' baseline (nccl-broadcast.c) */
    RS_STRATEGY_M2N,               /* NCCL M2N, hierarchical (m2n.c) */
    RS_STRATEGY_M2N_DIRECT,        /* NCCL M2N, direct (m2n.c) */
    RS_STRATEGY_CHECKPOINT_ENGINE, /* MoonshotAI checkpoint-engine (checkpoint-engine.c) */
    RS_STRATEGY_RDMA_P2P,          /* Perplexity's static RDMA schedule (rdma-p2p.c) */
    RS_STRATEGY_N
} RsStrategy;

/* Whose algorithm a strategy is. */
typedef enum {
    RS_STRATEGY_KIND_OURS,     /* reshard's own planners (auto picks among them) */
    RS_STRATEGY_KIND_BASELINE, /* what a framework does without a reshard collective */
    RS_STRATEGY_KIND_PEER,     /* another system's algorithm, modelled from its code */
    RS_STRATEGY_KIND_STRAWMAN, /* kept for tests and comparison only */
} RsStrategyKind;

typedef enum {
    /* The receiver keeps the bytes in a staging buffer holding the whole tensor (a gather
     * root or a broadcast relay), not in its destination shard. */
    RS_TRANSFER_TO_STAGING = 1 << 0,
    /* The sender reads from its staging buffer, not from its source shard. */
    RS_TRANSFER_FROM_STAGING = 1 << 1,
    /* The sender reads from its destination shard, where its dependency (depends_on)
     * delivered the box earlier: a relay of the hierarchical strategy. */
    RS_TRANSFER_FROM_DESTINATION = 1 << 2,
} RsTransferFlags;

typedef struct {
    guint32 tensor_idx; /* index into the refit's tensors */
    guint32 src;        /* global rank sending */
    guint32 dst;        /* global rank receiving */
    guint32 phase;
    guint32 flags;      /* RsTransferFlags */
    gint64 depends_on;  /* transfer that brought these bytes to src's staging, or -1 */
    guint64 size_bytes; /* the box's elements in the wire (destination) dtype */
    /* Global coordinates of the tensor. Owned by the plan, alive as it, and shared by the
     * transfers of one box (a ring's hops forward the same box: nccl-broadcast's 3.8 × 10^6
     * transfers on the default scenario took 730 MB with a box in each, 152 B of them). */
    const RsBox *box;
} RsTransfer;

typedef struct {
    guint32 src, dst, phase;
    guint32 round;        /* the group of operations every rank posts together, see below */
    guint first_transfer; /* transfers of a message are contiguous, sorted by tensor */
    guint n_transfers;
    guint64 size_bytes;
    guint first_dep; /* dependencies: rs_plan_get_message_deps() */
    guint n_deps;
} RsMessage;

typedef struct _RsPlan RsPlan;

/* How a plan's ranks move a message's bytes between their shards and the wire (set by the
 * strategy; sim/gpu-cost.h prices each):
 *  RS_PACK_NONE: no copies (bytes leave and land in place);
 *  RS_PACK_KERNEL: a copy kernel gathers (scatters) a message's pieces into (out of) a
 *    staging buffer, one launch per piece, as exec/executor.c move_chunk() runs
 *    exec/cuda-kernels.cu move_kernel; a message that is one contiguous run of the shard on
 *    a side is sent from (received into) the shard with no copy on that side
 *    (chunk_in_place()); the default;
 *  RS_PACK_COPY_ENGINE: cudaMemcpyAsync per piece on the copy engines into staging slots;
 *  RS_PACK_HOST_H2D: the sender's bytes start in host memory and are copied to the GPU
 *    before they are sent. */
typedef enum {
    RS_PACK_NONE,
    RS_PACK_KERNEL,
    RS_PACK_COPY_ENGINE,
    RS_PACK_HOST_H2D,
    RS_PACK_N
} RsPackMethod;

/* How the ranks of a round wait for each other: RS_ROUND_SYNC_GROUP, each rank its own
 * group call and the completion of its own operations (exec/transport-nccl.c: one
 * ncclGroupStart/End per progress call of the executor, an event per group; the flow
 * model's round queue counts one per round); RS_ROUND_SYNC_WORLD_BARRIER, every
 * rank waits for the whole world at the end of each round (one call per tensor with a
 * synchronising API, as NCCL M2N). */
typedef enum {
    RS_ROUND_SYNC_GROUP,
    RS_ROUND_SYNC_WORLD_BARRIER,
    RS_ROUND_SYNC_N
} RsRoundSync;

/*
 * Options of the planner.
 *
 * Memory: the transfers of one (src, dst, phase) are coalesced into messages (buckets) of at
 * most @staging_bytes; a transfer larger than that is split along its outermost dim with
 * more than one index. Messages are then placed in rounds, in one global order: a round is
 * the set of messages every rank posts as one group of non-blocking sends and receives;
 * in a round each rank takes part in at most @max_ops_per_group messages whose sizes sum
 * to at most @staging_bytes (its pack and receive buffers), and a relay message comes in a
 * later round than the messages it forwards. Rounds of a phase follow those of earlier
 * phases. Local copies (src == dst) need no staging and are placed after their
 * dependencies.
 */
typedef struct {
    /* The cluster; node-aware and hierarchical need it (NULL otherwise allowed). */
    const RsTopology *topology;
    /* Bucket bound and per-rank memory bound per round, bytes; 0 picks the default: 1/16 of
     * the topology's GPU memory (5.4 GB on an 80 GiB H100), or 1 GiB without topology. */
    guint64 staging_bytes;
    /* Most messages one rank posts in one round; 0 picks 256. */
    guint max_ops_per_group;
    /* node-aware and hierarchical: a piece whose bytes (over all tensors sharing its
     * layouts) exceed this is split into stripes, each from its own replica; 0 picks
     * 64 MiB; G_MAXUINT64 disables striping. */
    guint64 stripe_bytes;
    /* hierarchical: an NVLink domain that received a piece may forward it to another
     * domain that needs the same piece (a tree of domains) instead of every domain pulling
     * from the source replicas. */
    gboolean domain_relays;
    /* The memory building the plan may take, bytes: a refit whose transfers (at least one
     * per destination box and bucket) × RS_PLAN_BUILD_BYTES_PER_TRANSFER exceed it is
     * refused before anything is allocated (RS_PLAN_ERROR_TOO_LARGE, with the estimate).
     * 0: this machine's physical memory. */
    guint64 memory_limit_bytes;
} RsPlanOptions;

/**
 * rs_plan_options_init:
 * @options: (out caller-allocates): options to fill with the defaults
 * @topology: (nullable): the cluster
 */
void rs_plan_options_init(RsPlanOptions *options, const RsTopology *topology);

/**
 * rs_plan_options_get_staging_bytes:
 * Returns: the staging bound in effect for @options (the default resolved), bytes.
 */
guint64 rs_plan_options_get_staging_bytes(const RsPlanOptions *options);

/**
 * rs_plan_build:
 * @refit: tensors with source and destination layouts
 * @strategy: RS_STRATEGY_GATHER_BROADCAST: phase 0 gathers each tensor on the lowest source
 *   rank holding part of it (its pipeline stage's first rank under Megatron); phase 1
 *   broadcasts the whole tensor along a chain through every destination rank in rank
 *   order (a pipelined ring broadcast as NCCL runs it), each destination keeping its boxes
 *   by a local copy. RS_STRATEGY_DIRECT: every destination receives exactly the elements
 *   of its boxes it does not already hold, each piece from one source replica; the
 *   replicas of a source box serve its requesting destinations round-robin, in
 *   destination rank order (rs_plan_build_full with a topology: round-robin per
 *   destination rail, rail r starting at replica r, so that under PXN each replica's bytes
 *   leave through all of its node's NICs); bytes a destination already holds are local
 *   copies.
 * @error: RS_PLAN_ERROR_UNCOVERED naming the tensor and the first element no source holds
 *
 * Deterministic. O(Σ_tensors dst_boxes × distinct source boxes) intersections.
 *
 * Returns: (transfer full): the plan, or NULL on error.
 */
RsPlan *rs_plan_build(const RsRefit *refit, RsStrategy strategy, GError **error);

/**
 * rs_plan_build_full:
 * @refit: tensors with source and destination layouts
 * @strategy: gather-broadcast and direct as rs_plan_build(); and
 *   RS_STRATEGY_NODE_AWARE: each piece a destination needs (minus what it holds) comes from
 *   the source replica whose route is least loaded after adding it: a replica in the
 *   destination's NVLink domain first, then one on its rail, then the least-loaded NIC.
 *   Loads are bytes per link over link capacity, accumulated over all tensors of the refit,
 *   pieces taken largest first; pieces above options->stripe_bytes are split into stripes
 *   chosen independently (striping over replicas).
 *   RS_STRATEGY_HIERARCHICAL: per destination NVLink domain, the bytes the domain's ranks
 *   need are split into atoms (disjoint boxes with the set of ranks needing each); each atom
 *   crosses the scale-out fabric once, to a leader among the ranks needing it chosen to
 *   balance link loads, which forwards it over NVLink along a tree (fan-out 2) to the
 *   others (relays, FROM_DESTINATION); with options->domain_relays, a leader that holds an
 *   atom may also serve the same atom to another domain. Network bytes are exactly
 *   Σ atoms × destination domains needing them.
 *   Tensors with the same (source layout, destination layout, element size) — the layers
 *   of a model — are planned once, with loads weighted by their number, and the plan is
 *   reused for each.
 * @options: (nullable): see RsPlanOptions; without a topology, node-aware and hierarchical
 *   take every rank as its own NVLink domain behind one NIC of the same capacity (they then
 *   balance bytes over the ranks)
 * @error: RS_PLAN_ERROR_UNCOVERED; RS_PLAN_ERROR_NOT_A_GPU when a rank is not a GPU of the
 *   topology
 *
 * Deterministic. Node-aware and hierarchical: O(units × replicas × route length) after
 * sorting the units, where units are pieces (node-aware) or atoms per domain.
 *
 * Returns: (transfer full): the plan, or NULL on error.
 */
RsPlan *rs_plan_build_full(const RsRefit *refit, RsStrategy strategy,
                           const RsPlanOptions *options, GError **error);

/** rs_plan_get_n_rounds: Returns: the number of rounds (see RsPlanOptions). */
guint rs_plan_get_n_rounds(const RsPlan *plan);

/**
 * rs_plan_get_max_round_staging_bytes:
 * Returns: the largest sum of message sizes one rank takes part in within one round: the
 * extra memory the plan needs per rank, bytes.
 */
guint64 rs_plan_get_max_round_staging_bytes(const RsPlan *plan);

void rs_plan_free(RsPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsPlan, rs_plan_free)

RsStrategy rs_plan_get_strategy(const RsPlan *plan);
guint rs_plan_get_n_transfers(const RsPlan *plan);
/** rs_plan_get_transfer: Returns: (transfer none): transfer @index, alive as @plan. */
const RsTransfer *rs_plan_get_transfer(const RsPlan *plan, guint index);
/** rs_plan_get_n_boxes: Returns: the distinct boxes the transfers point at (each stored
 * once, sizeof(RsBox) bytes). */
guint rs_plan_get_n_boxes(const RsPlan *plan);
/** rs_plan_get_n_messages: Returns: messages including local copies (src == dst). */
guint rs_plan_get_n_messages(const RsPlan *plan);
/** rs_plan_get_n_network_messages: Returns: messages with src != dst. */
guint rs_plan_get_n_network_messages(const RsPlan *plan);
/** rs_plan_get_message: Returns: (transfer none): message @index, alive as @plan. */
const RsMessage *rs_plan_get_message(const RsPlan *plan, guint index);
/** rs_plan_get_message_deps: Returns: (transfer none) (array length=n_deps): indices of the
 * messages @message waits for. */
const guint *rs_plan_get_message_deps(const RsPlan *plan, const RsMessage *message);
guint rs_plan_get_n_phases(const RsPlan *plan);
/** rs_plan_get_pack_method: Returns: how the plan's ranks pack and unpack (RS_PACK_KERNEL
 * unless its strategy set another). */
RsPackMethod rs_plan_get_pack_method(const RsPlan *plan);
/** rs_plan_get_round_sync: Returns: how the ranks of a round synchronise
 * (RS_ROUND_SYNC_GROUP unless its strategy set another). */
RsRoundSync rs_plan_get_round_sync(const RsPlan *plan);
/** rs_plan_get_relay_chunk_bytes: Returns: the step, in bytes, in which the system the plan
 * models pipelines its relays (RS_NCCL_BROADCAST_STEP_BYTES for nccl-broadcast and
 * checkpoint-engine, whose rings NCCL runs), or 0 when the plan leaves it to the executor
 * (reshard run's --chunk-size; the flow model's RsFlowSimOptions.chunk_bytes). */
guint64 rs_plan_get_relay_chunk_bytes(const RsPlan *plan);
/** rs_pack_method_get_name: Returns: (transfer none): "none", "kernel", "copy-engine",
 * "host-h2d". */
const char *rs_pack_method_get_name(RsPackMethod method);
/** rs_round_sync_get_name: Returns: (transfer none): "group", "world-barrier". */
const char *rs_round_sync_get_name(RsRoundSync sync);
/** rs_plan_get_bytes_moved: Returns: bytes of transfers with src != dst. */
guint64 rs_plan_get_bytes_moved(const RsPlan *plan);
/** rs_plan_get_local_bytes: Returns: bytes of local copies (src == dst). */
guint64 rs_plan_get_local_bytes(const RsPlan *plan);

/**
 * rs_plan_check:
 * @plan: a plan built from @refit
 * @error: RS_PLAN_ERROR_INVALID describing the first violation (tensor, ranks, box)
 *
 * The invariant every strategy keeps: each element of each destination box is delivered
 * exactly once (by a transfer not flagged TO_STAGING), inside the destination's boxes;
 * every transfer's source holds its box, in its source shard or (FROM_STAGING) in a
 * staging buffer filled by an earlier transfer (its depends_on, or the TO_STAGING
 * transfers of earlier phases), or (FROM_DESTINATION) in its destination shard where its
 * depends_on delivered it; no network transfer into a destination shard carries
 * elements the destination already holds in its source shard.
 * O(n_transfers × log + Σ per (tensor, dst) pieces²).
 *
 * Returns: TRUE when the plan is correct.
 */
gboolean rs_plan_check(const RsPlan *plan, const RsRefit *refit, GError **error);

/**
 * rs_transfer_get_side_boxes:
 * @refit: the refit @tr belongs to
 * @tr: a transfer of a plan of @refit
 * @src_side: TRUE for where the sender reads the bytes, FALSE for where the receiver puts them
 * @staging: the tensor's staging box (rs_local_box_init_row_major of its shape), returned
 *   when that side is a staging buffer (FROM_STAGING, TO_STAGING)
 * @n_out: (out): number of boxes; 0 when the rank has no entry in that layout
 *
 * Which memory holds a transfer's bytes on one side: the staging buffer; for a relay
 * (FROM_DESTINATION) the sender's destination shard; else the sender's source shard or the
 * receiver's destination shard. The box may span several of the returned boxes (a fused or
 * padded buffer).
 *
 * Returns: (transfer none) (array length=n_out) (nullable): the local boxes of that rank,
 *   alive as @refit's layouts (or @staging); NULL when the rank is not in the layout.
 */
const RsLocalBox *rs_transfer_get_side_boxes(const RsRefit *refit, const RsTransfer *tr,
                                             gboolean src_side, const RsLocalBox *staging,
                                             guint *n_out);

/** rs_strategy_get_name: Returns: (transfer none): "gather-broadcast", "direct",
 * "node-aware", "hierarchical", "nccl-broadcast", "m2n", "m2n-direct",
 * "checkpoint-engine", "rdma-p2p". */
const char *rs_strategy_get_name(RsStrategy strategy);

/** rs_strategy_get_kind: Returns: whose algorithm @strategy is. */
RsStrategyKind rs_strategy_get_kind(RsStrategy strategy);

/**
 * rs_strategy_runs_in_executor:
 * Returns: TRUE when exec/ runs @strategy's plans chunk by chunk as planned (ours and the
 *   strawman), FALSE for a peer's algorithm, which the flow model runs as its own calls.
 */
gboolean rs_strategy_runs_in_executor(RsStrategy strategy);

/** rs_strategy_get_description: Returns: (transfer none): one line on what @strategy does. */
const char *rs_strategy_get_description(RsStrategy strategy);

/** rs_strategy_get_source: Returns: (transfer none): where its rules come from (a
 * repository and file, a paper or a post). */
const char *rs_strategy_get_source(RsStrategy strategy);

/**
 * rs_strategy_is_default:
 * Returns: TRUE for the strategies `reshard simulate` shows without --strategy: ours and
 * the nccl-broadcast baseline (the peers' come with --all-strategies).
 */
gboolean rs_strategy_is_default(RsStrategy strategy);

/**
 * rs_strategy_parse:
 * @error: RS_PLAN_ERROR_UNKNOWN_STRATEGY listing the strategies
 * Returns: TRUE on success.
 */
gboolean rs_strategy_parse(const char *name, RsStrategy *strategy_out, GError **error);

G_END_DECLS

/* plan-private.h — the planner's internals shared by the files of plan/: the plan's
 * struct, the transfer builder every strategy emits with (builder.c), the strategies'
 * entry points, the last step that makes messages and rounds (rounds.c), and small
 * helpers. The call order is one way: build.c → strategies → balance.c → builder.c →
 * plan.c, and build.c → rounds.c → plan.c; no file calls back into a file that calls it. */
#pragma once

#include "plan/plan.h"

G_BEGIN_DECLS

struct _RsPlan {
    RsStrategy strategy;
    GArray *transfers;    /* RsTransfer, sorted by message */
    GArray *messages;     /* RsMessage, in the global order (phase, round, src, dst) */
    GArray *message_deps; /* guint */
    guint n_phases;
    guint n_rounds;
    guint n_network_messages;
    guint64 bytes_moved;
    guint64 local_bytes;
    guint64 max_round_staging_bytes;
    RsPackMethod pack_method; /* RS_PACK_KERNEL unless the strategy set another */
    RsRoundSync round_sync;   /* RS_ROUND_SYNC_GROUP unless the strategy set another */
    guint64 relay_chunk_bytes; /* the pipeline step of its relays, bytes; 0: the executor's */
    GHashTable *boxes;         /* the boxes its transfers point at (rs_plan_box_table_new()) */
};

/* Set by a strategy's builder (through RsPlanBuilder, copied when the plan is made, or on
 * the plan itself). */
void rs_plan_set_pack_method(RsPlan *plan, RsPackMethod method);
void rs_plan_set_round_sync(RsPlan *plan, RsRoundSync sync);

static inline gint
rs_plan_cmp_u64(guint64 x, guint64 y)
{
    return x < y ? -1 : x > y;
}

static inline gint
rs_plan_cmp_i64(gint64 x, gint64 y)
{
    return x < y ? -1 : x > y;
}

/* A hash of guint64 keys: g_int64_hash folds the halves with XOR, so (high, low) keys such
 * as (round, rank) collide massively; a multiplicative (Fibonacci) hash spreads them. */
static inline guint
rs_plan_u64_hash(gconstpointer p)
{
    guint64 k = *(const guint64 *)p;
    return (guint)((k * G_GUINT64_CONSTANT(0x9E3779B97F4A7C15)) >> 32);
}

/* --- options (plan.c) --- */

/* The stripe bound in effect, bytes. */
guint64 rs_plan_options_get_stripe_bytes(const RsPlanOptions *options);
/* The operations per rank and round in effect. */
guint rs_plan_options_get_max_ops_per_group(const RsPlanOptions *options);

/* --- source groups and the transfer builder (builder.c) --- */

/* A distinct box of a source layout and the ranks holding it (its replicas). */
typedef struct {
    RsBox box;
    guint first_holder; /* into RsSourceGroups.holders */
    guint n_holders;
    guint next_replica; /* round-robin cursor of the direct strategy */
} RsSourceGroup;

typedef struct {
    GArray *groups;  /* RsSourceGroup; their boxes are pairwise disjoint */
    GArray *holders; /* guint32 ranks, each group's run sorted ascending */
} RsSourceGroups;

/* Groups the boxes of @src by identical global box; when the layout does not guarantee
 * disjoint distinct boxes, later groups are cut to what earlier ones do not cover. */
void rs_source_groups_build(RsSourceGroups *sg, const RsLayout *src);
/* Frees what rs_source_groups_build() made; a zeroed (never built) @sg is fine. */
void rs_source_groups_clear(RsSourceGroups *sg);

/* A table of boxes, each stored once: RsBox → the same RsBox, owned by the table (its keys).
 * Free with g_hash_table_unref(). */
GHashTable *rs_plan_box_table_new(void);

/* The table's copy of @box, added when missing. Returns: (transfer none): a box equal to
 * @box, alive as @boxes. O(1) expected (rs_box_hash()). */
const RsBox *rs_plan_box_intern(GHashTable *boxes, const RsBox *box);

typedef struct {
    GArray *transfers;          /* RsTransfer, in emission order */
    guint64 max_transfer_bytes; /* network transfers are split to at most this (staging) */
    RsPackMethod pack_method;   /* the plan's, RS_PACK_KERNEL unless the strategy sets another */
    RsRoundSync round_sync;     /* the plan's, RS_ROUND_SYNC_GROUP unless the strategy sets
                                 * another */
    guint64 relay_chunk_bytes;  /* the plan's, 0 unless the strategy pipelines its relays as
                                 * a library does (NCCL's broadcast step) */
    const RsTopology *topology; /* (nullable) the options' cluster */
    GHashTable *boxes;          /* what the transfers' boxes point at (rs_plan_box_intern()) */
} RsPlanBuilder;

/* Appends a transfer of @box of tensor @t (index @tensor_idx); returns its index. */
gint64 rs_plan_builder_emit(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                            guint32 src, guint32 dst, guint32 phase, guint32 flags,
                            gint64 depends_on, const RsBox *box);

/* Starts @remaining (RsBox) as {@want}; what @rank holds of @want in its own source shard
 * (@src_idx: its index in @t's source layout, or -1) is emitted as local copies and taken
 * out of @remaining, which then lists what must come from other ranks. */
void rs_plan_builder_emit_own(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                              guint32 rank, gint src_idx, const RsBox *want, GArray *remaining);

/* Splits @box into pieces of at most @max_bytes (in @t's wire dtype): index by index over
 * the outer dims and in runs along the outermost dim whose inner block fits.
 * Deterministic: equal boxes split equally. Appends to @out (RsBox); returns the count. */
guint rs_plan_split_box(const RsBox *box, const RsRefitTensor *t, guint64 max_bytes, GArray *out);

/* Emits @box from @src to @dst split into network buckets (local copies too, so that
 * every hop of a path splits one box alike);
 * piece i depends on depends_on[i] when @depends_on is given (the same split of the box
 * the sender received). Appends the new transfer indices (gint64) to @indices_out when not
 * NULL. Returns the number of pieces. */
guint rs_plan_builder_emit_split(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                                 guint32 src, guint32 dst, guint32 phase, guint32 flags,
                                 const gint64 *depends_on, const RsBox *box, GArray *indices_out);

/* FALSE with RS_PLAN_ERROR_UNCOVERED when the boxes of @sg (the source groups of @t) leave
 * part of the tensor uncovered that a destination needs: the error names the first
 * destination rank (in layout order) needing it and the part it needs. */
gboolean rs_plan_check_sources_cover(const RsRefitTensor *t, const RsSourceGroups *sg,
                                     GError **error);

/* RS_PLAN_ERROR_UNCOVERED: rank @dst needs @missing of @t and no source holds it. */
void rs_plan_set_uncovered_error(GError **error, const RsRefitTensor *t, guint32 dst,
                                 const RsBox *missing);

/* --- the strategies: each appends its transfers to @b (see rs_plan_build_full) --- */

/* gather-broadcast.c: the transfers of tensor @t (index @tensor_idx). */
gboolean rs_plan_gather_broadcast_tensor(RsPlanBuilder *b, const RsRefitTensor *t,
                                         guint32 tensor_idx, GError **error);
/* direct.c: the transfers of tensor @t (index @tensor_idx). */
gboolean rs_plan_direct_tensor(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                               GError **error);
/* node-aware.c: every tensor of @refit; options->topology must be set. */
gboolean rs_plan_node_aware_build(RsPlanBuilder *b, const RsRefit *refit,
                                  const RsPlanOptions *options, GError **error);
/* hierarchical.c: every tensor of @refit; options->topology must be set. */
gboolean rs_plan_hierarchical_build(RsPlanBuilder *b, const RsRefit *refit,
                                    const RsPlanOptions *options, GError **error);

/* nccl-broadcast.c: the transfers of tensor @t; @topo (nullable) lays out the rings. */
gboolean rs_plan_nccl_broadcast_tensor(RsPlanBuilder *b, const RsRefitTensor *t,
                                       guint32 tensor_idx, const RsTopology *topo,
                                       GError **error);
/* nccl-broadcast.c: cuts @box of a @dtype tensor into at most @n_channels slices along
 * its outermost dim with at least @n_channels indices (else its longest), torch.chunk-
 * style (slices of the last dim in whole bytes of a packed dtype); writes them to @out
 * (room for @n_channels) and returns their number (1 when it cannot be cut). */
guint rs_plan_split_channels(const RsBox *box, RsDtype dtype, guint n_channels, RsBox *out);
/* nccl-broadcast.c: an NCCL ring broadcast of @box of @t from @root to every destination
 * rank of @t in phase @phase, a ring per rail of @topo (one ring without a topology), in
 * buckets of the staging bound; each destination keeps its part of @box by a local copy
 * from its staging buffer. @root_from_staging: the root sends from its staging buffer
 * (filled in an earlier phase), else from its source shard, which must hold @box. */
void rs_plan_ring_broadcast(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                            const RsTopology *topo, guint32 root, const RsBox *box,
                            guint32 phase, gboolean root_from_staging);
/* m2n.c: every tensor of @refit, M2N's hierarchical path (@node_aware) or its direct one;
 * @topo gives the NVLink domains. */
gboolean rs_plan_m2n_build(RsPlanBuilder *b, const RsRefit *refit, const RsTopology *topo,
                           gboolean node_aware, GError **error);
/* m2n.c: the phase of each tensor's ncclReshard call (@phase_out, one per tensor). */
void rs_plan_m2n_call_phases(const RsRefit *refit, guint32 *phase_out);
/* checkpoint-engine.c: every tensor of @refit. */
gboolean rs_plan_checkpoint_engine_build(RsPlanBuilder *b, const RsRefit *refit,
                                         const RsTopology *topo, GError **error);
/* checkpoint-engine.c: its bucket size for @refit on @topo (nullable), bytes. */
guint64 rs_plan_checkpoint_engine_bucket_bytes(const RsRefit *refit, const RsTopology *topo);
/* rdma-p2p.c: every tensor of @refit. */
gboolean rs_plan_rdma_p2p_build(RsPlanBuilder *b, const RsRefit *refit, GError **error);

/* --- rounds.c --- */

/* Makes @plan (zeroed but for its strategy) from the strategy's transfers @raw: message
 * order, buckets of at most the staging bound of @options, message dependencies, rounds,
 * and the global order. @raw is reordered in place into the global order and becomes the
 * plan's transfers (the plan takes a reference; the caller keeps its own). Time
 * O(n · key bits / 11 + m log m) for n transfers and m messages; memory about 40 bytes per
 * transfer besides @raw (the packed sort keys, twice, and five per-transfer indices). */
void rs_plan_finish(RsPlan *plan, GArray *raw, const RsPlanOptions *options);

/* The message order of @raw (n transfers; @depth[i]: relay hops of transfer i from a
 * holder): @order (n elements, out) lists raw indices by (phase, src, dst, depth, origin,
 * tensor, box.lo, index). With @packed_keys, a radix sort of packed keys when the fields'
 * ranges fit in 192 bits and no box.lo is negative; otherwise, and without it, a
 * comparison sort. Both give the same order (the keys are unique). */
void rs_plan_sort_transfer_order(const GArray *raw, const guint *depth, gboolean packed_keys,
                                 guint *order);

G_END_DECLS

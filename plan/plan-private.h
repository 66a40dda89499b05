/* plan-private.h — pieces of the planner shared by the strategy files (plan.c,
 * plan-balance.c). */
#pragma once

#include "plan/plan.h"

G_BEGIN_DECLS

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
void rs_source_groups_clear(RsSourceGroups *sg);

typedef struct {
    GArray *transfers;          /* RsTransfer, in emission order */
    guint64 max_transfer_bytes; /* network transfers are split to at most this (staging) */
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
guint rs_plan_split_box(const RsBox *box, const RsRefitTensor *t, guint64 max_bytes,
                        GArray *out);

/* Emits @box from @src to @dst split into network buckets (local copies too, so that
 * every hop of a path splits one box alike);
 * piece i depends on depends_on[i] when @depends_on is given (the same split of the box
 * the sender received). Appends the new transfer indices (gint64) to @indices_out when not
 * NULL. Returns the number of pieces. */
guint rs_plan_builder_emit_split(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                                 guint32 src, guint32 dst, guint32 phase, guint32 flags,
                                 const gint64 *depends_on, const RsBox *box, GArray *indices_out);

/* The stripe bound in effect. */
guint64 rs_plan_options_get_stripe_bytes(const RsPlanOptions *options);

void rs_plan_set_uncovered_error(GError **error, const RsRefitTensor *t, guint32 dst,
                                 const RsBox *missing);

/* node-aware and hierarchical (plan-balance.c): appends the transfers of every tensor. */
gboolean rs_plan_balance_build(RsPlanBuilder *b, const RsRefit *refit, RsStrategy strategy,
                               const RsPlanOptions *options, GError **error);

G_END_DECLS

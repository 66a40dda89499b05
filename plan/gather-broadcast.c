/* gather-broadcast.c — the gather-broadcast strategy: phase 0 gathers each tensor on the
 * lowest source rank holding part of it; phase 1 broadcasts the whole tensor along a chain
 * through every destination rank in rank order (a pipelined ring broadcast as NCCL runs
 * it), bucket by bucket, each destination keeping its boxes by a local copy. */
#include "plan/plan-private.h"

#include <string.h>

/* The root: the lowest source rank holding any part of the tensor. */
static guint32
gather_root(const RsSourceGroups *sg)
{
    guint32 root = G_MAXUINT32;
    for (guint g = 0; g < sg->groups->len; g++) {
        const RsSourceGroup *group = &g_array_index(sg->groups, RsSourceGroup, g);
        root = MIN(root, g_array_index(sg->holders, guint32, group->first_holder));
    }
    return root;
}

/* Phase 0: every source group sends its box into the root's staging buffer (the root's
 * own copy when it holds the box, else the group's next replica). */
static gboolean
gather_phase(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx, RsSourceGroups *sg,
             guint32 root, GError **error)
{
    RsBox full;
    rs_box_init_full(&full, t->n_dims, t->shape);
    g_autoptr(GArray) missing = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_array_append_val(missing, full);
    for (guint g = 0; g < sg->groups->len; g++) {
        RsSourceGroup *group = &g_array_index(sg->groups, RsSourceGroup, g);
        const guint32 *holders = &g_array_index(sg->holders, guint32, group->first_holder);
        guint32 src = G_MAXUINT32;
        for (guint h = 0; h < group->n_holders; h++)
            if (holders[h] == root)
                src = root;
        if (src == G_MAXUINT32)
            src = holders[group->next_replica++ % group->n_holders];
        rs_plan_builder_emit_split(b, t, tensor_idx, src, root, 0, RS_TRANSFER_TO_STAGING, NULL,
                                   &group->box, NULL);
        rs_box_list_subtract(missing, &group->box);
    }
    if (missing->len > 0) {
        rs_plan_set_uncovered_error(error, t, root, &g_array_index(missing, RsBox, 0));
        return FALSE;
    }
    return TRUE;
}

/* Phase 1: a chain root → d0 → d1 → … through every destination rank, in buckets; bucket
 * i of a hop forwards bucket i of the previous hop; each rank keeps its boxes from its
 * staging copy, bucket by bucket. */
static void
broadcast_phase(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx, guint32 root)
{
    RsBox full;
    rs_box_init_full(&full, t->n_dims, t->shape);
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(RsBox));
    guint n_pieces = rs_plan_split_box(&full, t, b->max_transfer_bytes, pieces);
    g_autofree gint64 *prev_arrival = g_new(gint64, n_pieces);
    g_autofree gint64 *arrival = g_new(gint64, n_pieces);
    for (guint p = 0; p < n_pieces; p++)
        prev_arrival[p] = -1;
    guint32 prev = root;
    for (guint i = 0; i < rs_layout_get_n_ranks(t->dst); i++) {
        guint32 rank = rs_layout_get_rank(t->dst, i);
        for (guint p = 0; p < n_pieces; p++) {
            arrival[p] = -1;
            if (rank != root)
                arrival[p] =
                    rs_plan_builder_emit(b, t, tensor_idx, prev, rank, 1,
                                         RS_TRANSFER_TO_STAGING | RS_TRANSFER_FROM_STAGING,
                                         prev_arrival[p], &g_array_index(pieces, RsBox, p));
        }
        guint n_dst;
        const RsLocalBox *dst_boxes = rs_layout_get_boxes(t->dst, i, &n_dst);
        for (guint db = 0; db < n_dst; db++) {
            for (guint p = 0; p < n_pieces; p++) {
                RsBox keep;
                if (rs_box_intersect(&dst_boxes[db].box, &g_array_index(pieces, RsBox, p), &keep))
                    rs_plan_builder_emit(b, t, tensor_idx, rank, rank, 1, RS_TRANSFER_FROM_STAGING,
                                         arrival[p], &keep);
            }
        }
        if (rank != root) {
            prev = rank;
            memcpy(prev_arrival, arrival, n_pieces * sizeof *arrival);
        }
    }
}

gboolean
rs_plan_gather_broadcast_tensor(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                                GError **error)
{
    if (rs_layout_get_n_elems(t->src) == 0)
        return TRUE;
    RsSourceGroups sg;
    rs_source_groups_build(&sg, t->src);
    guint32 root = gather_root(&sg);
    if (root == G_MAXUINT32) {
        /* No source holds any of it: the first destination needs it all (never a rank
         * read from an empty set). */
        rs_source_groups_clear(&sg);
        RsBox full;
        rs_box_init_full(&full, t->n_dims, t->shape);
        guint32 dst = rs_layout_get_n_ranks(t->dst) > 0 ? rs_layout_get_rank(t->dst, 0) : 0;
        rs_plan_set_uncovered_error(error, t, dst, &full);
        return FALSE;
    }
    gboolean ok = gather_phase(b, t, tensor_idx, &sg, root, error);
    rs_source_groups_clear(&sg);
    if (ok)
        broadcast_phase(b, t, tensor_idx, root);
    return ok;
}

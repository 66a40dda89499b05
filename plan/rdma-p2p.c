/* rdma-p2p.c — the static point-to-point schedule Perplexity describes ("Weight Transfer
 * for RL Post-Training in under 2 seconds", Perplexity research, 2025-09-24): a controller
 * computes once which training GPU sends which parameter to which inference GPU; after
 * each step every training GPU rebuilds the full tensors it is assigned (FSDP
 * full_tensor(): an all-gather of the parameter inside its FSDP group), projects them
 * (fusion, quantisation) and writes each inference GPU's slice straight into its memory
 * with one-sided RDMA WRITEs, no rank-0 funnel.
 *
 * Here each tensor is assigned to one of the source ranks holding part of it, the one
 * with the fewest bytes assigned so far (ties to the lower rank; tensors in refit order):
 * the static schedule spreads the senders over the training GPUs. Phase 0 gathers the
 * full tensor on that sender (TO_STAGING, each box from the holder nearest it in rank
 * order); phase 1 writes every inference rank the part of its boxes it does not hold
 * itself, from the sender's staging buffer. The pipelining across parameters the post
 * describes is the rounds' overlap; the barrier between its mesh groups is the phase
 * boundary.
 */
#include "plan/plan-private.h"

/* The holder of @group nearest @rank in rank order (ties to the lower). */
static guint32
nearest(const RsSourceGroups *sg, const RsSourceGroup *group, guint32 rank)
{
    const guint32 *h = &g_array_index(sg->holders, guint32, group->first_holder);
    guint32 best = h[0];
    for (guint i = 1; i < group->n_holders; i++) {
        guint64 d = h[i] > rank ? h[i] - rank : rank - h[i];
        guint64 db = best > rank ? best - rank : rank - best;
        if (d < db)
            best = h[i];
    }
    return best;
}

gboolean
rs_plan_rdma_p2p_build(RsPlanBuilder *b, const RsRefit *refit, GError **error)
{
    /* Bytes assigned per sender rank (keyed rank + 1). */
    g_autoptr(GHashTable) load =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    g_autoptr(GArray) remaining = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        RsSourceGroups cover;
        rs_source_groups_build(&cover, t->src);
        gboolean covered = rs_plan_check_sources_cover(t, &cover, error);
        guint n_groups = cover.groups->len;
        rs_source_groups_clear(&cover);
        if (!covered)
            return FALSE;
        if (rs_layout_get_n_elems(t->src) == 0 || n_groups == 0)
            continue;
        RsBox full;
        rs_box_init_full(&full, t->n_dims, t->shape);
        guint64 bytes = rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(&full));
        guint32 sender = G_MAXUINT32;
        guint64 best = G_MAXUINT64;
        for (guint r = 0; r < rs_layout_get_n_ranks(t->src); r++) {
            guint32 rank = rs_layout_get_rank(t->src, r);
            guint n_boxes;
            rs_layout_get_boxes(t->src, r, &n_boxes);
            if (n_boxes == 0)
                continue;
            guint64 *l = g_hash_table_lookup(load, GUINT_TO_POINTER(rank + 1));
            guint64 v = l ? *l : 0;
            if (v < best || (v == best && rank < sender)) {
                best = v;
                sender = rank;
            }
        }
        guint64 *l = g_hash_table_lookup(load, GUINT_TO_POINTER(sender + 1));
        if (l == NULL) {
            l = g_new0(guint64, 1);
            g_hash_table_insert(load, GUINT_TO_POINTER(sender + 1), l);
        }
        *l += bytes;
        RsSourceGroups sg;
        rs_source_groups_build(&sg, t->src);
        g_autoptr(GArray) missing = g_array_new(FALSE, FALSE, sizeof(RsBox));
        g_array_append_val(missing, full);
        for (guint g = 0; g < sg.groups->len; g++) {
            const RsSourceGroup *group = &g_array_index(sg.groups, RsSourceGroup, g);
            rs_plan_builder_emit_split(b, t, i, nearest(&sg, group, sender), sender, 0,
                                       RS_TRANSFER_TO_STAGING, NULL, &group->box, NULL);
            rs_box_list_subtract(missing, &group->box);
        }
        rs_source_groups_clear(&sg);
        if (missing->len > 0) {
            rs_plan_set_uncovered_error(error, t, sender, &g_array_index(missing, RsBox, 0));
            return FALSE;
        }
        for (guint r = 0; r < rs_layout_get_n_ranks(t->dst); r++) {
            guint32 rank = rs_layout_get_rank(t->dst, r);
            guint n_boxes;
            const RsLocalBox *boxes = rs_layout_get_boxes(t->dst, r, &n_boxes);
            gint src_idx = rs_layout_find_rank(t->src, rank);
            for (guint k = 0; k < n_boxes; k++) {
                rs_plan_builder_emit_own(b, t, i, rank, src_idx, &boxes[k].box, remaining);
                for (guint p = 0; p < remaining->len; p++)
                    rs_plan_builder_emit_split(b, t, i, sender, rank, 1, RS_TRANSFER_FROM_STAGING,
                                               NULL, &g_array_index(remaining, RsBox, p), NULL);
            }
        }
    }
    return TRUE;
}

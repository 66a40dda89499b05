/* builder.c — what every strategy emits with: source groups (the distinct boxes of a
 * source layout and their replicas), transfers appended to a builder, boxes split into
 * buckets of at most the staging bound, and what a rank already holds as local copies. */
#include "plan/plan-private.h"

#include <string.h>

void
rs_source_groups_clear(RsSourceGroups *sg)
{
    g_clear_pointer(&sg->groups, g_array_unref);
    g_clear_pointer(&sg->holders, g_array_unref);
}

/* Groups the boxes of @src by identical global box. When the layout does not guarantee
 * that distinct boxes are disjoint, later groups are cut down to what earlier groups do
 * not cover, so the groups always partition what the sources hold. */
void
rs_source_groups_build(RsSourceGroups *sg, const RsLayout *src)
{
    sg->groups = g_array_new(FALSE, FALSE, sizeof(RsSourceGroup));
    sg->holders = g_array_new(FALSE, FALSE, sizeof(guint32));
    /* Keys are owned copies: the boxes array grows and would move borrowed keys. */
    g_autoptr(GHashTable) index = g_hash_table_new_full(rs_box_hash, rs_box_equal, g_free, NULL);
    g_autoptr(GPtrArray) members = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_autoptr(GArray) boxes = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint i = 0; i < rs_layout_get_n_ranks(src); i++) {
        guint n;
        const RsLocalBox *lb = rs_layout_get_boxes(src, i, &n);
        guint32 rank = rs_layout_get_rank(src, i);
        for (guint b = 0; b < n; b++) {
            if (rs_box_is_empty(&lb[b].box))
                continue;
            gpointer found = g_hash_table_lookup(index, &lb[b].box);
            guint g;
            if (found == NULL) {
                g = boxes->len;
                g_array_append_val(boxes, lb[b].box);
                g_ptr_array_add(members, g_array_new(FALSE, FALSE, sizeof(guint32)));
                g_hash_table_insert(index, g_memdup2(&lb[b].box, sizeof(RsBox)),
                                    GUINT_TO_POINTER(g + 1));
            } else {
                g = GPOINTER_TO_UINT(found) - 1;
            }
            g_array_append_val(g_ptr_array_index(members, g), rank);
        }
    }
    gboolean disjoint = rs_layout_has_disjoint_shards(src);
    g_autoptr(GArray) covered = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint g = 0; g < boxes->len; g++) {
        GArray *ranks = g_ptr_array_index(members, g);
        const RsBox *box = &g_array_index(boxes, RsBox, g);
        g_autoptr(GArray) parts = g_array_new(FALSE, FALSE, sizeof(RsBox));
        g_array_append_val(parts, *box);
        if (!disjoint) {
            for (guint c = 0; c < covered->len && parts->len > 0; c++)
                rs_box_list_subtract(parts, &g_array_index(covered, RsBox, c));
            g_array_append_val(covered, *box);
        }
        for (guint p = 0; p < parts->len; p++) {
            RsSourceGroup sgroup = {g_array_index(parts, RsBox, p), sg->holders->len, ranks->len,
                                    0};
            g_array_append_vals(sg->holders, ranks->data, ranks->len);
            g_array_append_val(sg->groups, sgroup);
        }
    }
}

GHashTable *
rs_plan_box_table_new(void)
{
    return g_hash_table_new_full(rs_box_hash, rs_box_equal, g_free, NULL);
}

const RsBox *
rs_plan_box_intern(GHashTable *boxes, const RsBox *box)
{
    RsBox *found = g_hash_table_lookup(boxes, box);
    if (found == NULL) {
        found = g_memdup2(box, sizeof *box);
        g_hash_table_add(boxes, found);
    }
    return found;
}

gint64
rs_plan_builder_emit(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx, guint32 src,
                     guint32 dst, guint32 phase, guint32 flags, gint64 depends_on, const RsBox *box)
{
    RsTransfer tr;
    memset(&tr, 0, sizeof tr);
    tr.tensor_idx = tensor_idx;
    tr.src = src;
    tr.dst = dst;
    tr.phase = phase;
    tr.flags = flags;
    tr.depends_on = depends_on;
    tr.box = rs_plan_box_intern(b->boxes, box);
    tr.size_bytes = rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(box));
    g_array_append_val(b->transfers, tr);
    return (gint64)b->transfers->len - 1;
}

guint
rs_plan_split_box(const RsBox *box, const RsRefitTensor *t, guint64 max_bytes, GArray *out)
{
    if (rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(box)) <= max_bytes || box->n_dims == 0 ||
        rs_box_rows_share_bytes(box, t->dtype)) {
        g_array_append_val(out, *box);
        return 1;
    }
    /* The outermost dim d whose inner block (all indices of the dims after d) fits. */
    guint64 inner = 1;
    guint64 inner_of[RS_MAX_DIMS];
    for (gint k = (gint)box->n_dims - 1; k >= 0; k--) {
        inner_of[k] = inner;
        inner *= (guint64)rs_box_get_count(box, (guint)k);
    }
    gint d = 0;
    while (d < (gint)box->n_dims && rs_refit_tensor_get_n_bytes(t, inner_of[d]) > max_bytes)
        d++;
    if (d == (gint)box->n_dims)
        d = (gint)box->n_dims - 1; /* one element exceeds the bound: split to elements */
    /* The most indices of dim d whose blocks fit (bytes may be fractional per element). */
    gint64 per_piece = 1;
    {
        gint64 lo = 1, hi = rs_box_get_count(box, (guint)d);
        while (lo < hi) {
            gint64 mid = lo + (hi - lo + 1) / 2;
            if (rs_refit_tensor_get_n_bytes(t, inner_of[d] * (guint64)mid) <= max_bytes)
                lo = mid;
            else
                hi = mid - 1;
        }
        per_piece = lo;
    }
    /* A packed dtype's runs of the last dim are whole bytes already: its bytes are rounded
     * up, so the most elements of B bytes are B × elems per byte, and the boxes start on a
     * multiple of it (rs_layout_check_packed). */
    /* Iterate the outer dims index by index, and dim d in runs of per_piece. */
    gint64 k[RS_MAX_DIMS] = {0};
    guint n = 0;
    for (;;) {
        for (gint64 start = 0; start < rs_box_get_count(box, (guint)d); start += per_piece) {
            RsBox piece = *box;
            for (gint o = 0; o < d; o++)
                rs_box_set_dim(&piece, (guint)o, rs_box_get_index(box, (guint)o, k[o]), 1, 1);
            gint64 count = MIN(per_piece, rs_box_get_count(box, (guint)d) - start);
            rs_box_set_dim(&piece, (guint)d, rs_box_get_index(box, (guint)d, start), count,
                           box->step[d]);
            g_array_append_val(out, piece);
            n++;
        }
        gint o = d - 1;
        while (o >= 0 && ++k[o] == rs_box_get_count(box, (guint)o))
            k[o--] = 0;
        if (o < 0)
            break;
    }
    return n;
}

guint
rs_plan_builder_emit_split(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                           guint32 src, guint32 dst, guint32 phase, guint32 flags,
                           const gint64 *depends_on, const RsBox *box, GArray *indices_out)
{
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(RsBox));
    /* Local copies split alike: a rank forwarding what it copied locally depends on the
     * copy piece by piece. */
    guint n = rs_plan_split_box(box, t, b->max_transfer_bytes, pieces);
    for (guint i = 0; i < n; i++) {
        gint64 idx =
            rs_plan_builder_emit(b, t, tensor_idx, src, dst, phase, flags,
                                 depends_on ? depends_on[i] : -1, &g_array_index(pieces, RsBox, i));
        if (indices_out != NULL)
            g_array_append_val(indices_out, idx);
    }
    return n;
}

void
rs_plan_builder_emit_own(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx, guint32 rank,
                         gint src_idx, const RsBox *want, GArray *remaining)
{
    g_array_set_size(remaining, 0);
    g_array_append_val(remaining, *want);
    if (src_idx < 0)
        return;
    guint n_own;
    const RsLocalBox *own = rs_layout_get_boxes(t->src, (guint)src_idx, &n_own);
    for (guint o = 0; o < n_own; o++) {
        RsBox inter;
        if (!rs_box_intersect(want, &own[o].box, &inter))
            continue;
        rs_plan_builder_emit(b, t, tensor_idx, rank, rank, 0, 0, -1, &inter);
        rs_box_list_subtract(remaining, &own[o].box);
    }
}

gboolean
rs_plan_check_sources_cover(const RsRefitTensor *t, const RsSourceGroups *sg, GError **error)
{
    RsBox full;
    rs_box_init_full(&full, t->n_dims, t->shape);
    g_autoptr(GArray) missing = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_array_append_val(missing, full);
    for (guint g = 0; g < sg->groups->len && missing->len > 0; g++)
        rs_box_list_subtract(missing, &g_array_index(sg->groups, RsSourceGroup, g).box);
    for (guint r = 0; r < rs_layout_get_n_ranks(t->dst); r++) {
        guint n;
        const RsLocalBox *boxes = rs_layout_get_boxes(t->dst, r, &n);
        for (guint k = 0; k < n; k++)
            for (guint m = 0; m < missing->len; m++) {
                RsBox need;
                if (rs_box_intersect(&boxes[k].box, &g_array_index(missing, RsBox, m), &need)) {
                    rs_plan_set_uncovered_error(error, t, rs_layout_get_rank(t->dst, r), &need);
                    return FALSE;
                }
            }
    }
    return TRUE;
}

void
rs_plan_set_uncovered_error(GError **error, const RsRefitTensor *t, guint32 dst,
                            const RsBox *missing)
{
    g_autofree char *box = rs_box_format(missing);
    g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_UNCOVERED,
                "%s: rank %u needs elements %s that no source rank holds", t->name, dst, box);
}

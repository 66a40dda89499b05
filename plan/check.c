/* check.c — the invariant checker (rs_plan_check): every destination element delivered
 * exactly once, inside the destination's boxes, by a sender that holds it in its source
 * shard, in a staging buffer an earlier transfer filled, or in its destination shard where
 * its dependency delivered it; no network transfer carries what the receiver holds. */
#include "plan/plan-private.h"

static gboolean
check_fail(GError **error, const RsRefit *refit, const RsTransfer *tr, const char *what)
{
    g_autofree char *box = rs_box_format(tr->box);
    g_set_error(
        error, RS_PLAN_ERROR, RS_PLAN_ERROR_INVALID, "%s: transfer %u -> %u of %s (phase %u): %s",
        rs_refit_get_tensor(refit, tr->tensor_idx)->name, tr->src, tr->dst, box, tr->phase, what);
    return FALSE;
}

/* Delivered pieces of one (tensor, dst), sorted by lo[0], must be pairwise disjoint. */
static gboolean
pieces_disjoint(GArray *pieces)
{
    g_array_sort(pieces, rs_box_compare_lo0);
    for (guint i = 0; i < pieces->len; i++) {
        const RsBox *a = &g_array_index(pieces, RsBox, i);
        for (guint j = i + 1; j < pieces->len; j++) {
            const RsBox *b = &g_array_index(pieces, RsBox, j);
            if (a->n_dims > 0 && b->lo[0] >= a->hi[0])
                break;
            if (a->n_dims == 0 || rs_box_intersect(a, b, NULL))
                return FALSE;
        }
    }
    return TRUE;
}

typedef struct {
    guint32 tensor_idx;
    guint32 dst;
    guint index;
} DeliveryKey;

static gint
delivery_compare(gconstpointer pa, gconstpointer pb)
{
    const DeliveryKey *a = pa, *b = pb;
    gint c = rs_plan_cmp_u64(a->tensor_idx, b->tensor_idx);
    if (c == 0)
        c = rs_plan_cmp_u64(a->dst, b->dst);
    return c != 0 ? c : rs_plan_cmp_u64(a->index, b->index);
}

/* Is @box covered by the staging fills of (tensor, rank) in phases before @phase? */
static gboolean
staging_covers(const RsPlan *plan, GHashTable *fills, guint32 tensor_idx, guint32 rank,
               guint32 phase, const RsBox *box)
{
    guint64 key = ((guint64)tensor_idx << 32) | rank;
    GArray *list = g_hash_table_lookup(fills, &key);
    if (list == NULL)
        return FALSE;
    g_autoptr(GArray) rest = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_array_append_val(rest, *box);
    for (guint i = 0; i < list->len && rest->len > 0; i++) {
        const RsTransfer *f = rs_plan_get_transfer(plan, g_array_index(list, guint, i));
        if (f->phase < phase)
            rs_box_list_subtract(rest, f->box);
    }
    return rest->len == 0;
}

/* The staging fills: per (tensor, rank), the transfers into its staging buffer. */
static GHashTable *
collect_staging_fills(const RsPlan *plan)
{
    GHashTable *fills = g_hash_table_new_full(rs_plan_u64_hash, g_int64_equal, g_free,
                                              (GDestroyNotify)g_array_unref);
    for (guint i = 0; i < plan->transfers->len; i++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, i);
        if (!(tr->flags & RS_TRANSFER_TO_STAGING))
            continue;
        guint64 key = ((guint64)tr->tensor_idx << 32) | tr->dst;
        GArray *list = g_hash_table_lookup(fills, &key);
        if (list == NULL) {
            list = g_array_new(FALSE, FALSE, sizeof(guint));
            g_hash_table_insert(fills, g_memdup2(&key, sizeof key), list);
        }
        g_array_append_val(list, i);
    }
    return fills;
}

/* Where the sender reads: its destination shard (a relay), its staging buffer, or its
 * source shard; each must hold the box. */
static gboolean
check_sender_holds(const RsPlan *plan, const RsRefit *refit, GHashTable *fills,
                   const RsTransfer *tr, guint64 n_elems, GError **error)
{
    const RsRefitTensor *t = rs_refit_get_tensor(refit, tr->tensor_idx);
    if ((tr->flags & RS_TRANSFER_FROM_DESTINATION) && (tr->flags & RS_TRANSFER_FROM_STAGING))
        return check_fail(error, refit, tr,
                          "reads both from staging and from its destination shard");
    if (tr->flags & RS_TRANSFER_FROM_DESTINATION) {
        const RsTransfer *dep =
            tr->depends_on >= 0 ? rs_plan_get_transfer(plan, (guint)tr->depends_on) : NULL;
        if (dep == NULL || dep->dst != tr->src || (dep->flags & RS_TRANSFER_TO_STAGING) ||
            dep->tensor_idx != tr->tensor_idx || dep->phase > tr->phase ||
            !rs_box_is_within(tr->box, dep->box))
            return check_fail(error, refit, tr,
                              "relays bytes its dependency did not deliver to its shard");
    } else if (tr->flags & RS_TRANSFER_FROM_STAGING) {
        if (tr->depends_on >= 0) {
            const RsTransfer *dep = rs_plan_get_transfer(plan, (guint)tr->depends_on);
            if (dep->dst != tr->src || !(dep->flags & RS_TRANSFER_TO_STAGING) ||
                dep->tensor_idx != tr->tensor_idx || dep->phase > tr->phase ||
                !rs_box_is_within(tr->box, dep->box))
                return check_fail(error, refit, tr, "forwards bytes its dependency did not bring");
        } else if (!staging_covers(plan, fills, tr->tensor_idx, tr->src, tr->phase, tr->box)) {
            return check_fail(error, refit, tr, "reads staging that no earlier phase filled");
        }
    } else if (rs_layout_count_held(t->src, tr->src, tr->box) != n_elems) {
        return check_fail(error, refit, tr, "the source rank does not hold the box");
    }
    return TRUE;
}

/* One transfer: inside its tensor, sized right, read from where its sender holds it, and
 * (unless into staging) delivered into the destination shard, never to a rank that holds
 * the elements itself. A delivery is appended to @deliveries. */
static gboolean
check_transfer(const RsPlan *plan, const RsRefit *refit, GHashTable *fills, guint i,
               GArray *deliveries, GError **error)
{
    const RsTransfer *tr = rs_plan_get_transfer(plan, i);
    if (tr->tensor_idx >= rs_refit_get_n_tensors(refit))
        return check_fail(error, refit, tr, "tensor index out of range");
    const RsRefitTensor *t = rs_refit_get_tensor(refit, tr->tensor_idx);
    RsBox full;
    rs_box_init_full(&full, t->n_dims, t->shape);
    guint64 n_elems = rs_box_get_n_elems(tr->box);
    if (n_elems == 0 || !rs_box_is_within(tr->box, &full))
        return check_fail(error, refit, tr, "empty box or box outside the tensor");
    if (tr->size_bytes != rs_refit_tensor_get_n_bytes(t, n_elems))
        return check_fail(error, refit, tr, "size_bytes does not match the box");
    if (!check_sender_holds(plan, refit, fills, tr, n_elems, error))
        return FALSE;
    if (tr->flags & RS_TRANSFER_TO_STAGING)
        return TRUE;
    if (rs_layout_count_held(t->dst, tr->dst, tr->box) != n_elems)
        return check_fail(error, refit, tr, "the box is not part of the destination shard");
    if (tr->src != tr->dst && rs_layout_count_held(t->src, tr->dst, tr->box) != 0)
        return check_fail(error, refit, tr, "sends elements the destination already holds");
    DeliveryKey k = {tr->tensor_idx, tr->dst, i};
    g_array_append_val(deliveries, k);
    return TRUE;
}

/* Walks every (tensor, destination rank) and compares the delivered elements, sorted in
 * @deliveries, with its shard: as many, none twice. Deliveries to a rank outside the
 * destination layout were rejected by check_transfer. */
static gboolean
check_deliveries(const RsPlan *plan, const RsRefit *refit, GArray *deliveries, GError **error)
{
    guint d = 0;
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint ti = 0; ti < rs_refit_get_n_tensors(refit); ti++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, ti);
        for (guint e = 0; e < rs_layout_get_n_ranks(t->dst); e++) {
            guint32 rank = rs_layout_get_rank(t->dst, e);
            guint n_boxes;
            const RsLocalBox *boxes = rs_layout_get_boxes(t->dst, e, &n_boxes);
            guint64 expected = 0;
            for (guint b = 0; b < n_boxes; b++)
                expected += rs_box_get_n_elems(&boxes[b].box);
            g_array_set_size(pieces, 0);
            guint64 got = 0;
            for (; d < deliveries->len; d++) {
                const DeliveryKey *k = &g_array_index(deliveries, DeliveryKey, d);
                if (k->tensor_idx != ti || k->dst != rank)
                    break;
                const RsTransfer *tr = rs_plan_get_transfer(plan, k->index);
                g_array_append_vals(pieces, tr->box, 1);
                got += rs_box_get_n_elems(tr->box);
            }
            if (got != expected || !pieces_disjoint(pieces)) {
                g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_INVALID,
                            "%s: rank %u receives %" G_GUINT64_FORMAT
                            " elements for a shard of %" G_GUINT64_FORMAT "%s",
                            t->name, rank, got, expected,
                            got == expected ? " (some elements twice)" : "");
                return FALSE;
            }
        }
    }
    return TRUE;
}

gboolean
rs_plan_check(const RsPlan *plan, const RsRefit *refit, GError **error)
{
    g_autoptr(GHashTable) fills = collect_staging_fills(plan);
    g_autoptr(GArray) deliveries = g_array_new(FALSE, FALSE, sizeof(DeliveryKey));
    for (guint i = 0; i < plan->transfers->len; i++)
        if (!check_transfer(plan, refit, fills, i, deliveries, error))
            return FALSE;
    g_array_sort(deliveries, delivery_compare);
    return check_deliveries(plan, refit, deliveries, error);
}

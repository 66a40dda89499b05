/* plan.c — the planner: box intersection of source and destination layouts, strategies
 * gather-broadcast and direct, coalescing into messages, and the invariant checker.
 *
 * Per tensor the source layout is reduced to "source groups": distinct boxes, each with
 * the ranks holding it (its replicas). Destinations intersect their boxes with the groups;
 * a strategy decides which replica sends each piece. Transfers are then sorted by
 * (phase, src, dst, tensor, box) so that each message is a contiguous run. */
#include "plan/plan-private.h"

#include <stdlib.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-plan-error-quark, rs_plan_error)
/* clang-format on */

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
};

#define DEFAULT_MAX_OPS_PER_GROUP 256
#define DEFAULT_STRIPE_BYTES (G_GUINT64_CONSTANT(64) << 20)
#define DEFAULT_STAGING_BYTES_NO_TOPOLOGY (G_GUINT64_CONSTANT(1) << 30)

/* g_int64_hash folds the halves with XOR, so (high, low) keys such as (round, rank)
 * collide massively; a multiplicative (Fibonacci) hash spreads them. */
static guint
u64_mix_hash(gconstpointer p)
{
    guint64 k = *(const guint64 *)p;
    return (guint)((k * G_GUINT64_CONSTANT(0x9E3779B97F4A7C15)) >> 32);
}

void
rs_plan_options_init(RsPlanOptions *options, const RsTopology *topology)
{
    memset(options, 0, sizeof *options);
    options->topology = topology;
}

guint64
rs_plan_options_get_staging_bytes(const RsPlanOptions *options)
{
    if (options != NULL && options->staging_bytes != 0)
        return options->staging_bytes;
    /* 1/16 of GPU memory: a bucket the size NeMo-RL and veRL use for weight sync (a few GB)
     * on 80 GB parts, leaving the rest to the inference engine. */
    if (options != NULL && options->topology != NULL &&
        rs_topology_get_gpu_memory_bytes(options->topology) > 0)
        return rs_topology_get_gpu_memory_bytes(options->topology) / 16;
    return DEFAULT_STAGING_BYTES_NO_TOPOLOGY;
}

static guint
options_max_ops(const RsPlanOptions *options)
{
    return options && options->max_ops_per_group ? options->max_ops_per_group
                                                 : DEFAULT_MAX_OPS_PER_GROUP;
}

guint64
rs_plan_options_get_stripe_bytes(const RsPlanOptions *options)
{
    return options && options->stripe_bytes ? options->stripe_bytes : DEFAULT_STRIPE_BYTES;
}

/* --- source groups --- */

void
rs_source_groups_clear(RsSourceGroups *sg)
{
    g_array_unref(sg->groups);
    g_array_unref(sg->holders);
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
            RsSourceGroup sgroup = {g_array_index(parts, RsBox, p), sg->holders->len, ranks->len, 0};
            g_array_append_vals(sg->holders, ranks->data, ranks->len);
            g_array_append_val(sg->groups, sgroup);
        }
    }
}

/* --- building --- */

gint64
rs_plan_builder_emit(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx, guint32 src,
                     guint32 dst, guint32 phase, guint32 flags, gint64 depends_on,
                     const RsBox *box)
{
    RsTransfer tr;
    memset(&tr, 0, sizeof tr);
    tr.tensor_idx = tensor_idx;
    tr.src = src;
    tr.dst = dst;
    tr.phase = phase;
    tr.flags = flags;
    tr.depends_on = depends_on;
    tr.box = *box;
    tr.size_bytes = rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(box));
    g_array_append_val(b->transfers, tr);
    return (gint64)b->transfers->len - 1;
}

guint
rs_plan_split_box(const RsBox *box, const RsRefitTensor *t, guint64 max_bytes, GArray *out)
{
    if (rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(box)) <= max_bytes ||
        box->n_dims == 0) {
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
        gint64 idx = rs_plan_builder_emit(b, t, tensor_idx, src, dst, phase, flags,
                                          depends_on ? depends_on[i] : -1,
                                          &g_array_index(pieces, RsBox, i));
        if (indices_out != NULL)
            g_array_append_val(indices_out, idx);
    }
    return n;
}

void
rs_plan_builder_emit_own(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                         guint32 rank, gint src_idx, const RsBox *want, GArray *remaining)
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

void
rs_plan_set_uncovered_error(GError **error, const RsRefitTensor *t, guint32 dst,
                            const RsBox *missing)
{
    g_autofree char *box = rs_box_format(missing);
    g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_UNCOVERED,
                "%s: rank %u needs elements %s that no source rank holds", t->name, dst, box);
}

static gboolean
plan_direct_tensor(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx, GError **error)
{
    RsSourceGroups sg;
    rs_source_groups_build(&sg, t->src);
    gboolean ok = TRUE;
    g_autoptr(GArray) remaining = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint i = 0; ok && i < rs_layout_get_n_ranks(t->dst); i++) {
        guint32 rank = rs_layout_get_rank(t->dst, i);
        guint n_dst;
        const RsLocalBox *dst_boxes = rs_layout_get_boxes(t->dst, i, &n_dst);
        gint src_idx = rs_layout_find_rank(t->src, rank);
        for (guint db = 0; ok && db < n_dst; db++) {
            const RsBox *want = &dst_boxes[db].box;
            rs_plan_builder_emit_own(b, t, tensor_idx, rank, src_idx, want, remaining);
            for (guint g = 0; g < sg.groups->len && remaining->len > 0; g++) {
                RsSourceGroup *group = &g_array_index(sg.groups, RsSourceGroup, g);
                gboolean used = FALSE;
                for (guint r = 0; r < remaining->len; r++) {
                    RsBox inter;
                    if (!rs_box_intersect(&g_array_index(remaining, RsBox, r), &group->box,
                                          &inter))
                        continue;
                    guint replica = group->next_replica++ % group->n_holders;
                    guint32 src =
                        g_array_index(sg.holders, guint32, group->first_holder + replica);
                    rs_plan_builder_emit_split(b, t, tensor_idx, src, rank, 0, 0, NULL, &inter,
                                               NULL);
                    used = TRUE;
                }
                if (used)
                    rs_box_list_subtract(remaining, &group->box);
            }
            if (remaining->len > 0) {
                rs_plan_set_uncovered_error(error, t, rank, &g_array_index(remaining, RsBox, 0));
                ok = FALSE;
            }
        }
    }
    rs_source_groups_clear(&sg);
    return ok;
}

static gboolean
plan_gather_broadcast_tensor(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                             GError **error)
{
    if (rs_layout_get_n_elems(t->src) == 0)
        return TRUE;
    RsSourceGroups sg;
    rs_source_groups_build(&sg, t->src);
    /* Root: the lowest source rank holding any part of the tensor. */
    guint32 root = G_MAXUINT32;
    for (guint g = 0; g < sg.groups->len; g++) {
        RsSourceGroup *group = &g_array_index(sg.groups, RsSourceGroup, g);
        root = MIN(root, g_array_index(sg.holders, guint32, group->first_holder));
    }
    RsBox full;
    rs_box_init_full(&full, t->n_dims, t->shape);
    g_autoptr(GArray) missing = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_array_append_val(missing, full);

    /* Phase 0: gather the whole tensor into the root's staging buffer. */
    for (guint g = 0; g < sg.groups->len; g++) {
        RsSourceGroup *group = &g_array_index(sg.groups, RsSourceGroup, g);
        const guint32 *holders = &g_array_index(sg.holders, guint32, group->first_holder);
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
    rs_source_groups_clear(&sg);
    if (missing->len > 0) {
        rs_plan_set_uncovered_error(error, t, root, &g_array_index(missing, RsBox, 0));
        return FALSE;
    }

    /* Phase 1: a chain root → d0 → d1 → … through every destination rank, in buckets;
     * bucket i of a hop forwards bucket i of the previous hop; each rank keeps its boxes
     * from its staging copy, bucket by bucket. */
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(RsBox));
    guint n_pieces =
        rs_plan_split_box(&full, t, b->max_transfer_bytes, pieces);
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
                arrival[p] = rs_plan_builder_emit(
                    b, t, tensor_idx, prev, rank, 1,
                    RS_TRANSFER_TO_STAGING | RS_TRANSFER_FROM_STAGING, prev_arrival[p],
                    &g_array_index(pieces, RsBox, p));
        }
        guint n_dst;
        const RsLocalBox *dst_boxes = rs_layout_get_boxes(t->dst, i, &n_dst);
        for (guint db = 0; db < n_dst; db++) {
            for (guint p = 0; p < n_pieces; p++) {
                RsBox keep;
                if (rs_box_intersect(&dst_boxes[db].box, &g_array_index(pieces, RsBox, p),
                                     &keep))
                    rs_plan_builder_emit(b, t, tensor_idx, rank, rank, 1,
                                         RS_TRANSFER_FROM_STAGING, arrival[p], &keep);
            }
        }
        if (rank != root) {
            prev = rank;
            memcpy(prev_arrival, arrival, n_pieces * sizeof *arrival);
        }
    }
    return TRUE;
}

static gint
cmp_u64(guint64 x, guint64 y)
{
    return x < y ? -1 : x > y;
}

static gint
cmp_i64(gint64 x, gint64 y)
{
    return x < y ? -1 : x > y;
}

/* The rank a relay's bytes came from (the source of its dependency), G_MAXUINT32 for
 * bytes the sender holds itself. */
static guint32
transfer_origin(const RsTransfer *all, const RsTransfer *t)
{
    return t->depends_on >= 0 ? all[t->depends_on].src : G_MAXUINT32;
}

/* Message order: (phase, src, dst, depth, origin, tensor, box.lo), then emission order.
 * Relays are grouped by their depth (hops from a holder), so a message only ever waits for
 * messages of the depth below — the message graph cannot have a cycle however buckets
 * coalesce — and by where their bytes came from, so a relay message waits for the messages
 * of one upstream rank only and pipelines behind them. */
typedef struct {
    const RsTransfer *all;
    const guint *depth; /* relay hops from a holder, per transfer */
} SortContext;

static gint
transfer_compare(gconstpointer pa, gconstpointer pb, gpointer user_data)
{
    const SortContext *ctx = user_data;
    const RsTransfer *all = ctx->all;
    guint ia = *(const guint *)pa, ib = *(const guint *)pb;
    const RsTransfer *a = &all[ia], *b = &all[ib];
    gint c = cmp_u64(a->phase, b->phase);
    if (c == 0)
        c = cmp_u64(a->src, b->src);
    if (c == 0)
        c = cmp_u64(a->dst, b->dst);
    if (c == 0)
        c = cmp_u64(ctx->depth[ia], ctx->depth[ib]);
    if (c == 0)
        c = cmp_u64(transfer_origin(all, a), transfer_origin(all, b));
    if (c == 0)
        c = cmp_u64(a->tensor_idx, b->tensor_idx);
    for (guint d = 0; c == 0 && d < a->box.n_dims; d++)
        c = cmp_i64(a->box.lo[d], b->box.lo[d]);
    return c != 0 ? c : cmp_u64(ia, ib);
}

static gint
compare_uint(gconstpointer a, gconstpointer b)
{
    return cmp_u64(*(const guint *)a, *(const guint *)b);
}

/* Rounds: per (round, rank) how many messages and bytes are placed. */
typedef struct {
    guint ops;
    guint64 bytes;
} RoundUse;

typedef struct {
    GHashTable *use;    /* (round << 32 | rank) → RoundUse* */
    GHashTable *lowest; /* rank + 1 → first round that may have room */
    guint max_ops;
    guint64 max_bytes;
    guint n_rounds;
    guint64 max_used_bytes;
} RoundPacker;

static RoundUse *
round_use(RoundPacker *rp, guint round, guint32 rank, gboolean create)
{
    guint64 key = ((guint64)round << 32) | rank;
    RoundUse *u = g_hash_table_lookup(rp->use, &key);
    if (u == NULL && create) {
        u = g_new0(RoundUse, 1);
        g_hash_table_insert(rp->use, g_memdup2(&key, sizeof key), u);
    }
    return u;
}

static gboolean
round_has_room(RoundPacker *rp, guint round, guint32 rank, guint64 bytes)
{
    RoundUse *u = round_use(rp, round, rank, FALSE);
    return u == NULL || (u->ops < rp->max_ops && u->bytes + bytes <= rp->max_bytes);
}

static guint
lowest_round(RoundPacker *rp, guint32 rank)
{
    return GPOINTER_TO_UINT(g_hash_table_lookup(rp->lowest, GUINT_TO_POINTER(rank + 1)));
}

/* Places a message of @bytes between @src and @dst in the first round >= @min_round where
 * both have room (first fit), and returns it. */
static guint
round_place(RoundPacker *rp, guint32 src, guint32 dst, guint64 bytes, guint min_round)
{
    guint r = MAX(min_round, MAX(lowest_round(rp, src), lowest_round(rp, dst)));
    while (!round_has_room(rp, r, src, bytes) || !round_has_room(rp, r, dst, bytes))
        r++;
    guint32 ranks[2] = {src, dst};
    for (guint k = 0; k < 2; k++) {
        RoundUse *u = round_use(rp, r, ranks[k], TRUE);
        u->ops++;
        u->bytes += bytes;
        rp->max_used_bytes = MAX(rp->max_used_bytes, u->bytes);
        /* Advance the rank's lowest open round past rounds that are full. */
        guint low = lowest_round(rp, ranks[k]);
        while (low <= r) {
            RoundUse *lu = round_use(rp, low, ranks[k], FALSE);
            if (lu == NULL || (lu->ops < rp->max_ops && lu->bytes < rp->max_bytes))
                break;
            low++;
        }
        g_hash_table_insert(rp->lowest, GUINT_TO_POINTER(ranks[k] + 1), GUINT_TO_POINTER(low));
    }
    rp->n_rounds = MAX(rp->n_rounds, r + 1);
    return r;
}

static gint
message_order_compare(gconstpointer pa, gconstpointer pb)
{
    const RsMessage *a = pa, *b = pb;
    gint c = cmp_u64(a->phase, b->phase);
    if (c == 0)
        c = cmp_u64(a->round, b->round);
    if (c == 0)
        c = cmp_u64(a->src, b->src);
    if (c == 0)
        c = cmp_u64(a->dst, b->dst);
    return c != 0 ? c : cmp_u64(a->first_transfer, b->first_transfer);
}

/* Sorts transfers into message order, coalesces them into buckets of at most the staging
 * bound, places the messages in rounds, puts messages and transfers in the global order,
 * remaps depends_on, and records message dependencies and byte totals. */
static void
plan_finish(RsPlan *plan, GArray *raw, const RsPlanOptions *options)
{
    guint64 staging = rs_plan_options_get_staging_bytes(options);
    guint n = raw->len;
    g_autofree guint *order = g_new(guint, n);
    g_autofree guint *depth = g_new(guint, n);
    for (guint i = 0; i < n; i++) {
        const RsTransfer *tr = &g_array_index(raw, RsTransfer, i);
        /* Strategies emit a transfer after the one it depends on. */
        g_assert(tr->depends_on < (gint64)i);
        depth[i] = tr->depends_on >= 0 ? depth[tr->depends_on] + 1 : 0;
        order[i] = i;
    }
    SortContext ctx = {(const RsTransfer *)raw->data, depth};
    g_qsort_with_data(order, (gint)n, sizeof(guint), transfer_compare, &ctx);
    g_autofree guint *sorted_index = g_new(guint, n);
    for (guint i = 0; i < n; i++)
        sorted_index[order[i]] = i;
    /* The raw transfers are sorted in place (their memory is reused: at Kimi-K3 scale a
     * second copy would not fit): apply the permutation cycle by cycle. */
    for (guint i = 0; i < n; i++) {
        RsTransfer *tr = &g_array_index(raw, RsTransfer, i);
        if (tr->depends_on >= 0)
            tr->depends_on = sorted_index[tr->depends_on];
    }
    for (guint i = 0; i < n; i++) {
        if (sorted_index[i] == i)
            continue;
        /* Follow the cycle starting at i: the transfer at i belongs at sorted_index[i]. */
        RsTransfer moving = g_array_index(raw, RsTransfer, i);
        guint target = sorted_index[i];
        guint moving_depth = depth[i];
        while (target != i) {
            RsTransfer next = g_array_index(raw, RsTransfer, target);
            guint next_depth = depth[target];
            guint next_target = sorted_index[target];
            g_array_index(raw, RsTransfer, target) = moving;
            depth[target] = moving_depth;
            sorted_index[target] = target;
            moving = next;
            moving_depth = next_depth;
            target = next_target;
        }
        g_array_index(raw, RsTransfer, i) = moving;
        depth[i] = moving_depth;
        sorted_index[i] = i;
    }
    GArray *sorted = raw;
    for (guint i = 0; i < n; i++) {
        const RsTransfer *tr = &g_array_index(sorted, RsTransfer, i);
        if (tr->src != tr->dst)
            plan->bytes_moved += tr->size_bytes;
        else
            plan->local_bytes += tr->size_bytes;
        plan->n_phases = MAX(plan->n_phases, tr->phase + 1);
    }

    /* Buckets: consecutive transfers of one (phase, src, dst, origin) while they fit. */
    g_autoptr(GArray) messages = g_array_new(FALSE, FALSE, sizeof(RsMessage));
    g_autofree guint *message_of = g_new(guint, n);
    const RsTransfer *all_sorted = (const RsTransfer *)sorted->data;
    for (guint i = 0; i < n;) {
        const RsTransfer *first = &g_array_index(sorted, RsTransfer, i);
        guint32 origin = transfer_origin(all_sorted, first);
        guint first_depth = depth[i];
        RsMessage m = {first->src, first->dst, first->phase, 0, i, 0, 0, 0, 0};
        guint j = i;
        for (; j < n; j++) {
            const RsTransfer *tr = &g_array_index(sorted, RsTransfer, j);
            if (tr->src != m.src || tr->dst != m.dst || tr->phase != m.phase ||
                depth[j] != first_depth || transfer_origin(all_sorted, tr) != origin)
                break;
            if (m.src != m.dst && j > i && m.size_bytes + tr->size_bytes > staging)
                break;
            m.size_bytes += tr->size_bytes;
            message_of[j] = messages->len;
        }
        m.n_transfers = j - i;
        g_array_append_val(messages, m);
        i = j;
    }

    /* Dependencies between messages: deps[m] lists message ids, sorted and unique. */
    g_autoptr(GPtrArray) deps = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint mi = 0; mi < messages->len; mi++) {
        RsMessage *m = &g_array_index(messages, RsMessage, mi);
        GArray *d = g_array_new(FALSE, FALSE, sizeof(guint));
        for (guint k = 0; k < m->n_transfers; k++) {
            const RsTransfer *tr = &g_array_index(sorted, RsTransfer, m->first_transfer + k);
            if (tr->depends_on < 0)
                continue;
            guint dm = message_of[tr->depends_on];
            if (dm != mi)
                g_array_append_val(d, dm);
        }
        g_array_sort(d, compare_uint);
        guint w = 0;
        for (guint k = 0; k < d->len; k++)
            if (k == 0 || g_array_index(d, guint, k) != g_array_index(d, guint, w - 1))
                g_array_index(d, guint, w++) = g_array_index(d, guint, k);
        g_array_set_size(d, w);
        g_ptr_array_add(deps, d);
    }

    /* Rounds. Kahn's algorithm per phase: a message becomes ready when all its dependencies
     * are placed; ready messages are placed in message order, after their dependencies'
     * rounds and after every round of earlier phases. */
    RoundPacker rp = {g_hash_table_new_full(u64_mix_hash, g_int64_equal, g_free, g_free),
                      g_hash_table_new(g_direct_hash, g_direct_equal), options_max_ops(options),
                      staging, 0, 0};
    g_autofree guint *waiting = g_new0(guint, messages->len);
    g_autoptr(GPtrArray) dependents = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint mi = 0; mi < messages->len; mi++)
        g_ptr_array_add(dependents, g_array_new(FALSE, FALSE, sizeof(guint)));
    for (guint mi = 0; mi < messages->len; mi++) {
        GArray *d = g_ptr_array_index(deps, mi);
        waiting[mi] = d->len;
        for (guint k = 0; k < d->len; k++)
            g_array_append_val(g_ptr_array_index(dependents, g_array_index(d, guint, k)), mi);
    }
    guint n_placed = 0, phase_first_round = 0;
    g_autoptr(GQueue) ready = g_queue_new();
    for (guint phase = 0; phase < plan->n_phases; phase++) {
        for (guint mi = 0; mi < messages->len; mi++)
            if (g_array_index(messages, RsMessage, mi).phase == phase && waiting[mi] == 0)
                g_queue_push_tail(ready, GUINT_TO_POINTER(mi));
        while (!g_queue_is_empty(ready)) {
            guint mi = GPOINTER_TO_UINT(g_queue_pop_head(ready));
            RsMessage *m = &g_array_index(messages, RsMessage, mi);
            GArray *d = g_ptr_array_index(deps, mi);
            guint min_round = phase_first_round;
            for (guint k = 0; k < d->len; k++)
                min_round = MAX(min_round,
                                g_array_index(messages, RsMessage, g_array_index(d, guint, k))
                                        .round + 1);
            if (m->src == m->dst) {
                m->round = min_round;
                rp.n_rounds = MAX(rp.n_rounds, min_round + 1);
            } else {
                m->round = round_place(&rp, m->src, m->dst, m->size_bytes, min_round);
            }
            n_placed++;
            GArray *next = g_ptr_array_index(dependents, mi);
            for (guint k = 0; k < next->len; k++) {
                guint nm = g_array_index(next, guint, k);
                /* Dependents in the same phase become ready here; later phases wait. */
                if (--waiting[nm] == 0 && g_array_index(messages, RsMessage, nm).phase == phase)
                    g_queue_push_tail(ready, GUINT_TO_POINTER(nm));
            }
        }
        phase_first_round = rp.n_rounds;
    }
    g_assert(n_placed == messages->len); /* dependencies never form a cycle */
    plan->n_rounds = rp.n_rounds;
    plan->max_round_staging_bytes = rp.max_used_bytes;
    g_hash_table_unref(rp.use);
    g_hash_table_unref(rp.lowest);

    /* The global order: messages by (phase, round, src, dst); transfers follow. */
    g_autofree guint *msg_order = g_new(guint, messages->len);
    g_autoptr(GArray) ordered = g_array_sized_new(FALSE, FALSE, sizeof(RsMessage), messages->len);
    g_array_append_vals(ordered, messages->data, messages->len);
    g_array_sort(ordered, message_order_compare);
    /* first_transfer is unique per message, so it identifies the message. */
    g_autoptr(GHashTable) by_first = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint mi = 0; mi < messages->len; mi++)
        g_hash_table_insert(
            by_first, GUINT_TO_POINTER(g_array_index(messages, RsMessage, mi).first_transfer + 1),
            GUINT_TO_POINTER(mi));
    g_autofree guint *new_message_index = g_new(guint, messages->len);
    for (guint k = 0; k < ordered->len; k++) {
        guint old = GPOINTER_TO_UINT(g_hash_table_lookup(
            by_first, GUINT_TO_POINTER(g_array_index(ordered, RsMessage, k).first_transfer + 1)));
        msg_order[k] = old;
        new_message_index[old] = k;
    }
    g_autofree guint *final_index = g_new(guint, n);
    plan->transfers = g_array_sized_new(FALSE, FALSE, sizeof(RsTransfer), n);
    plan->messages = g_array_sized_new(FALSE, FALSE, sizeof(RsMessage), messages->len);
    plan->message_deps = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint k = 0; k < ordered->len; k++) {
        RsMessage m = g_array_index(ordered, RsMessage, k);
        guint first = plan->transfers->len;
        for (guint t = 0; t < m.n_transfers; t++) {
            final_index[m.first_transfer + t] = plan->transfers->len;
            g_array_append_val(plan->transfers,
                               g_array_index(sorted, RsTransfer, m.first_transfer + t));
        }
        GArray *d = g_ptr_array_index(deps, msg_order[k]);
        m.first_transfer = first;
        m.first_dep = plan->message_deps->len;
        for (guint t = 0; t < d->len; t++) {
            guint nd = new_message_index[g_array_index(d, guint, t)];
            g_array_append_val(plan->message_deps, nd);
        }
        m.n_deps = d->len;
        if (m.n_deps > 1)
            qsort(&g_array_index(plan->message_deps, guint, m.first_dep), m.n_deps,
                  sizeof(guint), compare_uint);
        g_array_append_val(plan->messages, m);
        if (m.src != m.dst)
            plan->n_network_messages++;
    }
    for (guint i = 0; i < n; i++) {
        RsTransfer *tr = &g_array_index(plan->transfers, RsTransfer, i);
        if (tr->depends_on >= 0)
            tr->depends_on = final_index[tr->depends_on];
    }
}

RsPlan *
rs_plan_build(const RsRefit *refit, RsStrategy strategy, GError **error)
{
    return rs_plan_build_full(refit, strategy, NULL, error);
}

/* A fabric of one GPU per node and per NVLink domain, all links alike, covering every rank
 * of @refit. */
static RsTopology *
uniform_topology(const RsRefit *refit, GError **error)
{
    guint32 max_rank = 0;
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        const RsLayout *sides[2] = {t->src, t->dst};
        for (guint s = 0; s < 2; s++) {
            guint n = rs_layout_get_n_ranks(sides[s]);
            if (n > 0)
                max_rank = MAX(max_rank, rs_layout_get_rank(sides[s], n - 1));
        }
    }
    g_autofree char *text = g_strdup_printf(
        "name: uniform\nnodes: %u\ngpus_per_node: 1\n"
        "nvlink:\n  bandwidth: 1 GB/s\nnic:\n  bandwidth: 1 GB/s\n",
        max_rank + 1);
    return rs_topology_load_string(text, "uniform fabric", NULL, error);
}

/* A lower bound on the network transfers of the plan: every destination box (the whole
 * tensor, once per destination rank and once more into the root, for gather-broadcast)
 * arrives in pieces of at most @staging bytes. Refuses, before anything is allocated, a
 * staging bound that would need more than RS_PLAN_MAX_TRANSFERS. */
static gboolean
check_transfer_count(const RsRefit *refit, RsStrategy strategy, guint64 staging,
                     GError **error)
{
    guint64 pieces = 0;
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        guint n_ranks = rs_layout_get_n_ranks(t->dst);
        if (strategy == RS_STRATEGY_GATHER_BROADCAST) {
            guint64 bytes = rs_refit_tensor_get_n_bytes(t, rs_layout_get_n_elems(t->src));
            pieces += (bytes + staging - 1) / staging * ((guint64)n_ranks + 1);
        } else {
            for (guint r = 0; r < n_ranks; r++) {
                guint n_boxes;
                const RsLocalBox *boxes = rs_layout_get_boxes(t->dst, r, &n_boxes);
                for (guint k = 0; k < n_boxes; k++) {
                    guint64 bytes =
                        rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(&boxes[k].box));
                    pieces += (bytes + staging - 1) / staging;
                }
            }
        }
        if (pieces > RS_PLAN_MAX_TRANSFERS) {
            g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_TOO_LARGE,
                        "a staging bound of %" G_GUINT64_FORMAT
                        " B cuts the weights into more than %u transfers (by tensor %s); "
                        "use a larger --staging-bytes",
                        staging, RS_PLAN_MAX_TRANSFERS, t->name);
            return FALSE;
        }
    }
    return TRUE;
}

RsPlan *
rs_plan_build_full(const RsRefit *refit, RsStrategy strategy, const RsPlanOptions *options,
                   GError **error)
{
    g_return_val_if_fail(strategy < RS_STRATEGY_N, NULL);
    if (!check_transfer_count(refit, strategy, rs_plan_options_get_staging_bytes(options),
                              error))
        return NULL;
    RsPlanBuilder b = {g_array_new(FALSE, FALSE, sizeof(RsTransfer)),
                       rs_plan_options_get_staging_bytes(options)};
    gboolean ok = TRUE;
    if (strategy == RS_STRATEGY_NODE_AWARE || strategy == RS_STRATEGY_HIERARCHICAL) {
        RsPlanOptions uniform;
        g_autoptr(RsTopology) flat = NULL;
        if (options == NULL || options->topology == NULL) {
            /* No cluster given: every rank is its own NVLink domain behind one NIC of the
             * same capacity, so the strategies balance bytes over ranks. */
            flat = uniform_topology(refit, error);
            if (flat == NULL) {
                g_array_unref(b.transfers);
                return NULL;
            }
            if (options != NULL)
                uniform = *options;
            else
                rs_plan_options_init(&uniform, NULL);
            uniform.topology = flat;
            options = &uniform;
        }
        ok = rs_plan_balance_build(&b, refit, strategy, options, error);
    } else {
        for (guint i = 0; ok && i < rs_refit_get_n_tensors(refit); i++) {
            const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
            if (strategy == RS_STRATEGY_DIRECT)
                ok = plan_direct_tensor(&b, t, i, error);
            else
                ok = plan_gather_broadcast_tensor(&b, t, i, error);
        }
    }
    if (!ok) {
        g_array_unref(b.transfers);
        return NULL;
    }
    RsPlan *plan = g_new0(RsPlan, 1);
    plan->strategy = strategy;
    plan_finish(plan, b.transfers, options);
    g_array_unref(b.transfers);
    return plan;
}

void
rs_plan_free(RsPlan *plan)
{
    if (plan == NULL)
        return;
    g_array_unref(plan->transfers);
    g_array_unref(plan->messages);
    g_array_unref(plan->message_deps);
    g_free(plan);
}

RsStrategy
rs_plan_get_strategy(const RsPlan *plan)
{
    return plan->strategy;
}

guint
rs_plan_get_n_transfers(const RsPlan *plan)
{
    return plan->transfers->len;
}

const RsTransfer *
rs_plan_get_transfer(const RsPlan *plan, guint index)
{
    g_return_val_if_fail(index < plan->transfers->len, NULL);
    return &g_array_index(plan->transfers, RsTransfer, index);
}

guint
rs_plan_get_n_messages(const RsPlan *plan)
{
    return plan->messages->len;
}

guint
rs_plan_get_n_network_messages(const RsPlan *plan)
{
    return plan->n_network_messages;
}

const RsMessage *
rs_plan_get_message(const RsPlan *plan, guint index)
{
    g_return_val_if_fail(index < plan->messages->len, NULL);
    return &g_array_index(plan->messages, RsMessage, index);
}

const guint *
rs_plan_get_message_deps(const RsPlan *plan, const RsMessage *message)
{
    if (message->n_deps == 0)
        return NULL;
    return &g_array_index(plan->message_deps, guint, message->first_dep);
}

guint
rs_plan_get_n_rounds(const RsPlan *plan)
{
    return plan->n_rounds;
}

guint64
rs_plan_get_max_round_staging_bytes(const RsPlan *plan)
{
    return plan->max_round_staging_bytes;
}

guint
rs_plan_get_n_phases(const RsPlan *plan)
{
    return plan->n_phases;
}

guint64
rs_plan_get_bytes_moved(const RsPlan *plan)
{
    return plan->bytes_moved;
}

guint64
rs_plan_get_local_bytes(const RsPlan *plan)
{
    return plan->local_bytes;
}

const char *
rs_strategy_get_name(RsStrategy strategy)
{
    static const char *const names[RS_STRATEGY_N] = {
        [RS_STRATEGY_GATHER_BROADCAST] = "gather-broadcast",
        [RS_STRATEGY_DIRECT] = "direct",
        [RS_STRATEGY_NODE_AWARE] = "node-aware",
        [RS_STRATEGY_HIERARCHICAL] = "hierarchical",
    };
    g_return_val_if_fail(strategy < RS_STRATEGY_N, "invalid");
    return names[strategy];
}

gboolean
rs_strategy_parse(const char *name, RsStrategy *strategy_out, GError **error)
{
    for (guint s = 0; s < RS_STRATEGY_N; s++) {
        if (strcmp(name, rs_strategy_get_name((RsStrategy)s)) == 0) {
            *strategy_out = (RsStrategy)s;
            return TRUE;
        }
    }
    g_autoptr(GString) list = g_string_new(NULL);
    for (guint s = 0; s < RS_STRATEGY_N; s++)
        g_string_append_printf(list, "%s%s", s ? ", " : "", rs_strategy_get_name((RsStrategy)s));
    g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_UNKNOWN_STRATEGY,
                "unknown strategy \"%s\" (known: %s)", name, list->str);
    return FALSE;
}

/* --- invariant checker --- */

static gboolean
check_fail(GError **error, const RsRefit *refit, const RsTransfer *tr, const char *what)
{
    g_autofree char *box = rs_box_format(&tr->box);
    g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_INVALID,
                "%s: transfer %u -> %u of %s (phase %u): %s",
                rs_refit_get_tensor(refit, tr->tensor_idx)->name, tr->src, tr->dst, box,
                tr->phase, what);
    return FALSE;
}

/* Delivered pieces of one (tensor, dst), sorted by lo[0], must be pairwise disjoint. */
static gint
box_lo0_compare(gconstpointer a, gconstpointer b)
{
    const RsBox *x = a, *y = b;
    return x->n_dims == 0 ? 0 : cmp_i64(x->lo[0], y->lo[0]);
}

static gboolean
pieces_disjoint(GArray *pieces)
{
    g_array_sort(pieces, box_lo0_compare);
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
    gint c = cmp_u64(a->tensor_idx, b->tensor_idx);
    if (c == 0)
        c = cmp_u64(a->dst, b->dst);
    return c != 0 ? c : cmp_u64(a->index, b->index);
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
            rs_box_list_subtract(rest, &f->box);
    }
    return rest->len == 0;
}

gboolean
rs_plan_check(const RsPlan *plan, const RsRefit *refit, GError **error)
{
    guint n = plan->transfers->len;
    g_autoptr(GHashTable) fills = g_hash_table_new_full(u64_mix_hash, g_int64_equal, g_free,
                                                        (GDestroyNotify)g_array_unref);
    for (guint i = 0; i < n; i++) {
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

    g_autoptr(GArray) deliveries = g_array_new(FALSE, FALSE, sizeof(DeliveryKey));
    for (guint i = 0; i < n; i++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, i);
        if (tr->tensor_idx >= rs_refit_get_n_tensors(refit))
            return check_fail(error, refit, tr, "tensor index out of range");
        const RsRefitTensor *t = rs_refit_get_tensor(refit, tr->tensor_idx);
        RsBox full;
        rs_box_init_full(&full, t->n_dims, t->shape);
        guint64 n_elems = rs_box_get_n_elems(&tr->box);
        if (n_elems == 0 || !rs_box_is_within(&tr->box, &full))
            return check_fail(error, refit, tr, "empty box or box outside the tensor");
        if (tr->size_bytes != rs_refit_tensor_get_n_bytes(t, n_elems))
            return check_fail(error, refit, tr, "size_bytes does not match the box");
        if ((tr->flags & RS_TRANSFER_FROM_DESTINATION) && (tr->flags & RS_TRANSFER_FROM_STAGING))
            return check_fail(error, refit, tr,
                              "reads both from staging and from its destination shard");
        if (tr->flags & RS_TRANSFER_FROM_DESTINATION) {
            const RsTransfer *dep =
                tr->depends_on >= 0 ? rs_plan_get_transfer(plan, (guint)tr->depends_on) : NULL;
            if (dep == NULL || dep->dst != tr->src || (dep->flags & RS_TRANSFER_TO_STAGING) ||
                dep->tensor_idx != tr->tensor_idx || dep->phase > tr->phase ||
                !rs_box_is_within(&tr->box, &dep->box))
                return check_fail(error, refit, tr,
                                  "relays bytes its dependency did not deliver to its shard");
        } else if (tr->flags & RS_TRANSFER_FROM_STAGING) {
            if (tr->depends_on >= 0) {
                const RsTransfer *dep = rs_plan_get_transfer(plan, (guint)tr->depends_on);
                if (dep->dst != tr->src || !(dep->flags & RS_TRANSFER_TO_STAGING) ||
                    dep->tensor_idx != tr->tensor_idx || dep->phase > tr->phase ||
                    !rs_box_is_within(&tr->box, &dep->box))
                    return check_fail(error, refit, tr,
                                      "forwards bytes its dependency did not bring");
            } else if (!staging_covers(plan, fills, tr->tensor_idx, tr->src, tr->phase,
                                       &tr->box)) {
                return check_fail(error, refit, tr,
                                  "reads staging that no earlier phase filled");
            }
        } else if (rs_layout_count_held(t->src, tr->src, &tr->box) != n_elems) {
            return check_fail(error, refit, tr, "the source rank does not hold the box");
        }
        if (tr->flags & RS_TRANSFER_TO_STAGING)
            continue;
        if (rs_layout_count_held(t->dst, tr->dst, &tr->box) != n_elems)
            return check_fail(error, refit, tr, "the box is not part of the destination shard");
        if (tr->src != tr->dst && rs_layout_count_held(t->src, tr->dst, &tr->box) != 0)
            return check_fail(error, refit, tr,
                              "sends elements the destination already holds");
        DeliveryKey k = {tr->tensor_idx, tr->dst, i};
        g_array_append_val(deliveries, k);
    }
    g_array_sort(deliveries, delivery_compare);

    /* Walk every (tensor, destination rank) and compare delivered with expected. */
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
                g_array_append_val(pieces, tr->box);
                got += rs_box_get_n_elems(&tr->box);
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
        /* Deliveries to a rank outside the destination layout were rejected above. */
    }
    return TRUE;
}

const RsLocalBox *
rs_transfer_get_side_boxes(const RsRefit *refit, const RsTransfer *tr, gboolean src_side,
                           const RsLocalBox *staging, guint *n_out)
{
    const RsRefitTensor *t = rs_refit_get_tensor(refit, tr->tensor_idx);
    if (tr->flags & (src_side ? RS_TRANSFER_FROM_STAGING : RS_TRANSFER_TO_STAGING)) {
        *n_out = 1;
        return staging;
    }
    gboolean from_dst = src_side && (tr->flags & RS_TRANSFER_FROM_DESTINATION);
    const RsLayout *layout = src_side && !from_dst ? t->src : t->dst;
    gint idx = rs_layout_find_rank(layout, src_side ? tr->src : tr->dst);
    if (idx < 0) {
        *n_out = 0;
        return NULL;
    }
    return rs_layout_get_boxes(layout, (guint)idx, n_out);
}

/* rounds.c — from a strategy's transfers to the plan: transfers sorted into message order,
 * coalesced into buckets of at most the staging bound, message dependencies, rounds (the
 * groups of operations every rank posts together, first fit within the per-rank staging
 * and operation bounds, Kahn's order per phase), then messages and transfers in the global
 * order with depends_on remapped. */
#include "plan/plan-private.h"

#include <stdlib.h>
#include <string.h>

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
    gint c = rs_plan_cmp_u64(a->phase, b->phase);
    if (c == 0)
        c = rs_plan_cmp_u64(a->src, b->src);
    if (c == 0)
        c = rs_plan_cmp_u64(a->dst, b->dst);
    if (c == 0)
        c = rs_plan_cmp_u64(ctx->depth[ia], ctx->depth[ib]);
    if (c == 0)
        c = rs_plan_cmp_u64(transfer_origin(all, a), transfer_origin(all, b));
    if (c == 0)
        c = rs_plan_cmp_u64(a->tensor_idx, b->tensor_idx);
    for (guint d = 0; c == 0 && d < a->box.n_dims; d++)
        c = rs_plan_cmp_i64(a->box.lo[d], b->box.lo[d]);
    return c != 0 ? c : rs_plan_cmp_u64(ia, ib);
}

static gint
compare_uint(gconstpointer a, gconstpointer b)
{
    return rs_plan_cmp_u64(*(const guint *)a, *(const guint *)b);
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
    gint c = rs_plan_cmp_u64(a->phase, b->phase);
    if (c == 0)
        c = rs_plan_cmp_u64(a->round, b->round);
    if (c == 0)
        c = rs_plan_cmp_u64(a->src, b->src);
    if (c == 0)
        c = rs_plan_cmp_u64(a->dst, b->dst);
    return c != 0 ? c : rs_plan_cmp_u64(a->first_transfer, b->first_transfer);
}

/* Stage 1: relay depths, then the transfers sorted into message order in place (their
 * memory is reused: at Kimi-K3 scale a second copy would not fit), applying the
 * permutation cycle by cycle, depends_on remapped. @depth[i] follows transfer i. */
static void
sort_transfers(GArray *raw, guint *depth)
{
    guint n = raw->len;
    g_autofree guint *order = g_new(guint, n);
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
}

/* Stage 2: bytes moved, local bytes and the number of phases. */
static void
count_totals(RsPlan *plan, const GArray *sorted)
{
    for (guint i = 0; i < sorted->len; i++) {
        const RsTransfer *tr = &g_array_index(sorted, RsTransfer, i);
        if (tr->src != tr->dst)
            plan->bytes_moved += tr->size_bytes;
        else
            plan->local_bytes += tr->size_bytes;
        plan->n_phases = MAX(plan->n_phases, tr->phase + 1);
    }
}

/* Stage 3, buckets: consecutive transfers of one (phase, src, dst, depth, origin) while
 * they fit in @staging bytes. Fills @message_of (per transfer). Returns RsMessage. */
static GArray *
coalesce_messages(const GArray *sorted, const guint *depth, guint64 staging, guint *message_of)
{
    guint n = sorted->len;
    GArray *messages = g_array_new(FALSE, FALSE, sizeof(RsMessage));
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
    return messages;
}

/* Stage 4: dependencies between messages; element m lists message ids, sorted and
 * unique. Returns GPtrArray of GArray (guint). */
static GPtrArray *
message_deps(const GArray *messages, const GArray *sorted, const guint *message_of)
{
    GPtrArray *deps = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint mi = 0; mi < messages->len; mi++) {
        const RsMessage *m = &g_array_index(messages, RsMessage, mi);
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
    return deps;
}

/* Places message @mi once its dependencies are placed: after their rounds and after
 * every round of earlier phases (@phase_first_round); local copies need no room. */
static void
place_message(RoundPacker *rp, GArray *messages, GPtrArray *deps, guint mi, guint phase_first_round)
{
    RsMessage *m = &g_array_index(messages, RsMessage, mi);
    GArray *d = g_ptr_array_index(deps, mi);
    guint min_round = phase_first_round;
    for (guint k = 0; k < d->len; k++)
        min_round = MAX(min_round,
                        g_array_index(messages, RsMessage, g_array_index(d, guint, k)).round + 1);
    if (m->src == m->dst) {
        m->round = min_round;
        rp->n_rounds = MAX(rp->n_rounds, min_round + 1);
    } else {
        m->round = round_place(rp, m->src, m->dst, m->size_bytes, min_round);
    }
}

/* Stage 5, rounds. Kahn's algorithm per phase: a message becomes ready when all its
 * dependencies are placed; ready messages are placed in message order. */
static void
place_rounds(RsPlan *plan, GArray *messages, GPtrArray *deps, const RsPlanOptions *options,
             guint64 staging)
{
    RoundPacker rp = {g_hash_table_new_full(rs_plan_u64_hash, g_int64_equal, g_free, g_free),
                      g_hash_table_new(g_direct_hash, g_direct_equal),
                      rs_plan_options_get_max_ops_per_group(options),
                      staging,
                      0,
                      0};
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
            place_message(&rp, messages, deps, mi, phase_first_round);
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
}

/* The message order by (phase, round, src, dst): @msg_order[k] is the old index of the
 * k-th message, @new_message_index its inverse. */
static void
order_messages(const GArray *messages, guint *msg_order, guint *new_message_index)
{
    g_autoptr(GArray) ordered = g_array_sized_new(FALSE, FALSE, sizeof(RsMessage), messages->len);
    g_array_append_vals(ordered, messages->data, messages->len);
    g_array_sort(ordered, message_order_compare);
    /* first_transfer is unique per message, so it identifies the message. */
    g_autoptr(GHashTable) by_first = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint mi = 0; mi < messages->len; mi++)
        g_hash_table_insert(
            by_first, GUINT_TO_POINTER(g_array_index(messages, RsMessage, mi).first_transfer + 1),
            GUINT_TO_POINTER(mi));
    for (guint k = 0; k < ordered->len; k++) {
        guint old = GPOINTER_TO_UINT(g_hash_table_lookup(
            by_first, GUINT_TO_POINTER(g_array_index(ordered, RsMessage, k).first_transfer + 1)));
        msg_order[k] = old;
        new_message_index[old] = k;
    }
}

/* Stage 6, the global order: messages by (phase, round, src, dst); transfers follow, with
 * depends_on and the message dependencies renumbered. */
static void
emit_global_order(RsPlan *plan, const GArray *messages, GPtrArray *deps, const GArray *sorted)
{
    guint n = sorted->len;
    g_autofree guint *msg_order = g_new(guint, messages->len);
    g_autofree guint *new_message_index = g_new(guint, messages->len);
    order_messages(messages, msg_order, new_message_index);
    g_autofree guint *final_index = g_new(guint, n);
    plan->transfers = g_array_sized_new(FALSE, FALSE, sizeof(RsTransfer), n);
    plan->messages = g_array_sized_new(FALSE, FALSE, sizeof(RsMessage), messages->len);
    plan->message_deps = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint k = 0; k < messages->len; k++) {
        RsMessage m = g_array_index(messages, RsMessage, msg_order[k]);
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
            qsort(&g_array_index(plan->message_deps, guint, m.first_dep), m.n_deps, sizeof(guint),
                  compare_uint);
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

void
rs_plan_finish(RsPlan *plan, GArray *raw, const RsPlanOptions *options)
{
    guint64 staging = rs_plan_options_get_staging_bytes(options);
    g_autofree guint *depth = g_new(guint, raw->len);
    sort_transfers(raw, depth);
    count_totals(plan, raw);
    g_autofree guint *message_of = g_new(guint, raw->len);
    g_autoptr(GArray) messages = coalesce_messages(raw, depth, staging, message_of);
    g_autoptr(GPtrArray) deps = message_deps(messages, raw, message_of);
    place_rounds(plan, messages, deps, options, staging);
    emit_global_order(plan, messages, deps, raw);
}

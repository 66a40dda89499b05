/* rounds.c — from a strategy's transfers to the plan: transfers sorted into message order,
 * coalesced into buckets of at most the staging bound, message dependencies, rounds (the
 * groups of operations every rank posts together, first fit within the per-rank staging
 * and operation bounds, Kahn's order per phase), then messages and transfers in the global
 * order with depends_on remapped.
 *
 * Cost: the sort is a least-significant-digit radix sort of packed keys (each transfer's
 * sort fields in as few 64-bit words as their ranges need, its index in the lowest bits),
 * O(n · key bits / 11) for n transfers; the transfers themselves (184 bytes each) move once,
 * in place, cycle by cycle, into the global order at the end, and the plan keeps their
 * array (no second copy: at Kimi-K3 scale it would not fit). Rounds are per-rank arrays
 * indexed by round, kept from the rank's lowest round that may still have room. */
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
    for (guint d = 0; c == 0 && d < a->box->n_dims; d++)
        c = rs_plan_cmp_i64(a->box->lo[d], b->box->lo[d]);
    return c != 0 ? c : rs_plan_cmp_u64(ia, ib);
}

static gint
compare_uint(gconstpointer a, gconstpointer b)
{
    return rs_plan_cmp_u64(*(const guint *)a, *(const guint *)b);
}

/* --- the sort: packed keys, radix sorted --- */

/* Bits needed to write @v (0 for 0). */
static guint
bit_width(guint64 v)
{
    return v == 0 ? 0 : 64 - (guint)__builtin_clzll(v);
}

/* The most key bits packed (three 64-bit words); wider keys fall back to the comparator. */
#define KEY_MAX_WORDS 3

/* The key fields from the least significant: the index, box.lo from the last dim to the
 * first, tensor, origin, depth, dst, src, phase. */
enum { F_IDX, F_TENSOR = 1 + RS_MAX_DIMS, F_ORIGIN, F_DEPTH, F_DST, F_SRC, F_PHASE, F_N };

static inline void
key_put(guint64 *words, guint offset, guint width, guint64 v)
{
    if (width == 0)
        return;
    guint w = offset / 64, shift = offset % 64;
    words[w] |= v << shift;
    if (shift + width > 64)
        words[w + 1] |= v >> (64 - shift);
}

/* Sorts the @n rows of @n_words-word keys (@keys; least significant word first in each
 * row) stably by their bits [@lo_bit, @n_bits), using @tmp (same size) as the second
 * buffer: least significant digit first, 11-bit digits (8 for small arrays) so that a
 * pass scatters into few enough buckets to stay in cache. Returns the buffer that holds
 * the result. */
static guint64 *
radix_sort_keys(guint64 *keys, guint64 *tmp, guint n, guint n_words, guint lo_bit, guint n_bits)
{
    guint digit_bits = n < (1u << 16) ? 8 : 11;
    guint n_buckets = 1u << digit_bits;
    guint64 mask = n_buckets - 1;
    g_autofree guint *count = g_new(guint, n_buckets);
    for (guint bit = lo_bit; bit < n_bits; bit += digit_bits) {
        guint word = bit / 64, shift = bit % 64;
        gboolean straddles = shift + digit_bits > 64 && word + 1 < n_words;
#define DIGIT(row)                                                                                 \
    ((((row)[word] >> shift) | (straddles ? (row)[word + 1] << (64 - shift) : 0)) & mask)
        memset(count, 0, n_buckets * sizeof(guint));
        for (guint i = 0; i < n; i++)
            count[DIGIT(&keys[(gsize)i * n_words])]++;
        gboolean one_bucket = FALSE;
        guint sum = 0;
        for (guint b = 0; b < n_buckets; b++) {
            guint c = count[b];
            one_bucket = one_bucket || c == n;
            count[b] = sum;
            sum += c;
        }
        if (one_bucket)
            continue; /* every key has this digit: the pass would not move anything */
        for (guint i = 0; i < n; i++) {
            const guint64 *row = &keys[(gsize)i * n_words];
            guint64 *to = &tmp[(gsize)count[DIGIT(row)]++ * n_words];
            for (guint k = 0; k < n_words; k++)
                to[k] = row[k];
        }
#undef DIGIT
        guint64 *swap = keys;
        keys = tmp;
        tmp = swap;
    }
    return keys;
}

/* The ranges of the key fields over the transfers, gathered in one pass with the rest of
 * the first scan (key_ranges_add). */
typedef struct {
    guint64 max[F_N];
    guint32 max_origin;       /* the largest rank a relay's bytes came from */
    gboolean has_holder;      /* some transfer sends bytes its sender holds (origin none) */
    gboolean has_negative_lo; /* a box starts below 0: no packed key */
} KeyRanges;

static inline void
key_ranges_add(KeyRanges *r, const RsTransfer *all, const RsTransfer *t, guint depth)
{
    for (guint d = 0; d < t->box->n_dims; d++) {
        r->has_negative_lo = r->has_negative_lo || t->box->lo[d] < 0;
        r->max[F_IDX + 1 + d] = MAX(r->max[F_IDX + 1 + d], (guint64)t->box->lo[d]);
    }
    r->max[F_TENSOR] = MAX(r->max[F_TENSOR], t->tensor_idx);
    if (t->depends_on >= 0)
        r->max_origin = MAX(r->max_origin, all[t->depends_on].src);
    else
        r->has_holder = TRUE;
    r->max[F_DEPTH] = MAX(r->max[F_DEPTH], depth);
    r->max[F_DST] = MAX(r->max[F_DST], t->dst);
    r->max[F_SRC] = MAX(r->max[F_SRC], t->src);
    r->max[F_PHASE] = MAX(r->max[F_PHASE], t->phase);
}

/* The order by packed keys into @order, or FALSE when the fields (their ranges @ranges)
 * need more than KEY_MAX_WORDS words or a box has a negative lower index. */
static gboolean
sort_order_by_keys(const GArray *raw, const guint *depth, const KeyRanges *ranges, guint *order)
{
    guint n = raw->len;
    const RsTransfer *all = (const RsTransfer *)raw->data;
    if (ranges->has_negative_lo)
        return FALSE;
    guint64 max[F_N];
    memcpy(max, ranges->max, sizeof max);
    max[F_IDX] = n > 0 ? n - 1 : 0;
    /* The sender's own bytes take the origin just above every relay's. */
    guint32 holder_origin = ranges->max_origin + 1;
    max[F_ORIGIN] = ranges->has_holder ? holder_origin : ranges->max_origin;
    /* Field offsets: box.lo[d] sits above box.lo[d + 1] (the first dim decides first). */
    guint width[F_N], offset[F_N];
    guint n_bits = 0;
    static const guint placed[F_N] = {
        F_IDX,    F_IDX + 6, F_IDX + 5, F_IDX + 4, F_IDX + 3, F_IDX + 2, F_IDX + 1,
        F_TENSOR, F_ORIGIN,  F_DEPTH,   F_DST,     F_SRC,     F_PHASE,
    };
    G_STATIC_ASSERT(RS_MAX_DIMS == 6);
    for (guint k = 0; k < F_N; k++) {
        guint f = placed[k];
        width[f] = bit_width(max[f]);
        offset[f] = n_bits;
        n_bits += width[f];
    }
    if (n_bits > 64 * KEY_MAX_WORDS)
        return FALSE;
    guint n_words = MAX(1, (n_bits + 63) / 64);
    g_autofree guint64 *keys = g_new0(guint64, (gsize)n * n_words);
    for (guint i = 0; i < n; i++) {
        const RsTransfer *t = &all[i];
        guint64 *row = &keys[(gsize)i * n_words];
        key_put(row, offset[F_IDX], width[F_IDX], i);
        for (guint d = 0; d < t->box->n_dims; d++)
            key_put(row, offset[F_IDX + 1 + d], width[F_IDX + 1 + d], (guint64)t->box->lo[d]);
        key_put(row, offset[F_TENSOR], width[F_TENSOR], t->tensor_idx);
        key_put(row, offset[F_ORIGIN], width[F_ORIGIN],
                t->depends_on >= 0 ? all[t->depends_on].src : holder_origin);
        key_put(row, offset[F_DEPTH], width[F_DEPTH], depth[i]);
        key_put(row, offset[F_DST], width[F_DST], t->dst);
        key_put(row, offset[F_SRC], width[F_SRC], t->src);
        key_put(row, offset[F_PHASE], width[F_PHASE], t->phase);
    }
    g_autofree guint64 *tmp = g_new(guint64, (gsize)n * n_words);
    /* The rows start in index order and the sort is stable: the index bits need no pass. */
    const guint64 *sorted = radix_sort_keys(keys, tmp, n, n_words, width[F_IDX], n_bits);
    guint64 idx_mask =
        width[F_IDX] == 64 ? G_MAXUINT64 : (G_GUINT64_CONSTANT(1) << width[F_IDX]) - 1;
    for (guint k = 0; k < n; k++)
        order[k] = (guint)(sorted[(gsize)k * n_words] & idx_mask);
    return TRUE;
}

/* The packed-key sort with the ranges known, else the comparison sort. */
static void
sort_order(const GArray *raw, const guint *depth, const KeyRanges *ranges, gboolean packed_keys,
           guint *order)
{
    if (packed_keys && sort_order_by_keys(raw, depth, ranges, order))
        return;
    for (guint i = 0; i < raw->len; i++)
        order[i] = i;
    SortContext ctx = {(const RsTransfer *)raw->data, depth};
    g_qsort_with_data(order, (gint)raw->len, sizeof(guint), transfer_compare, &ctx);
}

void
rs_plan_sort_transfer_order(const GArray *raw, const guint *depth, gboolean packed_keys,
                            guint *order)
{
    KeyRanges ranges = {{0}, 0, FALSE, FALSE};
    const RsTransfer *all = (const RsTransfer *)raw->data;
    for (guint i = 0; i < raw->len; i++)
        key_ranges_add(&ranges, all, &all[i], depth[i]);
    sort_order(raw, depth, &ranges, packed_keys, order);
}

/* --- rounds --- */

/* Per (round, rank): how many messages and bytes are placed. */
typedef struct {
    guint ops;
    guint64 bytes;
} RoundUse;

/* One rank's rounds: use[k - head] is round base + k for k in [head, head + len); rounds
 * from base + len up are empty. base is the rank's lowest round that may have room: rounds
 * below it are full and never looked at again. A rank is stuck when, at the start of a
 * phase, a round of an earlier phase below that phase's first round still had room: that
 * round never fills again, so its lowest round stays there and bounds nothing. */
typedef struct {
    RoundUse *use;
    guint head, len, cap;
    guint base;
    gboolean stuck;
} RankRounds;

typedef struct {
    RankRounds *ranks; /* per rank */
    guint n_ranks;
    guint max_ops;
    guint64 max_bytes;
    guint n_rounds;
    guint64 max_used_bytes;
} RoundPacker;

/* The round's use, NULL when nothing is placed in it. */
static inline RoundUse *
round_use(RankRounds *rr, guint round)
{
    if (round < rr->base || round - rr->base >= rr->len)
        return NULL;
    RoundUse *u = &rr->use[rr->head + (round - rr->base)];
    return u->ops > 0 ? u : NULL;
}

static RoundUse *
round_use_create(RankRounds *rr, guint round)
{
    g_assert(round >= rr->base);
    guint k = round - rr->base;
    if (k >= rr->len) {
        if (rr->head + k >= rr->cap) {
            /* Drop the rounds below base first; grow when that is not enough. */
            if (rr->len > 0) /* use is NULL before the first round */
                memmove(rr->use, rr->use + rr->head, rr->len * sizeof(RoundUse));
            rr->head = 0;
            if (k >= rr->cap) {
                rr->cap = MAX(MAX(rr->cap * 2, k + 1), 16);
                rr->use = g_renew(RoundUse, rr->use, rr->cap);
            }
        }
        memset(&rr->use[rr->head + rr->len], 0, (k + 1 - rr->len) * sizeof(RoundUse));
        rr->len = k + 1;
    }
    return &rr->use[rr->head + k];
}

/* Moves @rr's base up to @round, dropping the rounds below. */
static void
rank_rounds_advance(RankRounds *rr, guint round)
{
    if (round <= rr->base)
        return;
    guint drop = MIN(round - rr->base, rr->len);
    rr->head += drop;
    rr->len -= drop;
    if (rr->len == 0)
        rr->head = 0;
    rr->base = round;
}

static gboolean
round_is_full(RoundPacker *rp, RoundUse *u)
{
    return u != NULL && (u->ops >= rp->max_ops || u->bytes >= rp->max_bytes);
}

static gboolean
round_has_room(RoundPacker *rp, guint round, guint32 rank, guint64 bytes)
{
    RoundUse *u = round_use(&rp->ranks[rank], round);
    return u == NULL || (u->ops < rp->max_ops && u->bytes + bytes <= rp->max_bytes);
}

static guint
lowest_round(RoundPacker *rp, guint32 rank)
{
    const RankRounds *rr = &rp->ranks[rank];
    return rr->stuck ? 0 : rr->base;
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
        RankRounds *rr = &rp->ranks[ranks[k]];
        RoundUse *u = round_use_create(rr, r);
        u->ops++;
        u->bytes += bytes;
        rp->max_used_bytes = MAX(rp->max_used_bytes, u->bytes);
        if (rr->stuck)
            continue;
        /* Advance the rank's lowest open round past rounds that are full. */
        guint low = rr->base;
        while (low <= r && round_is_full(rp, round_use(rr, low)))
            low++;
        rank_rounds_advance(rr, low);
    }
    rp->n_rounds = MAX(rp->n_rounds, r + 1);
    return r;
}

/* At the start of a phase whose rounds begin at @first_round: every rank's lowest round
 * moves past the full rounds below @first_round, and a rank whose lowest round stops
 * below it (a round of an earlier phase with room that no message can take any more)
 * is stuck; the rounds below @first_round are dropped. */
static void
round_start_phase(RoundPacker *rp, guint first_round)
{
    for (guint rank = 0; rank < rp->n_ranks; rank++) {
        RankRounds *rr = &rp->ranks[rank];
        if (!rr->stuck) {
            guint low = rr->base;
            while (low < first_round && round_is_full(rp, round_use(rr, low)))
                low++;
            if (low < first_round)
                rr->stuck = TRUE;
        }
        rank_rounds_advance(rr, first_round);
    }
}

/* Stages 1 and 2 in one pass over the transfers (each pass over them reads hundreds of
 * megabytes at scale): relay depths (@depth[i] for raw transfer i), bytes moved, local
 * bytes, the number of phases (sums: any order) and the key ranges; then the message
 * order @order (@order[k]: the raw index of the k-th transfer). */
static void
sort_transfers(RsPlan *plan, const GArray *raw, guint *depth, guint *order)
{
    guint n = raw->len;
    const RsTransfer *all = (const RsTransfer *)raw->data;
    KeyRanges ranges = {{0}, 0, FALSE, FALSE};
    for (guint i = 0; i < n; i++) {
        const RsTransfer *tr = &all[i];
        /* Strategies emit a transfer after the one it depends on. */
        g_assert(tr->depends_on < (gint64)i);
        depth[i] = tr->depends_on >= 0 ? depth[tr->depends_on] + 1 : 0;
        if (tr->src != tr->dst)
            plan->bytes_moved += tr->size_bytes;
        else
            plan->local_bytes += tr->size_bytes;
        plan->n_phases = MAX(plan->n_phases, tr->phase + 1);
        key_ranges_add(&ranges, all, tr, depth[i]);
    }
    sort_order(raw, depth, &ranges, TRUE, order);
}

/* Stage 3, buckets: consecutive transfers (in @order) of one (phase, src, dst, depth,
 * origin) while they fit in @staging bytes. first_transfer counts sorted positions. Fills
 * @message_of (per sorted position) and @dep_pos (per sorted position: the sorted position
 * of its dependency, or -1), @position (per raw index: its sorted position) first. Returns
 * RsMessage. */
static GArray *
coalesce_messages(const GArray *raw, const guint *depth, const guint *order, guint64 staging,
                  guint *position, guint *message_of, gint *dep_pos)
{
    guint n = raw->len;
    const RsTransfer *all = (const RsTransfer *)raw->data;
    for (guint k = 0; k < n; k++)
        position[order[k]] = k;
    GArray *messages = g_array_new(FALSE, FALSE, sizeof(RsMessage));
    for (guint i = 0; i < n;) {
        const RsTransfer *first = &all[order[i]];
        guint32 origin = transfer_origin(all, first);
        guint first_depth = depth[order[i]];
        RsMessage m = {first->src, first->dst, first->phase, 0, i, 0, 0, 0, 0};
        guint j = i;
        for (; j < n; j++) {
            const RsTransfer *tr = &all[order[j]];
            if (tr->src != m.src || tr->dst != m.dst || tr->phase != m.phase ||
                depth[order[j]] != first_depth || transfer_origin(all, tr) != origin)
                break;
            if (m.src != m.dst && j > i && m.size_bytes + tr->size_bytes > staging)
                break;
            m.size_bytes += tr->size_bytes;
            message_of[j] = messages->len;
            dep_pos[j] = tr->depends_on >= 0 ? (gint)position[tr->depends_on] : -1;
        }
        m.n_transfers = j - i;
        g_array_append_val(messages, m);
        i = j;
    }
    return messages;
}

/* Message dependencies in compressed rows: message m's are list[first[m] .. first[m + 1]),
 * sorted and unique. */
typedef struct {
    guint *first; /* n_messages + 1 */
    GArray *list; /* guint */
} DepRows;

static void
dep_rows_clear(DepRows *rows)
{
    g_free(rows->first);
    if (rows->list != NULL)
        g_array_unref(rows->list);
}

/* Stage 4: dependencies between messages. */
static void
message_deps(const GArray *messages, const guint *message_of, const gint *dep_pos, DepRows *deps)
{
    deps->first = g_new(guint, messages->len + 1);
    deps->list = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint mi = 0; mi < messages->len; mi++) {
        const RsMessage *m = &g_array_index(messages, RsMessage, mi);
        guint start = deps->list->len;
        deps->first[mi] = start;
        for (guint k = 0; k < m->n_transfers; k++) {
            gint dp = dep_pos[m->first_transfer + k];
            if (dp < 0)
                continue;
            guint dm = message_of[dp];
            if (dm != mi)
                g_array_append_val(deps->list, dm);
        }
        guint len = deps->list->len - start;
        guint *d = &g_array_index(deps->list, guint, start);
        if (len > 1)
            qsort(d, len, sizeof(guint), compare_uint);
        guint w = 0;
        for (guint k = 0; k < len; k++)
            if (k == 0 || d[k] != d[w - 1])
                d[w++] = d[k];
        g_array_set_size(deps->list, start + w);
    }
    deps->first[messages->len] = deps->list->len;
}

/* Places message @mi once its dependencies are placed: after their rounds and after
 * every round of earlier phases (@phase_first_round); local copies need no room. */
static void
place_message(RoundPacker *rp, GArray *messages, const DepRows *deps, guint mi,
              guint phase_first_round)
{
    RsMessage *m = &g_array_index(messages, RsMessage, mi);
    guint min_round = phase_first_round;
    for (guint k = deps->first[mi]; k < deps->first[mi + 1]; k++)
        min_round =
            MAX(min_round,
                g_array_index(messages, RsMessage, g_array_index(deps->list, guint, k)).round + 1);
    if (m->src == m->dst) {
        m->round = min_round;
        rp->n_rounds = MAX(rp->n_rounds, min_round + 1);
    } else {
        m->round = round_place(rp, m->src, m->dst, m->size_bytes, min_round);
    }
}

/* Stage 5, rounds. Kahn's algorithm per phase: a message becomes ready when all its
 * dependencies are placed; ready messages are placed in message order (a FIFO). The
 * messages of a phase are contiguous (phase leads the sort). */
static void
place_rounds(RsPlan *plan, GArray *messages, const DepRows *deps, const RsPlanOptions *options,
             guint64 staging)
{
    guint n_msg = messages->len;
    guint32 max_rank = 0;
    for (guint mi = 0; mi < n_msg; mi++) {
        const RsMessage *m = &g_array_index(messages, RsMessage, mi);
        max_rank = MAX(max_rank, MAX(m->src, m->dst));
    }
    RoundPacker rp = {g_new0(RankRounds, (gsize)max_rank + 1),
                      max_rank + 1,
                      rs_plan_options_get_max_ops_per_group(options),
                      staging,
                      0,
                      0};
    g_autofree guint *waiting = g_new0(guint, n_msg);
    /* Dependents in compressed rows, each row in increasing message order. */
    g_autofree guint *dependents_first = g_new0(guint, n_msg + 1);
    for (guint k = 0; k < deps->list->len; k++)
        dependents_first[g_array_index(deps->list, guint, k) + 1]++;
    for (guint mi = 0; mi < n_msg; mi++)
        dependents_first[mi + 1] += dependents_first[mi];
    g_autofree guint *dependents = g_new(guint, MAX(deps->list->len, 1));
    g_autofree guint *fill = g_memdup2(dependents_first, (n_msg + 1) * sizeof(guint));
    for (guint mi = 0; mi < n_msg; mi++) {
        waiting[mi] = deps->first[mi + 1] - deps->first[mi];
        for (guint k = deps->first[mi]; k < deps->first[mi + 1]; k++)
            dependents[fill[g_array_index(deps->list, guint, k)]++] = mi;
    }
    g_clear_pointer(&fill, g_free);
    g_autofree guint *ready = g_new(guint, MAX(n_msg, 1));
    guint n_placed = 0, phase_first_round = 0, phase_begin = 0;
    for (guint phase = 0; phase < plan->n_phases; phase++) {
        guint phase_end = phase_begin;
        while (phase_end < n_msg && g_array_index(messages, RsMessage, phase_end).phase == phase)
            phase_end++;
        if (phase > 0)
            round_start_phase(&rp, phase_first_round);
        guint head = 0, tail = 0;
        for (guint mi = phase_begin; mi < phase_end; mi++)
            if (waiting[mi] == 0)
                ready[tail++] = mi;
        while (head < tail) {
            guint mi = ready[head++];
            place_message(&rp, messages, deps, mi, phase_first_round);
            n_placed++;
            for (guint k = dependents_first[mi]; k < dependents_first[mi + 1]; k++) {
                guint nm = dependents[k];
                /* Dependents in the same phase become ready here; later phases wait. */
                if (--waiting[nm] == 0 && g_array_index(messages, RsMessage, nm).phase == phase)
                    ready[tail++] = nm;
            }
        }
        phase_first_round = rp.n_rounds;
        phase_begin = phase_end;
    }
    g_assert(n_placed == n_msg); /* dependencies never form a cycle */
    plan->n_rounds = rp.n_rounds;
    plan->max_round_staging_bytes = rp.max_used_bytes;
    for (guint rank = 0; rank < rp.n_ranks; rank++)
        g_free(rp.ranks[rank].use);
    g_free(rp.ranks);
}

/* The message order by (phase, round, src, dst, first_transfer): @msg_order[k] is the
 * index of the k-th message. first_transfer grows with the message index, so the index
 * stands for it. */
typedef struct {
    guint32 phase, round, src, dst;
    guint index;
} MessageKey;

static gint
message_key_compare(gconstpointer pa, gconstpointer pb)
{
    const MessageKey *a = pa, *b = pb;
    gint c = rs_plan_cmp_u64(a->phase, b->phase);
    if (c == 0)
        c = rs_plan_cmp_u64(a->round, b->round);
    if (c == 0)
        c = rs_plan_cmp_u64(a->src, b->src);
    if (c == 0)
        c = rs_plan_cmp_u64(a->dst, b->dst);
    return c != 0 ? c : rs_plan_cmp_u64(a->index, b->index);
}

static void
order_messages(const GArray *messages, guint *msg_order)
{
    guint n = messages->len;
    g_autofree MessageKey *keys = g_new(MessageKey, MAX(n, 1));
    for (guint mi = 0; mi < n; mi++) {
        const RsMessage *m = &g_array_index(messages, RsMessage, mi);
        keys[mi] = (MessageKey){m->phase, m->round, m->src, m->dst, mi};
    }
    qsort(keys, n, sizeof(MessageKey), message_key_compare);
    for (guint k = 0; k < n; k++)
        msg_order[k] = keys[k].index;
}

/* Moves transfer i of @raw to @dest[i] in place, cycle by cycle; @dest is consumed (every
 * entry ends as its own index). */
#define PERMUTE_PREFETCH 4

static void
permute_in_place(GArray *raw, guint *dest)
{
    for (guint i = 0; i < raw->len; i++) {
        if (dest[i] == i)
            continue;
        /* Follow the cycle starting at i: the transfer at i belongs at dest[i]. */
        RsTransfer moving = g_array_index(raw, RsTransfer, i);
        guint target = dest[i];
        /* The cycle's order is random in memory: fetch a few transfers ahead. */
        guint ahead = target;
        for (guint k = 0; k < PERMUTE_PREFETCH; k++)
            ahead = dest[ahead];
        while (target != i) {
            ahead = dest[ahead];
            const char *p = (const char *)&g_array_index(raw, RsTransfer, ahead);
            __builtin_prefetch(p, 1);
            __builtin_prefetch(p + 64, 1);
            __builtin_prefetch(p + 128, 1);
            __builtin_prefetch(p + sizeof(RsTransfer) - 1, 1);
            RsTransfer next = g_array_index(raw, RsTransfer, target);
            guint next_target = dest[target];
            g_array_index(raw, RsTransfer, target) = moving;
            dest[target] = target;
            moving = next;
            target = next_target;
        }
        g_array_index(raw, RsTransfer, i) = moving;
        dest[i] = i;
    }
}

/* Stage 6, the global order: messages by (phase, round, src, dst); transfers follow, with
 * depends_on and the message dependencies renumbered. @position (per raw index: its
 * sorted position) is consumed. The plan takes @raw. */
static void
emit_global_order(RsPlan *plan, const GArray *messages, const DepRows *deps, GArray *raw,
                  guint *position, const guint *message_of)
{
    guint n = raw->len, n_msg = messages->len;
    g_autofree guint *msg_order = g_new(guint, MAX(n_msg, 1));
    g_autofree guint *new_message_index = g_new(guint, MAX(n_msg, 1));
    order_messages(messages, msg_order);
    for (guint k = 0; k < n_msg; k++)
        new_message_index[msg_order[k]] = k;
    /* The first final position of each (old) message. */
    g_autofree guint *new_first = g_new(guint, MAX(n_msg, 1));
    plan->messages = g_array_sized_new(FALSE, FALSE, sizeof(RsMessage), n_msg);
    plan->message_deps = g_array_sized_new(FALSE, FALSE, sizeof(guint), deps->list->len);
    guint n_placed = 0;
    for (guint k = 0; k < n_msg; k++) {
        guint old = msg_order[k];
        RsMessage m = g_array_index(messages, RsMessage, old);
        new_first[old] = n_placed;
        m.first_transfer = n_placed;
        n_placed += m.n_transfers;
        m.first_dep = plan->message_deps->len;
        for (guint t = deps->first[old]; t < deps->first[old + 1]; t++) {
            guint nd = new_message_index[g_array_index(deps->list, guint, t)];
            g_array_append_val(plan->message_deps, nd);
        }
        m.n_deps = deps->first[old + 1] - deps->first[old];
        if (m.n_deps > 1)
            qsort(&g_array_index(plan->message_deps, guint, m.first_dep), m.n_deps, sizeof(guint),
                  compare_uint);
        g_array_append_val(plan->messages, m);
        if (m.src != m.dst)
            plan->n_network_messages++;
    }
    /* position[i] becomes raw transfer i's final index. */
    for (guint i = 0; i < n; i++) {
        guint p = position[i];
        guint mi = message_of[p];
        position[i] = new_first[mi] + (p - g_array_index(messages, RsMessage, mi).first_transfer);
    }
    for (guint i = 0; i < n; i++) {
        RsTransfer *tr = &g_array_index(raw, RsTransfer, i);
        if (tr->depends_on >= 0)
            tr->depends_on = position[tr->depends_on];
    }
    permute_in_place(raw, position);
    plan->transfers = g_array_ref(raw);
}

void
rs_plan_finish(RsPlan *plan, GArray *raw, const RsPlanOptions *options)
{
    guint64 staging = rs_plan_options_get_staging_bytes(options);
    guint n = raw->len;
    g_autofree guint *depth = g_new(guint, MAX(n, 1));
    g_autofree guint *order = g_new(guint, MAX(n, 1));
    sort_transfers(plan, raw, depth, order);
    g_autofree guint *position = g_new(guint, MAX(n, 1));
    g_autofree guint *message_of = g_new(guint, MAX(n, 1));
    g_autofree gint *dep_pos = g_new(gint, MAX(n, 1));
    g_autoptr(GArray) messages =
        coalesce_messages(raw, depth, order, staging, position, message_of, dep_pos);
    g_clear_pointer(&order, g_free);
    g_clear_pointer(&depth, g_free);
    DepRows deps = {NULL, NULL};
    message_deps(messages, message_of, dep_pos, &deps);
    g_clear_pointer(&dep_pos, g_free);
    place_rounds(plan, messages, &deps, options, staging);
    emit_global_order(plan, messages, &deps, raw, position, message_of);
    dep_rows_clear(&deps);
}

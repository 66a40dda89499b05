/* gpu-cost.c — the GPU-side costs of a plan's messages and rounds; see gpu-cost.h. */
#include "sim/gpu-cost.h"

#include "sim/cost.h"

#include <math.h>

gboolean
rs_gpu_cost_has_costs(const RsTopology *topo)
{
    const RsGpuCosts *c = rs_topology_get_gpu_costs(topo);
    return c->kernel_copy_bytes_per_s > 0 || c->copy_engine_bytes_per_s > 0 ||
           c->h2d_bytes_per_s > 0 || c->kernel_launch_s > 0 || c->stream_sync_s > 0;
}

/* Seconds per byte at @bytes_per_s; 0 (not modelled) when the rate is not given. */
static inline double
s_per_byte(double bytes_per_s)
{
    return bytes_per_s > 0 ? 1.0 / bytes_per_s : 0.0;
}

/* The copy and launch time of one side of transfer @tr (@src_side: the sender's pack,
 * else the receiver's unpack) or, @local, of a local copy (both sides cut). */
static gboolean
side_cost(const RsRefit *refit, const RsTransfer *tr, const RsGpuCosts *c, RsPackMethod method,
          gboolean src_side, gboolean local, double *copy_s, double *fixed_s, GError **error)
{
    const RsRefitTensor *t = rs_refit_get_tensor(refit, tr->tensor_idx);
    double bytes_per_elem = (double)tr->size_bytes / (double)rs_box_get_n_elems(tr->box);
    RsLocalBox staging;
    rs_local_box_init_row_major(&staging, t->n_dims, t->shape);
    guint n_side, n_other = 0;
    const RsLocalBox *side = rs_transfer_get_side_boxes(refit, tr, src_side, &staging, &n_side);
    const RsLocalBox *other =
        local ? rs_transfer_get_side_boxes(refit, tr, FALSE, &staging, &n_other) : NULL;
    if (side == NULL || (local && other == NULL)) {
        guint32 rank = src_side ? tr->src : tr->dst;
        g_set_error(error, RS_COST_ERROR, RS_COST_ERROR_RANK,
                    "%s: transfer %u -> %u: rank %u holds no shard of the layout it %s", t->name,
                    tr->src, tr->dst, rank, src_side && side == NULL ? "reads" : "writes");
        return FALSE;
    }
    double rate_s = method == RS_PACK_COPY_ENGINE ? s_per_byte(c->copy_engine_bytes_per_s)
                                                  : s_per_byte(c->kernel_copy_bytes_per_s);
    for (guint i = 0; i < n_side; i++) {
        RsBox a;
        if (!rs_box_intersect(tr->box, &side[i].box, &a))
            continue;
        guint64 n_elems = rs_box_get_n_elems(&a);
        guint64 run_elems = rs_local_box_get_run_elems(&side[i], &a);
        if (!local) {
            /* In place: NCCL reads (writes) one contiguous run directly. */
            if (method == RS_PACK_KERNEL && run_elems == n_elems)
                continue;
            double runs = (double)(n_elems / run_elems);
            *copy_s += ((double)n_elems * bytes_per_elem + runs * c->strided_row_penalty) * rate_s;
            *fixed_s += c->kernel_launch_s;
            continue;
        }
        for (guint j = 0; j < n_other; j++) {
            RsBox p;
            if (!rs_box_intersect(&a, &other[j].box, &p))
                continue;
            guint64 n = rs_box_get_n_elems(&p);
            double runs = (double)(n / rs_local_box_get_run_elems(&side[i], &p)) +
                          (double)(n / rs_local_box_get_run_elems(&other[j], &p));
            *copy_s += ((double)n * bytes_per_elem + runs * c->strided_row_penalty) * rate_s;
            *fixed_s += c->kernel_launch_s;
        }
    }
    return TRUE;
}

double
rs_gpu_cost_contiguous_local_copy_s(const RsGpuCosts *costs, guint64 bytes)
{
    if (bytes == 0)
        return 0.0;
    return costs->kernel_launch_s + ((double)bytes + 2.0 * costs->strided_row_penalty) *
                                        s_per_byte(costs->kernel_copy_bytes_per_s);
}

/* The dissemination barrier of @topo's GPUs: ceil(log2 P) rounds of its slowest message. */
static double
barrier_s(const RsTopology *topo)
{
    guint n = rs_topology_get_n_gpus(topo);
    if (n < 2)
        return 0.0;
    /* The slowest route: from GPU 0 to the last GPU (another scalable unit or rail when
     * there is one). */
    double latency_s = rs_topology_get_message_latency_s(topo, 0, n - 1);
    return ceil(log2((double)n)) * latency_s;
}

/* Sums per (round, rank) — or (phase, rank) — without hashing: per rank, its keys in
 * increasing order with their values. The plan's messages are in the global order (phase,
 * round, ...) and rounds increase with the phase, so a rank's keys come in order and an
 * access is the rank's last entry or a new one; a key out of order is found by binary
 * search (inserted in place if new). */
typedef struct {
    guint32 key;
    double value;
} KeyValue;

typedef struct {
    GArray **per_rank; /* [n_ranks] of KeyValue, keys increasing */
    guint n_ranks;
} RankTable;

static void
rank_table_init(RankTable *t, const RsPlan *plan)
{
    guint n_ranks = 0;
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        n_ranks = MAX(n_ranks, MAX(msg->src, msg->dst) + 1);
    }
    t->n_ranks = n_ranks;
    t->per_rank = g_new0(GArray *, MAX(n_ranks, 1));
}

static void
rank_table_clear(RankTable *t)
{
    for (guint r = 0; r < t->n_ranks; r++)
        if (t->per_rank[r] != NULL)
            g_array_unref(t->per_rank[r]);
    g_clear_pointer(&t->per_rank, g_free);
    t->n_ranks = 0;
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(RankTable, rank_table_clear)

/* Where @key is or would go in @a (keys increasing): the first entry not below it. */
static guint
lower_bound(const GArray *a, guint32 key)
{
    guint lo = 0, hi = a->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(a, KeyValue, mid).key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The value of (@key, @rank), 0 when new; the pointer holds until the next new key of
 * @rank. */
static double *
slot(RankTable *t, guint32 key, guint32 rank)
{
    g_assert(rank < t->n_ranks);
    GArray *a = t->per_rank[rank];
    if (a == NULL)
        a = t->per_rank[rank] = g_array_new(FALSE, FALSE, sizeof(KeyValue));
    KeyValue kv = {key, 0.0};
    if (a->len == 0 || g_array_index(a, KeyValue, a->len - 1).key < key) {
        g_array_append_val(a, kv);
        return &g_array_index(a, KeyValue, a->len - 1).value;
    }
    guint lo = lower_bound(a, key);
    if (lo == a->len || g_array_index(a, KeyValue, lo).key != key)
        g_array_insert_val(a, lo, kv);
    return &g_array_index(a, KeyValue, lo).value;
}

/* Is (@key, @rank) in @t? */
static gboolean
has_slot(const RankTable *t, guint32 key, guint32 rank)
{
    const GArray *a = t->per_rank[rank];
    if (a == NULL || a->len == 0)
        return FALSE;
    if (g_array_index(a, KeyValue, a->len - 1).key < key)
        return FALSE; /* the usual case: a key after the rank's last */
    guint lo = lower_bound(a, key);
    return lo < a->len && g_array_index(a, KeyValue, lo).key == key;
}

/* The flow model's pre and post times in the order the executor runs the copies on a
 * rank's stream (exec/executor.c post_op packs each send of the rank's window when it
 * posts it; exec/transport-nccl.c then hands what was posted since the last progress call
 * to NCCL as one group on the same stream, and unpacks follow the group; this queue takes
 * one group per plan round, an approximation: exec/'s groups follow its progress calls and
 * its window, not the rounds): a network message's first byte waits for every
 * pack of its round on both of its ranks (both must have launched the group), and its
 * unpack for the unpacks of the receiver's earlier messages of the round. Local copies
 * keep their own time. */
static void
stream_order(const RsPlan *plan, RsGpuCostTimes *out)
{
    g_auto(RankTable) packs = {0};
    g_auto(RankTable) unpacks = {0};
    rank_table_init(&packs, plan);
    rank_table_init(&unpacks, plan);
    for (guint m = 0; m < out->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src != msg->dst)
            *slot(&packs, msg->round, msg->src) += out->pre_copy_s[m] + out->pre_fixed_s[m];
    }
    for (guint m = 0; m < out->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src == msg->dst) {
            out->pre_s[m] = out->pre_copy_s[m] + out->pre_fixed_s[m];
            out->post_s[m] = out->post_copy_s[m] + out->post_fixed_s[m];
            continue;
        }
        double pack_src = *slot(&packs, msg->round, msg->src);
        out->pre_s[m] = MAX(pack_src, *slot(&packs, msg->round, msg->dst));
        /* Messages are in the global order (phase, round, src, dst): the receiver's earlier
         * unpacks of the round come first. */
        double *queued = slot(&unpacks, msg->round, msg->dst);
        *queued += out->post_copy_s[m] + out->post_fixed_s[m];
        out->post_s[m] = *queued;
    }
}

void
rs_gpu_cost_queue_rounds(const RsPlan *plan, RsGpuCostTimes *times)
{
    g_return_if_fail(times->n_messages == rs_plan_get_n_messages(plan));
    g_auto(RankTable) packs = {0};
    rank_table_init(&packs, plan);
    for (guint m = 0; m < times->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src != msg->dst)
            *slot(&packs, msg->round, msg->src) += times->pre_copy_s[m] + times->pre_fixed_s[m];
    }
    /* Each rank's (round, rank) sums in plan order (phase, round, …): a running sum per
     * rank, restarted at each phase (phases follow one another in the flow model). */
    g_auto(RankTable) queued = {0};
    g_auto(RankTable) running = {0};
    rank_table_init(&queued, plan);
    rank_table_init(&running, plan);
    for (guint m = 0; m < times->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src == msg->dst)
            continue;
        const guint32 ranks[2] = {msg->src, msg->dst};
        for (guint k = 0; k < 2; k++) {
            if (has_slot(&queued, msg->round, ranks[k]))
                continue;
            /* running: (phase, rank) → [last round's sum] */
            double pack = *slot(&packs, msg->round, ranks[k]);
            double *sum = slot(&running, msg->phase, ranks[k]);
            *sum += pack + times->round_fixed_s;
            *slot(&queued, msg->round, ranks[k]) = *sum;
        }
        double queued_src = *slot(&queued, msg->round, msg->src);
        times->pre_s[m] = MAX(queued_src, *slot(&queued, msg->round, msg->dst));
    }
}

void
rs_gpu_cost_queue_chunks(const RsPlan *plan, guint64 chunk_bytes, RsGpuCostTimes *times)
{
    g_return_if_fail(times->n_messages == rs_plan_get_n_messages(plan));
    /* (phase, rank) → the rank's stream: the first-chunk packs and round costs queued so
     * far in the phase. */
    g_auto(RankTable) stream = {0};
    rank_table_init(&stream, plan);
    /* Plan order (phase, round, src, dst, …): a rank's sends of one round are contiguous,
     * so a round starts for it where (round, src) changes; each costs its launch and
     * synchronisation once. */
    guint32 counted_round = G_MAXUINT32, counted_src = G_MAXUINT32;
    for (guint m = 0; m < times->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src == msg->dst || msg->size_bytes == 0)
            continue; /* local copies keep their own time; exec/ posts nothing for 0 bytes */
        /* The first chunk's share of the pack, the last (shorter) chunk's of the unpack. */
        gboolean chunked = chunk_bytes > 0 && msg->size_bytes > chunk_bytes;
        double size = (double)msg->size_bytes;
        double share = chunked ? (double)chunk_bytes / size : 1.0;
        guint64 last_bytes = chunked ? msg->size_bytes - (msg->size_bytes - 1) / chunk_bytes *
                                                             chunk_bytes
                                     : msg->size_bytes;
        double last_share = (double)last_bytes / size;
        double *queued = slot(&stream, msg->phase, msg->src);
        if (msg->round != counted_round || msg->src != counted_src) {
            *queued += times->round_fixed_s;
            counted_round = msg->round;
            counted_src = msg->src;
        }
        *queued += share * (times->pre_copy_s[m] + times->pre_fixed_s[m]);
        times->pre_s[m] = *queued;
        times->post_s[m] = last_share * (times->post_copy_s[m] + times->post_fixed_s[m]);
    }
}

RsGpuCostTimes *
rs_gpu_cost_times_new(guint n_messages)
{
    guint n = MAX(n_messages, 1);
    RsGpuCostTimes *t = g_new0(RsGpuCostTimes, 1);
    t->n_messages = n_messages;
    t->pre_copy_s = g_new0(double, n);
    t->pre_fixed_s = g_new0(double, n);
    t->post_copy_s = g_new0(double, n);
    t->post_fixed_s = g_new0(double, n);
    t->pre_s = g_new0(double, n);
    t->post_s = g_new0(double, n);
    return t;
}

RsGpuCostTimes *
rs_gpu_cost_compute(const RsPlan *plan, const RsRefit *refit, const RsTopology *topo,
                    GError **error)
{
    const RsGpuCosts *c = rs_topology_get_gpu_costs(topo);
    RsPackMethod method = rs_plan_get_pack_method(plan);
    guint n = rs_plan_get_n_messages(plan);
    g_autoptr(RsGpuCostTimes) out = rs_gpu_cost_times_new(n);
    if (!rs_gpu_cost_has_costs(topo) || method == RS_PACK_NONE)
        return g_steal_pointer(&out);
    out->round_fixed_s = c->kernel_launch_s + c->stream_sync_s;
    if (rs_plan_get_round_sync(plan) == RS_ROUND_SYNC_WORLD_BARRIER)
        out->round_fixed_s += barrier_s(topo);
    for (guint m = 0; m < n; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        gboolean local = msg->src == msg->dst;
        if (method == RS_PACK_HOST_H2D && !local) {
            out->pre_copy_s[m] += (double)msg->size_bytes * s_per_byte(c->h2d_bytes_per_s);
            out->pre_fixed_s[m] += c->kernel_launch_s;
        }
        RsPackMethod side_method = method == RS_PACK_HOST_H2D ? RS_PACK_KERNEL : method;
        for (guint k = 0; k < msg->n_transfers; k++) {
            const RsTransfer *tr = rs_plan_get_transfer(plan, msg->first_transfer + k);
            if (local) {
                if (!side_cost(refit, tr, c, side_method, TRUE, TRUE, &out->pre_copy_s[m],
                               &out->pre_fixed_s[m], error))
                    return NULL;
                continue;
            }
            if ((method != RS_PACK_HOST_H2D &&
                 !side_cost(refit, tr, c, side_method, TRUE, FALSE, &out->pre_copy_s[m],
                            &out->pre_fixed_s[m], error)) ||
                !side_cost(refit, tr, c, side_method, FALSE, FALSE, &out->post_copy_s[m],
                           &out->post_fixed_s[m], error))
                return NULL;
        }
    }
    stream_order(plan, out);
    return g_steal_pointer(&out);
}

void
rs_gpu_cost_times_free(RsGpuCostTimes *times)
{
    if (times == NULL)
        return;
    g_free(times->pre_copy_s);
    g_free(times->pre_fixed_s);
    g_free(times->post_copy_s);
    g_free(times->post_fixed_s);
    g_free(times->pre_s);
    g_free(times->post_s);
    g_free(times);
}

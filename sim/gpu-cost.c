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
    double bytes_per_elem = (double)tr->size_bytes / (double)rs_box_get_n_elems(&tr->box);
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
        if (!rs_box_intersect(&tr->box, &side[i].box, &a))
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

/* (round, rank) as one key. */
static inline guint64
round_rank_key(guint32 round, guint32 rank)
{
    return ((guint64)round << 32) | rank;
}

static double *
slot(GHashTable *table, guint32 round, guint32 rank)
{
    guint64 key = round_rank_key(round, rank);
    double *v = g_hash_table_lookup(table, &key);
    if (v == NULL) {
        guint64 *k = g_new(guint64, 1);
        *k = key;
        v = g_new0(double, 1);
        g_hash_table_insert(table, k, v);
    }
    return v;
}

/* The flow model's pre and post times in the order the executor runs the copies on a
 * rank's stream (exec/executor.c post_op packs each send of the rank's window when it
 * posts it; exec/transport-nccl.c then hands the round to NCCL as one group on the same
 * stream, and unpacks follow the group): a network message's first byte waits for every
 * pack of its round on both of its ranks (both must have launched the group), and its
 * unpack for the unpacks of the receiver's earlier messages of the round. Local copies
 * keep their own time. */
static void
stream_order(const RsPlan *plan, RsGpuCostTimes *out)
{
    g_autoptr(GHashTable) packs =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    g_autoptr(GHashTable) unpacks =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    for (guint m = 0; m < out->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src != msg->dst)
            *slot(packs, msg->round, msg->src) += out->pre_copy_s[m] + out->pre_fixed_s[m];
    }
    for (guint m = 0; m < out->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src == msg->dst) {
            out->pre_s[m] = out->pre_copy_s[m] + out->pre_fixed_s[m];
            out->post_s[m] = out->post_copy_s[m] + out->post_fixed_s[m];
            continue;
        }
        out->pre_s[m] = MAX(*slot(packs, msg->round, msg->src), *slot(packs, msg->round, msg->dst));
        /* Messages are in the global order (phase, round, src, dst): the receiver's earlier
         * unpacks of the round come first. */
        double *queued = slot(unpacks, msg->round, msg->dst);
        *queued += out->post_copy_s[m] + out->post_fixed_s[m];
        out->post_s[m] = *queued;
    }
}

void
rs_gpu_cost_queue_rounds(const RsPlan *plan, RsGpuCostTimes *times)
{
    g_return_if_fail(times->n_messages == rs_plan_get_n_messages(plan));
    g_autoptr(GHashTable) packs =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    for (guint m = 0; m < times->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src != msg->dst)
            *slot(packs, msg->round, msg->src) += times->pre_copy_s[m] + times->pre_fixed_s[m];
    }
    /* Each rank's (round, rank) sums in plan order (phase, round, …): a running sum per
     * rank, restarted at each phase (phases follow one another in the flow model). */
    g_autoptr(GHashTable) queued =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    g_autoptr(GHashTable) running =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    for (guint m = 0; m < times->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src == msg->dst)
            continue;
        const guint32 ranks[2] = {msg->src, msg->dst};
        for (guint k = 0; k < 2; k++) {
            guint64 key = round_rank_key(msg->round, ranks[k]);
            if (g_hash_table_contains(queued, &key))
                continue;
            /* running: (phase, rank) → [last round's sum] */
            double *sum = slot(running, msg->phase, ranks[k]);
            *sum += *slot(packs, msg->round, ranks[k]) + times->round_fixed_s;
            *slot(queued, msg->round, ranks[k]) = *sum;
        }
        times->pre_s[m] =
            MAX(*slot(queued, msg->round, msg->src), *slot(queued, msg->round, msg->dst));
    }
}

RsGpuCostTimes *
rs_gpu_cost_compute(const RsPlan *plan, const RsRefit *refit, const RsTopology *topo,
                    GError **error)
{
    const RsGpuCosts *c = rs_topology_get_gpu_costs(topo);
    RsPackMethod method = rs_plan_get_pack_method(plan);
    guint n = rs_plan_get_n_messages(plan);
    g_autoptr(RsGpuCostTimes) out = g_new0(RsGpuCostTimes, 1);
    out->n_messages = n;
    out->pre_copy_s = g_new0(double, MAX(n, 1));
    out->pre_fixed_s = g_new0(double, MAX(n, 1));
    out->post_copy_s = g_new0(double, MAX(n, 1));
    out->post_fixed_s = g_new0(double, MAX(n, 1));
    out->pre_s = g_new0(double, MAX(n, 1));
    out->post_s = g_new0(double, MAX(n, 1));
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

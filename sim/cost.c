/* cost.c — the first-order (bottleneck) estimate of a plan; see cost.h. */
#include "sim/cost.h"

#include "sim/gpu-cost.h"

#include <math.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-cost-error-quark, rs_cost_error)
/* clang-format on */

static gboolean
check_rank(const RsTopology *topo, guint32 rank, GError **error)
{
    if (rank >= rs_topology_get_n_gpus(topo)) {
        g_set_error(error, RS_COST_ERROR, RS_COST_ERROR_RANK,
                    "rank %u is not a GPU of topology %s (%u GPUs)", rank,
                    rs_topology_get_name(topo), rs_topology_get_n_gpus(topo));
        return FALSE;
    }
    return TRUE;
}

/* Adds the copy time of transfer @tr to its destination rank and node. */
static gboolean
charge_copies(const RsRefit *refit, const RsTopology *topo, const RsTransfer *tr,
              double *rank_one_s, double *node_s, GError **error)
{
    const RsRefitTensor *t = rs_refit_get_tensor(refit, tr->tensor_idx);
    double bytes_per_elem = (double)tr->size_bytes / (double)rs_box_get_n_elems(tr->box);
    RsLocalBox staging;
    rs_local_box_init_row_major(&staging, t->n_dims, t->shape);
    guint n_src, n_dst;
    const RsLocalBox *src = rs_transfer_get_side_boxes(refit, tr, TRUE, &staging, &n_src);
    const RsLocalBox *dst = rs_transfer_get_side_boxes(refit, tr, FALSE, &staging, &n_dst);
    if (src == NULL || dst == NULL) {
        g_set_error(error, RS_COST_ERROR, RS_COST_ERROR_RANK,
                    "%s: transfer %u -> %u: rank %u holds no shard of the layout it %s", t->name,
                    tr->src, tr->dst, src == NULL ? tr->src : tr->dst,
                    src == NULL ? "reads" : "writes");
        return FALSE;
    }
    guint node = rs_topology_get_node(topo, tr->dst);
    gboolean local = tr->src == tr->dst;
    for (guint i = 0; i < n_src; i++) {
        RsBox a;
        if (!rs_box_intersect(tr->box, &src[i].box, &a))
            continue;
        for (guint j = 0; j < n_dst; j++) {
            RsBox p;
            if (!rs_box_intersect(&a, &dst[j].box, &p))
                continue;
            guint64 read_run = MAX((guint64)((double)rs_local_box_get_run_elems(&src[i], &p) *
                                             bytes_per_elem),
                                   1);
            guint64 write_run = MAX((guint64)((double)rs_local_box_get_run_elems(&dst[j], &p) *
                                              bytes_per_elem),
                                    1);
            double bytes = (double)rs_box_get_n_elems(&p) * bytes_per_elem;
            rank_one_s[tr->dst] += bytes * rs_topology_get_copy_s_per_byte(
                                              topo, read_run, write_run, local, RS_COPY_ONE_RANK);
            node_s[node] += bytes * rs_topology_get_copy_s_per_byte(topo, read_run, write_run,
                                                                    local, RS_COPY_NODE);
        }
    }
    return TRUE;
}

/* The work arrays of one estimate: per link and per GPU, per phase or over all phases. */
typedef struct {
    const RsPlan *plan;
    const RsRefit *refit; /* (nullable) */
    const RsTopology *topo;
    guint n_links, n_gpus, n_nodes;
    gboolean copies;           /* charge copies: a refit and a copy section */
    guint64 *phase_link_bytes; /* [n_links] this phase */
    guint64 *total_link_bytes; /* [n_links] all phases */
    double *rank_latency_s;    /* [n_gpus] this phase */
    guint64 *received_bytes;   /* [n_gpus] all phases */
    double *rank_copy_s;       /* [n_gpus] this phase, with copies */
    double *node_copy_s;       /* [n_nodes] this phase, with copies */
    RsGpuCostTimes *gpu;       /* (nullable) GPU-side costs: a refit and GPU costs */
    double *rank_gpu_copy_s;   /* [n_gpus] this phase, with GPU costs */
    guint32 *rank_last_round;  /* [n_gpus] the last round a rank took part in, + 1 */
    double chunk_overhead_s;   /* per chunk operation (software.chunk_overhead) */
    guint64 chunk_bytes;       /* the executor's chunk; 0: the topology's chunk_size */
} Estimate;

static void
estimate_init(Estimate *e, const RsPlan *plan, const RsRefit *refit, const RsTopology *topo)
{
    memset(e, 0, sizeof *e);
    e->plan = plan;
    e->refit = refit;
    e->topo = topo;
    e->n_links = rs_topology_get_n_links(topo);
    e->n_gpus = rs_topology_get_n_gpus(topo);
    e->n_nodes = rs_topology_get_n_nodes(topo);
    guint n_copy_rates = 0;
    rs_topology_get_copy_rates(topo, &n_copy_rates);
    e->copies = refit != NULL && n_copy_rates > 0;
    e->phase_link_bytes = g_new0(guint64, e->n_links);
    e->total_link_bytes = g_new0(guint64, e->n_links);
    e->rank_latency_s = g_new0(double, e->n_gpus);
    e->received_bytes = g_new0(guint64, e->n_gpus);
    e->rank_copy_s = e->copies ? g_new0(double, e->n_gpus) : NULL;
    e->node_copy_s = e->copies ? g_new0(double, e->n_nodes) : NULL;
    e->rank_gpu_copy_s = g_new0(double, e->n_gpus);
    e->rank_last_round = g_new0(guint32, e->n_gpus);
}

static void
estimate_clear(Estimate *e)
{
    g_free(e->phase_link_bytes);
    g_free(e->total_link_bytes);
    g_free(e->rank_latency_s);
    g_free(e->received_bytes);
    g_free(e->rank_copy_s);
    g_free(e->node_copy_s);
    rs_gpu_cost_times_free(e->gpu);
    g_free(e->rank_gpu_copy_s);
    g_free(e->rank_last_round);
}

/* A rank's round fixed cost, once per round it takes part in. */
static void
charge_round(Estimate *e, guint32 rank, guint32 round)
{
    if (e->rank_last_round[rank] == round + 1)
        return;
    e->rank_last_round[rank] = round + 1;
    e->rank_latency_s[rank] += e->gpu->round_fixed_s;
}

/* Stage 1, per message of a phase: its copies, the bytes on its route's links, where they
 * go (NVLink or network), and its fixed costs on both ranks. */
static gboolean
add_message(Estimate *e, const RsMessage *msg, RsCostEstimate *out, GError **error)
{
    const RsTopology *topo = e->topo;
    if (!check_rank(topo, msg->src, error) || !check_rank(topo, msg->dst, error))
        return FALSE;
    for (guint k = 0; e->copies && k < msg->n_transfers; k++)
        if (!charge_copies(e->refit, topo, rs_plan_get_transfer(e->plan, msg->first_transfer + k),
                           e->rank_copy_s, e->node_copy_s, error))
            return FALSE;
    if (e->gpu != NULL) {
        guint m = (guint)(msg - rs_plan_get_message(e->plan, 0));
        e->rank_gpu_copy_s[msg->src] += e->gpu->pre_copy_s[m];
        e->rank_latency_s[msg->src] += e->gpu->pre_fixed_s[m];
        e->rank_gpu_copy_s[msg->dst] += e->gpu->post_copy_s[m];
        e->rank_latency_s[msg->dst] += e->gpu->post_fixed_s[m];
        if (msg->src != msg->dst) {
            charge_round(e, msg->src, msg->round);
            charge_round(e, msg->dst, msg->round);
        }
    }
    if (msg->src == msg->dst)
        return TRUE;
    guint32 route[RS_TOPOLOGY_MAX_ROUTE];
    guint n_route = rs_topology_route(topo, msg->src, msg->dst, route);
    for (guint k = 0; k < n_route; k++)
        e->phase_link_bytes[route[k]] += msg->size_bytes;
    e->received_bytes[msg->dst] += msg->size_bytes;
    if (rs_topology_get_nvlink_domain(topo, msg->src) ==
        rs_topology_get_nvlink_domain(topo, msg->dst))
        out->bytes_nvlink += msg->size_bytes;
    else
        out->bytes_network += msg->size_bytes;
    double latency_s = rs_topology_get_message_latency_s(topo, msg->src, msg->dst);
    /* The executor's cost per chunk operation, on both ranks (each posts every chunk). */
    if (e->chunk_overhead_s > 0)
        latency_s += e->chunk_overhead_s *
                     (double)rs_topology_count_chunks(topo, msg->size_bytes, e->chunk_bytes);
    e->rank_latency_s[msg->src] += latency_s;
    e->rank_latency_s[msg->dst] += latency_s;
    return TRUE;
}

/* Stage 2, the phase's busiest link (and the busiest link of any phase so far); whether
 * it is an NVLink link in *@nvlink. */
static double
phase_link_time(Estimate *e, RsCostEstimate *out, gboolean *nvlink)
{
    double phase_link_s = 0.0;
    *nvlink = FALSE;
    for (guint32 l = 0; l < e->n_links; l++) {
        if (e->phase_link_bytes[l] == 0)
            continue;
        e->total_link_bytes[l] += e->phase_link_bytes[l];
        const RsLink *link = rs_topology_get_link(e->topo, l);
        double busy_s = (double)e->phase_link_bytes[l] / rs_link_get_capacity_bytes_per_s(link);
        if (busy_s > phase_link_s) {
            phase_link_s = busy_s;
            *nvlink = link->kind == RS_LINK_NVLINK_EGRESS || link->kind == RS_LINK_NVLINK_INGRESS;
        }
        /* The busiest link of the whole refit (its bytes over every phase): a link's total
         * only grows, so the largest total is the last one recorded. A plan of many phases
         * (m2n's calls) named one phase's bytes before. */
        double total_busy_s =
            (double)e->total_link_bytes[l] / rs_link_get_capacity_bytes_per_s(link);
        if (total_busy_s > out->busiest_link_s) {
            out->busiest_link_s = total_busy_s;
            out->busiest_link = l;
            out->busiest_link_bytes = e->total_link_bytes[l];
        }
    }
    return phase_link_s;
}

/* Stage 3, the phase's time: the larger of its link and copy times, plus its busiest
 * rank's fixed costs. */
static void
add_phase_time(const Estimate *e, double phase_link_s, gboolean nvlink, RsCostEstimate *out)
{
    double phase_latency_s = 0.0;
    for (guint g = 0; g < e->n_gpus; g++)
        phase_latency_s = MAX(phase_latency_s, e->rank_latency_s[g]);
    double phase_copy_s = 0.0;
    for (guint g = 0; e->copies && g < e->n_gpus; g++)
        phase_copy_s = MAX(phase_copy_s, e->rank_copy_s[g]);
    for (guint n = 0; e->copies && n < e->n_nodes; n++)
        phase_copy_s = MAX(phase_copy_s, e->node_copy_s[n]);
    /* The GPU's pack and unpack run on the rank's stream before and after its transfers
     * (exec/executor.c, exec/transport-nccl.c): they add to the phase. */
    double phase_gpu_copy_s = 0.0;
    for (guint g = 0; e->gpu != NULL && g < e->n_gpus; g++)
        phase_gpu_copy_s = MAX(phase_gpu_copy_s, e->rank_gpu_copy_s[g]);
    out->link_s += phase_link_s;
    out->copy_s += phase_copy_s + phase_gpu_copy_s;
    out->latency_s += phase_latency_s;
    out->copy_bound_phases += phase_copy_s > phase_link_s;
    out->predicted_s += MAX(phase_link_s, phase_copy_s) + phase_gpu_copy_s + phase_latency_s;
    out->gpu_copy_s += phase_gpu_copy_s;
    if (phase_copy_s > phase_link_s)
        out->gpu_copy_s += phase_copy_s;
    else if (nvlink)
        out->nvlink_s += phase_link_s;
    else
        out->network_s += phase_link_s;
    out->fixed_s += phase_latency_s;
}

/* Stage 4, over all phases: the GPU receiving most and the NIC sending most. */
static void
busiest_gpus(const Estimate *e, RsCostEstimate *out)
{
    for (guint32 g = 0; g < e->n_gpus; g++) {
        /* Bytes it receives as destination: with PXN a GPU's NVLink ingress also carries
         * traffic it forwards to its NIC for other GPUs. */
        guint64 in = e->received_bytes[g];
        guint64 nic_out =
            e->total_link_bytes[rs_topology_get_gpu_link(e->topo, g, RS_LINK_NIC_EGRESS)];
        if (in > out->max_gpu_ingress_bytes) {
            out->max_gpu_ingress_bytes = in;
            out->max_gpu_ingress_gpu = g;
        }
        if (nic_out > out->max_nic_egress_bytes) {
            out->max_nic_egress_bytes = nic_out;
            out->max_nic_egress_gpu = g;
        }
    }
}

static gboolean
estimate(const RsPlan *plan, const RsRefit *refit, const RsTopology *topo, guint64 chunk_bytes,
         RsCostEstimate *out, GError **error)
{
    memset(out, 0, sizeof *out);
    out->n_phases = rs_plan_get_n_phases(plan);
    out->bytes_moved = rs_plan_get_bytes_moved(plan);
    out->local_bytes = rs_plan_get_local_bytes(plan);
    out->n_messages = rs_plan_get_n_network_messages(plan);
    Estimate e;
    estimate_init(&e, plan, refit, topo);
    e.chunk_overhead_s = rs_topology_get_chunk_overhead_s(topo, NULL);
    e.chunk_bytes = chunk_bytes;
    gboolean ok = TRUE;
    if (refit != NULL && rs_gpu_cost_has_costs(topo)) {
        for (guint32 m = 0; m < rs_plan_get_n_messages(plan); m++) {
            const RsMessage *msg = rs_plan_get_message(plan, m);
            if (!check_rank(topo, msg->src, error) || !check_rank(topo, msg->dst, error)) {
                estimate_clear(&e);
                return FALSE;
            }
        }
        e.gpu = rs_gpu_cost_compute(plan, refit, topo, error);
        if (e.gpu == NULL) {
            estimate_clear(&e);
            return FALSE;
        }
    }
    guint n_messages = rs_plan_get_n_messages(plan);
    guint m = 0;
    for (guint phase = 0; ok && phase < out->n_phases; phase++) {
        memset(e.phase_link_bytes, 0, e.n_links * sizeof *e.phase_link_bytes);
        memset(e.rank_latency_s, 0, e.n_gpus * sizeof *e.rank_latency_s);
        memset(e.rank_gpu_copy_s, 0, e.n_gpus * sizeof *e.rank_gpu_copy_s);
        if (e.copies) {
            memset(e.rank_copy_s, 0, e.n_gpus * sizeof *e.rank_copy_s);
            memset(e.node_copy_s, 0, e.n_nodes * sizeof *e.node_copy_s);
        }
        /* Messages are sorted by phase first. */
        for (; ok && m < n_messages; m++) {
            const RsMessage *msg = rs_plan_get_message(plan, m);
            if (msg->phase != phase)
                break;
            ok = add_message(&e, msg, out, error);
        }
        if (ok) {
            gboolean nvlink;
            double phase_link_s = phase_link_time(&e, out, &nvlink);
            add_phase_time(&e, phase_link_s, nvlink, out);
        }
    }
    if (ok)
        busiest_gpus(&e, out);
    estimate_clear(&e);
    return ok;
}

gboolean
rs_cost_estimate(const RsPlan *plan, const RsTopology *topo, RsCostEstimate *out,
                 GError **error)
{
    return estimate(plan, NULL, topo, 0, out, error);
}

gboolean
rs_cost_estimate_full(const RsPlan *plan, const RsRefit *refit, const RsTopology *topo,
                      RsCostEstimate *out, GError **error)
{
    return estimate(plan, refit, topo, 0, out, error);
}

gboolean
rs_cost_estimate_chunked(const RsPlan *plan, const RsRefit *refit, const RsTopology *topo,
                         guint64 chunk_bytes, RsCostEstimate *out, GError **error)
{
    return estimate(plan, refit, topo, chunk_bytes, out, error);
}

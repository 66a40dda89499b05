/* cost.c — first-order (bottleneck) estimate and cut-based lower bound; see cost.h. */
#include "sim/cost.h"

#include <string.h>

G_DEFINE_QUARK(rs-cost-error-quark, rs_cost_error)

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

gboolean
rs_cost_estimate(const RsPlan *plan, const RsTopology *topo, RsCostEstimate *out,
                 GError **error)
{
    memset(out, 0, sizeof *out);
    guint n_links = rs_topology_get_n_links(topo);
    guint n_gpus = rs_topology_get_n_gpus(topo);
    g_autofree guint64 *phase_link_bytes = g_new0(guint64, n_links);
    g_autofree guint64 *total_link_bytes = g_new0(guint64, n_links);
    g_autofree double *rank_latency_s = g_new0(double, n_gpus);
    out->n_phases = rs_plan_get_n_phases(plan);
    out->bytes_moved = rs_plan_get_bytes_moved(plan);
    out->local_bytes = rs_plan_get_local_bytes(plan);
    out->n_messages = rs_plan_get_n_network_messages(plan);

    guint n_messages = rs_plan_get_n_messages(plan);
    guint m = 0;
    for (guint phase = 0; phase < out->n_phases; phase++) {
        memset(phase_link_bytes, 0, n_links * sizeof *phase_link_bytes);
        memset(rank_latency_s, 0, n_gpus * sizeof *rank_latency_s);
        /* Messages are sorted by phase first. */
        for (; m < n_messages; m++) {
            const RsMessage *msg = rs_plan_get_message(plan, m);
            if (msg->phase != phase)
                break;
            if (!check_rank(topo, msg->src, error) || !check_rank(topo, msg->dst, error))
                return FALSE;
            if (msg->src == msg->dst)
                continue;
            guint32 route[RS_TOPOLOGY_MAX_ROUTE];
            guint n_route = rs_topology_route(topo, msg->src, msg->dst, route);
            for (guint k = 0; k < n_route; k++)
                phase_link_bytes[route[k]] += msg->size_bytes;
            if (rs_topology_get_nvlink_domain(topo, msg->src) ==
                rs_topology_get_nvlink_domain(topo, msg->dst))
                out->bytes_nvlink += msg->size_bytes;
            else
                out->bytes_network += msg->size_bytes;
            double latency_s = rs_topology_get_message_latency_s(topo, msg->src, msg->dst);
            rank_latency_s[msg->src] += latency_s;
            rank_latency_s[msg->dst] += latency_s;
        }
        double phase_link_s = 0.0;
        for (guint32 l = 0; l < n_links; l++) {
            if (phase_link_bytes[l] == 0)
                continue;
            total_link_bytes[l] += phase_link_bytes[l];
            double busy_s = (double)phase_link_bytes[l] /
                            rs_link_get_capacity_bytes_per_s(rs_topology_get_link(topo, l));
            if (busy_s > phase_link_s)
                phase_link_s = busy_s;
            if (busy_s > out->busiest_link_s) {
                out->busiest_link_s = busy_s;
                out->busiest_link = l;
                out->busiest_link_bytes = phase_link_bytes[l];
            }
        }
        double phase_latency_s = 0.0;
        for (guint g = 0; g < n_gpus; g++)
            phase_latency_s = MAX(phase_latency_s, rank_latency_s[g]);
        out->predicted_s += phase_link_s + phase_latency_s;
    }

    for (guint32 g = 0; g < n_gpus; g++) {
        guint64 in = total_link_bytes[rs_topology_get_gpu_link(topo, g, RS_LINK_NVLINK_INGRESS)] +
                     total_link_bytes[rs_topology_get_gpu_link(topo, g, RS_LINK_NIC_INGRESS)];
        guint64 nic_out = total_link_bytes[rs_topology_get_gpu_link(topo, g, RS_LINK_NIC_EGRESS)];
        if (in > out->max_gpu_ingress_bytes) {
            out->max_gpu_ingress_bytes = in;
            out->max_gpu_ingress_gpu = g;
        }
        if (nic_out > out->max_nic_egress_bytes) {
            out->max_nic_egress_bytes = nic_out;
            out->max_nic_egress_gpu = g;
        }
    }
    return TRUE;
}

/* --- lower bound --- */

/* Elements each GPU must receive and each domain must import, for one layout pair. */
typedef struct {
    GHashTable *gpu_elems;    /* GPU → guint64 elements (boxed) */
    GHashTable *domain_elems; /* domain → guint64 elements */
} PairNeeds;

static void
pair_needs_free(gpointer p)
{
    PairNeeds *n = p;
    g_hash_table_unref(n->gpu_elems);
    g_hash_table_unref(n->domain_elems);
    g_free(n);
}

static void
add_count(GHashTable *table, guint key, guint64 value)
{
    if (value == 0)
        return;
    guint64 *slot = g_hash_table_lookup(table, GUINT_TO_POINTER(key + 1));
    if (slot == NULL) {
        slot = g_new0(guint64, 1);
        g_hash_table_insert(table, GUINT_TO_POINTER(key + 1), slot);
    }
    *slot += value;
}

static PairNeeds *
pair_needs_compute(const RsLayout *src, const RsLayout *dst, const RsTopology *topo)
{
    PairNeeds *needs = g_new0(PairNeeds, 1);
    needs->gpu_elems = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    needs->domain_elems = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    guint domain_size = rs_topology_get_gpus_per_nvlink_domain(topo);
    g_autoptr(GArray) union_boxes = g_array_new(FALSE, FALSE, sizeof(RsBox));
    guint n_dst = rs_layout_get_n_ranks(dst);
    for (guint i = 0; i < n_dst;) {
        guint32 domain = rs_layout_get_rank(dst, i) / domain_size;
        g_array_set_size(union_boxes, 0);
        guint j = i;
        for (; j < n_dst && rs_layout_get_rank(dst, j) / domain_size == domain; j++) {
            guint32 rank = rs_layout_get_rank(dst, j);
            guint n_boxes;
            const RsLocalBox *boxes = rs_layout_get_boxes(dst, j, &n_boxes);
            guint64 need = 0;
            for (guint b = 0; b < n_boxes; b++) {
                need += rs_box_get_n_elems(&boxes[b].box) -
                        rs_layout_count_held(src, rank, &boxes[b].box);
                rs_box_list_add_disjoint(union_boxes, &boxes[b].box);
            }
            add_count(needs->gpu_elems, rank, need);
        }
        /* Remove what sources inside the domain hold. */
        guint32 first_gpu = domain * domain_size;
        for (guint32 g = first_gpu; g < first_gpu + domain_size && union_boxes->len > 0; g++) {
            gint s = rs_layout_find_rank(src, g);
            if (s < 0)
                continue;
            guint n_boxes;
            const RsLocalBox *boxes = rs_layout_get_boxes(src, (guint)s, &n_boxes);
            for (guint b = 0; b < n_boxes; b++)
                rs_box_list_subtract(union_boxes, &boxes[b].box);
        }
        add_count(needs->domain_elems, domain, rs_box_list_get_n_elems(union_boxes));
        i = j;
    }
    return needs;
}

typedef struct {
    const RsLayout *src, *dst;
} LayoutPair;

static guint
pair_hash(gconstpointer p)
{
    const LayoutPair *lp = p;
    return g_direct_hash(lp->src) * 31u ^ g_direct_hash(lp->dst);
}

static gboolean
pair_equal(gconstpointer a, gconstpointer b)
{
    const LayoutPair *x = a, *y = b;
    return x->src == y->src && x->dst == y->dst;
}

static void
accumulate(GHashTable *from, double *bytes_by_key, guint n_keys, guint elem_bytes)
{
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, from);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        guint k = GPOINTER_TO_UINT(key) - 1;
        if (k < n_keys)
            bytes_by_key[k] += (double)(*(guint64 *)value) * elem_bytes;
    }
}

gboolean
rs_lower_bound_compute(const RsRefit *refit, const RsTopology *topo, RsLowerBound *out,
                       GError **error)
{
    memset(out, 0, sizeof *out);
    out->kind = RS_CUT_NONE;
    guint n_gpus = rs_topology_get_n_gpus(topo);
    guint n_domains = rs_topology_get_n_nvlink_domains(topo);
    g_autofree double *gpu_bytes = g_new0(double, n_gpus);
    g_autofree double *domain_bytes = g_new0(double, n_domains);
    g_autoptr(GHashTable) cache = g_hash_table_new_full(pair_hash, pair_equal, g_free,
                                                        pair_needs_free);
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        guint n_dst = rs_layout_get_n_ranks(t->dst);
        if (n_dst > 0 && !check_rank(topo, rs_layout_get_rank(t->dst, n_dst - 1), error))
            return FALSE;
        LayoutPair key = {t->src, t->dst};
        PairNeeds *needs = g_hash_table_lookup(cache, &key);
        if (needs == NULL) {
            needs = pair_needs_compute(t->src, t->dst, topo);
            g_hash_table_insert(cache, g_memdup2(&key, sizeof key), needs);
        }
        guint elem_bytes = rs_refit_tensor_get_elem_bytes(t);
        accumulate(needs->gpu_elems, gpu_bytes, n_gpus, elem_bytes);
        accumulate(needs->domain_elems, domain_bytes, n_domains, elem_bytes);
    }

    double nvlink_in = rs_link_get_capacity_bytes_per_s(
        rs_topology_get_link(topo, rs_topology_get_gpu_link(topo, 0, RS_LINK_NVLINK_INGRESS)));
    double nic_in = rs_link_get_capacity_bytes_per_s(
        rs_topology_get_link(topo, rs_topology_get_gpu_link(topo, 0, RS_LINK_NIC_INGRESS)));
    guint domain_size = rs_topology_get_gpus_per_nvlink_domain(topo);
    /* A GPU alone in its domain has no NVLink peer to receive from. */
    double gpu_capacity = nic_in + (domain_size > 1 ? nvlink_in : 0.0);
    double domain_capacity = nic_in * domain_size;
    for (guint32 g = 0; g < n_gpus; g++) {
        double t_s = gpu_bytes[g] / gpu_capacity;
        if (t_s > out->gpu_ingress_s)
            out->gpu_ingress_s = t_s;
        if (t_s > out->time_s) {
            *out = (RsLowerBound){t_s, RS_CUT_GPU_INGRESS, g, (guint64)gpu_bytes[g],
                                  gpu_capacity, out->gpu_ingress_s, out->domain_ingress_s};
        }
    }
    for (guint32 d = 0; d < n_domains; d++) {
        double t_s = domain_bytes[d] / domain_capacity;
        if (t_s > out->domain_ingress_s)
            out->domain_ingress_s = t_s;
        if (t_s > out->time_s) {
            *out = (RsLowerBound){t_s, RS_CUT_DOMAIN_INGRESS, d, (guint64)domain_bytes[d],
                                  domain_capacity, out->gpu_ingress_s, out->domain_ingress_s};
        }
    }
    return TRUE;
}

char *
rs_lower_bound_format_cut(const RsLowerBound *bound)
{
    switch (bound->kind) {
    case RS_CUT_NONE:
        return g_strdup("nothing crosses any cut");
    case RS_CUT_GPU_INGRESS:
        return g_strdup_printf("GPU %u ingress (NVLink + NIC): %.4g GB over %.4g GB/s",
                               bound->where, bound->cut_bytes / 1e9,
                               bound->cut_capacity_bytes_per_s / 1e9);
    case RS_CUT_DOMAIN_INGRESS:
        return g_strdup_printf("NVLink domain %u ingress (its NICs): %.4g GB over %.4g GB/s",
                               bound->where, bound->cut_bytes / 1e9,
                               bound->cut_capacity_bytes_per_s / 1e9);
    }
    return g_strdup("invalid");
}

/* lower-bound.c — the cut bound of sim/lower-bound.h: per layout pair, the elements that
 * must enter and leave every GPU, NVLink domain and scalable unit, over the capacity of the
 * links crossing that set's boundary. */
#include "sim/lower-bound.h"

#include <math.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-lower-bound-error-quark, rs_lower_bound_error)
/* clang-format on */

static gboolean
check_rank(const RsTopology *topo, guint32 rank, GError **error)
{
    if (rank >= rs_topology_get_n_gpus(topo)) {
        g_set_error(error, RS_LOWER_BOUND_ERROR, RS_LOWER_BOUND_ERROR_RANK,
                    "rank %u is not a GPU of topology %s (%u GPUs)", rank,
                    rs_topology_get_name(topo), rs_topology_get_n_gpus(topo));
        return FALSE;
    }
    return TRUE;
}

/* The three partitions of the GPUs whose cuts are evaluated. Each set is a contiguous range
 * of GPU indices: set(g) = g / set_size. */
enum { SET_GPU, SET_DOMAIN, SET_UNIT, N_SET_KINDS };

static guint
set_size(const RsTopology *topo, guint kind)
{
    switch (kind) {
    case SET_GPU:
        return 1;
    case SET_DOMAIN:
        return rs_topology_get_gpus_per_nvlink_domain(topo);
    default:
        return rs_topology_get_scalable_unit_nodes(topo) * rs_topology_get_gpus_per_node(topo);
    }
}

/* Elements that must enter and leave each set, for one layout pair: set id → guint64. */
typedef struct {
    GHashTable *in[N_SET_KINDS];
    GHashTable *out[N_SET_KINDS];
} PairNeeds;

static void
pair_needs_free(gpointer p)
{
    PairNeeds *n = p;
    for (guint k = 0; k < N_SET_KINDS; k++) {
        g_hash_table_unref(n->in[k]);
        g_hash_table_unref(n->out[k]);
    }
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

/* Distinct boxes of a layout with the (sorted) ranks holding each. */
typedef struct {
    RsBox box;
    guint32 first_rank, last_rank; /* smallest and largest holder */
} BoxGroup;

static GArray *
box_groups_build(const RsLayout *layout)
{
    GArray *groups = g_array_new(FALSE, FALSE, sizeof(BoxGroup));
    g_autoptr(GHashTable) index = g_hash_table_new_full(rs_box_hash, rs_box_equal, g_free, NULL);
    for (guint i = 0; i < rs_layout_get_n_ranks(layout); i++) {
        guint n;
        const RsLocalBox *lb = rs_layout_get_boxes(layout, i, &n);
        guint32 rank = rs_layout_get_rank(layout, i);
        for (guint b = 0; b < n; b++) {
            if (rs_box_is_empty(&lb[b].box))
                continue;
            gpointer found = g_hash_table_lookup(index, &lb[b].box);
            if (found == NULL) {
                BoxGroup g = {lb[b].box, rank, rank};
                g_array_append_val(groups, g);
                g_hash_table_insert(index, g_memdup2(&lb[b].box, sizeof(RsBox)),
                                    GUINT_TO_POINTER(groups->len));
            } else {
                /* Entries come in increasing rank order. */
                g_array_index(groups, BoxGroup, GPOINTER_TO_UINT(found) - 1).last_rank = rank;
            }
        }
    }
    return groups;
}

/* Is every holder of @g in set @s (sets are contiguous ranges of size @size)? */
static gboolean
group_inside(const BoxGroup *g, guint size, guint s)
{
    return g->first_rank / size == s && g->last_rank / size == s;
}

static guint64
intersect_count(const RsBox *a, const RsBox *b)
{
    RsBox inter;
    return rs_box_intersect(a, b, &inter) ? rs_box_get_n_elems(&inter) : 0;
}

/* Elements that must leave each set of @kind: held only inside it, needed outside. */
static void
egress_needs(const RsLayout *src, const RsLayout *dst, GArray *src_groups, GArray *dst_groups,
             guint size, GHashTable *out)
{
    gboolean src_disjoint = rs_layout_has_disjoint_shards(src);
    gboolean dst_disjoint = rs_layout_has_disjoint_shards(dst);
    /* Source groups whose holders all sit in one set, by set. */
    g_autoptr(GHashTable) by_set =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref);
    g_autoptr(GArray) set_order = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < src_groups->len; i++) {
        const BoxGroup *g = &g_array_index(src_groups, BoxGroup, i);
        guint s = g->first_rank / size;
        if (!group_inside(g, size, s))
            continue;
        GArray *list = g_hash_table_lookup(by_set, GUINT_TO_POINTER(s + 1));
        if (list == NULL) {
            list = g_array_new(FALSE, FALSE, sizeof(guint));
            g_hash_table_insert(by_set, GUINT_TO_POINTER(s + 1), list);
            g_array_append_val(set_order, s);
        }
        g_array_append_val(list, i);
    }
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_autoptr(GArray) wanted = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint o = 0; o < set_order->len; o++) {
        guint s = g_array_index(set_order, guint, o);
        GArray *list = g_hash_table_lookup(by_set, GUINT_TO_POINTER(s + 1));
        /* What sources in the set hold... */
        g_array_set_size(pieces, 0);
        for (guint i = 0; i < list->len; i++) {
            const BoxGroup *g = &g_array_index(src_groups, BoxGroup, g_array_index(list, guint, i));
            if (src_disjoint)
                g_array_append_val(pieces, g->box);
            else
                rs_box_list_add_disjoint(pieces, &g->box);
        }
        /* ...and no source outside it holds (distinct boxes of a disjoint layout never
         * overlap, so only other layouts need the subtraction). */
        for (guint i = 0; !src_disjoint && i < src_groups->len && pieces->len > 0; i++) {
            const BoxGroup *g = &g_array_index(src_groups, BoxGroup, i);
            if (!group_inside(g, size, s))
                rs_box_list_subtract(pieces, &g->box);
        }
        /* Destinations outside the set that need it. */
        g_array_set_size(wanted, 0);
        for (guint i = 0; i < dst_groups->len; i++) {
            const BoxGroup *d = &g_array_index(dst_groups, BoxGroup, i);
            if (group_inside(d, size, s))
                continue;
            if (dst_disjoint)
                g_array_append_val(wanted, d->box);
            else
                rs_box_list_add_disjoint(wanted, &d->box);
        }
        guint64 count = 0;
        for (guint p = 0; p < pieces->len; p++)
            for (guint w = 0; w < wanted->len; w++)
                count += intersect_count(&g_array_index(pieces, RsBox, p),
                                         &g_array_index(wanted, RsBox, w));
        add_count(out, s, count);
    }
}

/* First entry index of @layout with rank >= @rank. */
static guint
lower_entry(const RsLayout *layout, guint32 rank)
{
    guint lo = 0, hi = rs_layout_get_n_ranks(layout);
    while (lo < hi) {
        guint mid = (lo + hi) / 2;
        if (rs_layout_get_rank(layout, mid) < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Elements that must enter each set of @kind: needed by its destinations, held by none of
 * its sources. */
static void
ingress_needs(const RsLayout *src, const RsLayout *dst, guint size, GHashTable *in)
{
    g_autoptr(GArray) union_boxes = g_array_new(FALSE, FALSE, sizeof(RsBox));
    guint n_dst = rs_layout_get_n_ranks(dst);
    for (guint i = 0; i < n_dst;) {
        guint32 set = rs_layout_get_rank(dst, i) / size;
        g_array_set_size(union_boxes, 0);
        guint j = i;
        for (; j < n_dst && rs_layout_get_rank(dst, j) / size == set; j++) {
            guint n_boxes;
            const RsLocalBox *boxes = rs_layout_get_boxes(dst, j, &n_boxes);
            for (guint b = 0; b < n_boxes; b++)
                rs_box_list_add_disjoint(union_boxes, &boxes[b].box);
        }
        guint first = lower_entry(src, set * size);
        guint end = lower_entry(src, (set + 1) * size);
        for (guint e = first; e < end && union_boxes->len > 0; e++) {
            guint n_boxes;
            const RsLocalBox *boxes = rs_layout_get_boxes(src, e, &n_boxes);
            for (guint b = 0; b < n_boxes; b++)
                rs_box_list_subtract(union_boxes, &boxes[b].box);
        }
        add_count(in, set, rs_box_list_get_n_elems(union_boxes));
        i = j;
    }
}

static PairNeeds *
pair_needs_compute(const RsLayout *src, const RsLayout *dst, const RsTopology *topo)
{
    PairNeeds *needs = g_new0(PairNeeds, 1);
    for (guint k = 0; k < N_SET_KINDS; k++) {
        needs->in[k] = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        needs->out[k] = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    }
    g_autoptr(GArray) src_groups = box_groups_build(src);
    g_autoptr(GArray) dst_groups = box_groups_build(dst);
    for (guint k = 0; k < N_SET_KINDS; k++) {
        if (k == SET_UNIT && rs_topology_get_n_scalable_units(topo) < 2)
            continue;
        guint size = set_size(topo, k);
        ingress_needs(src, dst, size, needs->in[k]);
        egress_needs(src, dst, src_groups, dst_groups, size, needs->out[k]);
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

/* Adds @t's bytes of the element counts in @from to @bytes_by_key: on the wire in @t's
 * dtype (rs_refit_tensor_get_n_bytes: MXFP4 is half a byte an element, which a whole
 * element size, 0 bits / 8, counted as nothing). */
static void
accumulate(GHashTable *from, double *bytes_by_key, guint n_keys, const RsRefitTensor *t)
{
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, from);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        guint k = GPOINTER_TO_UINT(key) - 1;
        if (k < n_keys)
            bytes_by_key[k] += (double)rs_refit_tensor_get_n_bytes(t, *(guint64 *)value);
    }
}

static double
link_capacity(const RsTopology *topo, guint32 link)
{
    if (link == G_MAXUINT32)
        return INFINITY;
    return rs_link_get_capacity_bytes_per_s(rs_topology_get_link(topo, link));
}

/* The capacity of @gpu's way to the fabric: the smaller of its NIC and PCIe links;
 * *@pcie_below_nic is set when PCIe's is the smaller (it is left alone otherwise). */
static double
nic_path_capacity(const RsTopology *topo, guint32 gpu, gboolean ingress,
                  gboolean *pcie_below_nic)
{
    RsLinkKind nic = ingress ? RS_LINK_NIC_INGRESS : RS_LINK_NIC_EGRESS;
    RsLinkKind pcie = ingress ? RS_LINK_PCIE_INGRESS : RS_LINK_PCIE_EGRESS;
    double nic_bw = link_capacity(topo, rs_topology_get_gpu_link(topo, gpu, nic));
    double pcie_bw = link_capacity(topo, rs_topology_get_gpu_link(topo, gpu, pcie));
    if (pcie_bw < nic_bw)
        *pcie_below_nic = TRUE;
    return MIN(nic_bw, pcie_bw);
}

static double cut_capacity_pcie(const RsTopology *topo, guint kind, guint s, guint size,
                                guint32 first, guint32 end, gboolean ingress,
                                gboolean nic_usable, gboolean *pcie_out);

/* The capacity of the cut around set @s of @kind, in one direction, and *@links_out, the
 * links that make it (RsLowerBound.cut_links). @nic_usable: for a GPU cut, whether its NIC
 * path can carry anything (some GPU of the job lies outside its NVLink domain). */
static double
cut_capacity(const RsTopology *topo, guint kind, guint s, gboolean ingress, gboolean nic_usable,
             RsCutLinks *links_out)
{
    guint size = set_size(topo, kind);
    guint32 first = s * size, end = MIN((s + 1) * size, rs_topology_get_n_gpus(topo));
    gboolean pcie = FALSE;
    double c = cut_capacity_pcie(topo, kind, s, size, first, end, ingress, nic_usable, &pcie);
    *links_out = !nic_usable ? RS_CUT_LINKS_NVLINK : pcie ? RS_CUT_LINKS_PCIE : RS_CUT_LINKS_NIC;
    if (kind == SET_UNIT) {
        double leaves = 0.0;
        for (guint r = 0; r < rs_topology_get_n_rails(topo); r++)
            leaves += link_capacity(
                topo, rs_topology_get_leaf_link(topo, s, r,
                                                ingress ? RS_LINK_LEAF_DOWNLINK
                                                        : RS_LINK_LEAF_UPLINK));
        if (leaves < c) {
            *links_out = RS_CUT_LINKS_LEAF;
            return leaves;
        }
    }
    return c;
}

/* cut_capacity() without the leaves: the GPUs' own ways out (a GPU cut: NVLink too). */
static double
cut_capacity_pcie(const RsTopology *topo, guint kind, guint s, guint size, guint32 first,
                  guint32 end, gboolean ingress, gboolean nic_usable, gboolean *pcie_out)
{
    if (kind == SET_GPU) {
        /* Traffic between GPUs of one NVLink domain takes NVLink (rs_topology_route()), so
         * a GPU's NIC carries only what comes from or goes to a GPU outside its domain; with
         * none in the job (a colocated job on one domain, or the other nodes idle), only
         * NVLink crosses the cut (the NIC counted there made the bound 11% loose). */
        double c = nic_usable ? nic_path_capacity(topo, first, ingress, pcie_out) : 0.0;
        /* A GPU alone in its domain has no NVLink peer. */
        if (rs_topology_get_gpus_per_nvlink_domain(topo) > 1)
            c += link_capacity(topo, rs_topology_get_gpu_link(topo, first,
                                                              ingress ? RS_LINK_NVLINK_INGRESS
                                                                      : RS_LINK_NVLINK_EGRESS));
        return c;
    }
    double nics = 0.0;
    /* GPUs outside the job carry nothing: their NICs are not part of the cut. */
    for (guint32 g = first; g < end; g++)
        if (rs_topology_gpu_in_job(topo, g))
            nics += nic_path_capacity(topo, g, ingress, pcie_out);
    return nics;
}

/* Bytes that must enter and leave each set of each kind, summed over the tensors. */
typedef struct {
    guint n_sets[N_SET_KINDS];
    double *in_bytes[N_SET_KINDS];  /* [n_sets[kind]] */
    double *out_bytes[N_SET_KINDS]; /* [n_sets[kind]] */
} SetBytes;

/* Stage 1: per tensor, its layout pair's needs (computed once per pair), in bytes. */
static gboolean
accumulate_needs(const RsRefit *refit, const RsTopology *topo, SetBytes *sb, GError **error)
{
    g_autoptr(GHashTable) cache =
        g_hash_table_new_full(pair_hash, pair_equal, g_free, pair_needs_free);
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        guint n_dst = rs_layout_get_n_ranks(t->dst), n_src = rs_layout_get_n_ranks(t->src);
        if ((n_dst > 0 && !check_rank(topo, rs_layout_get_rank(t->dst, n_dst - 1), error)) ||
            (n_src > 0 && !check_rank(topo, rs_layout_get_rank(t->src, n_src - 1), error)))
            return FALSE;
        LayoutPair key = {t->src, t->dst};
        PairNeeds *needs = g_hash_table_lookup(cache, &key);
        if (needs == NULL) {
            needs = pair_needs_compute(t->src, t->dst, topo);
            g_hash_table_insert(cache, g_memdup2(&key, sizeof key), needs);
        }
        for (guint k = 0; k < N_SET_KINDS; k++) {
            accumulate(needs->in[k], sb->in_bytes[k], sb->n_sets[k], t);
            accumulate(needs->out[k], sb->out_bytes[k], sb->n_sets[k], t);
        }
    }
    return TRUE;
}

/* Stage 2: every cut, in RsCutKind order so that ties go to the earlier kind. */
static void
evaluate_cuts(const RsTopology *topo, const SetBytes *sb, RsLowerBound *out)
{
    /* Per NVLink domain: whether some GPU of the job lies outside it (a GPU cut's NIC). */
    guint domain_size = set_size(topo, SET_DOMAIN);
    guint n_gpus = rs_topology_get_n_gpus(topo);
    guint n_domains = (n_gpus + domain_size - 1) / domain_size;
    g_autofree guint *job_in_domain = g_new0(guint, MAX(n_domains, 1));
    guint n_job = 0;
    for (guint32 g = 0; g < n_gpus; g++)
        if (rs_topology_gpu_in_job(topo, g)) {
            job_in_domain[g / domain_size]++;
            n_job++;
        }
    static const struct {
        RsCutKind kind;
        guint set;
        gboolean ingress;
    } cuts[] = {
        {RS_CUT_GPU_INGRESS, SET_GPU, TRUE},   {RS_CUT_DOMAIN_INGRESS, SET_DOMAIN, TRUE},
        {RS_CUT_GPU_EGRESS, SET_GPU, FALSE},   {RS_CUT_DOMAIN_EGRESS, SET_DOMAIN, FALSE},
        {RS_CUT_UNIT_INGRESS, SET_UNIT, TRUE}, {RS_CUT_UNIT_EGRESS, SET_UNIT, FALSE},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cuts); c++) {
        const double *bytes =
            cuts[c].ingress ? sb->in_bytes[cuts[c].set] : sb->out_bytes[cuts[c].set];
        for (guint32 s = 0; s < sb->n_sets[cuts[c].set]; s++) {
            if (bytes[s] <= 0)
                continue;
            RsCutLinks links;
            gboolean nic_usable =
                cuts[c].set != SET_GPU || n_job > job_in_domain[s / domain_size];
            double capacity =
                cut_capacity(topo, cuts[c].set, s, cuts[c].ingress, nic_usable, &links);
            double t_s = bytes[s] / capacity;
            if (t_s > out->kind_s[cuts[c].kind]) {
                out->kind_s[cuts[c].kind] = t_s;
                out->kind_where[cuts[c].kind] = s;
            }
            if (t_s > out->time_s) {
                out->time_s = t_s;
                out->kind = cuts[c].kind;
                out->where = s;
                out->cut_bytes = (guint64)(bytes[s] + 0.5);
                out->cut_capacity_bytes_per_s = capacity;
                out->cut_links = links;
            }
        }
    }
    out->gpu_ingress_s = out->kind_s[RS_CUT_GPU_INGRESS];
    out->domain_ingress_s = out->kind_s[RS_CUT_DOMAIN_INGRESS];
}

gboolean
rs_lower_bound_compute(const RsRefit *refit, const RsTopology *topo, RsLowerBound *out,
                       GError **error)
{
    memset(out, 0, sizeof *out);
    out->kind = RS_CUT_NONE;
    SetBytes sb;
    for (guint k = 0; k < N_SET_KINDS; k++) {
        guint size = set_size(topo, k);
        sb.n_sets[k] = (rs_topology_get_n_gpus(topo) + size - 1) / size;
        sb.in_bytes[k] = g_new0(double, sb.n_sets[k]);
        sb.out_bytes[k] = g_new0(double, sb.n_sets[k]);
    }
    gboolean ok = accumulate_needs(refit, topo, &sb, error);
    if (ok)
        evaluate_cuts(topo, &sb, out);
    for (guint k = 0; k < N_SET_KINDS; k++) {
        g_free(sb.in_bytes[k]);
        g_free(sb.out_bytes[k]);
    }
    return ok;
}

const char *
rs_cut_kind_get_name(RsCutKind kind)
{
    static const char *const names[RS_CUT_KIND_N] = {
        [RS_CUT_NONE] = "none",
        [RS_CUT_GPU_INGRESS] = "gpu-ingress",
        [RS_CUT_DOMAIN_INGRESS] = "nvlink-domain-ingress",
        [RS_CUT_GPU_EGRESS] = "gpu-egress",
        [RS_CUT_DOMAIN_EGRESS] = "nvlink-domain-egress",
        [RS_CUT_UNIT_INGRESS] = "scalable-unit-ingress",
        [RS_CUT_UNIT_EGRESS] = "scalable-unit-egress",
    };
    g_return_val_if_fail(kind < RS_CUT_KIND_N, "invalid");
    return names[kind];
}

char *
rs_lower_bound_format_cut(const RsLowerBound *bound)
{
    /* What the cut is made of: its GPUs' NICs, or their PCIe links where those are the
     * smaller (a NIC faster than its PCIe link), or a scalable unit's leaf links. */
    gboolean in = bound->kind == RS_CUT_GPU_INGRESS || bound->kind == RS_CUT_DOMAIN_INGRESS ||
                  bound->kind == RS_CUT_UNIT_INGRESS;
    gboolean pcie = bound->cut_links == RS_CUT_LINKS_PCIE;
    const char *dir = in ? "ingress" : "egress";
    const char *set = NULL, *side = NULL;
    switch (bound->kind) {
    case RS_CUT_NONE:
    case RS_CUT_KIND_N:
        return g_strdup("nothing crosses any cut");
    case RS_CUT_GPU_INGRESS:
    case RS_CUT_GPU_EGRESS:
        set = "GPU";
        side = bound->cut_links == RS_CUT_LINKS_NVLINK
                   ? "(NVLink: no GPU of the job outside its NVLink domain)"
               : pcie ? "(NVLink + PCIe, below its NIC)"
                      : "(NVLink + NIC)";
        break;
    case RS_CUT_DOMAIN_INGRESS:
    case RS_CUT_DOMAIN_EGRESS:
        set = "NVLink domain",
        side = pcie ? "(its GPUs' PCIe links, below their NICs)" : "(its NICs)";
        break;
    case RS_CUT_UNIT_INGRESS:
    case RS_CUT_UNIT_EGRESS:
        set = "scalable unit";
        side = bound->cut_links == RS_CUT_LINKS_LEAF ? (in ? "(leaf downlinks)" : "(leaf uplinks)")
               : pcie ? "(its GPUs' PCIe links, below their NICs and its leaf links)"
                      : "(its NICs, below its leaf links)";
        break;
    }
    return g_strdup_printf("%s %u %s %s: %.4g GB over %.4g GB/s", set, bound->where, dir, side,
                           bound->cut_bytes / 1e9, bound->cut_capacity_bytes_per_s / 1e9);
}

/* balance.c — source selection for the topology-aware strategies (node-aware.c,
 * hierarchical.c), which drive it.
 *
 * The model: every directed link of the topology carries a load, the bytes planned over it
 * divided by its capacity (seconds of busy time). A decision sends one unit of bytes from
 * one of its possible senders to one of its possible receivers; the greedy rule picks the
 * pair whose route's busiest link would be least loaded after adding the unit (the
 * classic least-loaded / LPT heuristic for makespan on parallel links), with ties broken
 * towards the same NVLink domain, then the same rail, then (hierarchical, not for domain
 * relays) the less loaded NIC egress by more than the unit, then lower ranks
 * (rs_balance_choice_better()). Units are decided
 * largest first, over all tensors of the refit, so replicas and NICs are balanced by bytes
 * across the whole refit rather than tensor by tensor.
 *
 * Tensors with the same (source layout, destination layout, element size) form a pattern
 * (the layers of a model): a pattern is planned once, its units weighted by how many
 * tensors share it, and its transfers are then copied for every member tensor.
 *
 * node-aware: a unit is a piece one destination rank needs from one source group (the
 * boxes held by a set of replicas), minus what it holds itself; the receiver is fixed, the
 * sender is the best replica. Large units are split into stripes decided independently.
 *
 * hierarchical: the pieces the ranks of one NVLink domain need from one source group are
 * refined into atoms — disjoint boxes, each with the set of ranks needing all of it. An
 * atom crosses the fabric once: sender and leader (one of the ranks needing it) are chosen
 * together; the leader forwards it over NVLink along a binary tree to the other ranks that
 * need it, bucket by bucket, so the forwarding is pipelined. With domain relays, ranks that
 * already hold an atom may serve the identical atom to another domain (depth-limited).
 */
#include "plan/balance-private.h"

#include <math.h>
#include <string.h>

/* A relay must be this much cheaper (relative busy time of the busiest link) than a source
 * replica: each hop couples a domain's arrival to its upstream's progress, which the
 * first-order loads do not see, so a relay is taken only when it clearly relieves a
 * source. */
#define RELAY_MARGIN 0.01

/* --- link loads --- */

static void
loads_init(RsLinkLoads *l, const RsTopology *topo)
{
    l->topo = topo;
    l->n_links = rs_topology_get_n_links(topo);
    l->busy_s = g_new0(double, l->n_links);
    l->inv_cap = g_new(double, l->n_links);
    for (guint32 i = 0; i < l->n_links; i++)
        l->inv_cap[i] = 1.0 / rs_link_get_capacity_bytes_per_s(rs_topology_get_link(topo, i));
}

static void
loads_clear(RsLinkLoads *l)
{
    g_free(l->busy_s);
    g_free(l->inv_cap);
}

double
rs_link_loads_route_cost(const RsLinkLoads *l, guint32 src, guint32 dst, double bytes)
{
    guint32 route[RS_TOPOLOGY_MAX_ROUTE];
    guint n = rs_topology_route(l->topo, src, dst, route);
    double worst = 0.0;
    for (guint k = 0; k < n; k++)
        worst = MAX(worst, l->busy_s[route[k]] + bytes * l->inv_cap[route[k]]);
    return worst;
}

void
rs_link_loads_route_add(RsLinkLoads *l, guint32 src, guint32 dst, double bytes)
{
    guint32 route[RS_TOPOLOGY_MAX_ROUTE];
    guint n = rs_topology_route(l->topo, src, dst, route);
    for (guint k = 0; k < n; k++)
        l->busy_s[route[k]] += bytes * l->inv_cap[route[k]];
}

/* --- patterns --- */

typedef struct {
    const RsLayout *src, *dst;
    RsDtype dtype;
} PatternKey;

static guint
pattern_key_hash(gconstpointer p)
{
    const PatternKey *k = p;
    return g_direct_hash(k->src) ^ (g_direct_hash(k->dst) * 31u) ^ (guint)k->dtype;
}

static gboolean
pattern_key_equal(gconstpointer a, gconstpointer b)
{
    const PatternKey *x = a, *y = b;
    return x->src == y->src && x->dst == y->dst && x->dtype == y->dtype;
}

static void
pattern_free(gpointer p)
{
    RsPattern *pat = p;
    g_array_unref(pat->members);
    rs_source_groups_clear(&pat->sg);
    g_array_unref(pat->local.transfers);
    g_free(pat);
}

/* Patterns: tensors sharing (source layout, destination layout, element size), in the
 * order of their first member. */
static void
patterns_build(RsBalance *p, guint64 max_transfer_bytes, GHashTable *boxes)
{
    g_autoptr(GHashTable) by_key =
        g_hash_table_new_full(pattern_key_hash, pattern_key_equal, g_free, NULL);
    for (guint32 i = 0; i < rs_refit_get_n_tensors(p->refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(p->refit, i);
        PatternKey key;
        memset(&key, 0, sizeof key);
        key.src = t->src;
        key.dst = t->dst;
        key.dtype = t->dtype;
        gpointer found = g_hash_table_lookup(by_key, &key);
        RsPattern *pat;
        if (found == NULL) {
            pat = g_new0(RsPattern, 1);
            pat->t = t;
            pat->tensor_idx = i;
            pat->members = g_array_new(FALSE, FALSE, sizeof(guint32));
            pat->local.transfers = g_array_new(FALSE, FALSE, sizeof(RsTransfer));
            pat->local.max_transfer_bytes = max_transfer_bytes;
            pat->local.boxes = boxes; /* (borrowed: the plan's) */
            g_ptr_array_add(p->patterns, pat);
            g_hash_table_insert(by_key, g_memdup2(&key, sizeof key),
                                GUINT_TO_POINTER(p->patterns->len));
        } else {
            pat = g_ptr_array_index(p->patterns, GPOINTER_TO_UINT(found) - 1);
        }
        g_array_append_val(pat->members, i);
    }
}

void
rs_balance_init(RsBalance *p, const RsRefit *refit, RsStrategy strategy,
                const RsPlanOptions *options, guint64 max_transfer_bytes, GHashTable *boxes)
{
    memset(p, 0, sizeof *p);
    p->refit = refit;
    p->options = options;
    p->strategy = strategy;
    loads_init(&p->loads, options->topology);
    p->patterns = g_ptr_array_new_with_free_func(pattern_free);
    p->units = g_array_new(FALSE, FALSE, sizeof(RsBalanceUnit));
    p->needers = g_array_new(FALSE, FALSE, sizeof(guint32));
    patterns_build(p, max_transfer_bytes, boxes);
}

void
rs_balance_clear(RsBalance *p)
{
    g_debug("%s: %u patterns for %u tensors, %u units", rs_strategy_get_name(p->strategy),
            p->patterns->len, rs_refit_get_n_tensors(p->refit), p->units->len);
    loads_clear(&p->loads);
    g_ptr_array_unref(p->patterns);
    g_array_unref(p->units);
    g_array_unref(p->needers);
}

/* --- units --- */

void
rs_balance_add_unit(RsBalance *p, guint pattern, guint group, guint domain, const RsBox *box,
                    const guint32 *needers, guint n_needers, guint choices)
{
    RsPattern *pat = g_ptr_array_index(p->patterns, pattern);
    guint64 bytes = rs_refit_tensor_get_n_bytes(pat->t, rs_box_get_n_elems(box));
    double multiplicity = pat->members->len;
    /* Stripes: a heavy unit with several possible senders or leaders is split so each
     * stripe can take its own route. Stripes are cut per tensor: the tensors of a pattern
     * share routes anyway. */
    guint64 stripe = rs_plan_options_get_stripe_bytes(p->options);
    guint k = 1;
    if (choices > 1 && bytes > stripe) {
        double want = ceil(bytes / (double)stripe);
        k = (guint)MIN(MIN(want, (double)choices), (double)RS_BALANCE_MAX_STRIPES);
    }
    g_autoptr(GArray) stripes = g_array_new(FALSE, FALSE, sizeof(RsBox));
    if (k > 1)
        rs_plan_split_box(box, pat->t, (bytes + k - 1) / k, stripes);
    else
        g_array_append_val(stripes, *box);
    for (guint s = 0; s < stripes->len; s++) {
        RsBalanceUnit u;
        memset(&u, 0, sizeof u);
        u.pattern = pattern;
        u.group = group;
        u.domain = domain;
        u.box = g_array_index(stripes, RsBox, s);
        u.first_needer = p->needers->len;
        u.n_needers = n_needers;
        u.bytes = rs_refit_tensor_get_n_bytes(pat->t, rs_box_get_n_elems(&u.box));
        u.weight = u.bytes * multiplicity;
        u.order = p->units->len;
        g_array_append_vals(p->needers, needers, n_needers);
        g_array_append_val(p->units, u);
    }
}

/* A rank of @t's layouts that is not a GPU of the topology. */
static gboolean
not_a_gpu(GError **error, const RsBalance *p, const RsRefitTensor *t, guint32 rank)
{
    g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_NOT_A_GPU,
                "%s: rank %u is not a GPU of topology %s (%u GPUs)", t->name, rank,
                rs_topology_get_name(p->options->topology),
                rs_topology_get_n_gpus(p->options->topology));
    return FALSE;
}

/* The pieces destination @rank (entry @i of the destination layout) needs: each of its
 * boxes minus what it holds (emitted as local copies), cut along the source groups. */
static gboolean
collect_rank_pieces(RsBalance *p, RsPattern *pat, guint i, GArray *remaining, GArray *pieces,
                    GError **error)
{
    const RsRefitTensor *t = pat->t;
    guint domain_size = rs_topology_get_gpus_per_nvlink_domain(p->options->topology);
    guint32 rank = rs_layout_get_rank(t->dst, i);
    guint n_dst;
    const RsLocalBox *dst_boxes = rs_layout_get_boxes(t->dst, i, &n_dst);
    gint src_idx = rs_layout_find_rank(t->src, rank);
    if (n_dst > 0 && rank >= rs_topology_get_n_gpus(p->options->topology))
        return not_a_gpu(error, p, t, rank);
    for (guint db = 0; db < n_dst; db++) {
        const RsBox *want = &dst_boxes[db].box;
        rs_plan_builder_emit_own(&pat->local, t, pat->tensor_idx, rank, src_idx, want, remaining);
        for (guint g = 0; g < pat->sg.groups->len && remaining->len > 0; g++) {
            const RsSourceGroup *group = &g_array_index(pat->sg.groups, RsSourceGroup, g);
            gboolean used = FALSE;
            for (guint r = 0; r < remaining->len; r++) {
                RsBalancePiece pc = {g, rank / domain_size, rank, {0}};
                if (!rs_box_intersect(&g_array_index(remaining, RsBox, r), &group->box, &pc.box))
                    continue;
                g_array_append_val(pieces, pc);
                used = TRUE;
            }
            if (used)
                rs_box_list_subtract(remaining, &group->box);
        }
        if (remaining->len > 0) {
            rs_plan_set_uncovered_error(error, t, rank, &g_array_index(remaining, RsBox, 0));
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
rs_balance_collect_pieces(RsBalance *p, guint pi, GArray *pieces, GError **error)
{
    RsPattern *pat = g_ptr_array_index(p->patterns, pi);
    const RsRefitTensor *t = pat->t;
    rs_source_groups_build(&pat->sg, t->src);
    g_autoptr(GArray) remaining = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint i = 0; i < rs_layout_get_n_ranks(t->dst); i++)
        if (!collect_rank_pieces(p, pat, i, remaining, pieces, error))
            return FALSE;
    guint n_gpus = rs_topology_get_n_gpus(p->options->topology);
    for (guint g = 0; g < pat->sg.groups->len; g++) {
        const RsSourceGroup *group = &g_array_index(pat->sg.groups, RsSourceGroup, g);
        for (guint h = 0; h < group->n_holders; h++) {
            guint32 holder = g_array_index(pat->sg.holders, guint32, group->first_holder + h);
            if (holder >= n_gpus)
                return not_a_gpu(error, p, t, holder);
        }
    }
    return TRUE;
}

static gint
unit_compare(gconstpointer pa, gconstpointer pb)
{
    const RsBalanceUnit *a = pa, *b = pb;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

void
rs_balance_sort_units(RsBalance *p)
{
    g_array_sort(p->units, unit_compare);
}

/* --- choices --- */

guint
rs_balance_affinity(const RsTopology *topo, guint32 sender, guint32 receiver)
{
    if (rs_topology_get_nvlink_domain(topo, sender) ==
        rs_topology_get_nvlink_domain(topo, receiver))
        return 0;
    if (rs_topology_get_rail(topo, sender) == rs_topology_get_rail(topo, receiver))
        return 1;
    return 2;
}

RsBalanceChoice
rs_balance_choice_none(void)
{
    RsBalanceChoice c = {0, G_MAXUINT32, -1, 0, TRUE, INFINITY, 3, 0, 0};
    return c;
}

/* The NIC egress link the route @src → @dst leaves through (the sender's own NIC, or under
 * PXN the one of the GPU on the receiver's rail), or G_MAXUINT32 when it crosses no NIC. */
static guint32
route_nic_egress(const RsLinkLoads *l, guint32 src, guint32 dst)
{
    guint32 route[RS_TOPOLOGY_MAX_ROUTE];
    guint n = rs_topology_route(l->topo, src, dst, route);
    for (guint k = 0; k < n; k++)
        if (rs_topology_get_link(l->topo, route[k])->kind == RS_LINK_NIC_EGRESS)
            return route[k];
    return G_MAXUINT32;
}

RsBalanceChoice
rs_balance_make_choice(const RsBalance *p, guint32 sender, guint32 via, gint relay, guint32 entry,
                       gboolean needs, double load)
{
    RsBalanceChoice c = {sender, via, relay, entry, needs, 0, 0, 0, 0};
    c.affinity = rs_balance_affinity(p->options->topology, sender, entry);
    c.cost = rs_balance_choice_cost(p, &c, load);
    /* (An exit's first hop, via → sender, stays in the domain: no NIC.) Other strategies
     * and relay candidates compute no route here: they skip the rule. */
    if (p->strategy == RS_STRATEGY_HIERARCHICAL && relay < 0) {
        guint32 nic = route_nic_egress(&p->loads, sender, entry);
        if (nic != G_MAXUINT32) {
            c.unit_nic_s = load * p->loads.inv_cap[nic];
            c.nic_egress_s = p->loads.busy_s[nic] + c.unit_nic_s;
        }
    }
    return c;
}

gboolean
rs_balance_choice_better(const RsBalanceChoice *a, const RsBalanceChoice *b)
{
    /* Costs within a relative 1e-9 are ties. */
    if (a->cost < b->cost * (1 - 1e-9))
        return TRUE;
    if (b->cost < a->cost * (1 - 1e-9))
        return FALSE;
    if (a->affinity != b->affinity)
        return a->affinity < b->affinity;
    /* Where another link binds both routes (a busy entry's NIC ingress), the tie went to
     * the lowest sender, and the first source replicas' NICs filled up to that link's load
     * while others idled: under max-min sharing their flows then lag and end last
     * (kimi-k3-gb300's hierarchical plan: the binding NIC idle the last 15% of the refit).
     * Least-loaded first instead (Graham's list scheduling), within one unit: closer
     * loads stay ties, so a pair's pieces keep travelling together (compared strictly,
     * more and smaller messages: qwen3-30b-colocated 0.0887 -> 0.0902 s). */
    if (a->unit_nic_s > 0 && b->unit_nic_s > 0) {
        if (a->nic_egress_s < (b->nic_egress_s - b->unit_nic_s) * (1 - 1e-9))
            return TRUE;
        if (b->nic_egress_s < (a->nic_egress_s - a->unit_nic_s) * (1 - 1e-9))
            return FALSE;
    }
    if (a->entry != b->entry)
        return a->entry < b->entry;
    return a->sender < b->sender;
}

double
rs_balance_choice_cost(const RsBalance *p, const RsBalanceChoice *c, double load)
{
    double cost = rs_link_loads_route_cost(&p->loads, c->sender, c->entry, load);
    if (c->via != G_MAXUINT32)
        cost = MAX(cost, rs_link_loads_route_cost(&p->loads, c->via, c->sender, load));
    /* Relays of every kind (exits, entries, domain relays) must clearly relieve a link:
     * each hop couples an arrival to its upstream's progress, which link loads do not show.
     * (Preferring domain relays instead was measured slower on the shipped scenarios.) */
    if (c->relay >= 0 || c->via != G_MAXUINT32 || !c->entry_needs)
        cost *= 1 + RELAY_MARGIN;
    return cost;
}

void
rs_balance_instantiate(const RsBalance *p, RsPlanBuilder *b)
{
    for (guint pi = 0; pi < p->patterns->len; pi++) {
        const RsPattern *pat = g_ptr_array_index(p->patterns, pi);
        const GArray *local = pat->local.transfers;
        for (guint m = 0; m < pat->members->len; m++) {
            guint32 tensor_idx = g_array_index(pat->members, guint32, m);
            gint64 base = b->transfers->len;
            for (guint i = 0; i < local->len; i++) {
                RsTransfer tr = g_array_index(local, RsTransfer, i);
                tr.tensor_idx = tensor_idx;
                if (tr.depends_on >= 0)
                    tr.depends_on += base;
                g_array_append_val(b->transfers, tr);
            }
        }
    }
}

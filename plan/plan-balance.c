/* plan-balance.c — the topology-aware strategies: node-aware and hierarchical.
 *
 * The model: every directed link of the topology carries a load, the bytes planned over it
 * divided by its capacity (seconds of busy time). A decision sends one unit of bytes from
 * one of its possible senders to one of its possible receivers; the greedy rule picks the
 * pair whose route's busiest link would be least loaded after adding the unit (the
 * classic least-loaded / LPT heuristic for makespan on parallel links), with ties broken
 * towards the same NVLink domain, then the same rail, then lower ranks. Units are decided
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
#include "plan/plan-private.h"

#include <math.h>
#include <string.h>

/* Relays across NVLink domains: how many domain hops a piece may take, and how much
 * cheaper (relative busy time of the busiest link) a relay must be than a source replica.
 * Each hop couples a domain's arrival to its upstream's progress, which the first-order
 * loads do not see, so a relay is taken only when it clearly relieves a source. */
#define MAX_RELAY_DEPTH 1
#define RELAY_MARGIN 0.01
#define MAX_STRIPES 64

/* --- link loads --- */

typedef struct {
    const RsTopology *topo;
    guint n_links;
    double *busy_s;  /* per link: planned bytes / capacity */
    double *inv_cap; /* per link: 1 / capacity */
} Loads;

static void
loads_init(Loads *l, const RsTopology *topo)
{
    l->topo = topo;
    l->n_links = rs_topology_get_n_links(topo);
    l->busy_s = g_new0(double, l->n_links);
    l->inv_cap = g_new(double, l->n_links);
    for (guint32 i = 0; i < l->n_links; i++)
        l->inv_cap[i] = 1.0 / rs_link_get_capacity_bytes_per_s(rs_topology_get_link(topo, i));
}

static void
loads_clear(Loads *l)
{
    g_free(l->busy_s);
    g_free(l->inv_cap);
}

/* Busiest link of the route src → dst after adding @bytes (0 for a local copy). */
static double
route_cost(const Loads *l, guint32 src, guint32 dst, double bytes)
{
    guint32 route[RS_TOPOLOGY_MAX_ROUTE];
    guint n = rs_topology_route(l->topo, src, dst, route);
    double worst = 0.0;
    for (guint k = 0; k < n; k++)
        worst = MAX(worst, l->busy_s[route[k]] + bytes * l->inv_cap[route[k]]);
    return worst;
}

static void
route_add(Loads *l, guint32 src, guint32 dst, double bytes)
{
    guint32 route[RS_TOPOLOGY_MAX_ROUTE];
    guint n = rs_topology_route(l->topo, src, dst, route);
    for (guint k = 0; k < n; k++)
        l->busy_s[route[k]] += bytes * l->inv_cap[route[k]];
}

/* --- patterns --- */

typedef struct {
    const RsRefitTensor *t; /* the first member */
    guint32 tensor_idx;
    GArray *members; /* guint32 tensor indices */
    RsSourceGroups sg;
    RsPlanBuilder local; /* transfers of the first member; instantiated for each member */
} Pattern;

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

/* --- units and atoms --- */

typedef struct {
    guint pattern;
    guint group;   /* source group within the pattern */
    guint domain;  /* NVLink domain of the needers */
    RsBox box;
    guint first_needer; /* into Planner.needers */
    guint n_needers;
    guint64 bytes;      /* of one tensor */
    double weight;      /* bytes × members: the load this unit adds */
    guint order;        /* creation order, for deterministic ties */
} Unit;

/* A rank that holds an atom of a pattern after it was delivered: a possible relay. */
typedef struct {
    guint32 rank;
    guint depth;        /* domain hops from a source replica */
    gboolean staged;    /* it holds the atom in a staging buffer (a pure relay), not its shard */
    guint first_piece;  /* into Planner.relay_pieces: arrival transfer indices, one per bucket */
    guint n_pieces;
} RelaySource;

typedef struct {
    const RsRefit *refit;
    const RsPlanOptions *options;
    RsStrategy strategy;
    Loads loads;
    GPtrArray *patterns;  /* Pattern* */
    GArray *units;        /* Unit */
    GArray *needers;      /* guint32 */
    GHashTable *relays;   /* "pattern|box" → GArray of RelaySource */
    GArray *relay_pieces; /* gint64 transfer indices within a pattern's local builder */
} Planner;

static void
pattern_free(gpointer p)
{
    Pattern *pat = p;
    g_array_unref(pat->members);
    rs_source_groups_clear(&pat->sg);
    g_array_unref(pat->local.transfers);
    g_free(pat);
}

/* An atom under refinement: a box and the ranks that need all of it. */
typedef struct {
    RsBox box;
    GArray *needers; /* guint32 */
} Atom;

static void
atom_clear(gpointer p)
{
    Atom *a = p;
    if (a->needers)
        g_array_unref(a->needers);
}

static void
atoms_add_piece(GArray *atoms, const RsBox *piece, guint32 needer)
{
    g_autoptr(GArray) rest = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_array_append_val(rest, *piece);
    guint n = atoms->len;
    for (guint i = 0; i < n && rest->len > 0; i++) {
        Atom *a = &g_array_index(atoms, Atom, i);
        RsBox inter;
        if (!rs_box_intersect(&a->box, piece, &inter))
            continue;
        if (rs_box_is_equal(&inter, &a->box)) {
            g_array_append_val(a->needers, needer);
        } else {
            /* Split a: the intersection gains the needer, the rest keeps a's needers. */
            g_autoptr(GArray) outside = g_array_new(FALSE, FALSE, sizeof(RsBox));
            g_array_append_val(outside, a->box);
            rs_box_list_subtract(outside, &inter);
            GArray *old_needers = a->needers;
            for (guint k = 0; k < outside->len; k++) {
                Atom o = {g_array_index(outside, RsBox, k),
                          g_array_sized_new(FALSE, FALSE, sizeof(guint32), old_needers->len)};
                g_array_append_vals(o.needers, old_needers->data, old_needers->len);
                g_array_append_val(atoms, o);
                a = &g_array_index(atoms, Atom, i); /* the array may have moved */
            }
            a->box = inter;
            g_array_append_val(a->needers, needer);
        }
        rs_box_list_subtract(rest, &inter);
    }
    for (guint k = 0; k < rest->len; k++) {
        Atom o = {g_array_index(rest, RsBox, k), g_array_new(FALSE, FALSE, sizeof(guint32))};
        g_array_append_val(o.needers, needer);
        g_array_append_val(atoms, o);
    }
}

typedef struct {
    guint group;
    guint domain;
    guint32 rank;
    RsBox box;
} Piece;

static gint
piece_compare(gconstpointer pa, gconstpointer pb)
{
    const Piece *a = pa, *b = pb;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->domain != b->domain)
        return a->domain < b->domain ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return 0;
}

static void
add_unit(Planner *p, guint pattern, guint group, guint domain, const RsBox *box,
         const guint32 *needers, guint n_needers)
{
    Pattern *pat = g_ptr_array_index(p->patterns, pattern);
    guint64 bytes = rs_refit_tensor_get_n_bytes(pat->t, rs_box_get_n_elems(box));
    double multiplicity = pat->members->len;
    const RsSourceGroup *g = &g_array_index(pat->sg.groups, RsSourceGroup, group);
    /* Stripes: a heavy unit with several possible senders or leaders is split so each
     * stripe can take its own route. */
    guint64 stripe = rs_plan_options_get_stripe_bytes(p->options);
    /* node-aware: stripes go to different replicas. hierarchical: they also enter the
     * domain through different GPUs, so their number must not depend on the domain (the
     * same atom in two domains must split alike for one to relay it to the other). */
    guint choices = p->strategy == RS_STRATEGY_HIERARCHICAL ? MAX_STRIPES : g->n_holders;
    guint k = 1;
    /* Stripes are cut per tensor: the tensors of a pattern share routes anyway. */
    (void)multiplicity;
    if (choices > 1 && bytes > stripe) {
        double want = ceil(bytes / (double)stripe);
        k = (guint)MIN(MIN(want, (double)choices), (double)MAX_STRIPES);
    }
    g_autoptr(GArray) stripes = g_array_new(FALSE, FALSE, sizeof(RsBox));
    if (k > 1)
        rs_plan_split_box(box, pat->t, (bytes + k - 1) / k, stripes);
    else
        g_array_append_val(stripes, *box);
    for (guint s = 0; s < stripes->len; s++) {
        Unit u;
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

/* Local copies, pieces and units of one pattern. */
static gboolean
pattern_collect(Planner *p, guint pi, GError **error)
{
    Pattern *pat = g_ptr_array_index(p->patterns, pi);
    const RsRefitTensor *t = pat->t;
    rs_source_groups_build(&pat->sg, t->src);
    guint domain_size = rs_topology_get_gpus_per_nvlink_domain(p->options->topology);
    guint n_gpus = rs_topology_get_n_gpus(p->options->topology);
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(Piece));
    g_autoptr(GArray) remaining = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint i = 0; i < rs_layout_get_n_ranks(t->dst); i++) {
        guint32 rank = rs_layout_get_rank(t->dst, i);
        guint n_dst;
        const RsLocalBox *dst_boxes = rs_layout_get_boxes(t->dst, i, &n_dst);
        gint src_idx = rs_layout_find_rank(t->src, rank);
        if (n_dst > 0 && rank >= n_gpus) {
            g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_INVALID,
                        "%s: rank %u is not a GPU of topology %s (%u GPUs)", t->name, rank,
                        rs_topology_get_name(p->options->topology), n_gpus);
            return FALSE;
        }
        for (guint db = 0; db < n_dst; db++) {
            const RsBox *want = &dst_boxes[db].box;
            rs_plan_builder_emit_own(&pat->local, t, pat->tensor_idx, rank, src_idx, want,
                                     remaining);
            for (guint g = 0; g < pat->sg.groups->len && remaining->len > 0; g++) {
                const RsSourceGroup *group = &g_array_index(pat->sg.groups, RsSourceGroup, g);
                gboolean used = FALSE;
                for (guint r = 0; r < remaining->len; r++) {
                    Piece pc = {g, rank / domain_size, rank, {0}};
                    if (!rs_box_intersect(&g_array_index(remaining, RsBox, r), &group->box,
                                          &pc.box))
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
    }
    for (guint g = 0; g < pat->sg.groups->len; g++) {
        const RsSourceGroup *group = &g_array_index(pat->sg.groups, RsSourceGroup, g);
        for (guint h = 0; h < group->n_holders; h++) {
            guint32 holder = g_array_index(pat->sg.holders, guint32, group->first_holder + h);
            if (holder >= n_gpus) {
                g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_INVALID,
                            "%s: rank %u is not a GPU of topology %s (%u GPUs)", t->name,
                            holder, rs_topology_get_name(p->options->topology), n_gpus);
                return FALSE;
            }
        }
    }

    if (p->strategy == RS_STRATEGY_NODE_AWARE) {
        for (guint i = 0; i < pieces->len; i++) {
            const Piece *pc = &g_array_index(pieces, Piece, i);
            add_unit(p, pi, pc->group, pc->domain, &pc->box, &pc->rank, 1);
        }
        return TRUE;
    }
    /* hierarchical: per (group, domain), refine the pieces into atoms. */
    g_array_sort(pieces, piece_compare);
    g_autoptr(GArray) atoms = g_array_new(FALSE, FALSE, sizeof(Atom));
    g_array_set_clear_func(atoms, atom_clear);
    for (guint i = 0; i < pieces->len;) {
        const Piece *first = &g_array_index(pieces, Piece, i);
        guint j = i;
        g_array_set_size(atoms, 0);
        for (; j < pieces->len; j++) {
            const Piece *pc = &g_array_index(pieces, Piece, j);
            if (pc->group != first->group || pc->domain != first->domain)
                break;
            atoms_add_piece(atoms, &pc->box, pc->rank);
        }
        for (guint a = 0; a < atoms->len; a++) {
            Atom *atom = &g_array_index(atoms, Atom, a);
            add_unit(p, pi, first->group, first->domain, &atom->box,
                     (const guint32 *)atom->needers->data, atom->needers->len);
        }
        i = j;
    }
    return TRUE;
}

static gint
unit_compare(gconstpointer pa, gconstpointer pb)
{
    const Unit *a = pa, *b = pb;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static char *
relay_key(guint pattern, const RsBox *box)
{
    g_autofree char *text = rs_box_format(box);
    return g_strdup_printf("%u|%s", pattern, text);
}

/* Tie-break rank of a sender for a receiver: same NVLink domain, then same rail. */
static guint
affinity(const RsTopology *topo, guint32 sender, guint32 receiver)
{
    if (rs_topology_get_nvlink_domain(topo, sender) ==
        rs_topology_get_nvlink_domain(topo, receiver))
        return 0;
    if (rs_topology_get_rail(topo, sender) == rs_topology_get_rail(topo, receiver))
        return 1;
    return 2;
}

/* How an atom reaches its domain: from a sender (a replica holding it, a rank of another
 * domain that received it, or an exit: a GPU next to a replica, over NVLink, whose NIC is
 * less loaded), to an entry (a rank needing it, or another GPU of the domain whose NIC is
 * less loaded, holding it in staging while it forwards it). */
typedef struct {
    guint32 sender;   /* the rank whose NIC sends across the fabric */
    guint32 via;      /* the replica that hands the atom to an exit sender; G_MAXUINT32: none */
    gint relay;       /* index into the relay list, or -1 */
    guint32 entry;    /* the rank receiving it in the domain */
    gboolean entry_needs; /* the entry needs the atom itself */
    double cost;
    guint affinity;
} Choice;

static gboolean
choice_better(const Choice *a, const Choice *b)
{
    /* Costs within a relative 1e-9 are ties. */
    if (a->cost < b->cost * (1 - 1e-9))
        return TRUE;
    if (b->cost < a->cost * (1 - 1e-9))
        return FALSE;
    if (a->affinity != b->affinity)
        return a->affinity < b->affinity;
    if (a->entry != b->entry)
        return a->entry < b->entry;
    return a->sender < b->sender;
}

/* The @k GPUs of NVLink domain @domain with the least busy link of @kind, appended to
 * @out (guint32), skipping the ranks in @skip (sorted). */
static void
least_loaded(const Planner *p, guint domain, RsLinkKind kind, guint k, GArray *out)
{
    const RsTopology *topo = p->options->topology;
    guint size = rs_topology_get_gpus_per_nvlink_domain(topo);
    guint32 best[4];
    double best_busy[4];
    guint n = 0;
    for (guint32 g = domain * size; g < (domain + 1) * size; g++) {
        double busy = p->loads.busy_s[rs_topology_get_gpu_link(topo, g, kind)];
        guint pos = n;
        while (pos > 0 && busy < best_busy[pos - 1])
            pos--;
        if (pos >= k)
            continue;
        if (n < k)
            n++;
        for (guint j = n - 1; j > pos; j--) {
            best[j] = best[j - 1];
            best_busy[j] = best_busy[j - 1];
        }
        best[pos] = g;
        best_busy[pos] = busy;
    }
    g_array_append_vals(out, best, n);
}

static double
choice_cost(const Planner *p, const Choice *c, double load)
{
    double cost = route_cost(&p->loads, c->sender, c->entry, load);
    if (c->via != G_MAXUINT32)
        cost = MAX(cost, route_cost(&p->loads, c->via, c->sender, load));
    /* Relays of every kind (exits, entries, domain relays) must clearly relieve a link:
     * each hop couples an arrival to its upstream's progress, which link loads do not show.
     * (Preferring domain relays instead was measured slower on the shipped scenarios.) */
    if (c->relay >= 0 || c->via != G_MAXUINT32 || !c->entry_needs)
        cost *= 1 + RELAY_MARGIN;
    return cost;
}

/* Decides one unit: emits the arrival and the forwarding tree into its pattern. */
static void
decide_unit(Planner *p, const Unit *u)
{
    Pattern *pat = g_ptr_array_index(p->patterns, u->pattern);
    const RsTopology *topo = p->options->topology;
    const RsSourceGroup *g = &g_array_index(pat->sg.groups, RsSourceGroup, u->group);
    const guint32 *holders = &g_array_index(pat->sg.holders, guint32, g->first_holder);
    const guint32 *needers = &g_array_index(p->needers, guint32, u->first_needer);
    double multiplicity = pat->members->len;
    double load = u->bytes * multiplicity;
    gboolean hierarchical = p->strategy == RS_STRATEGY_HIERARCHICAL;

    GArray *relays = NULL;
    g_autofree char *key = NULL;
    if (hierarchical && p->options->domain_relays) {
        key = relay_key(u->pattern, &u->box);
        relays = g_hash_table_lookup(p->relays, key);
    }
    /* Entries: the ranks needing the atom, and (hierarchical) the GPUs of the domain whose
     * NICs receive least. */
    g_autoptr(GArray) entries = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_array_append_vals(entries, needers, u->n_needers);
    guint n_needer_entries = entries->len;
    if (hierarchical)
        least_loaded(p, u->domain, RS_LINK_NIC_INGRESS, 2, entries);
    /* Exits (hierarchical): per domain of the replicas, the GPUs whose NICs send least. */
    g_autoptr(GArray) exits = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_autoptr(GArray) exit_of = g_array_new(FALSE, FALSE, sizeof(guint32)); /* a replica next to it */
    if (hierarchical) {
        guint last_domain = G_MAXUINT;
        for (guint h = 0; h < g->n_holders; h++) {
            guint d = rs_topology_get_nvlink_domain(topo, holders[h]);
            if (d == last_domain)
                continue;
            last_domain = d;
            guint before = exits->len;
            least_loaded(p, d, RS_LINK_NIC_EGRESS, 2, exits);
            for (guint k = before; k < exits->len; k++)
                g_array_append_val(exit_of, holders[h]);
        }
    }

    Choice best = {0, G_MAXUINT32, -1, 0, TRUE, INFINITY, 3};
    for (guint ei = 0; ei < entries->len; ei++) {
        guint32 entry = g_array_index(entries, guint32, ei);
        gboolean needs = ei < n_needer_entries;
        if (!needs) {
            gboolean dup = FALSE;
            for (guint k = 0; k < u->n_needers && !dup; k++)
                dup = needers[k] == entry;
            if (dup)
                continue;
        }
        for (guint h = 0; h < g->n_holders; h++) {
            /* A holder staging its own copy would only add a hop. */
            if (holders[h] == entry && !needs)
                continue;
            Choice c = {holders[h], G_MAXUINT32, -1, entry, needs, 0,
                        affinity(topo, holders[h], entry)};
            c.cost = choice_cost(p, &c, load);
            if (choice_better(&c, &best))
                best = c;
        }
        for (guint x = 0; x < exits->len; x++) {
            guint32 exit = g_array_index(exits, guint32, x);
            guint32 via = g_array_index(exit_of, guint32, x);
            if (exit == via || exit == entry)
                continue;
            Choice c = {exit, via, -1, entry, needs, 0, affinity(topo, exit, entry)};
            c.cost = choice_cost(p, &c, load);
            if (choice_better(&c, &best))
                best = c;
        }
        for (guint r = 0; relays != NULL && r < relays->len; r++) {
            const RelaySource *rs = &g_array_index(relays, RelaySource, r);
            if (rs->depth >= MAX_RELAY_DEPTH || rs->rank == entry)
                continue;
            Choice c = {rs->rank, G_MAXUINT32, (gint)r, entry, needs, 0,
                        affinity(topo, rs->rank, entry)};
            c.cost = choice_cost(p, &c, load);
            if (choice_better(&c, &best))
                best = c;
        }
    }

    /* The path to the entry, bucket by bucket. */
    const gint64 *deps = NULL;
    guint32 flags = best.entry_needs ? 0 : RS_TRANSFER_TO_STAGING;
    guint depth = 0;
    g_autoptr(GArray) handover = g_array_new(FALSE, FALSE, sizeof(gint64));
    if (best.via != G_MAXUINT32) {
        /* The replica hands the atom to the exit over NVLink, into its staging buffer. */
        rs_plan_builder_emit_split(&pat->local, pat->t, pat->tensor_idx, best.via, best.sender, 0,
                                   RS_TRANSFER_TO_STAGING, NULL, &u->box, handover);
        route_add(&p->loads, best.via, best.sender, load);
        deps = (const gint64 *)handover->data;
        flags |= RS_TRANSFER_FROM_STAGING;
    } else if (best.relay >= 0) {
        const RelaySource *rs = &g_array_index(relays, RelaySource, best.relay);
        deps = &g_array_index(p->relay_pieces, gint64, rs->first_piece);
        flags |= rs->staged ? RS_TRANSFER_FROM_STAGING : RS_TRANSFER_FROM_DESTINATION;
        depth = rs->depth + 1;
    }
    g_autoptr(GArray) arrival = g_array_new(FALSE, FALSE, sizeof(gint64));
    rs_plan_builder_emit_split(&pat->local, pat->t, pat->tensor_idx, best.sender, best.entry, 0,
                               flags, deps, &u->box, arrival);
    route_add(&p->loads, best.sender, best.entry, load);

    /* Forwarding tree: order [entry, the needers but the entry, by rank]; the parent of
     * position i is (i - 1) / 2. An entry that does not need the atom forwards it from its
     * staging buffer; every other rank from its shard. */
    g_autofree guint32 *tree = g_new(guint32, u->n_needers + 1);
    guint n_tree = 0;
    tree[n_tree++] = best.entry;
    for (guint e = 0; e < u->n_needers; e++)
        if (needers[e] != best.entry)
            tree[n_tree++] = needers[e];
    /* The inner nodes of the tree forward twice: make them the needers whose NVLink egress
     * is least busy (insertion sort, ties by rank, so the plan stays deterministic). */
    for (guint i = 2; i < n_tree; i++) {
        guint32 v = tree[i];
        double busy = p->loads.busy_s[rs_topology_get_gpu_link(topo, v, RS_LINK_NVLINK_EGRESS)];
        guint j = i;
        while (j > 1) {
            guint32 w = tree[j - 1];
            double wb = p->loads.busy_s[rs_topology_get_gpu_link(topo, w, RS_LINK_NVLINK_EGRESS)];
            if (wb < busy || (wb == busy && w < v))
                break;
            tree[j] = w;
            j--;
        }
        tree[j] = v;
    }
    g_autoptr(GPtrArray) arrivals = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_ptr_array_add(arrivals, g_array_ref(arrival));
    for (guint i = 1; i < n_tree; i++) {
        guint parent = (i - 1) / 2;
        GArray *parent_arrival = g_ptr_array_index(arrivals, parent);
        GArray *child_arrival = g_array_new(FALSE, FALSE, sizeof(gint64));
        guint32 from = parent == 0 && !best.entry_needs ? RS_TRANSFER_FROM_STAGING
                                                         : RS_TRANSFER_FROM_DESTINATION;
        rs_plan_builder_emit_split(&pat->local, pat->t, pat->tensor_idx, tree[parent], tree[i], 0,
                                   from, (const gint64 *)parent_arrival->data, &u->box,
                                   child_arrival);
        route_add(&p->loads, tree[parent], tree[i], load);
        g_ptr_array_add(arrivals, child_arrival);
    }

    /* Every rank of the tree now holds the atom: a possible relay for other domains. */
    if (key != NULL) {
        if (relays == NULL) {
            relays = g_array_new(FALSE, FALSE, sizeof(RelaySource));
            g_hash_table_insert(p->relays, g_strdup(key), relays);
        }
        for (guint i = 0; i < n_tree; i++) {
            GArray *a = g_ptr_array_index(arrivals, i);
            RelaySource rs = {tree[i], depth, i == 0 && !best.entry_needs, p->relay_pieces->len,
                              a->len};
            g_array_append_vals(p->relay_pieces, a->data, a->len);
            g_array_append_val(relays, rs);
        }
    }
}

/* Copies a pattern's transfers for each member tensor. */
static void
instantiate(RsPlanBuilder *b, const Pattern *pat)
{
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

gboolean
rs_plan_balance_build(RsPlanBuilder *b, const RsRefit *refit, RsStrategy strategy,
                      const RsPlanOptions *options, GError **error)
{
    Planner p = {refit, options, strategy, {0}, NULL, NULL, NULL, NULL, NULL};
    loads_init(&p.loads, options->topology);
    p.patterns = g_ptr_array_new_with_free_func(pattern_free);
    p.units = g_array_new(FALSE, FALSE, sizeof(Unit));
    p.needers = g_array_new(FALSE, FALSE, sizeof(guint32));
    p.relays = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                     (GDestroyNotify)g_array_unref);
    p.relay_pieces = g_array_new(FALSE, FALSE, sizeof(gint64));

    /* Patterns: tensors sharing (source layout, destination layout, element size). */
    g_autoptr(GHashTable) by_key = g_hash_table_new_full(pattern_key_hash, pattern_key_equal,
                                                         g_free, NULL);
    for (guint32 i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        PatternKey key;
        memset(&key, 0, sizeof key);
        key.src = t->src;
        key.dst = t->dst;
        key.dtype = t->dtype;
        gpointer found = g_hash_table_lookup(by_key, &key);
        Pattern *pat;
        if (found == NULL) {
            pat = g_new0(Pattern, 1);
            pat->t = t;
            pat->tensor_idx = i;
            pat->members = g_array_new(FALSE, FALSE, sizeof(guint32));
            pat->local.transfers = g_array_new(FALSE, FALSE, sizeof(RsTransfer));
            pat->local.max_transfer_bytes = b->max_transfer_bytes;
            g_ptr_array_add(p.patterns, pat);
            g_hash_table_insert(by_key, g_memdup2(&key, sizeof key),
                                GUINT_TO_POINTER(p.patterns->len));
        } else {
            pat = g_ptr_array_index(p.patterns, GPOINTER_TO_UINT(found) - 1);
        }
        g_array_append_val(pat->members, i);
    }

    gboolean ok = TRUE;
    for (guint pi = 0; ok && pi < p.patterns->len; pi++)
        ok = pattern_collect(&p, pi, error);
    if (ok) {
        g_array_sort(p.units, unit_compare);
        for (guint u = 0; u < p.units->len; u++)
            decide_unit(&p, &g_array_index(p.units, Unit, u));
        for (guint pi = 0; pi < p.patterns->len; pi++)
            instantiate(b, g_ptr_array_index(p.patterns, pi));
    }
    g_debug("%s: %u patterns for %u tensors, %u units", rs_strategy_get_name(strategy),
            p.patterns->len, rs_refit_get_n_tensors(refit), p.units->len);

    loads_clear(&p.loads);
    g_ptr_array_unref(p.patterns);
    g_array_unref(p.units);
    g_array_unref(p.needers);
    g_hash_table_unref(p.relays);
    g_array_unref(p.relay_pieces);
    return ok;
}

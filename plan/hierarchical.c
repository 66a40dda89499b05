/* hierarchical.c — the hierarchical strategy: per destination NVLink domain, the pieces
 * its ranks need from one source group are refined into atoms (disjoint boxes, each with
 * the set of ranks needing all of it). An atom crosses the fabric once: sender and leader
 * (the entry, one of the ranks needing it or, for a sender in another domain, a GPU of
 * the domain whose NIC receives least) are chosen together to balance link loads
 * (balance.c); the leader forwards it
 * over NVLink along a binary tree to the other ranks that need it, bucket by bucket, so
 * the forwarding is pipelined. With domain relays, ranks that already hold an atom may
 * serve the identical atom to another domain (depth-limited). */
#include "plan/balance-private.h"

#include <string.h>

/* Relays across NVLink domains: how many domain hops a piece may take. */
#define MAX_RELAY_DEPTH 1

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

static gint
piece_compare(gconstpointer pa, gconstpointer pb)
{
    const RsBalancePiece *a = pa, *b = pb;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->domain != b->domain)
        return a->domain < b->domain ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return 0;
}

/* The units of pattern @pi: per (group, domain), its pieces refined into atoms. The
 * number of stripes must not depend on the domain (the same atom in two domains must
 * split alike for one to relay it to the other), so every unit may take the most. */
static gboolean
collect_units(RsBalance *p, guint pi, GError **error)
{
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(RsBalancePiece));
    if (!rs_balance_collect_pieces(p, pi, pieces, error))
        return FALSE;
    g_array_sort(pieces, piece_compare);
    g_autoptr(GArray) atoms = g_array_new(FALSE, FALSE, sizeof(Atom));
    g_array_set_clear_func(atoms, atom_clear);
    for (guint i = 0; i < pieces->len;) {
        const RsBalancePiece *first = &g_array_index(pieces, RsBalancePiece, i);
        guint j = i;
        g_array_set_size(atoms, 0);
        for (; j < pieces->len; j++) {
            const RsBalancePiece *pc = &g_array_index(pieces, RsBalancePiece, j);
            if (pc->group != first->group || pc->domain != first->domain)
                break;
            atoms_add_piece(atoms, &pc->box, pc->rank);
        }
        for (guint a = 0; a < atoms->len; a++) {
            Atom *atom = &g_array_index(atoms, Atom, a);
            rs_balance_add_unit(p, pi, first->group, first->domain, &atom->box,
                                (const guint32 *)atom->needers->data, atom->needers->len,
                                RS_BALANCE_MAX_STRIPES);
        }
        i = j;
    }
    return TRUE;
}

/* A rank that holds an atom of a pattern after it was delivered: a possible relay. */
typedef struct {
    guint32 rank;
    guint depth;       /* domain hops from a source replica */
    gboolean staged;   /* it holds the atom in a staging buffer (a pure relay), not its shard */
    guint first_piece; /* into Hierarchy.relay_pieces: arrival transfer indices, one per bucket */
    guint n_pieces;
} RelaySource;

typedef struct {
    RsBalance balance;
    GHashTable *relays;   /* "pattern|box" → GArray of RelaySource */
    GArray *relay_pieces; /* gint64 transfer indices within a pattern's local builder */
} Hierarchy;

static char *
relay_key(guint pattern, const RsBox *box)
{
    g_autofree char *text = rs_box_format(box);
    return g_strdup_printf("%u|%s", pattern, text);
}

/* The @k GPUs of the job in NVLink domain @domain with the least busy link of @kind,
 * appended to @out (guint32). */
static void
least_loaded(const RsBalance *p, guint domain, RsLinkKind kind, guint k, GArray *out)
{
    const RsTopology *topo = p->options->topology;
    guint size = rs_topology_get_gpus_per_nvlink_domain(topo);
    guint32 best[4];
    double best_busy[4];
    guint n = 0;
    for (guint32 g = domain * size; g < (domain + 1) * size; g++) {
        /* GPUs outside the job relay nothing (rs_topology_set_job_gpus). */
        if (!rs_topology_gpu_in_job(topo, g))
            continue;
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

/* What one unit's decision works with. */
typedef struct {
    RsPattern *pat;
    const RsSourceGroup *group;
    const guint32 *holders; /* the group's replicas */
    const guint32 *needers; /* the ranks needing the unit */
    double load;            /* bytes × members */
    GArray *relays;         /* (nullable) RelaySource: ranks holding the same atom */
    char *key;              /* (nullable) its relay key, with domain relays */
    GArray *entries;        /* guint32: the needers, then the domain's least-loaded NICs */
    guint n_needer_entries;
    GArray *exits;   /* guint32: per domain of the replicas, its least-loaded NICs */
    GArray *exit_of; /* guint32: a replica next to each exit */
} Decision;

/* Stage 1: the unit's pattern, group and candidate relays, entries and exits. */
static void
decision_init(Decision *d, Hierarchy *h, const RsBalanceUnit *u)
{
    RsBalance *p = &h->balance;
    const RsTopology *topo = p->options->topology;
    memset(d, 0, sizeof *d);
    d->pat = g_ptr_array_index(p->patterns, u->pattern);
    d->group = &g_array_index(d->pat->sg.groups, RsSourceGroup, u->group);
    d->holders = &g_array_index(d->pat->sg.holders, guint32, d->group->first_holder);
    d->needers = &g_array_index(p->needers, guint32, u->first_needer);
    double multiplicity = d->pat->members->len;
    d->load = u->bytes * multiplicity;
    if (p->options->domain_relays) {
        d->key = relay_key(u->pattern, &u->box);
        d->relays = g_hash_table_lookup(h->relays, d->key);
    }
    d->entries = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_array_append_vals(d->entries, d->needers, u->n_needers);
    d->n_needer_entries = d->entries->len;
    least_loaded(p, u->domain, RS_LINK_NIC_INGRESS, 2, d->entries);
    d->exits = g_array_new(FALSE, FALSE, sizeof(guint32));
    d->exit_of = g_array_new(FALSE, FALSE, sizeof(guint32));
    guint last_domain = G_MAXUINT;
    for (guint k = 0; k < d->group->n_holders; k++) {
        guint dom = rs_topology_get_nvlink_domain(topo, d->holders[k]);
        if (dom == last_domain)
            continue;
        last_domain = dom;
        guint before = d->exits->len;
        least_loaded(p, dom, RS_LINK_NIC_EGRESS, 2, d->exits);
        for (guint x = before; x < d->exits->len; x++)
            g_array_append_val(d->exit_of, d->holders[k]);
    }
}

static void
decision_clear(Decision *d)
{
    g_free(d->key);
    g_array_unref(d->entries);
    g_array_unref(d->exits);
    g_array_unref(d->exit_of);
}

/* Is @a in the NVLink domain of @b? */
static gboolean
same_domain(const RsBalance *p, guint32 a, guint32 b)
{
    const RsTopology *topo = p->options->topology;
    return rs_topology_get_nvlink_domain(topo, a) == rs_topology_get_nvlink_domain(topo, b);
}

/* Stage 2, for one entry: every replica, exit and relay as its sender. An entry that does
 * not need the atom spreads a domain's NIC ingress; a sender in the entry's own domain
 * crosses no NIC, so it only adds an NVLink hop there (one domain holding both sides
 * moved 1.25 times direct's bytes), and an exit in the entry's domain likewise. */
static void
choose_sender(const RsBalance *p, const Decision *d, guint32 entry, gboolean needs,
              RsBalanceChoice *best)
{
    for (guint k = 0; k < d->group->n_holders; k++) {
        /* A holder staging its own copy would only add a hop. */
        if ((d->holders[k] == entry || same_domain(p, d->holders[k], entry)) && !needs)
            continue;
        RsBalanceChoice c =
            rs_balance_make_choice(p, d->holders[k], G_MAXUINT32, -1, entry, needs, d->load);
        if (rs_balance_choice_better(&c, best))
            *best = c;
    }
    for (guint x = 0; x < d->exits->len; x++) {
        guint32 exit = g_array_index(d->exits, guint32, x);
        guint32 via = g_array_index(d->exit_of, guint32, x);
        if (exit == via || exit == entry || same_domain(p, exit, entry))
            continue;
        RsBalanceChoice c = rs_balance_make_choice(p, exit, via, -1, entry, needs, d->load);
        if (rs_balance_choice_better(&c, best))
            *best = c;
    }
    for (guint r = 0; d->relays != NULL && r < d->relays->len; r++) {
        const RelaySource *rs = &g_array_index(d->relays, RelaySource, r);
        if (rs->depth >= MAX_RELAY_DEPTH || rs->rank == entry ||
            (!needs && same_domain(p, rs->rank, entry)))
            continue;
        RsBalanceChoice c =
            rs_balance_make_choice(p, rs->rank, G_MAXUINT32, (gint)r, entry, needs, d->load);
        if (rs_balance_choice_better(&c, best))
            *best = c;
    }
}

/* Stage 2: the best (sender, entry) over every entry; an entry that does not need the
 * atom and is one of its needers anyway is skipped. */
static RsBalanceChoice
choose(const RsBalance *p, const Decision *d, const RsBalanceUnit *u)
{
    RsBalanceChoice best = rs_balance_choice_none();
    for (guint ei = 0; ei < d->entries->len; ei++) {
        guint32 entry = g_array_index(d->entries, guint32, ei);
        gboolean needs = ei < d->n_needer_entries;
        gboolean dup = FALSE;
        for (guint k = 0; !needs && k < u->n_needers && !dup; k++)
            dup = d->needers[k] == entry;
        if (!dup)
            choose_sender(p, d, entry, needs, &best);
    }
    return best;
}

/* Stage 3: the path to the entry, bucket by bucket (through the exit's staging buffer,
 * or from a relay's copy). Appends the arrival transfers to @arrival; returns the depth
 * in domain hops of the entry's copy. */
static guint
emit_arrival(Hierarchy *h, const Decision *d, const RsBalanceUnit *u, const RsBalanceChoice *best,
             GArray *arrival)
{
    RsPattern *pat = d->pat;
    const gint64 *deps = NULL;
    guint32 flags = best->entry_needs ? 0 : RS_TRANSFER_TO_STAGING;
    guint depth = 0;
    g_autoptr(GArray) handover = g_array_new(FALSE, FALSE, sizeof(gint64));
    if (best->via != G_MAXUINT32) {
        /* The replica hands the atom to the exit over NVLink, into its staging buffer. */
        rs_plan_builder_emit_split(&pat->local, pat->t, pat->tensor_idx, best->via, best->sender, 0,
                                   RS_TRANSFER_TO_STAGING, NULL, &u->box, handover);
        rs_link_loads_route_add(&h->balance.loads, best->via, best->sender, d->load);
        deps = (const gint64 *)handover->data;
        flags |= RS_TRANSFER_FROM_STAGING;
    } else if (best->relay >= 0) {
        const RelaySource *rs = &g_array_index(d->relays, RelaySource, best->relay);
        deps = &g_array_index(h->relay_pieces, gint64, rs->first_piece);
        flags |= rs->staged ? RS_TRANSFER_FROM_STAGING : RS_TRANSFER_FROM_DESTINATION;
        depth = rs->depth + 1;
    }
    rs_plan_builder_emit_split(&pat->local, pat->t, pat->tensor_idx, best->sender, best->entry, 0,
                               flags, deps, &u->box, arrival);
    rs_link_loads_route_add(&h->balance.loads, best->sender, best->entry, d->load);
    return depth;
}

/* Stage 4: the forwarding tree's order, [entry, the needers but the entry]; the parent of
 * position i is (i - 1) / 2. The inner nodes forward twice: they are the needers whose
 * NVLink egress is least busy (insertion sort, ties by rank, so the plan stays
 * deterministic). Returns the number of ranks in @tree. */
static guint
tree_order(const RsBalance *p, const Decision *d, const RsBalanceUnit *u, guint32 entry,
           guint32 *tree)
{
    const RsTopology *topo = p->options->topology;
    guint n_tree = 0;
    tree[n_tree++] = entry;
    for (guint e = 0; e < u->n_needers; e++)
        if (d->needers[e] != entry)
            tree[n_tree++] = d->needers[e];
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
    return n_tree;
}

/* Stage 5: the forwarding along the tree. An entry that does not need the atom forwards
 * it from its staging buffer; every other rank from its shard. @arrivals holds the entry's
 * arrival and receives each rank's, in tree order. */
static void
emit_tree(Hierarchy *h, const Decision *d, const RsBalanceUnit *u, const RsBalanceChoice *best,
          const guint32 *tree, guint n_tree, GPtrArray *arrivals)
{
    RsPattern *pat = d->pat;
    for (guint i = 1; i < n_tree; i++) {
        guint parent = (i - 1) / 2;
        GArray *parent_arrival = g_ptr_array_index(arrivals, parent);
        GArray *child_arrival = g_array_new(FALSE, FALSE, sizeof(gint64));
        guint32 from = parent == 0 && !best->entry_needs ? RS_TRANSFER_FROM_STAGING
                                                         : RS_TRANSFER_FROM_DESTINATION;
        rs_plan_builder_emit_split(&pat->local, pat->t, pat->tensor_idx, tree[parent], tree[i], 0,
                                   from, (const gint64 *)parent_arrival->data, &u->box,
                                   child_arrival);
        rs_link_loads_route_add(&h->balance.loads, tree[parent], tree[i], d->load);
        g_ptr_array_add(arrivals, child_arrival);
    }
}

/* Stage 6: every rank of the tree now holds the atom: a possible relay for other
 * domains. */
static void
record_relays(Hierarchy *h, Decision *d, const RsBalanceChoice *best, guint depth,
              const guint32 *tree, guint n_tree, GPtrArray *arrivals)
{
    if (d->key == NULL)
        return;
    if (d->relays == NULL) {
        d->relays = g_array_new(FALSE, FALSE, sizeof(RelaySource));
        g_hash_table_insert(h->relays, g_strdup(d->key), d->relays);
    }
    for (guint i = 0; i < n_tree; i++) {
        GArray *a = g_ptr_array_index(arrivals, i);
        RelaySource rs = {tree[i], depth, i == 0 && !best->entry_needs, h->relay_pieces->len,
                          a->len};
        g_array_append_vals(h->relay_pieces, a->data, a->len);
        g_array_append_val(d->relays, rs);
    }
}

/* Decides one unit: emits the arrival and the forwarding tree into its pattern. */
static void
decide_unit(Hierarchy *h, const RsBalanceUnit *u)
{
    Decision d;
    decision_init(&d, h, u);
    RsBalanceChoice best = choose(&h->balance, &d, u);
    g_autoptr(GArray) arrival = g_array_new(FALSE, FALSE, sizeof(gint64));
    guint depth = emit_arrival(h, &d, u, &best, arrival);
    g_autofree guint32 *tree = g_new(guint32, u->n_needers + 1);
    guint n_tree = tree_order(&h->balance, &d, u, best.entry, tree);
    g_autoptr(GPtrArray) arrivals = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_ptr_array_add(arrivals, g_array_ref(arrival));
    emit_tree(h, &d, u, &best, tree, n_tree, arrivals);
    record_relays(h, &d, &best, depth, tree, n_tree, arrivals);
    decision_clear(&d);
}

gboolean
rs_plan_hierarchical_build(RsPlanBuilder *b, const RsRefit *refit, const RsPlanOptions *options,
                           GError **error)
{
    Hierarchy h;
    rs_balance_init(&h.balance, refit, RS_STRATEGY_HIERARCHICAL, options, b->max_transfer_bytes,
                    b->boxes);
    h.relays =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
    h.relay_pieces = g_array_new(FALSE, FALSE, sizeof(gint64));
    RsBalance *p = &h.balance;
    gboolean ok = TRUE;
    for (guint pi = 0; ok && pi < p->patterns->len; pi++)
        ok = collect_units(p, pi, error);
    if (ok) {
        rs_balance_sort_units(p);
        for (guint u = 0; u < p->units->len; u++)
            decide_unit(&h, &g_array_index(p->units, RsBalanceUnit, u));
        rs_balance_instantiate(p, b);
    }
    g_hash_table_unref(h.relays);
    g_array_unref(h.relay_pieces);
    rs_balance_clear(p);
    return ok;
}

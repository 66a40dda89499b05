/* node-aware.c — the node-aware strategy: each piece a destination needs (minus what it
 * holds) comes from the source replica whose route is least loaded after adding it (a
 * replica in the destination's NVLink domain first on ties, then one on its rail). Pieces
 * are decided largest first over the whole refit (balance.c); pieces above the stripe
 * bound are split into stripes over the replicas, chosen independently. */
#include "plan/balance-private.h"

/* The units of pattern @pi: one per piece (or its stripes), received by the rank that
 * needs it. */
static gboolean
collect_units(RsBalance *p, guint pi, GError **error)
{
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(RsBalancePiece));
    if (!rs_balance_collect_pieces(p, pi, pieces, error))
        return FALSE;
    RsPattern *pat = g_ptr_array_index(p->patterns, pi);
    for (guint i = 0; i < pieces->len; i++) {
        const RsBalancePiece *pc = &g_array_index(pieces, RsBalancePiece, i);
        const RsSourceGroup *g = &g_array_index(pat->sg.groups, RsSourceGroup, pc->group);
        rs_balance_add_unit(p, pi, pc->group, pc->domain, &pc->box, &pc->rank, 1, g->n_holders);
    }
    return TRUE;
}

/* Sends a unit from its least-loaded replica to the rank needing it. */
static void
decide_unit(RsBalance *p, const RsBalanceUnit *u)
{
    RsPattern *pat = g_ptr_array_index(p->patterns, u->pattern);
    const RsSourceGroup *g = &g_array_index(pat->sg.groups, RsSourceGroup, u->group);
    const guint32 *holders = &g_array_index(pat->sg.holders, guint32, g->first_holder);
    guint32 needer = g_array_index(p->needers, guint32, u->first_needer);
    double multiplicity = pat->members->len;
    double load = u->bytes * multiplicity;
    RsBalanceChoice best = rs_balance_choice_none();
    for (guint h = 0; h < g->n_holders; h++) {
        RsBalanceChoice c =
            rs_balance_make_choice(p, holders[h], G_MAXUINT32, -1, needer, TRUE, load);
        if (rs_balance_choice_better(&c, &best))
            best = c;
    }
    rs_plan_builder_emit_split(&pat->local, pat->t, pat->tensor_idx, best.sender, best.entry, 0, 0,
                               NULL, &u->box, NULL);
    rs_link_loads_route_add(&p->loads, best.sender, best.entry, load);
}

gboolean
rs_plan_node_aware_build(RsPlanBuilder *b, const RsRefit *refit, const RsPlanOptions *options,
                         GError **error)
{
    RsBalance p;
    rs_balance_init(&p, refit, RS_STRATEGY_NODE_AWARE, options, b->max_transfer_bytes, b->boxes);
    gboolean ok = TRUE;
    for (guint pi = 0; ok && pi < p.patterns->len; pi++)
        ok = collect_units(&p, pi, error);
    if (ok) {
        rs_balance_sort_units(&p);
        for (guint u = 0; u < p.units->len; u++)
            decide_unit(&p, &g_array_index(p.units, RsBalanceUnit, u));
        rs_balance_instantiate(&p, b);
    }
    rs_balance_clear(&p);
    return ok;
}

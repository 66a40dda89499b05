/* balance-private.h — the balance machinery node-aware.c and hierarchical.c share: link
 * loads, patterns (tensors planned once for their layouts), units of bytes to place,
 * sender choices and their costs. See balance.c for the model. */
#pragma once

#include "plan/plan-private.h"

G_BEGIN_DECLS

/* The most stripes one unit is cut into. */
#define RS_BALANCE_MAX_STRIPES 64

/* Per directed link of the topology: the bytes planned over it divided by its capacity
 * (seconds of busy time). */
typedef struct {
    const RsTopology *topo;
    guint n_links;
    double *busy_s;  /* per link: planned bytes / capacity */
    double *inv_cap; /* per link: 1 / capacity */
} RsLinkLoads;

/* Tensors with the same (source layout, destination layout, element size): planned once
 * through their first member, then copied for each. */
typedef struct {
    const RsRefitTensor *t; /* the first member */
    guint32 tensor_idx;
    GArray *members; /* guint32 tensor indices */
    RsSourceGroups sg;
    RsPlanBuilder local; /* transfers of the first member; instantiated for each member */
} RsPattern;

/* Bytes one decision places: a box of one source group that ranks of one NVLink domain
 * need (node-aware: one rank; hierarchical: every rank needing the whole atom). */
typedef struct {
    guint pattern;
    guint group;  /* source group within the pattern */
    guint domain; /* NVLink domain of the needers */
    RsBox box;
    guint first_needer; /* into RsBalance.needers */
    guint n_needers;
    guint64 bytes; /* of one tensor */
    double weight; /* bytes × members: the load this unit adds */
    guint order;   /* creation order, for deterministic ties */
} RsBalanceUnit;

/* A box one destination rank needs from one source group, minus what it holds. */
typedef struct {
    guint group;
    guint domain;
    guint32 rank;
    RsBox box;
} RsBalancePiece;

/* How a unit reaches its domain: from a sender (a replica holding it, a rank of another
 * domain that received it, or an exit: a GPU next to a replica, over NVLink, whose NIC is
 * less loaded), to an entry (a rank needing it, or another GPU of the domain whose NIC is
 * less loaded, holding it in staging while it forwards it). */
typedef struct {
    guint32 sender;       /* the rank whose NIC sends across the fabric */
    guint32 via;          /* the replica that hands the atom to an exit sender; G_MAXUINT32: none */
    gint relay;           /* index into the relay list, or -1 */
    guint32 entry;        /* the rank receiving it in the domain */
    gboolean entry_needs; /* the entry needs the atom itself */
    double cost;
    guint affinity;
    /* hierarchical, a source replica or an exit sending (not a domain relay): the busy
     * time of the NIC egress its route leaves through, after adding the unit, and the
     * unit's own share of it, seconds; both 0 for a route crossing no NIC or otherwise */
    double nic_egress_s;
    double unit_nic_s;
} RsBalanceChoice;

typedef struct {
    const RsRefit *refit;
    const RsPlanOptions *options; /* with a topology */
    RsStrategy strategy;
    RsLinkLoads loads;
    GPtrArray *patterns; /* RsPattern* */
    GArray *units;       /* RsBalanceUnit */
    GArray *needers;     /* guint32 */
} RsBalance;

/* Sets up @p for @refit: link loads of options->topology (not NULL) and the patterns, each
 * with its builder splitting to @max_transfer_bytes and storing its boxes in @boxes (the
 * plan's builder's table, borrowed: rs_balance_instantiate() then copies the patterns'
 * transfers with their box pointers as they are). */
void rs_balance_init(RsBalance *p, const RsRefit *refit, RsStrategy strategy,
                     const RsPlanOptions *options, guint64 max_transfer_bytes, GHashTable *boxes);
void rs_balance_clear(RsBalance *p);

/* Busiest link of the route src → dst after adding @bytes (0 for a local copy). */
double rs_link_loads_route_cost(const RsLinkLoads *l, guint32 src, guint32 dst, double bytes);
void rs_link_loads_route_add(RsLinkLoads *l, guint32 src, guint32 dst, double bytes);

/* Pattern @pi: its source groups, the local copies of what destinations hold themselves,
 * and the pieces (RsBalancePiece) they need from others, appended to @pieces.
 * @error: RS_PLAN_ERROR_INVALID for a rank that is not a GPU of the topology,
 * RS_PLAN_ERROR_UNCOVERED for elements no source holds. */
gboolean rs_balance_collect_pieces(RsBalance *p, guint pi, GArray *pieces, GError **error);

/* Adds the unit(s) of @box: a box above the stripe bound with more than one of @choices
 * (senders or entries) is cut into stripes, each its own unit. */
void rs_balance_add_unit(RsBalance *p, guint pattern, guint group, guint domain, const RsBox *box,
                         const guint32 *needers, guint n_needers, guint choices);

/* Units heaviest first, ties in creation order: the order they are decided in. */
void rs_balance_sort_units(RsBalance *p);

/* Tie-break rank of a sender for a receiver: 0 same NVLink domain, 1 same rail, 2 other. */
guint rs_balance_affinity(const RsTopology *topo, guint32 sender, guint32 receiver);

/* The busiest link of @c's routes after adding @load, raised by the relay margin for
 * anything but a replica sending straight to a rank needing the unit. */
double rs_balance_choice_cost(const RsBalance *p, const RsBalanceChoice *c, double load);

/* No choice yet: worse than any. */
RsBalanceChoice rs_balance_choice_none(void);

/* A candidate (sender, entry) with its affinity and cost (rs_balance_choice_cost()) for
 * @load; @via G_MAXUINT32 and @relay -1 when unused. */
RsBalanceChoice rs_balance_make_choice(const RsBalance *p, guint32 sender, guint32 via, gint relay,
                                       guint32 entry, gboolean needs, double load);

/* Is @a better than @b: lower cost (relative 1e-9 ties), then affinity; then, where both
 * carry a NIC egress load (nic_egress_s, hierarchical only), the one whose NIC would still
 * be below the other's before the unit (lower by more than the unit's own busy time);
 * then lower entry, then lower sender. Not a strict weak ordering: ties within one unit
 * do not chain (a ~ b and b ~ c with c clearly below a), and a choice without NIC load
 * skips that step, so the best of a set depends on the order it is scanned in. Each
 * caller scans in one fixed order (hierarchical.c: per entry, its holders, exits, then
 * relays, as built; node-aware.c: its senders), so plans are deterministic; they are not
 * independent of that order. */
gboolean rs_balance_choice_better(const RsBalanceChoice *a, const RsBalanceChoice *b);

/* Appends every pattern's transfers to @b, once per member tensor. */
void rs_balance_instantiate(const RsBalance *p, RsPlanBuilder *b);

G_END_DECLS

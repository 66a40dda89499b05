/* policy.h — the strategy policy: which candidates to plan for the rows asked for, which
 * relay mode the hierarchical row shows, and what the auto row picks and why.
 *
 * A row per strategy asked for and an auto row may be requested. The candidates are the
 * strategies of those rows (hierarchical in the relay modes asked for: without domain
 * relays, with them, or both), and every in_auto candidate of rs_auto_get_candidates() when the
 * auto row is asked for. Each candidate is planned and evaluated by a caller's cost model
 * (RsPlanEvaluateFunc: the flow-level simulator or the first-order estimate, in sim/);
 * the hierarchical row then shows the faster of its relay modes, and the auto row the
 * fastest candidate, with the reason.
 */
#pragma once

#include <glib.h>

#include "plan/auto.h"
#include "plan/plan.h"

G_BEGIN_DECLS

/* Which relay modes of the hierarchical strategy its row tries. */
typedef enum {
    RS_POLICY_RELAYS_OFF,  /* every NVLink domain pulls from the sources */
    RS_POLICY_RELAYS_ON,   /* domains forward to each other (a tree of domains) */
    RS_POLICY_RELAYS_AUTO, /* both, the faster is shown */
} RsPolicyRelays;

/* The rows asked for. */
typedef struct {
    gboolean row[RS_STRATEGY_N]; /* a row per strategy */
    gboolean auto_row;           /* the auto row: every candidate tried */
    RsPolicyRelays relays;       /* the hierarchical row's relay modes (the auto row tries both) */
    guint n_threads;             /* candidates planned and evaluated at once (0 or 1: one at
                                  * a time; rs_auto_build_plan()) */
} RsPolicyRequest;

/* One row of the result: which evaluated candidate it shows. */
typedef struct {
    RsStrategy strategy; /* the candidate's strategy */
    const char *label;   /* (transfer none) the row's name: the strategy's, or "auto" */
    const char *note;    /* (transfer none) (nullable) hierarchical: "domain relays" or "no
                          * domain relays"; auto: the chosen candidate's label */
    guint candidate;     /* index into RsPolicyResult.evaluated.candidates */
} RsPolicyRow;

typedef struct {
    RsAutoResult evaluated; /* every candidate in the order tried, its predicted time, and
                             * the fastest (chosen) */
    guint n_rows;
    RsPolicyRow rows[RS_STRATEGY_N + 1]; /* nccl-broadcast, ours, the peers', gather-broadcast,
                                          * the auto row last */
    char *hierarchical_note; /* (nullable) when both relay modes were tried: which won and
                              * both times, e.g. "hierarchical: domains relay to each other
                              * (tree of NVLink domains 0.897 s, every domain from the
                              * sources 1.04 s)" */
    char *auto_reason;       /* (nullable) with the auto row: rs_auto_result_format_reason() */
} RsPolicyResult;

/**
 * rs_policy_request_init_all:
 * @request: (out caller-allocates): the default rows: each of ours (direct, node-aware,
 *   hierarchical), the nccl-broadcast baseline (rs_strategy_is_default) and the auto row,
 *   relays auto
 */
void rs_policy_request_init_all(RsPolicyRequest *request);

/**
 * rs_policy_request_init_every:
 * @request: (out caller-allocates): as rs_policy_request_init_all() plus a row for each
 *   peer's strategy (m2n, m2n-direct, checkpoint-engine, rdma-p2p); the gather-broadcast
 *   strawman only by name
 */
void rs_policy_request_init_every(RsPolicyRequest *request);

/**
 * rs_policy_get_candidates:
 * @request: the rows asked for
 * @out: (out caller-allocates) (array fixed-size=RS_AUTO_MAX_CANDIDATES): the candidates,
 *   in the order of rs_auto_get_candidates()
 *
 * Returns: how many, 0 when no row is asked for.
 */
guint rs_policy_get_candidates(const RsPolicyRequest *request, RsAutoCandidate *out);

/**
 * rs_policy_pick_rows:
 * @request: the rows asked for, the same that chose the candidates of @result->evaluated
 * @result: (inout): @result->evaluated filled by rs_auto_build_plan() over
 *   rs_policy_get_candidates(@request); the rows and notes are set (the notes owned by
 *   @result, freed by rs_policy_result_clear())
 *
 * The hierarchical row shows the relay mode with the lower predicted time (ties: without
 * relays); the auto row the chosen candidate. Deterministic.
 */
void rs_policy_pick_rows(const RsPolicyRequest *request, RsPolicyResult *result);

/**
 * rs_policy_run:
 * @refit: the refit
 * @options: planner options; domain_relays is set per candidate
 * @request: the rows asked for; at least one
 * @evaluate: the cost model, called once per candidate: in candidate order, or from
 *   @request->n_threads threads at once (then it must be thread-safe)
 * @user_data: passed to @evaluate
 * @result: (out caller-allocates): every candidate's time, the rows and the notes; clear
 *   it with rs_policy_result_clear() whether or not this succeeds
 * @error: the first planning error (RS_PLAN_ERROR) or @evaluate's error
 *
 * Plans and evaluates rs_policy_get_candidates(@request), @request->n_threads at a time
 * (rs_auto_build_plan()), then rs_policy_pick_rows(). Deterministic when @evaluate is,
 * whatever the number of threads.
 *
 * Returns: (transfer full): the fastest candidate's plan, or NULL on error.
 */
RsPlan *rs_policy_run(const RsRefit *refit, const RsPlanOptions *options,
                      const RsPolicyRequest *request, RsPlanEvaluateFunc evaluate,
                      gpointer user_data, RsPolicyResult *result, GError **error);

/** rs_policy_result_clear: frees the notes of @result (zeroed or filled); keeps it usable. */
void rs_policy_result_clear(RsPolicyResult *result);

G_END_DECLS

/* auto.h — the `auto` strategy: plan with every candidate strategy, evaluate each with a
 * cost model (the flow-level simulator or the first-order estimate), keep the fastest.
 */
#pragma once

#include <glib.h>

#include "plan/plan.h"

G_BEGIN_DECLS

#define RS_AUTO_MAX_CANDIDATES 16

typedef struct {
    const char *label;      /* "hierarchical+relays" */
    RsStrategy strategy;
    gboolean domain_relays; /* see RsPlanOptions */
    gboolean in_auto;       /* auto may pick it: ours and the nccl-broadcast baseline, not the
                             * peers' algorithms or the strawman */
} RsAutoCandidate;

/**
 * RsPlanEvaluateFunc:
 * @plan: a candidate plan
 * @candidate: which candidate it is
 * @index: its position among the candidates tried (rs_auto_build_plan()'s order, the
 *   too-large ones skipped included), so that an evaluator called from several threads
 *   can keep its evaluations in that order
 * @user_data: the evaluator's state
 * @predicted_s: (out): its predicted time, seconds
 * @error: set on failure
 *
 * Returns: TRUE on success.
 */
typedef gboolean (*RsPlanEvaluateFunc)(const RsPlan *plan, const RsAutoCandidate *candidate,
                                       guint index, gpointer user_data, double *predicted_s,
                                       GError **error);

typedef struct {
    guint n_candidates;
    RsAutoCandidate candidates[RS_AUTO_MAX_CANDIDATES];
    double predicted_s[RS_AUTO_MAX_CANDIDATES];
    guint chosen; /* index of the fastest */
    /* Peers' candidates (not in auto's choice) whose plan was too large to build on this
     * machine (RS_PLAN_ERROR_TOO_LARGE): left out of the candidates, with the message. */
    guint n_skipped;
    RsAutoCandidate skipped[RS_AUTO_MAX_CANDIDATES];
    char skipped_reason[RS_AUTO_MAX_CANDIDATES][512];
} RsAutoResult;

/**
 * rs_auto_get_candidates:
 * @n_out: (out): how many
 *
 * Returns: (transfer none) (array length=n_out): every candidate, in order: nccl-broadcast,
 * direct, node-aware, hierarchical, hierarchical with domain relays (auto tries these:
 * in_auto), then the peers' m2n, m2n-direct, checkpoint-engine, rdma-p2p and the
 * gather-broadcast strawman.
 */
const RsAutoCandidate *rs_auto_get_candidates(guint *n_out);

/**
 * rs_auto_build_plan:
 * @refit: the refit
 * @options: plan options; domain_relays is set per candidate
 * @candidates: (array length=n_candidates) (nullable): the candidates to try, at most
 *   RS_AUTO_MAX_CANDIDATES; NULL tries every one of rs_auto_get_candidates()
 * @n_candidates: their number
 * @evaluate: the cost model; with @n_threads > 1 it is called from that many threads at
 *   once and must be thread-safe (rs_evaluator_evaluate() is)
 * @user_data: passed to @evaluate
 * @n_threads: how many candidates are planned and evaluated at once (0 or 1: one at a
 *   time, in order, on the calling thread; one plan in memory besides the best); each
 *   more thread holds one more plan and its evaluation's memory. With several threads
 *   the candidates with pipelined relays (domain relays, nccl-broadcast,
 *   checkpoint-engine), whose simulation takes longest, start first
 * @result: (out caller-allocates): every candidate's predicted time and the choice
 * @error: the first planning or evaluation error in candidate order, whatever
 *   @n_threads (the candidates before a failed one are still run, so the error is the one
 *   a single thread reports; the later ones not yet started are not run)
 *
 * Builds and evaluates each candidate.
 * The choice is the fastest candidate with in_auto set (the fastest of all when none is);
 * ties go to the earlier candidate. Deterministic when @evaluate is, whatever
 * @n_threads: @result lists the candidates in the order tried. A candidate without
 * in_auto (a peer's strategy shown beside ours) whose plan is RS_PLAN_ERROR_TOO_LARGE to
 * build is skipped (result->skipped, with the message) rather than failing the others.
 *
 * Returns: (transfer full): the chosen plan, or NULL on error.
 */
RsPlan *rs_auto_build_plan(const RsRefit *refit, const RsPlanOptions *options,
                           const RsAutoCandidate *candidates, guint n_candidates,
                           RsPlanEvaluateFunc evaluate, gpointer user_data, guint n_threads,
                           RsAutoResult *result, GError **error);

/**
 * rs_auto_result_format_reason:
 * The others listed are the candidates auto chose among (in_auto), fastest first.
 *
 * Returns: (transfer full): why auto chose what it chose, e.g. "hierarchical+relays
 * 0.897 s; node-aware 1.04 s (+16%); direct 1.04 s (+16%); gather-broadcast 29.2 s (+3158%)".
 */
char *rs_auto_result_format_reason(const RsAutoResult *result);

G_END_DECLS

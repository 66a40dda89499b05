/* policy.c — the strategy policy (policy.h): candidates for the rows asked for, the
 * hierarchical row's relay mode, the auto row and its reason. */
#include "plan/policy.h"

#include <string.h>

void
rs_policy_request_init_all(RsPolicyRequest *request)
{
    memset(request, 0, sizeof *request);
    for (guint s = 0; s < RS_STRATEGY_N; s++)
        request->row[s] = rs_strategy_is_default((RsStrategy)s);
    request->auto_row = TRUE;
    request->relays = RS_POLICY_RELAYS_AUTO;
}

void
rs_policy_request_init_every(RsPolicyRequest *request)
{
    rs_policy_request_init_all(request);
    for (guint s = 0; s < RS_STRATEGY_N; s++)
        request->row[s] = rs_strategy_get_kind((RsStrategy)s) != RS_STRATEGY_KIND_STRAWMAN;
}

/* The order rows are shown in: the baseline, ours, the peers', the strawman. */
static const RsStrategy row_order[RS_STRATEGY_N] = {
    RS_STRATEGY_NCCL_BROADCAST, RS_STRATEGY_DIRECT,     RS_STRATEGY_NODE_AWARE,
    RS_STRATEGY_HIERARCHICAL,   RS_STRATEGY_M2N,        RS_STRATEGY_M2N_DIRECT,
    RS_STRATEGY_CHECKPOINT_ENGINE, RS_STRATEGY_RDMA_P2P, RS_STRATEGY_GATHER_BROADCAST,
};

/* Does the hierarchical row try @candidate's relay mode? */
static gboolean
relays_wanted(RsPolicyRelays relays, const RsAutoCandidate *candidate)
{
    if (relays == RS_POLICY_RELAYS_AUTO)
        return TRUE;
    return candidate->domain_relays == (relays == RS_POLICY_RELAYS_ON);
}

guint
rs_policy_get_candidates(const RsPolicyRequest *request, RsAutoCandidate *out)
{
    guint n_all;
    const RsAutoCandidate *all = rs_auto_get_candidates(&n_all);
    guint n = 0;
    for (guint c = 0; c < n_all; c++) {
        gboolean wanted = (request->auto_row && all[c].in_auto) || request->row[all[c].strategy];
        if (all[c].strategy == RS_STRATEGY_HIERARCHICAL && !request->auto_row &&
            !relays_wanted(request->relays, &all[c]))
            wanted = FALSE;
        if (wanted)
            out[n++] = all[c];
    }
    return n;
}

/* The evaluated candidate of @strategy with relays @domain_relays, or -1. */
static gint
find_candidate(const RsAutoResult *evaluated, RsStrategy strategy, gboolean domain_relays)
{
    for (guint i = 0; i < evaluated->n_candidates; i++)
        if (evaluated->candidates[i].strategy == strategy &&
            (strategy != RS_STRATEGY_HIERARCHICAL ||
             evaluated->candidates[i].domain_relays == domain_relays))
            return (gint)i;
    return -1;
}

/* The hierarchical row: the faster of its relay modes, and when both ran, a note that
 * names the winner and both times. */
static RsPolicyRow
hierarchical_row(const RsAutoResult *evaluated, char **note_out)
{
    gint star = find_candidate(evaluated, RS_STRATEGY_HIERARCHICAL, FALSE);
    gint tree = find_candidate(evaluated, RS_STRATEGY_HIERARCHICAL, TRUE);
    g_assert(star >= 0 || tree >= 0);
    gboolean use_tree = star < 0;
    if (star >= 0 && tree >= 0) {
        double star_s = evaluated->predicted_s[star], tree_s = evaluated->predicted_s[tree];
        use_tree = tree_s < star_s;
        *note_out = g_strdup_printf(
            "hierarchical: %s (tree of NVLink domains %.4g s, every domain from the "
            "sources %.4g s)",
            use_tree ? "domains relay to each other" : "every domain pulls from the sources",
            tree_s, star_s);
    }
    RsPolicyRow row = {RS_STRATEGY_HIERARCHICAL, "hierarchical",
                       use_tree ? "domain relays" : "no domain relays",
                       (guint)(use_tree ? tree : star)};
    return row;
}

void
rs_policy_pick_rows(const RsPolicyRequest *request, RsPolicyResult *result)
{
    const RsAutoResult *evaluated = &result->evaluated;
    result->n_rows = 0;
    for (guint k = 0; k < RS_STRATEGY_N; k++) {
        RsStrategy s = row_order[k];
        if (!request->row[s])
            continue;
        RsPolicyRow row;
        if (s == RS_STRATEGY_HIERARCHICAL) {
            g_clear_pointer(&result->hierarchical_note, g_free);
            row = hierarchical_row(evaluated, &result->hierarchical_note);
        } else {
            gint c = find_candidate(evaluated, (RsStrategy)s, FALSE);
            if (c < 0) {
                g_assert(evaluated->n_skipped > 0); /* its plan was too large to build */
                continue;
            }
            row = (RsPolicyRow){(RsStrategy)s, rs_strategy_get_name((RsStrategy)s), NULL, (guint)c};
        }
        result->rows[result->n_rows++] = row;
    }
    if (request->auto_row) {
        const RsAutoCandidate *chosen = &evaluated->candidates[evaluated->chosen];
        RsPolicyRow row = {chosen->strategy, "auto", chosen->label, evaluated->chosen};
        result->rows[result->n_rows++] = row;
        g_free(result->auto_reason);
        result->auto_reason = rs_auto_result_format_reason(evaluated);
    }
}

RsPlan *
rs_policy_run(const RsRefit *refit, const RsPlanOptions *options, const RsPolicyRequest *request,
              RsPlanEvaluateFunc evaluate, gpointer user_data, RsPolicyResult *result,
              GError **error)
{
    memset(result, 0, sizeof *result);
    RsAutoCandidate tried[RS_AUTO_MAX_CANDIDATES];
    guint n_tried = rs_policy_get_candidates(request, tried);
    g_return_val_if_fail(n_tried > 0, NULL);
    RsPlan *best = rs_auto_build_plan(refit, options, tried, n_tried, evaluate, user_data,
                                      request->n_threads, &result->evaluated, error);
    if (best == NULL)
        return NULL;
    rs_policy_pick_rows(request, result);
    return best;
}

void
rs_policy_result_clear(RsPolicyResult *result)
{
    g_clear_pointer(&result->hierarchical_note, g_free);
    g_clear_pointer(&result->auto_reason, g_free);
}

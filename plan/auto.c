/* auto.c — try every strategy, keep the fastest under the given cost model. */
#include "plan/auto.h"

#include <math.h>

static const RsAutoCandidate candidates[] = {
    {"nccl-broadcast", RS_STRATEGY_NCCL_BROADCAST, FALSE, TRUE},
    {"direct", RS_STRATEGY_DIRECT, FALSE, TRUE},
    {"node-aware", RS_STRATEGY_NODE_AWARE, FALSE, TRUE},
    {"hierarchical", RS_STRATEGY_HIERARCHICAL, FALSE, TRUE},
    {"hierarchical+relays", RS_STRATEGY_HIERARCHICAL, TRUE, TRUE},
    {"m2n", RS_STRATEGY_M2N, FALSE, FALSE},
    {"m2n-direct", RS_STRATEGY_M2N_DIRECT, FALSE, FALSE},
    {"checkpoint-engine", RS_STRATEGY_CHECKPOINT_ENGINE, FALSE, FALSE},
    {"rdma-p2p", RS_STRATEGY_RDMA_P2P, FALSE, FALSE},
    {"gather-broadcast", RS_STRATEGY_GATHER_BROADCAST, FALSE, FALSE},
};

const RsAutoCandidate *
rs_auto_get_candidates(guint *n_out)
{
    *n_out = G_N_ELEMENTS(candidates);
    return candidates;
}

RsPlan *
rs_auto_build_plan(const RsRefit *refit, const RsPlanOptions *options,
                   const RsAutoCandidate *tried, guint n_tried, RsPlanEvaluateFunc evaluate,
                   gpointer user_data, RsAutoResult *result, GError **error)
{
    g_return_val_if_fail(options != NULL && evaluate != NULL, NULL);
    if (tried == NULL) {
        tried = candidates;
        n_tried = G_N_ELEMENTS(candidates);
    }
    g_return_val_if_fail(n_tried >= 1 && n_tried <= RS_AUTO_MAX_CANDIDATES, NULL);
    result->n_candidates = 0;
    result->chosen = 0;
    result->n_skipped = 0;
    gboolean any_in_auto = FALSE;
    for (guint c = 0; c < n_tried; c++)
        any_in_auto = any_in_auto || tried[c].in_auto;
    g_autoptr(RsPlan) best = NULL;
    for (guint c = 0; c < n_tried; c++) {
        RsPlanOptions o = *options;
        o.domain_relays = tried[c].domain_relays;
        g_autoptr(GError) local = NULL;
        g_autoptr(RsPlan) plan = rs_plan_build_full(refit, tried[c].strategy, &o, &local);
        if (plan == NULL && any_in_auto && !tried[c].in_auto &&
            g_error_matches(local, RS_PLAN_ERROR, RS_PLAN_ERROR_TOO_LARGE)) {
            /* A peer shown beside ours that this machine cannot build: the others go on. */
            guint k = result->n_skipped++;
            result->skipped[k] = tried[c];
            g_strlcpy(result->skipped_reason[k], local->message, sizeof result->skipped_reason[k]);
            continue;
        }
        if (plan == NULL) {
            g_propagate_error(error, g_steal_pointer(&local));
            return NULL;
        }
        double t_s;
        if (!evaluate(plan, &tried[c], user_data, &t_s, error))
            return NULL;
        guint i = result->n_candidates++;
        result->candidates[i] = tried[c];
        result->predicted_s[i] = t_s;
        if (any_in_auto && !tried[c].in_auto)
            continue;
        if (best == NULL || t_s < result->predicted_s[result->chosen]) {
            result->chosen = i;
            g_clear_pointer(&best, rs_plan_free);
            best = g_steal_pointer(&plan);
        }
    }
    return g_steal_pointer(&best);
}

char *
rs_auto_result_format_reason(const RsAutoResult *result)
{
    GString *s = g_string_new(NULL);
    double best = result->predicted_s[result->chosen];
    g_string_append_printf(s, "%s %.4g s", result->candidates[result->chosen].label, best);
    /* The others, fastest first. */
    gboolean done[RS_AUTO_MAX_CANDIDATES] = {FALSE};
    done[result->chosen] = TRUE;
    /* Only what auto chose among (the peers' rows speak for themselves). */
    if (result->candidates[result->chosen].in_auto)
        for (guint i = 0; i < result->n_candidates; i++)
            done[i] = done[i] || !result->candidates[i].in_auto;
    for (guint k = 1; k < result->n_candidates; k++) {
        gint next = -1;
        for (guint i = 0; i < result->n_candidates; i++)
            if (!done[i] && (next < 0 || result->predicted_s[i] < result->predicted_s[next]))
                next = (gint)i;
        if (next < 0)
            break;
        done[next] = TRUE;
        double t = result->predicted_s[next];
        g_string_append_printf(s, "; %s %.4g s (+%.0f%%)", result->candidates[next].label, t,
                               best > 0 ? 100.0 * (t - best) / best : 0.0);
    }
    return g_string_free(s, FALSE);
}

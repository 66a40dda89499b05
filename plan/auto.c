/* auto.c — try every strategy, keep the fastest under the given cost model. */
#include "plan/auto.h"

#include <math.h>
#include <string.h>

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

/* One candidate's outcome, in its slot of the candidates tried. */
typedef struct {
    RsPlan *plan; /* (nullable) kept while it may be the best */
    double t_s;
    gboolean evaluated, skipped;
    char skipped_reason[512];
    GError *error; /* (nullable) */
} Outcome;

/* The state the candidates share, planned one at a time or several at once. */
typedef struct {
    const RsRefit *refit;
    const RsPlanOptions *options;
    const RsAutoCandidate *tried;
    gboolean any_in_auto;
    RsPlanEvaluateFunc evaluate;
    gpointer user_data;
    Outcome *outcomes;
    GMutex lock;         /* guards best and first_failed */
    gint best;           /* the index tried of the fastest in_auto candidate so far, or -1 */
    guint first_failed;  /* the lowest index tried that failed so far, or n_tried: the later
                          * ones not started yet are not run, the earlier ones still are */
} Shared;

/* Does candidate @c (time @t_s) beat the best so far: faster, or as fast and earlier? */
static gboolean
beats(const Shared *sh, guint c, double t_s)
{
    if (sh->best < 0)
        return TRUE;
    double best_s = sh->outcomes[sh->best].t_s;
    return t_s < best_s || (t_s == best_s && c < (guint)sh->best);
}

/* Plans and evaluates candidate @c; keeps its plan when it is the fastest so far. */
static void
run_candidate(Shared *sh, guint c)
{
    Outcome *out = &sh->outcomes[c];
    const RsAutoCandidate *cand = &sh->tried[c];
    RsPlanOptions o = *sh->options;
    o.domain_relays = cand->domain_relays;
    g_autoptr(GError) local = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build_full(sh->refit, cand->strategy, &o, &local);
    if (plan == NULL && sh->any_in_auto && !cand->in_auto &&
        g_error_matches(local, RS_PLAN_ERROR, RS_PLAN_ERROR_TOO_LARGE)) {
        /* A peer shown beside ours that this machine cannot build: the others go on. */
        out->skipped = TRUE;
        g_strlcpy(out->skipped_reason, local->message, sizeof out->skipped_reason);
        return;
    }
    if (plan == NULL) {
        out->error = g_steal_pointer(&local);
        return;
    }
    if (!sh->evaluate(plan, cand, c, sh->user_data, &out->t_s, &out->error))
        return;
    out->evaluated = TRUE;
    if (sh->any_in_auto && !cand->in_auto)
        return;
    g_mutex_lock(&sh->lock);
    if (beats(sh, c, out->t_s)) {
        if (sh->best >= 0)
            g_clear_pointer(&sh->outcomes[sh->best].plan, rs_plan_free);
        sh->best = (gint)c;
        out->plan = g_steal_pointer(&plan);
    }
    g_mutex_unlock(&sh->lock);
}

/* Candidate GPOINTER_TO_UINT(@data) - 1, unless an earlier one in the order tried failed
 * already (a pool thread's task, and each step of the loop on the calling thread). The
 * candidates before the lowest failed one always run, whatever order the threads take
 * them in, so the error reported (the first in the order tried) is the one a single
 * thread reports: with the slow ones started first, a later candidate may fail before an
 * earlier one has started. */
static void
run_task(gpointer data, gpointer user_data)
{
    Shared *sh = user_data;
    guint c = GPOINTER_TO_UINT(data) - 1;
    g_mutex_lock(&sh->lock);
    gboolean skip = c > sh->first_failed;
    g_mutex_unlock(&sh->lock);
    if (skip)
        return;
    run_candidate(sh, c);
    if (sh->outcomes[c].error != NULL) {
        g_mutex_lock(&sh->lock);
        sh->first_failed = MIN(sh->first_failed, c);
        g_mutex_unlock(&sh->lock);
    }
}

/* Does candidate @c's simulation usually take longest? Plans whose relays pipeline (domain
 * relays, NCCL's rings) cost the flow model an event per chunk or per rate change of every
 * hop: on the default scenario hierarchical with domain relays took 646 s and
 * nccl-broadcast 191 s, the three others 17 to 21 s each (README, "How long the default
 * takes"). checkpoint-engine's buckets pipeline their H2D copies and broadcasts the same
 * way; it is here by that reasoning, its own simulation time not measured (it is not in
 * auto's choice, only shown beside it). Started first, they run beside the quick ones
 * instead of after them (longest processing time first, Graham 1969). */
static gboolean
slow_first(const RsAutoCandidate *c)
{
    return c->domain_relays || c->strategy == RS_STRATEGY_NCCL_BROADCAST ||
           c->strategy == RS_STRATEGY_CHECKPOINT_ENGINE;
}

RsPlan *
rs_auto_build_plan(const RsRefit *refit, const RsPlanOptions *options,
                   const RsAutoCandidate *tried, guint n_tried, RsPlanEvaluateFunc evaluate,
                   gpointer user_data, guint n_threads, RsAutoResult *result, GError **error)
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
    Outcome outcomes[RS_AUTO_MAX_CANDIDATES];
    memset(outcomes, 0, sizeof outcomes);
    Shared sh = {refit, options, tried, FALSE, evaluate, user_data, outcomes, {0}, -1, n_tried};
    for (guint c = 0; c < n_tried; c++)
        sh.any_in_auto = sh.any_in_auto || tried[c].in_auto;
    g_mutex_init(&sh.lock);
    n_threads = MIN(MAX(n_threads, 1), n_tried);
    /* Exclusive threads, joined by the free (wait = TRUE): every task has run (or seen a
     * failure and returned) when it returns. One thread, or no pool (its threads could not
     * be started): in order, on this thread. */
    GThreadPool *pool =
        n_threads > 1 ? g_thread_pool_new(run_task, &sh, (gint)n_threads, TRUE, NULL) : NULL;
    if (pool != NULL) {
        /* The slow ones first; the results keep the order tried. */
        for (guint pass = 0; pass < 2; pass++)
            for (guint c = 0; c < n_tried; c++)
                if (slow_first(&tried[c]) == (pass == 0))
                    g_thread_pool_push(pool, GUINT_TO_POINTER(c + 1), NULL);
    } else {
        for (guint c = 0; c < n_tried; c++)
            run_task(GUINT_TO_POINTER(c + 1), &sh);
    }
    if (pool != NULL)
        g_thread_pool_free(pool, FALSE, TRUE);
    g_mutex_clear(&sh.lock);
    /* In the order tried: the first error, else the results. */
    RsPlan *best = NULL;
    gboolean failed = FALSE;
    for (guint c = 0; c < n_tried; c++) {
        Outcome *out = &outcomes[c];
        if (out->error != NULL && !failed) {
            g_propagate_error(error, g_steal_pointer(&out->error));
            failed = TRUE;
        }
        g_clear_error(&out->error);
        if (out->skipped) {
            guint k = result->n_skipped++;
            result->skipped[k] = tried[c];
            g_strlcpy(result->skipped_reason[k], out->skipped_reason,
                      sizeof result->skipped_reason[k]);
        } else if (out->evaluated) {
            guint i = result->n_candidates++;
            result->candidates[i] = tried[c];
            result->predicted_s[i] = out->t_s;
            if ((gint)c == sh.best)
                result->chosen = i;
        }
        if (out->plan != NULL) {
            g_assert(best == NULL);
            best = g_steal_pointer(&out->plan);
        }
    }
    if (failed) {
        g_clear_pointer(&best, rs_plan_free);
        return NULL;
    }
    /* Only peers are skipped, and only beside an in_auto candidate, which then is kept. */
    g_assert(best != NULL);
    return best;
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

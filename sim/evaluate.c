/* evaluate.c — an evaluator of candidate plans (evaluate.h): checks, the first-order
 * estimate, the flow simulation, each candidate kept with its figures. */
#include "sim/evaluate.h"

#include "sim/gpu-cost.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-evaluate-error-quark, rs_evaluate_error)
/* clang-format on */

struct _RsEvaluator {
    RsEvaluatorOptions options;
    GMutex lock; /* guards buffers_checked, evaluations and the notify calls */
    gboolean buffers_checked;
    GArray *evaluations; /* RsEvaluation by index, each owning its flow result */
};

static void
evaluation_clear(gpointer p)
{
    RsEvaluation *e = p;
    g_clear_pointer(&e->flow, rs_flow_sim_result_free);
}

RsEvaluator *
rs_evaluator_new(const RsEvaluatorOptions *options)
{
    g_return_val_if_fail(options != NULL && options->refit != NULL && options->topology != NULL,
                         NULL);
    RsEvaluator *ev = g_new0(RsEvaluator, 1);
    ev->options = *options;
    ev->evaluations = g_array_new(FALSE, TRUE, sizeof(RsEvaluation));
    g_array_set_clear_func(ev->evaluations, evaluation_clear);
    g_mutex_init(&ev->lock);
    return ev;
}

void
rs_evaluator_free(RsEvaluator *evaluator)
{
    if (evaluator == NULL)
        return;
    g_array_unref(evaluator->evaluations);
    g_mutex_clear(&evaluator->lock);
    g_free(evaluator);
}

/* A check that failed becomes RS_EVALUATE_ERROR_CHECK, its message kept (with @prefix). */
static gboolean
check_failed(GError **error, GError *cause, const char *prefix)
{
    g_set_error(error, RS_EVALUATE_ERROR, RS_EVALUATE_ERROR_CHECK, "%s%s", prefix, cause->message);
    g_error_free(cause);
    return FALSE;
}

/* Stage 1: the fused buffers (once per evaluator) and the plan's invariants. */
static gboolean
run_checks(RsEvaluator *ev, const RsPlan *plan, GError **error)
{
    GError *cause = NULL;
    g_mutex_lock(&ev->lock);
    gboolean buffers_ok = ev->buffers_checked || rs_refit_check_buffers(ev->options.refit, &cause);
    ev->buffers_checked = buffers_ok;
    g_mutex_unlock(&ev->lock);
    if (!buffers_ok)
        return check_failed(error, cause, "fused buffers: ");
    if (!rs_plan_check(plan, ev->options.refit, &cause))
        return check_failed(error, cause, "");
    return TRUE;
}

/* Calls the notify function, one thread at a time. */
static gboolean
notify(RsEvaluator *ev, RsEvaluateStage stage, const RsPlan *plan, const RsEvaluation *e,
       GError **error)
{
    if (ev->options.notify == NULL)
        return TRUE;
    GError *local = NULL;
    g_mutex_lock(&ev->lock);
    gboolean ok = ev->options.notify(stage, plan, e, ev->options.notify_data, &local);
    g_mutex_unlock(&ev->lock);
    if (ok)
        return TRUE;
    if (local == NULL)
        g_set_error(&local, RS_EVALUATE_ERROR, RS_EVALUATE_ERROR_FAILED, "%s: evaluation stopped",
                    e->candidate.label);
    g_propagate_error(error, local);
    return FALSE;
}

/* Stage 2: the plan's figures and the first-order estimate. */
static gboolean
estimate(const RsEvaluator *ev, const RsPlan *plan, RsEvaluation *e, GError **error)
{
    e->n_transfers = rs_plan_get_n_transfers(plan);
    e->n_rounds = rs_plan_get_n_rounds(plan);
    e->max_round_staging_bytes = rs_plan_get_max_round_staging_bytes(plan);
    e->n_messages = rs_plan_get_n_messages(plan);
    e->n_network_messages = rs_plan_get_n_network_messages(plan);
    if (!rs_cost_estimate_full(plan, ev->options.refit, ev->options.topology, &e->cost, error))
        return FALSE;
    e->predicted_s = e->cost.predicted_s;
    return TRUE;
}

gboolean
rs_evaluator_evaluate(const RsPlan *plan, const RsAutoCandidate *candidate, guint index,
                      gpointer evaluator, double *predicted_s, GError **error)
{
    RsEvaluator *ev = evaluator;
    RsEvaluation e;
    memset(&e, 0, sizeof e);
    e.candidate = *candidate;
    e.index = index;
    gint64 start_us = g_get_monotonic_time();
    if (ev->options.check &&
        (!run_checks(ev, plan, error) || !notify(ev, RS_EVALUATE_STAGE_CHECKED, plan, &e, error)))
        return FALSE;
    if (!estimate(ev, plan, &e, error))
        return FALSE;
    if (ev->options.flow_options != NULL) {
        /* Stage 3: the flow-level simulation. */
        if (!notify(ev, RS_EVALUATE_STAGE_SIMULATING, plan, &e, error))
            return FALSE;
        /* GPU-side costs: each message's pack before its first byte, unpack after its
         * last (sim/gpu-cost.h). */
        g_autoptr(RsGpuCostTimes) gpu = NULL;
        g_autofree double *own_pre_s = NULL, *own_post_s = NULL;
        guint n_own = 0;
        RsFlowSimOptions flow_options = *ev->options.flow_options;
        flow_options.progress_label = e.candidate.label;
        if (ev->options.refit != NULL && rs_gpu_cost_has_costs(ev->options.topology)) {
            gpu = rs_gpu_cost_compute(plan, ev->options.refit, ev->options.topology, error);
            if (gpu == NULL)
                return FALSE;
            flow_options.message_pre_s = gpu->pre_s;
            flow_options.message_post_s = gpu->post_s;
            /* Posting whole phases, the packs and the rounds' fixed costs queue on each
             * rank's stream;
             * posting rounds, the flow model charges them per round itself; in the
             * executor's window, each message's own packs and unpacks, which the flow model
             * queues on its ranks' streams chunk by chunk. */
            RsFlowSimPosting posting = rs_flow_sim_get_plan_posting(plan, &flow_options);
            if (posting == RS_FLOW_SIM_POST_WINDOW) {
                n_own = rs_plan_get_n_messages(plan);
                own_pre_s = g_new(double, MAX(n_own, 1));
                own_post_s = g_new(double, MAX(n_own, 1));
                for (guint m = 0; m < n_own; m++) {
                    own_pre_s[m] = gpu->pre_copy_s[m] + gpu->pre_fixed_s[m];
                    own_post_s[m] = gpu->post_copy_s[m] + gpu->post_fixed_s[m];
                }
                flow_options.message_pre_s = own_pre_s;
                flow_options.message_post_s = own_post_s;
            } else if (posting == RS_FLOW_SIM_POST_PHASES) {
                /* The plans exec/ runs: packs chunk by chunk (the window's limit); the
                 * peers' calls pack each round's buckets first. */
                if (rs_strategy_runs_in_executor(rs_plan_get_strategy(plan)))
                    rs_gpu_cost_queue_chunks(plan, flow_options.chunk_bytes, gpu);
                else
                    rs_gpu_cost_queue_rounds(plan, gpu);
            } else {
                flow_options.round_fixed_s = gpu->round_fixed_s;
            }
        }
        e.flow = rs_flow_sim_run(plan, ev->options.topology, &flow_options, error);
        if (e.flow == NULL)
            return FALSE;
        e.predicted_s = e.flow->total_s;
    }
    e.wall_s = (g_get_monotonic_time() - start_us) / 1e6;
    if (!notify(ev, RS_EVALUATE_STAGE_DONE, plan, &e, error)) {
        evaluation_clear(&e);
        return FALSE;
    }
    /* Kept in index order (a few candidates: a linear search). */
    g_mutex_lock(&ev->lock);
    guint at = ev->evaluations->len;
    while (at > 0 && g_array_index(ev->evaluations, RsEvaluation, at - 1).index > index)
        at--;
    g_array_insert_val(ev->evaluations, at, e);
    g_mutex_unlock(&ev->lock);
    *predicted_s = e.predicted_s;
    return TRUE;
}

guint
rs_evaluator_get_n_evaluations(const RsEvaluator *evaluator)
{
    return evaluator->evaluations->len;
}

const RsEvaluation *
rs_evaluator_get_evaluation(const RsEvaluator *evaluator, guint index)
{
    g_return_val_if_fail(index < evaluator->evaluations->len, NULL);
    return &g_array_index(evaluator->evaluations, RsEvaluation, index);
}

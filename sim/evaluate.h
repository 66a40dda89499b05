/* sim/ — predictions: how long a plan takes on a fabric, and how fast any plan could be.
 * It uses plan/ (and everything below); analysis/ and cli/ read its results; it never
 * includes CUDA, NCCL or MPI. It owns:
 *   flow-sim.h     the event-driven flow-level simulator (max-min fair rates, relays,
 *                  per-message trace and link statistics)
 *   cost.h         the first-order cost model (busiest link per phase, copies, fixed costs)
 *   lower-bound.h  the cut-based lower bound no schedule can beat, with its binding cut
 *   evaluate.h     evaluating candidate plans for the strategy policy (this header): the
 *                  checks, the first-order estimate, then the flow simulation
 *
 */
/* evaluate.h — evaluating candidate plans: the checks asked for, the first-order estimate
 * (sim/cost.h), then the flow-level simulation (sim/flow-sim.h) when asked; the cost model
 * the strategy policy (plan/policy.h) and auto (plan/auto.h) choose by.
 *
 * An RsEvaluator keeps every evaluation it made, in candidate order, and tells a caller's
 * function about each candidate's stages, so that a command can print progress and write
 * each candidate's trace without holding the policy. It may be called from several threads
 * at once (rs_auto_build_plan() with n_threads > 1): the checks of the fused buffers, the
 * kept evaluations and the calls of the notify function are serialised by its lock.
 */
#pragma once

#include <glib.h>

#include "layout/refit.h"
#include "plan/auto.h"
#include "plan/plan.h"
#include "sim/cost.h"
#include "sim/flow-sim.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define RS_EVALUATE_ERROR (rs_evaluate_error_quark())
GQuark rs_evaluate_error_quark(void);

typedef enum {
    RS_EVALUATE_ERROR_CHECK,  /* the fused buffers or the plan failed the check */
    RS_EVALUATE_ERROR_FAILED, /* anything else: a caller's notify function failed without
                               * saying why */
} RsEvaluateError;

/* One evaluated candidate. */
typedef struct {
    RsAutoCandidate candidate;
    guint index; /* its position among the candidates tried (RsPlanEvaluateFunc) */
    guint n_transfers;
    guint n_rounds;                  /* rounds of the plan (RsPlanOptions) */
    guint64 max_round_staging_bytes; /* most staging one rank needs in one round, bytes */
    guint n_messages;                /* including local copies */
    guint n_network_messages;        /* src != dst */
    RsCostEstimate cost;             /* the first-order estimate, always made */
    RsFlowSimResult *flow;           /* (nullable) the flow-level simulation, when asked */
    double predicted_s;              /* flow->total_s with a simulation, else
                                      * cost.predicted_s; seconds */
    double wall_s;                   /* wall time the evaluation took (checks, estimate,
                                      * simulation; not the planning), seconds */
} RsEvaluation;

/* Where an evaluation stands when the notify function is called. */
typedef enum {
    RS_EVALUATE_STAGE_CHECKED,    /* the plan passed the checks (only when checking) */
    RS_EVALUATE_STAGE_SIMULATING, /* estimated; the flow simulation starts now */
    RS_EVALUATE_STAGE_DONE,       /* complete: predicted_s (and flow) set */
} RsEvaluateStage;

/**
 * RsEvaluateNotify:
 * @stage: where the evaluation stands
 * @plan: the candidate's plan
 * @evaluation: (transfer none): what is known so far, alive during the call
 * @user_data: the caller's state
 * @error: set on failure (a trace that cannot be written)
 *
 * Returns: TRUE to go on; FALSE stops the evaluation with @error (when not set,
 *   RS_EVALUATE_ERROR_FAILED).
 */
typedef gboolean (*RsEvaluateNotify)(RsEvaluateStage stage, const RsPlan *plan,
                                     const RsEvaluation *evaluation, gpointer user_data,
                                     GError **error);

typedef struct {
    const RsRefit *refit;       /* the refit the plans are of */
    const RsTopology *topology; /* the ranks are its GPUs */
    /* (nullable) simulate with these options; NULL: the first-order estimate alone */
    const RsFlowSimOptions *flow_options;
    /* Check the fused buffers of @refit (rs_refit_check_buffers(), once per evaluator) and
     * every plan (rs_plan_check()) before estimating it. */
    gboolean check;
    RsEvaluateNotify notify; /* (nullable) */
    gpointer notify_data;
} RsEvaluatorOptions;

typedef struct _RsEvaluator RsEvaluator;

/**
 * rs_evaluator_new:
 * @options: copied; the pointers in it are borrowed and must outlive the evaluator
 * Returns: (transfer full): an evaluator with no evaluations.
 */
RsEvaluator *rs_evaluator_new(const RsEvaluatorOptions *options);

void rs_evaluator_free(RsEvaluator *evaluator);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsEvaluator, rs_evaluator_free)

/**
 * rs_evaluator_evaluate:
 * @plan: a candidate plan of the evaluator's refit
 * @candidate: which candidate it is (copied)
 * @index: its position among the candidates tried: evaluations are kept in this order
 * @evaluator: (type RsEvaluator): the evaluator; a gpointer so that this is an
 *   RsPlanEvaluateFunc
 * @predicted_s: (out): the candidate's predicted time, seconds
 * @error: RS_EVALUATE_ERROR_CHECK with the checker's message (fused buffers: prefixed
 *   "fused buffers: "); RS_COST_ERROR, RS_FLOW_SIM_ERROR for a rank outside the topology;
 *   the notify function's error
 *
 * Checks (when asked), estimates, simulates (when asked) and keeps the evaluation,
 * calling the notify function at each stage (never from two threads at once). With a
 * progress function in the flow options, the simulation's progress carries the
 * candidate's label. Thread-safe. Cost: rs_cost_estimate_full() plus rs_flow_sim_run(),
 * and with checks rs_plan_check().
 *
 * Returns: TRUE on success; on failure nothing is kept.
 */
gboolean rs_evaluator_evaluate(const RsPlan *plan, const RsAutoCandidate *candidate, guint index,
                               gpointer evaluator, double *predicted_s, GError **error);

/** rs_evaluator_get_n_evaluations: Returns: the evaluations kept, one per successful call. */
guint rs_evaluator_get_n_evaluations(const RsEvaluator *evaluator);

/**
 * rs_evaluator_get_evaluation:
 * @index: below rs_evaluator_get_n_evaluations(); evaluations are in the order of their
 *   candidates' index, so under rs_auto_build_plan() index i is candidate i of its
 *   result (the too-large ones it skipped have none)
 * Returns: (transfer none): the evaluation, its flow result owned by @evaluator and alive
 *   as it.
 */
const RsEvaluation *rs_evaluator_get_evaluation(const RsEvaluator *evaluator, guint index);

G_END_DECLS

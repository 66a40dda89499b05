/* sweep.h — capacity planning: a grid of refits, each planned, estimated (or simulated)
 * and checked against GPU memory, and the questions users ask of the grid answered
 * directly (the fewest GPUs under a target time, the fastest layout per GPU count, the
 * Pareto front of GPUs against refit time).
 *
 * The grid is the product of its axes, in this nesting order (the last varies fastest):
 * topology, NIC bandwidth, inference dtype, strategy, pp, tp, GPUs (or dp), ep. An empty
 * axis keeps the base scenario's value. The inference GPU count of a point is tp × pp × dp
 * (vLLM and SGLang place experts over those ranks; ep is a switch): a point's dp is the
 * convention's own, vLLM's --data-parallel-size in one engine (a point that sets it sets
 * the vllm scenario's engine replicas to 1). With a GPUs axis, dp is derived (GPUs / (tp ×
 * pp)) and a count tp × pp does not divide is left out of the grid.
 * The inference GPUs come right after the training GPUs, starting on an NVLink domain
 * boundary (a colocated scenario, whose inference GPUs overlap its training GPUs, keeps
 * them from GPU 0), and the node count is derived: whole NVLink domains covering both.
 *
 * Points run on a GLib thread pool; each point's result lands in its own slot, so the
 * results (and every table made of them) are the same whatever the thread count. Under
 * MPI (analysis/sweep-mpi.h) points are dealt round-robin over the ranks and gathered on
 * rank 0.
 */
#pragma once

#include <glib.h>

#include "analysis/memory.h"
#include "analysis/table.h"
#include "layout/scenario.h"
#include "sim/flow-sim.h"

G_BEGIN_DECLS

#define RS_SWEEP_ERROR (rs_sweep_error_quark())
GQuark rs_sweep_error_quark(void);

typedef enum {
    RS_SWEEP_ERROR_INVALID, /* a grid with no point, a bad axis value, a bad sweep file */
    RS_SWEEP_ERROR_FAILED,
} RsSweepError;

/* The axes of a grid; every array may be empty (the base scenario's value). */
typedef struct {
    GArray *tp;              /* gint64, >= 1 */
    GArray *pp;              /* gint64, >= 1 */
    GArray *dp;              /* gint64, >= 1 (ignored when gpus is set) */
    GArray *gpus;            /* gint64: inference GPU counts; dp derived */
    GArray *ep;              /* gboolean: the inference convention's ep switch */
    GPtrArray *topologies;   /* char*: topology names or files */
    GArray *nic_bw;          /* double, bytes/s per direction */
    GPtrArray *infer_dtypes; /* char*: dtype names */
    GPtrArray *strategies;   /* char*: strategy names or "auto"; empty: auto */
} RsSweepGrid;

/** rs_sweep_grid_init: @grid: (out caller-allocates): empty axes. */
void rs_sweep_grid_init(RsSweepGrid *grid);
/** rs_sweep_grid_clear: frees the axes. */
void rs_sweep_grid_clear(RsSweepGrid *grid);

/**
 * rs_sweep_grid_load_file:
 * @path: a sweep YAML: a mapping whose keys are the axes, each a list (or one value):
 *   tp, pp, dp, gpus (integers), ep (booleans), topology (names), nic_bw (bandwidths with
 *   their unit: "400 Gbit/s"), infer_dtype (names), strategy (names)
 * @grid: (inout): the file's axes replace the grid's
 * @error: RS_YAML_ERROR naming path:line:col and the field: a value of the wrong type, a
 *   value rs_sweep_check_axis_value() refuses, a value given twice in one axis
 * Returns: TRUE on success.
 */
gboolean rs_sweep_grid_load_file(const char *path, RsSweepGrid *grid, GError **error);

/**
 * rs_sweep_check_axis_value:
 * @key: "topology", "infer_dtype" or "strategy" (any other key: nothing to check)
 * @value: one value of that axis
 * @error: the problem, without its place: a topology neither shipped nor a file, or a file
 *   whose fields are wrong (rs_topology_check_file(): its own path:line:col), an unknown
 *   dtype, an unknown strategy
 *
 * Checks what can be checked of an axis value before any point runs (a bad one used to fail
 * only its own points, the sweep exiting 0). Returns: TRUE when valid.
 */
gboolean rs_sweep_check_axis_value(const char *key, const char *value, GError **error);

/* One point of the grid. */
typedef struct {
    guint index;               /* position in the grid */
    char *topology;            /* (nullable) NULL: the scenario's */
    double nic_bw_bytes_per_s; /* 0: the topology's */
    char *infer_dtype;         /* (nullable) NULL: the scenario's */
    char *strategy;            /* "auto" or a strategy name */
    gint64 tp, pp, dp;         /* 0: the scenario's */
    gint ep;                   /* -1: the scenario's; else 0 or 1 */
} RsSweepPoint;

/* What one point gave. */
typedef struct {
    gboolean ok; /* FALSE: @error says why (a layout the model does not fit) */
    char *error;
    char *infer_layout; /* the inference convention as resolved ("vllm tp=8 dp=4 …") */
    /* Its sizes as resolved (dp and vllm's replicas derived from the GPUs too; tp, pp, dp
     * and replicas 1 when unset): 0 when the point failed before resolving or the
     * convention has no such size; ep: 1 when the switch is on (or the ep size above 1), 0
     * off, -1 unknown. tp × pp × dp × replicas is infer_gpus. */
    gint64 infer_tp, infer_pp, infer_dp, infer_replicas;
    gint infer_ep;
    guint n_train_gpus;
    guint n_infer_gpus;
    guint n_nodes; /* the point's topology's nodes; 0 when its GPUs could not be placed */
    char *topology_name;
    double nic_bw_bytes_per_s;
    char *dtype;    /* the inference dtype: --infer-dtypes, else the model's */
    char *chosen;   /* the candidate the row shows (auto: the one it picked) */
    double time_s;  /* predicted refit time, seconds */
    double bound_s; /* lower bound, seconds */
    guint64 bytes_moved;
    guint64 network_bytes;
    guint n_messages;
    RsMemoryResult memory;
} RsSweepResult;

/**
 * RsSweepScenarioFunc:
 * Returns: (transfer full): a fresh base scenario, or NULL with @error. Called once per
 *   point, from the pool's threads: it must be thread-safe.
 */
typedef RsScenario *(*RsSweepScenarioFunc)(gpointer user_data, GError **error);

/* How the points run. */
typedef struct {
    RsSweepScenarioFunc new_scenario;
    gpointer scenario_data;
    const RsFlowSimOptions *flow_options; /* (nullable) NULL: first-order estimate */
    guint64 staging_bytes;                /* 0: the planner's default */
    guint64 reserve_bytes[RS_MEMORY_SIDE_N];
    guint n_threads;     /* 0: the machine's cores */
    gboolean progress;   /* a progress bar on stderr (redrawn with \r: for a terminal) */
    guint rank, n_ranks; /* this process's share: points with index %
                          * n_ranks == rank (1 process: 0, 1) */
} RsSweepOptions;

/**
 * rs_sweep_make_points:
 * @grid: the axes
 * @error: RS_SWEEP_ERROR_INVALID when the grid has no point, or has both a dp and a gpus
 *   axis
 * Returns: (transfer full) (element-type RsSweepPoint): the points in grid order; free
 *   with g_array_unref (its clear function frees each point).
 */
GArray *rs_sweep_make_points(const RsSweepGrid *grid, GError **error);

/**
 * rs_sweep_run_point:
 * @out: (out caller-allocates): the result; a point whose layout or plan is refused has
 *   ok FALSE and its error (the grid goes on); clear with rs_sweep_result_clear()
 * @error: a failure of the base scenario itself (its files)
 *
 * Plans, estimates (or simulates) and computes the memory and the bound of one point.
 * Returns: FALSE only with @error.
 */
gboolean rs_sweep_run_point(const RsSweepPoint *point, const RsSweepOptions *options,
                            RsSweepResult *out, GError **error);

/**
 * rs_sweep_run:
 * @points: (element-type RsSweepPoint)
 * @results: (out caller-allocates) (array): one per point, filled for this rank's points
 *   (the others left zeroed with ok FALSE and error NULL)
 * @error: the first base-scenario failure
 *
 * Runs this rank's points on a thread pool of options->n_threads. Deterministic.
 * Returns: TRUE on success.
 */
gboolean rs_sweep_run(GArray *points, const RsSweepOptions *options, RsSweepResult *results,
                      GError **error);

void rs_sweep_result_clear(RsSweepResult *result);

/**
 * rs_sweep_result_to_variant / rs_sweep_result_from_variant: the result as a GVariant (for
 * gathering over MPI) and back. Returns: (transfer floating) / nothing.
 */
GVariant *rs_sweep_result_to_variant(const RsSweepResult *result);
void rs_sweep_result_from_variant(GVariant *v, RsSweepResult *out);

/* Which rows a sweep report lists. */
typedef enum {
    RS_SWEEP_SELECT_ALL,
    RS_SWEEP_SELECT_UNDER_TARGET, /* feasible points under the target, fewest GPUs first */
    RS_SWEEP_SELECT_FASTEST,      /* the fastest feasible point per inference GPU count */
    RS_SWEEP_SELECT_PARETO,       /* the Pareto front of GPUs against refit time */
} RsSweepSelect;

/**
 * rs_sweep_select:
 * @target_s: the target time for RS_SWEEP_SELECT_UNDER_TARGET, seconds
 * Returns: (transfer full) (element-type guint): indices into @results, in the order the
 *   query lists them: under target by GPUs then time; fastest and Pareto by GPUs. Only
 *   feasible, successful points are selected (all points for RS_SWEEP_SELECT_ALL).
 *   Ties: the lower point index.
 */
GArray *rs_sweep_select(const RsSweepResult *results, guint n_results, RsSweepSelect select,
                        double target_s);

/**
 * rs_sweep_table_new:
 * @rows: (element-type guint) (nullable): the results to list; NULL: all
 * Returns: (transfer full): the sweep table, a column per parameter and figure: point,
 *   infer_layout, tp, pp, dp, replicas (vllm), ep, infer_gpus, nodes, topology, nic_bw_bytes_per_s,
 *   infer_dtype, strategy, chosen, bytes_moved, network_bytes, messages, time_s, bound_s,
 *   efficiency, infer_gpu_bytes, train_gpu_bytes, gpu_memory_bytes, feasible, error.
 */
RsTable *rs_sweep_table_new(const RsSweepPoint *points, const RsSweepResult *results, GArray *rows);

/**
 * rs_sweep_report:
 * @target_s: (0: none) the target of the under-target query
 * @select: for CSV, the rows of the one table CSV has; table and JSON always hold every
 *   point and each query
 * @out: the text form (the points table, then a line and a table per query), CSV (one
 *   table, @select's rows), or JSON (points[], and under_target[], fastest_per_gpus[] and
 *   pareto[] as point indices, with the target)
 */
void rs_sweep_report(const RsSweepPoint *points, const RsSweepResult *results, guint n,
                     double target_s, RsSweepSelect select, RsFormat format, GString *out);

G_END_DECLS

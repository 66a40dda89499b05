/* analysis/ — everything a command prints or writes as a result. It uses sim/ and exec/
 * (and everything below). It owns:
 *   table.h        one description per table, rendered as text, CSV or JSON by one writer
 *   report.h       the reports of every command (this header): simulate, replay, run,
 *                  topology, models, plan and layout, copy rates, link statistics, and the
 *                  JSON provenance (tool, schema version, command line)
 *
 */
/* report.h — tables, CSV and JSON for the results of the commands.
 *
 * Tables print units in the header row, decimal GB and GB/s; CSV and JSON carry raw
 * bytes and seconds so nothing is lost to rounding.
 *
 * Every table of a report is one RsTable (table.h), so its text, CSV and JSON forms come
 * from one description. The text forms also have lines that are not tables, written by
 * the report around its tables as they are: headers naming the work above a table (the
 * scenario, model, layouts; the run's work, plan and executor; the topology's GPUs,
 * fabric and latency) and the lines below it (the lower bound, the bottleneck and auto
 * lines, the network model; the run's counters, validation and prediction; the
 * topology's routes and totals). The replay's text form is lines only.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "analysis/memory.h"
#include "analysis/table.h"
#include "sim/cost.h"
#include "sim/lower-bound.h"
#include "sim/flow-sim.h"
#include "models/model.h"
#include "plan/plan.h"
#include "layout/refit.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define RS_REPORT_ERROR (rs_report_error_quark())
GQuark rs_report_error_quark(void);

typedef enum {
    RS_REPORT_ERROR_FORMAT, /* an unknown output format */
} RsReportError;

/**
 * rs_format_parse:
 * @name: "table", "csv" or "json"
 * @error: RS_REPORT_ERROR_FORMAT listing the formats
 * Returns: TRUE on success.
 */
gboolean rs_format_parse(const char *name, RsFormat *format_out, GError **error);

/**
 * rs_report_format_scenario:
 * @name: the scenario's name
 * @overrides: (nullable): the flags that replaced parts of it ("--model, --layers")
 *
 * Returns: (transfer full): "NAME" or "NAME (with FLAGS from the command line)", as the
 * simulate header, the report's title and a trace's .meta name the work.
 */
char *rs_report_format_scenario(const char *name, const char *overrides);

/* One strategy's plan figures and estimate. */
typedef struct {
    RsStrategy strategy;
    const char *label;           /* (nullable) the row's name; NULL: the strategy's name */
    const char *note;            /* (nullable) the variant chosen ("domain relays", or for
                                  * auto the candidate it picked) */
    guint n_transfers;
    guint n_rounds;                   /* rounds of the plan (RsPlanOptions) */
    guint64 max_round_staging_bytes;  /* most staging one rank needs in one round */
    RsCostEstimate cost;         /* first-order estimate and byte counts */
    const RsFlowSimResult *flow; /* (nullable) the flow-level simulation; when set its time
                                  * is the prediction */
} RsStrategyResult;

/* Everything `reshard simulate` reports; all pointers borrowed. */
typedef struct {
    const char *scenario_name;
    const char *scenario_overrides; /* nullable: flags that replaced parts of it (the table's
                                     * scenario line, the document's title) */
    const RsModel *model;
    const RsTopology *topology;
    const RsRefit *refit;
    const char *train_desc; /* "megatron tp=1 pp=16 …" */
    const char *train_gpus; /* "0-255" */
    const char *train_summary;
    const char *infer_desc;
    const char *infer_gpus;
    const char *infer_summary;
    RsLowerBound bound;
    const RsStrategyResult *results;
    guint n_results;
    const RsFlowSimOptions *flow_options; /* (nullable) as simulated */
    guint64 staging_bytes;      /* the planner's staging bound per rank per round, bytes */
    guint max_ops_per_group;    /* the planner's operations per rank per round */
    const char *auto_reason;    /* (nullable) why auto chose what it chose */
    const char *hierarchical_note; /* (nullable) which hierarchical variant won */
    const RsMemoryResult *memory;  /* (nullable) memory feasibility of both sides: the
                                    * "memory" lines of the text form, JSON "memory" */
} RsSimulateReport;

/**
 * rs_report_simulate:
 * @report: the figures
 * @format: table (header lines, the strategies table, then the lower bound, auto and
 *   bottleneck lines and the network model: lines, not tables), csv (the strategies
 *   table: one row per strategy) or json (model.params, model.bytes, lower_bound_s, …
 *   and strategies[]: the strategies table's rows, .name, .bytes_moved, .predicted_s, …)
 * @out: text is appended here
 */
void rs_report_simulate(const RsSimulateReport *report, RsFormat format, GString *out);

/** rs_report_simulate_table: Returns: (transfer full): the strategies table of
 * rs_report_simulate() (one row per strategy). */
RsTable *rs_report_simulate_table(const RsSimulateReport *report);

/**
 * rs_report_replay:
 * @name: what was replayed (the messages file)
 * @flow: the simulation of its messages on @topo
 * @format: table (lines, no table), csv (one row) or json (the same figures plus
 *   phases[] and the last GPU)
 * @out: text is appended here
 *
 * Prints the total time, bytes, the link-load bound (the most loaded link's bytes over its
 * capacity: no rate allocation on these routes beats it), efficiency, phases, the
 * bottleneck link and the slowest GPU.
 */
void rs_report_replay(const char *name, const RsTopology *topo, const RsFlowSimResult *flow,
                      RsFormat format, GString *out);

/* The version of the JSON documents' layout: raised when a member is renamed, removed or
 * changes meaning (adding one keeps it). */
#define RS_REPORT_SCHEMA_VERSION 1

/**
 * rs_report_set_command_line:
 * @argc: the number of @argv
 * @argv: (array length=argc): the command line as the process got it (copied)
 *
 * Records the command line once per process (reshard's main does), for the provenance of
 * every JSON document. Not thread-safe: call before any report is written.
 */
void rs_report_set_command_line(int argc, char **argv);

/**
 * rs_report_provenance_new:
 * Returns: (transfer full): an object with the provenance members of every JSON document:
 *   "tool" ("reshard 0.1.0"), "schema_version" (RS_REPORT_SCHEMA_VERSION) and
 *   "command_line" (the recorded argv as an array of strings; empty when none was
 *   recorded).
 */
JsonObject *rs_report_provenance_new(void);

/**
 * rs_report_json_append:
 * @b: a builder holding a complete document
 * @out: the document, pretty-printed, and a newline are appended here
 *
 * Every JSON document of reshard is written here: the provenance members
 * (rs_report_provenance_new()) come first, then the members of @b's object; a document
 * that is not an object goes under the member "items". JSON has no infinity or NaN: every
 * non-finite number in the document is written as null (for example the bandwidth of a
 * calibration fit whose time did not grow with bytes).
 */
void rs_report_json_append(JsonBuilder *b, GString *out);
/** rs_report_json_append_full: the same, on one line unless @pretty (for large documents). */
void rs_report_json_append_full(JsonBuilder *b, gboolean pretty, GString *out);

/**
 * rs_report_copy_rates:
 * @rates: (array length=n_rates): a copy section (RsCopyRate), by increasing run length
 * @out: text is appended here
 *
 * A table of the copy rates in GB/s (10^9 bytes per second): one row per run length,
 * columns read and write for messages and local copies, one rank and node, headed by the
 * copy section's keys without a unit (the line above the table states it).
 */
void rs_report_copy_rates(const RsCopyRate *rates, guint n_rates, GString *out);

/**
 * rs_report_json_copy_rate:
 * @b: a builder inside an object
 *
 * Adds run_bytes and one member per rate, named after the copy section's keys with
 * _bytes_per_s (read_one_rank_bytes_per_s, …, local_write_node_bytes_per_s): the JSON
 * members of the copy rates table's row.
 */
void rs_report_json_copy_rate(JsonBuilder *b, const RsCopyRate *rate);

/**
 * rs_report_topology:
 * @show_links: also list every link (id, name, kind, bandwidth, efficiency, capacity,
 *   latency, dominated)
 * @format: table (header lines, the link classes table, the routes and totals lines,
 *   and with @show_links the links table), csv (the links table) or json (the topology's
 *   members, copy_runs[] and with @show_links links[]: the links table's rows, a link's
 *   name as "name" where CSV says "link")
 * @out: text is appended here
 *
 * Prints nodes, NVLink domains, the fabric, the copy rates (a calibrated topology's copy
 * section; json: copy_runs[]), link classes with counts and capacities, example routes
 * with their latency, and totals (links, NVLink capacity per domain, NIC injection, leaf
 * uplink capacity).
 */
void rs_report_topology(const RsTopology *topo, gboolean show_links, RsFormat format, GString *out);

/**
 * rs_report_link_stats:
 * @out: CSV is appended here, one row per link: link, kind, capacity_bytes_per_s, latency_s,
 *   dominated, bytes, busy_s, load_s (bytes / capacity), utilisation (load / total time),
 *   bucket_s, then u0 … u(n−1): utilisation in each timeline bucket
 */
void rs_report_link_stats(const RsFlowSimResult *flow, const RsTopology *topo, GString *out);

/**
 * rs_report_models:
 * @models: (element-type RsModel): loaded models, generated in the training form
 * @stored: (element-type RsModel) (nullable): the same models as their checkpoints store
 *   them (same order), for the stored bytes per dtype; NULL uses @models
 * @names: (array zero-terminated=1): the shipped name (or path) of each
 * @format: table, csv or json. Each row: layers, tensors, parameters and active
 *   parameters with and without the input embeddings (rs_model_get_n_embedding_params()),
 *   the published figure and whether it matches (rs_model_check_published()), refit bytes
 *   (model dtype) and stored bytes per dtype. CSV keeps the columns id,name,family,layers,
 *   tensors,params,active_params,dtype,bytes first.
 * @out: text is appended here
 */
void rs_report_models(GPtrArray *models, GPtrArray *stored, const char *const *names,
                      RsFormat format, GString *out);

/**
 * rs_report_model_tensors:
 * @layer: only tensors of this layer (-1: before the first layer); G_MININT for all
 * @format: table, csv (name,shape,dtype,role,layer,heads,params,bytes; shape as 7168x2048)
 *   or json (an array of {name, shape[], dtype, role, layer, heads, kv_heads, params, bytes})
 * @out: text is appended here
 */
void rs_report_model_tensors(const RsModel *model, gint layer, RsFormat format, GString *out);

/* One phase of a measured run. */
typedef struct {
    guint n_messages;  /* network messages */
    guint64 size_bytes; /* their bytes */
    double measured_s; /* first post to last completion */
} RsRunPhase;

/* Everything `reshard run` reports: the measured run next to the prediction of the same
 * plan; all pointers borrowed. */
typedef struct {
    const char *work;       /* "DeepSeek-V3 (scale 1/16, layers 3-5)" or "tensor [64, 64] f32" */
    const char *strategy;
    const char *transport;
    guint n_ranks;
    guint n_transfers;
    guint n_network_messages;
    guint64 bytes_moved;    /* bytes between distinct ranks, per run */
    guint64 local_bytes;
    guint64 chunk_bytes;
    guint window;
    guint n_runs;
    const double *run_s;    /* (array length=n_runs): measured time of each run, seconds */
    double measured_s;      /* median of run_s */
    gboolean has_prediction;
    double predicted_s;     /* first-order estimate (sim/cost.h) of the same plan, seconds */
    const char *topology;   /* the topology the prediction used */
    /* The parts of predicted_s (RsCostEstimate): each phase takes the larger of its link
     * and copy times plus its fixed costs; copies are modelled when the topology has a copy
     * section (a calibrated one). */
    double predicted_link_s;
    double predicted_copy_s;
    double predicted_fixed_s;
    gboolean copies_modelled;
    guint n_copy_bound_phases;
    guint n_phases;
    const RsRunPhase *phases; /* (array length=n_phases) */
    gboolean validated;
    guint64 n_checked_elems; /* destination elements checked per run */
    guint64 n_bad_elems;
    const char *first_bad;  /* (nullable): the first bad element, formatted */
    guint64 n_sends;        /* transport send calls (chunks) */
    guint64 n_zero_copy;    /* chunks moved without a pack copy */
    guint64 peak_pack_bytes;
    guint64 buffer_bytes;
} RsRunReport;

/**
 * rs_run_report_get_error:
 * Returns: the relative error of the prediction, (predicted − measured) / measured; 0 when
 *   there is no prediction or nothing was measured.
 */
double rs_run_report_get_error(const RsRunReport *report);

/**
 * rs_report_run:
 * @format: table (header lines, measured and predicted side by side, the phases table,
 *   then the runs, transport, validation and prediction lines), csv
 *   (one row: strategy, ranks, bytes_moved, measured_s, predicted_s, error, the parts of
 *   the prediction (predicted_copy_s empty when copies are not modelled), …) or json (the
 *   same fields plus runs_s[], phases[] and the parts of the prediction: predicted_link_s,
 *   predicted_copy_s (null when copies are not modelled), predicted_fixed_s)
 * @out: text is appended here
 *
 * GB and GB/s are decimal (10^9 bytes).
 */
void rs_report_run(const RsRunReport *report, RsFormat format, GString *out);

/* Everything `reshard plan` reports; all pointers borrowed. */
typedef struct {
    const RsPlan *plan;
    const RsRefit *refit;
    const gboolean *keep;         /* (nullable) (array): the refit tensors to list; NULL: all */
    const RsTopology *topology;   /* (nullable) the topology planned on */
    const char *header;           /* (nullable) text form: lines naming the work */
} RsPlanReport;

/**
 * rs_report_plan:
 * @format: table (@header, a strategy and a bytes line, then one row per transfer: phase,
 *   src, dst, tensor, box, bytes, kind: "local copy"; on a topology "nvlink" within an
 *   NVLink domain, "network" between domains; without one "between ranks"; ", to staging"
 *   added, or "to staging" alone, for a transfer into the receiver's staging buffer), csv
 * (phase,src,dst,tensor,lo,hi,step,bytes,local; lo/hi/step as "0;4") or json (one line: strategy,
 * bytes_moved, local_bytes, topology when planned on one, transfers[] with phase, src, dst, tensor,
 * lo[], hi[], step[], bytes)
 * @out: text is appended here
 *
 * The byte totals count the listed transfers: bytes between distinct ranks and local copies.
 */
void rs_report_plan(const RsPlanReport *report, RsFormat format, GString *out);

/**
 * rs_report_layout:
 * @layouts: (array length=n_layouts): the layouts of the tensors to list (one tensor, or the
 *   tensors of a fused buffer)
 * @names: (array length=n_layouts): their names
 * @only_rank: list only this rank; -1: every rank
 * @expert: the routed expert @layouts is cut to (one layout: the stacked tensor's rows of
 *   that expert), or -1
 * @header: (nullable): text form: lines naming the tensor and its layout
 * @format: table (@header, then per rank its boxes by offset: rank, tensor, box, offset
 *   elems, elems, and on the first the buffer shape; an empty shard as one "-" row; a rank
 *   asked for that holds none of it, a line saying so), csv
 *   (rank,tensor,lo,hi,step,offset_elems,elems,buffer_shape,expert: buffer_shape as
 *   ';'-separated elems per dim, expert empty without one; an empty shard with empty box
 *   fields and elems 0) or json (one line: expert when given, ranks[] of {rank,
 *   buffer_shape[], buffer_elems, boxes[] of {tensor, lo[], hi[], step[], offset_elems,
 *   elems}}; an empty shard: boxes [])
 * @out: text is appended here
 */
void rs_report_layout(const RsLayout *const *layouts, const char *const *names, guint n_layouts,
                      gint64 only_rank, gint64 expert, const char *header, RsFormat format,
                      GString *out);

/** rs_format_thousands: Returns: (transfer full): "671,026,419,200". */
char *rs_format_thousands(guint64 value);

G_END_DECLS

/* report.h — tables, CSV and JSON for the results of the commands.
 *
 * Tables print units in the header row, decimal GB and GB/s; CSV and JSON carry raw
 * bytes and seconds so nothing is lost to rounding.
 */
#pragma once

#include <glib.h>

#include "sim/cost.h"
#include "sim/flow-sim.h"
#include "sim/model.h"
#include "sim/plan.h"
#include "sim/refit.h"
#include "sim/topology.h"

G_BEGIN_DECLS

#define RS_REPORT_ERROR (rs_report_error_quark())
GQuark rs_report_error_quark(void);

typedef enum {
    RS_REPORT_ERROR_FORMAT, /* an unknown output format */
} RsReportError;

typedef enum {
    RS_FORMAT_TABLE,
    RS_FORMAT_CSV,
    RS_FORMAT_JSON,
} RsFormat;

/**
 * rs_format_parse:
 * @name: "table", "csv" or "json"
 * @error: RS_REPORT_ERROR_FORMAT listing the formats
 * Returns: TRUE on success.
 */
gboolean rs_format_parse(const char *name, RsFormat *format_out, GError **error);

/* One strategy's plan figures and estimate. */
typedef struct {
    RsStrategy strategy;
    guint n_transfers;
    RsCostEstimate cost;         /* first-order estimate and byte counts */
    const RsFlowSimResult *flow; /* (nullable) the flow-level simulation; when set its time
                                  * is the prediction */
} RsStrategyResult;

/* Everything `reshard simulate` reports; all pointers borrowed. */
typedef struct {
    const char *scenario_name;
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
} RsSimulateReport;

/**
 * rs_report_simulate:
 * @report: the figures
 * @format: table, csv (one row per strategy) or json (model.params, model.bytes,
 *   strategies[].name, .bytes_moved, .predicted_s, lower_bound_s, …)
 * @out: text is appended here
 */
void rs_report_simulate(const RsSimulateReport *report, RsFormat format, GString *out);

/**
 * rs_report_replay:
 * @name: what was replayed (the messages file)
 * @flow: the simulation of its messages on @topo
 * @format: table, csv (one row) or json
 * @out: text is appended here
 *
 * Prints the total time, bytes, the link-load bound (the most loaded link's bytes over its
 * capacity: no rate allocation on these routes beats it), efficiency, phases, the
 * bottleneck link and the slowest GPU.
 */
void rs_report_replay(const char *name, const RsTopology *topo, const RsFlowSimResult *flow,
                      RsFormat format, GString *out);

/**
 * rs_report_topology:
 * @show_links: also list every link (id, name, kind, bandwidth, efficiency, capacity,
 *   latency, dominated)
 * @format: table, csv (the link list, or one row per link class) or json
 * @out: text is appended here
 *
 * Prints nodes, NVLink domains, the fabric, link classes with counts and capacities,
 * example routes with their latency, and totals (links, NVLink capacity per domain, NIC
 * injection, leaf uplink capacity).
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
 * @models: (element-type RsModel): loaded models
 * @names: (array zero-terminated=1): the shipped name of each
 * @format: table, csv or json
 * @out: text is appended here
 */
void rs_report_models(GPtrArray *models, const char *const *names, RsFormat format,
                      GString *out);

/** rs_format_thousands: Returns: (transfer full): "671,026,419,200". */
char *rs_format_thousands(guint64 value);

G_END_DECLS

/* report.h — tables, CSV and JSON for the results of the commands.
 *
 * Tables print units in the header row, decimal GB and GB/s; CSV and JSON carry raw
 * bytes and seconds so nothing is lost to rounding.
 */
#pragma once

#include <glib.h>

#include "sim/cost.h"
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
    RsCostEstimate cost;
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

/** rs_format_thousands: Returns: (transfer full): "671,026,419,200". */
char *rs_format_thousands(guint64 value);

G_END_DECLS

/* report.c — output of the commands as aligned text tables, CSV and JSON (json-glib). */
#include "analysis/report.h"
#include "analysis/table.h"

#include "rs-config.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

G_DEFINE_QUARK(rs-report-error-quark, rs_report_error)

gboolean
rs_format_parse(const char *name, RsFormat *format_out, GError **error)
{
    static const char *const names[] = {"table", "csv", "json"};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        if (strcmp(name, names[i]) == 0) {
            *format_out = (RsFormat)i;
            return TRUE;
        }
    }
    g_set_error(error, RS_REPORT_ERROR, RS_REPORT_ERROR_FORMAT,
                "unknown format \"%s\" (known: table, csv, json)", name);
    return FALSE;
}

char *
rs_format_thousands(guint64 value)
{
    g_autofree char *digits = g_strdup_printf("%" G_GUINT64_FORMAT, value);
    GString *s = g_string_new(NULL);
    gsize n = strlen(digits);
    for (gsize i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            g_string_append_c(s, ',');
        g_string_append_c(s, digits[i]);
    }
    return g_string_free(s, FALSE);
}

/* Seconds with three decimals, or three significant digits below 0.1 s (so a small
 * case's times and bound are not printed as 0.000); the lines below the tables use it. */
static char *
format_seconds(double seconds)
{
    if (seconds == 0.0 || fabs(seconds) >= 0.1)
        return g_strdup_printf("%.3f", seconds);
    return g_strdup_printf("%.3g", seconds);
}

/* The prediction: the flow-level simulation when there is one, else the first-order
 * estimate. */
static double
predicted_s(const RsStrategyResult *s)
{
    return s->flow != NULL ? s->flow->total_s : s->cost.predicted_s;
}

static double
efficiency(const RsSimulateReport *r, const RsStrategyResult *s)
{
    return predicted_s(s) > 0 ? r->bound.time_s / predicted_s(s) : 1.0;
}

/* "98 97 100 …": the link's utilisation in @n_slices equal slices of [0, total_s], percent. */
static void
append_utilisation_slices(GString *out, const RsFlowSimResult *f, const RsTopology *topo,
                          guint32 link, guint n_slices)
{
    double cap = rs_link_get_capacity_bytes_per_s(rs_topology_get_link(topo, link));
    const double *row = &f->link_timeline_bytes[(gsize)link * f->n_buckets];
    double slice_s = f->total_s / n_slices;
    for (guint i = 0; i < n_slices; i++) {
        /* Buckets are finer than or as fine as slices: apportion each by overlap. */
        double lo = i * slice_s, hi = (i + 1) * slice_s, bytes = 0.0;
        for (guint b = 0; b < f->n_buckets; b++) {
            /* Nothing moves after total_s: a bucket reaching past it is that much shorter. */
            double blo = b * f->bucket_s, bhi = MIN((b + 1) * f->bucket_s, f->total_s);
            double overlap = MIN(hi, bhi) - MAX(lo, blo);
            if (overlap > 0 && bhi > blo)
                bytes += row[b] * overlap / (bhi - blo);
        }
        g_string_append_printf(out, "%s%.0f", i ? " " : "", 100.0 * bytes / (cap * slice_s));
    }
}

static void
indent_lines(GString *out, const char *text, const char *prefix)
{
    if (text == NULL)
        return;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++)
        if (*lines[i] != '\0')
            g_string_append_printf(out, "%s%s\n", prefix, lines[i]);
}

static const char *
result_name(const RsStrategyResult *s)
{
    return s->label ? s->label : rs_strategy_get_name(s->strategy);
}

/* The name the table's row and the lines below it give @s: its name, with "+relays" for
 * hierarchical's plan with domain relays (the auto line's "hierarchical" is the plan without
 * them); CSV and JSON keep the name and a variant column. Newly allocated. */
static char *
shown_name(const RsStrategyResult *s)
{
    if (s->note != NULL && strcmp(s->note, "domain relays") == 0)
        return g_strdup_printf("%s+relays", result_name(s));
    return g_strdup(result_name(s));
}

/* The command line of this process (rs_report_set_command_line()); NULL: not recorded. */
static char **command_line;

void
rs_report_set_command_line(int argc, char **argv)
{
    g_strfreev(command_line);
    command_line = g_new0(char *, MAX(argc, 0) + 1);
    for (int i = 0; i < argc; i++)
        command_line[i] = g_strdup(argv[i]);
}

JsonObject *
rs_report_provenance_new(void)
{
    JsonObject *o = json_object_new();
    json_object_set_string_member(o, "tool", "reshard " RS_VERSION);
    json_object_set_int_member(o, "schema_version", RS_REPORT_SCHEMA_VERSION);
    JsonArray *argv = json_array_new();
    for (guint i = 0; command_line != NULL && command_line[i] != NULL; i++)
        json_array_add_string_element(argv, command_line[i]);
    json_object_set_array_member(o, "command_line", argv);
    return o;
}

/* The document @root with the provenance members first: an object gains them, anything
 * else becomes the member "items" of an object that has them. */
static JsonNode *
with_provenance(JsonNode *root)
{
    JsonObject *doc = rs_report_provenance_new();
    if (JSON_NODE_HOLDS_OBJECT(root)) {
        JsonObjectIter iter;
        const char *name;
        JsonNode *member;
        json_object_iter_init_ordered(&iter, json_node_get_object(root));
        while (json_object_iter_next_ordered(&iter, &name, &member))
            json_object_set_member(doc, name, json_node_copy(member));
    } else {
        json_object_set_member(doc, "items", json_node_copy(root));
    }
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);
    json_node_take_object(node, doc);
    return node;
}

/* JSON has no infinity or NaN: json-glib would print "inf" and "nan", which no parser
 * reads. Every non-finite number of a document becomes null (a calibration fit whose time
 * does not grow with bytes has an unbounded bandwidth, for example). */
static void
null_non_finite(JsonNode *node)
{
    switch (json_node_get_node_type(node)) {
    case JSON_NODE_OBJECT: {
        JsonObjectIter iter;
        JsonNode *member;
        json_object_iter_init(&iter, json_node_get_object(node));
        while (json_object_iter_next(&iter, NULL, &member))
            null_non_finite(member);
        break;
    }
    case JSON_NODE_ARRAY: {
        JsonArray *array = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(array); i++)
            null_non_finite(json_array_get_element(array, i));
        break;
    }
    case JSON_NODE_VALUE:
        if (json_node_get_value_type(node) == G_TYPE_DOUBLE &&
            !isfinite(json_node_get_double(node)))
            json_node_init_null(node);
        break;
    case JSON_NODE_NULL:
        break;
    }
}

void
rs_report_json_append_full(JsonBuilder *b, gboolean pretty, GString *out)
{
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autoptr(JsonNode) doc = with_provenance(root);
    null_non_finite(doc);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_pretty(gen, pretty);
    json_generator_set_root(gen, doc);
    g_autofree char *text = json_generator_to_data(gen, NULL);
    g_string_append(out, text);
    g_string_append_c(out, '\n');
}

#define JSON_INT(b, key, value)                                                                \
    (json_builder_set_member_name(b, key), json_builder_add_int_value(b, (gint64)(value)))
#define JSON_DOUBLE(b, key, value)                                                             \
    (json_builder_set_member_name(b, key), json_builder_add_double_value(b, value))
#define JSON_STRING(b, key, value)                                                             \
    (json_builder_set_member_name(b, key), json_builder_add_string_value(b, value))

/* --- simulate --- */

static RsTable *strategy_table(const RsSimulateReport *r);

char *
rs_report_format_scenario(const char *name, const char *overrides)
{
    return overrides ? g_strdup_printf("%s (with %s from the command line)", name, overrides)
                     : g_strdup(name);
}

/* The lines above the strategies table: the scenario, model, topology, layouts, planner. */
static void
simulate_header(const RsSimulateReport *r, GString *out)
{
    g_autofree char *params = rs_format_thousands(rs_model_get_n_params(r->model));
    g_autofree char *topo = rs_topology_format_summary(r->topology);
    g_autofree char *scenario = rs_report_format_scenario(r->scenario_name, r->scenario_overrides);
    g_string_append_printf(out, "scenario   %s\n", scenario);
    g_autofree char *variant = rs_model_format_variant(r->model);
    g_autofree char *dtypes = rs_refit_format_wire_dtypes(r->refit);
    g_string_append_printf(out, "model      %s%s%s%s (%s): %s parameters, %.2f GB as %s, %u tensors\n",
                           rs_model_get_name(r->model), *variant ? " [" : "", variant,
                           *variant ? "]" : "", rs_model_get_family(r->model), params,
                           rs_refit_get_size_bytes(r->refit) / 1e9, dtypes,
                           rs_refit_get_n_tensors(r->refit));
    g_string_append_printf(out, "topology   %s\n", topo);
    g_string_append_printf(out, "training   %s on GPUs %s\n", r->train_desc, r->train_gpus);
    indent_lines(out, r->train_summary, "             ");
    g_string_append_printf(out, "inference  %s on GPUs %s\n", r->infer_desc, r->infer_gpus);
    indent_lines(out, r->infer_summary, "             ");
    if (r->staging_bytes > 0)
        g_string_append_printf(out,
                               "planner    buckets and per-rank staging of %.3g GB per round, at "
                               "most %u operations per rank per round\n",
                               r->staging_bytes / 1e9, r->max_ops_per_group);
    if (r->memory != NULL) {
        g_autofree char *lines = rs_memory_format_lines(r->memory);
        g_string_append(out, lines);
    }
    g_string_append_c(out, '\n');
}

/* The JSON member "memory": {feasible, train: {...}, infer: {...}}. */
static void
json_memory(JsonBuilder *b, const RsMemoryResult *m)
{
    json_builder_set_member_name(b, "memory");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "feasible");
    json_builder_add_boolean_value(b, m->feasible);
    for (guint i = 0; i < RS_MEMORY_SIDE_N; i++) {
        const RsMemorySideResult *s = &m->side[i];
        json_builder_set_member_name(b, rs_memory_side_get_name(i));
        json_builder_begin_object(b);
        JSON_INT(b, "gpus", s->n_gpus);
        JSON_INT(b, "max_gpu", s->max_gpu);
        JSON_INT(b, "weights_bytes", s->weights_bytes);
        JSON_INT(b, "staging_bytes", s->staging_bytes);
        JSON_INT(b, "reserve_bytes", s->reserve_bytes);
        JSON_INT(b, "total_bytes", s->total_bytes);
        JSON_INT(b, "capacity_bytes", s->capacity_bytes);
        json_builder_set_member_name(b, "feasible");
        json_builder_add_boolean_value(b, s->feasible);
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
}

/* The lines below the table: the lower bound, the hierarchical variant, auto's reason. */
static void
simulate_bound_lines(const RsSimulateReport *r, GString *out)
{
    g_autofree char *cut = rs_lower_bound_format_cut(&r->bound);
    g_autofree char *bound_s = format_seconds(r->bound.time_s);
    g_string_append_printf(out, "\nlower bound %s s, binding cut: %s\n", bound_s, cut);
    if (r->hierarchical_note != NULL)
        g_string_append_printf(out, "%s\n", r->hierarchical_note);
    if (r->auto_reason != NULL)
        g_string_append_printf(out, "auto: %s\n", r->auto_reason);
}

/* One strategy's bottleneck line (flow-level) or busiest link line (first-order), with the
 * bottleneck's utilisation over time. */
static void
simulate_bottleneck_line(const RsSimulateReport *r, const RsStrategyResult *s, GString *out)
{
    const RsFlowSimResult *f = s->flow;
    if (f == NULL) {
        if (s->cost.busiest_link_bytes == 0)
            return;
        g_autofree char *link = rs_topology_format_link(r->topology, s->cost.busiest_link);
        g_autofree char *busy = format_seconds(s->cost.busiest_link_s);
        g_autofree char *name = shown_name(s);
        g_string_append_printf(out, "busiest link (%s): %s, %.2f GB, busy %s s\n", name, link,
                               s->cost.busiest_link_bytes / 1e9, busy);
        return;
    }
    if (f->bottleneck_link == G_MAXUINT32)
        return;
    g_autofree char *link = rs_topology_format_link(r->topology, f->bottleneck_link);
    double finish_s;
    guint32 slowest = rs_flow_sim_result_get_last_receiver(f, &finish_s);
    g_autofree char *load = format_seconds(f->bottleneck_load_s);
    g_autofree char *finish = format_seconds(finish_s);
    g_autofree char *name = shown_name(s);
    g_string_append_printf(
        out, "%s: bottleneck %s, %.2f GB, load %s s = %.0f%% of the time; last GPU %u at %s s\n",
        name, link, f->link_bytes[f->bottleneck_link] / 1e9, load,
        100.0 * rs_flow_sim_get_link_utilisation(f, r->topology, f->bottleneck_link), slowest,
        finish);
    if (f->n_buckets > 0 && f->total_s > 0) {
        g_string_append_printf(out, "  %s utilisation %%, 10 slices of %.3g s: ", link,
                               f->total_s / 10);
        append_utilisation_slices(out, f, r->topology, f->bottleneck_link, 10);
        g_string_append_c(out, '\n');
    }
}

/* The last line: which network model made the times. */
static void
simulate_model_line(const RsSimulateReport *r, gboolean any_flow, GString *out)
{
    guint n_copy_rates = 0;
    rs_topology_get_copy_rates(r->topology, &n_copy_rates);
    gboolean copies = n_copy_rates > 0;
    if (!any_flow) {
        g_string_append_printf(out, "model: first-order (busiest link%s + per-message latency of "
                                    "the busiest rank, per phase)\n",
                               copies ? " or copies, the larger," : "");
        return;
    }
    g_string_append(out, "model: flow-level (max-min fair rates over NVLink, PCIe, NIC, leaf and "
                         "spine links; latency before bandwidth; ");
    const RsFlowSimOptions *fo = r->flow_options;
    RsFlowSimOptions defaults;
    rs_flow_sim_options_init(&defaults);
    if (fo == NULL)
        fo = &defaults;
    char chunk_text[48];
    if (fo->chunk_bytes % 1048576 == 0)
        g_snprintf(chunk_text, sizeof chunk_text, "%" G_GUINT64_FORMAT " MiB",
                   fo->chunk_bytes / 1048576);
    else if (fo->chunk_bytes % 1024 == 0)
        g_snprintf(chunk_text, sizeof chunk_text, "%" G_GUINT64_FORMAT " KiB",
                   fo->chunk_bytes / 1024);
    else
        g_snprintf(chunk_text, sizeof chunk_text, "%" G_GUINT64_FORMAT " B", fo->chunk_bytes);
    if (fo->posting == RS_FLOW_SIM_POST_ROUNDS)
        g_string_append(out, "each rank posts its rounds one after another, a relay once what "
                             "it forwards arrived");
    else if (fo->posting == RS_FLOW_SIM_POST_WINDOW && fo->chunk_bytes > 0)
        g_string_append_printf(out,
                               "the executor's schedule: chunk operations of %s in key "
                               "order, at most %u in flight per rank",
                               chunk_text,
                               fo->window > 0 ? fo->window : RS_FLOW_SIM_DEFAULT_WINDOW);
    else if (fo->posting == RS_FLOW_SIM_POST_WINDOW)
        g_string_append_printf(out,
                               "the executor's schedule: one operation per message in key "
                               "order, at most %u in flight per rank",
                               fo->window > 0 ? fo->window : RS_FLOW_SIM_DEFAULT_WINDOW);
    else if (fo->chunk_bytes > 0)
        g_string_append_printf(out, "relays pipelined%s in chunks of %.3g MiB",
                               fo->relays == RS_FLOW_SIM_RELAYS_FLUID ? " as fluid flows" : "",
                               fo->chunk_bytes / 1048576.0);
    else
        g_string_append(out, "relays once what they forward arrived");
    /* The peers whose rings a library pipelines ran in its step (RsFlowSimOptions.plan_relays). */
    gboolean first = TRUE;
    for (guint i = 0; fo->posting == RS_FLOW_SIM_POST_PHASES && i < r->n_results; i++) {
        const RsFlowSimResult *f = r->results[i].flow;
        if (f == NULL || (f->chunk_bytes == fo->chunk_bytes && f->relays == fo->relays))
            continue;
        g_string_append_printf(out, "%s%s in %.3g KiB steps%s", first ? "; " : ", ",
                               result_name(&r->results[i]), f->chunk_bytes / 1024.0,
                               f->relays == RS_FLOW_SIM_RELAYS_FLUID ? " as fluid flows" : "");
        first = FALSE;
    }
    if (!first)
        g_string_append(out, " (the step NCCL's ring broadcast pipelines in)");
    /* Under the executor's window, the baseline's and the peers' calls stay whole phases. */
    first = TRUE;
    for (guint i = 0; fo->posting == RS_FLOW_SIM_POST_WINDOW && i < r->n_results; i++) {
        const RsFlowSimResult *f = r->results[i].flow;
        if (f == NULL || f->posting != RS_FLOW_SIM_POST_PHASES)
            continue;
        g_string_append_printf(out, "%s%s", first ? "; whole phases posted at once for " : ", ",
                               result_name(&r->results[i]));
        if (f->relays == RS_FLOW_SIM_RELAYS_FLUID)
            g_string_append_printf(out, " (relays as fluid flows in %.3g KiB steps)",
                                   f->chunk_bytes / 1024.0);
        first = FALSE;
    }
    if (!first)
        g_string_append(out, " (their own calls, not reshard run's schedule)");
    if (copies)
        g_string_append(out, "; the topology's copy rates are not simulated");
    g_string_append_printf(out, "); first-order: busiest link%s + per-message latency of "
                                "the busiest rank, per phase\n",
                           copies ? " or copies, the larger," : "");
}

/* The strategies: one row each. The text table shows its own name column (auto with the
 * candidate it picked) and puts rounds and the first-order time (when a flow-level time is
 * next to it) before the times; CSV keeps its historical order. */
enum {
    SM_LABEL, SM_NAME, SM_JSON_NAME, SM_STRATEGY, SM_VARIANT_JSON, SM_ROUNDS_JSON,
    SM_STAGING_JSON, SM_BYTES_MOVED, SM_NVLINK, SM_NETWORK, SM_LOCAL, SM_GPU_IN, SM_GPU_IN_GPU,
    SM_NIC_OUT, SM_NIC_OUT_GPU, SM_MESSAGES, SM_ROUNDS_TEXT, SM_FIRST_ORDER_TEXT, SM_TRANSFERS,
    SM_PHASES, SM_PREDICTED, SM_BOUND, SM_EFFICIENCY, SM_NETWORK_MODEL, SM_FIRST_ORDER,
    SM_NETWORK_S, SM_NVLINK_S, SM_COPY_S, SM_FIXED_S,
    SM_BOTTLENECK, SM_BOTTLENECK_LOAD, SM_ROUNDS_CSV, SM_STAGING_CSV, SM_VARIANT_CSV, SM_FLOW,
    SM_BUSIEST, SM_FEASIBLE_CSV,
};

#define SECONDS_3 RS_COLUMN_SECONDS, 3

static const RsColumn strategy_columns[] = {
    [SM_LABEL] = {"strategy", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_TABLE_ONLY},
    [SM_NAME] = {"strategy", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_CSV_ONLY},
    [SM_JSON_NAME] = {"name", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_JSON_ONLY},
    [SM_STRATEGY] = {"strategy", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_JSON_ONLY},
    [SM_VARIANT_JSON] = {"variant", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_JSON_ONLY},
    [SM_ROUNDS_JSON] = {"rounds", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_JSON_ONLY},
    [SM_STAGING_JSON] = {"max_round_staging_bytes", NULL, RS_COLUMN_BYTES, 0,
                         RS_COLUMN_JSON_ONLY},
    [SM_BYTES_MOVED] = {"bytes_moved", "moved", RS_COLUMN_GB, 1, 0},
    [SM_NVLINK] = {"bytes_nvlink", "NVLink", RS_COLUMN_GB, 1, 0},
    [SM_NETWORK] = {"bytes_network", "network", RS_COLUMN_GB, 1, 0},
    [SM_LOCAL] = {"local_bytes", NULL, RS_COLUMN_BYTES, 0, RS_COLUMN_NO_TABLE},
    [SM_GPU_IN] = {"max_gpu_ingress_bytes", "max GPU in", RS_COLUMN_GB, 2, 0},
    [SM_GPU_IN_GPU] = {"max_gpu_ingress_gpu", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_JSON_ONLY},
    [SM_NIC_OUT] = {"max_nic_egress_bytes", "max NIC out", RS_COLUMN_GB, 2, 0},
    [SM_NIC_OUT_GPU] = {"max_nic_egress_gpu", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_JSON_ONLY},
    [SM_MESSAGES] = {"messages", NULL, RS_COLUMN_INTEGER, 0, 0},
    [SM_ROUNDS_TEXT] = {"rounds", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_TABLE_ONLY},
    [SM_FIRST_ORDER_TEXT] = {"first_order_s", "first-order", SECONDS_3,
                             RS_COLUMN_TABLE_ONLY | RS_COLUMN_SIGNIFICANT},
    [SM_TRANSFERS] = {"transfers", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [SM_PHASES] = {"phases", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [SM_PREDICTED] = {"predicted_s", "time", SECONDS_3, RS_COLUMN_SIGNIFICANT},
    [SM_BOUND] = {"lower_bound_s", "bound", SECONDS_3, RS_COLUMN_SIGNIFICANT | RS_COLUMN_NO_JSON},
    [SM_EFFICIENCY] = {"efficiency", NULL, RS_COLUMN_RATIO, 0, 0},
    [SM_NETWORK_MODEL] = {"network_model", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_TABLE},
    [SM_FIRST_ORDER] = {"first_order_s", NULL, SECONDS_3, RS_COLUMN_NO_TABLE},
    [SM_BOTTLENECK] = {"bottleneck_link", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_CSV_ONLY},
    [SM_BOTTLENECK_LOAD] = {"bottleneck_load_s", NULL, SECONDS_3, RS_COLUMN_CSV_ONLY},
    [SM_ROUNDS_CSV] = {"rounds", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_CSV_ONLY},
    [SM_STAGING_CSV] = {"max_round_staging_bytes", NULL, RS_COLUMN_BYTES, 0, RS_COLUMN_CSV_ONLY},
    [SM_VARIANT_CSV] = {"variant", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_CSV_ONLY},
    [SM_FLOW] = {"flow", NULL, RS_COLUMN_JSON, 0, 0},
    [SM_BUSIEST] = {"busiest_link", NULL, RS_COLUMN_JSON, 0, 0},
    /* The scenario's memory feasibility on every row (JSON: the "memory" member; text:
     * the memory lines). */
    [SM_FEASIBLE_CSV] = {"memory_feasible", NULL, RS_COLUMN_BOOL, 0, RS_COLUMN_CSV_ONLY},
    /* Where the first-order time goes (RsCostEstimate): network, NVLink, copies (pack,
     * unpack, local), fixed costs (overheads, latency, launches, round synchronisation). */
    [SM_NETWORK_S] = {"network_s", "network", SECONDS_3, RS_COLUMN_SIGNIFICANT},
    [SM_NVLINK_S] = {"nvlink_s", "NVLink", SECONDS_3, RS_COLUMN_SIGNIFICANT},
    [SM_COPY_S] = {"gpu_copy_s", "copy", SECONDS_3, RS_COLUMN_SIGNIFICANT},
    [SM_FIXED_S] = {"fixed_s", "fixed", SECONDS_3, RS_COLUMN_SIGNIFICANT},
};

/* The JSON value a builder holds (a sub-document); frees the builder. */
static JsonNode *
builder_steal_root(JsonBuilder *b)
{
    JsonNode *node = json_builder_get_root(b);
    g_object_unref(b);
    return node;
}

/* The flow simulation's figures: events, phases, bottleneck, per-GPU finish times. */
static JsonNode *
flow_node(const RsFlowSimResult *f, const RsTopology *topo)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    JSON_DOUBLE(b, "total_s", f->total_s);
    JSON_INT(b, "chunks", f->n_chunks);
    JSON_INT(b, "events", f->n_events);
    JSON_INT(b, "relay_chunk_bytes", f->chunk_bytes);
    JSON_STRING(b, "relays", f->n_rounds > 0                              ? "rounds"
                             : f->posting == RS_FLOW_SIM_POST_WINDOW       ? "window"
                             : f->relays == RS_FLOW_SIM_RELAYS_FLUID       ? "fluid"
                                                                           : "chunked");
    if (f->posting == RS_FLOW_SIM_POST_WINDOW)
        JSON_INT(b, "window", f->window);
    json_builder_set_member_name(b, "phase_end_s");
    json_builder_begin_array(b);
    for (guint p = 0; p < f->n_phases; p++)
        json_builder_add_double_value(b, f->phase_end_s[p]);
    json_builder_end_array(b);
    if (f->bottleneck_link != G_MAXUINT32) {
        g_autofree char *link = rs_topology_format_link(topo, f->bottleneck_link);
        json_builder_set_member_name(b, "bottleneck_link");
        json_builder_begin_object(b);
        JSON_STRING(b, "name", link);
        JSON_INT(b, "bytes", f->link_bytes[f->bottleneck_link]);
        JSON_DOUBLE(b, "load_s", f->bottleneck_load_s);
        JSON_DOUBLE(b, "busy_s", f->link_busy_s[f->bottleneck_link]);
        JSON_DOUBLE(b, "utilisation",
                    rs_flow_sim_get_link_utilisation(f, topo, f->bottleneck_link));
        json_builder_end_object(b);
    }
    json_builder_set_member_name(b, "gpu_finish_s");
    json_builder_begin_array(b);
    for (guint32 g = 0; g < f->n_gpus; g++) {
        if (f->gpu_finish_s[g] < 0)
            continue;
        json_builder_begin_object(b);
        JSON_INT(b, "gpu", g);
        JSON_DOUBLE(b, "finish_s", f->gpu_finish_s[g]);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    return builder_steal_root(b);
}

static JsonNode *
busiest_link_node(const RsStrategyResult *s, const RsTopology *topo)
{
    g_autofree char *link = rs_topology_format_link(topo, s->cost.busiest_link);
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    JSON_STRING(b, "name", link);
    JSON_INT(b, "bytes", s->cost.busiest_link_bytes);
    JSON_DOUBLE(b, "busy_s", s->cost.busiest_link_s);
    json_builder_end_object(b);
    return builder_steal_root(b);
}

/* The bottleneck (flow-level) or busiest link (first-order) of a strategy; NULL: none. */
static char *
bottleneck_name(const RsSimulateReport *r, const RsStrategyResult *s)
{
    const RsFlowSimResult *f = s->flow;
    if (f != NULL && f->bottleneck_link != G_MAXUINT32)
        return rs_topology_format_link(r->topology, f->bottleneck_link);
    if (f == NULL && s->cost.busiest_link_bytes > 0)
        return rs_topology_format_link(r->topology, s->cost.busiest_link);
    return NULL;
}

/* The names and plan figures of a strategy's row. */
static void
add_strategy_plan(RsTable *t, const RsStrategyResult *s)
{
    if (s->label != NULL && strcmp(s->label, "auto") == 0 && s->note != NULL)
        rs_table_take_text(t, SM_LABEL, g_strdup_printf("auto: %s", s->note));
    else
        rs_table_take_text(t, SM_LABEL, shown_name(s));
    rs_table_set_text(t, SM_NAME, result_name(s));
    rs_table_set_text(t, SM_JSON_NAME, result_name(s));
    rs_table_set_text(t, SM_STRATEGY, rs_strategy_get_name(s->strategy));
    if (s->note != NULL) {
        rs_table_set_text(t, SM_VARIANT_JSON, s->note);
        rs_table_set_text(t, SM_VARIANT_CSV, s->note);
    }
    const guint rounds[] = {SM_ROUNDS_JSON, SM_ROUNDS_TEXT, SM_ROUNDS_CSV};
    for (guint i = 0; i < G_N_ELEMENTS(rounds); i++)
        rs_table_set_uint(t, rounds[i], s->n_rounds);
    rs_table_set_uint(t, SM_STAGING_JSON, s->max_round_staging_bytes);
    rs_table_set_uint(t, SM_STAGING_CSV, s->max_round_staging_bytes);
    rs_table_set_uint(t, SM_TRANSFERS, s->n_transfers);
}

/* The cost figures of a strategy's row: bytes, maxima, messages, times. */
static void
add_strategy_cost(RsTable *t, const RsSimulateReport *r, const RsStrategyResult *s)
{
    const RsCostEstimate *c = &s->cost;
    rs_table_set_uint(t, SM_BYTES_MOVED, c->bytes_moved);
    rs_table_set_uint(t, SM_NVLINK, c->bytes_nvlink);
    rs_table_set_uint(t, SM_NETWORK, c->bytes_network);
    rs_table_set_uint(t, SM_LOCAL, c->local_bytes);
    rs_table_set_uint(t, SM_GPU_IN, c->max_gpu_ingress_bytes);
    rs_table_set_uint(t, SM_GPU_IN_GPU, c->max_gpu_ingress_gpu);
    rs_table_set_uint(t, SM_NIC_OUT, c->max_nic_egress_bytes);
    rs_table_set_uint(t, SM_NIC_OUT_GPU, c->max_nic_egress_gpu);
    rs_table_set_uint(t, SM_MESSAGES, c->n_messages);
    rs_table_set_uint(t, SM_PHASES, c->n_phases);
    rs_table_set_double(t, SM_PREDICTED, predicted_s(s));
    rs_table_set_double(t, SM_BOUND, r->bound.time_s);
    rs_table_set_double(t, SM_EFFICIENCY, efficiency(r, s));
    rs_table_set_double(t, SM_FIRST_ORDER_TEXT, c->predicted_s);
    rs_table_set_double(t, SM_FIRST_ORDER, c->predicted_s);
    rs_table_set_double(t, SM_NETWORK_S, c->network_s);
    rs_table_set_double(t, SM_NVLINK_S, c->nvlink_s);
    rs_table_set_double(t, SM_COPY_S, c->gpu_copy_s);
    rs_table_set_double(t, SM_FIXED_S, c->fixed_s);
    if (r->memory != NULL)
        rs_table_set_bool(t, SM_FEASIBLE_CSV, r->memory->feasible);
}

/* The network model's figures of a strategy's row: the model, the bottleneck, the flow. */
static void
add_strategy_network(RsTable *t, const RsSimulateReport *r, const RsStrategyResult *s)
{
    const RsFlowSimResult *f = s->flow;
    rs_table_set_text(t, SM_NETWORK_MODEL, f ? "flow" : "bottleneck");
    char *link = bottleneck_name(r, s);
    if (link != NULL)
        rs_table_take_text(t, SM_BOTTLENECK, link);
    rs_table_set_double(t, SM_BOTTLENECK_LOAD, f ? f->bottleneck_load_s : s->cost.busiest_link_s);
    if (f != NULL)
        rs_table_take_json(t, SM_FLOW, flow_node(f, r->topology));
    if (s->cost.busiest_link_bytes > 0)
        rs_table_take_json(t, SM_BUSIEST, busiest_link_node(s, r->topology));
}

RsTable *
rs_report_simulate_table(const RsSimulateReport *r)
{
    return strategy_table(r);
}

static RsTable *
strategy_table(const RsSimulateReport *r)
{
    RsTable *t = rs_table_new("strategies", strategy_columns, G_N_ELEMENTS(strategy_columns));
    gboolean any_flow = FALSE;
    for (guint i = 0; i < r->n_results; i++) {
        const RsStrategyResult *s = &r->results[i];
        any_flow |= s->flow != NULL;
        rs_table_add_row(t);
        add_strategy_plan(t, s);
        add_strategy_cost(t, r, s);
        add_strategy_network(t, r, s);
    }
    if (!any_flow)
        rs_table_hide_column(t, SM_FIRST_ORDER_TEXT);
    return t;
}

static void
simulate_text(const RsSimulateReport *r, const RsTable *t, GString *out)
{
    gboolean any_flow = FALSE;
    for (guint i = 0; i < r->n_results; i++)
        any_flow |= r->results[i].flow != NULL;
    simulate_header(r, out);
    rs_table_append_text(t, out);
    simulate_bound_lines(r, out);
    for (guint i = 0; i < r->n_results; i++)
        simulate_bottleneck_line(r, &r->results[i], out);
    simulate_model_line(r, any_flow, out);
}

/* The JSON members naming the work: the scenario, model, topology and the two layouts. */
static void
json_simulate_work(JsonBuilder *b, const RsSimulateReport *r)
{
    JSON_STRING(b, "scenario", r->scenario_name);
    /* The flags that replaced parts of it, or null: the name alone said the default
     * scenario for a run whose every part came from the command line. */
    json_builder_set_member_name(b, "scenario_overrides");
    if (r->scenario_overrides != NULL)
        json_builder_add_string_value(b, r->scenario_overrides);
    else
        json_builder_add_null_value(b);
    json_builder_set_member_name(b, "model");
    json_builder_begin_object(b);
    JSON_STRING(b, "name", rs_model_get_name(r->model));
    JSON_STRING(b, "family", rs_model_get_family(r->model));
    JSON_STRING(b, "dtype", rs_dtype_get_name(rs_model_get_dtype(r->model)));
    JSON_INT(b, "params", rs_model_get_n_params(r->model));
    JSON_INT(b, "active_params", rs_model_get_n_active_params(r->model));
    JSON_INT(b, "bytes", rs_refit_get_size_bytes(r->refit));
    JSON_INT(b, "tensors", rs_refit_get_n_tensors(r->refit));
    json_builder_end_object(b);
    json_builder_set_member_name(b, "topology");
    json_builder_begin_object(b);
    JSON_STRING(b, "name", rs_topology_get_name(r->topology));
    JSON_INT(b, "nodes", rs_topology_get_n_nodes(r->topology));
    JSON_INT(b, "gpus", rs_topology_get_n_gpus(r->topology));
    JSON_INT(b, "gpus_per_nvlink_domain", rs_topology_get_gpus_per_nvlink_domain(r->topology));
    json_builder_end_object(b);
    json_builder_set_member_name(b, "train");
    json_builder_begin_object(b);
    JSON_STRING(b, "layout", r->train_desc);
    JSON_STRING(b, "gpus", r->train_gpus);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "infer");
    json_builder_begin_object(b);
    JSON_STRING(b, "layout", r->infer_desc);
    JSON_STRING(b, "gpus", r->infer_gpus);
    json_builder_end_object(b);
}

/* The JSON members of the lower bound and the planner's settings. */
static void
json_simulate_bound(JsonBuilder *b, const RsSimulateReport *r)
{
    JSON_DOUBLE(b, "lower_bound_s", r->bound.time_s);
    json_builder_set_member_name(b, "binding_cut");
    json_builder_begin_object(b);
    JSON_STRING(b, "kind", rs_cut_kind_get_name(r->bound.kind));
    JSON_INT(b, "where", r->bound.where);
    JSON_INT(b, "bytes", r->bound.cut_bytes);
    JSON_DOUBLE(b, "capacity_bytes_per_s", r->bound.cut_capacity_bytes_per_s);
    /* A GPU's cut is its NVLink with its NIC (or the PCIe link below it), as the text
     * says ("GPU 0 ingress (NVLink + NIC)"): "nic" alone read as the NIC being the limit. */
    gboolean gpu_cut = r->bound.kind == RS_CUT_GPU_INGRESS || r->bound.kind == RS_CUT_GPU_EGRESS;
    JSON_STRING(b, "links", r->bound.cut_links == RS_CUT_LINKS_PCIE ? (gpu_cut ? "nvlink+pcie" : "pcie")
                            : r->bound.cut_links == RS_CUT_LINKS_LEAF   ? "leaf"
                            : r->bound.cut_links == RS_CUT_LINKS_NVLINK ? "nvlink"
                            : gpu_cut                                   ? "nvlink+nic"
                                                                        : "nic");
    json_builder_end_object(b);
    json_builder_set_member_name(b, "cuts_s");
    json_builder_begin_object(b);
    for (guint k = RS_CUT_NONE + 1; k < RS_CUT_KIND_N; k++)
        JSON_DOUBLE(b, rs_cut_kind_get_name((RsCutKind)k), r->bound.kind_s[k]);
    json_builder_end_object(b);
    JSON_INT(b, "staging_bytes", r->staging_bytes);
    JSON_INT(b, "max_ops_per_group", r->max_ops_per_group);
    if (r->auto_reason != NULL)
        JSON_STRING(b, "auto_reason", r->auto_reason);
}

void
rs_report_simulate(const RsSimulateReport *report, RsFormat format, GString *out)
{
    g_autoptr(RsTable) t = strategy_table(report);
    if (format == RS_FORMAT_TABLE) {
        simulate_text(report, t, out);
        return;
    }
    if (format == RS_FORMAT_CSV) {
        rs_table_append_csv(t, out);
        return;
    }
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_simulate_work(b, report);
    json_simulate_bound(b, report);
    if (report->memory != NULL)
        json_memory(b, report->memory);
    json_builder_set_member_name(b, "strategies");
    rs_table_add_json_array(t, b);
    json_builder_end_object(b);
    rs_report_json_append(b, out);
}

/* "bf16:123,fp8-e4m3:456" of the dtypes a model stores (raw bytes), in dtype order. */
static char *
bytes_by_dtype_text(const RsModel *m, gboolean decimal_gb)
{
    guint64 bytes[RS_DTYPE_N];
    rs_model_get_size_bytes_by_dtype(m, bytes);
    GString *s = g_string_new(NULL);
    for (guint d = 0; d < RS_DTYPE_N; d++) {
        if (bytes[d] == 0)
            continue;
        if (decimal_gb)
            g_string_append_printf(s, "%s%s %.2f", s->len ? ", " : "",
                                   rs_dtype_get_name((RsDtype)d), bytes[d] / 1e9);
        else
            g_string_append_printf(s, "%s%s:%" G_GUINT64_FORMAT, s->len ? ";" : "",
                                   rs_dtype_get_name((RsDtype)d), bytes[d]);
    }
    return g_string_free(s, FALSE);
}

/* "exact", "-0.73% of 2.8T", "MISMATCH (...)" or "" when nothing is published. */
static char *
published_text(const RsModel *m)
{
    gboolean rounded;
    guint64 published = rs_model_get_published_params(m, &rounded);
    if (published == 0)
        return g_strdup("");
    g_autoptr(GError) error = NULL;
    gboolean ok = rs_model_check_published(m, &error);
    double diff = 100.0 * ((double)rs_model_get_n_params(m) - (double)published) /
                  (double)published;
    if (!rounded)
        return g_strdup(ok ? "exact" : "MISMATCH");
    return g_strdup_printf("%s%+.2f%% of %.4g%s", ok ? "" : "MISMATCH ", diff,
                           published >= 1000000000000ull ? published / 1e12 : published / 1e9,
                           published >= 1000000000000ull ? "T" : "B");
}

/* The models report: one row per model. The CSV keeps id,name,family,layers,tensors,params,
 * active_params,dtype,bytes first. */
enum {
    MD_ID, MD_NAME, MD_FAMILY, MD_LAYERS, MD_TENSORS, MD_PARAMS, MD_ACTIVE, MD_DTYPE, MD_BYTES,
    MD_PARAMS_NE, MD_ACTIVE_NE, MD_PUBLISHED, MD_PUBLISHED_TEXT, MD_PUBLISHED_ROUNDED,
    MD_PUBLISHED_MATCH, MD_STORED_BYTES, MD_BY_DTYPE_CSV, MD_BY_DTYPE_JSON, MD_BY_DTYPE_TEXT,
};

static const RsColumn model_columns[] = {
    [MD_ID] = {"id", NULL, RS_COLUMN_TEXT, 0, 0},
    [MD_NAME] = {"name", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_TABLE},
    [MD_FAMILY] = {"family", NULL, RS_COLUMN_TEXT, 0, 0},
    [MD_LAYERS] = {"layers", NULL, RS_COLUMN_INTEGER, 0, 0},
    [MD_TENSORS] = {"tensors", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [MD_PARAMS] = {"params", "parameters", RS_COLUMN_INTEGER, 0, RS_COLUMN_THOUSANDS},
    [MD_ACTIVE] = {"active_params", "active", RS_COLUMN_INTEGER, 0, RS_COLUMN_THOUSANDS},
    [MD_DTYPE] = {"dtype", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_TABLE},
    [MD_BYTES] = {"bytes", "refit", RS_COLUMN_GB, 2, 0},
    [MD_PARAMS_NE] = {"params_without_embeddings", "w/o embeddings", RS_COLUMN_INTEGER, 0,
                      RS_COLUMN_THOUSANDS},
    [MD_ACTIVE_NE] = {"active_params_without_embeddings", "active w/o emb.", RS_COLUMN_INTEGER,
                      0, RS_COLUMN_THOUSANDS},
    [MD_PUBLISHED] = {"published_params", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [MD_PUBLISHED_TEXT] = {"published_match", "published", RS_COLUMN_TEXT, 0, RS_COLUMN_NO_JSON},
    [MD_PUBLISHED_ROUNDED] = {"published_rounded", NULL, RS_COLUMN_BOOL, 0,
                              RS_COLUMN_NO_TABLE | RS_COLUMN_NO_CSV},
    [MD_PUBLISHED_MATCH] = {"published_match", NULL, RS_COLUMN_BOOL, 0,
                            RS_COLUMN_NO_TABLE | RS_COLUMN_NO_CSV},
    [MD_STORED_BYTES] = {"stored_bytes", "stored", RS_COLUMN_GB, 2, 0},
    [MD_BY_DTYPE_CSV] = {"stored_bytes_by_dtype", NULL, RS_COLUMN_TEXT, 0,
                         RS_COLUMN_NO_TABLE | RS_COLUMN_NO_JSON},
    [MD_BY_DTYPE_JSON] = {"stored_bytes_by_dtype", NULL, RS_COLUMN_JSON, 0, 0},
    [MD_BY_DTYPE_TEXT] = {"stored_bytes_by_dtype", "stored GB by dtype", RS_COLUMN_TEXT, 0,
                          RS_COLUMN_TABLE_ONLY},
};

static JsonNode *
bytes_by_dtype_node(const RsModel *m)
{
    guint64 bytes[RS_DTYPE_N];
    rs_model_get_size_bytes_by_dtype(m, bytes);
    JsonObject *o = json_object_new();
    for (guint d = 0; d < RS_DTYPE_N; d++)
        if (bytes[d] != 0)
            json_object_set_int_member(o, rs_dtype_get_name((RsDtype)d), (gint64)bytes[d]);
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);
    json_node_take_object(node, o);
    return node;
}

static void
add_model_row(RsTable *t, const char *id, const RsModel *m, const RsModel *st)
{
    guint64 embed = rs_model_get_n_embedding_params(m);
    gboolean rounded;
    guint64 published = rs_model_get_published_params(m, &rounded);
    rs_table_add_row(t);
    rs_table_set_text(t, MD_ID, id);
    rs_table_set_text(t, MD_NAME, rs_model_get_name(m));
    rs_table_set_text(t, MD_FAMILY, rs_model_get_family(m));
    rs_table_set_uint(t, MD_LAYERS, rs_model_get_n_layers(m));
    rs_table_set_uint(t, MD_TENSORS, rs_model_get_n_tensors(m));
    rs_table_set_uint(t, MD_PARAMS, rs_model_get_n_params(m));
    rs_table_set_uint(t, MD_ACTIVE, rs_model_get_n_active_params(m));
    rs_table_set_text(t, MD_DTYPE, rs_dtype_get_name(rs_model_get_dtype(m)));
    rs_table_set_uint(t, MD_BYTES, rs_model_get_size_bytes(m));
    rs_table_set_uint(t, MD_PARAMS_NE, rs_model_get_n_params(m) - embed);
    rs_table_set_uint(t, MD_ACTIVE_NE, rs_model_get_n_active_params(m) - embed);
    rs_table_take_text(t, MD_PUBLISHED_TEXT, published_text(m));
    rs_table_set_uint(t, MD_PUBLISHED, published);
    if (published != 0) {
        rs_table_set_bool(t, MD_PUBLISHED_ROUNDED, rounded);
        rs_table_set_bool(t, MD_PUBLISHED_MATCH, rs_model_check_published(m, NULL));
    }
    rs_table_set_uint(t, MD_STORED_BYTES, rs_model_get_size_bytes(st));
    rs_table_take_text(t, MD_BY_DTYPE_CSV, bytes_by_dtype_text(st, FALSE));
    rs_table_take_json(t, MD_BY_DTYPE_JSON, bytes_by_dtype_node(st));
    rs_table_take_text(t, MD_BY_DTYPE_TEXT, bytes_by_dtype_text(st, TRUE));
}

void
rs_report_models(GPtrArray *models, GPtrArray *stored, const char *const *names,
                 RsFormat format, GString *out)
{
    g_autoptr(RsTable) t = rs_table_new("models", model_columns, G_N_ELEMENTS(model_columns));
    for (guint i = 0; i < models->len; i++) {
        const RsModel *m = g_ptr_array_index(models, i);
        add_model_row(t, names[i], m, stored ? g_ptr_array_index(stored, i) : m);
    }
    rs_table_append(t, format, out);
    if (format != RS_FORMAT_TABLE)
        return;
    g_string_append(
        out,
        "parameters: logical weights including embedding and head, without MTP layers (--mtp "
        "adds them), FP4 values unpacked, quantisation scales and padding not counted.\n"
        "w/o embeddings: less the input token embeddings (embed_tokens); the output head stays "
        "counted.\n"
        "active: routed experts counted for num_experts_per_tok of them, everything else "
        "whole.\n"
        "published: exact figures must match exactly, rounded ones (e.g. 2.8T) within 1%.\n"
        "refit GB: every tensor in the model dtype (what a refit moves); stored GB: as the "
        "published checkpoint stores it (FP8 + block scales, MXFP4 blocks + scales); GB = "
        "10^9 bytes.\n");
}

/* The tensors of a model: one row each. */
enum { TN_NAME, TN_SHAPE_TEXT, TN_SHAPE_JSON, TN_DTYPE, TN_ROLE, TN_LAYER, TN_HEADS_TEXT,
       TN_HEADS, TN_KV_HEADS, TN_PARAMS, TN_BYTES };

static const RsColumn tensor_columns[] = {
    [TN_NAME] = {"name", NULL, RS_COLUMN_TEXT, 0, 0},
    [TN_SHAPE_TEXT] = {"shape", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_JSON},
    [TN_SHAPE_JSON] = {"shape", NULL, RS_COLUMN_JSON, 0, 0},
    [TN_DTYPE] = {"dtype", NULL, RS_COLUMN_TEXT, 0, 0},
    [TN_ROLE] = {"role", NULL, RS_COLUMN_TEXT, 0, 0},
    [TN_LAYER] = {"layer", NULL, RS_COLUMN_INTEGER, 0, 0},
    [TN_HEADS_TEXT] = {"heads", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_JSON},
    [TN_HEADS] = {"heads", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE | RS_COLUMN_NO_CSV},
    [TN_KV_HEADS] = {"kv_heads", NULL, RS_COLUMN_BOOL, 0, RS_COLUMN_NO_TABLE | RS_COLUMN_NO_CSV},
    [TN_PARAMS] = {"params", "parameters", RS_COLUMN_INTEGER, 0, RS_COLUMN_THOUSANDS},
    [TN_BYTES] = {"bytes", NULL, RS_COLUMN_BYTES, 0, RS_COLUMN_THOUSANDS},
};

static void
add_tensor_row(RsTable *t, const RsTensorSpec *s)
{
    GString *shape = g_string_new(NULL);
    JsonArray *dims = json_array_new();
    for (guint d = 0; d < s->n_dims; d++) {
        g_string_append_printf(shape, "%s%" G_GINT64_FORMAT, d ? "x" : "", s->shape[d]);
        json_array_add_int_element(dims, s->shape[d]);
    }
    JsonNode *dims_node = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(dims_node, dims);
    rs_table_add_row(t);
    rs_table_set_text(t, TN_NAME, s->name);
    rs_table_take_text(t, TN_SHAPE_TEXT, g_string_free(shape, FALSE));
    rs_table_take_json(t, TN_SHAPE_JSON, dims_node);
    rs_table_set_text(t, TN_DTYPE, rs_dtype_get_name(s->dtype));
    rs_table_set_text(t, TN_ROLE, rs_tensor_role_get_name(s->role));
    rs_table_set_int(t, TN_LAYER, s->layer);
    rs_table_take_text(t, TN_HEADS_TEXT,
                       s->n_heads ? g_strdup_printf("%u%s", s->n_heads, s->kv_heads ? " kv" : "")
                                  : g_strdup(""));
    rs_table_set_uint(t, TN_HEADS, s->n_heads);
    rs_table_set_bool(t, TN_KV_HEADS, s->kv_heads);
    rs_table_set_uint(t, TN_PARAMS, rs_tensor_spec_get_n_params(s));
    rs_table_set_uint(t, TN_BYTES, rs_tensor_spec_get_size_bytes(s));
}

void
rs_report_model_tensors(const RsModel *model, gint layer, RsFormat format, GString *out)
{
    g_autoptr(RsTable) t = rs_table_new("tensors", tensor_columns, G_N_ELEMENTS(tensor_columns));
    for (guint i = 0; i < rs_model_get_n_tensors(model); i++) {
        const RsTensorSpec *s = rs_model_get_tensor(model, i);
        if (layer == G_MININT || s->layer == layer)
            add_tensor_row(t, s);
    }
    rs_table_append(t, format, out);
}

/* Seconds with 6 decimals, or in %g form when that would take more than a line's width
 * (a prediction from an implausible figure in a hand-written topology). */
static const char *
run_seconds(char *buf, gsize size, double s)
{
    if (isfinite(s) && fabs(s) < 1e6)
        g_snprintf(buf, size, "%.6f", s);
    else
        g_snprintf(buf, size, "%.6g", s);
    return buf;
}

double
rs_run_report_get_error(const RsRunReport *r)
{
    if (!r->has_prediction || r->measured_s <= 0)
        return 0.0;
    return (r->predicted_s - r->measured_s) / r->measured_s;
}

/* The lines above the tables of `reshard run`: the work, the plan and the executor. */
static void
run_header(const RsRunReport *r, GString *out)
{
    g_string_append_printf(out, "work       %s\n", r->work);
    g_string_append_printf(out, "plan       %s: %u transfer%s, %u network message%s, %.4f GB moved, "
                                "%.4f GB local copies\n",
                           r->strategy, r->n_transfers, r->n_transfers == 1 ? "" : "s",
                           r->n_network_messages, r->n_network_messages == 1 ? "" : "s",
                           r->bytes_moved / 1e9, r->local_bytes / 1e9);
    g_string_append_printf(out, "executor   %s transport, %u rank%s, chunks of %" G_GUINT64_FORMAT
                                " bytes, %u in flight per rank, %.3f GB of buffers\n",
                           r->transport, r->n_ranks, r->n_ranks == 1 ? "" : "s", r->chunk_bytes,
                           r->window, r->buffer_bytes / 1e9);
    g_string_append_c(out, '\n');
}

/* Measured against predicted, side by side: a text-only table whose rows are quantities
 * (time, rate), so its cells are formatted here. */
enum { CMP_WHAT, CMP_MEASURED, CMP_PREDICTED, CMP_ERROR };

static const RsColumn comparison_columns[] = {
    [CMP_WHAT] = {"quantity", "", RS_COLUMN_TEXT, 0, 0},
    [CMP_MEASURED] = {"measured", NULL, RS_COLUMN_TEXT, 0, 0},
    [CMP_PREDICTED] = {"predicted", NULL, RS_COLUMN_TEXT, 0, 0},
    [CMP_ERROR] = {"error", NULL, RS_COLUMN_TEXT, 0, 0},
};

static void
run_comparison_table(const RsRunReport *r, GString *out)
{
    g_autoptr(RsTable) t = rs_table_new("comparison", comparison_columns,
                                        G_N_ELEMENTS(comparison_columns));
    char buf[64];
    rs_table_add_row(t);
    rs_table_set_text(t, CMP_WHAT, "time s");
    rs_table_set_text(t, CMP_MEASURED, run_seconds(buf, sizeof buf, r->measured_s));
    if (r->has_prediction) {
        double err = 100.0 * rs_run_report_get_error(r);
        rs_table_set_text(t, CMP_PREDICTED, run_seconds(buf, sizeof buf, r->predicted_s));
        rs_table_take_text(t, CMP_ERROR,
                           g_strdup_printf(fabs(err) < 1e4 ? "%+.1f%%" : "%+.3g%%", err));
    } else {
        rs_table_set_null(t, CMP_PREDICTED);
        rs_table_set_null(t, CMP_ERROR);
    }
    rs_table_add_row(t);
    rs_table_set_text(t, CMP_WHAT, "GB/s");
    rs_table_take_text(t, CMP_MEASURED,
                       g_strdup_printf("%.3f", r->measured_s > 0
                                                   ? r->bytes_moved / r->measured_s / 1e9
                                                   : 0.0));
    if (r->has_prediction && r->predicted_s > 0)
        rs_table_take_text(t, CMP_PREDICTED,
                           g_strdup_printf("%.3f", r->bytes_moved / r->predicted_s / 1e9));
    else
        rs_table_set_null(t, CMP_PREDICTED);
    rs_table_append_text(t, out);
    g_string_append_c(out, '\n');
}

/* The phases of a run: the text table and the JSON phases[]. */
enum { PH_PHASE, PH_MESSAGES, PH_BYTES, PH_MEASURED, PH_RATE };

static const RsColumn phase_columns[] = {
    [PH_PHASE] = {"phase", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_JSON},
    [PH_MESSAGES] = {"messages", NULL, RS_COLUMN_INTEGER, 0, 0},
    [PH_BYTES] = {"bytes", "", RS_COLUMN_GB, 4, 0},
    [PH_MEASURED] = {"measured_s", "measured", RS_COLUMN_SECONDS, 6, 0},
    [PH_RATE] = {"bytes_per_s", "", RS_COLUMN_RATE, 3, RS_COLUMN_TABLE_ONLY},
};

static RsTable *
run_phase_table(const RsRunReport *r)
{
    RsTable *t = rs_table_new("phases", phase_columns, G_N_ELEMENTS(phase_columns));
    for (guint p = 0; p < r->n_phases; p++) {
        const RsRunPhase *ph = &r->phases[p];
        rs_table_add_row(t);
        rs_table_set_uint(t, PH_PHASE, p);
        rs_table_set_uint(t, PH_MESSAGES, ph->n_messages);
        rs_table_set_uint(t, PH_BYTES, ph->size_bytes);
        rs_table_set_double(t, PH_MEASURED, ph->measured_s);
        rs_table_set_double(t, PH_RATE,
                            ph->measured_s > 0 ? ph->size_bytes / ph->measured_s : 0.0);
    }
    return t;
}

/* The lines below the tables: the runs, the transport's counters and the validation. */
static void
run_counters(const RsRunReport *r, GString *out)
{
    g_string_append_printf(out, "runs       %u:", r->n_runs);
    for (guint i = 0; i < r->n_runs; i++)
        g_string_append_printf(out, " %.6f", r->run_s[i]);
    g_string_append(out, " s (the median is reported)\n");
    g_string_append_printf(out, "transport  %" G_GUINT64_FORMAT " send calls, %" G_GUINT64_FORMAT
                                " chunks without a pack copy, at most %.3f MB of pack buffers "
                                "on one rank\n",
                           r->n_sends, r->n_zero_copy, r->peak_pack_bytes / 1e6);
    if (!r->validated)
        g_string_append(out, "validation skipped (--no-validate)\n");
    else if (r->n_bad_elems == 0)
        g_string_append_printf(out, "validation every destination element checked: %" G_GUINT64_FORMAT
                                    " elements correct\n",
                               r->n_checked_elems);
    else
        g_string_append_printf(out, "validation FAILED: %" G_GUINT64_FORMAT " element%s; "
                                    "first: %s\n",
                               r->n_bad_elems, r->n_bad_elems == 1 ? " differs" : "s differ",
                               r->first_bad ? r->first_bad : "");
}

/* The last lines: what the prediction is and its parts. */
static void
run_prediction(const RsRunReport *r, GString *out)
{
    char b1[64], b2[64], b3[64];
    if (!r->has_prediction) {
        g_string_append(out, "prediction none: give --topology (a calibrated one: reshard "
                             "calibrate)\n");
        return;
    }
    g_string_append_printf(out, "prediction first-order estimate (sim/cost.h) of the same plan "
                                "on topology %s; error = (predicted - measured) / measured\n",
                           r->topology);
    if (r->copies_modelled)
        g_string_append_printf(out, "           links %s s, copies %s s (the larger in %u "
                                    "of %u phases), fixed costs %s s\n",
                               run_seconds(b1, sizeof b1, r->predicted_link_s),
                               run_seconds(b2, sizeof b2, r->predicted_copy_s),
                               r->n_copy_bound_phases, r->n_phases,
                               run_seconds(b3, sizeof b3, r->predicted_fixed_s));
    else
        g_string_append_printf(out, "           links %s s, fixed costs %s s; copies not "
                                    "modelled (the topology has no copy section: reshard "
                                    "calibrate writes one)\n",
                               run_seconds(b1, sizeof b1, r->predicted_link_s),
                               run_seconds(b2, sizeof b2, r->predicted_fixed_s));
}

static void
run_text(const RsRunReport *r, GString *out)
{
    run_header(r, out);
    run_comparison_table(r, out);
    g_autoptr(RsTable) phases = run_phase_table(r);
    rs_table_append_text(phases, out);
    g_string_append_c(out, '\n');
    run_counters(r, out);
    run_prediction(r, out);
}

/* The figures of a run: the CSV row and the JSON document (the text form is the tables
 * and lines above). The parts of the prediction are unset without one; the copy time is
 * null when copies are not modelled. */
enum {
    RN_WORK, RN_STRATEGY, RN_TRANSPORT, RN_RANKS, RN_TRANSFERS, RN_MESSAGES, RN_BYTES_MOVED,
    RN_LOCAL_BYTES, RN_CHUNK_BYTES, RN_WINDOW, RN_RUNS, RN_MEASURED, RN_RUNS_S, RN_PREDICTED,
    RN_ERROR, RN_TOPOLOGY, RN_LINK_S, RN_COPY_S, RN_FIXED_S, RN_VALIDATED, RN_BAD_ELEMENTS,
    RN_PHASES, RN_VALIDATION, RN_SEND_CALLS, RN_ZERO_COPY, RN_PEAK_PACK, RN_BUFFER,
};

static const RsColumn run_columns[] = {
    [RN_WORK] = {"work", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_JSON_ONLY},
    [RN_STRATEGY] = {"strategy", NULL, RS_COLUMN_TEXT, 0, 0},
    [RN_TRANSPORT] = {"transport", NULL, RS_COLUMN_TEXT, 0, 0},
    [RN_RANKS] = {"ranks", NULL, RS_COLUMN_INTEGER, 0, 0},
    [RN_TRANSFERS] = {"transfers", NULL, RS_COLUMN_INTEGER, 0, 0},
    [RN_MESSAGES] = {"messages", NULL, RS_COLUMN_INTEGER, 0, 0},
    [RN_BYTES_MOVED] = {"bytes_moved", NULL, RS_COLUMN_BYTES, 0, 0},
    [RN_LOCAL_BYTES] = {"local_bytes", NULL, RS_COLUMN_BYTES, 0, 0},
    [RN_CHUNK_BYTES] = {"chunk_bytes", NULL, RS_COLUMN_BYTES, 0, RS_COLUMN_JSON_ONLY},
    [RN_WINDOW] = {"window", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_JSON_ONLY},
    [RN_RUNS] = {"runs", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_CSV_ONLY},
    [RN_MEASURED] = {"measured_s", NULL, RS_COLUMN_SECONDS, 6, 0},
    [RN_RUNS_S] = {"runs_s", NULL, RS_COLUMN_JSON, 0, 0},
    [RN_PREDICTED] = {"predicted_s", NULL, RS_COLUMN_SECONDS, 6, 0},
    [RN_ERROR] = {"error", NULL, RS_COLUMN_RATIO, 1, 0},
    [RN_TOPOLOGY] = {"topology", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_JSON_ONLY},
    [RN_LINK_S] = {"predicted_link_s", NULL, RS_COLUMN_SECONDS, 6, 0},
    [RN_COPY_S] = {"predicted_copy_s", NULL, RS_COLUMN_SECONDS, 6, 0},
    [RN_FIXED_S] = {"predicted_fixed_s", NULL, RS_COLUMN_SECONDS, 6, 0},
    [RN_VALIDATED] = {"validated", NULL, RS_COLUMN_BOOL, 0, RS_COLUMN_CSV_ONLY},
    [RN_BAD_ELEMENTS] = {"bad_elements", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_CSV_ONLY},
    [RN_PHASES] = {"phases", NULL, RS_COLUMN_JSON, 0, 0},
    [RN_VALIDATION] = {"validation", NULL, RS_COLUMN_JSON, 0, 0},
    [RN_SEND_CALLS] = {"send_calls", NULL, RS_COLUMN_INTEGER, 0, 0},
    [RN_ZERO_COPY] = {"zero_copy_chunks", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_JSON_ONLY},
    [RN_PEAK_PACK] = {"peak_pack_bytes", NULL, RS_COLUMN_BYTES, 0, RS_COLUMN_JSON_ONLY},
    [RN_BUFFER] = {"buffer_bytes", NULL, RS_COLUMN_BYTES, 0, RS_COLUMN_JSON_ONLY},
};

static JsonNode *
run_validation_node(const RsRunReport *r)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "checked");
    json_builder_add_boolean_value(b, r->validated);
    JSON_INT(b, "elements", r->n_checked_elems);
    JSON_INT(b, "bad_elements", r->n_bad_elems);
    if (r->first_bad != NULL)
        JSON_STRING(b, "first_bad", r->first_bad);
    json_builder_end_object(b);
    return builder_steal_root(b);
}

static void
add_run_prediction(RsTable *t, const RsRunReport *r)
{
    if (!r->has_prediction)
        return;
    rs_table_set_double(t, RN_PREDICTED, r->predicted_s);
    rs_table_set_double(t, RN_ERROR, rs_run_report_get_error(r));
    rs_table_set_text(t, RN_TOPOLOGY, r->topology);
    rs_table_set_double(t, RN_LINK_S, r->predicted_link_s);
    if (r->copies_modelled)
        rs_table_set_double(t, RN_COPY_S, r->predicted_copy_s);
    else
        rs_table_set_null(t, RN_COPY_S);
    rs_table_set_double(t, RN_FIXED_S, r->predicted_fixed_s);
}

static RsTable *
run_summary_table(const RsRunReport *r)
{
    RsTable *t = rs_table_new("run", run_columns, G_N_ELEMENTS(run_columns));
    rs_table_add_row(t);
    rs_table_set_text(t, RN_WORK, r->work);
    rs_table_set_text(t, RN_STRATEGY, r->strategy);
    rs_table_set_text(t, RN_TRANSPORT, r->transport);
    rs_table_set_uint(t, RN_RANKS, r->n_ranks);
    rs_table_set_uint(t, RN_TRANSFERS, r->n_transfers);
    rs_table_set_uint(t, RN_MESSAGES, r->n_network_messages);
    rs_table_set_uint(t, RN_BYTES_MOVED, r->bytes_moved);
    rs_table_set_uint(t, RN_LOCAL_BYTES, r->local_bytes);
    rs_table_set_uint(t, RN_CHUNK_BYTES, r->chunk_bytes);
    rs_table_set_uint(t, RN_WINDOW, r->window);
    rs_table_set_uint(t, RN_RUNS, r->n_runs);
    rs_table_set_double(t, RN_MEASURED, r->measured_s);
    JsonArray *runs = json_array_new();
    for (guint i = 0; i < r->n_runs; i++)
        json_array_add_double_element(runs, r->run_s[i]);
    rs_table_take_json(t, RN_RUNS_S, json_node_init_array(json_node_alloc(), runs));
    json_array_unref(runs);
    add_run_prediction(t, r);
    rs_table_set_bool(t, RN_VALIDATED, r->validated);
    rs_table_set_uint(t, RN_BAD_ELEMENTS, r->n_bad_elems);
    g_autoptr(RsTable) phases = run_phase_table(r);
    JsonBuilder *b = json_builder_new();
    rs_table_add_json_array(phases, b);
    rs_table_take_json(t, RN_PHASES, builder_steal_root(b));
    rs_table_take_json(t, RN_VALIDATION, run_validation_node(r));
    rs_table_set_uint(t, RN_SEND_CALLS, r->n_sends);
    rs_table_set_uint(t, RN_ZERO_COPY, r->n_zero_copy);
    rs_table_set_uint(t, RN_PEAK_PACK, r->peak_pack_bytes);
    rs_table_set_uint(t, RN_BUFFER, r->buffer_bytes);
    return t;
}

void
rs_report_run(const RsRunReport *report, RsFormat format, GString *out)
{
    if (format == RS_FORMAT_TABLE) {
        run_text(report, out);
        return;
    }
    g_autoptr(RsTable) t = run_summary_table(report);
    if (format == RS_FORMAT_CSV) {
        rs_table_append_csv(t, out);
        return;
    }
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    rs_table_add_json_members(t, 0, b);
    json_builder_end_object(b);
    rs_report_json_append(b, out);
}

void
rs_report_json_append(JsonBuilder *b, GString *out)
{
    rs_report_json_append_full(b, TRUE, out);
}

/* report.c — output of the commands as aligned text tables, CSV and JSON (json-glib). */
#include "analysis/report.h"
#include "analysis/report-private.h"

#include <json-glib/json-glib.h>
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

/* A simple text table: a header row and rows of cells, first column left-aligned, the
 * rest right-aligned, columns as wide as their widest cell. */
typedef struct {
    GPtrArray *rows; /* GPtrArray of char* */
} Table;

static void
table_init(Table *t)
{
    t->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
}

static GPtrArray *
table_row(Table *t)
{
    GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(t->rows, row);
    return row;
}

static void
cell(GPtrArray *row, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
cell(GPtrArray *row, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_ptr_array_add(row, g_strdup_vprintf(format, args));
    va_end(args);
}

static void
table_print(Table *t, GString *out)
{
    guint n_cols = 0;
    for (guint r = 0; r < t->rows->len; r++)
        n_cols = MAX(n_cols, ((GPtrArray *)g_ptr_array_index(t->rows, r))->len);
    g_autofree guint *width = g_new0(guint, n_cols);
    for (guint r = 0; r < t->rows->len; r++) {
        GPtrArray *row = g_ptr_array_index(t->rows, r);
        for (guint c = 0; c < row->len; c++)
            width[c] = MAX(width[c], g_utf8_strlen(g_ptr_array_index(row, c), -1));
    }
    for (guint r = 0; r < t->rows->len; r++) {
        GPtrArray *row = g_ptr_array_index(t->rows, r);
        for (guint c = 0; c < row->len; c++) {
            const char *text = g_ptr_array_index(row, c);
            guint pad = width[c] - (guint)g_utf8_strlen(text, -1);
            if (c > 0)
                g_string_append(out, "  ");
            if (c == 0) {
                g_string_append(out, text);
                if (c + 1 < row->len)
                    g_string_append_printf(out, "%*s", pad, "");
            } else {
                g_string_append_printf(out, "%*s%s", pad, "", text);
            }
        }
        g_string_append_c(out, '\n');
    }
    g_ptr_array_unref(t->rows);
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

/* The GPU that finished last, and when. */
static guint32
slowest_gpu(const RsFlowSimResult *f, double *finish_s)
{
    guint32 slowest = 0;
    *finish_s = -1.0;
    for (guint32 g = 0; g < f->n_gpus; g++) {
        if (f->gpu_finish_s[g] > *finish_s) {
            *finish_s = f->gpu_finish_s[g];
            slowest = g;
        }
    }
    return slowest;
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

static void
simulate_table(const RsSimulateReport *r, GString *out)
{
    g_autofree char *params = rs_format_thousands(rs_model_get_n_params(r->model));
    g_autofree char *topo = rs_topology_format_summary(r->topology);
    g_string_append_printf(out, "scenario   %s\n", r->scenario_name);
    g_string_append_printf(out, "model      %s (%s): %s parameters, %.2f GB as %s, %u tensors\n",
                           rs_model_get_name(r->model), rs_model_get_family(r->model), params,
                           rs_refit_get_size_bytes(r->refit) / 1e9,
                           rs_dtype_get_name(rs_model_get_dtype(r->model)),
                           rs_refit_get_n_tensors(r->refit));
    g_string_append_printf(out, "topology   %s\n", topo);
    g_string_append_printf(out, "training   %s on GPUs %s\n", r->train_desc, r->train_gpus);
    indent_lines(out, r->train_summary, "             ");
    g_string_append_printf(out, "inference  %s on GPUs %s\n", r->infer_desc, r->infer_gpus);
    indent_lines(out, r->infer_summary, "             ");
    g_string_append_c(out, '\n');

    gboolean any_flow = FALSE;
    for (guint i = 0; i < r->n_results; i++)
        any_flow |= r->results[i].flow != NULL;
    Table t;
    table_init(&t);
    GPtrArray *h = table_row(&t);
    cell(h, "strategy");
    cell(h, "moved GB");
    cell(h, "NVLink GB");
    cell(h, "network GB");
    cell(h, "max GPU in GB");
    cell(h, "max NIC out GB");
    cell(h, "messages");
    if (any_flow)
        cell(h, "first-order s");
    cell(h, "time s");
    cell(h, "bound s");
    cell(h, "efficiency");
    for (guint i = 0; i < r->n_results; i++) {
        const RsStrategyResult *s = &r->results[i];
        GPtrArray *row = table_row(&t);
        cell(row, "%s", rs_strategy_get_name(s->strategy));
        cell(row, "%.1f", s->cost.bytes_moved / 1e9);
        cell(row, "%.1f", s->cost.bytes_nvlink / 1e9);
        cell(row, "%.1f", s->cost.bytes_network / 1e9);
        cell(row, "%.2f", s->cost.max_gpu_ingress_bytes / 1e9);
        cell(row, "%.2f", s->cost.max_nic_egress_bytes / 1e9);
        cell(row, "%u", s->cost.n_messages);
        if (any_flow)
            cell(row, "%.3f", s->cost.predicted_s);
        cell(row, "%.3f", predicted_s(s));
        cell(row, "%.3f", r->bound.time_s);
        cell(row, "%.0f%%", 100.0 * efficiency(r, s));
    }
    table_print(&t, out);
    g_autofree char *cut = rs_lower_bound_format_cut(&r->bound);
    g_string_append_printf(out, "\nlower bound %.3f s, binding cut: %s\n", r->bound.time_s, cut);
    for (guint i = 0; i < r->n_results; i++) {
        const RsStrategyResult *s = &r->results[i];
        const RsFlowSimResult *f = s->flow;
        if (f == NULL) {
            if (s->cost.busiest_link_bytes == 0)
                continue;
            g_autofree char *link = rs_topology_format_link(r->topology, s->cost.busiest_link);
            g_string_append_printf(out, "busiest link (%s): %s, %.2f GB, busy %.3f s\n",
                                   rs_strategy_get_name(s->strategy), link,
                                   s->cost.busiest_link_bytes / 1e9, s->cost.busiest_link_s);
            continue;
        }
        if (f->bottleneck_link == G_MAXUINT32)
            continue;
        g_autofree char *link = rs_topology_format_link(r->topology, f->bottleneck_link);
        double finish_s;
        guint32 slowest = slowest_gpu(f, &finish_s);
        g_string_append_printf(
            out,
            "%s: bottleneck %s, %.2f GB, load %.3f s = %.0f%% of the time; last GPU %u at %.3f s\n",
            rs_strategy_get_name(s->strategy), link, f->link_bytes[f->bottleneck_link] / 1e9,
            f->bottleneck_load_s,
            100.0 * rs_flow_sim_get_link_utilisation(f, r->topology, f->bottleneck_link), slowest,
            finish_s);
        if (f->n_buckets > 0 && f->total_s > 0) {
            g_string_append_printf(out, "  %s utilisation %%, 10 slices of %.3g s: ", link,
                                   f->total_s / 10);
            append_utilisation_slices(out, f, r->topology, f->bottleneck_link, 10);
            g_string_append_c(out, '\n');
        }
    }
    if (any_flow) {
        g_string_append(out,
                        "model: flow-level (max-min fair rates over NVLink, PCIe, NIC, leaf and "
                        "spine links; latency before bandwidth; relays pipelined");
        if (r->flow_options != NULL && r->flow_options->chunk_bytes > 0)
            g_string_append_printf(out, " in chunks of %.3g MiB",
                                   r->flow_options->chunk_bytes / 1048576.0);
        g_string_append(out, "); first-order: busiest link + per-message latency of the "
                             "busiest rank, per phase\n");
    } else {
        g_string_append(out, "model: first-order (busiest link + per-message latency of the "
                             "busiest rank, per phase)\n");
    }
}

static void
simulate_csv(const RsSimulateReport *r, GString *out)
{
    g_string_append(out, "strategy,bytes_moved,bytes_nvlink,bytes_network,local_bytes,"
                         "max_gpu_ingress_bytes,max_nic_egress_bytes,messages,transfers,phases,"
                         "predicted_s,lower_bound_s,efficiency,network_model,first_order_s,"
                         "bottleneck_link,bottleneck_load_s\n");
    for (guint i = 0; i < r->n_results; i++) {
        const RsStrategyResult *s = &r->results[i];
        const RsFlowSimResult *f = s->flow;
        g_autofree char *link = NULL;
        if (f != NULL && f->bottleneck_link != G_MAXUINT32)
            link = rs_topology_format_link(r->topology, f->bottleneck_link);
        else if (f == NULL && s->cost.busiest_link_bytes > 0)
            link = rs_topology_format_link(r->topology, s->cost.busiest_link);
        g_string_append_printf(out,
                               "%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                               ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                               ",%u,%u,%u,%.9g,%.9g,%.6f,%s,%.9g,%s,%.9g\n",
                               rs_strategy_get_name(s->strategy), s->cost.bytes_moved,
                               s->cost.bytes_nvlink, s->cost.bytes_network, s->cost.local_bytes,
                               s->cost.max_gpu_ingress_bytes, s->cost.max_nic_egress_bytes,
                               s->cost.n_messages, s->n_transfers, s->cost.n_phases, predicted_s(s),
                               r->bound.time_s, efficiency(r, s), f ? "flow" : "bottleneck",
                               s->cost.predicted_s, link ? link : "",
                               f ? f->bottleneck_load_s : s->cost.busiest_link_s);
    }
}

static void
json_append(JsonBuilder *b, GString *out)
{
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_root(gen, root);
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

/* The flow simulation's figures: events, phases, bottleneck, per-GPU finish times. */
static void
json_flow(JsonBuilder *b, const RsFlowSimResult *f, const RsTopology *topo)
{
    json_builder_set_member_name(b, "flow");
    json_builder_begin_object(b);
    JSON_DOUBLE(b, "total_s", f->total_s);
    JSON_INT(b, "chunks", f->n_chunks);
    JSON_INT(b, "events", f->n_events);
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
}

static void
simulate_json(const RsSimulateReport *r, GString *out)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    JSON_STRING(b, "scenario", r->scenario_name);

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

    JSON_DOUBLE(b, "lower_bound_s", r->bound.time_s);
    json_builder_set_member_name(b, "binding_cut");
    json_builder_begin_object(b);
    JSON_STRING(b, "kind", rs_cut_kind_get_name(r->bound.kind));
    JSON_INT(b, "where", r->bound.where);
    JSON_INT(b, "bytes", r->bound.cut_bytes);
    JSON_DOUBLE(b, "capacity_bytes_per_s", r->bound.cut_capacity_bytes_per_s);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "cuts_s");
    json_builder_begin_object(b);
    for (guint k = RS_CUT_NONE + 1; k < RS_CUT_KIND_N; k++)
        JSON_DOUBLE(b, rs_cut_kind_get_name((RsCutKind)k), r->bound.kind_s[k]);
    json_builder_end_object(b);

    json_builder_set_member_name(b, "strategies");
    json_builder_begin_array(b);
    for (guint i = 0; i < r->n_results; i++) {
        const RsStrategyResult *s = &r->results[i];
        json_builder_begin_object(b);
        JSON_STRING(b, "name", rs_strategy_get_name(s->strategy));
        JSON_INT(b, "bytes_moved", s->cost.bytes_moved);
        JSON_INT(b, "bytes_nvlink", s->cost.bytes_nvlink);
        JSON_INT(b, "bytes_network", s->cost.bytes_network);
        JSON_INT(b, "local_bytes", s->cost.local_bytes);
        JSON_INT(b, "max_gpu_ingress_bytes", s->cost.max_gpu_ingress_bytes);
        JSON_INT(b, "max_gpu_ingress_gpu", s->cost.max_gpu_ingress_gpu);
        JSON_INT(b, "max_nic_egress_bytes", s->cost.max_nic_egress_bytes);
        JSON_INT(b, "max_nic_egress_gpu", s->cost.max_nic_egress_gpu);
        JSON_INT(b, "messages", s->cost.n_messages);
        JSON_INT(b, "transfers", s->n_transfers);
        JSON_INT(b, "phases", s->cost.n_phases);
        JSON_DOUBLE(b, "predicted_s", predicted_s(s));
        JSON_DOUBLE(b, "efficiency", efficiency(r, s));
        JSON_STRING(b, "network_model", s->flow ? "flow" : "bottleneck");
        JSON_DOUBLE(b, "first_order_s", s->cost.predicted_s);
        if (s->flow != NULL)
            json_flow(b, s->flow, r->topology);
        if (s->cost.busiest_link_bytes > 0) {
            g_autofree char *link = rs_topology_format_link(r->topology, s->cost.busiest_link);
            json_builder_set_member_name(b, "busiest_link");
            json_builder_begin_object(b);
            JSON_STRING(b, "name", link);
            JSON_INT(b, "bytes", s->cost.busiest_link_bytes);
            JSON_DOUBLE(b, "busy_s", s->cost.busiest_link_s);
            json_builder_end_object(b);
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    json_append(b, out);
}

void
rs_report_simulate(const RsSimulateReport *report, RsFormat format, GString *out)
{
    switch (format) {
    case RS_FORMAT_TABLE:
        simulate_table(report, out);
        break;
    case RS_FORMAT_CSV:
        simulate_csv(report, out);
        break;
    case RS_FORMAT_JSON:
        simulate_json(report, out);
        break;
    }
}

void
rs_report_models(GPtrArray *models, const char *const *names, RsFormat format, GString *out)
{
    if (format == RS_FORMAT_JSON) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_array(b);
        for (guint i = 0; i < models->len; i++) {
            const RsModel *m = g_ptr_array_index(models, i);
            json_builder_begin_object(b);
            JSON_STRING(b, "id", names[i]);
            JSON_STRING(b, "name", rs_model_get_name(m));
            JSON_STRING(b, "family", rs_model_get_family(m));
            JSON_INT(b, "layers", rs_model_get_n_layers(m));
            JSON_INT(b, "tensors", rs_model_get_n_tensors(m));
            JSON_INT(b, "params", rs_model_get_n_params(m));
            JSON_INT(b, "active_params", rs_model_get_n_active_params(m));
            JSON_STRING(b, "dtype", rs_dtype_get_name(rs_model_get_dtype(m)));
            JSON_INT(b, "bytes", rs_model_get_size_bytes(m));
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_append(b, out);
        return;
    }
    if (format == RS_FORMAT_CSV) {
        g_string_append(out, "id,name,family,layers,tensors,params,active_params,dtype,bytes\n");
        for (guint i = 0; i < models->len; i++) {
            const RsModel *m = g_ptr_array_index(models, i);
            g_string_append_printf(out,
                                   "%s,%s,%s,%u,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                                   ",%s,%" G_GUINT64_FORMAT "\n",
                                   names[i], rs_model_get_name(m), rs_model_get_family(m),
                                   rs_model_get_n_layers(m), rs_model_get_n_tensors(m),
                                   rs_model_get_n_params(m), rs_model_get_n_active_params(m),
                                   rs_dtype_get_name(rs_model_get_dtype(m)),
                                   rs_model_get_size_bytes(m));
        }
        return;
    }
    Table t;
    table_init(&t);
    GPtrArray *h = table_row(&t);
    cell(h, "id");
    cell(h, "name");
    cell(h, "family");
    cell(h, "layers");
    cell(h, "tensors");
    cell(h, "parameters");
    cell(h, "active parameters");
    cell(h, "dtype");
    cell(h, "size GB");
    for (guint i = 0; i < models->len; i++) {
        const RsModel *m = g_ptr_array_index(models, i);
        g_autofree char *params = rs_format_thousands(rs_model_get_n_params(m));
        g_autofree char *active = rs_format_thousands(rs_model_get_n_active_params(m));
        GPtrArray *row = table_row(&t);
        cell(row, "%s", names[i]);
        cell(row, "%s", rs_model_get_name(m));
        cell(row, "%s", rs_model_get_family(m));
        cell(row, "%u", rs_model_get_n_layers(m));
        cell(row, "%u", rs_model_get_n_tensors(m));
        cell(row, "%s", params);
        cell(row, "%s", active);
        cell(row, "%s", rs_dtype_get_name(rs_model_get_dtype(m)));
        cell(row, "%.2f", rs_model_get_size_bytes(m) / 1e9);
    }
    table_print(&t, out);
    g_string_append(out, "parameters: logical weights including embedding and head, without MTP "
                         "layers and quantisation scales; active: routed experts counted for "
                         "num_experts_per_tok of them\n");
}

/* --- the table helpers for the other report files (report-private.h) --- */

struct _RsReportTable {
    Table table;
};

RsReportTable *
rs_report_table_new(void)
{
    RsReportTable *t = g_new0(RsReportTable, 1);
    table_init(&t->table);
    return t;
}

GPtrArray *
rs_report_table_add_row(RsReportTable *t)
{
    return table_row(&t->table);
}

void
rs_report_table_cell(GPtrArray *row, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_ptr_array_add(row, g_strdup_vprintf(format, args));
    va_end(args);
}

void
rs_report_table_print_free(RsReportTable *t, GString *out)
{
    table_print(&t->table, out);
    g_free(t);
}

void
rs_report_json_append(JsonBuilder *b, GString *out)
{
    json_append(b, out);
}

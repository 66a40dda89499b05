/* report-flow.c — output for the flow-level simulator: a replayed message list, the
 * per-link statistics, and `reshard topology show`. Each table is an RsTable (table.h);
 * the lines around the tables (the replay's summary, the topology's header, routes and
 * totals) are written here as they are. */
#include "analysis/report.h"
#include "analysis/table.h"

#include <string.h>

#define JSON_INT(b, key, value)                                                                    \
    (json_builder_set_member_name(b, key), json_builder_add_int_value(b, (gint64)(value)))
#define JSON_DOUBLE(b, key, value)                                                                 \
    (json_builder_set_member_name(b, key), json_builder_add_double_value(b, value))
#define JSON_STRING(b, key, value)                                                                 \
    (json_builder_set_member_name(b, key), json_builder_add_string_value(b, value))
#define JSON_BOOL(b, key, value)                                                                   \
    (json_builder_set_member_name(b, key), json_builder_add_boolean_value(b, value))

static double
link_capacity(const RsTopology *topo, guint32 link)
{
    return rs_link_get_capacity_bytes_per_s(rs_topology_get_link(topo, link));
}

/* --- replay --- */

static double
replay_efficiency(const RsFlowSimResult *f)
{
    return f->total_s > 0 ? f->bottleneck_load_s / f->total_s : 1.0;
}

/* The figures of a replay: the CSV row and the JSON document (the text form is lines, not
 * a table). */
enum {
    RP_FILE, RP_TOPOLOGY, RP_GPUS, RP_MESSAGES, RP_NETWORK_MESSAGES, RP_PHASES_CSV, RP_BYTES,
    RP_PREDICTED, RP_BOUND, RP_EFFICIENCY, RP_BOTTLENECK, RP_PHASES_JSON, RP_LAST_GPU,
    RP_LAST_FINISH, RP_CHUNKS, RP_EVENTS,
};

static const RsColumn replay_columns[] = {
    [RP_FILE] = {"messages_file", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_JSON_ONLY},
    [RP_TOPOLOGY] = {"topology", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_JSON_ONLY},
    [RP_GPUS] = {"gpus", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_JSON_ONLY},
    [RP_MESSAGES] = {"messages", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [RP_NETWORK_MESSAGES] = {"network_messages", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [RP_PHASES_CSV] = {"phases", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_CSV_ONLY},
    [RP_BYTES] = {"bytes_moved", NULL, RS_COLUMN_BYTES, 0, RS_COLUMN_NO_TABLE},
    [RP_PREDICTED] = {"predicted_s", NULL, RS_COLUMN_SECONDS, 6, RS_COLUMN_NO_TABLE},
    [RP_BOUND] = {"link_load_bound_s", NULL, RS_COLUMN_SECONDS, 6, RS_COLUMN_NO_TABLE},
    [RP_EFFICIENCY] = {"efficiency", NULL, RS_COLUMN_RATIO, 0, RS_COLUMN_NO_TABLE},
    [RP_BOTTLENECK] = {"bottleneck_link", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_TABLE},
    [RP_PHASES_JSON] = {"phases", NULL, RS_COLUMN_JSON, 0, 0},
    [RP_LAST_GPU] = {"last_gpu", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_JSON_ONLY},
    [RP_LAST_FINISH] = {"last_gpu_finish_s", NULL, RS_COLUMN_SECONDS, 6, RS_COLUMN_JSON_ONLY},
    [RP_CHUNKS] = {"chunks", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
    [RP_EVENTS] = {"events", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_NO_TABLE},
};

/* phases[] of {phase, end_s}. */
static JsonNode *
replay_phases_node(const RsFlowSimResult *f)
{
    JsonArray *phases = json_array_new();
    for (guint p = 0; p < f->n_phases; p++) {
        JsonObject *o = json_object_new();
        json_object_set_int_member(o, "phase", f->phase_ids[p]);
        json_object_set_double_member(o, "end_s", f->phase_end_s[p]);
        json_array_add_object_element(phases, o);
    }
    JsonNode *node = json_node_init_array(json_node_alloc(), phases);
    json_array_unref(phases);
    return node;
}

static RsTable *
replay_table(const char *name, const RsTopology *topo, const RsFlowSimResult *f,
             const char *link)
{
    RsTable *t = rs_table_new("replay", replay_columns, G_N_ELEMENTS(replay_columns));
    double finish_s;
    guint32 last = rs_flow_sim_result_get_last_receiver(f, &finish_s);
    rs_table_add_row(t);
    rs_table_set_text(t, RP_FILE, name);
    rs_table_set_text(t, RP_TOPOLOGY, rs_topology_get_name(topo));
    rs_table_set_uint(t, RP_GPUS, rs_topology_get_n_gpus(topo));
    rs_table_set_uint(t, RP_MESSAGES, f->n_messages);
    rs_table_set_uint(t, RP_NETWORK_MESSAGES, f->n_network_messages);
    rs_table_set_uint(t, RP_PHASES_CSV, f->n_phases);
    rs_table_set_uint(t, RP_BYTES, f->bytes_moved);
    rs_table_set_double(t, RP_PREDICTED, f->total_s);
    /* No byte over a link (local copies, empty messages): no bound to compare with, null,
     * never "efficiency 0". */
    if (f->bottleneck_link == G_MAXUINT32) {
        rs_table_set_null(t, RP_BOUND);
        rs_table_set_null(t, RP_EFFICIENCY);
        rs_table_set_null(t, RP_BOTTLENECK);
    } else {
        rs_table_set_double(t, RP_BOUND, f->bottleneck_load_s);
        rs_table_set_double(t, RP_EFFICIENCY, replay_efficiency(f));
        rs_table_set_text(t, RP_BOTTLENECK, link);
    }
    rs_table_take_json(t, RP_PHASES_JSON, replay_phases_node(f));
    rs_table_set_uint(t, RP_LAST_GPU, last);
    rs_table_set_double(t, RP_LAST_FINISH, finish_s);
    rs_table_set_uint(t, RP_CHUNKS, f->n_chunks);
    rs_table_set_uint(t, RP_EVENTS, f->n_events);
    return t;
}

/* The text form: lines, not a table. */
static void
replay_text(const char *name, const RsTopology *topo, const RsFlowSimResult *f,
            const char *link, GString *out)
{
    double finish_s;
    guint32 last = rs_flow_sim_result_get_last_receiver(f, &finish_s);
    g_autofree char *summary = rs_topology_format_summary(topo);
    g_string_append_printf(
        out, "messages   %s: %u message%s (%u over links), %u phase%s, %.4g GB moved\n", name,
        f->n_messages, f->n_messages == 1 ? "" : "s", f->n_network_messages, f->n_phases,
        f->n_phases == 1 ? "" : "s",
        f->bytes_moved / 1e9);
    g_string_append_printf(out, "topology   %s\n", summary);
    g_string_append_printf(out, "time       %.6g s (flow-level)\n", f->total_s);
    if (f->bottleneck_link != G_MAXUINT32)
        g_string_append_printf(out,
                               "bound      %.6g s: the most loaded link, %s, carries %.4g GB at "
                               "%.4g GB/s\n",
                               f->bottleneck_load_s, link, f->link_bytes[f->bottleneck_link] / 1e9,
                               link_capacity(topo, f->bottleneck_link) / 1e9);
    if (f->bottleneck_link != G_MAXUINT32)
        g_string_append_printf(out, "efficiency %.0f%%\n", 100.0 * replay_efficiency(f));
    else
        g_string_append(out, "bound      none: no byte crosses a link (the time is latency and "
                             "fixed costs)\n");
    g_string_append(out, "phases    ");
    for (guint p = 0; p < f->n_phases && p < 16; p++)
        g_string_append_printf(out, " %u: %.4g s%s", f->phase_ids[p], f->phase_end_s[p],
                               p + 1 < f->n_phases ? "," : "");
    if (f->n_phases > 16)
        g_string_append(out, " …");
    g_string_append_c(out, '\n');
    if (finish_s >= 0)
        g_string_append_printf(out, "last GPU   %u at %.6g s\n", last, finish_s);
}

void
rs_report_replay(const char *name, const RsTopology *topo, const RsFlowSimResult *f,
                 RsFormat format, GString *out)
{
    g_autofree char *link = f->bottleneck_link != G_MAXUINT32
                                ? rs_topology_format_link(topo, f->bottleneck_link)
                                : g_strdup("");
    if (format == RS_FORMAT_TABLE) {
        replay_text(name, topo, f, link, out);
        return;
    }
    g_autoptr(RsTable) t = replay_table(name, topo, f, link);
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

/* --- link statistics --- */

/* One row per link; then one column per timeline bucket, u0 … u(n−1), made per call. */
enum {
    LS_LINK, LS_KIND, LS_CAPACITY, LS_LATENCY, LS_DOMINATED, LS_BYTES, LS_BUSY, LS_LOAD,
    LS_UTILISATION, LS_BUCKET, LS_N_FIXED,
};

static const RsColumn link_stat_columns[LS_N_FIXED] = {
    [LS_LINK] = {"link", NULL, RS_COLUMN_TEXT, 0, 0},
    [LS_KIND] = {"kind", NULL, RS_COLUMN_TEXT, 0, 0},
    [LS_CAPACITY] = {"capacity_bytes_per_s", "capacity", RS_COLUMN_RATE, 3, 0},
    [LS_LATENCY] = {"latency_s", "latency", RS_COLUMN_MICROSECONDS, 3, 0},
    [LS_DOMINATED] = {"dominated", NULL, RS_COLUMN_BOOL, 0, RS_COLUMN_CSV_01},
    [LS_BYTES] = {"bytes", NULL, RS_COLUMN_BYTES, 0, 0},
    [LS_BUSY] = {"busy_s", "busy", RS_COLUMN_SECONDS, 6, 0},
    [LS_LOAD] = {"load_s", "load", RS_COLUMN_SECONDS, 6, 0},
    [LS_UTILISATION] = {"utilisation", NULL, RS_COLUMN_RATIO, 0, 0},
    [LS_BUCKET] = {"bucket_s", "bucket", RS_COLUMN_SECONDS, 6, 0},
};

static void
add_link_stat_row(RsTable *t, const RsFlowSimResult *f, const RsTopology *topo, guint32 l)
{
    const RsLink *link = rs_topology_get_link(topo, l);
    double cap = rs_link_get_capacity_bytes_per_s(link);
    rs_table_add_row(t);
    rs_table_take_text(t, LS_LINK, rs_topology_format_link(topo, l));
    rs_table_set_text(t, LS_KIND, rs_link_kind_get_name(link->kind));
    rs_table_set_double(t, LS_CAPACITY, cap);
    rs_table_set_double(t, LS_LATENCY, link->latency_s);
    rs_table_set_bool(t, LS_DOMINATED, rs_topology_link_is_dominated(topo, l));
    rs_table_set_uint(t, LS_BYTES, f->link_bytes[l]);
    rs_table_set_double(t, LS_BUSY, f->link_busy_s[l]);
    rs_table_set_double(t, LS_LOAD, f->link_bytes[l] / cap);
    rs_table_set_double(t, LS_UTILISATION, rs_flow_sim_get_link_utilisation(f, topo, l));
    rs_table_set_double(t, LS_BUCKET, f->bucket_s);
    for (guint b = 0; b < f->n_buckets; b++)
        rs_table_set_double(t, LS_N_FIXED + b,
                            f->link_timeline_bytes[(gsize)l * f->n_buckets + b] /
                                (cap * f->bucket_s));
}

void
rs_report_link_stats(const RsFlowSimResult *f, const RsTopology *topo, GString *out)
{
    guint n_columns = LS_N_FIXED + f->n_buckets;
    g_autofree RsColumn *columns = g_new0(RsColumn, n_columns);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    memcpy(columns, link_stat_columns, sizeof link_stat_columns);
    for (guint b = 0; b < f->n_buckets; b++) {
        char *name = g_strdup_printf("u%u", b);
        g_ptr_array_add(names, name);
        columns[LS_N_FIXED + b] = (RsColumn){name, NULL, RS_COLUMN_REAL, 4, RS_COLUMN_CSV_FIXED};
    }
    RsTable *t = rs_table_new("links", columns, n_columns);
    for (guint32 l = 0; l < f->n_links; l++)
        add_link_stat_row(t, f, topo, l);
    rs_table_append_csv(t, out);
    /* The table borrows the columns: free it first. */
    rs_table_free(t);
}

/* --- topology show --- */

typedef struct {
    guint count;
    guint n_dominated;
    double min_bw, max_bw, min_cap, max_cap;
    double efficiency, latency_s;
} KindSummary;

static void
summarise_kinds(const RsTopology *topo, KindSummary *k)
{
    memset(k, 0, sizeof(KindSummary) * RS_LINK_KIND_N);
    for (guint32 l = 0; l < rs_topology_get_n_links(topo); l++) {
        const RsLink *link = rs_topology_get_link(topo, l);
        KindSummary *s = &k[link->kind];
        double cap = rs_link_get_capacity_bytes_per_s(link);
        if (s->count == 0) {
            s->min_bw = s->max_bw = link->bw_bytes_per_s;
            s->min_cap = s->max_cap = cap;
            s->efficiency = link->efficiency;
            s->latency_s = link->latency_s;
        }
        s->min_bw = MIN(s->min_bw, link->bw_bytes_per_s);
        s->max_bw = MAX(s->max_bw, link->bw_bytes_per_s);
        s->min_cap = MIN(s->min_cap, cap);
        s->max_cap = MAX(s->max_cap, cap);
        s->count++;
        s->n_dominated += rs_topology_link_is_dominated(topo, l);
    }
}

static char *
format_range(double lo, double hi)
{
    if (hi - lo <= 1e-9 * hi)
        return g_strdup_printf("%.1f", hi / 1e9);
    return g_strdup_printf("%.1f-%.1f", lo / 1e9, hi / 1e9);
}

/* Example GPU pairs for each kind of route, when the topology has one. */
typedef struct {
    const char *what;
    guint32 src, dst;
} RouteExample;

static guint
route_examples(const RsTopology *topo, RouteExample *ex)
{
    guint n = 0;
    guint n_gpus = rs_topology_get_n_gpus(topo);
    guint per_domain = rs_topology_get_gpus_per_nvlink_domain(topo);
    guint per_unit =
        rs_topology_get_scalable_unit_nodes(topo) * rs_topology_get_gpus_per_node(topo);
    guint per_node = rs_topology_get_gpus_per_node(topo);
    if (per_domain > 1)
        ex[n++] = (RouteExample){"same NVLink domain", 0, 1};
    if (per_domain < per_unit && per_domain < n_gpus)
        ex[n++] = (RouteExample){"same rail, same unit", 0, per_domain};
    if (per_domain < per_unit && per_domain + 1 < n_gpus && per_node > 1)
        ex[n++] = (RouteExample){rs_topology_has_pxn(topo) ? "other rail (PXN)" : "other rail", 0,
                                 per_domain + 1};
    if (per_unit < n_gpus)
        ex[n++] = (RouteExample){"other scalable unit", 0, per_unit};
    return n;
}

/* The links: the --links text table, the CSV and the JSON links[]. CSV calls a link's name
 * "link", JSON "name". */
enum { LK_ID, LK_LINK, LK_NAME, LK_KIND, LK_BW, LK_EFFICIENCY, LK_CAPACITY, LK_LATENCY,
       LK_DOMINATED };

static const RsColumn link_columns[] = {
    [LK_ID] = {"id", NULL, RS_COLUMN_INTEGER, 0, 0},
    [LK_LINK] = {"link", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_JSON},
    [LK_NAME] = {"name", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_JSON_ONLY},
    [LK_KIND] = {"kind", NULL, RS_COLUMN_TEXT, 0, 0},
    [LK_BW] = {"bw_bytes_per_s", "bandwidth", RS_COLUMN_RATE, 2, 0},
    [LK_EFFICIENCY] = {"efficiency", NULL, RS_COLUMN_REAL, 3, 0},
    [LK_CAPACITY] = {"capacity_bytes_per_s", "capacity", RS_COLUMN_RATE, 3, 0},
    [LK_LATENCY] = {"latency_s", "latency", RS_COLUMN_MICROSECONDS, 3, 0},
    [LK_DOMINATED] = {"dominated", NULL, RS_COLUMN_BOOL, 0, RS_COLUMN_CSV_01},
};

static RsTable *
link_table(const RsTopology *topo)
{
    RsTable *t = rs_table_new("links", link_columns, G_N_ELEMENTS(link_columns));
    for (guint32 l = 0; l < rs_topology_get_n_links(topo); l++) {
        const RsLink *link = rs_topology_get_link(topo, l);
        rs_table_add_row(t);
        rs_table_set_uint(t, LK_ID, l);
        rs_table_take_text(t, LK_LINK, rs_topology_format_link(topo, l));
        rs_table_take_text(t, LK_NAME, rs_topology_format_link(topo, l));
        rs_table_set_text(t, LK_KIND, rs_link_kind_get_name(link->kind));
        rs_table_set_double(t, LK_BW, link->bw_bytes_per_s);
        rs_table_set_double(t, LK_EFFICIENCY, link->efficiency);
        rs_table_set_double(t, LK_CAPACITY, rs_link_get_capacity_bytes_per_s(link));
        rs_table_set_double(t, LK_LATENCY, link->latency_s);
        rs_table_set_bool(t, LK_DOMINATED, rs_topology_link_is_dominated(topo, l));
    }
    return t;
}

/* The link classes (text only): bandwidth and capacity are ranges ("12.5-25.0") when the
 * links of a kind differ, so those cells are text with the unit in the label. */
enum { KD_KIND, KD_LINKS, KD_BW, KD_EFFICIENCY, KD_CAPACITY, KD_LATENCY, KD_DOMINATED };

static const RsColumn kind_columns[] = {
    [KD_KIND] = {"kind", "link kind", RS_COLUMN_TEXT, 0, 0},
    [KD_LINKS] = {"links", NULL, RS_COLUMN_INTEGER, 0, 0},
    [KD_BW] = {"bw_bytes_per_s", "bandwidth GB/s", RS_COLUMN_TEXT, 0, 0},
    [KD_EFFICIENCY] = {"efficiency", NULL, RS_COLUMN_REAL, 2, 0},
    [KD_CAPACITY] = {"capacity_bytes_per_s", "capacity GB/s", RS_COLUMN_TEXT, 0, 0},
    [KD_LATENCY] = {"latency_s", "latency", RS_COLUMN_MICROSECONDS, 2, 0},
    [KD_DOMINATED] = {"dominated", NULL, RS_COLUMN_INTEGER, 0, 0},
};

static void
topology_kinds_table(const RsTopology *topo, GString *out)
{
    KindSummary kinds[RS_LINK_KIND_N];
    summarise_kinds(topo, kinds);
    static const RsLinkKind order[] = {
        RS_LINK_NVLINK_EGRESS, RS_LINK_NVLINK_INGRESS, RS_LINK_PCIE_EGRESS, RS_LINK_PCIE_INGRESS,
        RS_LINK_NIC_EGRESS,    RS_LINK_NIC_INGRESS,    RS_LINK_LEAF_UPLINK, RS_LINK_LEAF_DOWNLINK};
    g_autoptr(RsTable) t = rs_table_new("link_kinds", kind_columns, G_N_ELEMENTS(kind_columns));
    for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
        const KindSummary *k = &kinds[order[i]];
        if (k->count == 0)
            continue;
        rs_table_add_row(t);
        rs_table_set_text(t, KD_KIND, rs_link_kind_get_name(order[i]));
        rs_table_set_uint(t, KD_LINKS, k->count);
        rs_table_take_text(t, KD_BW, format_range(k->min_bw, k->max_bw));
        rs_table_set_double(t, KD_EFFICIENCY, k->efficiency);
        rs_table_take_text(t, KD_CAPACITY, format_range(k->min_cap, k->max_cap));
        rs_table_set_double(t, KD_LATENCY, k->latency_s);
        rs_table_set_uint(t, KD_DOMINATED, k->n_dominated);
    }
    rs_table_append_text(t, out);
}

/* The GPUs line: how many, which, their memory, the nodes. */
static void
topology_gpus_line(const RsTopology *topo, GString *out)
{
    g_autofree char *gpus = rs_format_thousands(rs_topology_get_n_gpus(topo));
    g_string_append_printf(out, "GPUs       %s %s", gpus, rs_topology_get_gpu_model(topo));
    guint64 memory = rs_topology_get_gpu_memory_bytes(topo);
    if (memory > 0 && memory % (1u << 30) == 0)
        g_string_append_printf(out, ", %" G_GUINT64_FORMAT " GiB each", memory >> 30);
    else if (memory > 0)
        g_string_append_printf(out, ", %.4g GB each", memory / 1e9);
    guint n_nodes = rs_topology_get_n_nodes(topo);
    g_string_append_printf(out, ", on %u node%s of %u\n", n_nodes, n_nodes == 1 ? "" : "s",
                           rs_topology_get_gpus_per_node(topo));
}

/* The lines above the link classes: name, GPUs, NVLink, fabric, latency, copy rates. */
static void
topology_header(const RsTopology *topo, GString *out)
{
    guint n_units = rs_topology_get_n_scalable_units(topo), n_rails = rs_topology_get_n_rails(topo);
    guint per_domain = rs_topology_get_gpus_per_nvlink_domain(topo);
    guint per_node = rs_topology_get_gpus_per_node(topo);
    g_string_append_printf(out, "topology   %s%s%s\n", rs_topology_get_name(topo),
                           *rs_topology_get_description(topo) ? ": " : "",
                           rs_topology_get_description(topo));
    topology_gpus_line(topo, out);
    g_string_append_printf(
        out, "NVLink     %u domain%s of %u GPUs (%u node%s each), non-blocking NVSwitch\n",
        rs_topology_get_n_nvlink_domains(topo),
        rs_topology_get_n_nvlink_domains(topo) == 1 ? "" : "s", per_domain,
        per_domain / per_node, per_domain == per_node ? "" : "s");
    g_autofree char *units = rs_topology_describe_scalable_units(topo);
    g_string_append_printf(out,
                           "fabric     rail-optimized, %u rail%s; %s; "
                           "%u leaves (one per rail per unit) joined by a spine; "
                           "oversubscription %g:1; PXN %s\n",
                           n_rails, n_rails == 1 ? "" : "s", units, n_units * n_rails,
                           rs_topology_get_oversubscription(topo),
                           rs_topology_has_pxn(topo) ? "on" : "off");
    guint64 chunk_size = 0;
    double chunk_overhead_s = rs_topology_get_chunk_overhead_s(topo, &chunk_size);
    g_autofree char *chunk_text =
        chunk_overhead_s > 0
            ? g_strdup_printf(", %.3g us per chunk of %" G_GUINT64_FORMAT " B (measured chunk "
                              "size)",
                              chunk_overhead_s * 1e6, chunk_size)
            : g_strdup("");
    g_string_append_printf(
        out, "latency    message overhead %.3g us%s; %.3g us per leaf or spine crossed\n",
        rs_topology_get_message_overhead_s(topo) * 1e6, chunk_text,
        rs_topology_get_switch_latency_s(topo) * 1e6);
    guint n_copy;
    const RsCopyRate *copy = rs_topology_get_copy_rates(topo, &n_copy);
    if (n_copy > 0) {
        g_string_append(out, "copies     measured copy rates (the copy section), GB/s by run "
                             "length:\n");
        rs_report_copy_rates(copy, n_copy, out);
    }
    g_string_append_c(out, '\n');
}

/* The example routes below the link classes, with their latency and links. */
static void
topology_routes(const RsTopology *topo, GString *out)
{
    RouteExample ex[4];
    guint n_ex = route_examples(topo, ex);
    if (n_ex > 0)
        g_string_append(out, "\nroutes (message latency includes the software overhead)\n");
    for (guint i = 0; i < n_ex; i++) {
        guint32 links[RS_TOPOLOGY_MAX_ROUTE];
        guint n = rs_topology_route(topo, ex[i].src, ex[i].dst, links);
        g_autofree char *pair = g_strdup_printf("gpu%u -> gpu%u", ex[i].src, ex[i].dst);
        g_string_append_printf(out, "  %-22s %-16s %u links, %6.2f us:", ex[i].what, pair, n,
                               rs_topology_get_message_latency_s(topo, ex[i].src, ex[i].dst) * 1e6);
        for (guint k = 0; k < n; k++) {
            g_autofree char *name = rs_topology_format_link(topo, links[k]);
            g_string_append_printf(out, " %s%s", k ? "> " : "", name);
        }
        g_string_append_c(out, '\n');
    }
}

/* The totals line: links, NVLink capacity of one domain, NIC injection, leaf uplinks. */
static void
topology_totals(const RsTopology *topo, GString *out)
{
    guint n_units = rs_topology_get_n_scalable_units(topo), n_rails = rs_topology_get_n_rails(topo);
    double domain_nvlink = 0.0, injection = 0.0, uplinks = 0.0;
    for (guint32 g = 0; g < rs_topology_get_n_gpus(topo); g++) {
        if (g < rs_topology_get_gpus_per_nvlink_domain(topo))
            domain_nvlink +=
                link_capacity(topo, rs_topology_get_gpu_link(topo, g, RS_LINK_NVLINK_EGRESS));
        injection += link_capacity(topo, rs_topology_get_gpu_link(topo, g, RS_LINK_NIC_EGRESS));
    }
    for (guint u = 0; u < n_units; u++)
        for (guint r = 0; r < n_rails; r++)
            uplinks +=
                link_capacity(topo, rs_topology_get_leaf_link(topo, u, r, RS_LINK_LEAF_UPLINK));
    g_autofree char *n_links = rs_format_thousands(rs_topology_get_n_links(topo));
    g_string_append_printf(out,
                           "\ntotals     %s directed links; capacities per direction: NVLink "
                           "%.4g TB/s per domain, NIC injection %.4g TB/s, leaf uplinks "
                           "%.4g TB/s\n",
                           n_links, domain_nvlink / 1e12, injection / 1e12, uplinks / 1e12);
}

static void
topology_text(const RsTopology *topo, gboolean show_links, GString *out)
{
    topology_header(topo, out);
    topology_kinds_table(topo, out);
    topology_routes(topo, out);
    topology_totals(topo, out);
    if (show_links) {
        g_autoptr(RsTable) links = link_table(topo);
        g_string_append_c(out, '\n');
        rs_table_append_text(links, out);
    }
}

/* --- copy rates --- */

/* run_bytes, then one rate per copy-section key (local, side, scope), named
 * KEY_bytes_per_s; the text header is the key alone (the unit is stated above the table). */
#define N_COPY_RATE_COLUMNS (1 + 2 * RS_COPY_SIDE_N * RS_COPY_SCOPE_N)

static guint
copy_rate_column(guint local, guint side, guint scope)
{
    return 1 + (local * RS_COPY_SIDE_N + side) * RS_COPY_SCOPE_N + scope;
}

static const RsColumn *
copy_rate_columns(void)
{
    static RsColumn columns[N_COPY_RATE_COLUMNS];
    static gsize ready = 0;
    if (g_once_init_enter(&ready)) {
        columns[0] = (RsColumn){"run_bytes", "run bytes", RS_COLUMN_INTEGER, 0, 0};
        for (guint local = 0; local < 2; local++)
            for (guint side = 0; side < RS_COPY_SIDE_N; side++)
                for (guint scope = 0; scope < RS_COPY_SCOPE_N; scope++) {
                    const char *key = rs_copy_rate_get_key(local, side, scope);
                    /* Made once per process and kept, as a static table would be. */
                    columns[copy_rate_column(local, side, scope)] =
                        (RsColumn){g_strdup_printf("%s_bytes_per_s", key), key, RS_COLUMN_RATE,
                                   3, RS_COLUMN_NO_UNIT};
                }
        g_once_init_leave(&ready, 1);
    }
    return columns;
}

static RsTable *
copy_rate_table(const RsCopyRate *rates, guint n_rates)
{
    RsTable *t = rs_table_new("copy_runs", copy_rate_columns(), N_COPY_RATE_COLUMNS);
    for (guint i = 0; i < n_rates; i++) {
        rs_table_add_row(t);
        rs_table_set_uint(t, 0, rates[i].run_bytes);
        for (guint local = 0; local < 2; local++)
            for (guint side = 0; side < RS_COPY_SIDE_N; side++)
                for (guint scope = 0; scope < RS_COPY_SCOPE_N; scope++)
                    rs_table_set_double(t, copy_rate_column(local, side, scope),
                                        rs_copy_rate_get(&rates[i], local, side, scope));
    }
    return t;
}

void
rs_report_copy_rates(const RsCopyRate *rates, guint n_rates, GString *out)
{
    g_autoptr(RsTable) t = copy_rate_table(rates, n_rates);
    rs_table_append_text(t, out);
}

void
rs_report_json_copy_rate(JsonBuilder *b, const RsCopyRate *rate)
{
    g_autoptr(RsTable) t = copy_rate_table(rate, 1);
    rs_table_add_json_members(t, 0, b);
}

/* --- topology show --- */

/* The JSON members describing the topology (not a table). */
static void
json_topology_members(JsonBuilder *b, const RsTopology *topo)
{
    JSON_STRING(b, "name", rs_topology_get_name(topo));
    JSON_STRING(b, "description", rs_topology_get_description(topo));
    JSON_STRING(b, "gpu_model", rs_topology_get_gpu_model(topo));
    JSON_INT(b, "gpu_memory_bytes", rs_topology_get_gpu_memory_bytes(topo));
    JSON_INT(b, "nodes", rs_topology_get_n_nodes(topo));
    JSON_INT(b, "gpus_per_node", rs_topology_get_gpus_per_node(topo));
    JSON_INT(b, "gpus", rs_topology_get_n_gpus(topo));
    JSON_INT(b, "gpus_per_nvlink_domain", rs_topology_get_gpus_per_nvlink_domain(topo));
    JSON_INT(b, "nvlink_domains", rs_topology_get_n_nvlink_domains(topo));
    JSON_INT(b, "rails", rs_topology_get_n_rails(topo));
    JSON_INT(b, "scalable_unit_nodes", rs_topology_get_scalable_unit_nodes(topo));
    JSON_INT(b, "scalable_units", rs_topology_get_n_scalable_units(topo));
    JSON_DOUBLE(b, "oversubscription", rs_topology_get_oversubscription(topo));
    JSON_BOOL(b, "pxn", rs_topology_has_pxn(topo));
    JSON_BOOL(b, "pcie", rs_topology_has_pcie(topo));
    JSON_DOUBLE(b, "switch_latency_s", rs_topology_get_switch_latency_s(topo));
    JSON_DOUBLE(b, "message_overhead_s", rs_topology_get_message_overhead_s(topo));
    guint64 chunk_size = 0;
    JSON_DOUBLE(b, "chunk_overhead_s", rs_topology_get_chunk_overhead_s(topo, &chunk_size));
    JSON_INT(b, "chunk_size_bytes", (gint64)chunk_size);
}

void
rs_report_topology(const RsTopology *topo, gboolean show_links, RsFormat format, GString *out)
{
    if (format == RS_FORMAT_TABLE) {
        topology_text(topo, show_links, out);
        return;
    }
    g_autoptr(RsTable) links = link_table(topo);
    if (format == RS_FORMAT_CSV) {
        rs_table_append_csv(links, out);
        return;
    }
    guint n_copy;
    const RsCopyRate *copy = rs_topology_get_copy_rates(topo, &n_copy);
    g_autoptr(RsTable) copies = copy_rate_table(copy, n_copy);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_topology_members(b, topo);
    json_builder_set_member_name(b, "copy_runs");
    rs_table_add_json_array(copies, b);
    JSON_INT(b, "n_links", rs_topology_get_n_links(topo));
    if (show_links) {
        json_builder_set_member_name(b, "links");
        rs_table_add_json_array(links, b);
    }
    json_builder_end_object(b);
    rs_report_json_append(b, out);
}

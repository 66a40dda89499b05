/* report-flow.c — output for the flow-level simulator: a replayed message list, the
 * per-link statistics, and `reshard topology show`. */
#include "analysis/report.h"

#include "analysis/report-private.h"

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

static guint32
last_gpu(const RsFlowSimResult *f, double *finish_s)
{
    guint32 last = 0;
    *finish_s = -1.0;
    for (guint32 g = 0; g < f->n_gpus; g++)
        if (f->gpu_finish_s[g] > *finish_s) {
            *finish_s = f->gpu_finish_s[g];
            last = g;
        }
    return last;
}

void
rs_report_replay(const char *name, const RsTopology *topo, const RsFlowSimResult *f,
                 RsFormat format, GString *out)
{
    double eff = f->total_s > 0 ? f->bottleneck_load_s / f->total_s : 1.0;
    g_autofree char *link = f->bottleneck_link != G_MAXUINT32
                                ? rs_topology_format_link(topo, f->bottleneck_link)
                                : g_strdup("");
    double finish_s;
    guint32 last = last_gpu(f, &finish_s);
    if (format == RS_FORMAT_CSV) {
        g_string_append(out, "messages,network_messages,phases,bytes_moved,predicted_s,"
                             "link_load_bound_s,efficiency,bottleneck_link,chunks,events\n");
        g_string_append_printf(out,
                               "%u,%u,%u,%" G_GUINT64_FORMAT ",%.9g,%.9g,%.6f,%s,%" G_GUINT64_FORMAT
                               ",%" G_GUINT64_FORMAT "\n",
                               f->n_messages, f->n_network_messages, f->n_phases, f->bytes_moved,
                               f->total_s, f->bottleneck_load_s, eff, link, f->n_chunks,
                               f->n_events);
        return;
    }
    if (format == RS_FORMAT_JSON) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        JSON_STRING(b, "messages_file", name);
        JSON_STRING(b, "topology", rs_topology_get_name(topo));
        JSON_INT(b, "gpus", rs_topology_get_n_gpus(topo));
        JSON_INT(b, "messages", f->n_messages);
        JSON_INT(b, "network_messages", f->n_network_messages);
        JSON_INT(b, "bytes_moved", f->bytes_moved);
        JSON_DOUBLE(b, "predicted_s", f->total_s);
        JSON_DOUBLE(b, "link_load_bound_s", f->bottleneck_load_s);
        JSON_DOUBLE(b, "efficiency", eff);
        JSON_STRING(b, "bottleneck_link", link);
        json_builder_set_member_name(b, "phases");
        json_builder_begin_array(b);
        for (guint p = 0; p < f->n_phases; p++) {
            json_builder_begin_object(b);
            JSON_INT(b, "phase", f->phase_ids[p]);
            JSON_DOUBLE(b, "end_s", f->phase_end_s[p]);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        JSON_INT(b, "last_gpu", last);
        JSON_DOUBLE(b, "last_gpu_finish_s", finish_s);
        JSON_INT(b, "chunks", f->n_chunks);
        JSON_INT(b, "events", f->n_events);
        json_builder_end_object(b);
        rs_report_json_append(b, out);
        return;
    }
    g_autofree char *summary = rs_topology_format_summary(topo);
    g_string_append_printf(
        out, "messages   %s: %u messages (%u over links), %u phase%s, %.4g GB moved\n", name,
        f->n_messages, f->n_network_messages, f->n_phases, f->n_phases == 1 ? "" : "s",
        f->bytes_moved / 1e9);
    g_string_append_printf(out, "topology   %s\n", summary);
    g_string_append_printf(out, "time       %.6g s (flow-level)\n", f->total_s);
    if (f->bottleneck_link != G_MAXUINT32)
        g_string_append_printf(out,
                               "bound      %.6g s: the most loaded link, %s, carries %.4g GB at "
                               "%.4g GB/s\n",
                               f->bottleneck_load_s, link, f->link_bytes[f->bottleneck_link] / 1e9,
                               link_capacity(topo, f->bottleneck_link) / 1e9);
    g_string_append_printf(out, "efficiency %.0f%%\n", 100.0 * eff);
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

/* --- link statistics --- */

void
rs_report_link_stats(const RsFlowSimResult *f, const RsTopology *topo, GString *out)
{
    g_string_append(out, "link,kind,capacity_bytes_per_s,latency_s,dominated,bytes,busy_s,load_s,"
                         "utilisation,bucket_s");
    for (guint b = 0; b < f->n_buckets; b++)
        g_string_append_printf(out, ",u%u", b);
    g_string_append_c(out, '\n');
    for (guint32 l = 0; l < f->n_links; l++) {
        const RsLink *link = rs_topology_get_link(topo, l);
        double cap = rs_link_get_capacity_bytes_per_s(link);
        g_autofree char *name = rs_topology_format_link(topo, l);
        g_string_append_printf(out, "%s,%s,%.9g,%.9g,%d,%" G_GUINT64_FORMAT ",%.9g,%.9g,%.6f,%.9g",
                               name, rs_link_kind_get_name(link->kind), cap, link->latency_s,
                               rs_topology_link_is_dominated(topo, l) ? 1 : 0, f->link_bytes[l],
                               f->link_busy_s[l], f->link_bytes[l] / cap,
                               rs_flow_sim_get_link_utilisation(f, topo, l), f->bucket_s);
        for (guint b = 0; b < f->n_buckets; b++)
            g_string_append_printf(out, ",%.4f",
                                   f->link_timeline_bytes[(gsize)l * f->n_buckets + b] /
                                       (cap * f->bucket_s));
        g_string_append_c(out, '\n');
    }
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

static void
topology_links_table(const RsTopology *topo, GString *out)
{
    RsReportTable *t = rs_report_table_new();
    GPtrArray *h = rs_report_table_add_row(t);
    const char *const heads[] = {"id",         "link",          "kind",       "bandwidth GB/s",
                                 "efficiency", "capacity GB/s", "latency us", "dominated"};
    for (guint i = 0; i < G_N_ELEMENTS(heads); i++)
        rs_report_table_cell(h, "%s", heads[i]);
    for (guint32 l = 0; l < rs_topology_get_n_links(topo); l++) {
        const RsLink *link = rs_topology_get_link(topo, l);
        g_autofree char *name = rs_topology_format_link(topo, l);
        GPtrArray *row = rs_report_table_add_row(t);
        rs_report_table_cell(row, "%u", l);
        rs_report_table_cell(row, "%s", name);
        rs_report_table_cell(row, "%s", rs_link_kind_get_name(link->kind));
        rs_report_table_cell(row, "%.2f", link->bw_bytes_per_s / 1e9);
        rs_report_table_cell(row, "%.3f", link->efficiency);
        rs_report_table_cell(row, "%.3f", rs_link_get_capacity_bytes_per_s(link) / 1e9);
        rs_report_table_cell(row, "%.3f", link->latency_s * 1e6);
        rs_report_table_cell(row, "%s", rs_topology_link_is_dominated(topo, l) ? "yes" : "no");
    }
    rs_report_table_print_free(t, out);
}

static void
topology_table(const RsTopology *topo, gboolean show_links, GString *out)
{
    guint n_gpus = rs_topology_get_n_gpus(topo), n_units = rs_topology_get_n_scalable_units(topo);
    guint n_rails = rs_topology_get_n_rails(topo);
    g_string_append_printf(out, "topology   %s%s%s\n", rs_topology_get_name(topo),
                           *rs_topology_get_description(topo) ? ": " : "",
                           rs_topology_get_description(topo));
    g_autofree char *gpus = rs_format_thousands(n_gpus);
    g_string_append_printf(out, "GPUs       %s %s", gpus, rs_topology_get_gpu_model(topo));
    guint64 memory = rs_topology_get_gpu_memory_bytes(topo);
    if (memory > 0 && memory % (1u << 30) == 0)
        g_string_append_printf(out, ", %" G_GUINT64_FORMAT " GiB each", memory >> 30);
    else if (memory > 0)
        g_string_append_printf(out, ", %.4g GB each", memory / 1e9);
    g_string_append_printf(out, ", on %u nodes of %u\n", rs_topology_get_n_nodes(topo),
                           rs_topology_get_gpus_per_node(topo));
    g_string_append_printf(
        out, "NVLink     %u domain%s of %u GPUs (%u node%s each), non-blocking NVSwitch\n",
        rs_topology_get_n_nvlink_domains(topo),
        rs_topology_get_n_nvlink_domains(topo) == 1 ? "" : "s",
        rs_topology_get_gpus_per_nvlink_domain(topo),
        rs_topology_get_gpus_per_nvlink_domain(topo) / rs_topology_get_gpus_per_node(topo),
        rs_topology_get_gpus_per_nvlink_domain(topo) == rs_topology_get_gpus_per_node(topo) ? ""
                                                                                            : "s");
    g_string_append_printf(out,
                           "fabric     rail-optimized, %u rail%s; %u scalable unit%s of %u nodes; "
                           "%u leaves (one per rail per unit) joined by a spine; "
                           "oversubscription %g:1; PXN %s\n",
                           n_rails, n_rails == 1 ? "" : "s", n_units, n_units == 1 ? "" : "s",
                           rs_topology_get_scalable_unit_nodes(topo), n_units * n_rails,
                           rs_topology_get_oversubscription(topo),
                           rs_topology_has_pxn(topo) ? "on" : "off");
    g_string_append_printf(
        out, "latency    message overhead %.3g us; %.3g us per leaf or spine crossed\n",
        rs_topology_get_message_overhead_s(topo) * 1e6,
        rs_topology_get_switch_latency_s(topo) * 1e6);
    guint n_copy;
    const RsCopyRate *copy = rs_topology_get_copy_rates(topo, &n_copy);
    if (n_copy > 0) {
        g_string_append(out, "copies     measured copy rates (the copy section), GB/s by run "
                             "length:\n");
        rs_report_copy_rates(copy, n_copy, out);
    }
    g_string_append_c(out, '\n');

    KindSummary kinds[RS_LINK_KIND_N];
    summarise_kinds(topo, kinds);
    static const RsLinkKind order[] = {
        RS_LINK_NVLINK_EGRESS, RS_LINK_NVLINK_INGRESS, RS_LINK_PCIE_EGRESS, RS_LINK_PCIE_INGRESS,
        RS_LINK_NIC_EGRESS,    RS_LINK_NIC_INGRESS,    RS_LINK_LEAF_UPLINK, RS_LINK_LEAF_DOWNLINK};
    RsReportTable *t = rs_report_table_new();
    GPtrArray *h = rs_report_table_add_row(t);
    const char *const heads[] = {"link kind",     "links",      "bandwidth GB/s", "efficiency",
                                 "capacity GB/s", "latency us", "dominated"};
    for (guint i = 0; i < G_N_ELEMENTS(heads); i++)
        rs_report_table_cell(h, "%s", heads[i]);
    for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
        const KindSummary *k = &kinds[order[i]];
        if (k->count == 0)
            continue;
        g_autofree char *bw = format_range(k->min_bw, k->max_bw);
        g_autofree char *cap = format_range(k->min_cap, k->max_cap);
        GPtrArray *row = rs_report_table_add_row(t);
        rs_report_table_cell(row, "%s", rs_link_kind_get_name(order[i]));
        rs_report_table_cell(row, "%u", k->count);
        rs_report_table_cell(row, "%s", bw);
        rs_report_table_cell(row, "%.2f", k->efficiency);
        rs_report_table_cell(row, "%s", cap);
        rs_report_table_cell(row, "%.2f", k->latency_s * 1e6);
        rs_report_table_cell(row, "%u", k->n_dominated);
    }
    rs_report_table_print_free(t, out);

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

    double domain_nvlink = 0.0, injection = 0.0, uplinks = 0.0;
    for (guint32 g = 0; g < n_gpus; g++) {
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
    if (show_links) {
        g_string_append_c(out, '\n');
        topology_links_table(topo, out);
    }
}

static void
json_link(JsonBuilder *b, const RsTopology *topo, guint32 l)
{
    const RsLink *link = rs_topology_get_link(topo, l);
    g_autofree char *name = rs_topology_format_link(topo, l);
    json_builder_begin_object(b);
    JSON_INT(b, "id", l);
    JSON_STRING(b, "name", name);
    JSON_STRING(b, "kind", rs_link_kind_get_name(link->kind));
    JSON_DOUBLE(b, "bw_bytes_per_s", link->bw_bytes_per_s);
    JSON_DOUBLE(b, "efficiency", link->efficiency);
    JSON_DOUBLE(b, "capacity_bytes_per_s", rs_link_get_capacity_bytes_per_s(link));
    JSON_DOUBLE(b, "latency_s", link->latency_s);
    JSON_BOOL(b, "dominated", rs_topology_link_is_dominated(topo, l));
    json_builder_end_object(b);
}

void
rs_report_copy_rates(const RsCopyRate *rates, guint n_rates, GString *out)
{
    RsReportTable *t = rs_report_table_new();
    GPtrArray *h = rs_report_table_add_row(t);
    rs_report_table_cell(h, "run bytes");
    for (guint local = 0; local < 2; local++)
        for (guint side = 0; side < RS_COPY_SIDE_N; side++)
            for (guint scope = 0; scope < RS_COPY_SCOPE_N; scope++)
                rs_report_table_cell(h, "%s", rs_copy_rate_get_key(local, side, scope));
    for (guint i = 0; i < n_rates; i++) {
        GPtrArray *row = rs_report_table_add_row(t);
        rs_report_table_cell(row, "%" G_GUINT64_FORMAT, rates[i].run_bytes);
        for (guint local = 0; local < 2; local++)
            for (guint side = 0; side < RS_COPY_SIDE_N; side++)
                for (guint scope = 0; scope < RS_COPY_SCOPE_N; scope++)
                    rs_report_table_cell(row, "%.3f",
                                         rs_copy_rate_get(&rates[i], local, side, scope) / 1e9);
    }
    rs_report_table_print_free(t, out);
}

void
rs_report_json_copy_rate(JsonBuilder *b, const RsCopyRate *rate)
{
    JSON_INT(b, "run_bytes", rate->run_bytes);
    for (guint local = 0; local < 2; local++) {
        for (guint side = 0; side < RS_COPY_SIDE_N; side++) {
            for (guint scope = 0; scope < RS_COPY_SCOPE_N; scope++) {
                g_autofree char *name = g_strdup_printf(
                    "%s_bytes_per_s", rs_copy_rate_get_key(local, side, scope));
                JSON_DOUBLE(b, name, rs_copy_rate_get(rate, local, side, scope));
            }
        }
    }
}

void
rs_report_topology(const RsTopology *topo, gboolean show_links, RsFormat format, GString *out)
{
    if (format == RS_FORMAT_TABLE) {
        topology_table(topo, show_links, out);
        return;
    }
    if (format == RS_FORMAT_CSV) {
        g_string_append(out, "id,link,kind,bw_bytes_per_s,efficiency,capacity_bytes_per_s,"
                             "latency_s,dominated\n");
        for (guint32 l = 0; l < rs_topology_get_n_links(topo); l++) {
            const RsLink *link = rs_topology_get_link(topo, l);
            g_autofree char *name = rs_topology_format_link(topo, l);
            g_string_append_printf(out, "%u,%s,%s,%.9g,%.9g,%.9g,%.9g,%d\n", l, name,
                                   rs_link_kind_get_name(link->kind), link->bw_bytes_per_s,
                                   link->efficiency, rs_link_get_capacity_bytes_per_s(link),
                                   link->latency_s, rs_topology_link_is_dominated(topo, l) ? 1 : 0);
        }
        return;
    }
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
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
    guint n_copy;
    const RsCopyRate *copy = rs_topology_get_copy_rates(topo, &n_copy);
    json_builder_set_member_name(b, "copy_runs");
    json_builder_begin_array(b);
    for (guint i = 0; i < n_copy; i++) {
        json_builder_begin_object(b);
        rs_report_json_copy_rate(b, &copy[i]);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    JSON_INT(b, "n_links", rs_topology_get_n_links(topo));
    if (show_links) {
        json_builder_set_member_name(b, "links");
        json_builder_begin_array(b);
        for (guint32 l = 0; l < rs_topology_get_n_links(topo); l++)
            json_link(b, topo, l);
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
    rs_report_json_append(b, out);
}

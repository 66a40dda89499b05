/* timeline.c — the Chrome trace event document of timeline.h, built with json-glib. */
#include "analysis/timeline.h"
#include "base/output.h"

#include "analysis/report.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

const char *
rs_timeline_link_class(const char *name)
{
    if (strstr(name, "nvlink") != NULL)
        return "nvlink";
    if (strstr(name, "pcie") != NULL)
        return "pcie";
    if (strstr(name, "nic") != NULL)
        return "nic";
    if (strstr(name, "uplink") != NULL || strstr(name, "downlink") != NULL)
        return "spine";
    return "other";
}

static const char *const link_classes[] = {"nvlink", "pcie", "nic", "spine", "other"};
enum { N_CLASSES = G_N_ELEMENTS(link_classes) };

typedef struct {
    guint row;
    double start_s, end_s;
    guint32 message;
} Item;

static gint
by_start(gconstpointer a, gconstpointer b)
{
    const Item *x = a, *y = b;
    if (x->start_s != y->start_s)
        return x->start_s < y->start_s ? -1 : 1;
    return x->message < y->message ? -1 : x->message > y->message;
}

/* A counter change: at @t_s, class @cls gains @delta messages. */
typedef struct {
    double t_s;
    guint cls;
    gint delta;
} Change;

static gint
by_time(gconstpointer a, gconstpointer b)
{
    const Change *x = a, *y = b;
    if (x->t_s != y->t_s)
        return x->t_s < y->t_s ? -1 : 1;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    return x->delta - y->delta; /* ends before starts at one instant */
}

static void
add_meta_event(JsonBuilder *b, const char *what, guint pid, gint tid, const char *name)
{
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "ph");
    json_builder_add_string_value(b, "M");
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, what);
    json_builder_set_member_name(b, "pid");
    json_builder_add_int_value(b, pid);
    if (tid >= 0) {
        json_builder_set_member_name(b, "tid");
        json_builder_add_int_value(b, tid);
    }
    json_builder_set_member_name(b, "args");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, name);
    json_builder_end_object(b);
    json_builder_end_object(b);
}

/* The route's classes, each once: bit c set when class c is crossed. */
static guint
route_classes(const char *route)
{
    guint mask = 0;
    g_auto(GStrv) links = g_strsplit(route, ";", -1);
    for (guint i = 0; links[i] != NULL; i++) {
        if (*links[i] == '\0')
            continue;
        const char *c = rs_timeline_link_class(links[i]);
        for (guint k = 0; k < N_CLASSES; k++)
            if (strcmp(c, link_classes[k]) == 0)
                mask |= 1u << k;
    }
    return mask;
}

char *
rs_timeline_to_json(const RsTrace *trace)
{
    guint n = rs_trace_get_n_rows(trace);
    g_autoptr(GArray) items = g_array_new(FALSE, FALSE, sizeof(Item));
    for (guint i = 0; i < n; i++) {
        const RsTraceRow *r = rs_trace_get_row(trace, i);
        if (isnan(r->start_s) || isnan(r->end_s))
            continue;
        Item it = {i, r->start_s, r->end_s, r->message};
        g_array_append_val(items, it);
    }
    g_array_sort(items, by_start);
    /* Lanes per destination GPU: the end time of each lane's last message. */
    g_autoptr(GHashTable) lanes =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref);
    g_autoptr(GArray) changes = g_array_new(FALSE, FALSE, sizeof(Change));
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "traceEvents");
    json_builder_begin_array(b);
    add_meta_event(b, "process_name", 0, -1, "link classes");
    for (guint k = 0; k < items->len; k++) {
        const Item *it = &g_array_index(items, Item, k);
        const RsTraceRow *r = rs_trace_get_row(trace, it->row);
        GArray *gl = g_hash_table_lookup(lanes, GUINT_TO_POINTER(r->dst + 1));
        if (gl == NULL) {
            gl = g_array_new(FALSE, FALSE, sizeof(double));
            g_hash_table_insert(lanes, GUINT_TO_POINTER(r->dst + 1), gl);
            g_autofree char *pname = g_strdup_printf("GPU %u", r->dst);
            add_meta_event(b, "process_name", r->dst + 1, -1, pname);
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "ph");
            json_builder_add_string_value(b, "M");
            json_builder_set_member_name(b, "name");
            json_builder_add_string_value(b, "process_sort_index");
            json_builder_set_member_name(b, "pid");
            json_builder_add_int_value(b, r->dst + 1);
            json_builder_set_member_name(b, "args");
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "sort_index");
            json_builder_add_int_value(b, r->dst + 1);
            json_builder_end_object(b);
            json_builder_end_object(b);
        }
        guint lane = 0;
        while (lane < gl->len && g_array_index(gl, double, lane) > it->start_s)
            lane++;
        if (lane == gl->len) {
            g_array_append_val(gl, it->end_s);
            g_autofree char *tname = g_strdup_printf("lane %u", lane);
            add_meta_event(b, "thread_name", r->dst + 1, (gint)lane, tname);
        } else {
            g_array_index(gl, double, lane) = it->end_s;
        }
        g_autofree char *name = g_strdup_printf("%u -> %u", r->src, r->dst);
        g_autofree char *cat = g_strdup_printf("phase %u", r->phase);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, name);
        json_builder_set_member_name(b, "cat");
        json_builder_add_string_value(b, cat);
        json_builder_set_member_name(b, "ph");
        json_builder_add_string_value(b, "X");
        json_builder_set_member_name(b, "ts");
        json_builder_add_double_value(b, it->start_s * 1e6);
        json_builder_set_member_name(b, "dur");
        json_builder_add_double_value(b, (it->end_s - it->start_s) * 1e6);
        json_builder_set_member_name(b, "pid");
        json_builder_add_int_value(b, r->dst + 1);
        json_builder_set_member_name(b, "tid");
        json_builder_add_int_value(b, lane);
        json_builder_set_member_name(b, "args");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "message");
        json_builder_add_int_value(b, r->message);
        json_builder_set_member_name(b, "src");
        json_builder_add_int_value(b, r->src);
        json_builder_set_member_name(b, "dst");
        json_builder_add_int_value(b, r->dst);
        json_builder_set_member_name(b, "bytes");
        json_builder_add_int_value(b, (gint64)r->size_bytes);
        json_builder_set_member_name(b, "phase");
        json_builder_add_int_value(b, r->phase);
        json_builder_set_member_name(b, "route");
        json_builder_add_string_value(b, r->route);
        json_builder_end_object(b);
        json_builder_end_object(b);
        guint mask = route_classes(r->route);
        for (guint c = 0; c < N_CLASSES; c++)
            if (mask & (1u << c)) {
                Change up = {it->start_s, c, 1}, down = {it->end_s, c, -1};
                g_array_append_val(changes, up);
                g_array_append_val(changes, down);
            }
    }
    g_array_sort(changes, by_time);
    gint level[N_CLASSES] = {0};
    for (guint k = 0; k < changes->len; k++) {
        const Change *c = &g_array_index(changes, Change, k);
        level[c->cls] += c->delta;
        /* One counter event per instant and class: the level after every change then. */
        if (k + 1 < changes->len) {
            const Change *next = &g_array_index(changes, Change, k + 1);
            if (next->t_s == c->t_s && next->cls == c->cls)
                continue;
        }
        g_autofree char *cname = g_strdup_printf("%s messages in flight", link_classes[c->cls]);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, cname);
        json_builder_set_member_name(b, "ph");
        json_builder_add_string_value(b, "C");
        json_builder_set_member_name(b, "ts");
        json_builder_add_double_value(b, c->t_s * 1e6);
        json_builder_set_member_name(b, "pid");
        json_builder_add_int_value(b, 0);
        json_builder_set_member_name(b, "args");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "messages");
        json_builder_add_int_value(b, level[c->cls]);
        json_builder_end_object(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "displayTimeUnit");
    json_builder_add_string_value(b, "ns");
    json_builder_set_member_name(b, "otherData");
    g_autoptr(JsonObject) prov = rs_report_provenance_new();
    static const char *const meta_keys[] = {"source",   "model",    "topology",
                                            "scenario", "strategy", "transport"};
    for (guint i = 0; i < G_N_ELEMENTS(meta_keys); i++) {
        const char *v = rs_trace_get_meta(trace, meta_keys[i]);
        if (v != NULL)
            json_object_set_string_member(prov, meta_keys[i], v);
    }
    JsonNode *pn = json_node_new(JSON_NODE_OBJECT);
    json_node_set_object(pn, prov);
    json_builder_add_value(b, pn);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_root(gen, root);
    g_autofree char *text = json_generator_to_data(gen, NULL);
    return g_strconcat(text, "\n", NULL);
}

gboolean
rs_timeline_write_file(const RsTrace *trace, const char *path, GError **error)
{
    g_autofree char *text = rs_timeline_to_json(trace);
    return rs_output_write_file(path, text, -1, error); /* (its message names the path) */
}

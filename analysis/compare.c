/* compare.c — predicted against measured traces (compare.h). */
#include "analysis/compare.h"

#include "analysis/report.h"
#include "analysis/timeline.h"
#include "base/stats.h"

#include <math.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-compare-error-quark, rs_compare_error)
/* clang-format on */

struct _RsCompare {
    char *predicted_name, *measured_name;
    GArray *messages; /* RsCompareMessage, by id */
    guint n_predicted_only, n_measured_only;
    guint n_zero_measured; /* matched messages measured in 0 s: no relative error */
    double predicted_span_s, measured_span_s;
    /* Per phase: the span of each side. */
    GArray *phases;     /* guint32, increasing */
    GArray *phase_span; /* double pairs: predicted, measured */
};

/* The class of a message's route: "local" for a copy within a GPU, "unknown" when a message
 * between two GPUs has no route (a trace of reshard run: the executor does not know the
 * fabric's links). */
static const char *
route_link_class(const char *route, guint32 src, guint32 dst)
{
    if (src == dst)
        return "local";
    if (route == NULL || *route == '\0')
        return "unknown";
    gboolean nvlink = FALSE, pcie = FALSE;
    g_auto(GStrv) links = g_strsplit(route, ";", -1);
    for (guint i = 0; links[i] != NULL; i++) {
        const char *c = rs_timeline_link_class(links[i]);
        if (strcmp(c, "nic") == 0 || strcmp(c, "spine") == 0)
            return "network";
        pcie |= strcmp(c, "pcie") == 0;
        nvlink |= strcmp(c, "nvlink") == 0;
    }
    return pcie ? "pcie" : nvlink ? "nvlink" : "local";
}

/* TRUE when some row of @t has both times. */
static gboolean
trace_has_times(const RsTrace *t)
{
    for (guint i = 0; i < rs_trace_get_n_rows(t); i++) {
        const RsTraceRow *r = rs_trace_get_row(t, i);
        if (isfinite(r->start_s) && isfinite(r->end_s))
            return TRUE;
    }
    return FALSE;
}

static gboolean
has_times(const RsTraceRow *r)
{
    return !isnan(r->start_s) && !isnan(r->end_s);
}

static gint
by_message(gconstpointer a, gconstpointer b)
{
    const RsCompareMessage *x = a, *y = b;
    return x->message < y->message ? -1 : x->message > y->message;
}

RsCompare *
rs_compare_new(const RsTrace *predicted, const RsTrace *measured, GError **error)
{
    g_autoptr(GHashTable) pred = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < rs_trace_get_n_rows(predicted); i++) {
        const RsTraceRow *r = rs_trace_get_row(predicted, i);
        if (has_times(r))
            g_hash_table_insert(pred, GUINT_TO_POINTER(r->message + 1), (gpointer)r);
    }
    RsCompare *c = g_new0(RsCompare, 1);
    const char *pn = rs_trace_get_name(predicted), *mn = rs_trace_get_name(measured);
    c->predicted_name = g_strdup(pn ? pn : "the simulation");
    c->measured_name = g_strdup(mn ? mn : "the run");
    c->messages = g_array_new(FALSE, FALSE, sizeof(RsCompareMessage));
    c->phases = g_array_new(FALSE, FALSE, sizeof(guint32));
    c->phase_span = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GHashTable) matched = g_hash_table_new(g_direct_hash, g_direct_equal);
    /* Per phase: min start and max end on each side. */
    g_autoptr(GHashTable) spans =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    double ps0 = INFINITY, ps1 = -INFINITY, ms0 = INFINITY, ms1 = -INFINITY;
    for (guint i = 0; i < rs_trace_get_n_rows(measured); i++) {
        const RsTraceRow *m = rs_trace_get_row(measured, i);
        const RsTraceRow *p = g_hash_table_lookup(pred, GUINT_TO_POINTER(m->message + 1));
        if (p == NULL || !has_times(m)) {
            c->n_measured_only++;
            continue;
        }
        if (p->src != m->src || p->dst != m->dst || p->size_bytes != m->size_bytes ||
            p->phase != m->phase) {
            g_autofree char *pl = p->line ? g_strdup_printf(" (line %u)", p->line) : g_strdup("");
            g_autofree char *ml = m->line ? g_strdup_printf(" (line %u)", m->line) : g_strdup("");
            g_set_error(error, RS_COMPARE_ERROR, RS_COMPARE_ERROR_MISMATCH,
                        "message %u is %u -> %u, %" G_GUINT64_FORMAT " B, phase %u in %s%s but "
                        "%u -> %u, %" G_GUINT64_FORMAT " B, phase %u in %s%s: the traces are of "
                        "different plans (simulate and run the same scenario, strategy and "
                        "planner flags)",
                        m->message, p->src, p->dst, p->size_bytes, p->phase, c->predicted_name,
                        pl, m->src, m->dst, m->size_bytes, m->phase, c->measured_name, ml);
            rs_compare_free(c);
            return NULL;
        }
        g_hash_table_add(matched, GUINT_TO_POINTER(m->message + 1));
        RsCompareMessage cm = {0};
        cm.message = m->message;
        cm.src = m->src;
        cm.dst = m->dst;
        cm.phase = m->phase;
        cm.size_bytes = m->size_bytes;
        cm.link_class = route_link_class(p->route, p->src, p->dst);
        cm.predicted_s = p->end_s - p->start_s;
        cm.measured_s = m->end_s - m->start_s;
        if (cm.measured_s > 0) {
            cm.error = (cm.predicted_s - cm.measured_s) / cm.measured_s;
        } else {
            cm.error = NAN; /* (p − 0) / 0: no relative error; left out of the statistics */
            c->n_zero_measured++;
        }
        g_array_append_val(c->messages, cm);
        double *sp = g_hash_table_lookup(spans, GUINT_TO_POINTER(m->phase + 1));
        if (sp == NULL) {
            sp = g_new(double, 4);
            sp[0] = sp[2] = INFINITY;
            sp[1] = sp[3] = -INFINITY;
            g_hash_table_insert(spans, GUINT_TO_POINTER(m->phase + 1), sp);
            g_array_append_val(c->phases, m->phase);
        }
        sp[0] = MIN(sp[0], p->start_s);
        sp[1] = MAX(sp[1], p->end_s);
        sp[2] = MIN(sp[2], m->start_s);
        sp[3] = MAX(sp[3], m->end_s);
        ps0 = MIN(ps0, p->start_s);
        ps1 = MAX(ps1, p->end_s);
        ms0 = MIN(ms0, m->start_s);
        ms1 = MAX(ms1, m->end_s);
    }
    c->n_predicted_only = g_hash_table_size(pred) - g_hash_table_size(matched);
    if (c->messages->len == 0) {
        /* Say why: a side without any time (no start_s/end_s columns, or empty ones), or
         * ids that do not meet. */
        const RsTrace *untimed = !trace_has_times(measured)    ? measured
                                 : !trace_has_times(predicted) ? predicted
                                                               : NULL;
        if (untimed != NULL)
            g_set_error(error, RS_COMPARE_ERROR, RS_COMPARE_ERROR_NO_MATCH,
                        "%s has no message with both start_s and end_s (the columns are "
                        "missing or empty): nothing to compare",
                        untimed == measured ? c->measured_name : c->predicted_name);
        else
            g_set_error(error, RS_COMPARE_ERROR, RS_COMPARE_ERROR_NO_MATCH,
                        "no message id of %s with start and end times is in %s",
                        c->measured_name, c->predicted_name);
        rs_compare_free(c);
        return NULL;
    }
    g_array_sort(c->messages, by_message);
    /* Phases in increasing order (a small insertion sort keeps the spans aligned). */
    for (guint i = 1; i < c->phases->len; i++)
        for (guint j = i; j > 0 && g_array_index(c->phases, guint32, j - 1) >
                                       g_array_index(c->phases, guint32, j);
             j--) {
            guint32 t = g_array_index(c->phases, guint32, j);
            g_array_index(c->phases, guint32, j) = g_array_index(c->phases, guint32, j - 1);
            g_array_index(c->phases, guint32, j - 1) = t;
        }
    for (guint i = 0; i < c->phases->len; i++) {
        const double *sp =
            g_hash_table_lookup(spans, GUINT_TO_POINTER(g_array_index(c->phases, guint32, i) + 1));
        double pair[2] = {sp[1] - sp[0], sp[3] - sp[2]};
        g_array_append_vals(c->phase_span, pair, 2);
    }
    c->predicted_span_s = ps1 - ps0;
    c->measured_span_s = ms1 - ms0;
    return c;
}

void
rs_compare_free(RsCompare *c)
{
    if (c == NULL)
        return;
    g_free(c->predicted_name);
    g_free(c->measured_name);
    g_array_unref(c->messages);
    g_array_unref(c->phases);
    g_array_unref(c->phase_span);
    g_free(c);
}

const RsCompareMessage *
rs_compare_get_messages(const RsCompare *c, guint *n_out)
{
    *n_out = c->messages->len;
    return (const RsCompareMessage *)c->messages->data;
}

double
rs_compare_percentile(double *values, guint n, double p)
{
    if (n == 0)
        return 0;
    qsort(values, n, sizeof *values, (int (*)(const void *, const void *))rs_stats_compare_double);
    guint rank = (guint)ceil(p * n - 1e-9);
    return values[CLAMP(rank, 1, n) - 1];
}

enum { CG_KIND, CG_GROUP, CG_MESSAGES, CG_PRED, CG_MEAS, CG_ERROR, CG_MEDIAN, CG_P90, CG_N };

static const RsColumn group_columns[CG_N] = {
    [CG_KIND] = {"group_kind", "by", RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    [CG_GROUP] = {"group", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    [CG_MESSAGES] = {"messages", NULL, RS_COLUMN_INTEGER, 0, 0},
    [CG_PRED] = {"predicted_s", "predicted", RS_COLUMN_SECONDS, 6, RS_COLUMN_SIGNIFICANT},
    [CG_MEAS] = {"measured_s", "measured", RS_COLUMN_SECONDS, 6, RS_COLUMN_SIGNIFICANT},
    [CG_ERROR] = {"error", NULL, RS_COLUMN_RATIO, 1, 0},
    [CG_MEDIAN] = {"median_abs_error", "median |error|", RS_COLUMN_RATIO, 1, 0},
    [CG_P90] = {"p90_abs_error", "p90 |error|", RS_COLUMN_RATIO, 1, 0},
};

typedef gboolean (*MessageFilter)(const RsCompareMessage *m, gconstpointer key);

static void
add_group(RsTable *t, const RsCompare *c, const char *kind, const char *group, MessageFilter keep,
          gconstpointer key, double span_pred, double span_meas, gboolean use_span)
{
    g_autoptr(GArray) errs = g_array_new(FALSE, FALSE, sizeof(double));
    double pred = 0, meas = 0;
    guint n = 0;
    for (guint i = 0; i < c->messages->len; i++) {
        const RsCompareMessage *m = &g_array_index(c->messages, RsCompareMessage, i);
        if (keep != NULL && !keep(m, key))
            continue;
        n++;
        pred += m->predicted_s;
        meas += m->measured_s;
        if (isnan(m->error))
            continue;
        double e = fabs(m->error);
        g_array_append_val(errs, e);
    }
    if (n == 0)
        return;
    if (use_span) {
        pred = span_pred;
        meas = span_meas;
    }
    rs_table_add_row(t);
    rs_table_set_text(t, CG_KIND, kind);
    rs_table_set_text(t, CG_GROUP, group);
    rs_table_set_uint(t, CG_MESSAGES, n);
    rs_table_set_double(t, CG_PRED, pred);
    rs_table_set_double(t, CG_MEAS, meas);
    /* A group measured in 0 s has no relative error: the cell stays empty ("-", null). */
    if (meas > 0)
        rs_table_set_double(t, CG_ERROR, (pred - meas) / meas);
    else
        rs_table_set_null(t, CG_ERROR);
    double *v = (double *)errs->data;
    if (errs->len > 0) {
        rs_table_set_double(t, CG_MEDIAN, rs_compare_percentile(v, errs->len, 0.5));
        rs_table_set_double(t, CG_P90, rs_compare_percentile(v, errs->len, 0.9));
    } else {
        rs_table_set_null(t, CG_MEDIAN);
        rs_table_set_null(t, CG_P90);
    }
}

static gboolean
in_phase(const RsCompareMessage *m, gconstpointer key)
{
    return m->phase == *(const guint32 *)key;
}

/* Size classes: upper bounds, bytes (G_MAXUINT64 for the last). */
static const guint64 size_bounds[] = {64 << 10, 1 << 20, 16 << 20, 256 << 20, G_MAXUINT64};
static const char *const size_names[] = {"< 64 KiB", "64 KiB - 1 MiB", "1 - 16 MiB", "16 - 256 MiB",
                                         ">= 256 MiB"};

static gboolean
in_size(const RsCompareMessage *m, gconstpointer key)
{
    guint k = *(const guint *)key;
    guint64 lo = k ? size_bounds[k - 1] : 0;
    return m->size_bytes >= lo && m->size_bytes < size_bounds[k];
}

static gboolean
in_link(const RsCompareMessage *m, gconstpointer key)
{
    return strcmp(m->link_class, key) == 0;
}

RsTable *
rs_compare_groups_table(const RsCompare *c)
{
    RsTable *t = rs_table_new("groups", group_columns, CG_N);
    add_group(t, c, "total", "all", NULL, NULL, c->predicted_span_s, c->measured_span_s, TRUE);
    for (guint i = 0; i < c->phases->len; i++) {
        guint32 ph = g_array_index(c->phases, guint32, i);
        g_autofree char *name = g_strdup_printf("%u", ph);
        add_group(t, c, "phase", name, in_phase, &ph, g_array_index(c->phase_span, double, 2 * i),
                  g_array_index(c->phase_span, double, 2 * i + 1), TRUE);
    }
    for (guint k = 0; k < G_N_ELEMENTS(size_bounds); k++)
        add_group(t, c, "size", size_names[k], in_size, &k, 0, 0, FALSE);
    static const char *const links[] = {"network", "pcie", "nvlink", "local", "unknown"};
    for (guint k = 0; k < G_N_ELEMENTS(links); k++)
        add_group(t, c, "link", links[k], in_link, links[k], 0, 0, FALSE);
    return t;
}

enum { CW_MESSAGE, CW_SRC, CW_DST, CW_PHASE, CW_BYTES, CW_LINK, CW_PRED, CW_MEAS, CW_ERROR, CW_N };

static const RsColumn worst_columns[CW_N] = {
    [CW_MESSAGE] = {"message", NULL, RS_COLUMN_INTEGER, 0, 0},
    [CW_SRC] = {"src", NULL, RS_COLUMN_INTEGER, 0, 0},
    [CW_DST] = {"dst", NULL, RS_COLUMN_INTEGER, 0, 0},
    [CW_PHASE] = {"phase", NULL, RS_COLUMN_INTEGER, 0, 0},
    [CW_BYTES] = {"bytes", NULL, RS_COLUMN_BYTES, 0, RS_COLUMN_THOUSANDS},
    [CW_LINK] = {"link_class", "link", RS_COLUMN_TEXT, 0, RS_COLUMN_LEFT},
    [CW_PRED] = {"predicted_s", "predicted", RS_COLUMN_SECONDS, 6, RS_COLUMN_SIGNIFICANT},
    [CW_MEAS] = {"measured_s", "measured", RS_COLUMN_SECONDS, 6, RS_COLUMN_SIGNIFICANT},
    [CW_ERROR] = {"error", NULL, RS_COLUMN_RATIO, 1, 0},
};

static gint
by_abs_error_desc(gconstpointer a, gconstpointer b)
{
    const RsCompareMessage *x = *(RsCompareMessage *const *)a, *y = *(RsCompareMessage *const *)b;
    /* A message without an error (measured in 0 s) sorts last. */
    double ex = isnan(x->error) ? -1 : fabs(x->error), ey = isnan(y->error) ? -1 : fabs(y->error);
    if (ex != ey)
        return ex > ey ? -1 : 1;
    return x->message < y->message ? -1 : x->message > y->message;
}

RsTable *
rs_compare_worst_table(const RsCompare *c, guint n)
{
    g_autoptr(GPtrArray) order = g_ptr_array_new();
    for (guint i = 0; i < c->messages->len; i++)
        g_ptr_array_add(order, &g_array_index(c->messages, RsCompareMessage, i));
    g_ptr_array_sort(order, by_abs_error_desc);
    RsTable *t = rs_table_new("worst", worst_columns, CW_N);
    for (guint i = 0; i < MIN(n, order->len); i++) {
        const RsCompareMessage *m = order->pdata[i];
        rs_table_add_row(t);
        rs_table_set_uint(t, CW_MESSAGE, m->message);
        rs_table_set_uint(t, CW_SRC, m->src);
        rs_table_set_uint(t, CW_DST, m->dst);
        rs_table_set_uint(t, CW_PHASE, m->phase);
        rs_table_set_uint(t, CW_BYTES, m->size_bytes);
        rs_table_set_text(t, CW_LINK, m->link_class);
        rs_table_set_double(t, CW_PRED, m->predicted_s);
        rs_table_set_double(t, CW_MEAS, m->measured_s);
        if (isnan(m->error))
            rs_table_set_null(t, CW_ERROR);
        else
            rs_table_set_double(t, CW_ERROR, m->error);
    }
    return t;
}

#define N_WORST 10

void
rs_compare_report(const RsCompare *c, RsFormat format, GString *out)
{
    g_autoptr(RsTable) groups = rs_compare_groups_table(c);
    g_autoptr(RsTable) worst = rs_compare_worst_table(c, N_WORST);
    if (format == RS_FORMAT_CSV) {
        rs_table_append_csv(groups, out);
        return;
    }
    if (format == RS_FORMAT_JSON) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "predicted");
        json_builder_add_string_value(b, c->predicted_name);
        json_builder_set_member_name(b, "measured");
        json_builder_add_string_value(b, c->measured_name);
        json_builder_set_member_name(b, "matched_messages");
        json_builder_add_int_value(b, c->messages->len);
        json_builder_set_member_name(b, "predicted_only");
        json_builder_add_int_value(b, c->n_predicted_only);
        json_builder_set_member_name(b, "measured_only");
        json_builder_add_int_value(b, c->n_measured_only);
        json_builder_set_member_name(b, "measured_zero");
        json_builder_add_int_value(b, c->n_zero_measured);
        json_builder_set_member_name(b, "groups");
        rs_table_add_json_array(groups, b);
        json_builder_set_member_name(b, "worst");
        rs_table_add_json_array(worst, b);
        json_builder_end_object(b);
        rs_report_json_append(b, out);
        return;
    }
    g_string_append_printf(out,
                           "compare    predicted %s against measured %s: %u message%s matched "
                           "by id, %u only predicted, %u only measured; error = (predicted - "
                           "measured) / measured\n",
                           c->predicted_name, c->measured_name, c->messages->len,
                           c->messages->len == 1 ? "" : "s",
                           c->n_predicted_only, c->n_measured_only);
    if (c->n_zero_measured > 0)
        g_string_append_printf(out,
                               "           %u matched message%s measured in 0 s (end_s = "
                               "start_s): no relative error, left out of the |error| columns\n",
                               c->n_zero_measured, c->n_zero_measured == 1 ? "" : "s");
    g_string_append_c(out, '\n');
    rs_table_append_text(groups, out);
    g_string_append_printf(out, "\nthe %u messages with the largest |error|:\n",
                           MIN(N_WORST, c->messages->len));
    rs_table_append_text(worst, out);
}

/* trace.c — the trace CSV: writing with a fixed column order, reading by column name. */
#include "base/trace.h"
#include "base/output.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* clang-format off */
G_DEFINE_QUARK(rs-trace-error-quark, rs_trace_error)
/* clang-format on */

struct _RsTrace {
    GArray *rows;       /* RsTraceRow */
    GPtrArray *meta;    /* alternating key, value */
    char *name;         /* the file it was read from, or NULL */
};

static void
row_clear(gpointer p)
{
    RsTraceRow *r = p;
    g_free(r->route);
    if (r->depends_on)
        g_array_unref(r->depends_on);
}

RsTrace *
rs_trace_new(void)
{
    RsTrace *t = g_new0(RsTrace, 1);
    t->rows = g_array_new(FALSE, TRUE, sizeof(RsTraceRow));
    g_array_set_clear_func(t->rows, row_clear);
    t->meta = g_ptr_array_new_with_free_func(g_free);
    return t;
}

void
rs_trace_free(RsTrace *trace)
{
    if (trace == NULL)
        return;
    g_array_unref(trace->rows);
    g_ptr_array_unref(trace->meta);
    g_free(trace->name);
    g_free(trace);
}

void
rs_trace_set_meta(RsTrace *trace, const char *key, const char *value)
{
    for (guint i = 0; i + 1 < trace->meta->len; i += 2) {
        if (strcmp(g_ptr_array_index(trace->meta, i), key) == 0) {
            g_free(g_ptr_array_index(trace->meta, i + 1));
            g_ptr_array_index(trace->meta, i + 1) = g_strdup(value);
            return;
        }
    }
    g_ptr_array_add(trace->meta, g_strdup(key));
    g_ptr_array_add(trace->meta, g_strdup(value));
}

const char *
rs_trace_get_meta(const RsTrace *trace, const char *key)
{
    for (guint i = 0; i + 1 < trace->meta->len; i += 2)
        if (strcmp(g_ptr_array_index(trace->meta, i), key) == 0)
            return g_ptr_array_index(trace->meta, i + 1);
    return NULL;
}

const char *
rs_trace_get_name(const RsTrace *trace)
{
    return trace->name;
}

char *
rs_trace_format_row_where(const RsTrace *trace, const RsTraceRow *row)
{
    if (trace->name != NULL && row->line > 0)
        return g_strdup_printf("%s:%u: message %u", trace->name, row->line, row->message);
    return g_strdup_printf("message %u", row->message);
}

RsTraceRow *
rs_trace_add(RsTrace *trace, guint32 message, guint32 src, guint32 dst, guint64 size_bytes,
             guint32 phase, double start_s, double end_s, const char *route,
             const guint32 *depends_on, guint n_deps)
{
    RsTraceRow row = {message, src, dst, size_bytes, phase, start_s, end_s,
                      g_strdup(route ? route : ""), g_array_new(FALSE, FALSE, sizeof(guint32)), 0};
    if (n_deps > 0)
        g_array_append_vals(row.depends_on, depends_on, n_deps);
    g_array_append_val(trace->rows, row);
    return &g_array_index(trace->rows, RsTraceRow, trace->rows->len - 1);
}

guint
rs_trace_get_n_rows(const RsTrace *trace)
{
    return trace->rows->len;
}

const RsTraceRow *
rs_trace_get_row(const RsTrace *trace, guint index)
{
    g_return_val_if_fail(index < trace->rows->len, NULL);
    return &g_array_index(trace->rows, RsTraceRow, index);
}

static void
append_time(GString *s, double t)
{
    if (!isnan(t)) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(buf, sizeof buf, "%.9g", t);
        g_string_append(s, buf);
    }
}

/* The CSV text: with @comments, the metadata as "# key: value" lines first. */
static char *
trace_to_csv(const RsTrace *trace, gboolean comments)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; comments && i + 1 < trace->meta->len; i += 2)
        g_string_append_printf(s, "# %s: %s\n", (char *)g_ptr_array_index(trace->meta, i),
                               (char *)g_ptr_array_index(trace->meta, i + 1));
    g_string_append(s, "message,src,dst,bytes,phase,start_s,end_s,route,depends_on\n");
    for (guint i = 0; i < trace->rows->len; i++) {
        const RsTraceRow *r = &g_array_index(trace->rows, RsTraceRow, i);
        g_string_append_printf(s, "%u,%u,%u,%" G_GUINT64_FORMAT ",%u,", r->message, r->src,
                               r->dst, r->size_bytes, r->phase);
        append_time(s, r->start_s);
        g_string_append_c(s, ',');
        append_time(s, r->end_s);
        g_string_append_printf(s, ",%s,", r->route);
        for (guint k = 0; k < r->depends_on->len; k++)
            g_string_append_printf(s, "%s%u", k ? ";" : "", g_array_index(r->depends_on, guint32, k));
        g_string_append_c(s, '\n');
    }
    return g_string_free(s, FALSE);
}

char *
rs_trace_to_string(const RsTrace *trace)
{
    return trace_to_csv(trace, TRUE);
}

char *
rs_trace_get_meta_path(const char *path)
{
    return g_strconcat(path, ".meta", NULL);
}

#define META_GROUP "trace"

gboolean
rs_trace_write_file(const RsTrace *trace, const char *path, GError **error)
{
    /* The CSV holds the rows alone, so that pandas.read_csv() and spreadsheets load it as
     * it is; the metadata goes to the sidecar PATH.meta (a GKeyFile). */
    g_autofree char *text = trace_to_csv(trace, FALSE);
    g_autoptr(GError) local = NULL;
    g_autofree char *meta_path = rs_trace_get_meta_path(path);
    g_autofree char *meta = NULL;
    /* A trace sent to a device or FIFO (/dev/null, a pipe) has no folder of its own to hold
     * a sidecar: its metadata is dropped rather than written as a new file beside it. */
    struct stat st;
    gboolean special = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
    if (trace->meta->len > 0 && !special) {
        g_autoptr(GKeyFile) kf = g_key_file_new();
        for (guint i = 0; i + 1 < trace->meta->len; i += 2)
            g_key_file_set_string(kf, META_GROUP, g_ptr_array_index(trace->meta, i),
                                  g_ptr_array_index(trace->meta, i + 1));
        meta = g_key_file_to_data(kf, NULL, NULL);
    }
    /* rs_output_write_file: a temporary file renamed over @path (devices written into). */
    if (!rs_output_write_file(path, text, -1, &local) ||
        (meta != NULL && !rs_output_write_file(meta_path, meta, -1, &local))) {
        g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_IO, "%s", local->message);
        return FALSE;
    }
    return TRUE;
}

enum { COL_MESSAGE, COL_SRC, COL_DST, COL_BYTES, COL_PHASE, COL_START, COL_END, COL_ROUTE,
       COL_DEPENDS, N_COLS };

static const char *const column_names[N_COLS] = {"message", "src",   "dst",   "bytes",     "phase",
                                                  "start_s", "end_s", "route", "depends_on"};

/* A field as an error message quotes it: at most 40 characters, then "…" (the text is
 * checked to be printable UTF-8 before any field is read, see check_text). */
static char *
quote_field(const char *text)
{
    if (g_utf8_strlen(text, -1) <= 40)
        return g_strdup(text);
    g_autofree char *head = g_utf8_substring(text, 0, 40);
    return g_strconcat(head, "…", NULL);
}

/* Sets a parse error naming the place; returns FALSE for the caller to return. */
static gboolean
parse_error(GError **error, const char *name, guint line, const char *column, const char *text,
            const char *what)
{
    g_autofree char *quoted = quote_field(text);
    g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE, "%s:%u: column %s: \"%s\" %s", name,
                line, column, quoted, what);
    return FALSE;
}

/* A messages file is text: valid UTF-8 without control characters other than tab, CR and
 * LF, and no more than RS_TRACE_MAX_ROWS lines. A binary file fails here, at its first bad
 * byte, so that no error message echoes raw bytes to the terminal. */
static gboolean
check_text(const char *text, gsize len, const char *name, GError **error)
{
    const char *end = NULL;
    gboolean utf8 = g_utf8_validate_len(text, len, &end);
    guint line = 1, col = 1;
    guint64 n_lines = 1;
    for (const char *p = text; p < text + len; p++) {
        guchar c = (guchar)*p;
        if ((!utf8 && p == end) || (c < 0x20 && c != '\t' && c != '\r' && c != '\n') ||
            c == 0x7f) {
            g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                        "%s:%u:%u: byte 0x%02x is not text: a messages file is CSV text (UTF-8)",
                        name, line, col, c);
            return FALSE;
        }
        if (c == '\n') {
            line++;
            col = 1;
            if (++n_lines > RS_TRACE_MAX_ROWS + 1000) {
                g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                            "%s: more than %u lines, above the limit of %u messages "
                            "(RS_TRACE_MAX_ROWS)",
                            name, RS_TRACE_MAX_ROWS + 1000, RS_TRACE_MAX_ROWS);
                return FALSE;
            }
        } else if ((c & 0xc0) != 0x80) {
            col++;
        }
    }
    return TRUE;
}

static gboolean
parse_u64(const char *text, guint64 max, guint64 *out)
{
    return g_ascii_string_to_unsigned(text, 10, 0, max, out, NULL);
}

/* The state of reading one trace text, line by line. */
typedef struct {
    RsTrace *trace;
    const char *name;       /* the file name errors start with */
    gint col_index[N_COLS]; /* the field of each column, -1 when the header lacks it */
    guint n_fields;         /* fields per row, as many as the header has */
    gboolean have_header;
    guint64 total_bytes;    /* of the rows so far: at most 2^63 - 1, as one row's */
} TraceReader;

/* A '#' line: "# key: value" metadata before the header; other comments are skipped. */
static void
read_comment(TraceReader *rd, char *l)
{
    char *colon = strchr(l, ':');
    if (!rd->have_header && colon != NULL) {
        *colon = '\0';
        rs_trace_set_meta(rd->trace, g_strstrip(l + 1), g_strstrip(colon + 1));
    }
}

/* The header row: known column names, none twice, src, dst and bytes present. */
static gboolean
read_header(TraceReader *rd, char **fields, guint n, guint line, GError **error)
{
    for (guint f = 0; f < n; f++) {
        char *h = g_strstrip(fields[f]);
        gint found = -1;
        for (guint c = 0; c < N_COLS; c++)
            if (strcmp(h, column_names[c]) == 0)
                found = (gint)c;
        if (found < 0) {
            g_autofree char *quoted = quote_field(h);
            g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                        "%s:%u: unknown column \"%s\" (known: message, src, dst, bytes, "
                        "phase, start_s, end_s, route, depends_on)",
                        rd->name, line, quoted);
            return FALSE;
        }
        if (rd->col_index[found] >= 0) {
            g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                        "%s:%u: column \"%s\" appears twice", rd->name, line, h);
            return FALSE;
        }
        rd->col_index[found] = (gint)f;
    }
    for (guint c = COL_SRC; c <= COL_BYTES; c++) {
        if (rd->col_index[c] < 0) {
            g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                        "%s:%u: the header lacks the column \"%s\"", rd->name, line,
                        column_names[c]);
            return FALSE;
        }
    }
    rd->n_fields = n;
    rd->have_header = TRUE;
    return TRUE;
}

/* The integer columns of a row; an absent message column is the row index, phase 0. */
static gboolean
read_row_integers(const TraceReader *rd, const char *const *v, guint line, guint64 *out,
                  GError **error)
{
    /* Largest value of message, src, dst, bytes and phase. */
    static const guint64 max[COL_PHASE + 1] = {G_MAXUINT32, G_MAXUINT32, G_MAXUINT32, G_MAXINT64,
                                               G_MAXUINT32};
    out[COL_MESSAGE] = rs_trace_get_n_rows(rd->trace);
    out[COL_PHASE] = 0;
    for (guint c = COL_MESSAGE; c <= COL_PHASE; c++) {
        if (c == COL_MESSAGE && v[c] == NULL)
            continue;
        if (c == COL_PHASE && (v[c] == NULL || *v[c] == '\0'))
            continue;
        if (!parse_u64(v[c], max[c], &out[c])) {
            /* All digits: a number, too large for the column (bytes: 2^63 - 1; the others
             * 2^32 - 1). */
            gboolean digits = *v[c] != '\0';
            for (const char *p = v[c]; digits && *p; p++)
                digits = g_ascii_isdigit(*p);
            g_autofree char *what =
                digits ? g_strdup_printf("is above the largest, %" G_GUINT64_FORMAT, max[c])
                       : g_strdup("is not a non-negative integer");
            return parse_error(error, rd->name, line, column_names[c], v[c], what);
        }
    }
    return TRUE;
}

/* start_s and end_s: NAN when absent or empty, else finite seconds. */
static gboolean
read_row_times(const TraceReader *rd, const char *const *v, guint line, double *times,
               GError **error)
{
    for (guint k = 0; k < 2; k++) {
        const char *t = v[COL_START + k];
        times[k] = NAN;
        if (t == NULL || *t == '\0')
            continue;
        char *end = NULL;
        times[k] = g_ascii_strtod(t, &end);
        if (end == t || *end != '\0' || !isfinite(times[k]))
            return parse_error(error, rd->name, line, column_names[COL_START + k], t,
                               "is not a number of seconds");
        /* Seconds from the start of the refit (base/trace.h): none is before it. */
        if (times[k] < 0)
            return parse_error(error, rd->name, line, column_names[COL_START + k], t,
                               "is negative (times are seconds from the refit's start)");
    }
    /* A message cannot end before it starts (a measured trace once gave -20 us). */
    if (isfinite(times[0]) && isfinite(times[1]) && times[1] < times[0])
        return parse_error(error, rd->name, line, column_names[COL_START + 1],
                           v[COL_START + 1], "is before start_s");
    return TRUE;
}

/* depends_on: ';'-separated message indices, appended to @deps (guint32). */
static gboolean
read_row_depends(const TraceReader *rd, const char *text, guint line, GArray *deps, GError **error)
{
    if (text == NULL || *text == '\0')
        return TRUE;
    g_auto(GStrv) items = g_strsplit(text, ";", -1);
    for (guint k = 0; items[k] != NULL; k++) {
        guint64 d;
        if (!parse_u64(g_strstrip(items[k]), G_MAXUINT32, &d))
            return parse_error(error, rd->name, line, "depends_on", items[k],
                               "is not a message index");
        guint32 d32 = (guint32)d;
        g_array_append_val(deps, d32);
    }
    return TRUE;
}

/* One data row: as many fields as the header, each column parsed, the row added. */
static gboolean
read_row(TraceReader *rd, char **fields, guint n, guint line, GError **error)
{
    if (n != rd->n_fields) {
        g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                    "%s:%u: %u fields, the header has %u", rd->name, line, n, rd->n_fields);
        return FALSE;
    }
    const char *v[N_COLS];
    for (guint c = 0; c < N_COLS; c++)
        v[c] = rd->col_index[c] >= 0 ? g_strstrip(fields[rd->col_index[c]]) : NULL;
    guint64 ints[COL_PHASE + 1];
    double times[2];
    g_autoptr(GArray) deps = g_array_new(FALSE, FALSE, sizeof(guint32));
    if (!read_row_integers(rd, v, line, ints, error) ||
        !read_row_times(rd, v, line, times, error) ||
        !read_row_depends(rd, v[COL_DEPENDS], line, deps, error))
        return FALSE;
    /* Totals (bytes moved, per link) are summed in 64 bits: three rows of 2^63 - 1 bytes
     * printed 9.2e9 GB moved. */
    if (ints[COL_BYTES] > (guint64)G_MAXINT64 - rd->total_bytes) {
        g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                    "%s:%u: the messages' bytes add up to more than 2^63 - 1 "
                    "(9223372036854775807) with this row's %" G_GUINT64_FORMAT,
                    rd->name, line, ints[COL_BYTES]);
        return FALSE;
    }
    rd->total_bytes += ints[COL_BYTES];
    rs_trace_add(rd->trace, (guint32)ints[COL_MESSAGE], (guint32)ints[COL_SRC],
                 (guint32)ints[COL_DST], ints[COL_BYTES], (guint32)ints[COL_PHASE], times[0],
                 times[1], v[COL_ROUTE], (const guint32 *)deps->data, deps->len)
        ->line = line;
    return TRUE;
}

/* Every message is given once (a row per message: matching and dependencies go by id),
 * and every dependency names a message of the file. */
static gboolean
check_dependencies(const RsTrace *trace, const char *name, GError **error)
{
    g_autoptr(GHashTable) ids = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < rs_trace_get_n_rows(trace); i++) {
        const RsTraceRow *r = rs_trace_get_row(trace, i);
        gpointer first = g_hash_table_lookup(ids, GUINT_TO_POINTER(r->message + 1));
        if (first != NULL) {
            g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                        "%s:%u: message %u is given twice (first at line %u); a trace has one "
                        "row per message",
                        name, r->line, r->message, GPOINTER_TO_UINT(first));
            return FALSE;
        }
        g_hash_table_insert(ids, GUINT_TO_POINTER(r->message + 1), GUINT_TO_POINTER(r->line));
    }
    for (guint i = 0; i < rs_trace_get_n_rows(trace); i++) {
        const RsTraceRow *r = rs_trace_get_row(trace, i);
        for (guint k = 0; k < r->depends_on->len; k++) {
            guint32 d = g_array_index(r->depends_on, guint32, k);
            if (!g_hash_table_contains(ids, GUINT_TO_POINTER(d + 1))) {
                g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                            "%s:%u: message %u depends on message %u, which is not in the file",
                            name, r->line, r->message, d);
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* Reads @text, @len bytes (NUL bytes inside are found by check_text). */
static RsTrace *
read_text(const char *text, gsize len, const char *name, GError **error)
{
    if (!check_text(text, len, name, error))
        return NULL;
    /* A UTF-8 byte-order mark (spreadsheets write one) is not part of the first column's
     * name: it read as an unknown column "\ufeffsrc" that prints as "src". */
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        text += 3;
        len -= 3;
    }
    g_autoptr(RsTrace) trace = rs_trace_new();
    trace->name = g_strdup(name);
    TraceReader rd = {trace, name, {0}, 0, FALSE, 0};
    for (guint c = 0; c < N_COLS; c++)
        rd.col_index[c] = -1;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint li = 0; lines[li] != NULL; li++) {
        char *l = lines[li];
        gsize line_len = strlen(l);
        if (line_len > 0 && l[line_len - 1] == '\r')
            l[line_len - 1] = '\0';
        if (*l == '\0')
            continue;
        if (l[0] == '#') {
            read_comment(&rd, l);
            continue;
        }
        g_auto(GStrv) fields = g_strsplit(l, ",", -1);
        guint n = g_strv_length(fields);
        if (rd.have_header && rs_trace_get_n_rows(trace) >= RS_TRACE_MAX_ROWS) {
            g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                        "%s:%u: more than %u messages, the limit (RS_TRACE_MAX_ROWS)", name,
                        li + 1, RS_TRACE_MAX_ROWS);
            return NULL;
        }
        gboolean ok = rd.have_header ? read_row(&rd, fields, n, li + 1, error)
                                     : read_header(&rd, fields, n, li + 1, error);
        if (!ok)
            return NULL;
    }
    if (!rd.have_header) {
        g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE,
                    "%s: no header row (message,src,dst,bytes,…)", name);
        return NULL;
    }
    if (!check_dependencies(trace, name, error))
        return NULL;
    return g_steal_pointer(&trace);
}

RsTrace *
rs_trace_read_file(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;
    gsize len = 0;
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_IO, "%s: is a folder, not a file",
                    path);
        return NULL;
    }
    if (!g_file_get_contents(path, &text, &len, &local)) {
        g_set_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_IO, "%s", local->message);
        return NULL;
    }
    RsTrace *trace = read_text(text, len, path, error);
    if (trace == NULL)
        return NULL;
    /* The sidecar's metadata, when there is one (a file written before it had none: its
     * "# key: value" lines were read above). */
    g_autofree char *meta_path = rs_trace_get_meta_path(path);
    g_autoptr(GKeyFile) kf = g_key_file_new();
    /* Only a regular file: a FIFO of that name would block the read for ever. */
    if (g_file_test(meta_path, G_FILE_TEST_IS_REGULAR) &&
        g_key_file_load_from_file(kf, meta_path, G_KEY_FILE_NONE, NULL)) {
        g_auto(GStrv) keys = g_key_file_get_keys(kf, META_GROUP, NULL, NULL);
        for (guint i = 0; keys != NULL && keys[i] != NULL; i++) {
            g_autofree char *v = g_key_file_get_string(kf, META_GROUP, keys[i], NULL);
            if (v != NULL)
                rs_trace_set_meta(trace, keys[i], v);
        }
    }
    return trace;
}

RsTrace *
rs_trace_read_string(const char *text, const char *name, GError **error)
{
    return read_text(text, strlen(text), name, error);
}

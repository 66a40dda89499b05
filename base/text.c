/* text.c — see text.h. */
#include "base/text.h"

#include <math.h>
#include <string.h>

static gboolean
is_control(guchar c)
{
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
}

gboolean
rs_text_find_bad(const char *text, gsize len, gsize *offset, guint *line, guint *column,
                 guchar *byte, gboolean *bad_utf8)
{
    const char *end = NULL;
    gboolean utf8 = g_utf8_validate_len(text, len, &end);
    guint l = 1, col = 1;
    for (const char *p = text; p < text + len; p++) {
        guchar c = (guchar)*p;
        gboolean bad_here = !utf8 && p == end;
        if (bad_here || is_control(c)) {
            *offset = (gsize)(p - text);
            *line = l;
            *column = col;
            *byte = c;
            *bad_utf8 = !is_control(c);
            return TRUE;
        }
        if (c == '\n') {
            l++;
            col = 1;
        } else if ((c & 0xc0) != 0x80) {
            col++;
        }
    }
    return FALSE;
}

gboolean
rs_text_check(const char *text, gsize len, const char *name, const char *kind, GQuark domain,
              gint code, GError **error)
{
    gsize offset;
    guint line, column;
    guchar byte;
    gboolean bad_utf8;
    if (!rs_text_find_bad(text, len, &offset, &line, &column, &byte, &bad_utf8))
        return TRUE;
    g_autofree char *safe_name = rs_text_escape(name);
    g_set_error(error, domain, code,
                "%s:%u:%u: byte offset %" G_GSIZE_FORMAT ": byte 0x%02x is not %s; a %s is "
                "UTF-8 text",
                safe_name, line, column, offset, byte,
                bad_utf8 ? "valid UTF-8" : "text (a control character)", kind);
    return FALSE;
}

char *
rs_text_escape(const char *text)
{
    if (text == NULL)
        return g_strdup("");
    GString *out = g_string_sized_new(strlen(text));
    const char *p = text;
    while (*p != '\0') {
        guchar c = (guchar)*p;
        if (c < 0x80) {
            if (is_control(c) && c != '\r')
                g_string_append_printf(out, "\\x%02x", c);
            else if (c == '\r')
                g_string_append(out, "\\x0d");
            else
                g_string_append_c(out, (char)c);
            p++;
            continue;
        }
        gunichar u = g_utf8_get_char_validated(p, -1);
        if (u == (gunichar)-1 || u == (gunichar)-2) {
            g_string_append_printf(out, "\\x%02x", c);
            p++;
            continue;
        }
        if (u >= 0x80 && u <= 0x9f)
            g_string_append_printf(out, "\\u%04x", u);
        else
            g_string_append_len(out, p, g_utf8_next_char(p) - p);
        p = g_utf8_next_char(p);
    }
    return g_string_free(out, FALSE);
}

/* One open array or object of rs_json_scan(). */
typedef struct {
    char *path;
    gboolean object;
    gboolean expect_key; /* object: the next string is a key */
    guint index;         /* array: the element being read */
    GHashTable *keys;    /* object: key → first position (line << 32 | column), lazily */
} JsonFrame;

/* The path of the value that starts now inside @top (NULL: the top level). */
static char *
json_value_path(const JsonFrame *top, const char *pending_key)
{
    if (top == NULL)
        return g_strdup("");
    if (top->object)
        return g_strdup(pending_key ? pending_key : top->path);
    return *top->path ? g_strdup_printf("%s.%u", top->path, top->index)
                      : g_strdup_printf("%u", top->index);
}

static gboolean
json_number_in_range(const char *token, RsJsonScanProblem *problem)
{
    gboolean integer = strpbrk(token, ".eE") == NULL;
    if (integer) {
        gint64 v;
        if (g_ascii_string_to_signed(token, 10, G_MININT64, G_MAXINT64, &v, NULL))
            return TRUE;
        /* Only out of range, not malformed (the parser names a malformed number). */
        const char *digits = token[0] == '-' ? token + 1 : token;
        if (*digits == '\0' || strspn(digits, "0123456789") != strlen(digits))
            return TRUE;
        *problem = RS_JSON_SCAN_INTEGER;
        return FALSE;
    }
    char *end = NULL;
    double d = g_ascii_strtod(token, &end);
    if (end == NULL || *end != '\0' || isfinite(d))
        return TRUE;
    *problem = RS_JSON_SCAN_NUMBER;
    return FALSE;
}

gboolean
rs_json_scan(const char *text, gsize len, RsJsonKeyFunc on_key, gpointer user_data,
             RsJsonScanResult *result)
{
    memset(result, 0, sizeof *result);
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(JsonFrame));
    char *pending_key = NULL; /* the path of the key whose value comes next */
    guint line = 1, col = 1;
    gboolean ok = TRUE;
    gsize i = 0;
    while (ok && i < len) {
        char ch = text[i];
        JsonFrame *top = stack->len ? &g_array_index(stack, JsonFrame, stack->len - 1) : NULL;
        guint start_line = line, start_col = col;
        gsize start = i;
        if (ch == '"') {
            GString *s = g_string_new(NULL);
            for (i++, col++; i < len && text[i] != '"';) {
                gsize step = text[i] == '\\' && i + 1 < len ? 2 : 1;
                g_string_append_len(s, text + i, (gssize)step);
                for (gsize k = 0; k < step; k++)
                    if (((guchar)text[i + k] & 0xc0) != 0x80)
                        col++;
                i += step;
            }
            if (i < len) {
                i++;
                col++;
            }
            if (top != NULL && top->object && top->expect_key) {
                char *path =
                    *top->path ? g_strdup_printf("%s.%s", top->path, s->str) : g_strdup(s->str);
                if (top->keys == NULL)
                    top->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
                gpointer first = NULL;
                if (g_hash_table_lookup_extended(top->keys, s->str, NULL, &first)) {
                    guint64 at = (guint64)GPOINTER_TO_SIZE(first);
                    result->problem = RS_JSON_SCAN_DUPLICATE;
                    result->first_line = (guint)(at >> 32);
                    result->first_column = (guint)(at & 0xffffffffu);
                    result->path = path;
                    result->offset = start;
                    result->line = start_line;
                    result->column = start_col;
                    ok = FALSE;
                } else {
                    guint64 at = (guint64)start_line << 32 | start_col;
                    g_hash_table_insert(top->keys, g_strdup(s->str),
                                        GSIZE_TO_POINTER((gsize)at));
                    if (on_key != NULL)
                        on_key(path, start_line, start_col, start, user_data);
                    g_free(pending_key);
                    pending_key = path;
                    top->expect_key = FALSE;
                }
            }
            g_string_free(s, TRUE);
            continue;
        }
        if (ch == '-' || (ch >= '0' && ch <= '9')) {
            gsize end = i;
            while (end < len && strchr("0123456789+-.eE", text[end]) != NULL && text[end] != '\0')
                end++;
            g_autofree char *token = g_strndup(text + i, end - i);
            RsJsonScanProblem problem;
            if (!json_number_in_range(token, &problem)) {
                result->problem = problem;
                result->path = json_value_path(top, pending_key);
                result->token = g_steal_pointer(&token);
                result->offset = start;
                result->line = start_line;
                result->column = start_col;
                ok = FALSE;
            }
            col += (guint)(end - i);
            i = end;
            continue;
        }
        if (ch == '{' || ch == '[') {
            if (stack->len >= RS_JSON_MAX_DEPTH) {
                result->problem = RS_JSON_SCAN_DEPTH;
                result->path = json_value_path(top, pending_key);
                result->offset = start;
                result->line = start_line;
                result->column = start_col;
                ok = FALSE;
                continue;
            }
            JsonFrame f = {json_value_path(top, pending_key), ch == '{', ch == '{', 0, NULL};
            g_array_append_val(stack, f);
        } else if ((ch == '}' || ch == ']') && top != NULL) {
            g_free(top->path);
            if (top->keys != NULL)
                g_hash_table_destroy(top->keys);
            g_array_set_size(stack, stack->len - 1);
        } else if (ch == ',' && top != NULL) {
            if (top->object)
                top->expect_key = TRUE;
            else
                top->index++;
        }
        if (ch == '\n') {
            line++;
            col = 1;
        } else if (((guchar)ch & 0xc0) != 0x80) {
            col++;
        }
        i++;
    }
    for (guint k = 0; k < stack->len; k++) {
        JsonFrame *f = &g_array_index(stack, JsonFrame, k);
        g_free(f->path);
        if (f->keys != NULL)
            g_hash_table_destroy(f->keys);
    }
    g_array_free(stack, TRUE);
    g_free(pending_key);
    return ok;
}

void
rs_json_scan_result_clear(RsJsonScanResult *result)
{
    g_clear_pointer(&result->path, g_free);
    g_clear_pointer(&result->token, g_free);
    result->problem = RS_JSON_SCAN_OK;
}

char *
rs_json_scan_describe(const RsJsonScanResult *result, const char *kind)
{
    g_autofree char *path = rs_text_escape(result->path ? result->path : "");
    g_autofree char *token = rs_text_escape(result->token ? result->token : "");
    const char *sep = *path ? ": " : "";
    switch (result->problem) {
    case RS_JSON_SCAN_DEPTH:
        return g_strdup_printf("the %s nests deeper than %d levels", kind, RS_JSON_MAX_DEPTH);
    case RS_JSON_SCAN_INTEGER:
        return g_strdup_printf("%s%sthe integer %s is outside the 64-bit range a JSON reader "
                               "keeps (-2^63 to 2^63 - 1)",
                               path, sep, token);
    case RS_JSON_SCAN_NUMBER:
        return g_strdup_printf("%s%sthe number %s is beyond the range of a double", path, sep,
                               token);
    case RS_JSON_SCAN_DUPLICATE:
        return g_strdup_printf("%s: field given twice (first at line %u, column %u)", path,
                               result->first_line, result->first_column);
    case RS_JSON_SCAN_OK:
    default:
        return g_strdup("no problem");
    }
}

gboolean
rs_json_check(const char *text, gsize len, const char *name, const char *kind, GQuark domain,
              gint code, GError **error)
{
    RsJsonScanResult r;
    gboolean ok = rs_json_scan(text, len, NULL, NULL, &r);
    if (!ok) {
        g_autofree char *what = rs_json_scan_describe(&r, kind);
        g_autofree char *safe_name = rs_text_escape(name);
        g_set_error(error, domain, code, "%s:%u:%u: %s", safe_name, r.line, r.column, what);
    }
    rs_json_scan_result_clear(&r);
    return ok;
}

guint
rs_text_edit_distance(const char *a, const char *b, guint cap)
{
    gsize n = strlen(a), m = strlen(b);
    if ((n > m ? n - m : m - n) > cap)
        return cap + 1;
    g_autofree guint *row = g_new(guint, m + 1);
    for (gsize j = 0; j <= m; j++)
        row[j] = (guint)j;
    for (gsize i = 1; i <= n; i++) {
        guint diag = row[0], low = (guint)i;
        row[0] = (guint)i;
        for (gsize j = 1; j <= m; j++) {
            guint up = row[j];
            row[j] = MIN(MIN(up, row[j - 1]) + 1, diag + (a[i - 1] != b[j - 1]));
            diag = up;
            low = MIN(low, row[j]);
        }
        if (low > cap)
            return cap + 1;
    }
    return MIN(row[m], cap + 1);
}

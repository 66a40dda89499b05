/* text.c — see text.h. */
#include "base/text.h"

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

gboolean
rs_json_check_depth(const char *text, gsize len, const char *name, const char *kind,
                    GQuark domain, gint code, GError **error)
{
    guint depth = 0, line = 1;
    gsize line_start = 0;
    for (gsize i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\n') {
            line++;
            line_start = i + 1;
        } else if (c == '"') {
            for (i++; i < len && text[i] != '"'; i++)
                if (text[i] == '\\')
                    i++;
        } else if (c == '[' || c == '{') {
            if (++depth > RS_JSON_MAX_DEPTH) {
                g_set_error(error, domain, code, "%s:%u:%" G_GSIZE_FORMAT ": the %s nests "
                            "deeper than %d levels", name, line, i - line_start + 1, kind,
                            RS_JSON_MAX_DEPTH);
                return FALSE;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return TRUE;
}

/* table.c — the one writer of every report table: cells held with their raw values, and
 * rendered per column kind as aligned text (decimal GB and GB/s, units in the header row),
 * CSV (raw bytes and seconds) or JSON (raw values). */
#include "analysis/table.h"

#include "analysis/report.h"

#include <math.h>
#include <string.h>

typedef enum {
    CELL_UNSET,
    CELL_NULL,
    CELL_INT,
    CELL_UINT,
    CELL_DOUBLE,
    CELL_BOOL,
    CELL_TEXT,
    CELL_JSON,
} CellType;

typedef struct {
    CellType type;
    union {
        gint64 i;
        guint64 u;
        double d;
        gboolean b;
        char *text;
        JsonNode *node;
    };
} Cell;

struct _RsTable {
    char *name;
    const RsColumn *columns;
    guint n_columns;
    gboolean *hidden; /* n_columns: rs_table_hide_column() */
    GArray *cells; /* Cell, row-major, n_columns per row */
};

static void
cell_clear(gpointer p)
{
    Cell *c = p;
    if (c->type == CELL_TEXT)
        g_free(c->text);
    else if (c->type == CELL_JSON)
        json_node_unref(c->node);
    c->type = CELL_UNSET;
}

RsTable *
rs_table_new(const char *name, const RsColumn *columns, guint n_columns)
{
    RsTable *t = g_new0(RsTable, 1);
    t->name = g_strdup(name);
    t->columns = columns;
    t->n_columns = n_columns;
    t->hidden = g_new0(gboolean, MAX(n_columns, 1));
    t->cells = g_array_new(FALSE, TRUE, sizeof(Cell));
    g_array_set_clear_func(t->cells, cell_clear);
    return t;
}

void
rs_table_free(RsTable *t)
{
    if (t == NULL)
        return;
    g_array_unref(t->cells);
    g_free(t->hidden);
    g_free(t->name);
    g_free(t);
}

guint
rs_table_get_n_rows(const RsTable *t)
{
    return t->n_columns ? t->cells->len / t->n_columns : 0;
}

void
rs_table_hide_column(RsTable *t, guint col)
{
    g_return_if_fail(col < t->n_columns);
    t->hidden[col] = TRUE;
}

void
rs_table_add_row(RsTable *t)
{
    g_array_set_size(t->cells, t->cells->len + t->n_columns);
}

static Cell *
last_cell(RsTable *t, guint col)
{
    g_return_val_if_fail(col < t->n_columns && t->cells->len > 0, NULL);
    Cell *c = &g_array_index(t->cells, Cell, t->cells->len - t->n_columns + col);
    cell_clear(c);
    return c;
}

static const Cell *
get_cell(const RsTable *t, guint row, guint col)
{
    return &g_array_index(t->cells, Cell, (gsize)row * t->n_columns + col);
}

void
rs_table_set_int(RsTable *t, guint col, gint64 value)
{
    Cell *c = last_cell(t, col);
    c->type = CELL_INT;
    c->i = value;
}

void
rs_table_set_uint(RsTable *t, guint col, guint64 value)
{
    Cell *c = last_cell(t, col);
    c->type = CELL_UINT;
    c->u = value;
}

void
rs_table_set_double(RsTable *t, guint col, double value)
{
    Cell *c = last_cell(t, col);
    c->type = CELL_DOUBLE;
    c->d = value;
}

void
rs_table_set_bool(RsTable *t, guint col, gboolean value)
{
    Cell *c = last_cell(t, col);
    c->type = CELL_BOOL;
    c->b = value;
}

void
rs_table_take_text(RsTable *t, guint col, char *value)
{
    Cell *c = last_cell(t, col);
    c->type = value ? CELL_TEXT : CELL_NULL;
    c->text = value;
}

void
rs_table_set_text(RsTable *t, guint col, const char *value)
{
    rs_table_take_text(t, col, g_strdup(value));
}

void
rs_table_take_json(RsTable *t, guint col, JsonNode *node)
{
    Cell *c = last_cell(t, col);
    c->type = CELL_JSON;
    c->node = node;
}

void
rs_table_set_null(RsTable *t, guint col)
{
    last_cell(t, col)->type = CELL_NULL;
}

/* --- the values of a cell --- */

static double
cell_double(const Cell *c)
{
    switch (c->type) {
    case CELL_INT:
        return (double)c->i;
    case CELL_UINT:
        return (double)c->u;
    case CELL_DOUBLE:
        return c->d;
    case CELL_BOOL:
        return c->b ? 1.0 : 0.0;
    default:
        return 0.0;
    }
}

static gboolean
cell_is_integer(const Cell *c)
{
    return c->type == CELL_INT || c->type == CELL_UINT || c->type == CELL_BOOL;
}

/* The integer of a cell as text: set as an integer, or a double rounded. */
static char *
cell_integer_text(const Cell *c)
{
    if (c->type == CELL_INT)
        return g_strdup_printf("%" G_GINT64_FORMAT, c->i);
    if (c->type == CELL_UINT)
        return g_strdup_printf("%" G_GUINT64_FORMAT, c->u);
    if (c->type == CELL_BOOL)
        return g_strdup(c->b ? "1" : "0");
    return g_strdup_printf("%.0f", c->d);
}

static gboolean
shown_in(const RsTable *t, guint c, RsFormat format)
{
    const RsColumn *col = &t->columns[c];
    if (t->hidden[c])
        return FALSE;
    if (col->kind == RS_COLUMN_JSON && format != RS_FORMAT_JSON)
        return FALSE;
    switch (format) {
    case RS_FORMAT_TABLE:
        return !(col->flags & RS_COLUMN_NO_TABLE);
    case RS_FORMAT_CSV:
        return !(col->flags & (RS_COLUMN_TABLE_ONLY | RS_COLUMN_NO_CSV));
    case RS_FORMAT_JSON:
        return !(col->flags & (RS_COLUMN_TABLE_ONLY | RS_COLUMN_NO_JSON));
    }
    return FALSE;
}

/* --- text --- */

static const char *
kind_unit(RsColumnKind kind)
{
    switch (kind) {
    case RS_COLUMN_GB:
        return "GB";
    case RS_COLUMN_RATE:
        return "GB/s";
    case RS_COLUMN_SECONDS:
        return "s";
    case RS_COLUMN_MICROSECONDS:
        return "us";
    default:
        return NULL;
    }
}

static char *
header_text(const RsColumn *col)
{
    const char *label = col->label ? col->label : col->name;
    const char *unit = kind_unit(col->kind);
    if (unit == NULL || (col->flags & RS_COLUMN_NO_UNIT))
        return g_strdup(label);
    return g_strdup_printf("%s%s%s", label, *label ? " " : "", unit);
}

static char *
seconds_text(const RsColumn *col, double s)
{
    if ((col->flags & RS_COLUMN_SIGNIFICANT) && s != 0.0 && fabs(s) < 0.1)
        return g_strdup_printf("%.*g", col->digits, s);
    return g_strdup_printf("%.*f", col->digits, s);
}

static char *
text_cell(const RsColumn *col, const Cell *c)
{
    if (c->type == CELL_UNSET)
        return g_strdup("");
    if (c->type == CELL_NULL)
        return g_strdup("-");
    if (c->type == CELL_TEXT)
        return g_strdup(c->text);
    if (c->type == CELL_JSON)
        return g_strdup("");
    double v = cell_double(c);
    switch (col->kind) {
    case RS_COLUMN_INTEGER:
    case RS_COLUMN_BYTES:
        if ((col->flags & RS_COLUMN_THOUSANDS) && c->type == CELL_UINT)
            return rs_format_thousands(c->u);
        if ((col->flags & RS_COLUMN_THOUSANDS) && c->type == CELL_INT && c->i >= 0)
            return rs_format_thousands((guint64)c->i);
        return cell_integer_text(c);
    case RS_COLUMN_GB:
    case RS_COLUMN_RATE:
        return g_strdup_printf("%.*f", col->digits, v / 1e9);
    case RS_COLUMN_SECONDS:
        return seconds_text(col, v);
    case RS_COLUMN_MICROSECONDS:
        return g_strdup_printf("%.*f", col->digits, v * 1e6);
    case RS_COLUMN_RATIO:
        return g_strdup_printf("%.*f%%", col->digits, 100.0 * v);
    case RS_COLUMN_BOOL:
        return g_strdup(v != 0.0 ? "yes" : "no");
    case RS_COLUMN_REAL:
    case RS_COLUMN_TEXT:
    case RS_COLUMN_JSON:
        break;
    }
    return g_strdup_printf("%.*f", col->digits, v);
}

/* Appends one line of @cells (n of them) padded to @width. */
static void
append_text_line(GString *out, char **cells, const guint *width, const gboolean *left, guint n)
{
    for (guint i = 0; i < n; i++) {
        guint pad = width[i] - (guint)g_utf8_strlen(cells[i], -1);
        if (i > 0)
            g_string_append(out, "  ");
        if (left[i]) {
            g_string_append(out, cells[i]);
            if (i + 1 < n)
                g_string_append_printf(out, "%*s", pad, "");
        } else {
            g_string_append_printf(out, "%*s%s", pad, "", cells[i]);
        }
    }
    /* Empty cells at the end of a line leave no trailing spaces. */
    while (out->len > 0 && out->str[out->len - 1] == ' ')
        g_string_truncate(out, out->len - 1);
    g_string_append_c(out, '\n');
}

void
rs_table_append_text(const RsTable *t, GString *out)
{
    guint n_rows = rs_table_get_n_rows(t);
    g_autofree guint *cols = g_new(guint, MAX(t->n_columns, 1));
    guint n = 0;
    for (guint c = 0; c < t->n_columns; c++)
        if (shown_in(t, c, RS_FORMAT_TABLE))
            cols[n++] = c;
    /* Row 0 is the header. */
    g_autoptr(GPtrArray) text = g_ptr_array_new_with_free_func(g_free);
    g_autofree guint *width = g_new0(guint, MAX(n, 1));
    g_autofree gboolean *left = g_new0(gboolean, MAX(n, 1));
    for (guint r = 0; r <= n_rows; r++) {
        for (guint i = 0; i < n; i++) {
            const RsColumn *col = &t->columns[cols[i]];
            char *s = r == 0 ? header_text(col) : text_cell(col, get_cell(t, r - 1, cols[i]));
            width[i] = MAX(width[i], (guint)g_utf8_strlen(s, -1));
            g_ptr_array_add(text, s);
        }
    }
    for (guint i = 0; i < n; i++)
        left[i] = i == 0 || (t->columns[cols[i]].flags & RS_COLUMN_LEFT);
    for (guint r = 0; r <= n_rows; r++)
        append_text_line(out, (char **)&text->pdata[(gsize)r * n], width, left, n);
}

/* --- CSV --- */

static void
append_csv_text(GString *out, const char *text)
{
    if (strpbrk(text, ",\"\n\r") == NULL) {
        g_string_append(out, text);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, *p);
    }
    g_string_append_c(out, '"');
}

static void
append_csv_cell(GString *out, const RsColumn *col, const Cell *c)
{
    if (c->type == CELL_UNSET || c->type == CELL_NULL || c->type == CELL_JSON)
        return;
    if (c->type == CELL_TEXT) {
        append_csv_text(out, c->text);
        return;
    }
    if (col->kind == RS_COLUMN_BOOL) {
        gboolean v = cell_double(c) != 0.0;
        if (col->flags & RS_COLUMN_CSV_01)
            g_string_append(out, v ? "1" : "0");
        else
            g_string_append(out, v ? "true" : "false");
    } else if (col->kind == RS_COLUMN_RATIO) {
        g_string_append_printf(out, "%.6f", cell_double(c));
    } else if (col->kind == RS_COLUMN_REAL && (col->flags & RS_COLUMN_CSV_FIXED)) {
        g_string_append_printf(out, "%.*f", col->digits, cell_double(c));
    } else if (cell_is_integer(c)) {
        g_autofree char *text = cell_integer_text(c);
        g_string_append(out, text);
    } else {
        g_string_append_printf(out, "%.9g", cell_double(c));
    }
}

void
rs_table_append_csv(const RsTable *t, GString *out)
{
    gboolean first = TRUE;
    for (guint c = 0; c < t->n_columns; c++) {
        if (!shown_in(t, c, RS_FORMAT_CSV))
            continue;
        g_string_append(out, first ? "" : ",");
        append_csv_text(out, t->columns[c].name);
        first = FALSE;
    }
    g_string_append_c(out, '\n');
    for (guint r = 0; r < rs_table_get_n_rows(t); r++) {
        first = TRUE;
        for (guint c = 0; c < t->n_columns; c++) {
            if (!shown_in(t, c, RS_FORMAT_CSV))
                continue;
            g_string_append(out, first ? "" : ",");
            append_csv_cell(out, &t->columns[c], get_cell(t, r, c));
            first = FALSE;
        }
        g_string_append_c(out, '\n');
    }
}

/* --- JSON --- */

static void
add_json_value(JsonBuilder *b, const RsColumn *col, const Cell *c)
{
    switch (c->type) {
    case CELL_UNSET:
    case CELL_NULL:
        json_builder_add_null_value(b);
        return;
    case CELL_TEXT:
        json_builder_add_string_value(b, c->text);
        return;
    case CELL_JSON:
        json_builder_add_value(b, json_node_ref(c->node));
        return;
    default:
        break;
    }
    if (col->kind == RS_COLUMN_BOOL) {
        json_builder_add_boolean_value(b, cell_double(c) != 0.0);
    } else if (c->type == CELL_INT) {
        json_builder_add_int_value(b, c->i);
    } else if (c->type == CELL_UINT) {
        json_builder_add_int_value(b, (gint64)c->u);
    } else if (c->type == CELL_BOOL) {
        json_builder_add_boolean_value(b, c->b);
    } else {
        json_builder_add_double_value(b, c->d);
    }
}

void
rs_table_add_json_members(const RsTable *t, guint row, JsonBuilder *b)
{
    for (guint c = 0; c < t->n_columns; c++) {
        const Cell *cell = get_cell(t, row, c);
        if (!shown_in(t, c, RS_FORMAT_JSON) || cell->type == CELL_UNSET)
            continue;
        json_builder_set_member_name(b, t->columns[c].name);
        add_json_value(b, &t->columns[c], cell);
    }
}

void
rs_table_add_json_array(const RsTable *t, JsonBuilder *b)
{
    json_builder_begin_array(b);
    for (guint r = 0; r < rs_table_get_n_rows(t); r++) {
        json_builder_begin_object(b);
        rs_table_add_json_members(t, r, b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

void
rs_table_append(const RsTable *t, RsFormat format, GString *out)
{
    switch (format) {
    case RS_FORMAT_TABLE:
        rs_table_append_text(t, out);
        break;
    case RS_FORMAT_CSV:
        rs_table_append_csv(t, out);
        break;
    case RS_FORMAT_JSON: {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, t->name);
        rs_table_add_json_array(t, b);
        json_builder_end_object(b);
        rs_report_json_append(b, out);
        break;
    }
    }
}

/* The text table's header and cells, for the HTML and Markdown forms. */
static GPtrArray *
text_cells(const RsTable *t, guint **cols_out, guint *n_out)
{
    guint n_rows = rs_table_get_n_rows(t);
    guint *cols = g_new(guint, MAX(t->n_columns, 1));
    guint n = 0;
    for (guint c = 0; c < t->n_columns; c++)
        if (shown_in(t, c, RS_FORMAT_TABLE))
            cols[n++] = c;
    GPtrArray *text = g_ptr_array_new_with_free_func(g_free);
    for (guint r = 0; r <= n_rows; r++)
        for (guint i = 0; i < n; i++) {
            const RsColumn *col = &t->columns[cols[i]];
            g_ptr_array_add(text, r == 0 ? header_text(col)
                                         : text_cell(col, get_cell(t, r - 1, cols[i])));
        }
    *cols_out = cols;
    *n_out = n;
    return text;
}

void
rs_table_append_html(const RsTable *t, GString *out)
{
    g_autofree guint *cols = NULL;
    guint n;
    g_autoptr(GPtrArray) text = text_cells(t, &cols, &n);
    guint n_rows = rs_table_get_n_rows(t);
    g_string_append(out, "<table>\n<thead><tr>");
    for (guint r = 0; r <= n_rows; r++) {
        if (r == 1)
            g_string_append(out, "</tr></thead>\n<tbody>\n<tr>");
        else if (r > 1)
            g_string_append(out, "<tr>");
        for (guint i = 0; i < n; i++) {
            gboolean left = i == 0 || (t->columns[cols[i]].flags & RS_COLUMN_LEFT);
            g_autofree char *esc = g_markup_escape_text(text->pdata[(gsize)r * n + i], -1);
            g_string_append_printf(out, "<%s%s>%s</%s>", r == 0 ? "th" : "td",
                                   left ? "" : " class=\"num\"", esc, r == 0 ? "th" : "td");
        }
        g_string_append(out, r == 0 && n_rows == 0 ? "</tr></thead>\n<tbody>\n" : "</tr>\n");
    }
    g_string_append(out, "</tbody>\n</table>\n");
}

void
rs_table_append_markdown(const RsTable *t, GString *out)
{
    g_autofree guint *cols = NULL;
    guint n;
    g_autoptr(GPtrArray) text = text_cells(t, &cols, &n);
    guint n_rows = rs_table_get_n_rows(t);
    for (guint r = 0; r <= n_rows; r++) {
        g_string_append(out, "|");
        for (guint i = 0; i < n; i++) {
            g_autofree char *cell = g_strdup(text->pdata[(gsize)r * n + i]);
            g_strdelimit(cell, "|", '/');
            g_string_append_printf(out, " %s |", cell);
        }
        g_string_append_c(out, '\n');
        if (r == 0) {
            g_string_append(out, "|");
            for (guint i = 0; i < n; i++) {
                gboolean left = i == 0 || (t->columns[cols[i]].flags & RS_COLUMN_LEFT);
                g_string_append(out, left ? " --- |" : " ---: |");
            }
            g_string_append_c(out, '\n');
        }
    }
}

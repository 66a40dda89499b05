/* table.h — one description per report: a table of typed columns (a name, a text label, a
 * kind that fixes the unit) and rows of values, rendered by one writer as an aligned text
 * table, as CSV or as JSON.
 *
 * The three forms of a column come from its kind:
 *   kind      text table                      CSV                JSON
 *   INTEGER   digits (1,234 with THOUSANDS)   digits             integer
 *   BYTES     digits (raw bytes)              digits             integer
 *   GB        bytes / 10^9, "GB" in header    raw bytes          integer (bytes)
 *   RATE      bytes/s / 10^9, "GB/s"          %.9g bytes/s       number (bytes/s)
 *   SECONDS   @digits decimals, "s"           %.9g seconds       number (seconds)
 *   MICROSECONDS  seconds x 10^6, @digits     %.9g seconds       number (seconds)
 *             decimals, "us"
 *   RATIO     percent, "98%"                  %.6f fraction      number (fraction)
 *   REAL      @digits decimals                %.9g (@digits      number
 *                                             decimals with CSV_FIXED)
 *   BOOL      yes / no                        true / false       boolean
 *   TEXT      as given                        as given (quoted   string
 *                                             when it holds , " or a newline)
 *   JSON      -                               -                  the node (nested data)
 * A cell left unset is empty in the text table and CSV and has no member in JSON; a cell
 * set to null prints "-" in the table, is empty in CSV and null in JSON. CSV has one header
 * row of the column names and no comment lines, so pandas.read_csv() loads it as is.
 * Where CSV and JSON name the same figure differently (CSV "link", JSON "name"), or the
 * text table shows a column elsewhere than CSV, the report has two columns, one per form.
 *
 * A report whose text form has lines that are not a table (a header naming the work above
 * the table, a bound or bottleneck line below it) writes those lines itself around
 * rs_table_append_text(); its CSV and JSON come from the table alone, with the document's
 * other members added by the report around rs_table_add_json_array().
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The forms of every report (--format). */
typedef enum {
    RS_FORMAT_TABLE,
    RS_FORMAT_CSV,
    RS_FORMAT_JSON,
} RsFormat;

typedef enum {
    RS_COLUMN_INTEGER,
    RS_COLUMN_BYTES,
    RS_COLUMN_GB,
    RS_COLUMN_RATE,
    RS_COLUMN_SECONDS,
    RS_COLUMN_MICROSECONDS,
    RS_COLUMN_RATIO,
    RS_COLUMN_REAL,
    RS_COLUMN_BOOL,
    RS_COLUMN_TEXT,
    RS_COLUMN_JSON,
} RsColumnKind;

typedef enum {
    RS_COLUMN_TABLE_ONLY = 1 << 0,  /* only in the text table */
    RS_COLUMN_NO_TABLE = 1 << 1,    /* in CSV and JSON, not in the text table */
    RS_COLUMN_NO_CSV = 1 << 2,      /* not in CSV */
    RS_COLUMN_NO_JSON = 1 << 3,     /* not in JSON */
    RS_COLUMN_THOUSANDS = 1 << 4,   /* INTEGER, BYTES: 1,234,567 in the text table */
    RS_COLUMN_SIGNIFICANT = 1 << 5, /* SECONDS: @digits significant digits below 0.1 s (so a
                                     * small time does not print as 0.000) */
    RS_COLUMN_LEFT = 1 << 6,        /* left-aligned in the text table (the first column
                                     * always is; the others are right-aligned) */
    RS_COLUMN_CSV_01 = 1 << 7,      /* BOOL: 1 / 0 in CSV */
    RS_COLUMN_NO_UNIT = 1 << 8,     /* the text header is the label alone (the unit is
                                     * stated above the table) */
    RS_COLUMN_CSV_FIXED = 1 << 9,   /* REAL: @digits decimals in CSV too ("0.9800") */
    RS_COLUMN_JSON_ONLY = RS_COLUMN_NO_TABLE | RS_COLUMN_NO_CSV, /* a JSON member only */
    RS_COLUMN_CSV_ONLY = RS_COLUMN_NO_TABLE | RS_COLUMN_NO_JSON,  /* a CSV column only */
} RsColumnFlags;

/* One column of a report. */
typedef struct {
    const char *name;  /* CSV header and JSON member: "bytes_moved" */
    const char *label; /* (nullable) text header before the kind's unit ("moved" gives
                        * "moved GB"); NULL: @name */
    RsColumnKind kind;
    int digits;        /* text table decimals: GB, RATE, SECONDS, MICROSECONDS, REAL, RATIO
                        * (of the percent) */
    guint flags;       /* RsColumnFlags */
} RsColumn;

typedef struct _RsTable RsTable;

/**
 * rs_table_new:
 * @name: the JSON member that holds the rows when the table is a document of its own
 *   ("models"); also its name in messages
 * @columns: (array length=n_columns) (transfer none): the columns, in order; must outlive
 *   the table (a static array)
 *
 * Returns: (transfer full): a table with no rows.
 */
RsTable *rs_table_new(const char *name, const RsColumn *columns, guint n_columns);

void rs_table_free(RsTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsTable, rs_table_free)

/** rs_table_get_n_rows: Returns: the number of rows. */
guint rs_table_get_n_rows(const RsTable *table);

/**
 * rs_table_hide_column:
 * @col: < n_columns
 *
 * Leaves column @col out of every form (a column only some runs have, such as the
 * first-order time next to a flow-level one).
 */
void rs_table_hide_column(RsTable *table, guint col);

/** rs_table_add_row: appends a row of unset cells; the setters below fill the last row. */
void rs_table_add_row(RsTable *table);

/* Setters of the last row's cell in column @col (< n_columns; a row must exist). Doubles
 * carry the raw unit of the kind (bytes, seconds, bytes per second, a fraction). */
void rs_table_set_int(RsTable *table, guint col, gint64 value);
void rs_table_set_uint(RsTable *table, guint col, guint64 value);
void rs_table_set_double(RsTable *table, guint col, double value);
void rs_table_set_bool(RsTable *table, guint col, gboolean value);
/** rs_table_set_text: @value is copied; NULL sets null. */
void rs_table_set_text(RsTable *table, guint col, const char *value);
/** rs_table_take_text: as rs_table_set_text() but takes ownership of @value. */
void rs_table_take_text(RsTable *table, guint col, char *value);
/** rs_table_take_json: takes ownership of @node (a JSON column: nested data). */
void rs_table_take_json(RsTable *table, guint col, JsonNode *node);
/** rs_table_set_null: "-" in the table, empty in CSV, null in JSON. */
void rs_table_set_null(RsTable *table, guint col);

/**
 * rs_table_append_text:
 * @out: the aligned table is appended here: a header row of the labels with their units,
 *   then one line per row; columns two spaces apart, each as wide as its widest cell; no
 *   trailing spaces
 */
void rs_table_append_text(const RsTable *table, GString *out);

/** rs_table_append_csv: appends the header row of column names and one line per row. */
void rs_table_append_csv(const RsTable *table, GString *out);

/**
 * rs_table_add_json_members:
 * @b: a builder inside an object
 * @row: < rs_table_get_n_rows()
 *
 * Adds the members of row @row (one per JSON column whose cell is set) to @b's object.
 */
void rs_table_add_json_members(const RsTable *table, guint row, JsonBuilder *b);

/**
 * rs_table_add_json_array:
 * @b: a builder where a value is expected (after a member name, or in an array)
 *
 * Adds the rows as an array of objects.
 */
void rs_table_add_json_array(const RsTable *table, JsonBuilder *b);

/**
 * rs_table_append_html:
 * @out: an HTML <table> is appended: a <thead> row of the text table's headers and a <tbody>
 *   row per row, the cells as in the text table (escaped), numeric columns of class "num"
 */
void rs_table_append_html(const RsTable *table, GString *out);

/** rs_table_append_markdown: appends a pipe table (GitHub-flavoured Markdown) of the text
 * table's headers and cells; numeric columns right-aligned; "|" in a cell becomes "/". */
void rs_table_append_markdown(const RsTable *table, GString *out);

/**
 * rs_table_append:
 * @format: RS_FORMAT_TABLE (rs_table_append_text()), RS_FORMAT_CSV
 *   (rs_table_append_csv()) or RS_FORMAT_JSON: a document of its own, an object with the
 *   provenance members (rs_report_json_append()) and the rows as an array under the
 *   table's name
 */
void rs_table_append(const RsTable *table, RsFormat format, GString *out);

G_END_DECLS

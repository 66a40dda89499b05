/* report-private.h — helpers shared by the report files of analysis/. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* An aligned text table: a header row, then rows of cells; the first column is
 * left-aligned, the others right-aligned, each as wide as its widest cell. */
typedef struct _RsReportTable RsReportTable;

/** rs_report_table_new: Returns: (transfer full): an empty table. */
RsReportTable *rs_report_table_new(void);
/** rs_report_table_add_row: Returns: (transfer none): the new row, to fill with cells. */
GPtrArray *rs_report_table_add_row(RsReportTable *t);
/** rs_report_table_cell: appends a printf-formatted cell to @row. */
void rs_report_table_cell(GPtrArray *row, const char *format, ...) G_GNUC_PRINTF(2, 3);
/** rs_report_table_print_free: appends the table to @out and frees it. */
void rs_report_table_print_free(RsReportTable *t, GString *out);

G_END_DECLS

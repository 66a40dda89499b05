/* report-html.h — the shareable report of a simulated refit: one self-contained HTML file
 * (styles inline, every plot an inline SVG: nothing is fetched to view it) or a Markdown
 * variant (plots as data: URIs of their SVG), holding the scenario, both layouts, the
 * memory per GPU, the strategies table, the lower bound and its binding cut, the plots
 * with what each shows, the full text report, and the provenance (tool version, schema
 * version, command line).
 */
#pragma once

#include <glib.h>

#include "analysis/report.h"

G_BEGIN_DECLS

/* One plot of the report. */
typedef struct {
    const char *title;
    const char *description; /* what it shows, one or two sentences */
    const char *svg;         /* the SVG document (an XML prolog before <svg is dropped) */
} RsReportPlot;

/**
 * rs_report_document:
 * @report: the figures, as reshard simulate reports them
 * @plots: (array length=n_plots): the plots, in order
 * @markdown: Markdown instead of HTML
 * @out: the document is appended
 *
 * Deterministic: the same figures and command line give the same bytes.
 */
void rs_report_document(const RsSimulateReport *report, const RsReportPlot *plots, guint n_plots,
                        gboolean markdown, GString *out);

G_END_DECLS

/* report-html.c — the HTML and Markdown report (report-html.h). */
#include "analysis/report-html.h"

#include "rs-config.h"

#include <string.h>

static const char *
svg_body(const char *svg)
{
    const char *s = strstr(svg, "<svg");
    return s ? s : svg;
}

/* The command line of the provenance, as one line. */
static char *
command_line_text(void)
{
    g_autoptr(JsonObject) prov = rs_report_provenance_new();
    JsonArray *argv = json_object_get_array_member(prov, "command_line");
    GString *s = g_string_new(NULL);
    for (guint i = 0; argv && i < json_array_get_length(argv); i++) {
        g_autofree char *q = g_shell_quote(json_array_get_string_element(argv, i));
        const char *arg = json_array_get_string_element(argv, i);
        gboolean plain = strpbrk(arg, " '\"\\$*?;&|<>()") == NULL && *arg;
        g_string_append_printf(s, "%s%s", i ? " " : "", plain ? arg : q);
    }
    return g_string_free(s, FALSE);
}

static const char *
tool_text(void)
{
    return "reshard " RS_VERSION;
}

static void
html_pre(GString *out, const char *text)
{
    g_autofree char *esc = g_markup_escape_text(text, -1);
    g_string_append_printf(out, "<pre>%s</pre>\n", esc);
}

/* The document's title: what was simulated, named as the table's scenario line names it
 * (the scenario, and the flags that replaced parts of it), then the model. Owned by the
 * caller; not escaped. */
static char *
document_title(const RsSimulateReport *r)
{
    g_autofree char *scenario = rs_report_format_scenario(r->scenario_name, r->scenario_overrides);
    return g_strdup_printf("reshard report: %s, %s", scenario, rs_model_get_name(r->model));
}

static void
html_document(const RsSimulateReport *r, const RsReportPlot *plots, guint n_plots, GString *out)
{
    g_autofree char *plain = document_title(r);
    g_autofree char *title = g_markup_escape_text(plain, -1);
    g_string_append_printf(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<title>%s</title>\n<style>\n"
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\n"
        "table{border-collapse:collapse;margin:1em 0;font-size:90%%}\n"
        "th,td{border:1px solid #bbb;padding:3px 8px;text-align:left}\n"
        "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
        "th{background:#eee}\npre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:85%%}\n"
        "figure{margin:1.5em 0}\nfigure svg{max-width:100%%;height:auto;border:1px solid #ddd}\n"
        "figcaption{font-size:90%%;color:#444}\n"
        "</style>\n</head>\n<body>\n<h1>%s</h1>\n",
        title, title);
    g_autofree char *cmd = command_line_text();
    g_autofree char *cmd_esc = g_markup_escape_text(cmd, -1);
    g_string_append_printf(out, "<p>Made by %s (report schema %d) with <code>%s</code>.</p>\n",
                           tool_text(), RS_REPORT_SCHEMA_VERSION, cmd_esc);
    /* The work: the header lines of the text form. */
    g_string_append(out, "<h2>Scenario and layouts</h2>\n");
    g_autoptr(GString) text = g_string_new(NULL);
    rs_report_simulate(r, RS_FORMAT_TABLE, text);
    const char *blank = strstr(text->str, "\n\n");
    g_autofree char *header = blank ? g_strndup(text->str, blank - text->str + 1) : g_strdup("");
    html_pre(out, header);
    g_string_append(out, "<h2>Strategies</h2>\n");
    g_autoptr(RsTable) t = rs_report_simulate_table(r);
    rs_table_append_html(t, out);
    g_autofree char *cut = rs_lower_bound_format_cut(&r->bound);
    g_autofree char *bound_line = g_markup_printf_escaped(
        "<p><b>Lower bound</b> %.4g s; binding cut: %s.</p>\n", r->bound.time_s, cut);
    g_string_append(out, bound_line);
    if (r->auto_reason != NULL) {
        g_autofree char *a = g_markup_printf_escaped("<p><b>auto:</b> %s</p>\n", r->auto_reason);
        g_string_append(out, a);
    }
    if (n_plots > 0)
        g_string_append(out, "<h2>Plots</h2>\n");
    for (guint i = 0; i < n_plots; i++) {
        g_autofree char *cap =
            g_markup_printf_escaped("<b>%s.</b> %s", plots[i].title, plots[i].description);
        g_string_append_printf(out, "<figure>\n%s\n<figcaption>%s</figcaption>\n</figure>\n",
                               svg_body(plots[i].svg), cap);
    }
    g_string_append(out, "<h2>The full text report</h2>\n");
    html_pre(out, text->str);
    g_string_append(out, "</body>\n</html>\n");
}

static void
md_document(const RsSimulateReport *r, const RsReportPlot *plots, guint n_plots, GString *out)
{
    g_autofree char *title = document_title(r);
    g_string_append_printf(out, "# %s\n\n", title);
    g_autofree char *cmd = command_line_text();
    g_string_append_printf(out, "Made by %s (report schema %d) with `%s`.\n\n", tool_text(),
                           RS_REPORT_SCHEMA_VERSION, cmd);
    g_autoptr(GString) text = g_string_new(NULL);
    rs_report_simulate(r, RS_FORMAT_TABLE, text);
    const char *blank = strstr(text->str, "\n\n");
    g_autofree char *header = blank ? g_strndup(text->str, blank - text->str + 1) : g_strdup("");
    g_string_append_printf(out, "## Scenario and layouts\n\n```\n%s```\n\n## Strategies\n\n",
                           header);
    g_autoptr(RsTable) t = rs_report_simulate_table(r);
    rs_table_append_markdown(t, out);
    g_autofree char *cut = rs_lower_bound_format_cut(&r->bound);
    g_string_append_printf(out, "\n**Lower bound** %.4g s; binding cut: %s.\n\n", r->bound.time_s,
                           cut);
    if (r->auto_reason != NULL)
        g_string_append_printf(out, "**auto:** %s\n\n", r->auto_reason);
    if (n_plots > 0)
        g_string_append(out, "## Plots\n\n");
    for (guint i = 0; i < n_plots; i++) {
        const char *svg = svg_body(plots[i].svg);
        g_autofree char *b64 = g_base64_encode((const guchar *)svg, strlen(svg));
        g_string_append_printf(out, "![%s](data:image/svg+xml;base64,%s)\n\n**%s.** %s\n\n",
                               plots[i].title, b64, plots[i].title, plots[i].description);
    }
    g_string_append_printf(out, "## The full text report\n\n```\n%s```\n", text->str);
}

void
rs_report_document(const RsSimulateReport *r, const RsReportPlot *plots, guint n_plots,
                   gboolean markdown, GString *out)
{
    if (markdown)
        md_document(r, plots, n_plots, out);
    else
        html_document(r, plots, n_plots, out);
}

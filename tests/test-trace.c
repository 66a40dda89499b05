/* test-trace.c — the trace CSV round-trips, and bad files are refused with file:line. */
#include "base/trace.h"

#include <math.h>
#include <string.h>

static void
test_roundtrip(void)
{
    g_autoptr(RsTrace) t = rs_trace_new();
    rs_trace_set_meta(t, "source", "simulated");
    const guint32 deps[] = {0};
    rs_trace_add(t, 0, 1, 2, 4096, 0, 0.0, 1.5e-6, "gpu1.nic-egress;gpu2.nic-ingress", NULL, 0);
    rs_trace_add(t, 1, 2, 3, 4096, 1, NAN, NAN, NULL, deps, 1);
    g_autofree char *text = rs_trace_to_string(t);
    g_assert_cmpstr(text, ==,
                    "# source: simulated\n"
                    "message,src,dst,bytes,phase,start_s,end_s,route,depends_on\n"
                    "0,1,2,4096,0,0,1.5e-06,gpu1.nic-egress;gpu2.nic-ingress,\n"
                    "1,2,3,4096,1,,,,0\n");
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTrace) back = rs_trace_read_string(text, "t.csv", &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_trace_get_n_rows(back), ==, 2);
    g_assert_cmpstr(rs_trace_get_meta(back, "source"), ==, "simulated");
    const RsTraceRow *r = rs_trace_get_row(back, 1);
    g_assert_cmpuint(r->src, ==, 2);
    g_assert_true(isnan(r->start_s));
    g_assert_cmpuint(r->depends_on->len, ==, 1);
    g_assert_cmpfloat(rs_trace_get_row(back, 0)->end_s, ==, 1.5e-6);
}

static void
test_minimal_columns(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTrace) t =
        rs_trace_read_string("bytes,dst,src\n100,1,0\n200,0,1\n", "m.csv", &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_trace_get_n_rows(t), ==, 2);
    const RsTraceRow *r = rs_trace_get_row(t, 1);
    g_assert_cmpuint(r->message, ==, 1);
    g_assert_cmpuint(r->src, ==, 1);
    g_assert_cmpuint(r->dst, ==, 0);
    g_assert_cmpuint(r->size_bytes, ==, 200);
}

/* Metadata only before the header, CRLF line ends, an empty phase (0) and empty times. */
static void
test_optional_fields(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTrace) t = rs_trace_read_string(
        "# source: measured\r\nsrc,dst,bytes,phase,start_s\r\n# late: ignored\r\n\r\n"
        "3,4,10,,\r\n4,3,20,2,0.25\r\n",
        "o.csv", &error);
    g_assert_no_error(error);
    g_assert_cmpstr(rs_trace_get_meta(t, "source"), ==, "measured");
    g_assert_null(rs_trace_get_meta(t, "late"));
    g_assert_cmpuint(rs_trace_get_n_rows(t), ==, 2);
    const RsTraceRow *a = rs_trace_get_row(t, 0), *b = rs_trace_get_row(t, 1);
    g_assert_cmpuint(a->message, ==, 0);
    g_assert_cmpuint(a->phase, ==, 0);
    g_assert_true(isnan(a->start_s));
    g_assert_cmpuint(a->line, ==, 5);
    g_assert_cmpuint(b->message, ==, 1);
    g_assert_cmpuint(b->phase, ==, 2);
    g_assert_cmpfloat(b->start_s, ==, 0.25);
    g_assert_true(isnan(b->end_s));
    g_assert_cmpstr(b->route, ==, "");
    g_assert_cmpuint(b->line, ==, 6);
}

typedef struct {
    const char *text;
    const char *fragment;
} BadCase;

static const BadCase bad_cases[] = {
    {"src,dst\n0,1\n", "m.csv:1: the header lacks the column \"bytes\""},
    {"src,dst,bytes,color\n", "m.csv:1: unknown column \"color\""},
    {"src,dst,bytes\n0,1,-5\n", "m.csv:2: column bytes: \"-5\""},
    {"src,dst,bytes\n0,1\n", "m.csv:2: 2 fields, the header has 3"},
    {"message,src,dst,bytes,depends_on\n0,0,1,5,7\n", "depends on message 7"},
    {"", "no header row"},
    {"src,dst,bytes,src\n", "m.csv:1: column \"src\" appears twice"},
    {"message,src,dst,bytes\n,0,1,5\n", "m.csv:2: column message: \"\" is not a non-negative"},
    {"src,dst,bytes,phase\n0,1,5,4294967296\n",
     "m.csv:2: column phase: \"4294967296\" is above the largest, 4294967295"},
    {"src,dst,bytes\n0,8,9223372036854775807\n0,9,9223372036854775807\n",
     "m.csv:3: the messages' bytes add up to more than 2^63 - 1"},
    {"src,dst,bytes\n0,1,99999999999999999999999\n",
     "m.csv:2: column bytes: \"99999999999999999999999\" is above the largest, "
     "9223372036854775807"},
    {"src,dst,bytes,end_s\n0,1,5,soon\n", "m.csv:2: column end_s: \"soon\" is not a number"},
    {"src,dst,bytes,depends_on\n0,1,5,0;x\n", "m.csv:2: column depends_on: \"x\" is not a"},
    /* A message ending before it starts; one message given twice (compare matched neither
     * correctly: "measured s -2e-05", counts that did not add up). */
    {"src,dst,bytes,start_s,end_s\n0,1,5,3e-5,1e-5\n",
     "m.csv:2: column end_s: \"1e-5\" is before start_s"},
    /* A time before the refit's start was taken (compare spans grew by it). */
    {"src,dst,bytes,start_s,end_s\n0,1,5,-1,1e-5\n",
     "m.csv:2: column start_s: \"-1\" is negative (times are seconds from the refit's start)"},
    {"message,src,dst,bytes\n4,0,1,5\n5,0,1,5\n4,1,0,5\n",
     "m.csv:4: message 4 is given twice (first at line 2)"},
};

/* A UTF-8 byte-order mark before the header is skipped. */
static void
test_bom(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTrace) t = rs_trace_read_string("\xef\xbb\xbfsrc,dst,bytes\n0,1,5\n", "m.csv", &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_trace_get_n_rows(t), ==, 1);
    g_assert_cmpuint(rs_trace_get_row(t, 0)->size_bytes, ==, 5);
}

static void
test_bad(gconstpointer data)
{
    const BadCase *c = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTrace) t = rs_trace_read_string(c->text, "m.csv", &error);
    g_assert_null(t);
    g_assert_error(error, RS_TRACE_ERROR, RS_TRACE_ERROR_PARSE);
    if (strstr(error->message, c->fragment) == NULL)
        g_error("\"%s\" lacks \"%s\"", error->message, c->fragment);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/trace/roundtrip", test_roundtrip);
    g_test_add_func("/trace/minimal-columns", test_minimal_columns);
    g_test_add_func("/trace/optional-fields", test_optional_fields);
    g_test_add_func("/trace/bom", test_bom);
    for (guint i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
        g_autofree char *path = g_strdup_printf("/trace/bad/%u", i);
        g_test_add_data_func(path, &bad_cases[i], test_bad);
    }
    return g_test_run();
}

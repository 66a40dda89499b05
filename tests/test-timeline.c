/* test-timeline.c — the Chrome trace event document (analysis/timeline.h). */
#include "analysis/timeline.h"

#include "tests/test-util.h"

#include <math.h>
#include <string.h>

static JsonArray *
events_of(JsonParser *parser, const char *text)
{
    JsonObject *root = parse_json(parser, text);
    g_assert_true(json_object_has_member(root, "traceEvents"));
    g_assert_cmpstr(json_object_get_string_member(root, "displayTimeUnit"), ==, "ns");
    JsonObject *other = json_object_get_object_member(root, "otherData");
    g_assert_cmpstr(json_object_get_string_member(other, "source"), ==, "simulated");
    return json_object_get_array_member(root, "traceEvents");
}

/* Three messages into GPU 1 over NVLink: m0 0-2 s, m1 1-3 s, m2 2.5-4 s. m1 overlaps m0,
 * so it takes lane 1; m2 starts after m0 ended and takes lane 0 again. */
static void
test_lanes_and_counters(void)
{
    g_autoptr(RsTrace) t = rs_trace_new();
    rs_trace_set_meta(t, "source", "simulated");
    const char *route = "gpu0.nvlink-egress;gpu1.nvlink-ingress";
    rs_trace_add(t, 0, 0, 1, 100, 0, 0, 2, route, NULL, 0);
    rs_trace_add(t, 1, 2, 1, 200, 0, 1, 3, route, NULL, 0);
    rs_trace_add(t, 2, 3, 1, 300, 1, 2.5, 4, route, NULL, 0);
    rs_trace_add(t, 3, 3, 1, 300, 1, NAN, NAN, route, NULL, 0); /* no times: left out */
    g_autofree char *text = rs_timeline_to_json(t);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonArray *ev = events_of(parser, text);
    const struct {
        double ts, dur;
        gint64 tid;
    } want[] = {{0, 2e6, 0}, {1e6, 2e6, 1}, {2.5e6, 1.5e6, 0}};
    guint n_x = 0;
    GString *counter = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(ev); i++) {
        JsonObject *e = json_array_get_object_element(ev, i);
        const char *ph = json_object_get_string_member(e, "ph");
        if (strcmp(ph, "X") == 0) {
            g_assert_cmpuint(n_x, <, 3);
            g_assert_cmpfloat(json_object_get_double_member(e, "ts"), ==, want[n_x].ts);
            g_assert_cmpfloat(json_object_get_double_member(e, "dur"), ==, want[n_x].dur);
            g_assert_cmpint(json_object_get_int_member(e, "tid"), ==, want[n_x].tid);
            g_assert_cmpint(json_object_get_int_member(e, "pid"), ==, 2); /* GPU 1 */
            JsonObject *args = json_object_get_object_member(e, "args");
            g_assert_cmpint(json_object_get_int_member(args, "message"), ==, n_x);
            n_x++;
        } else if (strcmp(ph, "C") == 0) {
            g_assert_cmpstr(json_object_get_string_member(e, "name"), ==,
                            "nvlink messages in flight");
            JsonObject *args = json_object_get_object_member(e, "args");
            g_string_append_printf(counter, "%g:%" G_GINT64_FORMAT " ",
                                   json_object_get_double_member(e, "ts") / 1e6,
                                   json_object_get_int_member(args, "messages"));
        } else {
            g_assert_cmpstr(ph, ==, "M");
        }
    }
    g_assert_cmpuint(n_x, ==, 3);
    g_assert_cmpstr(counter->str, ==, "0:1 1:2 2:1 2.5:2 3:1 4:0 ");
    g_string_free(counter, TRUE);
}

static void
test_link_classes(void)
{
    g_assert_cmpstr(rs_timeline_link_class("gpu3.nvlink-egress"), ==, "nvlink");
    g_assert_cmpstr(rs_timeline_link_class("gpu3.pcie-ingress"), ==, "pcie");
    g_assert_cmpstr(rs_timeline_link_class("gpu3.nic-egress"), ==, "nic");
    g_assert_cmpstr(rs_timeline_link_class("su1.rail7.downlink"), ==, "spine");
    g_assert_cmpstr(rs_timeline_link_class("x"), ==, "other");
}

/* reshard simulate --timeline: valid JSON with an event per simulated network message. */
static void
test_cli(void)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *path = g_build_filename(dir, "t.json", NULL);
    const char *args[] = {"simulate",
                          "--model",
                          "llama-3.1-8b",
                          "--nodes",
                          "2",
                          "--train",
                          "megatron:tp=2,pp=2",
                          "--train-gpus",
                          "0-7",
                          "--infer",
                          "vllm:tp=4",
                          "--infer-gpus",
                          "8-15",
                          "--strategy",
                          "direct",
                          "--timeline",
                          path,
                          "-q",
                          "--format",
                          "json",
                          NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    g_autoptr(JsonParser) sp = json_parser_new();
    JsonObject *report = parse_json(sp, r.out);
    JsonObject *row =
        json_array_get_object_element(json_object_get_array_member(report, "strategies"), 0);
    gint64 n_messages = json_object_get_int_member(row, "messages");
    g_autofree char *text = read_file(path);
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonArray *ev = events_of(parser, text);
    gint64 n_x = 0;
    for (guint i = 0; i < json_array_get_length(ev); i++) {
        JsonObject *e = json_array_get_object_element(ev, i);
        if (strcmp(json_object_get_string_member(e, "ph"), "X") == 0) {
            g_assert_true(json_object_has_member(e, "ts"));
            g_assert_cmpfloat(json_object_get_double_member(e, "dur"), >=, 0);
            n_x++;
        }
    }
    g_assert_cmpint(n_x, >=, n_messages); /* network messages, and local copies */
    run_result_clear(&r);
}

/* --trace with one strategy writes FILE itself (the row's candidate: hierarchical tries both
 * relay modes), with its metadata in FILE.meta and no comment line in the CSV. */
static void
test_cli_one_trace(void)
{
    g_autofree char *dir = make_temp_dir();
    g_autofree char *trace = g_build_filename(dir, "h.csv", NULL);
    g_autofree char *other = g_build_filename(dir, "h-hierarchical.csv", NULL);
    g_autofree char *meta = g_build_filename(dir, "h.csv.meta", NULL);
    const char *args[] = {"simulate",
                          "--model",
                          "llama-3.1-8b",
                          "--nodes",
                          "2",
                          "--train",
                          "megatron:tp=2,pp=2",
                          "--train-gpus",
                          "0-7",
                          "--infer",
                          "vllm:tp=4",
                          "--infer-gpus",
                          "8-15",
                          "--strategy",
                          "hierarchical",
                          "--trace",
                          trace,
                          "-q",
                          NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    run_result_clear(&r);
    g_autofree char *text = read_file(trace);
    g_assert_true(g_str_has_prefix(text, "message,src,dst,bytes,"));
    g_assert_false(g_file_test(other, G_FILE_TEST_EXISTS));
    g_autofree char *mtext = read_file(meta);
    assert_contains(mtext, "strategy=hierarchical");
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/timeline/lanes-and-counters", test_lanes_and_counters);
    g_test_add_func("/timeline/link-classes", test_link_classes);
    g_test_add_func("/timeline/cli", test_cli);
    g_test_add_func("/timeline/cli-one-trace", test_cli_one_trace);
    return g_test_run();
}

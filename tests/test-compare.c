/* test-compare.c — predicted against measured traces on hand-made traces (analysis/compare.h)
 * and the `reshard compare` command. */
#include "analysis/compare.h"
#include "analysis/table.h"
#include "base/trace.h"

#include "tests/test-util.h"

#include <math.h>
#include <string.h>

/* m0: NVLink, 1,000 B, phase 0: predicted 1 s, measured 2 s (-50%);
 * m1: network, 2 MiB, phase 0: predicted 1.5 s, measured 1 s (+50%);
 * m2: network, 2 MiB, phase 1: predicted 1 s (2 to 3), measured 4 s (2 to 6) (-75%);
 * m3 only predicted, m4 only measured. */
static void
make_traces(RsTrace **pred_out, RsTrace **meas_out)
{
    RsTrace *p = rs_trace_new(), *m = rs_trace_new();
    rs_trace_add(p, 0, 0, 1, 1000, 0, 0, 1, "gpu0.nvlink-egress;gpu1.nvlink-ingress", NULL, 0);
    rs_trace_add(p, 1, 0, 2, 2097152, 0, 0, 1.5, "gpu0.nic-egress;gpu2.nic-ingress", NULL, 0);
    rs_trace_add(p, 2, 1, 3, 2097152, 1, 2, 3, "gpu1.pcie-egress;gpu1.nic-egress;su0.rail1.uplink",
                 NULL, 0);
    rs_trace_add(p, 3, 1, 2, 10, 1, 2, 2.5, "", NULL, 0);
    rs_trace_add(m, 0, 0, 1, 1000, 0, 0, 2, "", NULL, 0);
    rs_trace_add(m, 1, 0, 2, 2097152, 0, 0, 1, "", NULL, 0);
    rs_trace_add(m, 2, 1, 3, 2097152, 1, 2, 6, "", NULL, 0);
    rs_trace_add(m, 4, 1, 2, 10, 1, 2, 2.5, "", NULL, 0);
    *pred_out = p;
    *meas_out = m;
}

static void
test_groups(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTrace) p = NULL;
    g_autoptr(RsTrace) m = NULL;
    make_traces(&p, &m);
    g_autoptr(RsCompare) c = rs_compare_new(p, m, &error);
    g_assert_no_error(error);
    g_autoptr(RsTable) t = rs_compare_groups_table(c);
    g_autoptr(GString) csv = g_string_new(NULL);
    rs_table_append_csv(t, csv);
    g_assert_cmpstr(csv->str, ==,
                    "group_kind,group,messages,predicted_s,measured_s,error,median_abs_error,"
                    "p90_abs_error\n"
                    "total,all,3,3,6,-0.500000,0.500000,0.750000\n"
                    "phase,0,2,1.5,2,-0.250000,0.500000,0.500000\n"
                    "phase,1,1,1,4,-0.750000,0.750000,0.750000\n"
                    "size,< 64 KiB,1,1,2,-0.500000,0.500000,0.500000\n"
                    "size,1 - 16 MiB,2,2.5,5,-0.500000,0.500000,0.750000\n"
                    "link,network,2,2.5,5,-0.500000,0.500000,0.750000\n"
                    "link,nvlink,1,1,2,-0.500000,0.500000,0.500000\n");
    g_autoptr(RsTable) w = rs_compare_worst_table(c, 2);
    g_autoptr(GString) wcsv = g_string_new(NULL);
    rs_table_append_csv(w, wcsv);
    /* The largest |error| first; m0 and m1 tie at 50%: the lower id. */
    g_assert_cmpstr(wcsv->str, ==,
                    "message,src,dst,phase,bytes,link_class,predicted_s,measured_s,error\n"
                    "2,1,3,1,2097152,network,1,4,-0.750000\n"
                    "0,0,1,0,1000,nvlink,1,2,-0.500000\n");
    g_autoptr(GString) json = g_string_new(NULL);
    rs_compare_report(c, RS_FORMAT_JSON, json);
    g_assert_nonnull(strstr(json->str, "\"predicted_only\" : 1"));
    g_assert_nonnull(strstr(json->str, "\"measured_only\" : 1"));
}

static void
test_percentile(void)
{
    double v[] = {5, 1, 4, 2, 3, 10, 9, 8, 7, 6};
    g_assert_cmpfloat(rs_compare_percentile(v, 10, 0.5), ==, 5);
    g_assert_cmpfloat(rs_compare_percentile(v, 10, 0.9), ==, 9);
    g_assert_cmpfloat(rs_compare_percentile(v, 10, 1.0), ==, 10);
    double one[] = {0.25};
    g_assert_cmpfloat(rs_compare_percentile(one, 1, 0.9), ==, 0.25);
}

static void
test_no_match(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTrace) p = rs_trace_new();
    g_autoptr(RsTrace) m = rs_trace_new();
    rs_trace_add(p, 0, 0, 1, 10, 0, 0, 1, "", NULL, 0);
    rs_trace_add(m, 1, 0, 1, 10, 0, 0, 1, "", NULL, 0);
    g_autoptr(RsCompare) c = rs_compare_new(p, m, &error);
    g_assert_null(c);
    g_assert_error(error, RS_COMPARE_ERROR, RS_COMPARE_ERROR_NO_MATCH);
    g_assert_nonnull(strstr(error->message, "no message id of"));
    /* A measured trace without times (no start_s/end_s columns): said so, not "no id". */
    g_clear_error(&error);
    g_autoptr(RsTrace) untimed = rs_trace_read_string("message,src,dst,bytes\n0,0,1,10\n",
                                                      "bad2.csv", &error);
    g_assert_no_error(error);
    g_autoptr(RsCompare) c2 = rs_compare_new(p, untimed, &error);
    g_assert_null(c2);
    g_assert_error(error, RS_COMPARE_ERROR, RS_COMPARE_ERROR_NO_MATCH);
    g_assert_nonnull(strstr(error->message, "bad2.csv has no message with both start_s and "
                                            "end_s (the columns are missing or empty)"));
}

static void
test_cli(void)
{
    g_autoptr(RsTrace) p = NULL;
    g_autoptr(RsTrace) m = NULL;
    make_traces(&p, &m);
    g_autofree char *ptext = rs_trace_to_string(p);
    g_autofree char *mtext = rs_trace_to_string(m);
    g_autofree char *ppath = write_temp("p.csv", ptext);
    g_autofree char *mpath = write_temp("m.csv", mtext);
    const char *args[] = {"compare", ppath, mpath, NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "3 messages matched by id, 1 only predicted, 1 only measured");
    assert_contains(r.out, "total  all");
    run_result_clear(&r);
    const char *csv[] = {"compare", ppath, mpath, "--format", "csv", NULL};
    r = run_reshard(csv);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "total,all,3,3,6,-0.500000,0.500000,0.750000\n");
    g_assert_null(strstr(r.out, "#"));
    run_result_clear(&r);
    const char *one[] = {"compare", ppath, NULL};
    r = run_reshard(one);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "expected two trace files: PREDICTED MEASURED");
    run_result_clear(&r);
    const char *missing[] = {"compare", ppath, "/nonexistent/m.csv", NULL};
    r = run_reshard(missing);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "MEASURED: ");
    run_result_clear(&r);
    /* --plot may not replace an input: p.dat is the prediction (it was overwritten with
     * the plot's data, exit 0). */
    g_autofree char *dat = write_temp("p.dat", ptext);
    g_autofree char *prefix = g_strndup(dat, strlen(dat) - strlen(".dat"));
    const char *plot_over_input[] = {"compare", dat, mpath, "--plot", prefix, NULL};
    r = run_reshard(plot_over_input);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "is an input of this command");
    g_autofree char *after = NULL;
    g_assert_true(g_file_get_contents(dat, &after, NULL, NULL));
    g_assert_cmpstr(after, ==, ptext);
    run_result_clear(&r);
    /* Traces of different plans (message 1 goes elsewhere in the run): refused, exit 2. */
    g_autoptr(RsTrace) other = rs_trace_new();
    rs_trace_add(other, 0, 0, 1, 1000, 0, 0, 2, "", NULL, 0);
    rs_trace_add(other, 1, 3, 2, 2097152, 0, 0, 1, "", NULL, 0);
    g_autoptr(RsTrace) pred = rs_trace_new();
    rs_trace_add(pred, 0, 0, 1, 1000, 0, 0, 1, "", NULL, 0);
    rs_trace_add(pred, 1, 0, 2, 2097152, 0, 0, 1.5, "", NULL, 0);
    g_autofree char *otext = rs_trace_to_string(other);
    g_autofree char *qtext = rs_trace_to_string(pred);
    g_autofree char *opath = write_temp("other.csv", otext);
    g_autofree char *qpath = write_temp("pred.csv", qtext);
    const char *mismatch[] = {"compare", qpath, opath, NULL};
    r = run_reshard(mismatch);
    g_assert_cmpint(r.exit_code, ==, 2);
    /* The command names the files and lines (the library, simulation and run). */
    assert_contains(r.err, "reshard compare: message 1 is 0 -> 2, 2097152 B, phase 0 in ");
    assert_contains(r.err, "pred.csv (line 3) but 3 -> 2, 2097152 B, phase 0 in ");
    assert_contains(r.err, "other.csv (line 3): the traces are of different plans");
    g_assert_cmpstr(r.out, ==, "");
    run_result_clear(&r);
}

/* reshard run --compare: the run's messages against the flow simulation of its plan. */
static void
test_run_compare(void)
{
    g_autofree char *topo = data_path("small-fabric.yaml");
    const char *args[] = {"run", "--shape",          "256x256", "--dtype",     "f32", "--src-mesh",
                          "1",   "--src-placements", "R",       "--src-ranks", "0",   "--dst-mesh",
                          "2",   "--dst-placements", "S(0)",    "--dst-ranks", "1-2", "--topology",
                          topo,  "--compare",        "-q",      NULL};
    RunResult r = run_reshard(args);
    g_assert_cmpint(r.exit_code, ==, 0);
    assert_contains(r.out, "compare    predicted the simulation against measured the run: 2 "
                           "messages matched by id, 0 only predicted, 0 only measured");
    /* GPU 1 shares GPU 0's node (NVLink), GPU 2 is on the next node (network). */
    assert_contains(r.out, "\nlink   network                1  ");
    assert_contains(r.out, "\nlink   nvlink                 1  ");
    run_result_clear(&r);
    const char *json[] = {"run", "--shape", "8x8", "--compare", "--format", "json", NULL};
    r = run_reshard(json);
    g_assert_cmpint(r.exit_code, ==, 2);
    assert_contains(r.err, "--compare prints its tables after the run's");
    run_result_clear(&r);
}

/* A message id that names other ranks or bytes in each trace: traces of different plans
 * (a qwen3 simulation against a DeepSeek-V3 run matched 8 ids and printed their errors). */
static void
test_mismatch(void)
{
    /* The first matches; then another source, destination, size, phase (a phase was not
     * compared: the measured phase's row showed the other plan's prediction). */
    const struct {
        guint32 src, dst;
        guint64 bytes;
        guint32 phase;
    } measured[] = {{0, 2, 2097152, 0}, {3, 2, 2097152, 0}, {0, 1, 2097152, 0},
                    {0, 2, 2097151, 0}, {0, 2, 2097152, 3}};
    for (guint i = 0; i < G_N_ELEMENTS(measured); i++) {
        g_autoptr(RsTrace) p = rs_trace_new();
        g_autoptr(RsTrace) m = rs_trace_new();
        rs_trace_add(p, 0, 0, 1, 1000, 0, 0, 1, "", NULL, 0);
        rs_trace_add(p, 1, 0, 2, 2097152, 0, 0, 1.5, "", NULL, 0);
        rs_trace_add(m, 0, 0, 1, 1000, 0, 0, 2, "", NULL, 0);
        rs_trace_add(m, 1, measured[i].src, measured[i].dst, measured[i].bytes,
                     measured[i].phase, 0, 1, "", NULL, 0);
        g_autoptr(GError) error = NULL;
        g_autoptr(RsCompare) c = rs_compare_new(p, m, &error);
        if (i == 0) {
            g_assert_no_error(error);
            g_assert_nonnull(c);
            continue;
        }
        g_assert_null(c);
        g_assert_error(error, RS_COMPARE_ERROR, RS_COMPARE_ERROR_MISMATCH);
        g_autofree char *want = g_strdup_printf(
            "message 1 is 0 -> 2, 2097152 B, phase 0 in the simulation but %u -> %u, "
            "%" G_GUINT64_FORMAT " B, phase %u in the run: the traces are of different plans",
            measured[i].src, measured[i].dst, measured[i].bytes, measured[i].phase);
        g_assert_true(g_str_has_prefix(error->message, want));
    }
}

/* A message measured in 0 s has no relative error: it was reported as 0.0% (every row of
 * a trace of zero times said 0.0%). Its error is NAN, left out of |error|; a group measured
 * in 0 s shows no error (null). */
static void
test_zero_measured(void)
{
    g_autoptr(RsTrace) p = rs_trace_new();
    g_autoptr(RsTrace) m = rs_trace_new();
    rs_trace_add(p, 0, 0, 1, 1000, 0, 0, 1.5, "", NULL, 0);
    rs_trace_add(p, 1, 0, 2, 1000, 1, 0, 3.0, "", NULL, 0);
    rs_trace_add(m, 0, 0, 1, 1000, 0, 0, 1.0, "", NULL, 0);
    rs_trace_add(m, 1, 0, 2, 1000, 1, 2.0, 2.0, "", NULL, 0);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsCompare) c = rs_compare_new(p, m, &error);
    g_assert_no_error(error);
    guint n;
    const RsCompareMessage *msgs = rs_compare_get_messages(c, &n);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpfloat(msgs[0].error, ==, 0.5);
    g_assert_true(isnan(msgs[1].error));
    g_autoptr(GString) out = g_string_new(NULL);
    rs_compare_report(c, RS_FORMAT_JSON, out);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, out->str, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    g_assert_cmpint(json_object_get_int_member(root, "measured_zero"), ==, 1);
    JsonArray *groups = json_object_get_array_member(root, "groups");
    guint seen = 0;
    for (guint i = 0; i < json_array_get_length(groups); i++) {
        JsonObject *g = json_array_get_object_element(groups, i);
        const char *kind = json_object_get_string_member(g, "group_kind");
        const char *name = json_object_get_string_member(g, "group");
        if (strcmp(kind, "phase") == 0 && strcmp(name, "1") == 0) {
            g_assert_true(json_node_is_null(json_object_get_member(g, "error")));
            g_assert_true(json_node_is_null(json_object_get_member(g, "median_abs_error")));
            seen++;
        }
        if (strcmp(kind, "total") == 0) {
            /* Spans: predicted 3 s, measured 2 s; the median |error| is message 0's alone. */
            g_assert_cmpfloat(json_object_get_double_member(g, "error"), ==, 0.5);
            g_assert_cmpfloat(json_object_get_double_member(g, "median_abs_error"), ==, 0.5);
            seen++;
        }
    }
    g_assert_cmpuint(seen, ==, 2);
}

/* A message between two GPUs without a route (traces of reshard run carry none) is of
 * link class "unknown", not "local" (a copy within one GPU). */
static void
test_link_unknown(void)
{
    g_autoptr(RsTrace) p = rs_trace_new();
    g_autoptr(RsTrace) m = rs_trace_new();
    rs_trace_add(p, 0, 0, 2, 1000, 0, 0, 1, "", NULL, 0);
    rs_trace_add(p, 1, 3, 3, 1000, 0, 0, 1, "", NULL, 0);
    rs_trace_add(m, 0, 0, 2, 1000, 0, 0, 2, "", NULL, 0);
    rs_trace_add(m, 1, 3, 3, 1000, 0, 0, 2, "", NULL, 0);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsCompare) c = rs_compare_new(p, m, &error);
    g_assert_no_error(error);
    guint n;
    const RsCompareMessage *msgs = rs_compare_get_messages(c, &n);
    g_assert_cmpuint(n, ==, 2);
    for (guint i = 0; i < n; i++)
        g_assert_cmpstr(msgs[i].link_class, ==, msgs[i].src == msgs[i].dst ? "local" : "unknown");
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/compare/groups", test_groups);
    g_test_add_func("/compare/percentile", test_percentile);
    g_test_add_func("/compare/no-match", test_no_match);
    g_test_add_func("/compare/mismatch", test_mismatch);
    g_test_add_func("/compare/link-unknown", test_link_unknown);
    g_test_add_func("/compare/zero-measured", test_zero_measured);
    g_test_add_func("/compare/cli", test_cli);
    g_test_add_func("/compare/run", test_run_compare);
    return g_test_run();
}

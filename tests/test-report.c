/* test-report.c — the one table writer of analysis/ (table.h) and the provenance of the JSON
 * documents (report.h): exact text, CSV and JSON of small tables. */
#include "analysis/report.h"
#include "analysis/table.h"

#include "rs-config.h"

#include <glib.h>
#include <math.h>
#include <string.h>

/* Two columns, two rows: a name and bytes shown as decimal GB. */
static const RsColumn two_columns[] = {
    {"tensor", NULL, RS_COLUMN_TEXT, 0, 0},
    {"bytes_moved", "moved", RS_COLUMN_GB, 2, 0},
};

static RsTable *
two_by_two(void)
{
    RsTable *t = rs_table_new("tensors", two_columns, G_N_ELEMENTS(two_columns));
    rs_table_add_row(t);
    rs_table_set_text(t, 0, "a");
    rs_table_set_uint(t, 1, 1500000000);
    rs_table_add_row(t);
    rs_table_set_text(t, 0, "bb");
    rs_table_set_uint(t, 1, 250000000);
    return t;
}

static char *
render(const RsTable *t, RsFormat format)
{
    GString *out = g_string_new(NULL);
    rs_table_append(t, format, out);
    return g_string_free(out, FALSE);
}

static void
test_two_by_two_text(void)
{
    g_autoptr(RsTable) t = two_by_two();
    g_autofree char *text = render(t, RS_FORMAT_TABLE);
    g_assert_cmpstr(text, ==,
                    "tensor  moved GB\n"
                    "a           1.50\n"
                    "bb          0.25\n");
}

static void
test_two_by_two_csv(void)
{
    g_autoptr(RsTable) t = two_by_two();
    g_autofree char *text = render(t, RS_FORMAT_CSV);
    g_assert_cmpstr(text, ==, "tensor,bytes_moved\na,1500000000\nbb,250000000\n");
}

static void
test_two_by_two_json(void)
{
    char *argv[] = {"reshard", "models", "--format", "json"};
    rs_report_set_command_line(G_N_ELEMENTS(argv), argv);
    g_autoptr(RsTable) t = two_by_two();
    g_autofree char *text = render(t, RS_FORMAT_JSON);
    g_assert_cmpstr(text, ==,
                    "{\n"
                    "  \"tool\" : \"reshard " RS_VERSION "\",\n"
                    "  \"schema_version\" : 1,\n"
                    "  \"command_line\" : [\n"
                    "    \"reshard\",\n"
                    "    \"models\",\n"
                    "    \"--format\",\n"
                    "    \"json\"\n"
                    "  ],\n"
                    "  \"tensors\" : [\n"
                    "    {\n"
                    "      \"tensor\" : \"a\",\n"
                    "      \"bytes_moved\" : 1500000000\n"
                    "    },\n"
                    "    {\n"
                    "      \"tensor\" : \"bb\",\n"
                    "      \"bytes_moved\" : 250000000\n"
                    "    }\n"
                    "  ]\n"
                    "}\n");
}

/* Every kind once, with unset and null cells and the per-format columns. */
static const RsColumn kinds[] = {
    {"name", NULL, RS_COLUMN_TEXT, 0, 0},
    {"messages", NULL, RS_COLUMN_INTEGER, 0, RS_COLUMN_THOUSANDS},
    {"time_s", "time", RS_COLUMN_SECONDS, 3, RS_COLUMN_SIGNIFICANT},
    {"bw_bytes_per_s", "bw", RS_COLUMN_RATE, 1, 0},
    {"efficiency", NULL, RS_COLUMN_RATIO, 0, 0},
    {"dominated", NULL, RS_COLUMN_BOOL, 0, RS_COLUMN_CSV_01},
    {"checked", NULL, RS_COLUMN_BOOL, 0, RS_COLUMN_NO_TABLE},
    {"note", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_TABLE_ONLY | RS_COLUMN_LEFT},
    {"flow", NULL, RS_COLUMN_JSON, 0, 0},
};

static RsTable *
kinds_table(void)
{
    RsTable *t = rs_table_new("rows", kinds, G_N_ELEMENTS(kinds));
    rs_table_add_row(t);
    rs_table_set_text(t, 0, "x,\"y\"");
    rs_table_set_uint(t, 1, 1234567);
    rs_table_set_double(t, 2, 0.0123456);
    rs_table_set_double(t, 3, 4.5e10);
    rs_table_set_double(t, 4, 0.875);
    rs_table_set_bool(t, 5, TRUE);
    rs_table_set_bool(t, 6, FALSE);
    rs_table_set_text(t, 7, "left");
    JsonNode *flow = json_node_new(JSON_NODE_OBJECT);
    json_node_take_object(flow, json_object_new());
    json_object_set_int_member(json_node_get_object(flow), "events", 3);
    rs_table_take_json(t, 8, flow);
    rs_table_add_row(t);
    rs_table_set_text(t, 0, "z");
    rs_table_set_uint(t, 1, 7);
    rs_table_set_double(t, 2, 2.5);
    rs_table_set_null(t, 3);
    rs_table_set_double(t, 4, 1.0);
    rs_table_set_bool(t, 5, FALSE);
    return t;
}

static void
test_kinds_text(void)
{
    g_autoptr(RsTable) t = kinds_table();
    g_autofree char *text = render(t, RS_FORMAT_TABLE);
    g_assert_cmpstr(text, ==,
                    "name    messages  time s  bw GB/s  efficiency  dominated  note\n"
                    "x,\"y\"  1,234,567  0.0123     45.0         88%        yes  left\n"
                    "z              7   2.500        -        100%         no\n");
}

static void
test_kinds_csv(void)
{
    g_autoptr(RsTable) t = kinds_table();
    g_autofree char *text = render(t, RS_FORMAT_CSV);
    g_assert_cmpstr(text, ==,
                    "name,messages,time_s,bw_bytes_per_s,efficiency,dominated,checked\n"
                    "\"x,\"\"y\"\"\",1234567,0.0123456,4.5e+10,0.875000,1,false\n"
                    "z,7,2.5,,1.000000,0,\n");
}

static void
test_kinds_json(void)
{
    g_autoptr(RsTable) t = kinds_table();
    g_autoptr(JsonBuilder) b = json_builder_new();
    rs_table_add_json_array(t, b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autofree char *text = json_to_string(root, FALSE);
    g_assert_cmpstr(text, ==,
                    "[{\"name\":\"x,\\\"y\\\"\",\"messages\":1234567,\"time_s\":0.0123456,"
                    "\"bw_bytes_per_s\":45000000000.0,\"efficiency\":0.875,\"dominated\":true,"
                    "\"checked\":false,\"flow\":{\"events\":3}},"
                    "{\"name\":\"z\",\"messages\":7,\"time_s\":2.5,\"bw_bytes_per_s\":null,"
                    "\"efficiency\":1.0,\"dominated\":false}]");
}

/* The writer's newer features: microseconds, a header without its unit, fixed CSV
 * decimals, a hidden column, and two columns for one figure named differently in CSV and
 * JSON. */
static const RsColumn features[] = {
    {"link", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_NO_JSON},
    {"name", NULL, RS_COLUMN_TEXT, 0, RS_COLUMN_JSON_ONLY},
    {"latency_s", "latency", RS_COLUMN_MICROSECONDS, 3, 0},
    {"read_bytes_per_s", "read", RS_COLUMN_RATE, 3, RS_COLUMN_NO_UNIT},
    {"u0", NULL, RS_COLUMN_REAL, 4, RS_COLUMN_CSV_FIXED},
    {"first_order_s", "first-order", RS_COLUMN_SECONDS, 3, 0},
};

static RsTable *
features_table(void)
{
    RsTable *t = rs_table_new("links", features, G_N_ELEMENTS(features));
    rs_table_hide_column(t, 5);
    rs_table_add_row(t);
    rs_table_set_text(t, 0, "gpu0.nic-egress");
    rs_table_set_text(t, 1, "gpu0.nic-egress");
    rs_table_set_double(t, 2, 1.25e-6);
    rs_table_set_double(t, 3, 2.3e9);
    rs_table_set_double(t, 4, 0.98);
    rs_table_set_double(t, 5, 1.0);
    return t;
}

static void
test_features(void)
{
    g_autoptr(RsTable) t = features_table();
    g_autofree char *text = render(t, RS_FORMAT_TABLE);
    g_assert_cmpstr(text, ==,
                    "link             latency us   read      u0\n"
                    "gpu0.nic-egress       1.250  2.300  0.9800\n");
    g_autofree char *csv = render(t, RS_FORMAT_CSV);
    g_assert_cmpstr(csv, ==, "link,latency_s,read_bytes_per_s,u0\n"
                             "gpu0.nic-egress,1.25e-06,2.3e+09,0.9800\n");
    g_autoptr(JsonBuilder) b = json_builder_new();
    rs_table_add_json_array(t, b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autofree char *json = json_to_string(root, FALSE);
    g_assert_cmpstr(json, ==,
                    "[{\"name\":\"gpu0.nic-egress\",\"latency_s\":1.2500000000000001e-06,"
                    "\"read_bytes_per_s\":2300000000.0,\"u0\":0.97999999999999998}]");
}

/* A document that is not an object keeps its data under "items"; no command line recorded
 * gives an empty list. */
static void
test_provenance_array(void)
{
    rs_report_set_command_line(0, NULL);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_array(b);
    json_builder_add_int_value(b, 5);
    json_builder_end_array(b);
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_json_append_full(b, FALSE, out);
    g_assert_cmpstr(out->str, ==,
                    "{\"tool\":\"reshard " RS_VERSION "\",\"schema_version\":1,"
                    "\"command_line\":[],\"items\":[5]}\n");
}

/* JSON has no infinity or NaN: non-finite numbers anywhere in a document (nested objects
 * and arrays too) are written as null, so every parser reads the document (a calibration
 * whose time did not grow with bytes printed "inf" and broke the JSON). */
static void
test_json_non_finite(void)
{
    rs_report_set_command_line(0, NULL);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "bw_bytes_per_s");
    json_builder_add_double_value(b, INFINITY);
    json_builder_set_member_name(b, "fits");
    json_builder_begin_array(b);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "error");
    json_builder_add_double_value(b, NAN);
    json_builder_set_member_name(b, "overhead_s");
    json_builder_add_double_value(b, 0.5);
    json_builder_end_object(b);
    json_builder_add_double_value(b, -INFINITY);
    json_builder_end_array(b);
    json_builder_end_object(b);
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_json_append_full(b, FALSE, out);
    g_assert_cmpstr(out->str, ==,
                    "{\"tool\":\"reshard " RS_VERSION "\",\"schema_version\":1,"
                    "\"command_line\":[],\"bw_bytes_per_s\":null,"
                    "\"fits\":[{\"error\":null,\"overhead_s\":0.5},null]}\n");
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(json_parser_load_from_data(parser, out->str, -1, &error));
    g_assert_no_error(error);
}

/* `reshard run`'s report of a fixed run: two phases, three runs, a prediction with copies
 * modelled; and the same without a prediction. */
static const double run_times_s[] = {0.0021, 0.002, 0.0025};
static const RsRunPhase run_phases[] = {{2, 8192, 0.0015}, {1, 4096, 0.0}};

static RsRunReport
run_report(gboolean predicted)
{
    return (RsRunReport){
        .work = "tensor [64, 64] f32", .strategy = "direct", .transport = "host",
        .n_ranks = 4, .n_transfers = 3, .n_network_messages = 3, .bytes_moved = 12288,
        .local_bytes = 4096, .chunk_bytes = 1048576, .window = 4, .n_runs = 3,
        .run_s = run_times_s, .measured_s = 0.0021, .has_prediction = predicted,
        .predicted_s = 0.0025, .topology = "two-node", .predicted_link_s = 0.0015,
        .predicted_copy_s = 0.0005, .predicted_fixed_s = 0.001, .copies_modelled = TRUE,
        .n_copy_bound_phases = 1, .n_phases = 2, .phases = run_phases, .validated = TRUE,
        .n_checked_elems = 4096, .n_bad_elems = 0, .n_sends = 5, .n_zero_copy = 2,
        .peak_pack_bytes = 2000000, .buffer_bytes = 3000000000};
}

static char *
render_run(gboolean predicted, RsFormat format)
{
    rs_report_set_command_line(0, NULL);
    RsRunReport r = run_report(predicted);
    GString *out = g_string_new(NULL);
    rs_report_run(&r, format, out);
    return g_string_free(out, FALSE);
}

/* One rank, one transfer, no network message: the header's counts in the singular. */
static void
test_run_header_singular(void)
{
    rs_report_set_command_line(0, NULL);
    RsRunReport r = run_report(FALSE);
    r.n_ranks = 1;
    r.n_transfers = 1;
    r.n_network_messages = 1;
    GString *out = g_string_new(NULL);
    rs_report_run(&r, RS_FORMAT_TABLE, out);
    g_autofree char *text = g_string_free(out, FALSE);
    g_assert_nonnull(strstr(text, "plan       direct: 1 transfer, 1 network message, "));
    g_assert_nonnull(strstr(text, "executor   host transport, 1 rank, chunks of "));
}

static void
test_run_text(void)
{
    g_autofree char *text = render_run(TRUE, RS_FORMAT_TABLE);
    g_assert_cmpstr(text, ==,
                    "work       tensor [64, 64] f32\n"
                    "plan       direct: 3 transfers, 3 network messages, 0.0000 GB moved, 0.0000 GB "
                    "local copies\n"
                    "executor   host transport, 4 ranks, chunks of 1048576 bytes, 4 in flight per "
                    "rank, 3.000 GB of buffers\n"
                    "\n"
                    "        measured  predicted   error\n"
                    "time s  0.002100   0.002500  +19.0%\n"
                    "GB/s       0.006      0.005\n"
                    "\n"
                    "phase  messages      GB  measured s   GB/s\n"
                    "0             2  0.0000    0.001500  0.005\n"
                    "1             1  0.0000    0.000000  0.000\n"
                    "\n"
                    "runs       3: 0.002100 0.002000 0.002500 s (the median is reported)\n"
                    "transport  5 send calls, 2 chunks without a pack copy, at most 2.000 MB of pack "
                    "buffers on one rank\n"
                    "validation every destination element checked: 4096 elements correct\n"
                    "prediction first-order estimate (sim/cost.h) of the same plan on topology "
                    "two-node; error = (predicted - measured) / measured\n"
                    "           links 0.001500 s, copies 0.000500 s (the larger in 1 of 2 phases), "
                    "fixed costs 0.001000 s\n");
}

static void
test_run_csv(void)
{
    g_autofree char *text = render_run(TRUE, RS_FORMAT_CSV);
    g_assert_cmpstr(text, ==,
                    "strategy,transport,ranks,transfers,messages,bytes_moved,local_bytes,runs,"
                    "measured_s,predicted_s,error,predicted_link_s,predicted_copy_s,"
                    "predicted_fixed_s,validated,bad_elements,send_calls\n"
                    "direct,host,4,3,3,12288,4096,3,0.0021,0.0025,0.190476,0.0015,0.0005,0.001,"
                    "true,0,5\n");
}

static void
test_run_json(void)
{
    g_autofree char *text = render_run(TRUE, RS_FORMAT_JSON);
    g_assert_cmpstr(text, ==,
                    "{\n"
                    "  \"tool\" : \"reshard " RS_VERSION "\",\n"
                    "  \"schema_version\" : 1,\n"
                    "  \"command_line\" : [],\n"
                    "  \"work\" : \"tensor [64, 64] f32\",\n"
                    "  \"strategy\" : \"direct\",\n"
                    "  \"transport\" : \"host\",\n"
                    "  \"ranks\" : 4,\n"
                    "  \"transfers\" : 3,\n"
                    "  \"messages\" : 3,\n"
                    "  \"bytes_moved\" : 12288,\n"
                    "  \"local_bytes\" : 4096,\n"
                    "  \"chunk_bytes\" : 1048576,\n"
                    "  \"window\" : 4,\n"
                    "  \"measured_s\" : 0.0020999999999999999,\n"
                    "  \"runs_s\" : [\n"
                    "    0.0020999999999999999,\n"
                    "    0.002,\n"
                    "    0.0025000000000000001\n"
                    "  ],\n"
                    "  \"predicted_s\" : 0.0025000000000000001,\n"
                    "  \"error\" : 0.19047619047619058,\n"
                    "  \"topology\" : \"two-node\",\n"
                    "  \"predicted_link_s\" : 0.0015,\n"
                    "  \"predicted_copy_s\" : 0.00050000000000000001,\n"
                    "  \"predicted_fixed_s\" : 0.001,\n"
                    "  \"phases\" : [\n"
                    "    {\n"
                    "      \"messages\" : 2,\n"
                    "      \"bytes\" : 8192,\n"
                    "      \"measured_s\" : 0.0015\n"
                    "    },\n"
                    "    {\n"
                    "      \"messages\" : 1,\n"
                    "      \"bytes\" : 4096,\n"
                    "      \"measured_s\" : 0.0\n"
                    "    }\n"
                    "  ],\n"
                    "  \"validation\" : {\n"
                    "    \"checked\" : true,\n"
                    "    \"elements\" : 4096,\n"
                    "    \"bad_elements\" : 0\n"
                    "  },\n"
                    "  \"send_calls\" : 5,\n"
                    "  \"zero_copy_chunks\" : 2,\n"
                    "  \"peak_pack_bytes\" : 2000000,\n"
                    "  \"buffer_bytes\" : 3000000000\n"
                    "}\n");
}

/* Without a prediction: "-" in the table, empty CSV fields, no JSON members. */
static void
test_run_unpredicted(void)
{
    g_autofree char *text = render_run(FALSE, RS_FORMAT_TABLE);
    const char *table = strstr(text, "\n\n") + 2;
    g_assert_cmpstr(table, ==,
                    "        measured  predicted  error\n"
                    "time s  0.002100          -      -\n"
                    "GB/s       0.006          -\n"
                    "\n"
                    "phase  messages      GB  measured s   GB/s\n"
                    "0             2  0.0000    0.001500  0.005\n"
                    "1             1  0.0000    0.000000  0.000\n"
                    "\n"
                    "runs       3: 0.002100 0.002000 0.002500 s (the median is reported)\n"
                    "transport  5 send calls, 2 chunks without a pack copy, at most 2.000 MB of pack buffers on one rank\n"
                    "validation every destination element checked: 4096 elements correct\n"
                    "prediction none: give --topology (a calibrated one: reshard calibrate)\n");
    g_autofree char *csv = render_run(FALSE, RS_FORMAT_CSV);
    g_assert_cmpstr(strchr(csv, '\n') + 1, ==, "direct,host,4,3,3,12288,4096,3,0.0021,,,,,,true,0,5\n");
    g_autofree char *json = render_run(FALSE, RS_FORMAT_JSON);
    g_assert_null(strstr(json, "predicted"));
    g_assert_null(strstr(json, "\"error\""));
    g_assert_nonnull(strstr(json, "\"measured_s\" : 0.0020999999999999999,\n"));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/report/table/two-by-two/text", test_two_by_two_text);
    g_test_add_func("/report/table/two-by-two/csv", test_two_by_two_csv);
    g_test_add_func("/report/table/two-by-two/json", test_two_by_two_json);
    g_test_add_func("/report/table/kinds/text", test_kinds_text);
    g_test_add_func("/report/table/kinds/csv", test_kinds_csv);
    g_test_add_func("/report/table/kinds/json", test_kinds_json);
    g_test_add_func("/report/table/features", test_features);
    g_test_add_func("/report/provenance/array", test_provenance_array);
    g_test_add_func("/report/json/non-finite", test_json_non_finite);
    g_test_add_func("/report/run/text", test_run_text);
    g_test_add_func("/report/run/header-singular", test_run_header_singular);
    g_test_add_func("/report/run/csv", test_run_csv);
    g_test_add_func("/report/run/json", test_run_json);
    g_test_add_func("/report/run/unpredicted", test_run_unpredicted);
    return g_test_run();
}

/* test-report.c — the one table writer of analysis/ (table.h) and the provenance of the JSON
 * documents (report.h): exact text, CSV and JSON of small tables. */
#include "analysis/report.h"
#include "analysis/table.h"

#include "rs-config.h"

#include <glib.h>

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
    g_test_add_func("/report/provenance/array", test_provenance_array);
    return g_test_run();
}

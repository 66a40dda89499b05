/* test-units.c — parsing of quantities with units. */
#include "base/units.h"
#include "base/dtype.h"
#include "base/text.h"

#include <string.h>

typedef struct {
    const char *text;
    double expected; /* bytes/s, seconds or bytes */
    gint error_code; /* -1 when it parses */
} UnitCase;

static const UnitCase bandwidth_cases[] = {
    {"450 GB/s", 450e9, -1},
    {"400 Gbit/s", 50e9, -1},
    {"400Gbit/s", 50e9, -1},
    {"25 GiB/s", 25.0 * 1073741824.0, -1},
    {"100 Mbit/s", 12.5e6, -1},
    {"1.5 TB/s", 1.5e12, -1},
    {"450 Gb/s", 0, RS_UNITS_ERROR_AMBIGUOUS},
    {"400 Gbps", 0, RS_UNITS_ERROR_AMBIGUOUS},
    {"50 GBps", 0, RS_UNITS_ERROR_AMBIGUOUS},
    {"450", 0, RS_UNITS_ERROR_MISSING},
    {"450 furlongs", 0, RS_UNITS_ERROR_UNKNOWN},
    {"fast", 0, RS_UNITS_ERROR_SYNTAX},
    {"0 GB/s", 0, RS_UNITS_ERROR_RANGE},
    {"-5 GB/s", 0, RS_UNITS_ERROR_RANGE},
    /* kilo's SI spelling: the range message names "1 kB/s", which was an unknown unit. */
    {"1 kB/s", 1e3, -1},
    {"8 kbit/s", 1e3, -1},
    {"0.5 kB/s", 0, RS_UNITS_ERROR_RANGE},
};

static const UnitCase duration_cases[] = {
    {"3.4 us", 3.4e-6, -1},  {"2 ms", 2e-3, -1},     {"1.5 s", 1.5, -1},
    {"500 ns", 500e-9, -1},  {"3 \xc2\xb5s", 3e-6, -1}, {"0 s", 0.0, -1},
    {"3.4", 0, RS_UNITS_ERROR_MISSING}, {"3 hours", 0, RS_UNITS_ERROR_UNKNOWN},
    {"-1 s", 0, RS_UNITS_ERROR_RANGE},
};

static const UnitCase size_cases[] = {
    {"80 GiB", 80.0 * 1073741824.0, -1},
    {"512 MiB", 512.0 * 1048576.0, -1},
    {"1.5 GB", 1.5e9, -1},
    {"4096 B", 4096, -1},
    {"80 Gb", 0, RS_UNITS_ERROR_AMBIGUOUS},
    {"80", 0, RS_UNITS_ERROR_MISSING},
    /* A part of a byte is refused, not rounded away. */
    {"1.5 B", 0, RS_UNITS_ERROR_RANGE},
    {"0.1 KiB", 0, RS_UNITS_ERROR_RANGE},
    {"0.5 KiB", 512, -1},
    /* Decimal sizes whose product with the unit is not exact in a double: 4.1 × 1e9 is
     * 4099999999.9999995, 1.07 × 1e9 is 1070000000.0000001; both are whole byte counts. */
    {"4.1 GB", 4100000000.0, -1},
    {"1.07GB", 1070000000.0, -1},
    {"0.3 MB", 300000.0, -1},
    {"2.51 TB", 2510000000000.0, -1},
    {"4100000000.5 B", 0, RS_UNITS_ERROR_RANGE},
    /* Half a byte stays a fraction where a double still holds it: 2^48 + 0.5 and 2^51 +
     * 0.5 (a tolerance of 8 ulps took the first as whole). */
    {"281474976710656.5 B", 0, RS_UNITS_ERROR_RANGE},
    {"2251799813685248.5 B", 0, RS_UNITS_ERROR_RANGE},
    {"281474976710656 B", 281474976710656.0, -1},
    /* Every unit the hint names; the largest exact size and the first above it. */
    {"3 KB", 3e3, -1},
    {"3 MB", 3e6, -1},
    {"3 TB", 3e12, -1},
    {"3 TiB", 3.0 * 1099511627776.0, -1},
    {"9007199254740991 B", 9007199254740991.0, -1},
    {"9007199254740992 B", 0, RS_UNITS_ERROR_RANGE},
    {"9007199254740993 B", 0, RS_UNITS_ERROR_RANGE}, /* (a double reads it as 2^53) */
    {"8 PiB", 0, RS_UNITS_ERROR_UNKNOWN},
    {"9223372036854775807 B", 0, RS_UNITS_ERROR_RANGE},
    {"-1 B", 0, RS_UNITS_ERROR_RANGE},
    /* C's hexadecimal floats, which g_ascii_strtod() reads, are a typo here. */
    {"0x10 MiB", 0, RS_UNITS_ERROR_SYNTAX},
    {"-0X1 B", 0, RS_UNITS_ERROR_SYNTAX},
};

static void
test_bandwidth(gconstpointer data)
{
    const UnitCase *c = data;
    double v = 0;
    g_autoptr(GError) error = NULL;
    gboolean ok = rs_units_parse_bandwidth(c->text, &v, &error);
    if (c->error_code < 0) {
        g_assert_no_error(error);
        g_assert_cmpfloat_with_epsilon(v, c->expected, c->expected * 1e-12);
    } else {
        g_assert_false(ok);
        g_assert_error(error, RS_UNITS_ERROR, c->error_code);
    }
}

static void
test_duration(gconstpointer data)
{
    const UnitCase *c = data;
    double v = -1;
    g_autoptr(GError) error = NULL;
    gboolean ok = rs_units_parse_duration(c->text, &v, &error);
    if (c->error_code < 0) {
        g_assert_no_error(error);
        g_assert_cmpfloat_with_epsilon(v, c->expected, 1e-15);
    } else {
        g_assert_false(ok);
        g_assert_error(error, RS_UNITS_ERROR, c->error_code);
    }
}

static void
test_size(gconstpointer data)
{
    const UnitCase *c = data;
    guint64 v = 0;
    g_autoptr(GError) error = NULL;
    gboolean ok = rs_units_parse_size(c->text, &v, &error);
    if (c->error_code < 0) {
        g_assert_no_error(error);
        g_assert_cmpuint(v, ==, (guint64)c->expected);
    } else {
        g_assert_false(ok);
        g_assert_error(error, RS_UNITS_ERROR, c->error_code);
    }
}

static void
test_ambiguous_message(void)
{
    double v;
    g_autoptr(GError) error = NULL;
    g_assert_false(rs_units_parse_bandwidth("450 Gb/s", &v, &error));
    g_assert_nonnull(strstr(error->message, "use Gbit/s or GB/s"));
}

/* The hint lists every size unit accepted (it named five of nine). */
static void
test_size_hint_message(void)
{
    guint64 v;
    g_autoptr(GError) error = NULL;
    g_assert_false(rs_units_parse_size("3 EiB", &v, &error));
    g_assert_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_UNKNOWN);
    g_assert_nonnull(strstr(error->message, "B, KB, MB, GB, TB, KiB, MiB, GiB or TiB"));
}

/* The dtypes other tools name (PyTorch, safetensors): unsigned and complex, with sizes. */
static void
test_dtype_spellings(void)
{
    const struct {
        const char *name;
        const char *canonical;
        guint size_bytes;
    } rows[] = {
        {"u32", "u32", 4},        {"uint32", "u32", 4},      {"U64", "u64", 8},
        {"uint64", "u64", 8},     {"c64", "c64", 8},         {"complex64", "c64", 8},
        {"cfloat", "c64", 8},     {"c128", "c128", 16},      {"complex128", "c128", 16},
        {"cdouble", "c128", 16},
    };
    for (guint i = 0; i < G_N_ELEMENTS(rows); i++) {
        g_autoptr(GError) error = NULL;
        RsDtype d;
        g_assert_true(rs_dtype_parse(rows[i].name, &d, &error));
        g_assert_no_error(error);
        g_assert_cmpstr(rs_dtype_get_name(d), ==, rows[i].canonical);
        g_assert_cmpuint(rs_dtype_get_size_bytes(d), ==, rows[i].size_bytes);
        g_assert_cmpuint(rs_dtype_get_n_bytes(d, 3), ==, 3 * rows[i].size_bytes);
    }
}

/* Names from input printed in messages: control bytes, C1 controls and invalid UTF-8
 * spelled out, printable UTF-8 (and LF, tab, backslash) kept. */
static void
test_text_escape(void)
{
    const struct {
        const char *in, *out;
    } cases[] = {
        {"plain name", "plain name"},
        {"ab\x1b[31mcd", "ab\\x1b[31mcd"},
        {"a\rb\x7f", "a\\x0db\\x7f"},
        {"line\nnext\ttab \\ back", "line\nnext\ttab \\ back"},
        {"caf\xc3\xa9 \xe2\x80\xa6", "caf\xc3\xa9 \xe2\x80\xa6"},
        {"bad \xff\xfe end", "bad \\xff\\xfe end"},
        {"c1 \xc2\x9b[0m", "c1 \\u009b[0m"},
        {"cut \xe2\x80", "cut \\xe2\\x80"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *got = rs_text_escape(cases[i].in);
        g_assert_cmpstr(got, ==, cases[i].out);
    }
    g_autofree char *empty = rs_text_escape(NULL);
    g_assert_cmpstr(empty, ==, "");
}

/* The first byte that makes a file not text: its offset, line, column (in characters). */
static void
test_text_find_bad(void)
{
    const struct {
        const char *text;
        gsize len;
        gboolean found;
        gsize offset;
        guint line, column;
        guchar byte;
        gboolean bad_utf8;
    } cases[] = {
        {"a: 1\nb: 2\n", 10, FALSE, 0, 0, 0, 0, FALSE},
        {"\x00\x01" "bin", 5, TRUE, 0, 1, 1, 0x00, FALSE},
        {"name: caf\xe9\n", 11, TRUE, 9, 1, 10, 0xe9, TRUE},
        {"x: \xc3\xa9\ny: \xc3\xa9\xff", 12, TRUE, 11, 2, 5, 0xff, TRUE},
        {"t\tr\r\nesc \x1b", 10, TRUE, 9, 2, 5, 0x1b, FALSE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        gsize offset = 0;
        guint line = 0, column = 0;
        guchar byte = 0;
        gboolean bad_utf8 = FALSE;
        gboolean found = rs_text_find_bad(cases[i].text, cases[i].len, &offset, &line, &column,
                                          &byte, &bad_utf8);
        g_assert_cmpint(found, ==, cases[i].found);
        if (!found)
            continue;
        g_assert_cmpuint(offset, ==, cases[i].offset);
        g_assert_cmpuint(line, ==, cases[i].line);
        g_assert_cmpuint(column, ==, cases[i].column);
        g_assert_cmpuint(byte, ==, cases[i].byte);
        g_assert_cmpint(bad_utf8, ==, cases[i].bad_utf8);
    }
}

/* The kind of values of every dtype: what a conversion keeps (layout/refit.c). */
static void
test_dtype_kinds(void)
{
    const struct {
        RsDtype dtype;
        RsDtypeKind kind;
    } cases[] = {
        {RS_DTYPE_F64, RS_DTYPE_KIND_FLOAT},      {RS_DTYPE_F32, RS_DTYPE_KIND_FLOAT},
        {RS_DTYPE_BF16, RS_DTYPE_KIND_FLOAT},     {RS_DTYPE_F16, RS_DTYPE_KIND_FLOAT},
        {RS_DTYPE_FP8_E4M3, RS_DTYPE_KIND_FLOAT}, {RS_DTYPE_FP8_E5M2, RS_DTYPE_KIND_FLOAT},
        {RS_DTYPE_MXFP4, RS_DTYPE_KIND_FLOAT},    {RS_DTYPE_C64, RS_DTYPE_KIND_COMPLEX},
        {RS_DTYPE_C128, RS_DTYPE_KIND_COMPLEX},   {RS_DTYPE_I64, RS_DTYPE_KIND_INTEGER},
        {RS_DTYPE_I32, RS_DTYPE_KIND_INTEGER},    {RS_DTYPE_I8, RS_DTYPE_KIND_INTEGER},
        {RS_DTYPE_U8, RS_DTYPE_KIND_INTEGER},     {RS_DTYPE_U32, RS_DTYPE_KIND_INTEGER},
        {RS_DTYPE_U64, RS_DTYPE_KIND_INTEGER},
    };
    g_assert_cmpuint(G_N_ELEMENTS(cases), ==, RS_DTYPE_N);
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
        g_assert_cmpint(rs_dtype_get_kind(cases[i].dtype), ==, cases[i].kind);
    g_assert_cmpstr(rs_dtype_get_kind_name(RS_DTYPE_KIND_COMPLEX), ==, "complex");
}

/* Levenshtein distances, and the cap: kitten -> sitting is 3 (two substitutions, one
 * insertion); a length gap over the cap and a row over it both answer cap + 1. */
static void
test_text_edit_distance(void)
{
    g_assert_cmpuint(rs_text_edit_distance("kitten", "sitting", 5), ==, 3);
    g_assert_cmpuint(rs_text_edit_distance("kitten", "sitting", 2), ==, 3);
    g_assert_cmpuint(rs_text_edit_distance("lm_heads.weight", "lm_head.weight", 2), ==, 1);
    g_assert_cmpuint(rs_text_edit_distance("", "abc", 5), ==, 3);
    g_assert_cmpuint(rs_text_edit_distance("abc", "abc", 0), ==, 0);
    g_assert_cmpuint(rs_text_edit_distance("abcdef", "ab", 3), ==, 4);
    g_assert_cmpuint(rs_text_edit_distance("abcd", "wxyz", 2), ==, 3);
    g_assert_cmpuint(rs_text_edit_distance("flaw", "lawn", 4), ==, 2);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (guint i = 0; i < G_N_ELEMENTS(bandwidth_cases); i++) {
        g_autofree char *path = g_strdup_printf("/units/bandwidth/%u", i);
        g_test_add_data_func(path, &bandwidth_cases[i], test_bandwidth);
    }
    for (guint i = 0; i < G_N_ELEMENTS(duration_cases); i++) {
        g_autofree char *path = g_strdup_printf("/units/duration/%u", i);
        g_test_add_data_func(path, &duration_cases[i], test_duration);
    }
    for (guint i = 0; i < G_N_ELEMENTS(size_cases); i++) {
        g_autofree char *path = g_strdup_printf("/units/size/%u", i);
        g_test_add_data_func(path, &size_cases[i], test_size);
    }
    g_test_add_func("/units/bandwidth/ambiguous-message", test_ambiguous_message);
    g_test_add_func("/units/size/hint-message", test_size_hint_message);
    g_test_add_func("/units/dtype/spellings", test_dtype_spellings);
    g_test_add_func("/units/dtype/kinds", test_dtype_kinds);
    g_test_add_func("/units/text/escape", test_text_escape);
    g_test_add_func("/units/text/edit-distance", test_text_edit_distance);
    g_test_add_func("/units/text/find-bad", test_text_find_bad);
    return g_test_run();
}

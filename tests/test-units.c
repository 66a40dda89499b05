/* test-units.c — parsing of quantities with units. */
#include "base/units.h"
#include "base/dtype.h"

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
    g_test_add_func("/units/dtype/spellings", test_dtype_spellings);
    return g_test_run();
}

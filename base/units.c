/* units.c — quantities with units. The text is split into a number (g_ascii_strtod, so
 * the locale never changes the decimal point) and a unit looked up in a table per kind.
 * Spellings that engineers use for both bits and bytes are rejected with a hint rather
 * than guessed: a factor-8 error in a link bandwidth silently ruins every prediction. */
#include "base/units.h"

#include <math.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-units-error-quark, rs_units_error)
/* clang-format on */

typedef struct {
    const char *unit;
    double factor;
} UnitEntry;

static const UnitEntry bandwidth_units[] = {
    {"B/s", 1.0},           {"KB/s", 1e3},           {"MB/s", 1e6},
    {"GB/s", 1e9},          {"TB/s", 1e12},          {"KiB/s", 1024.0},
    {"MiB/s", 1048576.0},   {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0},
    {"bit/s", 1.0 / 8},     {"Kbit/s", 1e3 / 8},     {"Mbit/s", 1e6 / 8},
    {"Gbit/s", 1e9 / 8},    {"Tbit/s", 1e12 / 8},
    /* The SI prefix's own spelling (kilo is k): the range message says "1 kB/s". */
    {"kB/s", 1e3},          {"kbit/s", 1e3 / 8},
};

/* Spellings with two readings; each is rejected with the two explicit forms. */
static const char *const ambiguous_bandwidth[] = {
    "b/s", "Kb/s", "kb/s", "Mb/s", "mb/s", "Gb/s", "gb/s", "Tb/s", "tb/s", "bps", "Kbps",
    "kbps", "Mbps", "mbps", "Gbps", "gbps", "Tbps", "tbps", "KBps", "MBps", "GBps", "TBps",
};

static const UnitEntry duration_units[] = {
    {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6}, {"ns", 1e-9},
};

static const UnitEntry size_units[] = {
    {"B", 1.0},          {"KB", 1e3},          {"MB", 1e6},          {"GB", 1e9},
    {"TB", 1e12},        {"KiB", 1024.0},      {"MiB", 1048576.0},   {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
};

static const char *const ambiguous_size[] = {"b", "Kb", "kb", "Mb", "mb", "Gb", "gb", "Tb", "tb"};

/* Splits "450 GB/s" into 450 and "GB/s". */
static gboolean
split_number_unit(const char *text, double *value_out, const char **unit_out, GError **error)
{
    const char *p = text;
    while (g_ascii_isspace(*p))
        p++;
    /* g_ascii_strtod() also reads C's hexadecimal floats ("0x10" is 16): a typo here. */
    const char *digits = p + (*p == '+' || *p == '-');
    if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_SYNTAX,
                    "\"%s\": a decimal number is expected, not hexadecimal", text);
        return FALSE;
    }
    char *end = NULL;
    double value = g_ascii_strtod(p, &end);
    if (end == p) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_SYNTAX,
                    "\"%s\": expected a number followed by a unit", text);
        return FALSE;
    }
    if (!isfinite(value)) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_RANGE, "\"%s\": not a finite number",
                    text);
        return FALSE;
    }
    while (g_ascii_isspace(*end))
        end++;
    *value_out = value;
    *unit_out = end;
    return TRUE;
}

static gboolean
unit_matches(const char *unit, const char *candidate)
{
    /* Compare up to trailing white space. */
    size_t n = strlen(candidate);
    if (strncmp(unit, candidate, n) != 0)
        return FALSE;
    for (const char *p = unit + n; *p; p++)
        if (!g_ascii_isspace(*p))
            return FALSE;
    return TRUE;
}

static gboolean
parse_with_table(const char *text, const char *kind, const UnitEntry *table, guint n_table,
                 const char *const *ambiguous, guint n_ambiguous, const char *hint,
                 double *value_out, GError **error)
{
    double value;
    const char *unit;
    if (!split_number_unit(text, &value, &unit, error))
        return FALSE;
    if (*unit == '\0') {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_MISSING,
                    "%s \"%s\": missing unit (%s)", kind, text, hint);
        return FALSE;
    }
    for (guint i = 0; i < n_ambiguous; i++) {
        if (unit_matches(unit, ambiguous[i])) {
            g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_AMBIGUOUS,
                        "%s \"%s\": ambiguous, %s", kind, text, hint);
            return FALSE;
        }
    }
    for (guint i = 0; i < n_table; i++) {
        if (unit_matches(unit, table[i].unit)) {
            *value_out = value * table[i].factor;
            return TRUE;
        }
    }
    g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_UNKNOWN, "%s \"%s\": unknown unit \"%s\" (%s)",
                kind, text, unit, hint);
    return FALSE;
}

gboolean
rs_units_parse_bandwidth(const char *text, double *bw_bytes_per_s_out, GError **error)
{
    g_return_val_if_fail(text != NULL && bw_bytes_per_s_out != NULL, FALSE);
    double v;
    if (!parse_with_table(text, "bandwidth", bandwidth_units, G_N_ELEMENTS(bandwidth_units),
                          ambiguous_bandwidth, G_N_ELEMENTS(ambiguous_bandwidth),
                          "use Gbit/s or GB/s", &v, error))
        return FALSE;
    if (!(v > 0)) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_RANGE,
                    "bandwidth \"%s\": must be greater than zero", text);
        return FALSE;
    }
    if (v < RS_UNITS_MIN_BANDWIDTH_BYTES_PER_S || v > RS_UNITS_MAX_BANDWIDTH_BYTES_PER_S) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_RANGE,
                    "bandwidth \"%s\": %s the %s accepted, %s", text,
                    v < RS_UNITS_MIN_BANDWIDTH_BYTES_PER_S ? "below" : "above",
                    v < RS_UNITS_MIN_BANDWIDTH_BYTES_PER_S ? "smallest" : "largest",
                    v < RS_UNITS_MIN_BANDWIDTH_BYTES_PER_S ? "1 kB/s" : "1 PB/s (1000 TB/s)");
        return FALSE;
    }
    *bw_bytes_per_s_out = v;
    return TRUE;
}

gboolean
rs_units_parse_duration(const char *text, double *duration_s_out, GError **error)
{
    g_return_val_if_fail(text != NULL && duration_s_out != NULL, FALSE);
    double v;
    if (!parse_with_table(text, "duration", duration_units, G_N_ELEMENTS(duration_units), NULL, 0,
                          "use s, ms, us or ns", &v, error))
        return FALSE;
    if (v < 0) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_RANGE,
                    "duration \"%s\": must not be negative", text);
        return FALSE;
    }
    if (v > RS_UNITS_MAX_DURATION_S) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_RANGE,
                    "duration \"%s\": above the largest accepted, 1000000 s (11.6 days)", text);
        return FALSE;
    }
    *duration_s_out = v;
    return TRUE;
}

gboolean
rs_units_parse_size(const char *text, guint64 *size_bytes_out, GError **error)
{
    g_return_val_if_fail(text != NULL && size_bytes_out != NULL, FALSE);
    double v;
    if (!parse_with_table(text, "size", size_units, G_N_ELEMENTS(size_units), ambiguous_size,
                          G_N_ELEMENTS(ambiguous_size),
                          "use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB for bytes", &v, error))
        return FALSE;
    if (v < 0) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_RANGE,
                    "size \"%s\": must not be negative", text);
        return FALSE;
    }
    /* The number is read as a double, whose whole numbers are exact below 2^53 (2^53 + 1
     * already reads as 2^53, so 2^53 itself is refused). */
    if (v > RS_UNITS_MAX_SIZE_BYTES) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_RANGE,
                    "size \"%s\": above the largest accepted, 2^53 - 1 bytes "
                    "(9007199254740991 B, just under 8192 TiB), up to which every whole "
                    "number of bytes is read exactly", text);
        return FALSE;
    }
    /* A part of a byte is a typo ("1.5 B", "0.1 KiB"), not something to round away. But
     * number × factor is rounded to a double: "4.1 GB" reads as 4099999999.9999995, a
     * whole number off by no more than the reading's and the product's rounding (under two
     * units in the last place of v), which is taken as that whole number. */
    double whole = nearbyint(v);
    /* Two units in the last place of v (at most a quarter byte, so that from 2^51 up, where
     * a half byte is one unit, only whole numbers pass). */
    double tolerance = MIN(2 * (nextafter(v, INFINITY) - v), 0.25);
    if (fabs(v - whole) > tolerance) {
        g_set_error(error, RS_UNITS_ERROR, RS_UNITS_ERROR_RANGE,
                    "size \"%s\": %.15g bytes is not a whole number of bytes", text, v);
        return FALSE;
    }
    *size_bytes_out = (guint64)whole;
    return TRUE;
}

char *
rs_units_format_bandwidth(double bw_bytes_per_s)
{
    return g_strdup_printf("%.4g GB/s", bw_bytes_per_s / 1e9);
}

char *
rs_units_format_duration(double duration_s)
{
    double a = fabs(duration_s);
    if (a >= 1.0 || a == 0.0)
        return g_strdup_printf("%.3g s", duration_s);
    if (a >= 1e-3)
        return g_strdup_printf("%.3g ms", duration_s * 1e3);
    if (a >= 1e-6)
        return g_strdup_printf("%.3g us", duration_s * 1e6);
    return g_strdup_printf("%.3g ns", duration_s * 1e9);
}

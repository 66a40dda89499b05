/* stats.h — order statistics of measured times: the comparator every sort of doubles uses
 * and the median the executor, calibration and the benchmarks report.
 *
 * One definition of "median" for the whole project: the lower median, element (n - 1) / 2 of
 * the values sorted in increasing order, so that it is always one of the measured values
 * (the executor picks the run whose trace it keeps by comparing against it).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * rs_stats_compare_double:
 * @a: pointer to a double
 * @b: pointer to a double
 *
 * A GCompareFunc (also usable with qsort() and g_array_sort()) ordering doubles increasingly.
 * NaN compares equal to everything, as in the three comparators it replaces; callers sort
 * measured times, which are never NaN.
 *
 * Returns: -1 if *a < *b, 1 if *a > *b, 0 otherwise.
 */
gint rs_stats_compare_double(gconstpointer a, gconstpointer b);

/**
 * rs_stats_median:
 * @values: (array length=n_values): the values, unchanged (a sorted copy is made)
 * @n_values: number of elements of @values; 0 allowed
 *
 * The lower median: element (n_values - 1) / 2 of @values sorted increasingly (for an even
 * count, the lower of the two middle values). O(n log n), allocates n doubles.
 *
 * Returns: the median, or 0.0 when @n_values is 0.
 */
double rs_stats_median(const double *values, guint n_values);

G_END_DECLS

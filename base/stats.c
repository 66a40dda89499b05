/* stats.c — the comparator of doubles and the lower median; see stats.h. */
#include "base/stats.h"

#include <stdlib.h>

gint
rs_stats_compare_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double
rs_stats_median(const double *values, guint n_values)
{
    if (n_values == 0)
        return 0.0;
    g_autofree double *sorted = g_memdup2(values, n_values * sizeof(double));
    qsort(sorted, n_values, sizeof(double), rs_stats_compare_double);
    return sorted[(n_values - 1) / 2];
}

/* test-stats.c — the comparator of doubles and the lower median of base/stats.h. */
#include "base/stats.h"

#include <stdlib.h>
#include <string.h>

static void
test_compare(void)
{
    const double one = 1.0, two = 2.0, minus = -0.5, also_one = 1.0;
    g_assert_cmpint(rs_stats_compare_double(&one, &two), ==, -1);
    g_assert_cmpint(rs_stats_compare_double(&two, &one), ==, 1);
    g_assert_cmpint(rs_stats_compare_double(&one, &also_one), ==, 0);
    g_assert_cmpint(rs_stats_compare_double(&minus, &one), ==, -1);

    double v[] = {3.5, -1.0, 2.25, 0.0, 2.25, 10.0};
    const double sorted[] = {-1.0, 0.0, 2.25, 2.25, 3.5, 10.0};
    qsort(v, G_N_ELEMENTS(v), sizeof(double), rs_stats_compare_double);
    for (guint i = 0; i < G_N_ELEMENTS(v); i++)
        g_assert_cmpfloat(v[i], ==, sorted[i]);
}

/* One row per case: the values, their count and the lower median. */
typedef struct {
    const char *name;
    double values[6];
    guint n_values;
    double median;
} MedianRow;

static const MedianRow median_rows[] = {
    {"empty", {0}, 0, 0.0},
    {"one", {4.5}, 1, 4.5},
    {"two-takes-lower", {9.0, 1.0}, 2, 1.0},
    {"three", {3.0, 1.0, 2.0}, 3, 2.0},
    {"four-takes-lower", {0.4, 0.1, 0.3, 0.2}, 4, 0.2},
    {"five-with-ties", {7.0, 7.0, 1.0, 7.0, 2.0}, 5, 7.0},
    {"six", {6.0, 5.0, 4.0, 3.0, 2.0, 1.0}, 6, 3.0},
};

static void
test_median_row(gconstpointer data)
{
    const MedianRow *row = data;
    double copy[6];
    memcpy(copy, row->values, sizeof copy);
    g_assert_cmpfloat(rs_stats_median(copy, row->n_values), ==, row->median);
    /* The input is left as it was. */
    for (guint i = 0; i < row->n_values; i++)
        g_assert_cmpfloat(copy[i], ==, row->values[i]);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/stats/compare-double", test_compare);
    for (guint i = 0; i < G_N_ELEMENTS(median_rows); i++) {
        g_autofree char *path = g_strdup_printf("/stats/median/%s", median_rows[i].name);
        g_test_add_data_func(path, &median_rows[i], test_median_row);
    }
    return g_test_run();
}

/* test-stats.c — the comparator of doubles and the lower median of base/stats.h; the
 * time-left estimate of base/progress.h. */
#include "base/progress.h"
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

/* A job sampled every 0.25 s from @from_s to @to_s (included) at @rate of its work per
 * second, from @start_fraction at @from_s. The rates are powers of two and the times
 * multiples of 0.25 s, so every fraction and every estimate below is exact. */
static double
run_job(RsProgressHistory *h, double from_s, double to_s, double start_fraction, double rate)
{
    double f = start_fraction;
    for (double t = from_s + 0.25; t <= to_s; t += 0.25) {
        f = start_fraction + (t - from_s) * rate;
        rs_progress_history_add(h, t, f);
    }
    return f;
}

/* At a constant rate the estimate is the average rate's: (1 - f) / r. */
static void
test_progress_constant(void)
{
    RsProgressHistory h;
    rs_progress_history_init(&h);
    double f = run_job(&h, 0, 16, 0, 1.0 / 64);
    g_assert_cmpfloat(f, ==, 0.25);
    double window_s = -1;
    /* 16 s: the window is max(16 / 4, 5) = 5 s: the samples are whole seconds apart. */
    g_assert_cmpfloat(rs_progress_seconds_left(&h, 0.05, &window_s), ==, 48.0);
    g_assert_cmpfloat(window_s, ==, 5.0);
}

/* A job at one rate to @switch_s, then at another to @now_s: the estimate follows the recent
 * rate, not the average since the start. */
typedef struct {
    const char *name;
    double rate_before, switch_s, rate_after, now_s;
    double fraction, left_s, window_s; /* expected */
} TwoRates;

static const TwoRates two_rates[] = {
    /* The default's nccl-broadcast, in small: fast to 31/32 of its bytes in 31 s, then 32
     * times slower. At 47 s the window is 47 / 4 = 11.75 s, back to the sample at 35 s (the
     * kept ones are whole seconds apart): 12/1024 gained in 12 s, 16 s left, which is the
     * truth; the average rate since the start says 47 × (1 − f) / f = 0.75 s. */
    {"slowdown", 1.0 / 32, 31, 1.0 / 1024, 47, 0.984375, 16.0, 12.0},
    /* A slow start, then fast: at 100 s the window is 25 s, back to 75 s: 25/128 gained in
     * 25 s, so (1 − f) × 128 left, f = 60/4096 + 40/128. */
    {"speedup", 1.0 / 4096, 60, 1.0 / 128, 100, 60.0 / 4096 + 40.0 / 128,
     (1 - (60.0 / 4096 + 40.0 / 128)) * 128, 25.0},
};

static void
test_progress_two_rates(gconstpointer data)
{
    const TwoRates *row = data;
    RsProgressHistory h;
    rs_progress_history_init(&h);
    double f = run_job(&h, 0, row->switch_s, 0, row->rate_before);
    f = run_job(&h, row->switch_s, row->now_s, f, row->rate_after);
    g_assert_cmpfloat(f, ==, row->fraction);
    double window_s = -1;
    g_assert_cmpfloat(rs_progress_seconds_left(&h, 0.05, &window_s), ==, row->left_s);
    g_assert_cmpfloat(window_s, ==, row->window_s);
}

/* After the ring wraps (160 samples, 1 s apart) and at the window's cap of 120 s. */
static void
test_progress_long(void)
{
    RsProgressHistory h;
    rs_progress_history_init(&h);
    double f = run_job(&h, 0, 300, 0, 1.0 / 512);
    double window_s = -1;
    /* Window 75 s: back to the sample at 225 s. */
    g_assert_cmpfloat(rs_progress_seconds_left(&h, 0.05, &window_s), ==, (1 - f) * 512);
    g_assert_cmpfloat(window_s, ==, 75.0);
    RsProgressHistory g;
    rs_progress_history_init(&g);
    f = run_job(&g, 0, 600, 0, 1.0 / 1024);
    /* Window min(150, 120) = 120 s: the sample at 480 s, which the ring still holds (it
     * holds 441 to 600 s). */
    g_assert_cmpfloat(rs_progress_seconds_left(&g, 0.05, &window_s), ==, (1 - f) * 1024);
    g_assert_cmpfloat(window_s, ==, 120.0);
}

/* Too early (-1), done (0), and stalled over the whole window (-2). */
static void
test_progress_edges(void)
{
    RsProgressHistory h;
    rs_progress_history_init(&h);
    g_assert_cmpfloat(rs_progress_seconds_left(&h, 0.05, NULL), ==, -1.0);
    double f = run_job(&h, 0, 10, 0, 1.0 / 256);
    g_assert_cmpfloat(f, <, 0.05);
    g_assert_cmpfloat(rs_progress_seconds_left(&h, 0.05, NULL), ==, -1.0);
    /* Nothing gained from 10 s to 40 s: the window (10 s) holds no progress. */
    run_job(&h, 10, 40, f, 0.0);
    g_assert_cmpfloat(rs_progress_seconds_left(&h, 0.0, NULL), ==, -2.0);
    /* Done: 0 s left; a fraction past 1 counts as 1. */
    rs_progress_history_add(&h, 41, 1.5);
    g_assert_cmpfloat(rs_progress_seconds_left(&h, 0.05, NULL), ==, 0.0);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/stats/compare-double", test_compare);
    g_test_add_func("/stats/progress/constant", test_progress_constant);
    for (guint i = 0; i < G_N_ELEMENTS(two_rates); i++) {
        g_autofree char *path = g_strdup_printf("/stats/progress/%s", two_rates[i].name);
        g_test_add_data_func(path, &two_rates[i], test_progress_two_rates);
    }
    g_test_add_func("/stats/progress/long", test_progress_long);
    g_test_add_func("/stats/progress/edges", test_progress_edges);
    for (guint i = 0; i < G_N_ELEMENTS(median_rows); i++) {
        g_autofree char *path = g_strdup_printf("/stats/median/%s", median_rows[i].name);
        g_test_add_data_func(path, &median_rows[i], test_median_row);
    }
    return g_test_run();
}

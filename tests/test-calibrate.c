/* test-calibrate.c — the calibration fit (exec/calibrate.h) on synthetic points whose
 * parameters are known, the topology it writes, and the chunk term of the first-order cost
 * model (sim/cost.h) that reads it back. */
#include "exec/calibrate.h"
#include "layout/refit.h"
#include "plan/plan.h"
#include "sim/cost.h"
#include "sim/flow-sim.h"

#include <math.h>
#include <string.h>

/* The default sweep's shape at K = 4 (receivers also send) and K = 2 (own senders): sizes
 * 4 KiB, 64 KiB, 4 MiB, 32 MiB, P = 1 and 2; measured_s from the three-term model. */
static RsCalibration
synthetic(double overhead_s, double chunk_overhead_s, double bw_bytes_per_s, guint64 chunk)
{
    RsCalibration cal = {0};
    cal.n_ranks = 4;
    cal.concurrency = 4;
    cal.chunk_bytes = chunk;
    cal.points = g_array_new(FALSE, TRUE, sizeof(RsCalibratePoint));
    static const guint64 sizes[] = {4096, 65536, 4194304, 33554432};
    static const guint ks[] = {2, 4};
    for (guint ki = 0; ki < G_N_ELEMENTS(ks); ki++)
        for (guint peers = 1; peers <= 2; peers++)
            for (guint si = 0; si < G_N_ELEMENTS(sizes); si++) {
                RsCalibratePoint p = {ks[ki], ks[ki] == 2, peers, sizes[si], 0, 0};
                double m = rs_calibrate_point_get_messages(&p);
                double c = (double)rs_calibrate_point_get_chunks(&p, chunk);
                p.measured_s = overhead_s * m + chunk_overhead_s * c +
                               (double)peers * (double)sizes[si] / bw_bytes_per_s;
                g_array_append_val(cal.points, p);
            }
    return cal;
}

/* Chunks per rank: m · ⌈S / chunk⌉; receivers that also send count both directions. */
static void
test_chunks(void)
{
    RsCalibratePoint own = {2, TRUE, 2, 33554432, 0, 0};
    g_assert_cmpuint(rs_calibrate_point_get_messages(&own), ==, 2);
    g_assert_cmpuint(rs_calibrate_point_get_chunks(&own, 0), ==, 2 * 8);
    g_assert_cmpuint(rs_calibrate_point_get_chunks(&own, 5 << 20), ==, 2 * 7);
    RsCalibratePoint both = {4, FALSE, 2, 4096, 0, 0};
    g_assert_cmpuint(rs_calibrate_point_get_messages(&both), ==, 4);
    g_assert_cmpuint(rs_calibrate_point_get_chunks(&both, 0), ==, 4);
}

/* Points made by the model are fitted back exactly, error 0: 17 us per message, 25 us per
 * 4 MiB chunk, 1,700 GB/s (about what the H200 run suggests for cuda-local). */
static void
test_fit_recovers(void)
{
    RsCalibration cal = synthetic(17e-6, 25e-6, 1.7e12, 4 << 20);
    rs_calibration_fit(&cal);
    g_assert_cmpuint(cal.fits->len, ==, 2);
    for (guint f = 0; f < cal.fits->len; f++) {
        const RsCalibrateFit *fit = &g_array_index(cal.fits, RsCalibrateFit, f);
        g_assert_cmpfloat_with_epsilon(fit->overhead_s, 17e-6, 1e-12);
        g_assert_cmpfloat_with_epsilon(fit->chunk_overhead_s, 25e-6, 1e-12);
        g_assert_cmpfloat_with_epsilon(fit->bw_bytes_per_s / 1.7e12, 1.0, 1e-6);
        g_assert_cmpfloat(fit->rms_error, <, 1e-9);
    }
    g_assert_cmpuint(cal.concurrency, ==, 4);
    g_assert_cmpfloat_with_epsilon(cal.chunk_overhead_s, 25e-6, 1e-12);
    rs_calibration_clear(&cal);
}

/* No per-chunk cost: the fit finds none (the two-term model of before, exactly). */
static void
test_fit_no_chunk_cost(void)
{
    RsCalibration cal = synthetic(20e-6, 0, 5e9, 4 << 20);
    rs_calibration_fit(&cal);
    g_assert_cmpfloat_with_epsilon(cal.overhead_s, 20e-6, 1e-12);
    g_assert_cmpfloat(fabs(cal.chunk_overhead_s), <, 1e-12);
    g_assert_cmpfloat_with_epsilon(cal.bw_bytes_per_s / 5e9, 1.0, 1e-6);
    rs_calibration_clear(&cal);
}

/* Every message one chunk (a chunk of 64 MiB): messages and chunks cannot be told apart,
 * and the fit keeps the per-message term alone, with their sum. */
static void
test_fit_single_chunk(void)
{
    RsCalibration cal = synthetic(17e-6, 25e-6, 1.7e12, 64 << 20);
    rs_calibration_fit(&cal);
    g_assert_cmpfloat_with_epsilon(cal.overhead_s, 42e-6, 1e-12);
    g_assert_cmpfloat(cal.chunk_overhead_s, ==, 0.0);
    g_assert_cmpfloat(cal.rms_error, <, 1e-9);
    rs_calibration_clear(&cal);
}

/* rs_calibration_fit_terms(…, FALSE): the two-term fit of the same points (bench-exec's comparison):
 * chunk overhead 0, and an overhead and bandwidth that absorb it. */
static void
test_fit_without_chunk_term(void)
{
    RsCalibration cal = synthetic(17e-6, 25e-6, 1.7e12, 4 << 20);
    rs_calibration_fit_terms(&cal, FALSE);
    g_assert_cmpfloat(cal.chunk_overhead_s, ==, 0.0);
    g_assert_cmpfloat(cal.overhead_s, >, 17e-6);
    g_assert_cmpfloat(cal.rms_error, >, 0.01); /* the model lacks the chunk term */
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) two_term = rs_calibration_load_topology(&cal, "t2", NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(rs_topology_get_chunk_overhead_s(two_term, NULL), ==, 0.0);
    rs_calibration_fit_terms(&cal, TRUE);
    g_assert_cmpfloat_with_epsilon(cal.chunk_overhead_s, 25e-6, 1e-12);
    g_autoptr(RsTopology) three_term = rs_calibration_load_topology(&cal, "t3", NULL, &error);
    g_assert_no_error(error);
    guint64 chunk = 0;
    g_assert_cmpfloat_with_epsilon(rs_topology_get_chunk_overhead_s(three_term, &chunk), 25e-6,
                                   1e-12);
    g_assert_cmpuint(chunk, ==, 4 << 20);
    rs_calibration_clear(&cal);
}

/* A term that would come out negative is held at 0 (times that fall with size, as noise
 * can make them): no parameter is ever negative. */
static void
test_fit_nonnegative(void)
{
    RsCalibration cal = synthetic(30e-6, 0, 5e9, 4 << 20);
    for (guint i = 0; i < cal.points->len; i++) {
        RsCalibratePoint *p = &g_array_index(cal.points, RsCalibratePoint, i);
        if (p->size_bytes == 33554432)
            p->measured_s *= 0.7; /* large messages faster than the model: chunk cost < 0 */
    }
    rs_calibration_fit(&cal);
    for (guint f = 0; f < cal.fits->len; f++) {
        const RsCalibrateFit *fit = &g_array_index(cal.fits, RsCalibrateFit, f);
        g_assert_cmpfloat(fit->overhead_s, >=, 0);
        g_assert_cmpfloat(fit->chunk_overhead_s, >=, 0);
        g_assert_cmpfloat(fit->bw_bytes_per_s, >, 0);
    }
    rs_calibration_clear(&cal);
}

/* The topology written holds the chunk term with its chunk, and the first-order model
 * charges it: one 10 MiB message from rank 0 to 1 at 1 GB/s, chunks of 4 MiB (3
 * operations): each rank's fixed costs are its overhead 5 us + 3 × 7 us = 26 us. */
static void
test_topology_and_cost(void)
{
    RsCalibration cal = synthetic(5e-6, 7e-6, 1e9, 4 << 20);
    rs_calibration_fit(&cal);
    g_autofree char *yaml = rs_calibration_to_topology(&cal, "synthetic", NULL);
    g_assert_nonnull(strstr(yaml, "  chunk_overhead: 7 us"));
    g_assert_nonnull(strstr(yaml, "  chunk_size: 4194304 B"));
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) topo = rs_topology_load_string(yaml, "synthetic.yaml", NULL, &error);
    g_assert_no_error(error);
    guint64 chunk = 0;
    g_assert_cmpfloat_with_epsilon(rs_topology_get_chunk_overhead_s(topo, &chunk), 7e-6, 1e-15);
    g_assert_cmpuint(chunk, ==, 4 << 20);
    g_assert_cmpuint(rs_topology_count_chunks(topo, 10 << 20, 0), ==, 3);
    g_assert_cmpuint(rs_topology_count_chunks(topo, 10 << 20, 1 << 20), ==, 10);
    g_assert_cmpuint(rs_topology_count_chunks(topo, 0, 0), ==, 0);

    const gint64 shape[] = {10 << 20};
    const guint32 src_ranks[] = {0}, dst_ranks[] = {1};
    g_autoptr(RsLayout) src = rs_layout_new_replicated(1, shape, src_ranks, 1);
    g_autoptr(RsLayout) dst = rs_layout_new_replicated(1, shape, dst_ranks, 1);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_U8, src, dst, &error));
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    RsCostEstimate est;
    g_assert_true(rs_cost_estimate(plan, topo, &est, &error));
    double link_s = (double)(10 << 20) / 1e9;
    g_assert_cmpfloat_with_epsilon(est.link_s, link_s, 1e-15);
    g_assert_cmpfloat_with_epsilon(est.latency_s, 5e-6 + 3 * 7e-6, 1e-15);
    g_assert_cmpfloat_with_epsilon(est.predicted_s, link_s + 26e-6, 1e-15);
    /* Chunks of 1 MiB: 10 operations. */
    g_assert_true(rs_cost_estimate_chunked(plan, NULL, topo, 1 << 20, &est, &error));
    g_assert_cmpfloat_with_epsilon(est.latency_s, 5e-6 + 10 * 7e-6, 1e-15);
    /* The flow model charges the same before the bytes: 5 us + 3 × 7 us, then 10 MiB at
     * 1 GB/s (no latency on this topology). */
    RsFlowSimOptions fo;
    rs_flow_sim_options_init(&fo);
    fo.chunk_bytes = 4 << 20;
    g_autoptr(RsFlowSimResult) flow = rs_flow_sim_run(plan, topo, &fo, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat_with_epsilon(flow->total_s, 26e-6 + link_s, 1e-12);
    rs_calibration_clear(&cal);
}

/* software.chunk_overhead needs the chunk it was measured at, named with file and line. */
static void
test_topology_chunk_size_required(void)
{
    static const char *base_text =
        "name: t\nnodes: 1\ngpus_per_node: 2\ngpu: {model: g, memory: 1 GiB}\n"
        "nvlink: {bandwidth: 1 GB/s}\nnic: {bandwidth: 1 GB/s}\n";
    g_autofree char *missing = g_strconcat(base_text, "software: {chunk_overhead: 5 us}\n", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) t1 = rs_topology_load_string(missing, "t.yaml", NULL, &error);
    g_assert_null(t1);
    g_assert_nonnull(strstr(error->message, "t.yaml:7:"));
    g_assert_nonnull(strstr(error->message, "software.chunk_size: required with chunk_overhead"));
    g_clear_error(&error);
    g_autofree char *zero =
        g_strconcat(base_text, "software: {chunk_overhead: 5 us, chunk_size: 0 B}\n", NULL);
    g_autoptr(RsTopology) t2 = rs_topology_load_string(zero, "t.yaml", NULL, &error);
    g_assert_null(t2);
    g_assert_nonnull(strstr(error->message, "software.chunk_size: must be positive"));
    g_clear_error(&error);
    /* Without chunk_overhead: no chunk costs, chunk_size alone is harmless. */
    g_autofree char *none = g_strconcat(base_text, "software: {chunk_size: 4 MiB}\n", NULL);
    g_autoptr(RsTopology) t3 = rs_topology_load_string(none, "t.yaml", NULL, &error);
    g_assert_no_error(error);
    guint64 chunk = 1;
    g_assert_cmpfloat(rs_topology_get_chunk_overhead_s(t3, &chunk), ==, 0.0);
    g_assert_cmpuint(chunk, ==, 0);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/calibrate/chunks", test_chunks);
    g_test_add_func("/calibrate/fit/recovers", test_fit_recovers);
    g_test_add_func("/calibrate/fit/no-chunk-cost", test_fit_no_chunk_cost);
    g_test_add_func("/calibrate/fit/single-chunk", test_fit_single_chunk);
    g_test_add_func("/calibrate/fit/nonnegative", test_fit_nonnegative);
    g_test_add_func("/calibrate/fit/without-chunk-term", test_fit_without_chunk_term);
    g_test_add_func("/calibrate/topology-and-cost", test_topology_and_cost);
    g_test_add_func("/calibrate/topology-chunk-size-required", test_topology_chunk_size_required);
    return g_test_run();
}

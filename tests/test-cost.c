/* test-cost.c — the first-order estimate (sim/cost.h) and the lower bound
 * (sim/lower-bound.h), against values computed by hand on tests/data/two-node.yaml:
 *   2 nodes × 2 GPUs; NVLink 100 GB/s × 1.0, 1 us; NIC 80 Gbit/s × 0.5 = 5 GB/s, 10 us;
 *   message overhead 2 us. GPUs 0,1 on node 0; 2,3 on node 1. */
#include "sim/cost.h"
#include "sim/flow-sim.h"
#include "sim/gpu-cost.h"
#include "sim/lower-bound.h"
#include "topologies/topology.h"

#include <string.h>

static RsTopology *
load_two_node(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "two-node.yaml", NULL);
    RsTopology *topo = rs_topology_load_file(path, NULL, &error);
    g_assert_no_error(error);
    return topo;
}

/* A [4, 1,000,000] tensor of @dtype (16 MB as f32) whole on GPU 0, sharded S(0) onto GPUs 2
 * and 3. */
static RsRefit *
make_refit_of(RsDtype dtype)
{
    g_autoptr(GError) error = NULL;
    const gint64 shape[] = {4, 1000000};
    const guint32 src_ranks[] = {0};
    g_autoptr(RsLayout) src = rs_layout_new_replicated(2, shape, src_ranks, 1);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("2", "2,3", &error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0};
    g_autoptr(RsLayout) dst = rs_layout_new_dtensor(2, shape, mesh, &s0, 1, &error);
    g_assert_no_error(error);
    RsRefit *refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", dtype, src, dst, &error));
    g_assert_no_error(error);
    return refit;
}

static RsRefit *
make_refit(void)
{
    return make_refit_of(RS_DTYPE_F32);
}

/* two-node.yaml with GPU costs: kernel copies at 1,000 GB/s, 1 us per launch, 4 us per
 * synchronisation, 32 B per run. */
static const char gpu_two_node_yaml[] =
    "name: two-node-gpu\nnodes: 2\ngpus_per_node: 2\n"
    "gpu: {model: test GPU, memory: 1 GiB, hbm_bandwidth: 2 TB/s, kernel_copy_bandwidth: "
    "1000 GB/s, copy_engine_bandwidth: 500 GB/s, h2d_bandwidth: 50 GB/s, kernel_launch: 1 us, "
    "stream_sync: 4 us, strided_row_penalty: 32 B}\n"
    "nvlink: {bandwidth: 100 GB/s, efficiency: 1.0, latency: 1 us}\n"
    "nic: {bandwidth: 80 Gbit/s, efficiency: 0.5, latency: 10 us}\n"
    "software: {message_overhead: 2 us}\n";

/* The [4, 1,000,000] f32 tensor whole on @src_rank, placed @p over GPUs 2 and 3. */
static RsRefit *
make_refit_to(guint32 src_rank, RsPlacement p)
{
    g_autoptr(GError) error = NULL;
    const gint64 shape[] = {4, 1000000};
    g_autoptr(RsLayout) src = rs_layout_new_replicated(2, shape, &src_rank, 1);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("2", "2,3", &error);
    g_autoptr(RsLayout) dst = rs_layout_new_dtensor(2, shape, mesh, &p, 1, &error);
    g_assert_no_error(error);
    RsRefit *refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    return refit;
}

static void
assert_split(const RsCostEstimate *c)
{
    g_assert_cmpfloat_with_epsilon(c->network_s + c->nvlink_s + c->gpu_copy_s + c->fixed_s,
                                   c->predicted_s, 1e-15);
}

/* Closed forms of the GPU-side costs (sim/gpu-cost.h) in the first-order estimate. */
static void
test_estimate_gpu_costs(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) topo =
        rs_topology_load_string(gpu_two_node_yaml, "two-node-gpu.yaml", NULL, &error);
    g_assert_no_error(error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0}, s1 = {RS_PLACEMENT_SHARD, 1, 0};

    /* S(0): each destination's 2 rows are one run on both sides: sent and received in
     * place, no copy; one round: 1 us launch + 4 us sync on top of 44 us of messages. */
    g_autoptr(RsRefit) rows = make_refit_to(0, s0);
    g_autoptr(RsPlan) rows_plan = rs_plan_build(rows, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    RsCostEstimate c;
    g_assert_true(rs_cost_estimate_full(rows_plan, rows, topo, &c, &error));
    g_assert_cmpfloat_with_epsilon(c.predicted_s, 3.2e-3 + 44e-6 + 5e-6, 1e-12);
    g_assert_cmpfloat(c.gpu_copy_s, ==, 0.0);
    g_assert_cmpfloat_with_epsilon(c.network_s, 3.2e-3, 1e-15);
    g_assert_cmpfloat_with_epsilon(c.fixed_s, 49e-6, 1e-15);
    g_assert_cmpfloat(c.nvlink_s, ==, 0.0);
    assert_split(&c);

    /* S(1): each destination's half of every row is 4 runs of 2 MB in GPU 0's memory:
     * GPU 0 packs both messages, (8 MB + 4 × 32 B) / 1,000 GB/s and one launch each; the
     * destinations receive into their whole (contiguous) shard in place. */
    g_autoptr(RsRefit) cols = make_refit_to(0, s1);
    g_autoptr(RsPlan) cols_plan = rs_plan_build(cols, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    g_autoptr(RsGpuCostTimes) t = rs_gpu_cost_compute(cols_plan, cols, topo, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(t->n_messages, ==, 2);
    g_assert_cmpfloat_with_epsilon(t->round_fixed_s, 5e-6, 1e-18);
    for (guint m = 0; m < 2; m++) {
        g_assert_cmpfloat_with_epsilon(t->pre_copy_s[m], (8e6 + 4 * 32) / 1e12, 1e-18);
        g_assert_cmpfloat_with_epsilon(t->pre_fixed_s[m], 1e-6, 1e-18);
        g_assert_cmpfloat(t->post_copy_s[m], ==, 0.0);
        g_assert_cmpfloat(t->post_fixed_s[m], ==, 0.0);
        /* The flow model's: both messages of the round wait for both of GPU 0's packs
         * (its stream packs them, then launches the round's group). */
        g_assert_cmpfloat_with_epsilon(t->pre_s[m], 2 * ((8e6 + 4 * 32) / 1e12 + 1e-6), 1e-18);
        g_assert_cmpfloat(t->post_s[m], ==, 0.0);
    }
    g_assert_true(rs_cost_estimate_full(cols_plan, cols, topo, &c, &error));
    double copy_s = 2 * (8e6 + 4 * 32) / 1e12;
    double fixed_s = 44e-6 + 2e-6 + 5e-6;
    g_assert_cmpfloat_with_epsilon(c.gpu_copy_s, copy_s, 1e-15);
    g_assert_cmpfloat_with_epsilon(c.fixed_s, fixed_s, 1e-15);
    g_assert_cmpfloat_with_epsilon(c.predicted_s, 3.2e-3 + copy_s + fixed_s, 1e-12);
    assert_split(&c);

    /* A local copy: GPU 2 holds the whole tensor and keeps columns [0, 500,000): 4 runs
     * read, 1 written, one copy kernel: (8 MB + 5 × 32 B) / 1,000 GB/s + 1 us. */
    g_autoptr(RsRefit) own = make_refit_to(2, s1);
    g_autoptr(RsPlan) own_plan = rs_plan_build(own, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    g_autoptr(RsGpuCostTimes) to = rs_gpu_cost_compute(own_plan, own, topo, &error);
    g_assert_no_error(error);
    gboolean seen_local = FALSE;
    for (guint m = 0; m < to->n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(own_plan, m);
        if (msg->src != msg->dst)
            continue;
        seen_local = TRUE;
        g_assert_cmpfloat_with_epsilon(to->pre_copy_s[m], (8e6 + 5 * 32) / 1e12, 1e-18);
        g_assert_cmpfloat_with_epsilon(to->pre_fixed_s[m], 1e-6, 1e-18);
        g_assert_cmpfloat(to->post_s[m], ==, 0.0);
    }
    g_assert_true(seen_local);

    /* Without GPU costs the estimate is the links' alone, as before. */
    g_autoptr(RsTopology) plain = load_two_node();
    g_assert_true(rs_cost_estimate_full(cols_plan, cols, plain, &c, &error));
    g_assert_cmpfloat_with_epsilon(c.predicted_s, 3.2e-3 + 44e-6, 1e-12);
    g_assert_cmpfloat(c.gpu_copy_s, ==, 0.0);
    assert_split(&c);
}

/* direct under PXN: a source's bytes leave through its node's NIC on the destination's
 * rail. Two replicas (GPUs 0 and 4) serving 8 destinations on 4 rails in rank order used to
 * alternate, so replica 0 served rails 0 and 2 only: 2 of its node's 4 NICs carried all of
 * its bytes. Round-robin per rail spreads each replica over every rail. */
static void
test_direct_pxn_rails(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) topo = rs_topology_load_string(
        "name: rails\nnodes: 4\ngpus_per_node: 4\nnvlink: {bandwidth: 100 GB/s}\n"
        "nic: {bandwidth: 10 GB/s}\nfabric: {pxn: true}\n",
        "rails.yaml", NULL, &error);
    g_assert_no_error(error);
    const gint64 shape[] = {8, 1024};
    const guint32 replicas[] = {0, 4};
    g_autoptr(RsLayout) src = rs_layout_new_replicated(2, shape, replicas, 2);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("8", "8-15", &error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0};
    g_autoptr(RsLayout) dst = rs_layout_new_dtensor(2, shape, mesh, &s0, 1, &error);
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_BF16, src, dst, &error));
    RsPlanOptions options;
    rs_plan_options_init(&options, topo);
    g_autoptr(RsPlan) plan = rs_plan_build_full(refit, RS_STRATEGY_DIRECT, &options, &error);
    g_assert_no_error(error);
    RsCostEstimate c;
    g_assert_true(rs_cost_estimate(plan, topo, &c, &error));
    /* 8 rows of 2,048 B; each of the 8 NICs of nodes 0 and 1 sends exactly one. */
    g_assert_cmpuint(c.bytes_network, ==, 8 * 2048);
    g_assert_cmpuint(c.max_nic_egress_bytes, ==, 2048);
}

/* Only the job's GPUs carry traffic (rs_topology_set_job_gpus): two NVLink domains of two
 * 4-GPU trays, PXN on; the job holds GPUs 0-1 (training) and 10-11 (inference). */
static const char job_yaml[] =
    "name: job\nnodes: 4\ngpus_per_node: 4\nnodes_per_nvlink_domain: 2\n"
    "nvlink: {bandwidth: 100 GB/s}\nnic: {bandwidth: 10 GB/s}\nfabric: {pxn: true}\n";

/* Bytes that crossed any link of a GPU outside {0, 1, 10, 11}. */
static guint64
idle_gpu_bytes(const RsTopology *topo, const RsFlowSimResult *f)
{
    guint64 bytes = 0;
    for (guint32 l = 0; l < rs_topology_get_n_links(topo); l++) {
        guint32 g = rs_topology_get_link_gpu(topo, l);
        if (g != G_MAXUINT32 && g != 0 && g != 1 && g != 10 && g != 11)
            bytes += f->link_bytes[l];
    }
    return bytes;
}

static void
test_job_gpus_only(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) topo = rs_topology_load_string(job_yaml, "job.yaml", NULL, &error);
    g_assert_no_error(error);
    /* A [2, 1,000,000] bf16 tensor, S(0) on GPUs 0-1, replicated on GPUs 10-11: 8 MB. */
    const gint64 shape[] = {2, 1000000};
    g_autoptr(RsMesh) src_mesh = rs_mesh_parse("2", "0,1", &error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0};
    g_autoptr(RsLayout) src = rs_layout_new_dtensor(2, shape, src_mesh, &s0, 1, &error);
    const guint32 dst_ranks[] = {10, 11};
    g_autoptr(RsLayout) dst = rs_layout_new_replicated(2, shape, dst_ranks, 2);
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_BF16, src, dst, &error));
    const guint32 job[] = {0, 1, 10, 11};

    for (guint allowed = 0; allowed < 2; allowed++) {
        rs_topology_set_job_gpus(topo, allowed ? NULL : job, allowed ? 0 : 4);
        g_assert_cmpint(rs_topology_has_job(topo), ==, !allowed);
        g_assert_cmpint(rs_topology_gpu_in_job(topo, 2), ==, allowed);
        g_assert_true(rs_topology_gpu_in_job(topo, 10));
        /* PXN from GPU 0 (rail 0) to GPU 10 (rail 2) goes through GPU 2 only when it may. */
        guint32 route[RS_TOPOLOGY_MAX_ROUTE];
        guint n = rs_topology_route(topo, 0, 10, route);
        g_assert_cmpuint(route[0], ==,
                         rs_topology_get_gpu_link(topo, 0, allowed ? RS_LINK_NVLINK_EGRESS
                                                                   : RS_LINK_NIC_EGRESS));
        g_assert_cmpuint(n, ==, 4); /* PXN: NVLink 0 -> 2, NIC 2 -> 10; else NIC, spine, NIC */
        guint64 idle_max = 0;
        for (RsStrategy st = 0; st < RS_STRATEGY_N; st++) {
            RsPlanOptions options;
            rs_plan_options_init(&options, topo);
            g_autoptr(RsPlan) plan = rs_plan_build_full(refit, st, &options, &error);
            g_assert_no_error(error);
            g_assert_true(rs_plan_check(plan, refit, &error));
            g_autoptr(RsFlowSimResult) f = rs_flow_sim_run(plan, topo, NULL, &error);
            g_assert_no_error(error);
            guint64 idle = idle_gpu_bytes(topo, f);
            if (!allowed)
                g_assert_cmpuint(idle, ==, 0);
            idle_max = MAX(idle_max, idle);
        }
        /* Lent, the idle GPUs do carry bytes (PXN hops, hierarchical entries). */
        if (allowed)
            g_assert_cmpuint(idle_max, >, 0);
        /* The bound: the tensor's 4 MB must enter domain 1 through the NICs of the job's 2
         * GPUs there, 10 GB/s each; lent, through all 8. */
        RsLowerBound b;
        g_assert_true(rs_lower_bound_compute(refit, topo, &b, &error));
        g_assert_cmpfloat_with_epsilon(b.time_s, allowed ? 4e6 / 8e10 : 4e6 / 2e10, 1e-15);
    }
}

static void
test_estimate_direct(void)
{
    g_autoptr(RsTopology) topo = load_two_node();
    g_autoptr(RsRefit) refit = make_refit();
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    RsCostEstimate c;
    g_assert_true(rs_cost_estimate(plan, topo, &c, &error));
    /* GPU 0's NIC sends 16 MB at 5 GB/s = 3.2 ms; it takes part in 2 messages of
     * 2 + 10 + 10 = 22 us each = 44 us. */
    g_assert_cmpfloat_with_epsilon(c.predicted_s, 3.2e-3 + 44e-6, 1e-12);
    g_assert_cmpuint(c.bytes_moved, ==, 16000000);
    g_assert_cmpuint(c.bytes_network, ==, 16000000);
    g_assert_cmpuint(c.bytes_nvlink, ==, 0);
    g_assert_cmpuint(c.max_nic_egress_bytes, ==, 16000000);
    g_assert_cmpuint(c.max_nic_egress_gpu, ==, 0);
    g_assert_cmpuint(c.max_gpu_ingress_bytes, ==, 8000000);
    g_assert_cmpuint(c.n_messages, ==, 2);
    g_assert_cmpuint(c.busiest_link, ==, rs_topology_get_gpu_link(topo, 0, RS_LINK_NIC_EGRESS));
}

static void
test_estimate_gather_broadcast(void)
{
    g_autoptr(RsTopology) topo = load_two_node();
    g_autoptr(RsRefit) refit = make_refit();
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_GATHER_BROADCAST, &error);
    RsCostEstimate c;
    g_assert_true(rs_cost_estimate(plan, topo, &c, &error));
    /* Phase 0: the root already holds the tensor (a local copy): 0 s. Phase 1: chain
     * 0 → 2 (NIC, 16 MB: 3.2 ms) → 3 (NVLink, 0.16 ms); GPU 2 takes part in both
     * messages: 22 us + (2 + 1 + 1) us = 26 us. */
    g_assert_cmpfloat_with_epsilon(c.predicted_s, 3.2e-3 + 26e-6, 1e-12);
    g_assert_cmpuint(c.bytes_moved, ==, 32000000);
    g_assert_cmpuint(c.bytes_network, ==, 16000000);
    g_assert_cmpuint(c.bytes_nvlink, ==, 16000000);
    g_assert_cmpuint(c.local_bytes, ==, 16000000 + 16000000);
    g_assert_cmpuint(c.n_phases, ==, 2);
}

/* The bound counts a tensor's bytes in its wire dtype: MXFP4 is half a byte an element.
 * Its whole element size (0 bits / 8) counted MXFP4 as nothing: gpt-oss-20b under
 * --infer-dtype mxfp4 was bounded by its BF16 and scale bytes alone (4.2 of 13.8 GB). The
 * same 4 x 1,000,000 elements as test_lower_bound, as MXFP4: 2 MB into domain 1 over its 2
 * NICs of 5 GB/s, 0.2 ms. */
static void
test_lower_bound_mxfp4(void)
{
    g_autoptr(RsTopology) topo = load_two_node();
    g_autoptr(GError) error = NULL;
    g_autoptr(RsRefit) refit = make_refit_of(RS_DTYPE_MXFP4);
    RsLowerBound b;
    g_assert_true(rs_lower_bound_compute(refit, topo, &b, &error));
    g_assert_cmpint(b.kind, ==, RS_CUT_DOMAIN_INGRESS);
    g_assert_cmpuint(b.cut_bytes, ==, 2000000);
    g_assert_cmpfloat_with_epsilon(b.time_s, 0.2e-3, 1e-12);
}

static void
test_lower_bound(void)
{
    g_autoptr(RsTopology) topo = load_two_node();
    g_autoptr(RsRefit) refit = make_refit();
    g_autoptr(GError) error = NULL;
    RsLowerBound b;
    g_assert_true(rs_lower_bound_compute(refit, topo, &b, &error));
    /* Domain 1 (GPUs 2,3) needs 16 MB it does not hold, over 2 NICs of 5 GB/s: 1.6 ms.
     * GPU 2 needs 8 MB over 100 + 5 GB/s. */
    g_assert_cmpint(b.kind, ==, RS_CUT_DOMAIN_INGRESS);
    g_assert_cmpuint(b.where, ==, 1);
    g_assert_cmpuint(b.cut_bytes, ==, 16000000);
    g_assert_cmpfloat_with_epsilon(b.time_s, 1.6e-3, 1e-12);
    g_assert_cmpfloat_with_epsilon(b.gpu_ingress_s, 8e6 / 105e9, 1e-12);
    /* GPU 0 alone holds the tensor: all of it must leave GPU 0 and domain 0 (a tie with
     * domain 1's ingress, which comes first). One scalable unit: no unit cut. */
    g_assert_cmpfloat_with_epsilon(b.kind_s[RS_CUT_GPU_EGRESS], 16e6 / 105e9, 1e-12);
    g_assert_cmpfloat_with_epsilon(b.kind_s[RS_CUT_DOMAIN_EGRESS], 1.6e-3, 1e-12);
    g_assert_cmpuint(b.kind_where[RS_CUT_DOMAIN_EGRESS], ==, 0);
    g_assert_cmpfloat(b.kind_s[RS_CUT_UNIT_INGRESS], ==, 0.0);
    g_autofree char *cut = rs_lower_bound_format_cut(&b);
    g_assert_cmpstr(cut, ==, "NVLink domain 1 ingress (its NICs): 0.016 GB over 10 GB/s");
    g_assert_cmpint(b.cut_links, ==, RS_CUT_LINKS_NIC);
}

/* A job on one NVLink domain (the other node idle): a GPU's NIC carries nothing (traffic
 * inside a domain takes NVLink), so its cut is NVLink's alone. The bound counted the NIC
 * too, 11% loose on a colocated one-node refit. With the other node in the job, the NIC
 * counts again (a relay there could feed it). */
static void
test_lower_bound_one_domain_job(void)
{
    g_autoptr(RsTopology) topo = load_two_node();
    g_autoptr(GError) error = NULL;
    const gint64 shape[] = {4, 1000000};
    const guint32 src_rank = 0;
    g_autoptr(RsLayout) src = rs_layout_new_replicated(2, shape, &src_rank, 1);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("2", "0,1", &error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0};
    g_autoptr(RsLayout) dst = rs_layout_new_dtensor(2, shape, mesh, &s0, 1, &error);
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    const guint32 job[] = {0, 1};
    rs_topology_set_job_gpus(topo, job, G_N_ELEMENTS(job));
    RsLowerBound b;
    g_assert_true(rs_lower_bound_compute(refit, topo, &b, &error));
    /* GPU 1 needs rows 2-3, 8 MB, over NVLink's 100 GB/s alone; GPU 0 sends them. */
    g_assert_cmpint(b.kind, ==, RS_CUT_GPU_INGRESS);
    g_assert_cmpuint(b.where, ==, 1);
    g_assert_cmpfloat_with_epsilon(b.time_s, 8e6 / 100e9, 1e-15);
    g_assert_cmpint(b.cut_links, ==, RS_CUT_LINKS_NVLINK);
    g_autofree char *cut = rs_lower_bound_format_cut(&b);
    g_assert_cmpstr(cut, ==,
                    "GPU 1 ingress (NVLink: no GPU of the job outside its NVLink domain): "
                    "0.008 GB over 100 GB/s");
    /* Every GPU in the job: NVLink + NIC, 105 GB/s. */
    rs_topology_set_job_gpus(topo, NULL, 0);
    g_assert_true(rs_lower_bound_compute(refit, topo, &b, &error));
    g_assert_cmpfloat_with_epsilon(b.time_s, 8e6 / 105e9, 1e-15);
    g_assert_cmpint(b.cut_links, ==, RS_CUT_LINKS_NIC);
}

/* A NIC faster than the PCIe link to it: the cut's capacity is PCIe's, and its name says
 * so (it said "(its NICs)" over 2 x 4 GB/s of PCIe, as the NICs' links are dominated). */
static void
test_lower_bound_pcie_below_nic(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) topo = rs_topology_load_string(
        "name: two-node-pcie\nnodes: 2\ngpus_per_node: 2\ngpu: {model: test GPU, memory: 1 GiB}\n"
        "nvlink: {bandwidth: 100 GB/s, efficiency: 1.0, latency: 1 us}\n"
        "nic: {bandwidth: 80 Gbit/s, efficiency: 0.5, latency: 10 us}\n"
        "pcie: {bandwidth: 8 GB/s, efficiency: 0.5, latency: 0 us}\n"
        "software: {message_overhead: 2 us}\n",
        "two-node-pcie.yaml", NULL, &error);
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = make_refit();
    RsLowerBound b;
    g_assert_true(rs_lower_bound_compute(refit, topo, &b, &error));
    /* Domain 1 takes 16 MB over 2 PCIe links of 4 GB/s (below the NICs' 5): 2 ms. */
    g_assert_cmpint(b.kind, ==, RS_CUT_DOMAIN_INGRESS);
    g_assert_cmpfloat_with_epsilon(b.time_s, 16e6 / 8e9, 1e-12);
    g_assert_cmpint(b.cut_links, ==, RS_CUT_LINKS_PCIE);
    g_autofree char *cut = rs_lower_bound_format_cut(&b);
    g_assert_cmpstr(cut, ==,
                    "NVLink domain 1 ingress (its GPUs' PCIe links, below their NICs): 0.016 GB "
                    "over 8 GB/s");
}

/* Which replica sends is the planner's choice: a box also held outside a set never counts
 * as having to leave it. The tensor is replicated on GPUs 0 and 2 (two domains) and needed
 * on GPUs 1 and 3: nothing must leave any GPU or domain; each domain already holds it. */
static void
test_lower_bound_replicas(void)
{
    g_autoptr(RsTopology) topo = load_two_node();
    g_autoptr(GError) error = NULL;
    const gint64 shape[] = {4, 1000000};
    const guint32 src_ranks[] = {0, 2}, dst_ranks[] = {1, 3};
    g_autoptr(RsLayout) src = rs_layout_new_replicated(2, shape, src_ranks, 2);
    g_autoptr(RsLayout) dst = rs_layout_new_replicated(2, shape, dst_ranks, 2);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    RsLowerBound b;
    g_assert_true(rs_lower_bound_compute(refit, topo, &b, &error));
    g_assert_cmpfloat(b.kind_s[RS_CUT_GPU_EGRESS], ==, 0.0);
    g_assert_cmpfloat(b.kind_s[RS_CUT_DOMAIN_EGRESS], ==, 0.0);
    g_assert_cmpfloat(b.kind_s[RS_CUT_DOMAIN_INGRESS], ==, 0.0);
    g_assert_cmpint(b.kind, ==, RS_CUT_GPU_INGRESS);
    g_assert_cmpfloat_with_epsilon(b.time_s, 16e6 / 105e9, 1e-12);
}

/* The bound never exceeds either estimate. */
static void
test_bound_below_estimates(void)
{
    g_autoptr(RsTopology) topo = load_two_node();
    g_autoptr(RsRefit) refit = make_refit();
    g_autoptr(GError) error = NULL;
    RsLowerBound b;
    g_assert_true(rs_lower_bound_compute(refit, topo, &b, &error));
    RsPlanOptions options;
    rs_plan_options_init(&options, topo);
    for (guint s = 0; s < RS_STRATEGY_N; s++) {
        g_autoptr(RsPlan) plan = rs_plan_build_full(refit, (RsStrategy)s, &options, &error);
        g_assert_no_error(error);
        RsCostEstimate c;
        g_assert_true(rs_cost_estimate(plan, topo, &c, &error));
        g_assert_cmpfloat(b.time_s, <=, c.predicted_s);
    }
}

static void
test_rank_outside_topology(void)
{
    g_autoptr(RsTopology) topo = load_two_node();
    g_autoptr(GError) error = NULL;
    const gint64 shape[] = {4};
    const guint32 src_ranks[] = {0}, dst_ranks[] = {9};
    g_autoptr(RsLayout) src = rs_layout_new_replicated(1, shape, src_ranks, 1);
    g_autoptr(RsLayout) dst = rs_layout_new_replicated(1, shape, dst_ranks, 1);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    RsCostEstimate c;
    g_assert_false(rs_cost_estimate(plan, topo, &c, &error));
    g_assert_error(error, RS_COST_ERROR, RS_COST_ERROR_RANK);
}

/* The lower bound names a rank outside the topology in its own domain. */
static void
test_bound_rank_outside_topology(void)
{
    g_autoptr(RsTopology) topo = load_two_node();
    g_autoptr(GError) error = NULL;
    const gint64 shape[] = {4};
    const guint32 src_ranks[] = {0}, dst_ranks[] = {9};
    g_autoptr(RsLayout) src = rs_layout_new_replicated(1, shape, src_ranks, 1);
    g_autoptr(RsLayout) dst = rs_layout_new_replicated(1, shape, dst_ranks, 1);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    RsLowerBound b;
    g_assert_false(rs_lower_bound_compute(refit, topo, &b, &error));
    g_assert_error(error, RS_LOWER_BOUND_ERROR, RS_LOWER_BOUND_ERROR_RANK);
    g_assert_cmpstr(error->message, ==, "rank 9 is not a GPU of topology two-node (4 GPUs)");
    g_assert_cmpstr(g_quark_to_string(RS_LOWER_BOUND_ERROR), ==, "rs-lower-bound-error-quark");
    g_assert_cmpstr(g_quark_to_string(RS_COST_ERROR), ==, "rs-cost-error-quark");
}

/* Copies charged at the copy section's rates. One node of 4 ranks, NVLink 100 GB/s,
 * overhead 1 us; copy rates: 64-B runs read 2 / 4 GB/s (one rank / node), written 1 / 2;
 * 4 KiB runs and longer 8 / 16 both ways. Tensor "a" [64, 256] bf16 whole on rank 0, S(1)
 * onto ranks 1 and 2: each receives 16,384 B read as 256-B runs (rows of 512 B cut in two:
 * 1/3 of the way from 64 B to 4 KiB in log scale, so read at 4 / 8 GB/s) and written
 * contiguous (8 / 16 GB/s). Tensor "b" [32, 32] f32 on rank 1 on both sides: a 4,096-B
 * local copy, contiguous (8 / 16 GB/s). */
static void
test_estimate_copies(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) topo = rs_topology_load_string(
        "name: copy\nnodes: 1\ngpus_per_node: 4\n"
        "nvlink: {bandwidth: 100 GB/s}\nnic: {bandwidth: 10 GB/s}\n"
        "software: {message_overhead: 1 us}\n"
        "copy:\n  runs:\n"
        "    - {bytes: 64 B, read_one_rank: 2 GB/s, read_node: 4 GB/s, write_one_rank: 1 GB/s, "
        "write_node: 2 GB/s}\n"
        "    - {bytes: 4 KiB, read_one_rank: 8 GB/s, read_node: 16 GB/s, write_one_rank: 8 GB/s, "
        "write_node: 16 GB/s}\n",
        "copy.yaml", NULL, &error);
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = rs_refit_new();
    const gint64 a_shape[] = {64, 256}, b_shape[] = {32, 32};
    const guint32 r0 = 0, r1 = 1;
    g_autoptr(RsLayout) a_src = rs_layout_new_replicated(2, a_shape, &r0, 1);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("2", "1,2", &error);
    RsPlacement s1 = {RS_PLACEMENT_SHARD, 1, 0};
    g_autoptr(RsLayout) a_dst = rs_layout_new_dtensor(2, a_shape, mesh, &s1, 1, &error);
    g_assert_no_error(error);
    g_autoptr(RsLayout) b = rs_layout_new_replicated(2, b_shape, &r1, 1);
    g_assert_true(rs_refit_add_tensor(refit, "a", RS_DTYPE_BF16, a_src, a_dst, &error));
    g_assert_true(rs_refit_add_tensor(refit, "b", RS_DTYPE_F32, b, b, &error));
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    RsCostEstimate c;
    g_assert_true(rs_cost_estimate_full(plan, refit, topo, &c, &error));
    g_assert_cmpuint(c.n_phases, ==, 1);
    /* Links: rank 0's NVLink egress carries 32,768 B at 100 GB/s. Fixed costs: rank 0 sends
     * 2 messages, 1 us each. Copies, one rank: rank 1 copies 16,384 B at 1/4 + 1/8 − 1/8
     * ns per byte and 4,096 B at 1/8 ns: 4.096 + 0.512 us; node: 32,768 B at 1/8 + 1/16 −
     * 1/16 ns and 4,096 B at 1/16 ns: 4.096 + 0.256 us. The phase takes the larger. */
    g_assert_cmpfloat_with_epsilon(c.link_s, 32768 / 100e9, 1e-15);
    g_assert_cmpfloat_with_epsilon(c.latency_s, 2e-6, 1e-15);
    g_assert_cmpfloat_with_epsilon(c.copy_s, 4.608e-6, 1e-15);
    g_assert_cmpuint(c.copy_bound_phases, ==, 1);
    g_assert_cmpfloat_with_epsilon(c.predicted_s, 4.608e-6 + 2e-6, 1e-15);
    g_assert_cmpuint(c.local_bytes, ==, 4096);
    /* With local_ rates (16 / 32 GB/s at every run length) the local copy costs 4,096 B /
     * 16 GB/s = 0.256 us on rank 1 instead of 0.512. */
    g_autoptr(RsTopology) local_topo = rs_topology_load_string(
        "name: copy\nnodes: 1\ngpus_per_node: 4\n"
        "nvlink: {bandwidth: 100 GB/s}\nnic: {bandwidth: 10 GB/s}\n"
        "software: {message_overhead: 1 us}\n"
        "copy:\n  runs:\n"
        "    - {bytes: 64 B, read_one_rank: 2 GB/s, read_node: 4 GB/s, write_one_rank: 1 GB/s, "
        "write_node: 2 GB/s, local_read_one_rank: 16 GB/s, local_read_node: 32 GB/s, "
        "local_write_one_rank: 16 GB/s, local_write_node: 32 GB/s}\n"
        "    - {bytes: 4 KiB, read_one_rank: 8 GB/s, read_node: 16 GB/s, write_one_rank: 8 GB/s, "
        "write_node: 16 GB/s, local_read_one_rank: 16 GB/s, local_read_node: 32 GB/s, "
        "local_write_one_rank: 16 GB/s, local_write_node: 32 GB/s}\n",
        "copy.yaml", NULL, &error);
    g_assert_no_error(error);
    RsCostEstimate with_local;
    g_assert_true(rs_cost_estimate_full(plan, refit, local_topo, &with_local, &error));
    g_assert_cmpfloat_with_epsilon(with_local.copy_s, 4.352e-6, 1e-15);
    /* Without the refit, or without a copy section, copies cost nothing. */
    RsCostEstimate plain;
    g_assert_true(rs_cost_estimate(plan, topo, &plain, &error));
    g_assert_cmpfloat(plain.copy_s, ==, 0.0);
    g_assert_cmpfloat_with_epsilon(plain.predicted_s, 32768 / 100e9 + 2e-6, 1e-15);
}

/* With one copy rate for every run (1 GB/s for one rank; nodes never bind), every
 * strategy's copy time is, per phase, the most bytes any rank receives or copies locally,
 * in ns: relays, staging (gather-broadcast) and local copies all land on their receiver. */
static void
test_estimate_copies_strategies(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) topo = rs_topology_load_string(
        "name: uniform\nnodes: 2\ngpus_per_node: 2\n"
        "nvlink: {bandwidth: 100 GB/s}\nnic: {bandwidth: 10 GB/s}\n"
        "copy:\n  runs:\n"
        "    - {bytes: 1 B, read_one_rank: 1 GB/s, read_node: 1000000 GB/s, "
        "write_one_rank: 1 GB/s, write_node: 1000000 GB/s}\n",
        "uniform.yaml", NULL, &error);
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = rs_refit_new();
    const gint64 shape[] = {48, 40};
    const guint32 r0 = 0;
    g_autoptr(RsLayout) src = rs_layout_new_replicated(2, shape, &r0, 1);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("2x2", "0-3", &error);
    RsPlacement pl[] = {{RS_PLACEMENT_SHARD, 1, 0}, {RS_PLACEMENT_REPLICATE, 0, 0}};
    g_autoptr(RsLayout) dst = rs_layout_new_dtensor(2, shape, mesh, pl, 2, &error);
    g_assert_no_error(error);
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_BF16, src, dst, &error));
    for (guint st = 0; st < RS_STRATEGY_N; st++) {
        RsPlanOptions po;
        rs_plan_options_init(&po, topo);
        g_autoptr(RsPlan) plan = rs_plan_build_full(refit, (RsStrategy)st, &po, &error);
        g_assert_no_error(error);
        double want_s = 0.0;
        for (guint phase = 0; phase < rs_plan_get_n_phases(plan); phase++) {
            guint64 per_rank[4] = {0};
            for (guint k = 0; k < rs_plan_get_n_transfers(plan); k++) {
                const RsTransfer *tr = rs_plan_get_transfer(plan, k);
                if (tr->phase == phase)
                    per_rank[tr->dst] += tr->size_bytes;
            }
            guint64 most = 0;
            for (guint g = 0; g < 4; g++)
                most = MAX(most, per_rank[g]);
            want_s += most * 1e-9;
        }
        RsCostEstimate c;
        g_assert_true(rs_cost_estimate_full(plan, refit, topo, &c, &error));
        g_assert_cmpfloat_with_epsilon(c.copy_s, want_s, 1e-15);
        g_assert_cmpfloat(want_s, >, 0.0);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cost/estimate/direct", test_estimate_direct);
    g_test_add_func("/cost/estimate/gather-broadcast", test_estimate_gather_broadcast);
    g_test_add_func("/cost/estimate/copies", test_estimate_copies);
    g_test_add_func("/cost/estimate/gpu-costs", test_estimate_gpu_costs);
    g_test_add_func("/cost/estimate/direct-pxn-rails", test_direct_pxn_rails);
    g_test_add_func("/cost/job-gpus-only", test_job_gpus_only);
    g_test_add_func("/cost/estimate/copies-every-strategy", test_estimate_copies_strategies);
    g_test_add_func("/cost/lower-bound/two-node", test_lower_bound);
    g_test_add_func("/cost/lower-bound/mxfp4", test_lower_bound_mxfp4);
    g_test_add_func("/cost/lower-bound/replicas", test_lower_bound_replicas);
    g_test_add_func("/cost/lower-bound/one-domain-job", test_lower_bound_one_domain_job);
    g_test_add_func("/cost/lower-bound/pcie-below-nic", test_lower_bound_pcie_below_nic);
    g_test_add_func("/cost/lower-bound/below-estimates", test_bound_below_estimates);
    g_test_add_func("/cost/rank-outside-topology", test_rank_outside_topology);
    g_test_add_func("/cost/lower-bound/rank-outside-topology", test_bound_rank_outside_topology);
    return g_test_run();
}

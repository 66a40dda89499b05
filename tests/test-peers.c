/* test-peers.c — the peers' algorithms move the bytes their rules imply: NCCL's ring
 * broadcast (nccl-broadcast), NCCL M2N (m2n, m2n-direct), checkpoint-engine and rdma-p2p. */
#include "layout/layout.h"
#include "layout/refit.h"
#include "plan/plan.h"
#include "sim/cost.h"
#include "sim/flow-sim.h"
#include "topologies/topology.h"
#include "tests/test-layouts.h"

#include <string.h>

static RsTopology *
load(const char *yaml)
{
    g_autoptr(GError) error = NULL;
    RsTopology *topo = rs_topology_load_string(yaml, "test", NULL, &error);
    g_assert_no_error(error);
    return topo;
}

static RsPlan *
build(const RsRefit *refit, RsStrategy strategy, const RsTopology *topo, guint64 staging)
{
    g_autoptr(GError) error = NULL;
    RsPlanOptions o;
    rs_plan_options_init(&o, topo);
    o.staging_bytes = staging;
    RsPlan *plan = rs_plan_build_full(refit, strategy, &o, &error);
    g_assert_no_error(error);
    g_assert_true(rs_plan_check(plan, refit, &error));
    g_assert_no_error(error);
    return plan;
}

/* Bytes of the plan's network transfers into NVLink domain @domain, and of those, the bytes
 * coming from domain @from (G_MAXUINT: any). */
static guint64
bytes_into_domain(const RsPlan *plan, const RsTopology *topo, guint domain, guint from)
{
    guint64 total = 0;
    for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, i);
        guint ds = rs_topology_get_nvlink_domain(topo, tr->src);
        guint dd = rs_topology_get_nvlink_domain(topo, tr->dst);
        if (ds != dd && dd == domain && (from == G_MAXUINT || ds == from))
            total += tr->size_bytes;
    }
    return total;
}

/* --- nccl-broadcast --- */

/* One rail, no latencies: the NCCL ring broadcast of S bytes from rank 0 through ranks 1,
 * 2, 3 (h = 3 hops, n = 4 ranks) in k chunks of s = 512 KiB (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS
 * 8, BROADCAST_CHUNKSTEPS 1) takes the textbook pipelined-chain time (h − 1 + k)·s / B =
 * (n − 2 + k)·s / B: the last rank's last chunk leaves the root after k chunk times and
 * needs h − 1 more hops (the pipelined linear broadcast of Pješivac-Grbović et al.,
 * "Performance analysis of MPI collective operations", Cluster Computing 10, 2007:
 * T = (P + n_s − 2)(α + m_s β)). */
static void
test_ring_textbook(void)
{
    g_autoptr(RsTopology) topo = load("name: ring\nnodes: 4\ngpus_per_node: 1\n"
                                      "nvlink: {bandwidth: 100 GB/s}\n"
                                      "nic: {bandwidth: 50 GB/s}\n");
    const gint64 shape[] = {32 << 20}; /* 64 MiB of bf16 */
    g_autoptr(RsLayout) src = test_dtensor(1, shape, "1", "0", "R");
    g_autoptr(RsLayout) dst = test_dtensor(1, shape, "3", "1-3", "R");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_BF16, src, dst, &error));
    g_autoptr(RsPlan) plan = build(refit, RS_STRATEGY_NCCL_BROADCAST, topo, 1ull << 30);
    const double size = 64.0 * (1 << 20), chunk = 512.0 * 1024, bw = 50e9;
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, 3 * (guint64)size);
    /* The plan pipelines in NCCL's step; the flow model runs it so by default (fluid). */
    g_assert_cmpuint(rs_plan_get_relay_chunk_bytes(plan), ==, 512 * 1024);
    RsFlowSimOptions opt;
    rs_flow_sim_options_init(&opt);
    opt.max_chunks_per_message = 0;
    g_autoptr(RsFlowSimResult) r = rs_flow_sim_run(plan, topo, &opt, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(r->chunk_bytes, ==, 512 * 1024);
    g_assert_cmpint(r->relays, ==, RS_FLOW_SIM_RELAYS_FLUID);
    double k = size / chunk, n = 4;
    double expected = (n - 2 + k) * chunk / bw;
    g_assert_cmpfloat_with_epsilon(r->total_s, expected, 1e-9 * expected + 1e-12);
    /* The chunked reference at the same step: the same time. */
    opt.plan_relays = FALSE;
    opt.chunk_bytes = 512 * 1024;
    g_autoptr(RsFlowSimResult) chunked = rs_flow_sim_run(plan, topo, &opt, &error);
    g_assert_no_error(error);
    g_assert_cmpint(chunked->relays, ==, RS_FLOW_SIM_RELAYS_CHUNKED);
    g_assert_cmpfloat_with_epsilon(chunked->total_s, expected, 1e-9 * expected + 1e-12);
    /* Told otherwise (4 MiB, the executor's chunk), the coarser pipeline fills slower:
     * k = 16 chunks of 4 MiB. */
    opt.chunk_bytes = 4 << 20;
    g_autoptr(RsFlowSimResult) coarse = rs_flow_sim_run(plan, topo, &opt, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(coarse->chunk_bytes, ==, 4 << 20);
    double coarse_s = (n - 2 + size / (4 << 20)) * (4 << 20) / bw;
    g_assert_cmpfloat_with_epsilon(coarse->total_s, coarse_s, 1e-9 * coarse_s + 1e-12);
}

/* A plan stores each box once and its transfers point at it: the root stages rows 0:30
 * (phase 0, a local copy), the ring's three hops forward that box, and each rank keeps its
 * own third of it, so 7 transfers share 4 boxes. Two tensors of one layout pattern (direct
 * plans a pattern once and instantiates it per tensor, balance.c) share their boxes too.
 * With a copy in every transfer, nccl-broadcast's 3.8 million transfers on the default
 * scenario took 730 MB. */
static void
test_boxes_shared(void)
{
    g_autoptr(RsTopology) topo = load("name: ring\nnodes: 4\ngpus_per_node: 1\n"
                                      "nvlink: {bandwidth: 100 GB/s}\n"
                                      "nic: {bandwidth: 50 GB/s}\n");
    const gint64 shape[] = {30, 8};
    g_autoptr(RsLayout) src = test_dtensor(2, shape, "1", "0", "R");
    g_autoptr(RsLayout) dst = test_dtensor(2, shape, "3", "1-3", "S(0)");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_BF16, src, dst, &error));
    g_autoptr(RsPlan) plan = build(refit, RS_STRATEGY_NCCL_BROADCAST, topo, 1ull << 30);
    g_assert_cmpuint(rs_plan_get_n_transfers(plan), ==, 7);
    g_assert_cmpuint(rs_plan_get_n_boxes(plan), ==, 4);
    const RsBox *whole = NULL;
    guint n_whole = 0, n_hops = 0, kept_rows = 0;
    for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, i);
        n_hops += tr->src != tr->dst;
        if (tr->src == tr->dst && tr->dst != 0) {
            /* Rank r keeps rows 10·(r − 1) .. 10·r. */
            g_assert_cmpint(tr->box->lo[0], ==, 10 * ((gint64)tr->dst - 1));
            g_assert_cmpint(tr->box->hi[0], ==, 10 * (gint64)tr->dst);
            kept_rows += (guint)(tr->box->hi[0] - tr->box->lo[0]);
            continue;
        }
        g_assert_cmpint(tr->box->lo[0], ==, 0);
        g_assert_cmpint(tr->box->hi[0], ==, 30);
        g_assert_true(whole == NULL || tr->box == whole); /* the same box, not a copy */
        whole = tr->box;
        n_whole++;
    }
    g_assert_cmpuint(n_hops, ==, 3);
    g_assert_cmpuint(n_whole, ==, 4);
    g_assert_cmpuint(kept_rows, ==, 30);

    g_autoptr(RsRefit) two = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(two, "a", RS_DTYPE_BF16, src, dst, &error));
    g_assert_true(rs_refit_add_tensor(two, "b", RS_DTYPE_BF16, src, dst, &error));
    g_autoptr(RsPlan) one_plan = build(refit, RS_STRATEGY_DIRECT, topo, 1ull << 30);
    g_autoptr(RsPlan) two_plan = build(two, RS_STRATEGY_DIRECT, topo, 1ull << 30);
    g_assert_cmpuint(rs_plan_get_n_transfers(one_plan), ==, 3);
    g_assert_cmpuint(rs_plan_get_n_transfers(two_plan), ==, 6);
    g_assert_cmpuint(rs_plan_get_n_boxes(one_plan), ==, 3);
    g_assert_cmpuint(rs_plan_get_n_boxes(two_plan), ==, 3);
}

/* Which plans state their relays' step: the peers whose rings NCCL runs (nccl-broadcast,
 * checkpoint-engine) pipeline in its 512 KiB; ours and the point-to-point ones leave it to
 * the executor (0). */
static void
test_relay_step(void)
{
    g_autoptr(RsTopology) topo = load("name: ring\nnodes: 4\ngpus_per_node: 1\n"
                                      "nvlink: {bandwidth: 100 GB/s}\n"
                                      "nic: {bandwidth: 50 GB/s}\n");
    const gint64 shape[] = {1 << 20};
    g_autoptr(RsLayout) src = test_dtensor(1, shape, "1", "0", "R");
    g_autoptr(RsLayout) dst = test_dtensor(1, shape, "3", "1-3", "R");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_BF16, src, dst, &error));
    const struct {
        RsStrategy strategy;
        guint64 step;
    } cases[] = {
        {RS_STRATEGY_NCCL_BROADCAST, 512 * 1024}, {RS_STRATEGY_CHECKPOINT_ENGINE, 512 * 1024},
        {RS_STRATEGY_DIRECT, 0},                  {RS_STRATEGY_HIERARCHICAL, 0},
        {RS_STRATEGY_M2N, 0},                     {RS_STRATEGY_RDMA_P2P, 0},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(RsPlan) plan = build(refit, cases[i].strategy, topo, 1ull << 30);
        g_assert_cmpuint(rs_plan_get_relay_chunk_bytes(plan), ==, cases[i].step);
    }
}

/* A channel per rail: 3 nodes of 2 GPUs (2 rails, PXN), the root on node 0 and the four
 * receivers on nodes 1 and 2. Each of the two slices (half the tensor) leaves node 0 and
 * node 1 once, through its own rail's NIC: 4 network hops of half the tensor, every NIC
 * that sends carries exactly half. */
static void
test_channel_per_rail(void)
{
    g_autoptr(RsTopology) topo = load("name: rails\nnodes: 3\ngpus_per_node: 2\n"
                                      "nvlink: {bandwidth: 100 GB/s}\n"
                                      "nic: {bandwidth: 50 GB/s}\nfabric: {pxn: true}\n");
    const gint64 shape[] = {8, 1024}; /* 32 KiB of f32 */
    g_autoptr(RsLayout) src = test_dtensor(2, shape, "1", "0", "R");
    g_autoptr(RsLayout) dst = test_dtensor(2, shape, "2x2", "2-5", "R,S(1)");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    g_autoptr(RsPlan) plan = build(refit, RS_STRATEGY_NCCL_BROADCAST, topo, 1 << 20);
    RsCostEstimate c;
    g_assert_true(rs_cost_estimate(plan, topo, &c, &error));
    const guint64 tensor = 8 * 1024 * 4;
    g_assert_cmpuint(c.bytes_network, ==, 2 * tensor);
    g_assert_cmpuint(c.max_nic_egress_bytes, ==, tensor / 2);
    /* Inside node 1 each slice crosses NVLink once; node 2's receivers too. */
    g_assert_cmpuint(c.bytes_nvlink, ==, 2 * tensor);
}

/* The all-gather inside the training group: a tensor sharded over tp=4 on ranks 0-3 of one
 * node reaches every member whole (3/4 of it into each: 3 tensors in all) before the root
 * (rank 0) broadcasts it to rank 4. */
static void
test_all_gather(void)
{
    g_autoptr(RsTopology) topo = load("name: two\nnodes: 2\ngpus_per_node: 4\n"
                                      "nvlink: {bandwidth: 100 GB/s}\n"
                                      "nic: {bandwidth: 50 GB/s}\n");
    const gint64 shape[] = {16, 16};
    g_autoptr(RsLayout) src = test_dtensor(2, shape, "4", "0-3", "S(0)");
    g_autoptr(RsLayout) dst = test_dtensor(2, shape, "1", "4", "R");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    g_autoptr(RsPlan) plan = build(refit, RS_STRATEGY_NCCL_BROADCAST, topo, 1 << 20);
    const guint64 tensor = 16 * 16 * 4;
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, 3 * tensor + tensor);
}

/* --- m2n --- */

/* Three NVLink domains of 4 GPUs: sources on ranks 0, 1 (one replica, S(0)); destinations
 * a 4x2 mesh R,S(0) on ranks 4-11, replicas 0, 1 in domain 1 and 2, 3 in domain 2. One
 * source replica for two destination domains: NODE_AWARE gives it the chain domain 1 →
 * domain 2; each shard enters domain 1 once (from the sources), domain 2 once (from domain
 * 1's leader, never from the sources), and reaches the other replica of each domain over
 * NVLink. UNIFORM sends every replica its shard from the one source replica: 4 tensors
 * over the network. */
static void
test_m2n_chain(void)
{
    g_autoptr(RsTopology) topo = load("name: three\nnodes: 3\ngpus_per_node: 4\n"
                                      "nvlink: {bandwidth: 100 GB/s}\n"
                                      "nic: {bandwidth: 50 GB/s}\n");
    const gint64 shape[] = {64, 32};
    g_autoptr(RsLayout) src = test_dtensor(2, shape, "2", "0,1", "S(0)");
    g_autoptr(RsLayout) dst = test_dtensor(2, shape, "4x2", "4-11", "R,S(0)");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    const guint64 tensor = 64 * 32 * 4;
    g_autoptr(RsPlan) m2n = build(refit, RS_STRATEGY_M2N, topo, 1 << 20);
    g_assert_cmpuint(bytes_into_domain(m2n, topo, 1, G_MAXUINT), ==, tensor);
    g_assert_cmpuint(bytes_into_domain(m2n, topo, 1, 0), ==, tensor);
    g_assert_cmpuint(bytes_into_domain(m2n, topo, 2, G_MAXUINT), ==, tensor);
    g_assert_cmpuint(bytes_into_domain(m2n, topo, 2, 1), ==, tensor);
    g_assert_cmpuint(rs_plan_get_bytes_moved(m2n), ==, 4 * tensor);
    g_assert_cmpint(rs_plan_get_pack_method(m2n), ==, RS_PACK_COPY_ENGINE);
    g_assert_cmpint(rs_plan_get_round_sync(m2n), ==, RS_ROUND_SYNC_WORLD_BARRIER);
    g_autoptr(RsPlan) direct = build(refit, RS_STRATEGY_M2N_DIRECT, topo, 1 << 20);
    g_assert_cmpuint(bytes_into_domain(direct, topo, 1, 0), ==, 2 * tensor);
    g_assert_cmpuint(bytes_into_domain(direct, topo, 2, 0), ==, 2 * tensor);
    g_assert_cmpuint(rs_plan_get_bytes_moved(direct), ==, 4 * tensor);
}

/* UNIFORM with more source replicas than destination replicas: source replica ⌊K/R⌋·r (the
 * first of each block) serves destination replica r; K = 4 replicas (R,S(0) on 0-7), R = 2
 * (R,S(0) on 8-11): replicas 0 and 2, ranks 0, 1 and 4, 5, send; the others stay idle. */
static void
test_m2n_uniform_blocks(void)
{
    const gint64 shape[] = {8, 8};
    g_autoptr(RsLayout) src = test_dtensor(2, shape, "4x2", "0-7", "R,S(0)");
    g_autoptr(RsLayout) dst = test_dtensor(2, shape, "2x2", "8-11", "R,S(0)");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    g_autoptr(RsPlan) plan = build(refit, RS_STRATEGY_M2N_DIRECT, NULL, 1 << 20);
    guint64 sent[8] = {0};
    for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, i);
        g_assert_cmpuint(tr->src, <, 8);
        sent[tr->src] += tr->size_bytes;
    }
    const guint64 expected[8] = {128, 128, 0, 0, 128, 128, 0, 0};
    for (guint r = 0; r < 8; r++)
        g_assert_cmpuint(sent[r], ==, expected[r]);
}

/* One ncclReshard call per tensor: the pattern group of layers.N.w (two stages, two layers
 * each) takes phases 0 and 1, the k-th call of each stage side by side; then
 * "norm" (one tensor) phase 2. Groups in name order: "layers.X.w" < "norm". */
static void
test_m2n_call_phases(void)
{
    const gint64 shape[] = {8, 8};
    g_autoptr(RsLayout) stage0 = test_dtensor(2, shape, "2", "0,1", "S(0)");
    g_autoptr(RsLayout) stage1 = test_dtensor(2, shape, "2", "2,3", "S(0)");
    g_autoptr(RsLayout) dst = test_dtensor(2, shape, "2", "4,5", "S(1)");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    const char *names[] = {"norm", "layers.0.w", "layers.1.w", "layers.2.w", "layers.3.w"};
    RsLayout *srcs[] = {stage1, stage0, stage0, stage1, stage1};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++)
        g_assert_true(rs_refit_add_tensor(refit, names[i], RS_DTYPE_F32, srcs[i], dst, &error));
    g_autoptr(RsPlan) plan = build(refit, RS_STRATEGY_M2N, NULL, 1 << 20);
    const guint expected_phase[] = {2, 0, 1, 0, 1};
    for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, i);
        g_assert_cmpuint(tr->phase, ==, expected_phase[tr->tensor_idx]);
    }
    g_assert_cmpuint(rs_plan_get_n_phases(plan), ==, 3);
}

/* The first-order estimate's busiest link is the refit's, over every phase: m2n-direct puts
 * each tensor call in its own phase, and GPU 0's NIC sends both tensors (2 × 256 B), not
 * one phase's 256 B (which it named before). */
static void
test_busiest_link_over_phases(void)
{
    g_autoptr(RsTopology) topo = load("name: pair\nnodes: 2\ngpus_per_node: 1\n"
                                      "nvlink: {bandwidth: 100 GB/s}\n"
                                      "nic: {bandwidth: 50 GB/s}\n");
    const gint64 shape[] = {8, 8};
    g_autoptr(RsLayout) src = test_dtensor(2, shape, "1", "0", "R");
    g_autoptr(RsLayout) dst = test_dtensor(2, shape, "1", "1", "R");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, "layers.0.w", RS_DTYPE_F32, src, dst, &error));
    g_assert_true(rs_refit_add_tensor(refit, "layers.1.w", RS_DTYPE_F32, src, dst, &error));
    g_autoptr(RsPlan) plan = build(refit, RS_STRATEGY_M2N_DIRECT, topo, 1 << 20);
    g_assert_cmpuint(rs_plan_get_n_phases(plan), ==, 2);
    RsCostEstimate c;
    g_assert_true(rs_cost_estimate(plan, topo, &c, &error));
    g_assert_cmpuint(c.busiest_link, ==, rs_topology_get_gpu_link(topo, 0, RS_LINK_NIC_EGRESS));
    g_assert_cmpuint(c.busiest_link_bytes, ==, 2 * 256);
}

/* --- checkpoint-engine and rdma-p2p --- */

/* checkpoint-engine: each owner's shard goes to every destination rank (a broadcast to the
 * whole group): 2 owners × half the tensor × 3 receivers, from host memory, a world
 * barrier per bucket. */
static void
test_checkpoint_engine_bytes(void)
{
    const gint64 shape[] = {8, 8};
    g_autoptr(RsLayout) src = test_dtensor(2, shape, "2", "0,1", "S(0)");
    g_autoptr(RsLayout) dst = test_dtensor(2, shape, "3", "2-4", "R");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    g_autoptr(RsPlan) plan = build(refit, RS_STRATEGY_CHECKPOINT_ENGINE, NULL, 1 << 20);
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, 2 * 128 * 3);
    g_assert_cmpint(rs_plan_get_pack_method(plan), ==, RS_PACK_HOST_H2D);
    /* One bucket per owner, in turn: owner 0's, then owner 1's. */
    g_assert_cmpuint(rs_plan_get_n_phases(plan), ==, 2);
}

/* rdma-p2p: four tensors on ranks 0, 1 (S(0)); the static schedule gives them to 0, 1, 0,
 * 1 (fewest bytes so far); each gathers its tensor whole (half from the other rank) and
 * writes each of the two destinations its half (S(1)). */
static void
test_rdma_p2p_schedule(void)
{
    const gint64 shape[] = {8, 8};
    g_autoptr(RsLayout) src = test_dtensor(2, shape, "2", "0,1", "S(0)");
    g_autoptr(RsLayout) dst = test_dtensor(2, shape, "2", "2,3", "S(1)");
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(GError) error = NULL;
    for (guint i = 0; i < 4; i++) {
        g_autofree char *name = g_strdup_printf("w%u", i);
        g_assert_true(rs_refit_add_tensor(refit, name, RS_DTYPE_F32, src, dst, &error));
    }
    g_autoptr(RsPlan) plan = build(refit, RS_STRATEGY_RDMA_P2P, NULL, 1 << 20);
    for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, i);
        if (tr->phase == 1)
            g_assert_cmpuint(tr->src, ==, tr->tensor_idx % 2);
    }
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, 4 * (128 + 256));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/peers/nccl-broadcast/ring-textbook", test_ring_textbook);
    g_test_add_func("/peers/relay-step", test_relay_step);
    g_test_add_func("/peers/nccl-broadcast/boxes-shared", test_boxes_shared);
    g_test_add_func("/peers/nccl-broadcast/channel-per-rail", test_channel_per_rail);
    g_test_add_func("/peers/nccl-broadcast/all-gather", test_all_gather);
    g_test_add_func("/peers/m2n/chain", test_m2n_chain);
    g_test_add_func("/peers/m2n/uniform-blocks", test_m2n_uniform_blocks);
    g_test_add_func("/peers/m2n/call-phases", test_m2n_call_phases);
    g_test_add_func("/peers/busiest-link-over-phases", test_busiest_link_over_phases);
    g_test_add_func("/peers/checkpoint-engine/bytes", test_checkpoint_engine_bytes);
    g_test_add_func("/peers/rdma-p2p/schedule", test_rdma_p2p_schedule);
    return g_test_run();
}

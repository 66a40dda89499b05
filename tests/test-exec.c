/* test-exec.c — plans executed on the host transport with real bytes and checked element
 * by element: the cases of ../shared/CASES.md that concern execution (C01–C04, C11, C12,
 * C15 in the slow suite, C17), random DTensor layouts under both strategies with chunks cut
 * inside elements and tiny windows, multi-tensor plans with relays, a corrupted byte found
 * at its exact index, and bad options refused; and the chunk schedule of small plans (chunks,
 * slots, relay dependencies, each rank's order) checked value by value without a transport. */
#include "exec/executor.h"
#include "exec/schedule.h"

#include "exec-cases.h"

#include <string.h>

/* Plans @refit with @strategy, checks the plan, runs it and returns the result; fails the
 * test on any error or a validation failure. */
static void
run_checked(const RsRefit *refit, RsStrategy strategy, const RsExecOptions *options,
            RsExecResult *result)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build(refit, strategy, &error);
    g_assert_no_error(error);
    g_assert_true(rs_plan_check(plan, refit, &error));
    g_autoptr(RsTransport) t = rs_transport_open("host", NULL, &error);
    g_assert_no_error(error);
    if (!rs_exec_run(t, plan, refit, options, result, &error))
        g_error("%s: %s", rs_strategy_get_name(strategy), error->message);
    g_assert_true(result->validated);
    if (result->n_bad_elems != 0) {
        g_autofree char *what = rs_exec_mismatch_format(&result->first_bad, refit);
        g_error("%s: %" G_GUINT64_FORMAT " bad elements, first %s",
                rs_strategy_get_name(strategy), result->n_bad_elems, what);
    }
    g_assert_cmpuint(result->bytes_moved, ==, rs_plan_get_bytes_moved(plan));
    g_assert_cmpuint(result->max_outstanding, <=,
                     options && options->window ? options->window : RS_EXEC_DEFAULT_WINDOW);
}

/* --- CASES.md --- */

static void
test_case_row(gconstpointer data)
{
    const CaseRow *row = data;
    g_autoptr(RsRefit) refit = rs_refit_new();
    add_tensor(refit, &row->tensor);
    for (guint s = 0; s < RS_STRATEGY_N; s++) {
        RsExecOptions opts = {.chunk_bytes = 24, .window = 3, .n_runs = 2};
        RsExecResult res;
        run_checked(refit, (RsStrategy)s, &opts, &res);
        g_assert_cmpuint(res.n_ranks, ==, row->n_ranks);
        g_assert_cmpuint(res.n_runs, ==, 2);
        if (s == RS_STRATEGY_DIRECT && row->direct_bytes >= 0)
            g_assert_cmpuint(res.bytes_moved, ==, (guint64)row->direct_bytes);
        rs_exec_result_clear(&res);
    }
}

/* C12: 4 ranks all-to-all, 300 pieces per rank (100 tensors × 3 peers), coalesced into 3
 * messages per rank and cut into 256-byte chunks; at most `window` chunks in flight. */
static void
test_c12_all_to_all(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    for (guint i = 0; i < 100; i++) {
        g_autofree char *name = g_strdup_printf("t%u", i);
        TensorSpec t = {name, "16x16", RS_DTYPE_F32, "4", "S(0)", "0-3", "4", "S(1)", "0-3"};
        add_tensor(refit, &t);
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    guint pieces_from_0 = 0;
    for (guint k = 0; k < rs_plan_get_n_transfers(plan); k++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, k);
        pieces_from_0 += tr->src == 0 && tr->dst != 0;
    }
    g_assert_cmpuint(pieces_from_0, ==, 300);
    g_assert_cmpuint(rs_plan_get_n_network_messages(plan), ==, 12);
    const guint windows[] = {1, 4};
    for (guint w = 0; w < G_N_ELEMENTS(windows); w++) {
        RsExecOptions opts = {.chunk_bytes = 256, .window = windows[w]};
        RsExecResult res;
        run_checked(refit, RS_STRATEGY_DIRECT, &opts, &res);
        /* Each message: 100 pieces of 4 × 4 f32 = 6400 bytes = 25 chunks. */
        g_assert_cmpuint(res.n_sends, ==, 12 * 25);
        g_assert_cmpuint(res.max_outstanding, ==, windows[w]);
        g_assert_cmpuint(res.bytes_moved, ==, 12 * 6400);
        rs_exec_result_clear(&res);
    }
}

/* C17: 10,000 small tensors between two ranks travel as one message in ~20 chunks
 * (buckets), not 10,000 calls: 10,000 × 1 KiB in 512 KiB buckets = 20 sends. The host
 * transport copies the 1 KiB runs straight between the shards (no pack buffer). */
static void
test_c17_many_small_tensors(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    for (guint i = 0; i < 10000; i++) {
        g_autofree char *name = g_strdup_printf("t%u", i);
        TensorSpec t = {name, "256", RS_DTYPE_F32, "1", "R", "0", "1", "R", "1"};
        add_tensor(refit, &t);
    }
    RsExecOptions opts = {.chunk_bytes = 512 << 10, .window = 2};
    RsExecResult res;
    run_checked(refit, RS_STRATEGY_DIRECT, &opts, &res);
    g_assert_cmpuint(res.bytes_moved, ==, 10000 * 1024);
    g_assert_cmpuint(res.n_sends, ==, 20);
    g_assert_cmpuint(res.n_zero_copy, ==, 40);
    g_assert_cmpuint(res.peak_pack_bytes, ==, 0);
    rs_exec_result_clear(&res);
}

/* C14: packing never holds a second full copy of a bucket: rows of 16 bytes (a [4096, 8]
 * f32 tensor split on its last dim) must be packed, at most `window` chunks at a time. */
static void
test_c14_pack_memory(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec t = {"w", "4096x8", RS_DTYPE_F32, "1", "R", "0", "2", "S(1)", "1,2"};
    add_tensor(refit, &t);
    RsExecOptions opts = {.chunk_bytes = 16 << 10, .window = 2};
    RsExecResult res;
    run_checked(refit, RS_STRATEGY_DIRECT, &opts, &res);
    /* Two messages of 4096 × 4 × 4 = 64 KiB: 4 chunks each. */
    g_assert_cmpuint(res.n_sends, ==, 8);
    g_assert_cmpuint(res.peak_pack_bytes, >, 0);
    g_assert_cmpuint(res.peak_pack_bytes, <=, 2 * (16 << 10));
    rs_exec_result_clear(&res);
}

/* Pack buffers come from a pool: rows of 16 bytes are packed, and each message of
 * 1000 × 4 × 4 = 16,000 bytes ends with a short chunk (3,712 of 4,096 bytes); the first run
 * allocates its buffers, later runs take every one from the pool instead of mapping fresh
 * memory. */
static void
test_pack_pool(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec t = {"w", "1000x8", RS_DTYPE_F32, "1", "R", "0", "2", "S(1)", "1,2"};
    add_tensor(refit, &t);
    RsExecOptions one = {.chunk_bytes = 4096, .window = 2, .n_runs = 1};
    RsExecResult res;
    run_checked(refit, RS_STRATEGY_DIRECT, &one, &res);
    g_assert_cmpuint(res.n_sends, ==, 8);
    g_assert_cmpuint(res.n_pack_allocs, >, 0);
    rs_exec_result_clear(&res);
    RsExecOptions three = {.chunk_bytes = 4096, .window = 2, .n_runs = 3};
    run_checked(refit, RS_STRATEGY_DIRECT, &three, &res);
    g_assert_cmpuint(res.n_runs, ==, 3);
    g_assert_cmpuint(res.n_pack_allocs, ==, 0); /* the statistics are the last run's */
    g_assert_cmpuint(res.peak_pack_bytes, <=, 2 * 4096);
    rs_exec_result_clear(&res);

    /* Last chunks of different sizes: rank 0 and rank 3 each send half the columns (16-byte
     * rows, packed) of "a" (1,211 rows: 19,376 bytes, a last chunk of 2,992) to rank 1 and
     * of "b" (1,586 rows: 25,376 bytes, a last chunk of 8,992) to rank 2, in 16 KiB chunks.
     * Later runs still take every buffer from the pool, and no rank holds more than
     * window × chunk of pack memory, in use and idle. */
    g_autoptr(RsRefit) mixed = rs_refit_new();
    TensorSpec a = {"a", "1211x8", RS_DTYPE_F32, "2", "S(1)", "0,3", "1", "R", "1"};
    TensorSpec b = {"b", "1586x8", RS_DTYPE_F32, "2", "S(1)", "0,3", "1", "R", "2"};
    add_tensor(mixed, &a);
    add_tensor(mixed, &b);
    RsExecOptions runs = {.chunk_bytes = 16 << 10, .window = 2, .n_runs = 3};
    run_checked(mixed, RS_STRATEGY_DIRECT, &runs, &res);
    g_assert_cmpuint(res.n_sends, ==, 8);
    g_assert_cmpuint(res.n_pack_allocs, ==, 0);
    g_assert_cmpuint(res.peak_pack_bytes, <=, 2 * (16 << 10));
    rs_exec_result_clear(&res);
}

/* C15 (slow suite): one 2.5 GiB uint8 tensor between two ranks, byte-identical. Sizes and
 * offsets are 64-bit; each transport call carries a chunk below 2^31 bytes. */
static void
test_c15_large_tensor(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec t = {"big", "2684354560", RS_DTYPE_U8, "1", "R", "0", "1", "R", "1"};
    add_tensor(refit, &t);
    RsExecOptions opts = {.chunk_bytes = 256 << 20};
    RsExecResult res;
    run_checked(refit, RS_STRATEGY_DIRECT, &opts, &res);
    g_assert_cmpuint(res.bytes_moved, ==, G_GUINT64_CONSTANT(2684354560));
    g_assert_cmpuint(res.n_sends, ==, 10);
    /* Sent from and received into the shards: no pack copy. */
    g_assert_cmpuint(res.n_zero_copy, ==, 20);
    rs_exec_result_clear(&res);
}

/* --- plans of several tensors, relays --- */

/* The planner's closed-form case (three tensors, a colocated destination, replicated and
 * sharded sources), plus a fourth tensor on other ranks: gather-broadcast relays chain
 * through every destination; chunks cut inside bf16 and f32 elements. */
static void
test_multi_tensor(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    const TensorSpec specs[] = {
        {"a", "12x5", RS_DTYPE_BF16, "4", "S(0)", "0-3", "2x3", "R,S(1)", "10-15"},
        {"b", "7", RS_DTYPE_F32, "2x2", "S(0),R", "0-3", "3", "S(0)", "0,1,2"},
        {"c", "4x3x6", RS_DTYPE_BF16, "4", "R", "0-3", "2x3", "S(1),S(0)", "10-15"},
        {"d", "33x17", RS_DTYPE_F64, "2", "S(1)", "4,5", "3", "S(0)", "12,0,6"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(specs); i++)
        add_tensor(refit, &specs[i]);
    const guint64 chunks[] = {7, 100, 4096};
    for (guint s = 0; s < RS_STRATEGY_N; s++)
        for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
            RsExecOptions opts = {.chunk_bytes = chunks[c], .window = 2};
            RsExecResult res;
            run_checked(refit, (RsStrategy)s, &opts, &res);
            g_assert_cmpuint(res.n_ranks, ==, 13);
            /* The trace names every message with its times. */
            g_assert_nonnull(res.trace);
            g_assert_cmpstr(rs_trace_get_meta(res.trace, "source"), ==, "measured");
            for (guint i = 0; i < rs_trace_get_n_rows(res.trace); i++) {
                const RsTraceRow *row = rs_trace_get_row(res.trace, i);
                g_assert_cmpfloat(row->end_s, >=, row->start_s);
                g_assert_cmpfloat(row->start_s, >=, 0.0);
            }
            rs_exec_result_clear(&res);
        }
}

/* Node-aware and hierarchical planned on a cluster of four NVLink domains of two GPUs:
 * hierarchical forwards what enters a domain over NVLink from the receiving GPU's own
 * destination shard (FROM_DESTINATION relays, and with domain relays from one domain to
 * the next); the executor must read those bytes from the relay's destination buffer. */
static void
test_topology_relays(void)
{
    static const char *const yaml = "name: four-domains\n"
                                    "nodes: 4\n"
                                    "gpus_per_node: 2\n"
                                    "nvlink: {bandwidth: 100 GB/s}\n"
                                    "nic: {bandwidth: 10 GB/s}\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTopology) topo = rs_topology_load_string(yaml, "four-domains.yaml", NULL, &error);
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = rs_refit_new();
    const TensorSpec specs[] = {
        {"replicated", "64x48", RS_DTYPE_BF16, "2", "S(0)", "0,1", "6", "R", "2-7"},
        {"columns", "40x96", RS_DTYPE_F32, "2", "S(0)", "0,1", "3x2", "R,S(1)", "2-7"},
        {"rows", "96x8", RS_DTYPE_BF16, "2", "R", "0,1", "3x2", "S(0),R", "2-7"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(specs); i++)
        add_tensor(refit, &specs[i]);
    const RsStrategy strategies[] = {RS_STRATEGY_NODE_AWARE, RS_STRATEGY_HIERARCHICAL};
    for (guint s = 0; s < G_N_ELEMENTS(strategies); s++) {
        for (guint relays = 0; relays < 2; relays++) {
            RsPlanOptions po;
            rs_plan_options_init(&po, topo);
            po.domain_relays = relays;
            g_autoptr(RsPlan) plan = rs_plan_build_full(refit, strategies[s], &po, &error);
            g_assert_no_error(error);
            g_assert_true(rs_plan_check(plan, refit, &error));
            guint n_from_destination = 0;
            for (guint k = 0; k < rs_plan_get_n_transfers(plan); k++)
                n_from_destination += (rs_plan_get_transfer(plan, k)->flags &
                                       RS_TRANSFER_FROM_DESTINATION) != 0;
            if (strategies[s] == RS_STRATEGY_HIERARCHICAL)
                g_assert_cmpuint(n_from_destination, >, 0);
            g_autoptr(RsTransport) t = rs_transport_open("host", NULL, &error);
            g_assert_no_error(error);
            RsExecOptions opts = {.chunk_bytes = 1000, .window = 3};
            RsExecResult res;
            if (!rs_exec_run(t, plan, refit, &opts, &res, &error))
                g_error("%s: %s", rs_strategy_get_name(strategies[s]), error->message);
            g_assert_true(res.validated);
            g_assert_cmpuint(res.n_bad_elems, ==, 0);
            g_assert_cmpuint(res.bytes_moved, ==, rs_plan_get_bytes_moved(plan));
            rs_exec_result_clear(&res);
        }
    }
}

/* --- random layouts --- */

static void
random_side(GRand *rng, guint n_dims, guint32 base, GString *mesh, GString *placements,
            GString *ranks)
{
    guint n_mesh_dims = (guint)g_rand_int_range(rng, 1, 3);
    guint n = 1;
    g_string_truncate(mesh, 0);
    g_string_truncate(placements, 0);
    g_string_truncate(ranks, 0);
    for (guint m = 0; m < n_mesh_dims; m++) {
        guint size = (guint)g_rand_int_range(rng, 1, 4);
        n *= size;
        g_string_append_printf(mesh, "%s%u", m ? "x" : "", size);
        if (g_rand_boolean(rng))
            g_string_append_printf(placements, "%sR", m ? "," : "");
        else
            g_string_append_printf(placements, "%sS(%d)", m ? "," : "",
                                   g_rand_int_range(rng, 0, (gint32)n_dims));
    }
    /* n distinct ranks from base..base+9, in random order. */
    guint32 pool[10];
    for (guint i = 0; i < 10; i++)
        pool[i] = base + i;
    for (guint i = 0; i < n; i++) {
        guint j = (guint)g_rand_int_range(rng, (gint32)i, 10);
        guint32 tmp = pool[i];
        pool[i] = pool[j];
        pool[j] = tmp;
        g_string_append_printf(ranks, "%s%u", i ? "," : "", pool[i]);
    }
}

static void
test_random_layouts(void)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(20261130);
    const RsDtype dtypes[] = {RS_DTYPE_U8, RS_DTYPE_BF16, RS_DTYPE_F32, RS_DTYPE_F64};
    g_autoptr(GString) sm = g_string_new(NULL), sp = g_string_new(NULL), sr = g_string_new(NULL);
    g_autoptr(GString) dm = g_string_new(NULL), dp = g_string_new(NULL), dr = g_string_new(NULL);
    g_autoptr(GString) shape = g_string_new(NULL);
    for (guint c = 0; c < 150; c++) {
        g_autoptr(RsRefit) refit = rs_refit_new();
        guint n_tensors = (guint)g_rand_int_range(rng, 1, 4);
        /* Disjoint, overlapping or identical rank sets. */
        guint32 dst_base = (c % 3 == 0) ? 10 : (c % 3 == 1 ? 5 : 0);
        for (guint i = 0; i < n_tensors; i++) {
            guint n_dims = (guint)g_rand_int_range(rng, 1, 4);
            g_string_truncate(shape, 0);
            for (guint d = 0; d < n_dims; d++)
                g_string_append_printf(shape, "%s%d", d ? "x" : "", g_rand_int_range(rng, 1, 9));
            random_side(rng, n_dims, 0, sm, sp, sr);
            random_side(rng, n_dims, dst_base, dm, dp, dr);
            g_autofree char *name = g_strdup_printf("t%u", i);
            TensorSpec t = {name, shape->str, dtypes[g_rand_int_range(rng, 0, 4)], sm->str,
                            sp->str, sr->str, dm->str, dp->str, dr->str};
            add_tensor(refit, &t);
        }
        for (guint s = 0; s < RS_STRATEGY_N; s++) {
            RsExecOptions opts = {.chunk_bytes = (guint64)g_rand_int_range(rng, 1, 64),
                                  .window = (guint)g_rand_int_range(rng, 1, 5)};
            RsExecResult res;
            run_checked(refit, (RsStrategy)s, &opts, &res);
            rs_exec_result_clear(&res);
        }
    }
}

/* --- a corrupted byte is found at its index --- */

/* [8,8] f32 S(0) on ranks 0,1 → S(1) on ranks 0,1: message 0 → 1 carries rows 0-3, columns
 * 4-7 (16 elements, 64 bytes, row-major). Flipping byte 21 changes element 5 of it: global
 * [1, 5]. */
static void
test_corrupt_byte(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec t = {"w", "8x8", RS_DTYPE_F32, "2", "S(0)", "0,1", "2", "S(1)", "0,1"};
    add_tensor(refit, &t);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    guint m01 = G_MAXUINT;
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src == 0 && msg->dst == 1)
            m01 = m;
    }
    g_assert_cmpuint(m01, !=, G_MAXUINT);
    g_assert_cmpuint(rs_plan_get_message(plan, m01)->size_bytes, ==, 64);
    g_autoptr(RsTransport) tr = rs_transport_open("host", NULL, &error);
    const guint64 chunks[] = {0, 16, 3}; /* zero-copy, packed, cut inside elements */
    for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
        RsExecOptions opts = {.chunk_bytes = chunks[c], .corrupt = TRUE, .corrupt_message = m01,
                              .corrupt_byte = 21, .n_runs = 3};
        RsExecResult res;
        g_assert_true(rs_exec_run(tr, plan, refit, &opts, &res, &error));
        g_assert_no_error(error);
        g_assert_cmpuint(res.n_bad_elems, ==, 1);
        g_assert_cmpuint(res.n_runs, ==, 1); /* a failed check stops further runs */
        g_assert_cmpuint(res.first_bad.rank, ==, 1);
        g_assert_cmpuint(res.first_bad.tensor_idx, ==, 0);
        g_assert_cmpint(res.first_bad.global_index[0], ==, 1);
        g_assert_cmpint(res.first_bad.global_index[1], ==, 5);
        g_assert_cmpuint(res.first_bad.flat_index, ==, 13);
        g_assert_cmpuint(res.first_bad.got[1], ==, res.first_bad.expected[1] ^ 0xff);
        g_autofree char *text = rs_exec_mismatch_format(&res.first_bad, refit);
        g_assert_nonnull(strstr(text, "tensor w (index 0), rank 1, global index [1, 5] (flat 13)"));
        rs_exec_result_clear(&res);
    }
    /* A relay forwards the bad byte: every later rank of the chain sees it too. */
    g_autoptr(RsRefit) chain = rs_refit_new();
    TensorSpec tc = {"w", "4x4", RS_DTYPE_U8, "1", "R", "0", "3", "R", "1-3"};
    add_tensor(chain, &tc);
    g_autoptr(RsPlan) gb = rs_plan_build(chain, RS_STRATEGY_GATHER_BROADCAST, &error);
    guint first = G_MAXUINT;
    for (guint m = 0; m < rs_plan_get_n_messages(gb); m++) {
        const RsMessage *msg = rs_plan_get_message(gb, m);
        if (msg->src == 0 && msg->dst == 1)
            first = m;
    }
    RsExecOptions opts = {.chunk_bytes = 5, .corrupt = TRUE, .corrupt_message = first,
                          .corrupt_byte = 6};
    RsExecResult res;
    g_assert_true(rs_exec_run(tr, gb, chain, &opts, &res, &error));
    g_assert_cmpuint(res.n_bad_elems, ==, 3);
    g_assert_cmpuint(res.first_bad.rank, ==, 1);
    g_assert_cmpint(res.first_bad.global_index[0], ==, 1);
    g_assert_cmpint(res.first_bad.global_index[1], ==, 2);
    rs_exec_result_clear(&res);
}

static void
test_bad_options(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec t = {"w", "8x8", RS_DTYPE_F32, "2", "S(0)", "0,1", "2", "S(1)", "0,1"};
    add_tensor(refit, &t);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    g_autoptr(RsTransport) tr = rs_transport_open("host", NULL, &error);
    RsExecResult res;
    /* A local copy cannot be corrupted on the wire. */
    guint local = G_MAXUINT;
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++)
        if (rs_plan_get_message(plan, m)->src == rs_plan_get_message(plan, m)->dst)
            local = m;
    RsExecOptions opts = {.corrupt = TRUE, .corrupt_message = local, .corrupt_byte = 0};
    g_assert_false(rs_exec_run(tr, plan, refit, &opts, &res, &error));
    g_assert_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID);
    g_clear_error(&error);
    RsExecOptions big = {.chunk_bytes = G_GUINT64_CONSTANT(1) << 31};
    g_assert_false(rs_exec_run(tr, plan, refit, &big, &res, &error));
    g_assert_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID);
    g_clear_error(&error);
    /* More memory than allowed is refused before anything is allocated. */
    RsExecOptions small = {.memory_limit_bytes = 100};
    g_assert_false(rs_exec_run(tr, plan, refit, &small, &res, &error));
    g_assert_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_MEMORY);
    g_assert_nonnull(strstr(error->message, "more than the 0.00 GB this machine allows"));
    g_assert_cmpuint(rs_exec_get_buffer_bytes(plan, refit), ==, 2 * 128 + 2 * 128);
    g_clear_error(&error);
    /* The pack buffers count what one operation of this plan packs (its messages of at
     * most 128 bytes take a 4 KiB buffer), not the chunk: 512 bytes of shards + 2 ranks ×
     * window 8 × 4 KiB, at a 1 GiB chunk too (that counted 2 × 8 × 1 GiB and was refused),
     * + the host transport's queues for 2 ranks whose messages go both ways (2 pairs). */
    gboolean pair[2][2] = {{FALSE}};
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src != msg->dst)
            pair[msg->src][msg->dst] = TRUE;
    }
    g_assert_true(pair[0][1] && pair[1][0]);
    guint64 need = 512 + 2 * 8 * 4096 + rs_transport_get_launch_bytes(tr, 2, 2);
    RsExecOptions exact = {.chunk_bytes = G_GUINT64_CONSTANT(1) << 30, .memory_limit_bytes = need};
    g_assert_true(rs_exec_run(tr, plan, refit, &exact, &res, &error));
    g_assert_no_error(error);
    rs_exec_result_clear(&res);
    exact.memory_limit_bytes = need - 1;
    g_assert_false(rs_exec_run(tr, plan, refit, &exact, &res, &error));
    g_assert_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_MEMORY);
    g_clear_error(&error);
    /* A transfer whose source does not hold its box is refused with its name, not run. */
    guint net = G_MAXUINT;
    for (guint k = 0; k < rs_plan_get_n_transfers(plan); k++)
        if (rs_plan_get_transfer(plan, k)->src != rs_plan_get_transfer(plan, k)->dst)
            net = k;
    RsTransfer *bad = (RsTransfer *)rs_plan_get_transfer(plan, net);
    RsTransfer saved = *bad;
    RsBox other = *bad->box;             /* (a copy: the plan's boxes are shared) */
    other.lo[0] = bad->src == 0 ? 4 : 0; /* rows the other rank holds */
    other.hi[0] = other.lo[0] + 4;
    bad->box = &other;
    RsExecOptions plain = {0};
    g_assert_false(rs_exec_run(tr, plan, refit, &plain, &res, &error));
    g_assert_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID);
    g_assert_nonnull(strstr(error->message, "w: transfer"));
    g_assert_nonnull(strstr(error->message, "hold 0 of its 16 elements"));
    rs_exec_result_clear(&res);
    *bad = saved;
}

/* --- the chunk schedule, from the plan alone --- */

static RsPlan *
plan_of(const RsRefit *refit, RsStrategy strategy)
{
    g_autoptr(GError) error = NULL;
    RsPlan *plan = rs_plan_build(refit, strategy, &error);
    g_assert_no_error(error);
    return plan;
}

/* The rank's operations must be @expected, in that order. */
static void
assert_rank_ops(const RsSchedule *schedule, guint32 gpu, const RsScheduleOp *expected,
                guint n_expected)
{
    g_autoptr(GArray) ops = rs_schedule_get_rank_ops(schedule, gpu);
    g_assert_cmpuint(ops->len, ==, n_expected);
    for (guint i = 0; i < n_expected; i++) {
        const RsScheduleOp *op = &g_array_index(ops, RsScheduleOp, i);
        g_assert_cmpuint(op->phase, ==, expected[i].phase);
        g_assert_cmpuint(op->slot, ==, expected[i].slot);
        g_assert_cmpuint(op->msg, ==, expected[i].msg);
        g_assert_cmpuint(op->chunk, ==, expected[i].chunk);
        g_assert_cmpint(op->is_send, ==, expected[i].is_send);
        g_assert_cmpuint(op->colour, ==, expected[i].colour);
    }
}

/* One 96-byte message 0 -> 1 (24 f32) in chunks of 32 bytes: three chunks of 32 bytes in
 * slots 0, 1, 2, sent by rank 0 and received by rank 1 in chunk order; in chunks of 40
 * bytes the last chunk holds the last 16 bytes. */
static void
test_schedule_three_chunks(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec t = {"w", "24", RS_DTYPE_F32, "1", "R", "0", "1", "R", "1"};
    add_tensor(refit, &t);
    g_autoptr(RsPlan) plan = plan_of(refit, RS_STRATEGY_DIRECT);
    g_assert_cmpuint(rs_plan_get_n_messages(plan), ==, 1);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsSchedule) s = rs_schedule_new(plan, 32, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_schedule_get_chunk_bytes(s), ==, 32);
    g_assert_cmpuint(rs_schedule_get_n_chunks(s, 0), ==, 3);
    for (guint j = 0; j < 3; j++) {
        guint64 a, b;
        guint n_deps;
        rs_schedule_get_chunk_range(s, 0, j, &a, &b);
        g_assert_cmpuint(a, ==, 32 * j);
        g_assert_cmpuint(b, ==, 32 * (j + 1));
        g_assert_cmpuint(rs_schedule_get_chunk_slot(s, 0, j), ==, j);
        rs_schedule_get_chunk_deps(s, 0, j, &n_deps);
        g_assert_cmpuint(n_deps, ==, 0);
    }
    const RsScheduleOp sends[] = {{0, 0, 0, 0, TRUE, 0}, {0, 1, 0, 1, TRUE, 0}, {0, 2, 0, 2, TRUE, 0}};
    const RsScheduleOp recvs[] = {{0, 0, 0, 0, FALSE, 0}, {0, 1, 0, 1, FALSE, 0}, {0, 2, 0, 2, FALSE, 0}};
    assert_rank_ops(s, 0, sends, 3);
    assert_rank_ops(s, 1, recvs, 3);
    assert_rank_ops(s, 2, NULL, 0);

    g_autoptr(RsSchedule) ragged = rs_schedule_new(plan, 40, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_schedule_get_n_chunks(ragged, 0), ==, 3);
    guint64 a, b;
    rs_schedule_get_chunk_range(ragged, 0, 2, &a, &b);
    g_assert_cmpuint(a, ==, 80);
    g_assert_cmpuint(b, ==, 96);
    g_autoptr(RsSchedule) whole = rs_schedule_new(plan, 1000, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_schedule_get_n_chunks(whole, 0), ==, 1);
    rs_schedule_get_chunk_range(whole, 0, 0, &a, &b);
    g_assert_cmpuint(a, ==, 0);
    g_assert_cmpuint(b, ==, 96);
}

/* Two tensors from rank 0 to rank 1 share one message: "a" (16 bytes) at offset 0 and "b"
 * (24 bytes) at offset 16; in chunks of 16 bytes the message has 3 chunks, the last of 8. */
static void
test_schedule_coalesced(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec a = {"a", "4", RS_DTYPE_F32, "1", "R", "0", "1", "R", "1"};
    TensorSpec b = {"b", "6", RS_DTYPE_F32, "1", "R", "0", "1", "R", "1"};
    add_tensor(refit, &a);
    add_tensor(refit, &b);
    g_autoptr(RsPlan) plan = plan_of(refit, RS_STRATEGY_DIRECT);
    g_assert_cmpuint(rs_plan_get_n_messages(plan), ==, 1);
    g_assert_cmpuint(rs_plan_get_n_transfers(plan), ==, 2);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsSchedule) s = rs_schedule_new(plan, 16, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_schedule_get_transfer_message(s, 0), ==, 0);
    g_assert_cmpuint(rs_schedule_get_transfer_message(s, 1), ==, 0);
    g_assert_cmpuint(rs_schedule_get_transfer_offset(s, 0), ==, 0);
    g_assert_cmpuint(rs_schedule_get_transfer_offset(s, 1), ==, 16);
    g_assert_cmpuint(rs_schedule_get_n_chunks(s, 0), ==, 3);
    guint64 lo, hi;
    rs_schedule_get_chunk_range(s, 0, 2, &lo, &hi);
    g_assert_cmpuint(lo, ==, 32);
    g_assert_cmpuint(hi, ==, 40);
}

/* Gather-broadcast of 12 f32 (48 bytes) from S(0) on ranks 0, 1 to R on ranks 2, 3, 4, in
 * chunks of 16 bytes. Messages: 0 (0 -> 0, local) and 1 (1 -> 0, 24 bytes) gather into
 * rank 0's staging buffer in phase 0; in phase 1 message 2 (0 -> 2) starts the chain,
 * 4 (2 -> 3) and 6 (3 -> 4) forward it, and 3, 5, 7 are each destination's local copy. */
static RsPlan *
chain_plan(RsRefit *refit)
{
    TensorSpec t = {"w", "12", RS_DTYPE_F32, "2", "S(0)", "0,1", "3", "R", "2,3,4"};
    add_tensor(refit, &t);
    RsPlan *plan = plan_of(refit, RS_STRATEGY_GATHER_BROADCAST);
    const guint32 src[] = {0, 1, 0, 2, 2, 3, 3, 4}, dst[] = {0, 0, 2, 2, 3, 3, 4, 4};
    g_assert_cmpuint(rs_plan_get_n_messages(plan), ==, 8);
    for (guint m = 0; m < 8; m++) {
        g_assert_cmpuint(rs_plan_get_message(plan, m)->src, ==, src[m]);
        g_assert_cmpuint(rs_plan_get_message(plan, m)->dst, ==, dst[m]);
        g_assert_cmpuint(rs_plan_get_message(plan, m)->phase, ==, m < 2 ? 0 : 1);
    }
    return plan;
}

/* Expected chunk slots and dependencies of one network message of the chain. */
typedef struct {
    guint32 msg;
    guint n_chunks;
    guint64 slots[3];
    guint32 dep_msg;      /* G_MAXUINT32: no dependency */
    guint64 need_bytes[3];
} ChainRow;

static void
assert_chain(const RsSchedule *s, const ChainRow *rows, guint n_rows)
{
    for (guint i = 0; i < n_rows; i++) {
        const ChainRow *row = &rows[i];
        g_assert_cmpuint(rs_schedule_get_n_chunks(s, row->msg), ==, row->n_chunks);
        for (guint j = 0; j < row->n_chunks; j++) {
            g_assert_cmpuint(rs_schedule_get_chunk_slot(s, row->msg, j), ==, row->slots[j]);
            guint n_deps;
            const RsScheduleDep *deps = rs_schedule_get_chunk_deps(s, row->msg, j, &n_deps);
            g_assert_cmpuint(n_deps, ==, row->dep_msg == G_MAXUINT32 ? 0 : 1);
            if (n_deps == 1) {
                g_assert_cmpuint(deps[0].msg, ==, row->dep_msg);
                g_assert_cmpuint(deps[0].need_bytes, ==, row->need_bytes[j]);
            }
        }
    }
}

/* Aligned relays (one piece on both hops, as the executor finds for this plan): chunk j is
 * forwarded one slot after it arrived, needing only the bytes up to its end. */
static void
test_schedule_relay_chain(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(RsPlan) plan = chain_plan(refit);
    gboolean aligned[8];
    for (guint k = 0; k < G_N_ELEMENTS(aligned); k++)
        aligned[k] = rs_plan_get_transfer(plan, k)->depends_on >= 0;
    g_assert_cmpuint(rs_plan_get_n_transfers(plan), ==, 8);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsSchedule) s = rs_schedule_new(plan, 16, aligned, &error);
    g_assert_no_error(error);
    const ChainRow rows[] = {
        {1, 2, {0, 1}, G_MAXUINT32, {0}},
        {2, 3, {0, 1, 2}, G_MAXUINT32, {0}},
        {4, 3, {1, 2, 3}, 2, {16, 32, 48}},
        {6, 3, {2, 3, 4}, 4, {16, 32, 48}},
    };
    assert_chain(s, rows, G_N_ELEMENTS(rows));
    /* Local messages: none in chunks; each destination copies after its whole message. */
    g_assert_cmpuint(rs_schedule_get_n_chunks(s, 0), ==, 0);
    g_assert_cmpuint(rs_schedule_get_local_slot(s, 0), ==, 0);
    g_assert_cmpuint(rs_schedule_get_local_slot(s, 3), ==, 3);
    g_assert_cmpuint(rs_schedule_get_local_slot(s, 5), ==, 4);
    g_assert_cmpuint(rs_schedule_get_local_slot(s, 7), ==, 5);
    /* Rank 2 receives chunk j of message 2 and forwards it as chunk j of message 4 at the
     * next slot: receives and sends interleave. */
    const RsScheduleOp rank0[] = {{0, 0, 1, 0, FALSE, 0}, {0, 1, 1, 1, FALSE, 0}, {1, 0, 2, 0, TRUE, 0},
                                  {1, 1, 2, 1, TRUE, 0},  {1, 2, 2, 2, TRUE, 0}};
    const RsScheduleOp rank2[] = {{1, 0, 2, 0, FALSE, 0}, {1, 1, 2, 1, FALSE, 0}, {1, 1, 4, 0, TRUE, 0},
                                  {1, 2, 2, 2, FALSE, 0}, {1, 2, 4, 1, TRUE, 0},  {1, 3, 4, 2, TRUE, 0}};
    const RsScheduleOp rank4[] = {{1, 2, 6, 0, FALSE, 0}, {1, 3, 6, 1, FALSE, 0}, {1, 4, 6, 2, FALSE, 0}};
    assert_rank_ops(s, 0, rank0, G_N_ELEMENTS(rank0));
    assert_rank_ops(s, 2, rank2, G_N_ELEMENTS(rank2));
    assert_rank_ops(s, 4, rank4, G_N_ELEMENTS(rank4));

    /* The executor runs this plan in 16-byte chunks, two in flight, element-exact. */
    RsExecOptions opts = {.chunk_bytes = 16, .window = 2};
    RsExecResult res;
    run_checked(refit, RS_STRATEGY_GATHER_BROADCAST, &opts, &res);
    g_assert_cmpuint(res.n_sends, ==, 2 + 3 * 3);
    rs_exec_result_clear(&res);
}

/* Relays that are not aligned wait for the whole message they forward: each hop starts one
 * slot after the previous hop's last chunk. */
static void
test_schedule_relay_unaligned(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_autoptr(RsPlan) plan = chain_plan(refit);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsSchedule) s = rs_schedule_new(plan, 16, NULL, &error);
    g_assert_no_error(error);
    const ChainRow rows[] = {
        {2, 3, {0, 1, 2}, G_MAXUINT32, {0}},
        {4, 3, {3, 4, 5}, 2, {48, 48, 48}},
        {6, 3, {6, 7, 8}, 4, {48, 48, 48}},
    };
    assert_chain(s, rows, G_N_ELEMENTS(rows));
    g_assert_cmpuint(rs_schedule_get_local_slot(s, 3), ==, 3);
    g_assert_cmpuint(rs_schedule_get_local_slot(s, 5), ==, 6);
    g_assert_cmpuint(rs_schedule_get_local_slot(s, 7), ==, 9);
    const RsScheduleOp rank2[] = {{1, 0, 2, 0, FALSE, 0}, {1, 1, 2, 1, FALSE, 0}, {1, 2, 2, 2, FALSE, 0},
                                  {1, 3, 4, 0, TRUE, 0},  {1, 4, 4, 1, TRUE, 0},  {1, 5, 4, 2, TRUE, 0}};
    assert_rank_ops(s, 2, rank2, G_N_ELEMENTS(rank2));
}

/* Within a slot the operations go by message colour (base/edge-colour.h), not by message:
 * 2 × 2 all-to-all, messages in plan order 0→2, 0→3, 1→2, 1→3 (colours 1, 0, 0, 1: 1→2
 * found 0 taken at 2 and swapped the path 0→2, 0→3), so at colour 0 GPU 0 sends to 3 while
 * GPU 1 sends to 2, and each receiver takes its senders in that order: with a window of 1
 * no rank waits for a peer busy elsewhere. In message order GPU 1 would first send to 2
 * while 2 receives from 0. */
static void
test_schedule_colours(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec t = {"w", "8x8", RS_DTYPE_F32, "2", "S(0)", "0,1", "2", "S(1)", "2,3"};
    add_tensor(refit, &t);
    g_autoptr(RsPlan) plan = plan_of(refit, RS_STRATEGY_DIRECT);
    g_assert_cmpuint(rs_plan_get_n_messages(plan), ==, 4);
    const guint32 want_src[] = {0, 0, 1, 1}, want_dst[] = {2, 3, 2, 3}, colours[] = {1, 0, 0, 1};
    g_autoptr(GError) error = NULL;
    g_autoptr(RsSchedule) s = rs_schedule_new(plan, 1 << 20, NULL, &error);
    g_assert_no_error(error);
    for (guint m = 0; m < 4; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        g_assert_cmpuint(msg->src, ==, want_src[m]);
        g_assert_cmpuint(msg->dst, ==, want_dst[m]);
        g_assert_cmpuint(rs_schedule_get_message_colour(s, m), ==, colours[m]);
    }
    const RsScheduleOp gpu1[] = {{0, 0, 2, 0, TRUE, 0}, {0, 0, 3, 0, TRUE, 1}};
    const RsScheduleOp gpu2[] = {{0, 0, 2, 0, FALSE, 0}, {0, 0, 0, 0, FALSE, 1}};
    const RsScheduleOp gpu3[] = {{0, 0, 1, 0, FALSE, 0}, {0, 0, 3, 0, FALSE, 1}};
    assert_rank_ops(s, 1, gpu1, 2);
    assert_rank_ops(s, 2, gpu2, 2);
    assert_rank_ops(s, 3, gpu3, 2);
    /* It runs element-exact with one operation in flight per rank. */
    RsExecOptions opts = {.window = 1};
    RsExecResult res;
    run_checked(refit, RS_STRATEGY_DIRECT, &opts, &res);
    rs_exec_result_clear(&res);
}

/* The window bounds what is in flight, not the order: the 3-chunk message of
 * test_schedule_three_chunks with a window of 2 has two chunks in flight at most (both
 * ranks post chunks 0 and 1 at once, chunk 2 after one completes), with 1 one, with 8 all
 * three. */
static void
test_schedule_window(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec t = {"w", "24", RS_DTYPE_F32, "1", "R", "0", "1", "R", "1"};
    add_tensor(refit, &t);
    const guint windows[] = {1, 2, 8}, in_flight[] = {1, 2, 3};
    for (guint i = 0; i < G_N_ELEMENTS(windows); i++) {
        RsExecOptions opts = {.chunk_bytes = 32, .window = windows[i]};
        RsExecResult res;
        run_checked(refit, RS_STRATEGY_DIRECT, &opts, &res);
        g_assert_cmpuint(res.n_sends, ==, 3);
        g_assert_cmpuint(res.max_outstanding, ==, in_flight[i]);
        rs_exec_result_clear(&res);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (guint i = 0; i < G_N_ELEMENTS(case_rows); i++) {
        g_autofree char *path = g_strdup_printf("/exec/cases/%s", case_rows[i].id);
        g_test_add_data_func(path, &case_rows[i], test_case_row);
    }
    g_test_add_func("/exec/cases/C12-all-to-all-300-pieces", test_c12_all_to_all);
    g_test_add_func("/exec/cases/C14-pack-memory", test_c14_pack_memory);
    g_test_add_func("/exec/cases/C17-many-small-tensors", test_c17_many_small_tensors);
    if (g_test_slow())
        g_test_add_func("/exec/slow/C15-2.5GiB-tensor", test_c15_large_tensor);
    g_test_add_func("/exec/multi-tensor-relays", test_multi_tensor);
    g_test_add_func("/exec/pack-pool", test_pack_pool);
    g_test_add_func("/exec/topology-relays", test_topology_relays);
    g_test_add_func("/exec/random-layouts", test_random_layouts);
    g_test_add_func("/exec/corrupt-byte", test_corrupt_byte);
    g_test_add_func("/exec/bad-options", test_bad_options);
    g_test_add_func("/exec/schedule/three-chunks", test_schedule_three_chunks);
    g_test_add_func("/exec/schedule/coalesced-transfers", test_schedule_coalesced);
    g_test_add_func("/exec/schedule/relay-chain", test_schedule_relay_chain);
    g_test_add_func("/exec/schedule/relay-chain-unaligned", test_schedule_relay_unaligned);
    g_test_add_func("/exec/schedule/window", test_schedule_window);
    g_test_add_func("/exec/schedule/colours", test_schedule_colours);
    return g_test_run();
}

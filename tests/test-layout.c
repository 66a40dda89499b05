/* test-layout.c — placements and framework splits resolved to boxes: uneven and empty
 * shards (CASES.md C01–C04), StridedShard (C05 and PyTorch's own examples), vocabulary
 * padding, balanced expert splits, fused buffers (C06, C07, C08, KV-head replication,
 * gpt-oss interleaving), unions, block-scale derivations, and the errors. */
#include "layout/layout.h"
#include "layout/refit.h"
#include "layout/scenario.h"
#include "plan/plan.h"
#include "topologies/topology.h"

#include <string.h>

static RsLayout *
make_layout(guint n_dims, const gint64 *shape, const char *mesh_shape, const char *ranks,
            const char *placements)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsMesh) mesh = rs_mesh_parse(mesh_shape, ranks, &error);
    g_assert_no_error(error);
    RsPlacement p[RS_MAX_MESH_DIMS];
    guint n_p;
    g_assert_true(rs_placements_parse(placements, p, &n_p, &error));
    RsLayout *layout = rs_layout_new_dtensor(n_dims, shape, mesh, p, n_p, &error);
    g_assert_no_error(error);
    return layout;
}

/* Rows [lo, hi) of dim 0 held by @rank, asserting a single box (or none: lo = hi = -1). */
static void
assert_rows(const RsLayout *layout, guint32 rank, gint64 lo, gint64 hi)
{
    gint idx = rs_layout_find_rank(layout, rank);
    g_assert_cmpint(idx, >=, 0);
    guint n;
    const RsLocalBox *boxes = rs_layout_get_boxes(layout, (guint)idx, &n);
    if (lo < 0) {
        g_assert_cmpuint(n, ==, 0);
        g_assert_cmpuint(rs_layout_get_local_n_elems(layout, (guint)idx), ==, 0);
        return;
    }
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpint(boxes[0].box.lo[0], ==, lo);
    g_assert_cmpint(boxes[0].box.hi[0], ==, hi);
    g_assert_cmpuint(boxes[0].offset_elems, ==, 0);
}

/* C01: [5,10] f32 on mesh [4]: R → S(0) → R. */
static void
test_c01_uneven_roundtrip(void)
{
    const gint64 shape[] = {5, 10};
    g_autoptr(RsLayout) rep = make_layout(2, shape, "4", NULL, "R");
    g_autoptr(RsLayout) sharded = make_layout(2, shape, "4", NULL, "S(0)");
    assert_rows(sharded, 0, 0, 2);
    assert_rows(sharded, 1, 2, 4);
    assert_rows(sharded, 2, 4, 5);
    assert_rows(sharded, 3, -1, -1);
    for (guint32 r = 0; r < 4; r++)
        assert_rows(rep, r, 0, 5);

    g_autoptr(GError) error = NULL;
    /* R → S(0): every rank already holds its rows: nothing moves. */
    g_autoptr(RsRefit) first = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(first, "t", RS_DTYPE_F32, rep, sharded, &error));
    g_autoptr(RsPlan) p1 = rs_plan_build(first, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_plan_get_bytes_moved(p1), ==, 0);
    g_assert_cmpuint(rs_plan_get_local_bytes(p1), ==, 50 * 4);
    g_assert_true(rs_plan_check(p1, first, &error));
    /* S(0) → R: rank r receives what it lacks: (30 + 30 + 40 + 50) elements × 4 bytes. */
    g_autoptr(RsRefit) second = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(second, "t", RS_DTYPE_F32, sharded, rep, &error));
    g_autoptr(RsPlan) p2 = rs_plan_build(second, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_plan_get_bytes_moved(p2), ==, 600);
    g_assert_true(rs_plan_check(p2, second, &error));
    g_assert_no_error(error);
}

/* C02: [512,4] on mesh [30] S(0): chunk 18; rank 28 holds 504..511, rank 29 nothing. */
static void
test_c02_empty_shard_offsets(void)
{
    const gint64 shape[] = {512, 4};
    g_autoptr(RsLayout) l = make_layout(2, shape, "30", NULL, "S(0)");
    guint row_owner_count[512] = {0};
    for (guint32 r = 0; r < 28; r++)
        assert_rows(l, r, 18 * r, 18 * r + 18);
    assert_rows(l, 28, 504, 512);
    assert_rows(l, 29, -1, -1);
    for (guint i = 0; i < rs_layout_get_n_ranks(l); i++) {
        guint n;
        const RsLocalBox *b = rs_layout_get_boxes(l, i, &n);
        for (guint k = 0; k < n; k++)
            for (gint64 row = b[k].box.lo[0]; row < b[k].box.hi[0]; row++)
                row_owner_count[row]++;
    }
    for (guint row = 0; row < 512; row++)
        g_assert_cmpuint(row_owner_count[row], ==, 1);
}

/* C03: [6,256] f32 on mesh [4]: R → S(0); rank 3 takes part with an empty buffer. */
static void
test_c03_empty_shard_in_reshard(void)
{
    const gint64 shape[] = {6, 256};
    g_autoptr(RsLayout) rep = make_layout(2, shape, "4", NULL, "R");
    g_autoptr(RsLayout) sharded = make_layout(2, shape, "4", NULL, "S(0)");
    assert_rows(sharded, 0, 0, 2);
    assert_rows(sharded, 1, 2, 4);
    assert_rows(sharded, 2, 4, 6);
    assert_rows(sharded, 3, -1, -1);
    g_assert_cmpint(rs_layout_find_rank(sharded, 3), ==, 3);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "t", RS_DTYPE_F32, rep, sharded, &error));
    g_autofree char *topo_path = g_test_build_filename(G_TEST_DIST, "data", "two-node.yaml", NULL);
    g_autoptr(RsTopology) topo = rs_topology_load_file(topo_path, NULL, &error);
    g_assert_no_error(error);
    RsPlanOptions options;
    rs_plan_options_init(&options, topo);
    for (guint s = 0; s < RS_STRATEGY_N; s++) {
        g_autoptr(RsPlan) plan = rs_plan_build_full(refit, (RsStrategy)s, &options, &error);
        g_assert_no_error(error);
        g_assert_true(rs_plan_check(plan, refit, &error));
        g_assert_no_error(error);
    }
}

/* C04: [2] on mesh [2,4] [S(0), S(0)]: (0,0) holds element 0, (1,0) element 1. */
static void
test_c04_same_dim_twice(void)
{
    const gint64 shape[] = {2};
    g_autoptr(RsLayout) l = make_layout(1, shape, "2x4", NULL, "S(0),S(0)");
    g_assert_cmpuint(rs_layout_get_n_ranks(l), ==, 8);
    assert_rows(l, 0, 0, 1); /* (0,0) */
    assert_rows(l, 4, 1, 2); /* (1,0): the offset is global */
    for (guint32 r = 1; r < 4; r++)
        assert_rows(l, r, -1, -1);
    for (guint32 r = 5; r < 8; r++)
        assert_rows(l, r, -1, -1);
}

/* A 2-D mesh sharding two tensor dims, over explicit non-contiguous ranks. */
static void
test_two_shard_dims(void)
{
    const gint64 shape[] = {7, 9};
    g_autoptr(RsLayout) l = make_layout(2, shape, "2x3", "10,11,12,20,21,22", "S(1),S(0)");
    /* mesh dim 0 (size 2) splits cols 9 → [0,5),[5,9); mesh dim 1 (size 3) rows 7 → 3,3,1. */
    const struct {
        guint32 rank;
        gint64 r0, r1, c0, c1;
    } expect[] = {
        {10, 0, 3, 0, 5}, {11, 3, 6, 0, 5}, {12, 6, 7, 0, 5},
        {20, 0, 3, 5, 9}, {21, 3, 6, 5, 9}, {22, 6, 7, 5, 9},
    };
    for (guint i = 0; i < G_N_ELEMENTS(expect); i++) {
        gint idx = rs_layout_find_rank(l, expect[i].rank);
        g_assert_cmpint(idx, >=, 0);
        guint n;
        const RsLocalBox *b = rs_layout_get_boxes(l, (guint)idx, &n);
        g_assert_cmpuint(n, ==, 1);
        g_assert_cmpint(b[0].box.lo[0], ==, expect[i].r0);
        g_assert_cmpint(b[0].box.hi[0], ==, expect[i].r1);
        g_assert_cmpint(b[0].box.lo[1], ==, expect[i].c0);
        g_assert_cmpint(b[0].box.hi[1], ==, expect[i].c1);
        /* Local buffer is the box, row-major. */
        g_assert_cmpint(b[0].strides_elems[0], ==, expect[i].c1 - expect[i].c0);
        g_assert_cmpint(b[0].strides_elems[1], ==, 1);
    }
    g_assert_cmpint(rs_layout_find_rank(l, 13), ==, -1);
}

static void
test_replicate_and_shard(void)
{
    const gint64 shape[] = {8, 4};
    g_autoptr(RsLayout) l = make_layout(2, shape, "2x2", NULL, "R,S(0)");
    assert_rows(l, 0, 0, 4);
    assert_rows(l, 1, 4, 8);
    assert_rows(l, 2, 0, 4);
    assert_rows(l, 3, 4, 8);
    RsBox all;
    rs_box_init_full(&all, 2, shape);
    g_assert_cmpuint(rs_layout_count_held(l, 3, &all), ==, 16);
}

static void
test_errors(void)
{
    const gint64 shape[] = {8, 4};
    g_autoptr(GError) error = NULL;
    g_autoptr(RsMesh) mesh = rs_mesh_parse("2x2", NULL, &error);
    RsPlacement p[RS_MAX_MESH_DIMS];
    guint n;
    g_assert_true(rs_placements_parse("P,S(0)", p, &n, &error));
    g_assert_null(rs_layout_new_dtensor(2, shape, mesh, p, n, &error));
    g_assert_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_UNSUPPORTED);
    g_clear_error(&error);
    g_assert_true(rs_placements_parse("R,S(2)", p, &n, &error));
    g_assert_null(rs_layout_new_dtensor(2, shape, mesh, p, n, &error));
    g_assert_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID);
    g_clear_error(&error);
    g_assert_true(rs_placements_parse("S(0)", p, &n, &error));
    g_assert_null(rs_layout_new_dtensor(2, shape, mesh, p, n, &error));
    g_assert_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID);
    g_clear_error(&error);
    g_assert_false(rs_placements_parse("S(x)", p, &n, &error));
    g_assert_error(error, RS_MESH_ERROR, RS_MESH_ERROR_PLACEMENT);
    g_clear_error(&error);
    g_assert_null(rs_mesh_parse("2x4", "0-5", &error));
    g_assert_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID);
    g_assert_nonnull(strstr(error->message, "8 positions but 6 ranks"));
    g_clear_error(&error);
    g_assert_null(rs_mesh_parse("2", "3,3", &error));
    g_assert_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID);
    g_clear_error(&error);
    const gint64 huge[] = {G_GINT64_CONSTANT(1) << 40, G_GINT64_CONSTANT(1) << 40};
    g_assert_true(rs_placements_parse("R,R", p, &n, &error));
    g_assert_null(rs_layout_new_dtensor(2, huge, mesh, p, n, &error));
    g_assert_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_OVERFLOW);
}

static void
test_placement_spellings(void)
{
    RsPlacement p[RS_MAX_MESH_DIMS];
    guint n;
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_placements_parse("Shard(dim=1), Replicate(), S(0)", p, &n, &error));
    g_assert_cmpuint(n, ==, 3);
    g_assert_cmpint(p[0].kind, ==, RS_PLACEMENT_SHARD);
    g_assert_cmpint(p[0].dim, ==, 1);
    g_assert_cmpint(p[1].kind, ==, RS_PLACEMENT_REPLICATE);
    g_assert_cmpint(p[2].dim, ==, 0);
    g_autofree char *text = rs_placements_format(p, n);
    g_assert_cmpstr(text, ==, "S(1),R,S(0)");
}


/* --- helpers for multi-box ranks --- */

/* Local index of global element @g (one index per dim) in entry @idx, or -1. */
static gint64
local_index_of(const RsLayout *layout, guint idx, const gint64 *g)
{
    guint n;
    const RsLocalBox *boxes = rs_layout_get_boxes(layout, idx, &n);
    for (guint b = 0; b < n; b++) {
        const RsBox *box = &boxes[b].box;
        gint64 offset = (gint64)boxes[b].offset_elems;
        gboolean inside = TRUE;
        for (guint d = 0; d < box->n_dims && inside; d++) {
            gint64 rel = g[d] - box->lo[d];
            inside = rel >= 0 && g[d] < box->hi[d] && rel % box->step[d] == 0;
            offset += rel / box->step[d] * boxes[b].strides_elems[d];
        }
        if (inside)
            return offset;
    }
    return -1;
}

/* The global rows (dim 0) a rank holds, in local buffer order, as a string "0,2,5"; the
 * other dims must be held whole and row-major behind the row. */
static char *
rows_in_order(const RsLayout *layout, guint32 rank)
{
    gint idx = rs_layout_find_rank(layout, rank);
    g_assert_cmpint(idx, >=, 0);
    const gint64 *shape = rs_layout_get_shape(layout);
    guint n_dims = rs_layout_get_n_dims(layout);
    gint64 row_elems = 1;
    for (guint d = 1; d < n_dims; d++)
        row_elems *= shape[d];
    guint64 buffer = rs_layout_get_local_n_elems(layout, (guint)idx);
    g_autofree gint64 *row_at = g_new(gint64, buffer / MAX(row_elems, 1) + 1);
    for (guint64 i = 0; i < buffer / MAX(row_elems, 1); i++)
        row_at[i] = -1;
    for (gint64 row = 0; row < shape[0]; row++) {
        gint64 g[RS_MAX_DIMS] = {row};
        gint64 at = local_index_of(layout, (guint)idx, g);
        if (at < 0)
            continue;
        g_assert_cmpint(at % row_elems, ==, 0);
        /* The rest of the row follows contiguously. */
        for (gint64 e = 1; e < row_elems; e++) {
            gint64 rest = e;
            for (gint d = (gint)n_dims - 1; d >= 1; d--) {
                g[d] = rest % shape[d];
                rest /= shape[d];
            }
            g_assert_cmpint(local_index_of(layout, (guint)idx, g), ==, at + e);
        }
        row_at[at / row_elems] = row;
    }
    GString *s = g_string_new(NULL);
    for (guint64 i = 0; i < buffer / MAX(row_elems, 1); i++) {
        if (row_at[i] < 0)
            g_string_append_printf(s, "%s_", i ? "," : "");
        else
            g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? "," : "", row_at[i]);
    }
    return g_string_free(s, FALSE);
}

static void
assert_rows_in_order(const RsLayout *layout, guint32 rank, const char *expected)
{
    g_autofree char *got = rows_in_order(layout, rank);
    if (g_strcmp0(got, expected) != 0)
        g_error("rank %u holds rows %s, expected %s", rank, got, expected);
}

static RsLayout *
make_split_layout(guint n_dims, const gint64 *shape, const char *mesh_shape,
                  const RsSplit *splits, guint n_splits, GError **error)
{
    g_autoptr(RsMesh) mesh = rs_mesh_parse(mesh_shape, NULL, NULL);
    g_assert_nonnull(mesh);
    return rs_layout_new_split(n_dims, shape, mesh, splits, n_splits, error);
}

/* C05: [4,1] with row i = i, mesh [2,2] (dp, tp), [SS(0,2), S(0)]: (0,0) row 0, (0,1)
 * row 2, (1,0) row 1, (1,1) row 3. The gather is checked in test-plan.c. */
static void
test_c05_strided_shard(void)
{
    const gint64 shape[] = {4, 1};
    g_autoptr(RsLayout) l = make_layout(2, shape, "2x2", NULL, "SS(0,2),S(0)");
    assert_rows_in_order(l, 0, "0");
    assert_rows_in_order(l, 1, "2");
    assert_rows_in_order(l, 2, "1");
    assert_rows_in_order(l, 3, "3");
    g_assert_true(rs_layout_has_disjoint_shards(l));
}

/* PyTorch's _StridedShard docstrings: [8,8] on mesh [2,2], [SS(0,2), S(0)] gives rank 0
 * rows 0-1, rank 1 rows 4-5, rank 2 rows 2-3, rank 3 rows 6-7 (FSDP2 + TP), while
 * [S(0), S(0)] gives 0-1, 2-3, 4-5, 6-7; and 9 rows, split factor 2, 4 chunks give
 * {0,1,5}, {2,3,6}, {4,7}, {8}. */
static void
test_strided_shard_pytorch_examples(void)
{
    const gint64 shape[] = {8, 8};
    g_autoptr(RsLayout) ss = make_layout(2, shape, "2x2", NULL, "_StridedShard(dim=0, sf=2),S(0)");
    assert_rows_in_order(ss, 0, "0,1");
    assert_rows_in_order(ss, 1, "4,5");
    assert_rows_in_order(ss, 2, "2,3");
    assert_rows_in_order(ss, 3, "6,7");
    g_autoptr(RsLayout) plain = make_layout(2, shape, "2x2", NULL, "S(0),S(0)");
    assert_rows_in_order(plain, 1, "2,3");
    assert_rows_in_order(plain, 2, "4,5");
    const gint64 nine[] = {9};
    g_autoptr(RsLayout) uneven = make_layout(1, nine, "4", NULL, "SS(0,2)");
    assert_rows_in_order(uneven, 0, "0,1,5");
    assert_rows_in_order(uneven, 1, "2,3,6");
    assert_rows_in_order(uneven, 2, "4,7");
    assert_rows_in_order(uneven, 3, "8");
    /* Rank 0 holds two boxes: rows 0-1 at offset 0 and row 5 at offset 2. */
    guint n;
    const RsLocalBox *b = rs_layout_get_boxes(uneven, 0, &n);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpint(b[1].box.lo[0], ==, 5);
    g_assert_cmpuint(b[1].offset_elems, ==, 2);
    /* Split factor 1 is Shard. */
    g_autoptr(RsLayout) one = make_layout(1, nine, "4", NULL, "SS(0,1)");
    assert_rows_in_order(one, 2, "6,7,8");
}

/* vLLM pads the vocabulary to a multiple of 64 and gives each tp rank padded/tp rows. */
static void
test_vocab_padding(void)
{
    const gint64 shape[] = {1000, 4};
    RsSplit pad = {.kind = RS_SPLIT_PADDED, .dim = 0, .multiple = 64};
    g_autoptr(GError) error = NULL;
    g_autoptr(RsLayout) l = make_split_layout(2, shape, "4", &pad, 1, &error);
    g_assert_no_error(error);
    /* 1024 padded rows, 256 per rank: rank 3 holds 768..999 and 24 padding rows. */
    for (guint32 r = 0; r < 3; r++) {
        g_assert_cmpuint(rs_layout_get_local_n_elems(l, r), ==, 256 * 4);
        g_assert_cmpuint(rs_layout_get_held_n_elems(l, r), ==, 256 * 4);
    }
    g_assert_cmpuint(rs_layout_get_local_n_elems(l, 3), ==, 256 * 4);
    g_assert_cmpuint(rs_layout_get_held_n_elems(l, 3), ==, 232 * 4);
    guint n;
    const RsLocalBox *b = rs_layout_get_boxes(l, 3, &n);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpint(b[0].box.lo[0], ==, 768);
    g_assert_cmpint(b[0].box.hi[0], ==, 1000);
    g_assert_cmpint(rs_layout_get_buffer_shape(l, 3)[0], ==, 256);
    /* torch.chunk would have given 250 rows per rank instead. */
    g_autoptr(RsLayout) chunk = make_layout(2, shape, "4", NULL, "S(0)");
    b = rs_layout_get_boxes(chunk, 3, &n);
    g_assert_cmpint(b[0].box.lo[0], ==, 750);
    /* Megatron: 128 × tp = 512: 1024 rows; tp=3 with vLLM's 64: 1024 is not divisible. */
    pad.multiple = 64;
    g_autoptr(RsLayout) bad = make_split_layout(2, shape, "3", &pad, 1, &error);
    g_assert_null(bad);
    g_assert_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID);
    g_assert_nonnull(strstr(error->message, "padded to 1024 do not split over 3"));
}

/* vLLM's linear expert map: 10 experts over 4 ranks are 3, 3, 2, 2. */
static void
test_balanced_experts(void)
{
    const gint64 shape[] = {10, 2, 2};
    RsSplit bal = {.kind = RS_SPLIT_BALANCED, .dim = 0};
    g_autoptr(GError) error = NULL;
    g_autoptr(RsLayout) l = make_split_layout(3, shape, "4", &bal, 1, &error);
    g_assert_no_error(error);
    const gint64 lo[] = {0, 3, 6, 8}, hi[] = {3, 6, 8, 10};
    for (guint32 r = 0; r < 4; r++) {
        guint n;
        const RsLocalBox *b = rs_layout_get_boxes(l, r, &n);
        g_assert_cmpuint(n, ==, 1);
        g_assert_cmpint(b[0].box.lo[0], ==, lo[r]);
        g_assert_cmpint(b[0].box.hi[0], ==, hi[r]);
    }
}

static RsSplit
fused_split(RsFusionKind kind, gint dim, gint64 unit, guint n_segments, const gint64 *lens)
{
    RsSplit s;
    memset(&s, 0, sizeof s);
    s.kind = RS_SPLIT_FUSED;
    s.dim = dim;
    s.fusion.kind = kind;
    s.fusion.unit = unit;
    s.fusion.n_segments = n_segments;
    for (guint i = 0; i < n_segments; i++)
        s.fusion.segment_len[i] = lens[i];
    return s;
}

/* C06: fused qkv [144,4] as [Q;K;V], 128 Q heads, 8 KV heads, head_dim 1, TP 8: rank r
 * holds Q rows 16r..16r+15, K row 128+r, V row 136+r (18 rows), not a contiguous chunk. */
static void
test_c06_fused_qkv(void)
{
    const gint64 shape[] = {144, 4}, lens[] = {128, 8, 8};
    RsSplit qkv = fused_split(RS_FUSION_QKV, 0, 1, 3, lens);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsLayout) l = make_split_layout(2, shape, "8", &qkv, 1, &error);
    g_assert_no_error(error);
    for (guint32 r = 0; r < 8; r++) {
        GString *want = g_string_new(NULL);
        for (gint64 i = 0; i < 16; i++)
            g_string_append_printf(want, "%" G_GINT64_FORMAT ",", 16 * r + i);
        g_string_append_printf(want, "%u,%u", 128 + r, 136 + r);
        assert_rows_in_order(l, r, want->str);
        g_string_free(want, TRUE);
        g_assert_cmpuint(rs_layout_get_local_n_elems(l, r), ==, 18 * 4);
    }
}

/* C07: gate_up [8,2] (gate rows 0..3, up rows 4..7), TP 2: rank 0 rows 0,1,4,5; rank 1
 * rows 2,3,6,7. */
static void
test_c07_fused_gate_up(void)
{
    const gint64 shape[] = {8, 2}, lens[] = {4, 4};
    RsSplit gu = fused_split(RS_FUSION_CONCAT, 0, 1, 2, lens);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsLayout) l = make_split_layout(2, shape, "2", &gu, 1, &error);
    g_assert_no_error(error);
    assert_rows_in_order(l, 0, "0,1,4,5");
    assert_rows_in_order(l, 1, "2,3,6,7");
    /* With one rank the fused tensor is whole and one box. */
    g_autoptr(RsLayout) one = make_split_layout(2, shape, "1", &gu, 1, &error);
    guint n;
    rs_layout_get_boxes(one, 0, &n);
    g_assert_cmpuint(n, ==, 1);
}

/* Buffer row @row of @rank in a fused set: "q3", "k0", … or "_" for padding. */
static char *
fused_rows(RsLayout **set, const char *const *names, guint n_set, guint32 rank)
{
    g_autofree char *parts[RS_MAX_SEGMENTS] = {NULL};
    guint64 buffer_rows = 0;
    for (guint t = 0; t < n_set; t++) {
        gint idx = rs_layout_find_rank(set[t], rank);
        g_assert_cmpint(idx, >=, 0);
        buffer_rows = rs_layout_get_buffer_shape(set[t], (guint)idx)[0];
    }
    g_autofree char **label = g_new0(char *, buffer_rows + 1);
    for (guint t = 0; t < n_set; t++) {
        gint idx = rs_layout_find_rank(set[t], rank);
        const gint64 *shape = rs_layout_get_shape(set[t]);
        const gint64 *bshape = rs_layout_get_buffer_shape(set[t], (guint)idx);
        gint64 row_elems = rs_layout_get_local_n_elems(set[t], (guint)idx) / bshape[0];
        for (gint64 row = 0; row < shape[0]; row++) {
            gint64 g[RS_MAX_DIMS] = {row};
            gint64 at = local_index_of(set[t], (guint)idx, g);
            if (at >= 0) {
                g_assert_null(label[at / row_elems]);
                label[at / row_elems] = g_strdup_printf("%s%" G_GINT64_FORMAT, names[t], row);
            }
        }
    }
    GString *s = g_string_new(NULL);
    for (guint64 i = 0; i < buffer_rows; i++) {
        g_string_append_printf(s, "%s%s", i ? "," : "", label[i] ? label[i] : "_");
        g_free(label[i]);
    }
    return g_string_free(s, FALSE);
}

/* C08: HF q [16,4], k [8,4], v [8,4] (16 Q heads, 8 KV heads, head_dim 1) into Megatron's
 * linear_qkv, group g = q(2g), q(2g+1), k(g), v(g), then TP 2: rank 0 holds groups 0–3
 * (fused rows 0..15), rank 1 groups 4–7. */
static void
test_c08_megatron_grouped_qkv(void)
{
    const gint64 shape[] = {0, 4}, extents[] = {16, 8, 8};
    RsSplit qkv = fused_split(RS_FUSION_QKV_GROUPED, 0, 1, 3, extents);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("2", NULL, NULL);
    RsLayout *set[3];
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_layout_new_fused_set(2, shape, 3, 0, extents, mesh, &qkv, 1, set, &error));
    const char *const names[] = {"q", "k", "v"};
    g_autofree char *r0 = fused_rows(set, names, 3, 0);
    g_autofree char *r1 = fused_rows(set, names, 3, 1);
    g_assert_cmpstr(r0, ==, "q0,q1,k0,v0,q2,q3,k1,v1,q4,q5,k2,v2,q6,q7,k3,v3");
    g_assert_cmpstr(r1, ==, "q8,q9,k4,v4,q10,q11,k5,v5,q12,q13,k6,v6,q14,q15,k7,v7");
    /* Each canonical tensor keeps its own global coordinates. */
    g_assert_cmpint(rs_layout_get_shape(set[0])[0], ==, 16);
    g_assert_cmpint(rs_layout_get_shape(set[1])[0], ==, 8);
    for (guint t = 0; t < 3; t++)
        rs_layout_unref(set[t]);
}

/* vLLM qkv_proj with tp 16 > 8 KV heads: per rank [q_local; k; v], KV head r / 2. */
static void
test_fused_qkv_kv_replication(void)
{
    const gint64 shape[] = {0, 2}, extents[] = {32, 8, 8};
    RsSplit qkv = fused_split(RS_FUSION_QKV, 0, 1, 3, extents);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("16", NULL, NULL);
    RsLayout *set[3];
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_layout_new_fused_set(2, shape, 3, 0, extents, mesh, &qkv, 1, set, &error));
    const char *const names[] = {"q", "k", "v"};
    for (guint32 r = 0; r < 16; r++) {
        g_autofree char *got = fused_rows(set, names, 3, r);
        g_autofree char *want = g_strdup_printf("q%u,q%u,k%u,v%u", 2 * r, 2 * r + 1, r / 2, r / 2);
        g_assert_cmpstr(got, ==, want);
    }
    /* Ranks 2r and 2r+1 hold the same k box: replicas; the layout stays "identical or
     * disjoint". */
    g_assert_true(rs_layout_has_disjoint_shards(set[1]));
    for (guint t = 0; t < 3; t++)
        rs_layout_unref(set[t]);
}

/* gpt-oss gate_up_proj [E, 2I, H] with even rows gate, odd rows up, held by a [gate; up]
 * training layout with TP 2 on the fused dim 1: strided boxes (step 2). */
static void
test_fused_interleaved(void)
{
    const gint64 shape[] = {2, 8, 3}, lens[] = {8};
    RsSplit il = fused_split(RS_FUSION_INTERLEAVED, 1, 2, 1, lens);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsLayout) l = make_split_layout(3, shape, "2", &il, 1, &error);
    g_assert_no_error(error);
    /* Rank 1: gate rows 2,3 (canonical 4, 6) then up rows 2,3 (canonical 5, 7). */
    gint idx = rs_layout_find_rank(l, 1);
    guint n;
    const RsLocalBox *b = rs_layout_get_boxes(l, (guint)idx, &n);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpint(b[0].box.lo[1], ==, 4);
    g_assert_cmpint(b[0].box.step[1], ==, 2);
    g_assert_cmpint(rs_box_get_count(&b[0].box, 1), ==, 2);
    g_assert_cmpint(b[1].box.lo[1], ==, 5);
    g_assert_cmpuint(b[1].offset_elems, ==, 2 * 3); /* after 2 gate rows of 3 */
    g_assert_cmpint(b[0].strides_elems[0], ==, 4 * 3); /* per expert: 4 rows of 3 */
    gint64 g[] = {1, 7, 2};                             /* expert 1, up row 3, col 2 */
    g_assert_cmpint(local_index_of(l, (guint)idx, g), ==, 12 + 3 * 3 + 2);
}

typedef struct {
    const char *name;
    RsFusionKind kind;
    gint64 lens[3];
    const char *mesh;
    gint code;
    const char *fragment;
} FusedErrorCase;

static const FusedErrorCase fused_errors[] = {
    {"q-heads", RS_FUSION_QKV, {32, 8, 8}, "3", RS_LAYOUT_ERROR_HEADS,
     "tp=3 does not divide the 32 query heads"},
    {"kv-neither", RS_FUSION_QKV, {48, 8, 8}, "12", RS_LAYOUT_ERROR_HEADS,
     "8 KV heads and tp=12: neither divides the other"},
    {"groups", RS_FUSION_QKV_GROUPED, {32, 8, 8}, "16", RS_LAYOUT_ERROR_HEADS,
     "tp=16 does not divide the 8 query groups"},
    {"kv-v", RS_FUSION_QKV, {32, 8, 4}, "2", RS_LAYOUT_ERROR_INVALID,
     "as many k as v rows"},
};

static void
test_fused_error(gconstpointer data)
{
    const FusedErrorCase *c = data;
    gint64 shape[] = {c->lens[0] + c->lens[1] + c->lens[2], 2};
    RsSplit s = fused_split(c->kind, 0, 1, 3, c->lens);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsLayout) l = make_split_layout(2, shape, c->mesh, &s, 1, &error);
    g_assert_null(l);
    g_assert_error(error, RS_LAYOUT_ERROR, c->code);
    if (strstr(error->message, c->fragment) == NULL)
        g_error("\"%s\" lacks \"%s\"", error->message, c->fragment);
}

/* A tied embedding held by the first and the last pipeline stage. */
static void
test_union(void)
{
    const gint64 shape[] = {8, 4};
    g_autoptr(RsLayout) first = make_layout(2, shape, "2", "0,1", "S(0)");
    g_autoptr(RsLayout) last = make_layout(2, shape, "2", "6,7", "S(0)");
    RsLayout *both[] = {first, last};
    g_autoptr(GError) error = NULL;
    g_autoptr(RsLayout) u = rs_layout_new_union(both, 2, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_layout_get_n_ranks(u), ==, 4);
    assert_rows(u, 7, 4, 8);
    RsLayout *twice[] = {first, first};
    g_assert_null(rs_layout_new_union(twice, 2, &error));
    g_assert_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID);
}

/* FP8 128×128 blocks: destination scales mirror the weight buffer; a source keeps the
 * blocks it holds whole. */
static void
test_blocked(void)
{
    const gint64 shape[] = {384, 256}, block[] = {128, 128};
    g_autoptr(GError) error = NULL;
    g_autoptr(RsLayout) dst = make_layout(2, shape, "3", NULL, "S(0)"); /* 128 rows each */
    g_autoptr(RsLayout) scales = rs_layout_new_blocked(dst, block, FALSE, TRUE, &error);
    g_assert_no_error(error);
    g_assert_cmpint(rs_layout_get_shape(scales)[0], ==, 3);
    g_assert_cmpint(rs_layout_get_shape(scales)[1], ==, 2);
    assert_rows(scales, 2, 2, 3);
    /* A source split at row 192 holds blocks 0 and 2 whole, block 1 nowhere whole. */
    g_autoptr(RsLayout) src = make_layout(2, shape, "2", NULL, "S(0)");
    g_autoptr(RsLayout) whole = rs_layout_new_blocked(src, block, TRUE, FALSE, &error);
    assert_rows(whole, 0, 0, 128);
    guint n;
    const RsLocalBox *b = rs_layout_get_boxes(whole, 1, &n);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpint(b[0].box.lo[0], ==, 256);
    g_assert_cmpint(b[0].box.hi[0], ==, 384);
    g_assert_cmpuint(b[0].offset_elems, ==, 64 * 256); /* rows 192..255 come first */
    g_assert_cmpuint(rs_layout_get_local_n_elems(whole, 1), ==, 192 * 256);
    /* A destination not on block boundaries is refused, naming rank and box. */
    g_autoptr(RsLayout) odd = make_layout(2, shape, "4", NULL, "S(0)"); /* 96 rows */
    g_assert_null(rs_layout_new_blocked(odd, block, FALSE, TRUE, &error));
    g_assert_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID);
    g_assert_nonnull(strstr(error->message, "rank 0, box [0:96, 0:256]"));
}

static void
test_builder_errors(void)
{
    const gint64 shape[] = {4, 4}, buffer[] = {2, 4}, at0[] = {0, 0}, at1[] = {1, 0};
    const gint64 lo[] = {0, 0}, hi[] = {2, 4}, lo2[] = {2, 0}, hi2[] = {4, 4};
    RsBox a, b;
    rs_box_init_range(&a, 2, lo, hi);
    rs_box_init_range(&b, 2, lo2, hi2);
    g_autoptr(GError) error = NULL;
    /* Two boxes on overlapping buffer rows. */
    RsLayoutBuilder *bld = rs_layout_builder_new(2, shape);
    rs_layout_builder_add_rank(bld, 3, buffer);
    rs_layout_builder_add_box(bld, &a, at0);
    rs_layout_builder_add_box(bld, &b, at1);
    g_assert_null(rs_layout_builder_finish(bld, &error));
    g_assert_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID);
    g_assert_nonnull(strstr(error->message, "rank 3"));
    g_clear_error(&error);
    /* A box that does not fit the buffer. */
    bld = rs_layout_builder_new(2, shape);
    rs_layout_builder_add_rank(bld, 3, buffer);
    rs_layout_builder_add_box(bld, &a, at1);
    g_assert_null(rs_layout_builder_finish(bld, &error));
    g_assert_nonnull(strstr(error->message, "does not fit"));
    g_clear_error(&error);
    /* A rank twice. */
    bld = rs_layout_builder_new(2, shape);
    rs_layout_builder_add_rank(bld, 3, buffer);
    rs_layout_builder_add_rank(bld, 3, buffer);
    g_assert_null(rs_layout_builder_finish(bld, &error));
    g_assert_nonnull(strstr(error->message, "rank 3 appears twice"));
}

static void
test_strided_shard_spellings(void)
{
    RsPlacement p[RS_MAX_MESH_DIMS];
    guint n;
    g_autoptr(GError) error = NULL;
    const char *const spellings[] = {"SS(1,4)", "_StridedShard(dim=1, split_factor=4)",
                                     "_StridedShard(dim=1, sf=4)", "_S(1, 4)",
                                     "StridedShard(1,4)"};
    for (guint i = 0; i < G_N_ELEMENTS(spellings); i++) {
        g_assert_true(rs_placements_parse(spellings[i], p, &n, &error));
        g_assert_cmpuint(n, ==, 1);
        g_assert_cmpint(p[0].kind, ==, RS_PLACEMENT_STRIDED_SHARD);
        g_assert_cmpint(p[0].dim, ==, 1);
        g_assert_cmpint(p[0].split_factor, ==, 4);
        g_autofree char *text = rs_placements_format(p, n);
        g_assert_cmpstr(text, ==, "SS(1,4)");
    }
    g_assert_false(rs_placements_parse("SS(0,0)", p, &n, &error));
    g_assert_error(error, RS_MESH_ERROR, RS_MESH_ERROR_PLACEMENT);
    g_clear_error(&error);
    g_assert_false(rs_placements_parse("SS(0)", p, &n, &error));
    g_clear_error(&error);
    /* Shard dims out of range name the placement and the valid dims. */
    const gint64 shape[] = {8, 4};
    g_autoptr(RsMesh) mesh = rs_mesh_parse("2", NULL, NULL);
    g_assert_true(rs_placements_parse("SS(3,2)", p, &n, &error));
    g_assert_null(rs_layout_new_dtensor(2, shape, mesh, p, n, &error));
    g_assert_error(error, RS_LAYOUT_ERROR, RS_LAYOUT_ERROR_INVALID);
    g_assert_nonnull(strstr(error->message, "placement 0 is SS(3,2) but the tensor has 2 dims"));
}

/* Runs of adjacent elements a piece's memory image is made of, by hand: a [4, 6] buffer
 * row-major, a strided local box, and a padded row. */
static void
test_run_elems(void)
{
    const gint64 shape[] = {4, 6};
    RsLocalBox local;
    rs_local_box_init_row_major(&local, 2, shape);
    g_assert_cmpint(local.strides_elems[0], ==, 6);
    g_assert_cmpint(local.strides_elems[1], ==, 1);
    g_assert_cmpuint(local.offset_elems, ==, 0);
    struct {
        gint64 lo0, hi0, step0, lo1, hi1;
        guint64 run;
    } cases[] = {
        {0, 4, 1, 0, 6, 24}, /* the whole buffer */
        {1, 3, 1, 0, 6, 12}, /* two whole rows */
        {0, 4, 1, 2, 5, 3},  /* three columns of every row */
        {2, 3, 1, 2, 5, 3},  /* part of one row */
        {0, 4, 1, 2, 3, 1},  /* one column: one element per run */
        {0, 4, 2, 0, 6, 6},  /* every other row: each row a run */
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        RsBox piece;
        const gint64 lo[] = {cases[i].lo0, cases[i].lo1}, hi[] = {cases[i].hi0, cases[i].hi1};
        rs_box_init_full(&piece, 2, shape);
        for (guint d = 0; d < 2; d++) {
            piece.lo[d] = lo[d];
            piece.hi[d] = hi[d];
        }
        piece.step[0] = cases[i].step0;
        g_assert_cmpuint(rs_local_box_get_run_elems(&local, &piece), ==, cases[i].run);
    }
    /* A strided local box (global rows 0, 2, 4, 6 in buffer rows 0-3): global rows 2 and 4
     * are neighbouring buffer rows, one run of 12; rows 0 and 4 are not. */
    RsLocalBox strided = local;
    strided.box.hi[0] = 8;
    strided.box.step[0] = 2;
    RsBox piece = strided.box;
    piece.lo[0] = 2;
    piece.hi[0] = 6;
    g_assert_cmpuint(rs_local_box_get_run_elems(&strided, &piece), ==, 12);
    piece.lo[0] = 0;
    piece.hi[0] = 8;
    piece.step[0] = 4;
    g_assert_cmpuint(rs_local_box_get_run_elems(&strided, &piece), ==, 6);
    /* Rows of 5 elements in a buffer padded to 8 per row: each row a run. */
    RsLocalBox padded = local;
    padded.box.hi[1] = 5;
    padded.strides_elems[0] = 8;
    g_assert_cmpuint(rs_local_box_get_run_elems(&padded, &padded.box), ==, 5);
}

/* The spellings PyTorch prints and other tools accept: negative dims counting from the last
 * and the placements tuple of a DTensor's repr. Each row: the text, a 2-dim [8, 4] tensor
 * on a mesh of that many dims, and the normalized placements. */
typedef struct {
    const char *text;
    const char *mesh;
    const char *normalized;
} SpellingCase;

static const SpellingCase spelling_cases[] = {
    {"S(-1)", "2", "S(1)"},
    {"S(-2)", "2", "S(0)"},
    {"SS(-2,2),S(0)", "2x2", "SS(0,2),S(0)"},
    {"Shard(dim=-1)", "2", "S(1)"},
    {"(Shard(dim=0), Replicate())", "2x2", "S(0),R"},
    {"(Shard(dim=-1),)", "2", "S(1)"},
    {"[S(0), R]", "2x2", "S(0),R"},
    {" ( _StridedShard(dim=-1, sf=2) , Shard(dim=1) ) ", "2x2", "SS(1,2),S(1)"},
};

static void
test_placement_spelling(gconstpointer data)
{
    const SpellingCase *c = data;
    g_autoptr(GError) error = NULL;
    RsPlacement p[RS_MAX_MESH_DIMS];
    guint n;
    g_assert_true(rs_placements_parse(c->text, p, &n, &error));
    g_assert_no_error(error);
    const gint64 shape[] = {8, 4};
    g_autoptr(RsMesh) mesh = rs_mesh_parse(c->mesh, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(RsLayout) layout = rs_layout_new_dtensor(2, shape, mesh, p, n, &error);
    g_assert_no_error(error);
    g_assert_true(rs_placements_normalize(p, n, 2, &error));
    g_autofree char *text = rs_placements_format(p, n);
    g_assert_cmpstr(text, ==, c->normalized);
}

static void
test_placement_spelling_errors(void)
{
    g_autoptr(GError) error = NULL;
    RsPlacement p[RS_MAX_MESH_DIMS];
    guint n;
    /* A dim below -ndim, and a trailing comma outside a tuple. */
    g_assert_true(rs_placements_parse("S(-3)", p, &n, &error));
    g_assert_false(rs_placements_normalize(p, n, 2, &error));
    g_assert_error(error, RS_MESH_ERROR, RS_MESH_ERROR_PLACEMENT);
    g_assert_cmpstr(error->message, ==,
                    "placement 0: dim -3 of a 2-dim tensor (negative dims count from the last, "
                    "-1 to -2)");
    g_clear_error(&error);
    g_assert_false(rs_placements_parse("S(0),", p, &n, &error));
    g_assert_error(error, RS_MESH_ERROR, RS_MESH_ERROR_PLACEMENT);
    g_clear_error(&error);
    g_assert_false(rs_placements_parse("(S(0)", p, &n, &error));
    g_clear_error(&error);
    g_assert_false(rs_placements_parse("S(-7)", p, &n, &error));
    g_clear_error(&error);
}

/* Counts from outside are bounded before expansion: RS_MAX_RANKS ranks, mesh positions. */
static void
test_rank_limits(void)
{
    g_autoptr(GError) error = NULL;
    GArray *ranks = NULL;
    g_assert_false(rs_ranks_parse("0-2000000000", &ranks, &error));
    g_assert_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID);
    g_assert_cmpstr(error->message, ==,
                    "ranks \"0-2000000000\": names a rank, above the limit of 262144 GPUs "
                    "(ranks 0-262143)");
    g_clear_error(&error);
    g_assert_false(rs_ranks_parse("0-200000,0-200000", &ranks, &error));
    g_assert_cmpstr(error->message, ==,
                    "ranks \"0-200000,0-200000\": names more ranks, above the limit of 262144 "
                    "GPUs (ranks 0-262143)");
    g_clear_error(&error);
    g_assert_true(rs_ranks_parse("262140-262143", &ranks, &error));
    g_assert_cmpuint(ranks->len, ==, 4);
    g_array_unref(ranks);
    g_assert_null(rs_mesh_parse("1073741824", NULL, &error));
    g_assert_cmpstr(error->message, ==,
                    "mesh has more than 262144 positions, the limit (RS_MAX_RANKS)");
    g_clear_error(&error);
    g_autoptr(RsMesh) mesh = rs_mesh_parse("512x512", NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_mesh_get_n_ranks(mesh), ==, RS_MAX_RANKS);
    const guint32 big[] = {0, RS_MAX_RANKS};
    guint size = 2;
    g_assert_null(rs_mesh_new(1, &size, NULL, big, 2, &error));
    g_assert_cmpstr(error->message, ==, "rank 262144 is above the limit of 262144 GPUs (ranks 0-262143)");
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/layout/cases/C01-uneven-roundtrip", test_c01_uneven_roundtrip);
    g_test_add_func("/layout/cases/C02-empty-shard-offsets", test_c02_empty_shard_offsets);
    g_test_add_func("/layout/cases/C03-empty-shard-in-reshard", test_c03_empty_shard_in_reshard);
    g_test_add_func("/layout/cases/C04-same-dim-twice", test_c04_same_dim_twice);
    g_test_add_func("/layout/two-shard-dims", test_two_shard_dims);
    g_test_add_func("/layout/replicate-and-shard", test_replicate_and_shard);
    g_test_add_func("/layout/errors", test_errors);
    g_test_add_func("/layout/placement-spellings", test_placement_spellings);
    g_test_add_func("/layout/cases/C05-strided-shard", test_c05_strided_shard);
    g_test_add_func("/layout/strided-shard/pytorch-examples", test_strided_shard_pytorch_examples);
    g_test_add_func("/layout/strided-shard/spellings", test_strided_shard_spellings);
    g_test_add_func("/layout/padded/vocab", test_vocab_padding);
    g_test_add_func("/layout/balanced/experts", test_balanced_experts);
    g_test_add_func("/layout/cases/C06-fused-qkv", test_c06_fused_qkv);
    g_test_add_func("/layout/cases/C07-fused-gate-up", test_c07_fused_gate_up);
    g_test_add_func("/layout/cases/C08-megatron-grouped-qkv", test_c08_megatron_grouped_qkv);
    g_test_add_func("/layout/fused/kv-replication", test_fused_qkv_kv_replication);
    g_test_add_func("/layout/fused/interleaved", test_fused_interleaved);
    for (guint i = 0; i < G_N_ELEMENTS(fused_errors); i++) {
        g_autofree char *path = g_strdup_printf("/layout/fused/errors/%s", fused_errors[i].name);
        g_test_add_data_func(path, &fused_errors[i], test_fused_error);
    }
    g_test_add_func("/layout/union", test_union);
    g_test_add_func("/layout/blocked", test_blocked);
    g_test_add_func("/layout/builder-errors", test_builder_errors);
    g_test_add_func("/layout/run-elems", test_run_elems);
    for (guint i = 0; i < G_N_ELEMENTS(spelling_cases); i++) {
        g_autofree char *path = g_strdup_printf("/layout/placements/spelling/%u", i);
        g_test_add_data_func(path, &spelling_cases[i], test_placement_spelling);
    }
    g_test_add_func("/layout/placements/spelling-errors", test_placement_spelling_errors);
    g_test_add_func("/layout/mesh/rank-limits", test_rank_limits);
    return g_test_run();
}

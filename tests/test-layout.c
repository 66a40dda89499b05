/* test-layout.c — DTensor placements resolved to boxes: uneven and empty shards (CASES.md
 * C01–C04), several mesh dims on one tensor dim, replication, and the errors. */
#include "sim/layout.h"
#include "sim/plan.h"
#include "sim/topology.h"

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
    return g_test_run();
}

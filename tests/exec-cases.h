/* exec-cases.h — the executor's test refits, shared by test-exec.c (host transport),
 * test-exec-device.c (the device path of the executor on an emulated device) and
 * test-gpu.c (cuda-local): one-tensor refits written as text, and the cases of
 * ../shared/CASES.md that concern execution. */
#pragma once

#include "exec/executor.h"

/* One tensor of a test refit: "shape dtype | src mesh placements ranks | dst …". */
typedef struct {
    const char *name;
    const char *shape;
    RsDtype dtype;
    const char *src_mesh, *src_placements, *src_ranks;
    const char *dst_mesh, *dst_placements, *dst_ranks;
} TensorSpec;

static G_GNUC_UNUSED RsLayout *
make_layout(guint n_dims, const gint64 *shape, const char *mesh_text, const char *placements_text,
            const char *ranks)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsMesh) mesh = rs_mesh_parse(mesh_text, ranks, &error);
    g_assert_no_error(error);
    RsPlacement placements[RS_MAX_MESH_DIMS];
    guint n_placements;
    g_assert_true(rs_placements_parse(placements_text, placements, &n_placements, &error));
    RsLayout *layout = rs_layout_new_dtensor(n_dims, shape, mesh, placements, n_placements, &error);
    g_assert_no_error(error);
    return layout;
}

static G_GNUC_UNUSED void
add_tensor(RsRefit *refit, const TensorSpec *t)
{
    gint64 shape[RS_MAX_DIMS];
    guint n_dims = 0;
    g_auto(GStrv) parts = g_strsplit(t->shape, "x", -1);
    for (guint i = 0; parts[i] != NULL && *parts[i]; i++)
        shape[n_dims++] = g_ascii_strtoll(parts[i], NULL, 10);
    g_autoptr(RsLayout) src = make_layout(n_dims, shape, t->src_mesh, t->src_placements,
                                          t->src_ranks);
    g_autoptr(RsLayout) dst = make_layout(n_dims, shape, t->dst_mesh, t->dst_placements,
                                          t->dst_ranks);
    g_autoptr(GError) error = NULL;
    g_assert_true(rs_refit_add_tensor(refit, t->name ? t->name : "t", t->dtype, src, dst, &error));
}

/* --- CASES.md --- */

typedef struct {
    const char *id;
    TensorSpec tensor;
    guint n_ranks;        /* transport ranks taking part */
    gint64 direct_bytes;  /* bytes moved under direct, -1: not stated */
} CaseRow;

static G_GNUC_UNUSED const CaseRow case_rows[] = {
    /* C01: S(0) row counts 2,2,1,0; back to R every rank holds [5,10]: 600 bytes move. */
    {"C01-replicate-to-uneven", {"w", "5x10", RS_DTYPE_F32, "4", "R", "0-3", "4", "S(0)", "0-3"},
     4, 0},
    {"C01-uneven-to-replicate", {"w", "5x10", RS_DTYPE_F32, "4", "S(0)", "0-3", "4", "R", "0-3"},
     4, 600},
    /* C02: 30 ranks, ranks 0-27 hold 18 rows, rank 28 holds 8, rank 29 none; into 2 column
     * shards: each of the 2 destinations receives the 494 rows it does not hold × 2 cols. */
    {"C02-empty-shard-offsets",
     {"w", "512x4", RS_DTYPE_F32, "30", "S(0)", "0-29", "2", "S(1)", "0,1"}, 30, 2 * 494 * 2 * 4},
    /* C03: rows 2,2,2,0; rank 7 takes part with an empty buffer. */
    {"C03-empty-shard-reshard",
     {"w", "6x256", RS_DTYPE_F32, "4", "R", "0-3", "4", "S(0)", "4-7"}, 8, 6 * 256 * 4},
    /* C04: rank (0,0) = 0 holds element 0, (1,0) = 4 element 1, six ranks nothing. */
    {"C04-same-dim-twice", {"w", "2", RS_DTYPE_F32, "1", "R", "8", "2x4", "S(0),S(0)", "0-7"}, 9,
     8},
    /* C11: the embedding of the first and the last stage reaches one rank once: 64 bytes. */
    {"C11-legitimate-duplicate",
     {"embed", "8x4", RS_DTYPE_BF16, "2", "R", "0,3", "1", "R", "4"}, 3, 64},
};


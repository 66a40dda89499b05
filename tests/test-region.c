/* test-region.c — pack and unpack of wire byte ranges against an element-by-element
 * reference, on strided, stepped, transposed and fused-style local boxes. */
#include "exec/region.h"

#include <string.h>

typedef struct {
    const char *name;
    guint n_dims;
    /* The local box: global lo, count, step per dim; its offset and strides (elements). */
    gint64 l_lo[3], l_count[3], l_step[3];
    guint64 offset;
    gint64 strides[3];
    /* The piece: lo, count, step per dim (within the local box). */
    gint64 p_lo[3], p_count[3], p_step[3];
    guint elem_bytes;
    gboolean whole_contiguous; /* the piece is one run of memory */
} RegionCase;

static const RegionCase cases[] = {
    {"row-major-sub-box", 2, {0, 0}, {4, 6}, {1, 1}, 0, {6, 1}, {1, 2}, {2, 3}, {1, 1}, 4, FALSE},
    {"full-rows-merge", 2, {0, 0}, {4, 6}, {1, 1}, 0, {6, 1}, {1, 0}, {2, 6}, {1, 1}, 2, TRUE},
    {"transposed", 2, {0, 0}, {3, 5}, {1, 1}, 0, {1, 3}, {0, 0}, {3, 5}, {1, 1}, 4, FALSE},
    {"stepped", 1, {1}, {8}, {2}, 3, {1}, {3}, {3}, {4}, 8, FALSE},
    {"fused-offset", 2, {10, 0}, {3, 4}, {1, 1}, 17, {4, 1}, {11, 1}, {2, 3}, {1, 1}, 2, FALSE},
    {"count-one-dims", 3, {0, 5, 0}, {2, 1, 7}, {1, 1, 1}, 5, {7, 7, 1}, {1, 5, 0}, {1, 1, 7},
     {1, 1, 1}, 1, TRUE},
    {"padded-rows", 2, {0, 0}, {3, 5}, {1, 1}, 0, {8, 1}, {0, 0}, {3, 5}, {1, 1}, 4, FALSE},
    {"scalar", 0, {0}, {0}, {0}, 2, {0}, {0}, {0}, {0}, 8, TRUE},
};

static void
make_boxes(const RegionCase *c, RsLocalBox *local, RsBox *piece)
{
    memset(local, 0, sizeof *local);
    memset(piece, 0, sizeof *piece);
    local->box.n_dims = piece->n_dims = c->n_dims;
    for (guint d = 0; d < c->n_dims; d++) {
        rs_box_set_dim(&local->box, d, c->l_lo[d], c->l_count[d], c->l_step[d]);
        rs_box_set_dim(piece, d, c->p_lo[d], c->p_count[d], c->p_step[d]);
        local->strides_elems[d] = c->strides[d];
    }
    local->offset_elems = c->offset;
}

/* Byte address (in the buffer) of wire byte @b, computed element by element. */
static guint64
ref_address(const RegionCase *c, guint64 b)
{
    guint e = c->elem_bytes;
    guint64 index = b / e;
    gint64 local = (gint64)c->offset;
    for (gint d = (gint)c->n_dims - 1; d >= 0; d--) {
        gint64 j = (gint64)(index % (guint64)c->p_count[d]);
        index /= (guint64)c->p_count[d];
        gint64 g = c->p_lo[d] + j * c->p_step[d];
        gint64 k = (g - c->l_lo[d]) / c->l_step[d];
        local += k * c->strides[d];
    }
    return (guint64)local * e + b % e;
}

static guint64
n_wire_bytes(const RegionCase *c)
{
    guint64 n = c->elem_bytes;
    for (guint d = 0; d < c->n_dims; d++)
        n *= (guint64)c->p_count[d];
    return n;
}

static void
test_region(gconstpointer data)
{
    const RegionCase *c = data;
    RsLocalBox local;
    RsBox piece;
    make_boxes(c, &local, &piece);
    guint64 n = n_wire_bytes(c);
    guint64 buf_size = 0;
    for (guint64 b = 0; b < n; b++)
        buf_size = MAX(buf_size, ref_address(c, b) + 1);
    g_autofree guint8 *buf = g_malloc(buf_size);
    for (guint64 i = 0; i < buf_size; i++)
        buf[i] = (guint8)(i * 7 + 3);
    RsRegion region;
    rs_region_init(&region, buf, &local, &piece, c->elem_bytes);
    g_assert_cmpuint(region.n_bytes, ==, n);

    /* Every byte range [from, to): pack equals the reference bytes. */
    g_autofree guint8 *wire = g_malloc(n + 1);
    for (guint64 from = 0; from < n; from++) {
        for (guint64 to = from + 1; to <= n; to++) {
            rs_region_pack(&region, from, to, wire);
            for (guint64 b = from; b < to; b++)
                g_assert_cmpuint(wire[b - from], ==, buf[ref_address(c, b)]);
            guint8 *ptr = NULL;
            gboolean consecutive = TRUE;
            for (guint64 b = from + 1; b < to; b++)
                consecutive = consecutive && ref_address(c, b) == ref_address(c, b - 1) + 1;
            gboolean got = rs_region_get_contiguous(&region, from, to, &ptr);
            if (got) {
                g_assert_true(consecutive);
                g_assert_true(ptr == buf + ref_address(c, from));
            }
            if (c->whole_contiguous)
                g_assert_true(got);
        }
    }
    /* Scatter-gather runs: in wire order, every byte at its reference address. */
    if (rs_region_has_long_rows(&region, 1)) {
        g_autoptr(GArray) runs = g_array_new(FALSE, FALSE, sizeof(RsIovec));
        for (guint64 from = 0; from < n; from++) {
            for (guint64 to = from + 1; to <= n; to++) {
                g_array_set_size(runs, 0);
                rs_region_append_runs(&region, from, to, runs);
                guint64 b = from;
                for (guint i = 0; i < runs->len; i++) {
                    const RsIovec *run = &g_array_index(runs, RsIovec, i);
                    for (gsize k = 0; k < run->len; k++, b++)
                        g_assert_true((guint8 *)run->base + k == buf + ref_address(c, b));
                    /* Merged: no run continues the previous one in memory. */
                    if (i > 0) {
                        const RsIovec *prev = &g_array_index(runs, RsIovec, i - 1);
                        g_assert_false((guint8 *)prev->base + prev->len == run->base);
                    }
                }
                g_assert_cmpuint(b, ==, to);
            }
        }
    }
    /* Unpack writes exactly the piece's bytes and nothing else. */
    g_autofree guint8 *out = g_malloc0(buf_size);
    g_autofree guint8 *image = g_malloc(n);
    rs_region_pack(&region, 0, n, image);
    RsRegion region_out;
    rs_region_init(&region_out, out, &local, &piece, c->elem_bytes);
    /* In two uneven halves, cutting inside an element. */
    guint64 cut = n / 2 + (n > 2 ? 1 : 0);
    rs_region_unpack(&region_out, 0, cut, image);
    rs_region_unpack(&region_out, cut, n, image + cut);
    g_autofree gboolean *touched = g_new0(gboolean, buf_size);
    for (guint64 b = 0; b < n; b++)
        touched[ref_address(c, b)] = TRUE;
    for (guint64 i = 0; i < buf_size; i++)
        g_assert_cmpuint(out[i], ==, touched[i] ? buf[i] : 0);
}

/* A local copy between two different memory layouts of the same piece. */
static void
test_copy_between_layouts(void)
{
    const RegionCase *a = &cases[0]; /* row-major [4,6], piece rows 1-2, cols 2-4 */
    RsLocalBox la, lb;
    RsBox piece;
    make_boxes(a, &la, &piece);
    /* The same global box stored transposed in another buffer. */
    lb = la;
    lb.strides_elems[0] = 1;
    lb.strides_elems[1] = 4;
    g_autofree guint32 *src = g_new(guint32, 24);
    g_autofree guint32 *dst = g_new0(guint32, 24);
    for (guint i = 0; i < 24; i++)
        src[i] = 1000 + i;
    RsRegion rs, rd;
    rs_region_init(&rs, (guint8 *)src, &la, &piece, 4);
    rs_region_init(&rd, (guint8 *)dst, &lb, &piece, 4);
    rs_region_copy(&rd, &rs);
    for (gint64 i = 1; i <= 2; i++)
        for (gint64 j = 2; j <= 4; j++)
            g_assert_cmpuint(dst[i + 4 * j], ==, src[6 * i + j]);
    guint n_written = 0;
    for (guint i = 0; i < 24; i++)
        n_written += dst[i] != 0;
    g_assert_cmpuint(n_written, ==, 6);
    /* Same layout on both sides: row-wise memcpy path. */
    memset(dst, 0, 24 * 4);
    rs_region_init(&rd, (guint8 *)dst, &la, &piece, 4);
    rs_region_copy(&rd, &rs);
    for (gint64 i = 1; i <= 2; i++)
        for (gint64 j = 2; j <= 4; j++)
            g_assert_cmpuint(dst[6 * i + j], ==, src[6 * i + j]);
}

/* The cost model's run length (rs_local_box_get_run_elems) is the row a region walks
 * (rs_region_init's merged last dim when its elements are adjacent, else one element), on
 * random stepped, padded and transposed local boxes and random pieces of them. */
static void
test_run_elems_match_region(void)
{
    GRand *rand = g_rand_new_with_seed(20261129);
    guint8 buffer[1];
    for (guint iter = 0; iter < 20000; iter++) {
        guint n_dims = (guint)g_rand_int_range(rand, 1, 4);
        RsLocalBox local;
        RsBox piece;
        memset(&local, 0, sizeof local);
        memset(&piece, 0, sizeof piece);
        local.box.n_dims = piece.n_dims = n_dims;
        gint64 counts[3];
        for (guint d = 0; d < n_dims; d++) {
            counts[d] = g_rand_int_range(rand, 1, 6);
            rs_box_set_dim(&local.box, d, g_rand_int_range(rand, 0, 3), counts[d],
                           g_rand_int_range(rand, 1, 3));
        }
        /* Row-major strides over a buffer padded per dim, or (one case in four) a
         * transposed buffer. */
        gboolean transposed = g_rand_int_range(rand, 0, 4) == 0;
        gint64 stride = 1;
        for (guint k = 0; k < n_dims; k++) {
            guint d = transposed ? k : n_dims - 1 - k;
            local.strides_elems[d] = stride;
            stride *= counts[d] + (g_rand_int_range(rand, 0, 3) == 0 ? 1 : 0);
        }
        for (guint d = 0; d < n_dims; d++) {
            gint64 ratio = g_rand_int_range(rand, 1, 3);
            gint64 first = g_rand_int_range(rand, 0, (gint32)counts[d]);
            gint64 room = (counts[d] - 1 - first) / ratio + 1;
            gint64 n = g_rand_int_range(rand, 1, (gint32)room + 1);
            rs_box_set_dim(&piece, d, local.box.lo[d] + first * local.box.step[d], n,
                           ratio * local.box.step[d]);
        }
        guint elem_bytes = 1u << g_rand_int_range(rand, 0, 3);
        RsRegion region;
        rs_region_init(&region, buffer, &local, &piece, elem_bytes);
        guint last = region.n_dims - 1;
        guint64 region_run = region.strides_bytes[last] == (gint64)elem_bytes
                                 ? (guint64)region.counts[last]
                                 : 1;
        if (rs_local_box_get_run_elems(&local, &piece) != region_run)
            g_error("iteration %u: run %" G_GUINT64_FORMAT " elements, region row %" G_GUINT64_FORMAT,
                    iter, rs_local_box_get_run_elems(&local, &piece), region_run);
    }
    g_rand_free(rand);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_strdup_printf("/region/pack-ranges/%s", cases[i].name);
        g_test_add_data_func(path, &cases[i], test_region);
    }
    g_test_add_func("/region/copy-between-layouts", test_copy_between_layouts);
    g_test_add_func("/region/run-elems-match-region", test_run_elems_match_region);
    return g_test_run();
}

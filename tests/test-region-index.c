/* test-region-index.c — the index arithmetic the CUDA kernels run (exec/region-index.h),
 * checked on the CPU against the host implementation.
 *
 * Each test emulates a kernel exactly as cuda-kernels.cu writes it — unit k of a pack moves
 * bytes [from + k·u, from + (k+1)·u) from base + rs_region_index_wire_offset(from + k·u),
 * element k of a fill writes rs_pattern_elem_value at rs_box_index_elem's local offset —
 * and compares the bytes with rs_region_pack, rs_region_unpack, rs_region_copy and
 * rs_pattern_fill_box / rs_pattern_check_box on random boxes (strided, stepped, transposed,
 * padded) of every element size. So the kernels' addresses are tested here, on a machine
 * without a GPU; tests/test-gpu.c then checks that the kernels produce the same bytes. */
#include "exec/pattern.h"
#include "exec/region-index.h"
#include "exec/region.h"

#include "region-cases.h"

#include <string.h>

/* The pack/unpack kernel, on the CPU: unit after unit, addresses from region-index.h. */
static void
emulate_move(const RsRegion *r, guint64 from, guint64 to, guint8 *wire, gboolean pack)
{
    guint32 u = rs_region_index_unit_bytes(r, from, to, (uintptr_t)wire);
    g_assert_cmpuint((to - from) % u, ==, 0);
    for (guint64 k = 0; k < (to - from) / u; k++) {
        guint8 *mem = r->base + rs_region_index_wire_offset(r, from + k * u);
        /* The unit is one aligned run of memory, as a vector load needs. */
        g_assert_cmpuint((guintptr)mem % u, ==, 0);
        for (guint32 j = 1; j < u; j++)
            g_assert_cmpint(rs_region_index_wire_offset(r, from + k * u + j), ==,
                            rs_region_index_wire_offset(r, from + k * u) + j);
        if (pack)
            memcpy(wire + k * u, mem, u);
        else
            memcpy(mem, wire + k * u, u);
    }
}

static void
test_move(gconstpointer data)
{
    guint e = GPOINTER_TO_UINT(data);
    GRand *rng = g_rand_new_with_seed(1000 + e);
    for (guint iter = 0; iter < 300; iter++) {
        RandomCase c;
        random_case(rng, &c);
        gsize buf_bytes = c.buffer_elems * e;
        /* 16-byte aligned buffers, as cudaMalloc gives (256). */
        g_autofree guint8 *buf = g_aligned_alloc(buf_bytes + 16, 1, 16);
        g_autofree guint8 *init = random_bytes(rng, buf_bytes);
        memcpy(buf, init, buf_bytes);
        RsRegion r;
        rs_region_init(&r, buf, &c.local, &c.piece, e);
        /* Whole-element and arbitrary byte ranges, as chunks cut them. */
        guint64 from = iter % 3 == 0 ? 0 : (guint64)g_rand_int_range(rng, 0, (gint32)r.n_bytes);
        guint64 to = iter % 3 == 0 ? r.n_bytes
                                   : (guint64)g_rand_int_range(rng, (gint32)from,
                                                               (gint32)r.n_bytes + 1);
        gsize n = (gsize)(to - from);
        g_autofree guint8 *want = g_malloc0(n + 1);
        g_autofree guint8 *got = g_aligned_alloc0(n + 16, 1, 16);
        rs_region_pack(&r, from, to, want);
        emulate_move(&r, from, to, got, TRUE);
        g_assert_cmpmem(got, n, want, n);
        /* Unpack new bytes both ways from the same start; the buffers must agree. */
        g_autofree guint8 *wire = random_bytes(rng, n);
        g_autofree guint8 *ref = g_malloc(buf_bytes + 1);
        memcpy(ref, init, buf_bytes);
        RsRegion rr = r;
        rr.base = ref + (r.base - buf);
        rs_region_unpack(&rr, from, to, wire);
        memcpy(got, wire, n);
        emulate_move(&r, from, to, got, FALSE);
        g_assert_cmpmem(buf, buf_bytes, ref, buf_bytes);
        g_aligned_free(g_steal_pointer(&buf));
        g_aligned_free(g_steal_pointer(&got));
    }
    g_rand_free(rng);
}

/* The local copy kernel on the CPU: both regions of the same piece, other layouts. */
static void
test_copy(gconstpointer data)
{
    guint e = GPOINTER_TO_UINT(data);
    GRand *rng = g_rand_new_with_seed(2000 + e);
    for (guint iter = 0; iter < 200; iter++) {
        RandomCase a;
        random_case(rng, &a);
        /* The destination: the piece as a whole row-major box at an offset. */
        RsLocalBox dst_local = {0};
        dst_local.box = a.piece;
        gint64 s = 1;
        for (gint d = (gint)a.n_dims - 1; d >= 0; d--) {
            dst_local.strides_elems[d] = s;
            s *= rs_box_get_count(&a.piece, (guint)d) + (iter % 2);
        }
        dst_local.offset_elems = iter % 5;
        gsize src_bytes = a.buffer_elems * e, dst_bytes = (dst_local.offset_elems + s) * e;
        g_autofree guint8 *src = random_bytes(rng, src_bytes);
        g_autofree guint8 *dst_init = random_bytes(rng, dst_bytes);
        g_autofree guint8 *want = g_memdup2(dst_init, dst_bytes);
        g_autofree guint8 *got = g_memdup2(dst_init, dst_bytes);
        RsRegion rs_, rd_want, rd_got;
        rs_region_init(&rs_, src, &a.local, &a.piece, e);
        rs_region_init(&rd_want, want, &dst_local, &a.piece, e);
        rs_region_init(&rd_got, got, &dst_local, &a.piece, e);
        rs_region_copy(&rd_want, &rs_);
        guint32 u = rs_region_index_copy_unit_bytes(&rd_got, &rs_);
        for (guint64 k = 0; k < rd_got.n_bytes / u; k++)
            memcpy(rd_got.base + rs_region_index_wire_offset(&rd_got, k * u),
                   rs_.base + rs_region_index_wire_offset(&rs_, k * u), u);
        g_assert_cmpmem(got, dst_bytes, want, dst_bytes);
    }
    g_rand_free(rng);
}

/* The fill kernel and the check kernel on the CPU against pattern.c. */
static void
test_pattern(gconstpointer data)
{
    guint e = GPOINTER_TO_UINT(data);
    GRand *rng = g_rand_new_with_seed(3000 + e);
    for (guint iter = 0; iter < 200; iter++) {
        RandomCase c;
        random_case(rng, &c);
        guint64 seed = rs_pattern_seed(iter);
        gsize buf_bytes = c.buffer_elems * e;
        g_autofree guint8 *want = g_malloc0(buf_bytes);
        g_autofree guint8 *got = g_malloc0(buf_bytes);
        rs_pattern_fill_box(seed, c.n_dims, c.shape, &c.local, want, e);
        RsBoxIndex bi;
        rs_box_index_init(&bi, c.n_dims, c.shape, &c.local);
        g_assert_cmpuint(bi.n_elems, ==, rs_box_get_n_elems(&c.local.box));
        for (guint64 k = 0; k < bi.n_elems; k++) {
            guint64 g, l;
            rs_box_index_elem(&bi, k, &g, &l);
            guint64 v = rs_pattern_elem_value(seed, g, e);
            for (guint b = 0; b < e; b++)
                got[l * e + b] = (guint8)(v >> (8 * b));
        }
        g_assert_cmpmem(got, buf_bytes, want, buf_bytes);
        /* Corrupt one element: the check kernel's lowest bad k names the element
         * rs_pattern_check_box reports first. */
        guint64 bad_k = (guint64)g_rand_int_range(rng, 0, (gint32)bi.n_elems);
        guint64 g, l;
        rs_box_index_elem(&bi, bad_k, &g, &l);
        got[l * e] ^= 0x5a;
        guint64 n_bad = 0, first = G_MAXUINT64;
        for (guint64 k = 0; k < bi.n_elems; k++) {
            guint64 gk, lk, have = 0;
            rs_box_index_elem(&bi, k, &gk, &lk);
            for (guint b = 0; b < e; b++)
                have |= (guint64)got[lk * e + b] << (8 * b);
            if (have != rs_pattern_elem_value(seed, gk, e)) {
                n_bad++;
                first = MIN(first, k);
            }
        }
        g_assert_cmpuint(n_bad, ==, 1);
        g_assert_cmpuint(first, ==, bad_k);
        RsPatternMismatch pm = {0};
        g_assert_false(
            rs_pattern_check_box(seed, c.n_dims, c.shape, &c.local, got, e, &pm));
        g_assert_cmpuint(pm.n_bad, ==, 1);
        g_assert_cmpuint(pm.flat_index, ==, g);
        gint64 pos[RS_MAX_DIMS] = {0};
        rs_box_index_position(&bi, first, pos);
        for (guint d = 0; d < c.n_dims; d++)
            g_assert_cmpint(pos[d], ==, pm.global_index[d]);
    }
    g_rand_free(rng);
}

/* Units: the widest the rows, strides and both addresses allow. */
static void
test_unit_bytes(void)
{
    RsRegion r = {0};
    r.base = (uint8_t *)(uintptr_t)4096;
    r.n_dims = 2;
    r.elem_bytes = 2;
    r.counts[0] = 10;
    r.counts[1] = 2048; /* 4 KiB rows */
    r.strides_bytes[0] = 8192;
    r.strides_bytes[1] = 2;
    r.n_bytes = 10 * 4096;
    g_assert_cmpuint(rs_region_index_unit_bytes(&r, 0, r.n_bytes, 256), ==, 16);
    /* A chunk starting at byte 8 or a wire buffer at an 8-byte address: 8. */
    g_assert_cmpuint(rs_region_index_unit_bytes(&r, 8, r.n_bytes, 256), ==, 8);
    g_assert_cmpuint(rs_region_index_unit_bytes(&r, 0, r.n_bytes, 264), ==, 8);
    /* Rows of 2·127 bytes: 2. */
    r.counts[1] = 127;
    r.n_bytes = 10 * 254;
    g_assert_cmpuint(rs_region_index_unit_bytes(&r, 0, r.n_bytes, 256), ==, 2);
    /* Elements apart (a column): one element per unit. */
    r.elem_bytes = 4;
    r.counts[1] = 100;
    r.strides_bytes[1] = 400;
    r.n_bytes = 10 * 400;
    g_assert_cmpuint(rs_region_index_unit_bytes(&r, 0, r.n_bytes, 256), ==, 4);
}

/* The 32-bit division path and the 64-bit one agree. */
static void
test_divmod(void)
{
    static const guint64 pairs[][2] = {
        {0, 1}, {7, 3}, {G_MAXUINT32, 7}, {(guint64)G_MAXUINT32 + 1, 7},
        {G_GUINT64_CONSTANT(1) << 40, 3}, {G_GUINT64_CONSTANT(123456789012345), 1ull << 33},
        {5, (guint64)G_MAXUINT32 + 9},
    };
    for (guint i = 0; i < G_N_ELEMENTS(pairs); i++) {
        guint64 rem;
        guint64 q = rs_index_divmod(pairs[i][0], pairs[i][1], &rem);
        g_assert_cmpuint(q, ==, pairs[i][0] / pairs[i][1]);
        g_assert_cmpuint(rem, ==, pairs[i][0] % pairs[i][1]);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (guint i = 0; i < G_N_ELEMENTS(elem_sizes); i++) {
        gconstpointer e = GUINT_TO_POINTER(elem_sizes[i]);
        g_autofree char *move = g_strdup_printf("/region-index/move/elem-%u", elem_sizes[i]);
        g_autofree char *copy = g_strdup_printf("/region-index/copy/elem-%u", elem_sizes[i]);
        g_autofree char *pattern =
            g_strdup_printf("/region-index/pattern/elem-%u", elem_sizes[i]);
        g_test_add_data_func(move, e, test_move);
        g_test_add_data_func(copy, e, test_copy);
        g_test_add_data_func(pattern, e, test_pattern);
    }
    g_test_add_func("/region-index/unit-bytes", test_unit_bytes);
    g_test_add_func("/region-index/divmod", test_divmod);
    return g_test_run();
}

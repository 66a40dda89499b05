/* test-pattern.c — the validation pattern: runs equal element values for every element size
 * and alignment, values are not periodic, and a changed byte is found at its exact index. */
#include "exec/pattern.h"

#include <string.h>

static void
test_run_matches_elements(void)
{
    const guint sizes[] = {1, 2, 4, 8};
    const guint64 firsts[] = {0, 1, 3, 7, 8, 13, 1000003};
    const guint64 counts[] = {0, 1, 2, 5, 17, 64};
    guint64 seed = rs_pattern_seed(3);
    for (guint s = 0; s < G_N_ELEMENTS(sizes); s++)
        for (guint f = 0; f < G_N_ELEMENTS(firsts); f++)
            for (guint c = 0; c < G_N_ELEMENTS(counts); c++) {
                guint e = sizes[s];
                guint8 run[64 * 8 + 1];
                run[counts[c] * e] = 0xA5; /* a guard byte after the run */
                rs_pattern_fill_run(seed, firsts[f], counts[c], e, run);
                g_assert_cmpuint(run[counts[c] * e], ==, 0xA5);
                for (guint64 i = 0; i < counts[c]; i++) {
                    guint8 one[8];
                    rs_pattern_get_elem(seed, firsts[f] + i, e, one);
                    g_assert_cmpmem(run + i * e, e, one, e);
                }
            }
}

/* No short period: a 1-byte element repeats at distance 256 (or any distance) only by
 * chance, about 1 in 256, and two tensors have different streams. */
static void
test_not_periodic(void)
{
    guint64 seed = rs_pattern_seed(0), other = rs_pattern_seed(1);
    g_assert_cmpuint(seed, !=, other);
    const guint n = 1 << 16;
    g_autofree guint8 *a = g_malloc(n + 256), *b = g_malloc(n);
    rs_pattern_fill_run(seed, 0, n + 256, 1, a);
    rs_pattern_fill_run(other, 0, n, 1, b);
    guint same_256 = 0, same_1 = 0, same_tensor = 0;
    for (guint i = 0; i < n; i++) {
        same_256 += a[i] == a[i + 256];
        same_1 += a[i] == a[i + 1];
        same_tensor += a[i] == b[i];
    }
    /* Expected n / 256 = 256 each; a periodic pattern would give n. */
    g_assert_cmpuint(same_256, <, 2 * n / 256);
    g_assert_cmpuint(same_1, <, 2 * n / 256);
    g_assert_cmpuint(same_tensor, <, 2 * n / 256);
    /* 8-byte elements are whole keystream words: all distinct here. */
    g_autoptr(GHashTable) seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    g_autofree guint64 *words = g_new(guint64, 4096);
    rs_pattern_fill_run(seed, 0, 4096, 8, (guint8 *)words);
    for (guint i = 0; i < 4096; i++)
        g_assert_true(g_hash_table_add(seen, &words[i]));
}

typedef struct {
    const char *name;
    guint n_dims;
    gint64 shape[3];
    gint64 lo[3], count[3], step[3];
    guint64 offset;
    gint64 strides[3];
    guint elem_bytes;
    guint64 bad_local; /* local element whose first byte is flipped */
    gint64 bad_global[3];
} CheckCase;

static const CheckCase check_cases[] = {
    {"rows", 2, {6, 10}, {2, 3}, {3, 5}, {1, 1}, 0, {5, 1}, 4, 7, {3, 5}},
    {"stepped-rows", 2, {8, 9}, {1, 0}, {3, 9}, {2, 1}, 4, {9, 1}, 2, 4 + 9 + 2, {3, 2}},
    {"stepped-cols", 2, {4, 12}, {0, 1}, {4, 4}, {1, 3}, 0, {4, 1}, 8, 5, {1, 4}},
    {"transposed", 2, {5, 4}, {0, 0}, {5, 4}, {1, 1}, 0, {1, 5}, 1, 11, {1, 2}},
};

static void
test_check(gconstpointer data)
{
    const CheckCase *c = data;
    RsLocalBox local = {0};
    local.box.n_dims = c->n_dims;
    for (guint d = 0; d < c->n_dims; d++) {
        rs_box_set_dim(&local.box, d, c->lo[d], c->count[d], c->step[d]);
        local.strides_elems[d] = c->strides[d];
    }
    local.offset_elems = c->offset;
    guint64 n_local = c->offset + 1;
    for (guint d = 0; d < c->n_dims; d++)
        n_local += (guint64)((c->count[d] - 1) * c->strides[d]);
    guint e = c->elem_bytes;
    g_autofree guint8 *buf = g_malloc0(n_local * e);
    guint64 seed = rs_pattern_seed(7);
    rs_pattern_fill_box(seed, c->n_dims, c->shape, &local, buf, e);
    RsPatternMismatch m = {0};
    g_assert_true(rs_pattern_check_box(seed, c->n_dims, c->shape, &local, buf, e, &m));
    g_assert_cmpuint(m.n_bad, ==, 0);
    /* Every element holds the value of its global index. */
    guint64 flat = (guint64)(c->bad_global[0] * c->shape[1] + c->bad_global[1]);
    guint8 expected[8];
    rs_pattern_get_elem(seed, flat, e, expected);
    g_assert_cmpmem(buf + c->bad_local * e, e, expected, e);
    /* One flipped byte: found, counted once, at its global index. */
    buf[c->bad_local * e] ^= 0x40;
    g_assert_false(rs_pattern_check_box(seed, c->n_dims, c->shape, &local, buf, e, &m));
    g_assert_cmpuint(m.n_bad, ==, 1);
    g_assert_cmpint(m.global_index[0], ==, c->bad_global[0]);
    g_assert_cmpint(m.global_index[1], ==, c->bad_global[1]);
    g_assert_cmpuint(m.flat_index, ==, flat);
    g_assert_cmpmem(m.expected, e, expected, e);
    g_assert_cmpuint(m.got[0], ==, expected[0] ^ 0x40);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pattern/run-matches-elements", test_run_matches_elements);
    g_test_add_func("/pattern/not-periodic", test_not_periodic);
    for (guint i = 0; i < G_N_ELEMENTS(check_cases); i++) {
        g_autofree char *path = g_strdup_printf("/pattern/check/%s", check_cases[i].name);
        g_test_add_data_func(path, &check_cases[i], test_check);
    }
    return g_test_run();
}

/* test-box.c — box intersection, subtraction, disjoint lists and the dim-0 order; and the
 * names of base/'s error domains. */
#include "base/box.h"

static RsBox
box2(gint64 lo0, gint64 hi0, gint64 lo1, gint64 hi1)
{
    const gint64 lo[] = {lo0, lo1}, hi[] = {hi0, hi1};
    RsBox b;
    rs_box_init_range(&b, 2, lo, hi);
    return b;
}

static void
test_intersect(void)
{
    RsBox a = box2(0, 10, 0, 10), b = box2(5, 15, 8, 20), r;
    g_assert_true(rs_box_intersect(&a, &b, &r));
    g_assert_cmpint(r.lo[0], ==, 5);
    g_assert_cmpint(r.hi[0], ==, 10);
    g_assert_cmpint(r.lo[1], ==, 8);
    g_assert_cmpint(r.hi[1], ==, 10);
    g_assert_cmpuint(rs_box_get_n_elems(&r), ==, 10);
    RsBox c = box2(10, 12, 0, 10);
    g_assert_false(rs_box_intersect(&a, &c, NULL));
}

static void
test_subtract(void)
{
    RsBox a = box2(0, 10, 0, 10), hole = box2(3, 5, 4, 6);
    RsBox out[RS_BOX_SUBTRACT_MAX];
    guint n = rs_box_subtract(&a, &hole, out, RS_BOX_SUBTRACT_MAX);
    g_assert_cmpuint(n, ==, 4);
    guint64 total = 0;
    for (guint i = 0; i < n; i++) {
        total += rs_box_get_n_elems(&out[i]);
        g_assert_false(rs_box_intersect(&out[i], &hole, NULL));
        for (guint j = i + 1; j < n; j++)
            g_assert_false(rs_box_intersect(&out[i], &out[j], NULL));
    }
    g_assert_cmpuint(total, ==, 100 - 4);
    /* Covering box leaves nothing; a disjoint one leaves a. */
    g_assert_cmpuint(rs_box_subtract(&hole, &a, out, RS_BOX_SUBTRACT_MAX), ==, 0);
    RsBox far = box2(20, 30, 0, 1);
    g_assert_cmpuint(rs_box_subtract(&a, &far, out, RS_BOX_SUBTRACT_MAX), ==, 1);
    g_assert_true(rs_box_is_equal(&out[0], &a));
}

static void
test_list_union(void)
{
    g_autoptr(GArray) list = g_array_new(FALSE, FALSE, sizeof(RsBox));
    RsBox a = box2(0, 4, 0, 4), b = box2(2, 6, 2, 6), c = box2(0, 4, 0, 4);
    rs_box_list_add_disjoint(list, &a);
    rs_box_list_add_disjoint(list, &b);
    rs_box_list_add_disjoint(list, &c);
    /* |a ∪ b| = 16 + 16 - 4 */
    g_assert_cmpuint(rs_box_list_get_n_elems(list), ==, 28);
    RsBox cut = box2(0, 6, 0, 1);
    rs_box_list_subtract(list, &cut);
    g_assert_cmpuint(rs_box_list_get_n_elems(list), ==, 24);
}

/* rs_box_compare_lo0 orders by lo[0] alone; ties keep their order under g_array_sort. */
static void
test_compare_lo0(void)
{
    RsBox a = box2(4, 6, 0, 1), b = box2(0, 2, 5, 9), c = box2(4, 8, 2, 3), d = box2(-3, 1, 0, 1);
    g_assert_cmpint(rs_box_compare_lo0(&a, &b), ==, 1);
    g_assert_cmpint(rs_box_compare_lo0(&b, &a), ==, -1);
    g_assert_cmpint(rs_box_compare_lo0(&a, &c), ==, 0);
    g_autoptr(GArray) list = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_array_append_val(list, a);
    g_array_append_val(list, b);
    g_array_append_val(list, c);
    g_array_append_val(list, d);
    g_array_sort(list, rs_box_compare_lo0);
    const gint64 want_lo0[] = {-3, 0, 4, 4}, want_lo1[] = {0, 5, 0, 2};
    for (guint i = 0; i < list->len; i++) {
        g_assert_cmpint(g_array_index(list, RsBox, i).lo[0], ==, want_lo0[i]);
        g_assert_cmpint(g_array_index(list, RsBox, i).lo[1], ==, want_lo1[i]);
    }
    RsBox s0, s1;
    rs_box_init_full(&s0, 0, NULL);
    rs_box_init_full(&s1, 0, NULL);
    g_assert_cmpint(rs_box_compare_lo0(&s0, &s1), ==, 0);
}

static void
test_scalar_and_empty(void)
{
    RsBox s;
    rs_box_init_range(&s, 0, NULL, NULL);
    g_assert_cmpuint(rs_box_get_n_elems(&s), ==, 1);
    RsBox e = box2(3, 3, 0, 5);
    g_assert_true(rs_box_is_empty(&e));
    g_assert_cmpuint(rs_box_get_n_elems(&e), ==, 0);
    g_autofree char *text = rs_box_format(&e);
    g_assert_cmpstr(text, ==, "[3:3, 0:5]");
}

static RsBox
section1(gint64 lo, gint64 count, gint64 step)
{
    RsBox b;
    rs_box_init_range(&b, 1, &lo, &lo);
    rs_box_set_dim(&b, 0, lo, count, step);
    return b;
}

static void
test_section_intersect(void)
{
    /* {0,2,…,18} ∩ {0,3,…,18} = {0,6,12,18} */
    RsBox a = section1(0, 10, 2), b = section1(0, 7, 3), r;
    g_assert_true(rs_box_intersect(&a, &b, &r));
    g_assert_cmpint(r.lo[0], ==, 0);
    g_assert_cmpint(r.step[0], ==, 6);
    g_assert_cmpint(rs_box_get_count(&r, 0), ==, 4);
    g_assert_cmpint(r.hi[0], ==, 19);
    /* Odd rows and even rows never meet (gpt-oss gate/up interleaving). */
    RsBox even = section1(0, 8, 2), odd = section1(1, 8, 2);
    g_assert_false(rs_box_intersect(&even, &odd, NULL));
    /* {5,9,13,17,21} ∩ [10, 20) = {13, 17} */
    RsBox c = section1(5, 5, 4), d = section1(10, 10, 1);
    g_assert_true(rs_box_intersect(&c, &d, &r));
    g_assert_cmpint(r.lo[0], ==, 13);
    g_assert_cmpint(rs_box_get_count(&r, 0), ==, 2);
    g_assert_cmpint(r.step[0], ==, 4);
    g_autofree char *text = rs_box_format(&r);
    g_assert_cmpstr(text, ==, "[13:18:4]");
    /* One common index: normalised to step 1. */
    RsBox e = section1(0, 3, 7), f = section1(7, 2, 5);
    g_assert_true(rs_box_intersect(&e, &f, &r));
    g_assert_cmpint(r.lo[0], ==, 7);
    g_assert_cmpint(r.step[0], ==, 1);
    g_assert_cmpint(r.hi[0], ==, 8);
}

/* Element sets of random 2-D sections: intersection and subtraction agree with brute
 * force; subtraction pieces are disjoint. */
static void
mark(const RsBox *b, guint8 *grid, gint64 width, guint8 value, gboolean add)
{
    for (gint64 i = 0; i < rs_box_get_count(b, 0); i++)
        for (gint64 j = 0; j < rs_box_get_count(b, 1); j++) {
            gint64 x = rs_box_get_index(b, 0, i), y = rs_box_get_index(b, 1, j);
            if (add)
                grid[x * width + y] += value;
            else
                grid[x * width + y] = value;
        }
}

static void
test_section_random(void)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(7);
    const gint64 W = 40;
    for (guint iter = 0; iter < 3000; iter++) {
        RsBox a, b;
        const gint64 zero[2] = {0, 0};
        rs_box_init_range(&a, 2, zero, zero);
        rs_box_init_range(&b, 2, zero, zero);
        for (guint d = 0; d < 2; d++) {
            gint64 sa = g_rand_int_range(rng, 1, 5), sb = g_rand_int_range(rng, 1, 5);
            gint64 la = g_rand_int_range(rng, 0, 10), lb = g_rand_int_range(rng, 0, 10);
            rs_box_set_dim(&a, d, la, g_rand_int_range(rng, 0, (gint32)((W - la - 1) / sa + 1)),
                           sa);
            rs_box_set_dim(&b, d, lb, g_rand_int_range(rng, 0, (gint32)((W - lb - 1) / sb + 1)),
                           sb);
        }
        guint8 ga[40 * 40] = {0}, gb[40 * 40] = {0}, gi[40 * 40] = {0}, gd[40 * 40] = {0};
        mark(&a, ga, W, 1, FALSE);
        mark(&b, gb, W, 1, FALSE);
        RsBox r;
        if (rs_box_intersect(&a, &b, &r))
            mark(&r, gi, W, 1, TRUE);
        RsBox pieces[256];
        guint n = rs_box_subtract(&a, &b, pieces, G_N_ELEMENTS(pieces));
        g_assert_cmpuint(n, !=, G_MAXUINT);
        for (guint p = 0; p < n; p++)
            mark(&pieces[p], gd, W, 1, TRUE);
        for (gint64 k = 0; k < W * W; k++) {
            g_assert_cmpuint(gi[k], ==, ga[k] && gb[k]);
            g_assert_cmpuint(gd[k], ==, ga[k] && !gb[k]);
        }
        g_assert_cmpuint(rs_box_is_within(&r, &a) || !rs_box_intersect(&a, &b, NULL), ==, TRUE);
    }
}

static void
test_shape_format(void)
{
    const gint64 shape[3] = {32, 2880, 384};
    g_autofree char *three = rs_shape_format(shape, 3);
    g_autofree char *none = rs_shape_format(shape, 0);
    g_assert_cmpstr(three, ==, "[32, 2880, 384]");
    g_assert_cmpstr(none, ==, "[]");
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/box/shape-format", test_shape_format);
    g_test_add_func("/box/intersect", test_intersect);
    g_test_add_func("/box/subtract", test_subtract);
    g_test_add_func("/box/list-union", test_list_union);
    g_test_add_func("/box/compare-lo0", test_compare_lo0);
    g_test_add_func("/box/scalar-and-empty", test_scalar_and_empty);
    g_test_add_func("/box/section/intersect", test_section_intersect);
    g_test_add_func("/box/section/random-vs-brute-force", test_section_random);
    return g_test_run();
}

/* test-box.c — box intersection, subtraction and disjoint lists. */
#include "sim/box.h"

static RsBox
box2(gint64 lo0, gint64 hi0, gint64 lo1, gint64 hi1)
{
    RsBox b = {0};
    b.n_dims = 2;
    b.lo[0] = lo0;
    b.hi[0] = hi0;
    b.lo[1] = lo1;
    b.hi[1] = hi1;
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
    RsBox out[2 * RS_MAX_DIMS];
    guint n = rs_box_subtract(&a, &hole, out);
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
    g_assert_cmpuint(rs_box_subtract(&hole, &a, out), ==, 0);
    RsBox far = box2(20, 30, 0, 1);
    g_assert_cmpuint(rs_box_subtract(&a, &far, out), ==, 1);
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

static void
test_scalar_and_empty(void)
{
    RsBox s = {0};
    g_assert_cmpuint(rs_box_get_n_elems(&s), ==, 1);
    RsBox e = box2(3, 3, 0, 5);
    g_assert_true(rs_box_is_empty(&e));
    g_assert_cmpuint(rs_box_get_n_elems(&e), ==, 0);
    g_autofree char *text = rs_box_format(&e);
    g_assert_cmpstr(text, ==, "[3:3, 0:5]");
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/box/intersect", test_intersect);
    g_test_add_func("/box/subtract", test_subtract);
    g_test_add_func("/box/list-union", test_list_union);
    g_test_add_func("/box/scalar-and-empty", test_scalar_and_empty);
    return g_test_run();
}

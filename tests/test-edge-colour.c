/* test-edge-colour.c — König's bipartite edge colouring of base/edge-colour.h: exact
 * colours on a small all-to-all (where first fit needs one more), groups that restart,
 * local messages, and on random multigraphs a proper colouring (no rank sends twice or
 * receives twice in one colour of a group) with exactly Δ colours. */
#include "base/edge-colour.h"

#include <string.h>

/* 2 senders × 3 receivers in (src, dst) order, Δ = 3. 0→2, 0→3, 0→4 take 0, 1, 2. 1→2:
 * colour 0 is free at 1 but taken at 2, where 1 is free: the 0, 1 path from 2 (0→2, then
 * 0→3) swaps to 1, 0, and 1→2 takes 0. 1→3 takes 1. 1→4: 2 is free at 1, taken at 4 (0→4)
 * where 0 is free: the 2, 0 path (0→4, then 0→3) swaps to 0, 2, and 1→4 takes 2. Three
 * colours, a Latin rectangle, where first fit needs four (0 1 2 / 1 0 3). */
static void
test_all_to_all(void)
{
    const guint32 src[] = {0, 0, 0, 1, 1, 1}, dst[] = {2, 3, 4, 2, 3, 4};
    const guint32 group[6] = {0}, want[] = {1, 2, 0, 0, 1, 2};
    guint32 colour[6];
    rs_edge_colour_bipartite(src, dst, group, 6, 5, colour);
    for (guint i = 0; i < 6; i++)
        g_assert_cmpuint(colour[i], ==, want[i]);
}

/* Colours restart per group, whatever the input order; a local message takes colour 0 and
 * blocks nothing. */
static void
test_groups_and_locals(void)
{
    const guint32 src[] = {0, 1, 0, 0, 0}, dst[] = {1, 1, 1, 1, 1}, group[] = {5, 5, 3, 5, 3};
    guint32 colour[5];
    rs_edge_colour_bipartite(src, dst, group, 5, 2, colour);
    g_assert_cmpuint(colour[0], ==, 0); /* group 5: first 0→1 */
    g_assert_cmpuint(colour[1], ==, 0); /* local */
    g_assert_cmpuint(colour[2], ==, 0); /* group 3: first 0→1 */
    g_assert_cmpuint(colour[3], ==, 1); /* group 5: second 0→1 */
    g_assert_cmpuint(colour[4], ==, 1); /* group 3: second 0→1 */
}

static void
test_random_proper(void)
{
    GRand *rng = g_rand_new_with_seed(7);
    for (guint trial = 0; trial < 200; trial++) {
        guint n_ranks = (guint)g_rand_int_range(rng, 2, 40);
        guint n = (guint)g_rand_int_range(rng, 1, 600);
        g_autofree guint32 *src = g_new(guint32, n), *dst = g_new(guint32, n);
        g_autofree guint32 *group = g_new(guint32, n), *colour = g_new(guint32, n);
        for (guint i = 0; i < n; i++) {
            src[i] = (guint32)g_rand_int_range(rng, 0, (gint32)n_ranks);
            dst[i] = (guint32)g_rand_int_range(rng, 0, (gint32)n_ranks);
            group[i] = (guint32)g_rand_int_range(rng, 0, 3);
        }
        rs_edge_colour_bipartite(src, dst, group, n, n_ranks, colour);
        for (guint g = 0; g < 3; g++) {
            g_autofree guint *out_deg = g_new0(guint, n_ranks), *in_deg = g_new0(guint, n_ranks);
            guint max_deg = 0;
            for (guint i = 0; i < n; i++)
                if (group[i] == g && src[i] != dst[i]) {
                    max_deg = MAX(max_deg, ++out_deg[src[i]]);
                    max_deg = MAX(max_deg, ++in_deg[dst[i]]);
                }
            for (guint i = 0; i < n; i++) {
                if (group[i] != g)
                    continue;
                if (src[i] == dst[i]) {
                    g_assert_cmpuint(colour[i], ==, 0);
                    continue;
                }
                g_assert_cmpuint(colour[i], <, max_deg);
                for (guint j = i + 1; j < n; j++)
                    if (group[j] == g && src[j] != dst[j] && colour[j] == colour[i])
                        g_assert_true(src[j] != src[i] && dst[j] != dst[i]);
            }
        }
    }
    g_rand_free(rng);
}

/* The same König colouring on a dense table of 2 × ranks × Δ words (the code before the
 * lists): the reference the compact table must reproduce colour for colour. */
static void
reference_colour(const guint32 *src, const guint32 *dst, guint n, guint n_ranks,
                 guint32 *colour)
{
    guint n_sides = 2 * n_ranks, delta = 0;
    g_autofree guint *degree = g_new0(guint, n_sides);
    for (guint m = 0; m < n; m++) {
        colour[m] = 0;
        if (src[m] != dst[m]) {
            delta = MAX(delta, ++degree[2 * src[m]]);
            delta = MAX(delta, ++degree[2 * dst[m] + 1]);
        }
    }
    if (delta == 0)
        return;
    g_autofree guint32 *at = g_new(guint32, (gsize)n_sides * delta);
    memset(at, 0xff, sizeof(guint32) * n_sides * delta);
    g_autoptr(GArray) path = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint m = 0; m < n; m++) {
        if (src[m] == dst[m])
            continue;
        guint32 u = 2 * src[m], v = 2 * dst[m] + 1, a = 0, b = 0;
        while (at[u * delta + a] != G_MAXUINT32)
            a++;
        while (at[v * delta + b] != G_MAXUINT32)
            b++;
        if (at[v * delta + a] != G_MAXUINT32) {
            g_array_set_size(path, 0);
            for (guint32 x = v, c = a, f; (f = at[x * delta + c]) != G_MAXUINT32;) {
                g_array_append_val(path, f);
                x = (x & 1) ? 2 * src[f] : 2 * dst[f] + 1;
                c = c == a ? b : a;
            }
            for (guint i = 0; i < path->len; i++) {
                guint32 f = g_array_index(path, guint32, i);
                at[2 * src[f] * delta + colour[f]] = at[(2 * dst[f] + 1) * delta + colour[f]] =
                    G_MAXUINT32;
            }
            for (guint i = 0; i < path->len; i++) {
                guint32 f = g_array_index(path, guint32, i);
                colour[f] = colour[f] == a ? b : a;
                at[2 * src[f] * delta + colour[f]] = at[(2 * dst[f] + 1) * delta + colour[f]] = f;
            }
        }
        colour[m] = a;
        at[u * delta + a] = at[v * delta + a] = m;
    }
}

/* Skewed degrees (a few hubs, many ranks of one or two messages) put most sides in lists:
 * the colours are the dense table's, exactly. */
static void
test_skewed_matches_dense(void)
{
    GRand *rng = g_rand_new_with_seed(11);
    for (guint trial = 0; trial < 100; trial++) {
        guint n_ranks = (guint)g_rand_int_range(rng, 8, 300);
        guint n = (guint)g_rand_int_range(rng, 1, 1500);
        g_autofree guint32 *src = g_new(guint32, n), *dst = g_new(guint32, n);
        g_autofree guint32 *group = g_new0(guint32, n), *colour = g_new(guint32, n);
        g_autofree guint32 *expected = g_new(guint32, n);
        for (guint i = 0; i < n; i++) {
            gboolean hub = g_rand_int_range(rng, 0, 4) > 0;
            src[i] = hub ? (guint32)g_rand_int_range(rng, 0, 3)
                         : (guint32)g_rand_int_range(rng, 0, (gint32)n_ranks);
            dst[i] = (guint32)g_rand_int_range(rng, 0, (gint32)n_ranks);
        }
        rs_edge_colour_bipartite(src, dst, group, n, n_ranks, colour);
        reference_colour(src, dst, n, n_ranks, expected);
        for (guint i = 0; i < n; i++)
            g_assert_cmpuint(colour[i], ==, expected[i]);
    }
    g_rand_free(rng);
}

/* One sender and 80,000 receivers (Δ = 80,000): the dense table asked for 51 GB and aborted
 * (reshard run of a replicated tensor to 60,000 ranks: 57.6 GB). The colours are 0..Δ − 1
 * in input order. */
static void
test_large_star(void)
{
    const guint n = 80000;
    g_autofree guint32 *src = g_new0(guint32, n), *dst = g_new(guint32, n);
    g_autofree guint32 *group = g_new0(guint32, n), *colour = g_new(guint32, n);
    for (guint i = 0; i < n; i++)
        dst[i] = i + 1;
    rs_edge_colour_bipartite(src, dst, group, n, n + 1, colour);
    for (guint i = 0; i < n; i++)
        g_assert_cmpuint(colour[i], ==, i);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/edge-colour/all-to-all", test_all_to_all);
    g_test_add_func("/edge-colour/groups-and-locals", test_groups_and_locals);
    g_test_add_func("/edge-colour/random-proper", test_random_proper);
    g_test_add_func("/edge-colour/skewed-matches-dense", test_skewed_matches_dense);
    g_test_add_func("/edge-colour/large-star", test_large_star);
    return g_test_run();
}

/* test-edge-colour.c — König's bipartite edge colouring of base/edge-colour.h: exact
 * colours on a small all-to-all (where first fit needs one more), groups that restart,
 * local messages, and on random multigraphs a proper colouring (no rank sends twice or
 * receives twice in one colour of a group) with exactly Δ colours. */
#include "base/edge-colour.h"

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

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/edge-colour/all-to-all", test_all_to_all);
    g_test_add_func("/edge-colour/groups-and-locals", test_groups_and_locals);
    g_test_add_func("/edge-colour/random-proper", test_random_proper);
    return g_test_run();
}

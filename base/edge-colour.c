/* edge-colour.c — optimal bipartite edge colouring by alternating paths; see edge-colour.h. */
#include "base/edge-colour.h"

#include <string.h>

#define FREE G_MAXUINT32

static gint
compare_group(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const guint32 *group = user_data;
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    if (group[x] != group[y])
        return group[x] < group[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* One group: @edges[0 .. n) (message indices), their sides out = 2 × src, in = 2 × dst + 1;
 * at[side × delta + c] is the edge of colour c at that side, or FREE. */
static void
colour_group(const guint32 *src, const guint32 *dst, const guint32 *edges, guint n,
             guint n_vertices, guint32 *colour_out, GArray *path)
{
    guint n_sides = 2 * n_vertices;
    g_autofree guint *degree = g_new0(guint, n_sides);
    guint delta = 0;
    for (guint k = 0; k < n; k++) {
        guint32 m = edges[k];
        colour_out[m] = 0;
        if (src[m] == dst[m])
            continue;
        delta = MAX(delta, ++degree[2 * src[m]]);
        delta = MAX(delta, ++degree[2 * dst[m] + 1]);
    }
    if (delta == 0)
        return;
    g_autofree guint32 *at = g_new(guint32, (gsize)n_sides * delta);
    memset(at, 0xff, sizeof(guint32) * (gsize)n_sides * delta);
    for (guint k = 0; k < n; k++) {
        guint32 m = edges[k];
        if (src[m] == dst[m])
            continue;
        guint32 u = 2 * src[m], v = 2 * dst[m] + 1;
        guint32 *at_u = &at[(gsize)u * delta], *at_v = &at[(gsize)v * delta];
        guint32 a = 0, b = 0;
        while (at_u[a] != FREE) /* u has fewer than delta edges coloured: one is free */
            a++;
        while (at_v[b] != FREE)
            b++;
        if (at_v[a] != FREE) {
            /* Swap a and b along the path from v that alternates a, b, a, ...: it never
             * reaches u (the out side is entered by colour a, and u has none), and leaves
             * a free at v (König; e.g. Schrijver, "Combinatorial Optimization", Thm 20.1). */
            g_array_set_size(path, 0);
            guint32 x = v, c = a;
            while (at[(gsize)x * delta + c] != FREE) {
                guint32 f = at[(gsize)x * delta + c];
                g_array_append_val(path, f);
                x = (x & 1) ? 2 * src[f] : 2 * dst[f] + 1; /* its other end */
                c = c == a ? b : a;
            }
            for (guint i = 0; i < path->len; i++) {
                guint32 f = g_array_index(path, guint32, i);
                at[(gsize)(2 * src[f]) * delta + colour_out[f]] = FREE;
                at[(gsize)(2 * dst[f] + 1) * delta + colour_out[f]] = FREE;
            }
            for (guint i = 0; i < path->len; i++) {
                guint32 f = g_array_index(path, guint32, i);
                colour_out[f] = colour_out[f] == a ? b : a;
                at[(gsize)(2 * src[f]) * delta + colour_out[f]] = f;
                at[(gsize)(2 * dst[f] + 1) * delta + colour_out[f]] = f;
            }
        }
        colour_out[m] = a;
        at_u[a] = m;
        at_v[a] = m;
    }
}

void
rs_edge_colour_bipartite(const guint32 *src, const guint32 *dst, const guint32 *group, guint n,
                         guint n_vertices, guint32 *colour_out)
{
    g_return_if_fail(n == 0 || (src != NULL && dst != NULL && group != NULL && colour_out));
    g_return_if_fail(n <= G_MAXINT && n_vertices <= G_MAXUINT32 / 2);
    for (guint m = 0; m < n; m++)
        g_return_if_fail(src[m] < n_vertices && dst[m] < n_vertices);
    g_autofree guint32 *order = g_new(guint32, MAX(n, 1));
    for (guint i = 0; i < n; i++)
        order[i] = i;
    g_qsort_with_data(order, (gint)n, sizeof(guint32), compare_group, (gpointer)group);
    g_autoptr(GArray) path = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint k = 0; k < n;) {
        guint end = k + 1;
        while (end < n && group[order[end]] == group[order[k]])
            end++;
        colour_group(src, dst, &order[k], end - k, n_vertices, colour_out, path);
        k = end;
    }
}

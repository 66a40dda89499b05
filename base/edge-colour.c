/* edge-colour.c — first-fit proper edge colouring; see edge-colour.h. */
#include "base/edge-colour.h"

/* One bit per colour: bits[v] for rank side v (2 × rank: sends, 2 × rank + 1: receives). */
typedef struct {
    GArray **bits;   /* guint64 words per side, grown on demand */
    GArray *touched; /* guint32 sides with bits set in this group */
} Used;

static inline guint64
used_word(const Used *u, guint32 side, guint w)
{
    GArray *b = u->bits[side];
    return b != NULL && w < b->len ? g_array_index(b, guint64, w) : 0;
}

static void
used_set(Used *u, guint32 side, guint32 colour)
{
    guint w = colour / 64;
    if (u->bits[side] == NULL)
        u->bits[side] = g_array_new(FALSE, TRUE, sizeof(guint64));
    GArray *b = u->bits[side];
    if (b->len == 0)
        g_array_append_val(u->touched, side);
    if (b->len <= w)
        g_array_set_size(b, w + 1);
    g_array_index(b, guint64, w) |= (guint64)1 << (colour % 64);
}

static void
used_clear(Used *u)
{
    for (guint i = 0; i < u->touched->len; i++)
        g_array_set_size(u->bits[g_array_index(u->touched, guint32, i)], 0);
    g_array_set_size(u->touched, 0);
}

static gint
compare_group(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const guint32 *group = user_data;
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    if (group[x] != group[y])
        return group[x] < group[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

void
rs_edge_colour_first_fit(const guint32 *src, const guint32 *dst, const guint32 *group, guint n,
                         guint n_vertices, guint32 *colour_out)
{
    g_return_if_fail(n == 0 || (src != NULL && dst != NULL && group != NULL && colour_out));
    for (guint m = 0; m < n; m++)
        g_return_if_fail(src[m] < n_vertices && dst[m] < n_vertices);
    g_autofree guint32 *order = g_new(guint32, MAX(n, 1));
    for (guint i = 0; i < n; i++)
        order[i] = i;
    g_qsort_with_data(order, (gint)n, sizeof(guint32), compare_group, (gpointer)group);
    Used u = {g_new0(GArray *, 2 * (gsize)n_vertices + 1),
              g_array_new(FALSE, FALSE, sizeof(guint32))};
    for (guint k = 0; k < n; k++) {
        guint32 m = order[k];
        if (k > 0 && group[m] != group[order[k - 1]])
            used_clear(&u);
        colour_out[m] = 0;
        if (src[m] == dst[m])
            continue;
        guint32 out_side = 2 * src[m], in_side = 2 * dst[m] + 1;
        guint w = 0;
        guint64 free_bits;
        while ((free_bits = ~(used_word(&u, out_side, w) | used_word(&u, in_side, w))) == 0)
            w++;
        guint32 colour = w * 64 + (guint32)__builtin_ctzll(free_bits);
        used_set(&u, out_side, colour);
        used_set(&u, in_side, colour);
        colour_out[m] = colour;
    }
    for (guint v = 0; v < 2 * n_vertices + 1; v++)
        if (u.bits[v] != NULL)
            g_array_unref(u.bits[v]);
    g_free(u.bits);
    g_array_unref(u.touched);
}

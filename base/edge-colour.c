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

/* The coloured edges at each side of a group: at(x, c) is the edge of colour c at side x,
 * or FREE. A side of degree d >= Δ / DENSE_FACTOR keeps a row of Δ entries (lookups by
 * index); a smaller one keeps its up to d (colour, edge) pairs in a list (lookups by scan),
 * so the table takes at most 2 × DENSE_FACTOR × n words, not 2 × ranks × Δ: a star
 * of one sender and 60,000 receivers asked for 57.6 GB (reshard run, host transport). */
#define DENSE_FACTOR 4

typedef struct {
    guint32 **rows;  /* per side: its dense row of Δ entries, or NULL (a list) */
    guint32 **lists; /* per side: 2 × its degree words, (colour, edge) pairs */
    guint *count;    /* per side: pairs in its list */
    guint8 *seen;    /* scratch for the free colour of a listed side: Δ / DENSE_FACTOR + 2 */
} Table;

static inline guint32
at_get(const Table *t, guint32 x, guint32 c)
{
    if (t->rows[x] != NULL)
        return t->rows[x][c];
    const guint32 *l = t->lists[x];
    for (guint i = 0; i < t->count[x]; i++)
        if (l[2 * i] == c)
            return l[2 * i + 1];
    return FREE;
}

static inline void
at_set(Table *t, guint32 x, guint32 c, guint32 e)
{
    if (t->rows[x] != NULL) {
        t->rows[x][c] = e;
        return;
    }
    guint32 *l = t->lists[x];
    for (guint i = 0; i < t->count[x]; i++)
        if (l[2 * i] == c) {
            if (e != FREE) {
                l[2 * i + 1] = e;
            } else {
                guint last = --t->count[x];
                l[2 * i] = l[2 * last];
                l[2 * i + 1] = l[2 * last + 1];
            }
            return;
        }
    if (e != FREE) {
        guint i = t->count[x]++;
        l[2 * i] = c;
        l[2 * i + 1] = e;
    }
}

/* The smallest colour free at side @x (it has fewer than Δ edges coloured). */
static inline guint32
at_first_free(Table *t, guint32 x)
{
    guint32 c = 0;
    if (t->rows[x] != NULL) {
        while (t->rows[x][c] != FREE)
            c++;
        return c;
    }
    guint n = t->count[x]; /* the answer is at most n */
    const guint32 *l = t->lists[x];
    for (guint i = 0; i < n; i++)
        if (l[2 * i] <= n)
            t->seen[l[2 * i]] = 1;
    while (c <= n && t->seen[c])
        c++;
    for (guint i = 0; i < n; i++)
        if (l[2 * i] <= n)
            t->seen[l[2 * i]] = 0;
    return c;
}

/* One group: @edges[0 .. n) (message indices), their sides out = 2 × src, in = 2 × dst + 1. */
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
    /* Storage: dense rows for the sides of large degree, lists for the others. */
    gsize dense_words = 0, list_words = 0;
    for (guint x = 0; x < n_sides; x++) {
        if (degree[x] == 0)
            continue;
        if ((guint64)degree[x] * DENSE_FACTOR >= delta)
            dense_words += delta;
        else
            list_words += 2 * (gsize)degree[x];
    }
    g_autofree guint32 *dense = g_new(guint32, MAX(dense_words, 1));
    memset(dense, 0xff, sizeof(guint32) * dense_words);
    g_autofree guint32 *lists_mem = g_new(guint32, MAX(list_words, 1));
    g_autofree guint32 **rows = g_new0(guint32 *, n_sides);
    g_autofree guint32 **lists = g_new0(guint32 *, n_sides);
    g_autofree guint *count = g_new0(guint, n_sides);
    g_autofree guint8 *seen = g_new0(guint8, delta / DENSE_FACTOR + 2);
    gsize dense_at = 0, list_at = 0;
    for (guint x = 0; x < n_sides; x++) {
        if (degree[x] == 0)
            continue;
        if ((guint64)degree[x] * DENSE_FACTOR >= delta) {
            rows[x] = &dense[dense_at];
            dense_at += delta;
        } else {
            lists[x] = &lists_mem[list_at];
            list_at += 2 * (gsize)degree[x];
        }
    }
    Table t = {rows, lists, count, seen};
    for (guint k = 0; k < n; k++) {
        guint32 m = edges[k];
        if (src[m] == dst[m])
            continue;
        guint32 u = 2 * src[m], v = 2 * dst[m] + 1;
        /* u has fewer than delta edges coloured: one is free (so has v). */
        guint32 a = at_first_free(&t, u);
        guint32 b = at_first_free(&t, v);
        if (at_get(&t, v, a) != FREE) {
            /* Swap a and b along the path from v that alternates a, b, a, ...: it never
             * reaches u (the out side is entered by colour a, and u has none), and leaves
             * a free at v (König; e.g. Schrijver, "Combinatorial Optimization", Thm 20.1). */
            g_array_set_size(path, 0);
            guint32 x = v, c = a;
            for (guint32 f; (f = at_get(&t, x, c)) != FREE;) {
                g_array_append_val(path, f);
                x = (x & 1) ? 2 * src[f] : 2 * dst[f] + 1; /* its other end */
                c = c == a ? b : a;
            }
            for (guint i = 0; i < path->len; i++) {
                guint32 f = g_array_index(path, guint32, i);
                at_set(&t, 2 * src[f], colour_out[f], FREE);
                at_set(&t, 2 * dst[f] + 1, colour_out[f], FREE);
            }
            for (guint i = 0; i < path->len; i++) {
                guint32 f = g_array_index(path, guint32, i);
                colour_out[f] = colour_out[f] == a ? b : a;
                at_set(&t, 2 * src[f], colour_out[f], f);
                at_set(&t, 2 * dst[f] + 1, colour_out[f], f);
            }
        }
        colour_out[m] = a;
        at_set(&t, u, a, m);
        at_set(&t, v, a, m);
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

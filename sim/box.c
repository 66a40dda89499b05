/* box.c — box algebra. Everything is per-dim interval arithmetic; subtraction peels slabs
 * off dim by dim so the pieces are disjoint and at most 2·n_dims. */
#include "sim/box.h"

#include <string.h>

void
rs_box_init_full(RsBox *box, guint n_dims, const gint64 *shape)
{
    g_return_if_fail(n_dims <= RS_MAX_DIMS);
    memset(box, 0, sizeof *box);
    box->n_dims = n_dims;
    for (guint d = 0; d < n_dims; d++) {
        box->lo[d] = 0;
        box->hi[d] = shape[d];
    }
}

guint64
rs_box_get_n_elems(const RsBox *box)
{
    guint64 n = 1;
    for (guint d = 0; d < box->n_dims; d++) {
        if (box->hi[d] <= box->lo[d])
            return 0;
        n *= (guint64)(box->hi[d] - box->lo[d]);
    }
    return n;
}

gboolean
rs_box_is_empty(const RsBox *box)
{
    for (guint d = 0; d < box->n_dims; d++)
        if (box->hi[d] <= box->lo[d])
            return TRUE;
    return FALSE;
}

gboolean
rs_box_is_equal(const RsBox *a, const RsBox *b)
{
    if (a->n_dims != b->n_dims)
        return FALSE;
    for (guint d = 0; d < a->n_dims; d++)
        if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d])
            return FALSE;
    return TRUE;
}

gboolean
rs_box_is_within(const RsBox *inner, const RsBox *outer)
{
    if (inner->n_dims != outer->n_dims)
        return FALSE;
    if (rs_box_is_empty(inner))
        return TRUE;
    for (guint d = 0; d < inner->n_dims; d++)
        if (inner->lo[d] < outer->lo[d] || inner->hi[d] > outer->hi[d])
            return FALSE;
    return TRUE;
}

gboolean
rs_box_intersect(const RsBox *a, const RsBox *b, RsBox *out)
{
    g_return_val_if_fail(a->n_dims == b->n_dims, FALSE);
    RsBox r;
    r.n_dims = a->n_dims;
    for (guint d = 0; d < a->n_dims; d++) {
        r.lo[d] = MAX(a->lo[d], b->lo[d]);
        r.hi[d] = MIN(a->hi[d], b->hi[d]);
        if (r.hi[d] <= r.lo[d])
            return FALSE;
    }
    if (out != NULL)
        *out = r;
    return TRUE;
}

guint
rs_box_subtract(const RsBox *a, const RsBox *b, RsBox out[2 * RS_MAX_DIMS])
{
    RsBox inter;
    if (rs_box_is_empty(a))
        return 0;
    if (!rs_box_intersect(a, b, &inter)) {
        out[0] = *a;
        return 1;
    }
    guint n = 0;
    RsBox rest = *a; /* the part of a not yet peeled */
    for (guint d = 0; d < a->n_dims; d++) {
        if (rest.lo[d] < inter.lo[d]) {
            out[n] = rest;
            out[n].hi[d] = inter.lo[d];
            n++;
        }
        if (inter.hi[d] < rest.hi[d]) {
            out[n] = rest;
            out[n].lo[d] = inter.hi[d];
            n++;
        }
        rest.lo[d] = inter.lo[d];
        rest.hi[d] = inter.hi[d];
    }
    return n;
}

void
rs_box_list_subtract(GArray *boxes, const RsBox *b)
{
    guint n_kept = 0;
    g_autoptr(GArray) pieces_all = NULL;
    for (guint i = 0; i < boxes->len; i++) {
        RsBox cur = g_array_index(boxes, RsBox, i);
        if (!rs_box_intersect(&cur, b, NULL)) {
            g_array_index(boxes, RsBox, n_kept++) = cur;
            continue;
        }
        RsBox pieces[2 * RS_MAX_DIMS];
        guint n_pieces = rs_box_subtract(&cur, b, pieces);
        if (pieces_all == NULL)
            pieces_all = g_array_new(FALSE, FALSE, sizeof(RsBox));
        g_array_append_vals(pieces_all, pieces, n_pieces);
    }
    g_array_set_size(boxes, n_kept);
    if (pieces_all != NULL)
        g_array_append_vals(boxes, pieces_all->data, pieces_all->len);
}

void
rs_box_list_add_disjoint(GArray *boxes, const RsBox *b)
{
    if (rs_box_is_empty(b))
        return;
    g_autoptr(GArray) parts = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_array_append_val(parts, *b);
    for (guint i = 0; i < boxes->len && parts->len > 0; i++)
        rs_box_list_subtract(parts, &g_array_index(boxes, RsBox, i));
    g_array_append_vals(boxes, parts->data, parts->len);
}

guint64
rs_box_list_get_n_elems(const GArray *boxes)
{
    guint64 n = 0;
    for (guint i = 0; i < boxes->len; i++)
        n += rs_box_get_n_elems(&g_array_index(boxes, RsBox, i));
    return n;
}

char *
rs_box_format(const RsBox *box)
{
    GString *s = g_string_new("[");
    for (guint d = 0; d < box->n_dims; d++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, d ? ", " : "",
                               box->lo[d], box->hi[d]);
    g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
}

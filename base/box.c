/* box.c — box algebra on regular sections.
 *
 * Per dim a box is an arithmetic progression (lo, step, count). Intersection solves two
 * congruences (Chinese remainder theorem); subtraction peels dim by dim, and within a dim
 * splits the progression into what lies before, after and beside (other residue classes
 * of) the intersection. With step 1 everywhere this is plain interval arithmetic. */
#include "base/box.h"

#include <string.h>

static gint64
count_of(gint64 lo, gint64 hi, gint64 step)
{
    if (hi <= lo)
        return 0;
    return step == 1 ? hi - lo : (hi - lo + step - 1) / step; /* step 1 skips a division */
}

void
rs_box_set_dim(RsBox *box, guint d, gint64 lo, gint64 count, gint64 step)
{
    g_return_if_fail(d < box->n_dims && step >= 1);
    box->lo[d] = lo;
    box->step[d] = count > 1 ? step : 1; /* one index has no step: keep boxes comparable */
    box->hi[d] = count > 0 ? lo + (count - 1) * step + 1 : lo;
}

void
rs_box_init_range(RsBox *box, guint n_dims, const gint64 *lo, const gint64 *hi)
{
    g_return_if_fail(n_dims <= RS_MAX_DIMS);
    memset(box, 0, sizeof *box);
    box->n_dims = n_dims;
    for (guint d = 0; d < n_dims; d++) {
        box->lo[d] = lo[d];
        box->hi[d] = hi[d];
        box->step[d] = 1;
    }
}

void
rs_box_init_full(RsBox *box, guint n_dims, const gint64 *shape)
{
    gint64 zeros[RS_MAX_DIMS] = {0};
    rs_box_init_range(box, n_dims, zeros, shape);
}

gint64
rs_box_get_count(const RsBox *box, guint d)
{
    return count_of(box->lo[d], box->hi[d], box->step[d]);
}

gint64
rs_box_get_index(const RsBox *box, guint d, gint64 k)
{
    return box->lo[d] + k * box->step[d];
}

gboolean
rs_box_is_contiguous(const RsBox *box)
{
    for (guint d = 0; d < box->n_dims; d++)
        if (box->step[d] != 1)
            return FALSE;
    return TRUE;
}

guint64
rs_box_get_n_elems(const RsBox *box)
{
    guint64 n = 1;
    for (guint d = 0; d < box->n_dims; d++) {
        gint64 c = rs_box_get_count(box, d);
        if (c <= 0)
            return 0;
        n *= (guint64)c;
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

guint
rs_box_hash(gconstpointer box)
{
    const RsBox *b = box;
    guint h = b->n_dims;
    for (guint d = 0; d < b->n_dims; d++)
        h = h * 1000003u ^ (guint)b->lo[d] ^ ((guint)b->hi[d] << 7) ^ ((guint)b->step[d] << 13);
    return h;
}

gboolean
rs_box_equal(gconstpointer a, gconstpointer b)
{
    return rs_box_is_equal(a, b);
}

gint
rs_box_compare_lo0(gconstpointer a, gconstpointer b)
{
    const RsBox *x = a, *y = b;
    if (x->n_dims == 0)
        return 0;
    return x->lo[0] < y->lo[0] ? -1 : x->lo[0] > y->lo[0];
}

gboolean
rs_box_is_equal(const RsBox *a, const RsBox *b)
{
    if (a->n_dims != b->n_dims)
        return FALSE;
    for (guint d = 0; d < a->n_dims; d++) {
        if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d] || a->step[d] != b->step[d])
            return FALSE;
    }
    return TRUE;
}

/* Floor division and modulo for possibly negative numerators. */
static gint64
floor_div(gint64 a, gint64 b)
{
    gint64 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static gint64
pos_mod(gint64 a, gint64 m)
{
    gint64 r = a % m;
    return r < 0 ? r + m : r;
}

/* Extended Euclid: returns g = gcd(a, b) and x with a·x ≡ g (mod b). */
static gint64
ext_gcd(gint64 a, gint64 b, gint64 *x)
{
    gint64 old_r = a, r = b, old_s = 1, s = 0;
    while (r != 0) {
        gint64 q = old_r / r, t;
        t = old_r - q * r;
        old_r = r;
        r = t;
        t = old_s - q * s;
        old_s = s;
        s = t;
    }
    *x = old_s;
    return old_r;
}

/* One dim of an intersection: the common indices of (lo1, step1) below hi1 and
 * (lo2, step2) below hi2, as (lo, step, count). Returns FALSE when none. */
static gboolean
intersect_dim(gint64 lo1, gint64 hi1, gint64 s1, gint64 lo2, gint64 hi2, gint64 s2,
              gint64 *lo_out, gint64 *step_out, gint64 *count_out)
{
    gint64 hi = MIN(hi1, hi2), from = MAX(lo1, lo2);
    if (hi <= from)
        return FALSE;
    if (s1 == 1 && s2 == 1) {
        *lo_out = from;
        *step_out = 1;
        *count_out = hi - from;
        return TRUE;
    }
    gint64 inv;
    gint64 g = ext_gcd(s1, s2, &inv);
    gint64 diff = lo2 - lo1;
    if (diff % g != 0)
        return FALSE;
    gint64 m = s2 / g; /* modulus for t in lo1 + s1·t */
    __int128 t = ((__int128)(diff / g) * inv) % m;
    if (t < 0)
        t += m;
    gint64 lcm = s1 / g * s2;
    gint64 x0 = lo1 + (gint64)((__int128)s1 * t); /* a common index, maybe below from */
    /* The smallest x ≡ x0 (mod lcm) with x >= from. */
    gint64 first = x0 + floor_div(from - x0 + lcm - 1, lcm) * lcm;
    if (first >= hi)
        return FALSE;
    *lo_out = first;
    *step_out = lcm;
    *count_out = count_of(first, hi, lcm);
    return TRUE;
}

gboolean
rs_box_intersect(const RsBox *a, const RsBox *b, RsBox *out)
{
    g_return_val_if_fail(a->n_dims == b->n_dims, FALSE);
    RsBox r;
    memset(&r, 0, sizeof r);
    r.n_dims = a->n_dims;
    for (guint d = 0; d < a->n_dims; d++) {
        if (a->step[d] == 1 && b->step[d] == 1) {
            /* Plain ranges (the common case): [max lo, min hi). */
            r.lo[d] = MAX(a->lo[d], b->lo[d]);
            r.hi[d] = MIN(a->hi[d], b->hi[d]);
            r.step[d] = 1;
            if (r.hi[d] <= r.lo[d])
                return FALSE;
            continue;
        }
        gint64 lo, step, count;
        if (!intersect_dim(a->lo[d], a->hi[d], a->step[d], b->lo[d], b->hi[d], b->step[d], &lo,
                           &step, &count))
            return FALSE;
        rs_box_set_dim(&r, d, lo, count, step);
    }
    if (out != NULL)
        *out = r;
    return TRUE;
}

gboolean
rs_box_is_within(const RsBox *inner, const RsBox *outer)
{
    if (inner->n_dims != outer->n_dims)
        return FALSE;
    if (rs_box_is_empty(inner))
        return TRUE;
    RsBox inter;
    if (!rs_box_intersect(inner, outer, &inter))
        return FALSE;
    return rs_box_get_n_elems(&inter) == rs_box_get_n_elems(inner);
}

/* The parts of progression A = (lo, step, count) outside its sub-progression I (which has
 * step L, a multiple of A's step, and lies within A), as progressions. */
typedef struct {
    gint64 lo, step, count;
} Progression;

static guint
dim_difference(gint64 a_lo, gint64 a_step, gint64 a_count, gint64 i_lo, gint64 i_step,
               gint64 i_count, Progression *out, guint max_out)
{
    guint n = 0;
    gint64 a_last = a_lo + (a_count - 1) * a_step;
    if (i_count == 1)
        i_step = a_step; /* a single index: treat as one residue class of step a_step */
    gint64 ratio = i_step / a_step;
    for (gint64 r = 0; r < ratio; r++) {
        /* Residue class r of A modulo i_step: starts at a_lo + r·a_step. */
        gint64 start = a_lo + r * a_step;
        if (start > a_last)
            break;
        gint64 count = (a_last - start) / i_step + 1;
        gboolean is_i_class = pos_mod(i_lo - start, i_step) == 0;
        if (!is_i_class) {
            if (n == max_out)
                return G_MAXUINT;
            out[n++] = (Progression){start, i_step, count};
            continue;
        }
        /* The class containing I: keep what is before and after I. */
        gint64 before = (i_lo - start) / i_step;
        if (before > 0) {
            if (n == max_out)
                return G_MAXUINT;
            out[n++] = (Progression){start, i_step, before};
        }
        gint64 after = count - before - i_count;
        if (after > 0) {
            if (n == max_out)
                return G_MAXUINT;
            out[n++] = (Progression){i_lo + i_count * i_step, i_step, after};
        }
    }
    /* With step 1 and ratio 1 the class loop yields at most the two slabs. */
    return n;
}

guint
rs_box_subtract(const RsBox *a, const RsBox *b, RsBox *out, guint max_out)
{
    RsBox inter;
    if (rs_box_is_empty(a))
        return 0;
    if (!rs_box_intersect(a, b, &inter)) {
        if (max_out < 1)
            return G_MAXUINT;
        out[0] = *a;
        return 1;
    }
    guint n = 0;
    RsBox rest = *a; /* the part of a not yet peeled */
    for (guint d = 0; d < a->n_dims; d++) {
        Progression pieces[64];
        guint n_pieces = dim_difference(rest.lo[d], rest.step[d], rs_box_get_count(&rest, d),
                                        inter.lo[d], inter.step[d], rs_box_get_count(&inter, d),
                                        pieces, G_N_ELEMENTS(pieces));
        if (n_pieces == G_MAXUINT || n + n_pieces > max_out)
            return G_MAXUINT;
        for (guint p = 0; p < n_pieces; p++) {
            out[n] = rest;
            rs_box_set_dim(&out[n], d, pieces[p].lo, pieces[p].count, pieces[p].step);
            n++;
        }
        rs_box_set_dim(&rest, d, inter.lo[d], rs_box_get_count(&inter, d), inter.step[d]);
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
        if (pieces_all == NULL)
            pieces_all = g_array_new(FALSE, FALSE, sizeof(RsBox));
        guint room = RS_BOX_SUBTRACT_MAX;
        for (;;) {
            guint old = pieces_all->len;
            g_array_set_size(pieces_all, old + room);
            guint n = rs_box_subtract(&cur, b, &g_array_index(pieces_all, RsBox, old), room);
            if (n != G_MAXUINT) {
                g_array_set_size(pieces_all, old + n);
                break;
            }
            g_array_set_size(pieces_all, old);
            room *= 4;
        }
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
rs_shape_format(const gint64 *shape, guint n_dims)
{
    GString *s = g_string_new("[");
    for (guint d = 0; d < n_dims; d++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? ", " : "", shape[d]);
    g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
}

char *
rs_box_format(const RsBox *box)
{
    GString *s = g_string_new("[");
    for (guint d = 0; d < box->n_dims; d++) {
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, d ? ", " : "",
                               box->lo[d], box->hi[d]);
        if (box->step[d] != 1)
            g_string_append_printf(s, ":%" G_GINT64_FORMAT, box->step[d]);
    }
    g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
}

/* box.h — hyper-rectangles of global tensor indices.
 *
 * A box is [lo, hi) per dim in the global coordinates of one logical tensor, in elements.
 * A box with hi <= lo in any dim is empty. Boxes are plain values (copy them freely).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Most dims of any tensor or device mesh. Model tensors have at most 4 (MXFP4 blocks
 * [E, rows, groups, 16]); 6 leaves room for user tensors. */
#define RS_MAX_DIMS 6

typedef struct {
    guint n_dims;
    gint64 lo[RS_MAX_DIMS]; /* first index per dim, inclusive */
    gint64 hi[RS_MAX_DIMS]; /* last index per dim, exclusive */
} RsBox;

/**
 * rs_box_init_full:
 * @box: (out caller-allocates): the box to fill
 * @n_dims: 0..RS_MAX_DIMS (0 is a scalar: one element)
 * @shape: (array length=n_dims): extent per dim, >= 0
 *
 * Sets @box to the whole tensor [0, shape).
 */
void rs_box_init_full(RsBox *box, guint n_dims, const gint64 *shape);

/**
 * rs_box_get_n_elems:
 * Returns: the number of elements of @box; 0 when empty; 1 for a 0-dim box.
 */
guint64 rs_box_get_n_elems(const RsBox *box);

/** rs_box_is_empty: Returns: TRUE when @box has no elements. */
gboolean rs_box_is_empty(const RsBox *box);

/** rs_box_is_equal: Returns: TRUE when @a and @b have the same dims and bounds. */
gboolean rs_box_is_equal(const RsBox *a, const RsBox *b);

/** rs_box_is_within: Returns: TRUE when every element of @inner lies in @outer. An empty
 * @inner is within anything of the same rank. */
gboolean rs_box_is_within(const RsBox *inner, const RsBox *outer);

/**
 * rs_box_intersect:
 * @a, @b: boxes with the same n_dims
 * @out: (out caller-allocates) (optional): the intersection
 *
 * Returns: TRUE when the intersection is not empty. O(n_dims).
 */
gboolean rs_box_intersect(const RsBox *a, const RsBox *b, RsBox *out);

/**
 * rs_box_subtract:
 * @a, @b: boxes with the same n_dims
 * @out: (out caller-allocates) (array fixed-size=12): disjoint boxes whose union is a \ b
 *
 * Splits dim by dim: for each dim d in order, the slabs of @a below and above @b in dim d,
 * restricted to the intersection in dims before d. At most 2·n_dims pieces.
 *
 * Returns: the number of boxes written to @out (0 when @b covers @a).
 */
guint rs_box_subtract(const RsBox *a, const RsBox *b, RsBox out[2 * RS_MAX_DIMS]);

/**
 * rs_box_list_subtract:
 * @boxes: (element-type RsBox): a list of boxes, replaced in place by the same boxes minus @b
 * @b: the box to remove
 *
 * Keeps the list's elements disjoint if they were. O(len × n_dims).
 */
void rs_box_list_subtract(GArray *boxes, const RsBox *b);

/**
 * rs_box_list_add_disjoint:
 * @boxes: (element-type RsBox): disjoint boxes
 * @b: a box to add
 *
 * Appends the parts of @b not yet covered, so the list stays disjoint and covers the union.
 */
void rs_box_list_add_disjoint(GArray *boxes, const RsBox *b);

/** rs_box_list_get_n_elems: Returns: the sum of the elements of the boxes in @boxes. */
guint64 rs_box_list_get_n_elems(const GArray *boxes);

/**
 * rs_box_format:
 * Returns: (transfer full): "[lo:hi, lo:hi]" (Python slice notation, hi exclusive).
 */
char *rs_box_format(const RsBox *box);

G_END_DECLS

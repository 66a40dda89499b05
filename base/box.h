/* base/ — the bottom of the library stack, on GLib and libyaml only, with no notion of a
 * model, a framework or a fabric. It owns:
 *   box.h          hyper-rectangles of tensor indices, in which layouts, transfers, the
 *                  plan checks and the executor's copies are expressed (this header; the
 *                  folder's overview sits here, base/ having no umbrella header)
 *   mesh.h         device meshes and DTensor placements
 *   dtype.h        element types and their sizes
 *   units.h        quantities with units (bytes, seconds, bytes per second) parsed and
 *                  formatted
 *   data.h         finding shipped data files (models/, topologies/, scenarios/) by name
 *   yaml-reader.h  reading YAML inputs with file:line:column errors
 *   trace.h        the per-message trace CSV shared by the simulator and the executor
 *
 * box.h — hyper-rectangles (regular sections) of global tensor indices.
 *
 * A box is, per dim d, the indices lo[d], lo[d] + step[d], lo[d] + 2·step[d], … below
 * hi[d], in the global coordinates of one logical tensor, in elements. step 1 is the plain
 * range [lo, hi); larger steps keep interleaved layouts (gpt-oss gate/up rows alternating)
 * to one box. A box with hi <= lo in any dim is empty. Boxes built by the functions here
 * are normalised: hi[d] = lo[d] + (count[d] − 1)·step[d] + 1, so equal index sets compare
 * equal. Boxes are plain values (copy them freely); step must be >= 1 in every dim.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Most dims of any tensor or device mesh. Model tensors have at most 4 (MXFP4 blocks
 * [E, rows, groups, 16]); 6 leaves room for user tensors. */
#define RS_MAX_DIMS 6

typedef struct {
    guint n_dims;
    gint64 lo[RS_MAX_DIMS];   /* first index per dim, inclusive */
    gint64 hi[RS_MAX_DIMS];   /* bound per dim, exclusive */
    gint64 step[RS_MAX_DIMS]; /* distance between indices per dim, >= 1 */
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
 * rs_box_init_range:
 * @box: (out caller-allocates): the box to fill
 * @n_dims: 0..RS_MAX_DIMS
 * @lo: (array length=n_dims): first index per dim
 * @hi: (array length=n_dims): exclusive bound per dim
 *
 * Sets @box to the contiguous range [lo, hi) (step 1 in every dim).
 */
void rs_box_init_range(RsBox *box, guint n_dims, const gint64 *lo, const gint64 *hi);

/**
 * rs_box_set_dim:
 * @d: dim index < box->n_dims
 * @lo: first index
 * @count: number of indices, >= 0
 * @step: distance between indices, >= 1
 *
 * Sets dim @d to lo, lo + step, …, lo + (count − 1)·step (normalised).
 */
void rs_box_set_dim(RsBox *box, guint d, gint64 lo, gint64 count, gint64 step);

/** rs_box_get_count: Returns: the number of indices of @box in dim @d (0 when empty). */
gint64 rs_box_get_count(const RsBox *box, guint d);

/** rs_box_get_index: Returns: the global index of the @k-th index of dim @d (lo + k·step). */
gint64 rs_box_get_index(const RsBox *box, guint d, gint64 k);

/** rs_box_is_contiguous: Returns: TRUE when every dim has step 1. */
gboolean rs_box_is_contiguous(const RsBox *box);

/**
 * rs_box_get_n_elems:
 * Returns: the number of elements of @box; 0 when empty; 1 for a 0-dim box.
 */
guint64 rs_box_get_n_elems(const RsBox *box);

/** rs_box_is_empty: Returns: TRUE when @box has no elements. */
gboolean rs_box_is_empty(const RsBox *box);

/** rs_box_is_equal: Returns: TRUE when @a and @b have the same dims and bounds. */
gboolean rs_box_is_equal(const RsBox *a, const RsBox *b);

/* GHashFunc and GEqualFunc over RsBox keys (dims, bounds and steps), for hash tables keyed
 * by boxes. */
guint rs_box_hash(gconstpointer box);
gboolean rs_box_equal(gconstpointer a, gconstpointer b);

/**
 * rs_box_compare_lo0:
 * @a, @b: (type RsBox*): boxes with the same n_dims
 *
 * A GCompareFunc ordering boxes by their first index in dim 0 (lo[0]), for g_array_sort()
 * over an array of RsBox before a sweep along dim 0. Other dims, bounds and steps are not
 * compared: boxes with equal lo[0] compare equal (g_array_sort keeps their order). 0-dim
 * boxes all compare equal.
 *
 * Returns: -1, 0 or 1 as @a's lo[0] is below, equal to or above @b's.
 */
gint rs_box_compare_lo0(gconstpointer a, gconstpointer b);

/** rs_box_is_within: Returns: TRUE when every element of @inner lies in @outer. An empty
 * @inner is within anything of the same rank. */
gboolean rs_box_is_within(const RsBox *inner, const RsBox *outer);

/**
 * rs_box_intersect:
 * @a, @b: boxes with the same n_dims
 * @out: (out caller-allocates) (optional): the intersection, normalised
 *
 * Exact for sections: per dim the common indices of two arithmetic progressions form one
 * progression with step lcm(step_a, step_b), found with the Chinese remainder theorem
 * (empty when lo_b − lo_a is not a multiple of gcd(step_a, step_b)).
 *
 * Returns: TRUE when the intersection is not empty. O(n_dims · log step).
 */
gboolean rs_box_intersect(const RsBox *a, const RsBox *b, RsBox *out);

/**
 * rs_box_subtract:
 * @a, @b: boxes with the same n_dims
 * @out: (out caller-allocates) (array length=max_out): disjoint boxes whose union is a \ b
 * @max_out: room in @out; RS_BOX_SUBTRACT_MAX always suffices for contiguous boxes
 *
 * Splits dim by dim: for each dim d in order, the indices of @a's dim d outside the
 * intersection (below it, above it, and, for sections, the residue classes of @a modulo
 * the intersection's step that it does not contain), restricted to the intersection in
 * dims before d. With step 1 at most 2·n_dims pieces; with steps, up to
 * (step_i / step_a + 1) per dim, and the function returns G_MAXUINT when more than
 * @max_out pieces would be needed (nothing meaningful is then in @out).
 *
 * Returns: the number of boxes written to @out (0 when @b covers @a).
 */
guint rs_box_subtract(const RsBox *a, const RsBox *b, RsBox *out, guint max_out);

/* Room for rs_box_subtract() of contiguous boxes. */
#define RS_BOX_SUBTRACT_MAX (2 * RS_MAX_DIMS)

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
 * Returns: (transfer full): "[lo:hi, lo:hi:step]" (Python slice notation, hi exclusive;
 * the step only where it is not 1).
 */
char *rs_box_format(const RsBox *box);

/**
 * rs_shape_format:
 * @shape: (array length=n_dims): extents in elements
 * Returns: (transfer full): "[2880, 384]" ("[]" for a scalar).
 */
char *rs_shape_format(const gint64 *shape, guint n_dims);

G_END_DECLS

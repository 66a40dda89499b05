/* pattern.h — the position-unique values the executor fills source shards with, and the
 * check of destination shards against them.
 *
 * Every tensor has a keystream: word j (64 bits) is splitmix64's output function applied
 * to seed_t + j·φ (φ = 0x9E3779B97F4A7C15; Steele, Lea, Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014), with seed_t derived from the tensor's
 * index in the refit. The bytes of the element with global row-major index g are bytes
 * g·e .. g·e + e − 1 of that stream (e = element size, little-endian within a word). So
 * every element's value is a hash of (tensor, global index) for every dtype: an 8-byte
 * element is one whole word, smaller elements share one, and no value repeats with a short
 * period (nothing is taken mod 256). A byte moved to a wrong place, a missing write or a
 * stray write is detected unless the two bytes happen to agree (probability 1/256 per
 * byte). Values are raw bits: float dtypes are compared bit for bit, NaN patterns
 * included.
 */
#pragma once

#include <glib.h>

#include "exec/region-index.h"
#include "layout/layout.h"

G_BEGIN_DECLS

/** rs_pattern_seed: Returns: the keystream seed of the tensor with index @tensor_idx. */
guint64 rs_pattern_seed(guint32 tensor_idx);

/**
 * rs_pattern_get_elem:
 * @seed: from rs_pattern_seed()
 * @index: global row-major element index
 * @elem_bytes: 1, 2, 4 or 8
 * @out: (out caller-allocates) (array length=elem_bytes): the element's bytes
 */
void rs_pattern_get_elem(guint64 seed, guint64 index, guint elem_bytes, guint8 *out);

/**
 * rs_pattern_fill_run:
 * @first: global index of the first element
 * @count: consecutive elements (global indices first .. first + count − 1)
 * @out: (array length=count*elem_bytes): receives their bytes back to back
 *
 * Eight bytes per keystream word; O(count × elem_bytes / 8).
 */
void rs_pattern_fill_run(guint64 seed, guint64 first, guint64 count, guint elem_bytes,
                         guint8 *out);

/**
 * rs_pattern_fill_box:
 * @shape: (array length=n_dims): the tensor's global shape (for global indices)
 * @local: a box of a rank's local buffer
 * @buffer: that local buffer
 *
 * Writes the pattern value of every element of @local->box at its local position.
 */
void rs_pattern_fill_box(guint64 seed, guint n_dims, const gint64 *shape,
                         const RsLocalBox *local, guint8 *buffer, guint elem_bytes);

/* The first element of a box that does not hold its pattern value. */
typedef struct {
    guint64 n_bad;                   /* elements that differ */
    gint64 global_index[RS_MAX_DIMS]; /* of the first one, in row-major order of the box */
    guint64 flat_index;               /* the same as a row-major flat index */
    guint8 expected[8];
    guint8 got[8];
} RsPatternMismatch;

/**
 * rs_pattern_check_box:
 * @mismatch: (inout): n_bad is increased by the count of differing elements; the first
 *   element is recorded when n_bad was 0 on entry
 *
 * Returns: TRUE when every element of @local->box holds its pattern value.
 */
gboolean rs_pattern_check_box(guint64 seed, guint n_dims, const gint64 *shape,
                              const RsLocalBox *local, const guint8 *buffer, guint elem_bytes,
                              RsPatternMismatch *mismatch);

/**
 * rs_box_index_init:
 * @index: (out caller-allocates): the element walk of @local (region-index.h)
 * @n_dims: the tensor's dims, 0..RS_MAX_DIMS
 * @shape: (array length=n_dims): its global shape, elements (for global row-major indices)
 * @local: a box of a rank's local buffer
 *
 * Element k of the walk (k < index->n_elems, 0 for an empty box) is the k-th element of
 * @local->box in row-major order: rs_box_index_elem() gives its global row-major index and
 * its local element offset, the same figures rs_pattern_fill_box() and the CUDA fill and
 * check kernels use.
 */
void rs_box_index_init(RsBoxIndex *index, guint n_dims, const gint64 *shape,
                       const RsLocalBox *local);

G_END_DECLS

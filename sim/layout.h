/* layout.h — how one logical tensor is spread over ranks, resolved to explicit boxes.
 *
 * A layout lists the ranks that take part (including ranks whose shard is empty) and, for
 * each, the boxes of global indices it holds and where each box sits in the rank's local
 * buffer. Nothing downstream looks at placements: planner, simulator and executor only see
 * boxes, so every layout the toolkit supports is as exact as its box list.
 *
 * Layouts are immutable once built and shared by reference (rs_layout_ref/unref): the
 * layers of a model with the same shape and placements share one layout.
 */
#pragma once

#include <glib.h>

#include "sim/box.h"
#include "sim/mesh.h"

G_BEGIN_DECLS

#define RS_LAYOUT_ERROR (rs_layout_error_quark())
GQuark rs_layout_error_quark(void);

typedef enum {
    RS_LAYOUT_ERROR_INVALID,     /* placements that do not fit the tensor or the mesh */
    RS_LAYOUT_ERROR_UNSUPPORTED, /* a placement that is legal in DTensor but not for weights */
    RS_LAYOUT_ERROR_OVERFLOW,    /* a shape whose element count does not fit in 63 bits */
} RsLayoutError;

/* One box a rank holds, and where it lives in the rank's local buffer: the element with
 * position (k0, k1, …) in the box (global index lo[d] + k_d·step[d] in each dim d,
 * 0 <= k_d < count[d]) is at local index offset_elems + Σ_d k_d · strides_elems[d]. */
typedef struct {
    RsBox box;
    guint64 offset_elems;
    gint64 strides_elems[RS_MAX_DIMS];
} RsLocalBox;

typedef struct _RsLayout RsLayout;

/**
 * rs_layout_new_dtensor:
 * @n_dims: tensor rank, 0..RS_MAX_DIMS
 * @shape: (array length=n_dims): the global shape in elements, each >= 0
 * @mesh: the device mesh (copied)
 * @placements: (array length=n_placements): one placement per mesh dim
 * @n_placements: must equal the mesh's n_dims
 * @error: RS_LAYOUT_ERROR_INVALID (placement count ≠ mesh dims, Shard dim out of range),
 *   RS_LAYOUT_ERROR_UNSUPPORTED (Partial: a weight is never a pending sum),
 *   RS_LAYOUT_ERROR_OVERFLOW (element count over 2^62)
 *
 * Resolves a PyTorch DTensor layout: for every mesh position, mesh dims are applied left
 * to right; Shard(d) on a mesh dim of size k splits the current extent n of tensor dim d
 * as torch.chunk does: chunk = ceil(n / k), position c takes [c·chunk, min((c+1)·chunk, n)),
 * so trailing shards may be empty (PyTorch _local_shard_size_and_offset,
 * torch/distributed/tensor/_utils.py compute_local_shape_and_global_offset). Several mesh
 * dims may shard one tensor dim; they nest. Each non-empty shard is one box stored
 * row-major at offset 0 of the rank's buffer; an empty shard has no box and a 0-element
 * buffer, so an empty shard never reports an offset. O(n_ranks × n_mesh_dims).
 *
 * Returns: (transfer full): the layout, or NULL on error.
 */
RsLayout *rs_layout_new_dtensor(guint n_dims, const gint64 *shape, const RsMesh *mesh,
                                const RsPlacement *placements, guint n_placements,
                                GError **error);

/**
 * rs_layout_new_replicated:
 * @ranks: (array length=n_ranks): ranks that each hold the whole tensor, no rank twice
 *
 * Same as a 1-D mesh over @ranks with placement R. Returns: (transfer full).
 */
RsLayout *rs_layout_new_replicated(guint n_dims, const gint64 *shape, const guint32 *ranks,
                                   guint n_ranks);

RsLayout *rs_layout_ref(RsLayout *layout);
void rs_layout_unref(RsLayout *layout);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsLayout, rs_layout_unref)

guint rs_layout_get_n_dims(const RsLayout *layout);
/** rs_layout_get_shape: Returns: (transfer none) (array length=n_dims): global shape. */
const gint64 *rs_layout_get_shape(const RsLayout *layout);
/** rs_layout_get_n_elems: Returns: elements of the global tensor. */
guint64 rs_layout_get_n_elems(const RsLayout *layout);

/** rs_layout_get_n_ranks: Returns: how many ranks take part, empty shards included. */
guint rs_layout_get_n_ranks(const RsLayout *layout);
/** rs_layout_get_rank: Returns: the global rank of entry @index (entries sorted by rank). */
guint32 rs_layout_get_rank(const RsLayout *layout, guint index);
/** rs_layout_find_rank: Returns: the entry index of global rank @rank, or -1 when @rank
 * does not take part. O(log n_ranks). */
gint rs_layout_find_rank(const RsLayout *layout, guint32 rank);

/**
 * rs_layout_get_boxes:
 * @index: entry index (see rs_layout_find_rank)
 * @n_boxes_out: (out): number of boxes (0 for an empty shard)
 *
 * Returns: (transfer none) (array length=n_boxes_out): the boxes of that rank, alive as
 * @layout.
 */
const RsLocalBox *rs_layout_get_boxes(const RsLayout *layout, guint index, guint *n_boxes_out);

/** rs_layout_get_local_n_elems: Returns: size of entry @index's local buffer, elements. */
guint64 rs_layout_get_local_n_elems(const RsLayout *layout, guint index);

/**
 * rs_layout_get_mesh:
 * Returns: (transfer none) (nullable): the mesh a DTensor layout was built from.
 */
const RsMesh *rs_layout_get_mesh(const RsLayout *layout);

/**
 * rs_layout_get_placements:
 * @n_out: (out): number of placements
 * Returns: (transfer none) (nullable): the placements of a DTensor layout.
 */
const RsPlacement *rs_layout_get_placements(const RsLayout *layout, guint *n_out);

/**
 * rs_layout_count_held:
 * @rank: a global rank
 * @box: a box of the tensor
 *
 * Returns: how many elements of @box @rank holds (0 when it does not take part).
 */
guint64 rs_layout_count_held(const RsLayout *layout, guint32 rank, const RsBox *box);

/**
 * rs_layout_has_disjoint_shards:
 * Returns: TRUE when any two ranks' boxes are either identical (replicas) or disjoint, as
 * for every DTensor layout; planners then need not refine overlapping boxes.
 */
gboolean rs_layout_has_disjoint_shards(const RsLayout *layout);

/** rs_layout_format: Returns: (transfer full): "mesh [dp=2, tp=4] ranks 0-7, R,S(0)". */
char *rs_layout_format(const RsLayout *layout);

G_END_DECLS

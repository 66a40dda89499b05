/* region.h — a box's elements in a rank's local buffer, and packing them to and from the
 * wire.
 *
 * A region is the memory image of one box (a "piece") that lies inside one RsLocalBox of a
 * rank: the element at position (j0, j1, …) of the piece — global index lo[d] + j_d·step[d]
 * — sits at byte base + Σ_d j_d · strides_bytes[d]. On the wire the piece travels in
 * row-major order of its positions, elements back to back. Packing and unpacking work on
 * any byte range [from, to) of that wire image (so messages can be cut into chunks at any
 * byte, even inside an element), and copy whole rows with memcpy where the local rows are
 * contiguous. Regions only follow RsLocalBox offsets and strides, so fused buffers (several
 * tensors in one local buffer) and interleaved layouts need nothing else.
 */
#pragma once

#include <glib.h>

#include "exec/region-index.h"
#include "exec/transport.h"
#include "layout/layout.h"

G_BEGIN_DECLS

/* RsRegion (region-index.h, shared with the CUDA kernels):
 *   base           the piece's first element
 *   n_dims         after merging, >= 1
 *   counts         elements per dim, row-major
 *   strides_bytes  distance between neighbours per dim, bytes
 *   elem_bytes     1, 2, 4 or 8
 *   n_bytes        wire size: elements × elem_bytes */

/**
 * rs_region_init:
 * @region: (out caller-allocates): the region
 * @buffer: the rank's local buffer (element 0 of the RsLocalBox numbering)
 * @local: the local box @piece lies in
 * @piece: a non-empty box within @local->box (every index of @piece is an index of @local)
 * @elem_bytes: bytes per element
 *
 * Dims of count 1 are dropped and neighbouring dims that are contiguous in memory are
 * merged, so a piece that is one contiguous run of memory becomes a single row. The element
 * of @piece at global index g maps to local element offset_elems + Σ_d ((g_d − lo_d) /
 * step_d) · strides_elems[d] of @local (layout/layout.h).
 */
void rs_region_init(RsRegion *region, guint8 *buffer, const RsLocalBox *local, const RsBox *piece,
                    guint elem_bytes);

/**
 * rs_region_get_contiguous:
 * @from, @to: a byte range of the wire image, 0 <= from < to <= n_bytes
 * @ptr_out: (out): where byte @from lies in memory
 *
 * Returns: TRUE when bytes [@from, @to) of the wire image are also consecutive in memory,
 * so they can be sent from or received into the buffer without packing.
 */
gboolean rs_region_get_contiguous(const RsRegion *region, guint64 from, guint64 to,
                                  guint8 **ptr_out);

/**
 * rs_region_has_long_rows:
 * @min_row_bytes: the shortest run worth handing to a scatter-gather copy
 *
 * Returns: TRUE when the region's elements are adjacent along its last dim and a row (or
 * the whole region, if shorter) holds at least @min_row_bytes bytes.
 */
gboolean rs_region_has_long_rows(const RsRegion *region, gsize min_row_bytes);

/**
 * rs_region_append_runs:
 * @from, @to: a byte range of the wire image, 0 <= from < to <= n_bytes
 * @runs: (element-type RsIovec): gets the memory runs holding those bytes, in wire
 *   order; a run that continues the previous one in memory is merged into it
 *
 * For regions with adjacent elements along the last dim (rs_region_has_long_rows with any
 * minimum), one run per row touched.
 */
void rs_region_append_runs(const RsRegion *region, guint64 from, guint64 to, GArray *runs);

/**
 * rs_region_pack:
 * @from, @to: a byte range of the wire image, 0 <= from <= to <= n_bytes
 * @out: (array length=to-from): receives those wire bytes
 *
 * O(to − from) bytes copied, one memcpy per contiguous run.
 */
void rs_region_pack(const RsRegion *region, guint64 from, guint64 to, guint8 *out);

/** rs_region_unpack: The reverse of rs_region_pack(): writes wire bytes [@from, @to) from @in. */
void rs_region_unpack(const RsRegion *region, guint64 from, guint64 to, const guint8 *in);

/**
 * rs_region_copy:
 * @dst, @src: regions of pieces with the same counts (in element positions) and elem_bytes
 *
 * Copies every element of @src to the same position of @dst (a local copy), row by row.
 */
void rs_region_copy(const RsRegion *dst, const RsRegion *src);

G_END_DECLS

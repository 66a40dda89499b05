/* device-private.h — what the executor asks of a transport whose ranks keep their buffers
 * in device memory (cuda-local, nccl): allocation, the pattern, pack, unpack and local copies
 * as kernels on the rank's stream, and the validation of destination boxes by kernels.
 *
 * Every operation is queued on the rank's one stream, in the order the executor issues it,
 * so a pack queued before a send, an unpack queued after a receive completed and a relay's
 * pack queued after that unpack need no further synchronisation; sync() waits for the
 * stream. Pointers are device pointers of the rank's GPU; RsRegion and RsBoxIndex hold only
 * arithmetic on them (region-index.h), never dereferenced on the host. Each call returns
 * FALSE with a GError naming the CUDA call and the rank when the runtime reports an error.
 */
#pragma once

#include <glib.h>

#include "exec/region-index.h"
#include "exec/transport.h"

G_BEGIN_DECLS

typedef struct {
    /* @size_bytes of device memory, zeroed (the stream is synchronised before return). */
    gboolean (*alloc)(RsEndpoint *ep, gsize size_bytes, guint8 **ptr_out, GError **error);
    /* Frees memory from alloc after the stream drained; NULL is ignored. */
    void (*free)(RsEndpoint *ep, guint8 *ptr);
    gboolean (*zero)(RsEndpoint *ep, guint8 *ptr, gsize size_bytes, GError **error);
    /* Writes the pattern value of every element of @box into @buffer (pattern.h). */
    gboolean (*fill_box)(RsEndpoint *ep, guint64 seed, const RsBoxIndex *box, guint elem_bytes,
                         guint8 *buffer, GError **error);
    /* Compares every element of @box with its pattern value; waits for the result.
     * *n_bad_out: elements that differ; *first_out: the lowest k (row-major in the box)
     * among them; @got_out: its bytes (elem_bytes of them). */
    gboolean (*check_box)(RsEndpoint *ep, guint64 seed, const RsBoxIndex *box,
                          guint elem_bytes, const guint8 *buffer, guint64 *n_bad_out,
                          guint64 *first_out, guint8 *got_out, GError **error);
    /* Counts the elements of @buffer (n_elems of elem_bytes) outside every box of @boxes
     * that are not zero; *first_out: the lowest such local element; @got_out its bytes. */
    gboolean (*check_padding)(RsEndpoint *ep, const RsBoxIndex *boxes, guint n_boxes,
                              guint elem_bytes, const guint8 *buffer, guint64 n_elems,
                              guint64 *n_bad_out, guint64 *first_out, guint8 *got_out,
                              GError **error);
    /* Packs (@pack) wire bytes [@from, @to) of @region into @wire, or unpacks them. */
    gboolean (*move)(RsEndpoint *ep, const RsRegion *region, guint64 from, guint64 to,
                     guint8 *wire, gboolean pack, GError **error);
    /* Copies every element of @src to the same position of @dst (rs_region_copy). */
    gboolean (*copy)(RsEndpoint *ep, const RsRegion *dst, const RsRegion *src, GError **error);
    /* Flips the bits of one byte (the executor's --corrupt-byte test option). */
    gboolean (*flip_byte)(RsEndpoint *ep, guint8 *ptr, GError **error);
    /* Waits until every operation queued on the rank's stream has finished. */
    gboolean (*sync)(RsEndpoint *ep, GError **error);
} RsDeviceOps;

G_END_DECLS

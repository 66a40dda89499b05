/* cuda-device.c — the executor's device operations (device-private.h) on one rank's GPU:
 * memory, the pattern, pack and unpack, local copies and the checks, as kernels of
 * cuda-kernels.cu queued on the rank's stream.
 *
 * Checks read back two words (the count of bad elements and the first of them) and, when
 * there is one, the bytes of that element, so the report names it as the host executor
 * does; nothing else crosses to the host. */
#include "exec/cuda-private.h"

#include "exec/cuda-kernels.h"

#include <string.h>

static RsCudaRank *
rank_of(RsEndpoint *ep)
{
    return ep->device_ctx;
}

static gboolean
launched(int rc, const char *kernel, RsCudaRank *cr, GError **error)
{
    return rs_cuda_check((cudaError_t)rc, kernel, cr->rank, error);
}

static gboolean
dev_alloc(RsEndpoint *ep, gsize size_bytes, guint8 **ptr_out, GError **error)
{
    RsCudaRank *cr = rank_of(ep);
    *ptr_out = NULL;
    if (size_bytes == 0)
        size_bytes = 1;
    void *p = NULL;
    if (!rs_cuda_check(cudaMalloc(&p, size_bytes), "cudaMalloc", cr->rank, error))
        return FALSE;
    if (!rs_cuda_check(cudaMemsetAsync(p, 0, size_bytes, cr->stream), "cudaMemsetAsync",
                       cr->rank, error)) {
        (void)cudaFree(p);
        return FALSE;
    }
    *ptr_out = p;
    return TRUE;
}

static void
dev_free(RsEndpoint *ep, guint8 *ptr)
{
    if (ptr == NULL)
        return;
    /* cudaFree waits for the device; the stream's work on @ptr is done by then. */
    (void)cudaStreamSynchronize(rank_of(ep)->stream);
    (void)cudaFree(ptr);
}

static gboolean
dev_zero(RsEndpoint *ep, guint8 *ptr, gsize size_bytes, GError **error)
{
    RsCudaRank *cr = rank_of(ep);
    return rs_cuda_check(cudaMemsetAsync(ptr, 0, size_bytes, cr->stream), "cudaMemsetAsync",
                         cr->rank, error);
}

static gboolean
dev_fill_box(RsEndpoint *ep, guint64 seed, const RsBoxIndex *box, guint elem_bytes,
             guint8 *buffer, GError **error)
{
    RsCudaRank *cr = rank_of(ep);
    return launched(rs_cuda_launch_fill(box, seed, elem_bytes, buffer, cr->stream),
                    "the pattern fill kernel", cr, error);
}

/* Sets the scratch words to (0, UINT64_MAX) on the stream. */
static gboolean
scratch_reset(RsCudaRank *cr, GError **error)
{
    cr->host[0] = 0;
    cr->host[1] = G_MAXUINT64;
    return rs_cuda_check(cudaMemcpyAsync(cr->scratch, cr->host, 2 * sizeof *cr->host,
                                         cudaMemcpyHostToDevice, cr->stream),
                         "cudaMemcpyAsync", cr->rank, error);
}

/* Reads the scratch words back into host[2], host[3] and waits for them. */
static gboolean
scratch_read(RsCudaRank *cr, GError **error)
{
    return rs_cuda_check(cudaMemcpyAsync(cr->host + 2, cr->scratch, 2 * sizeof *cr->host,
                                         cudaMemcpyDeviceToHost, cr->stream),
                         "cudaMemcpyAsync", cr->rank, error) &&
           rs_cuda_rank_sync(cr, error);
}

/* Copies @n bytes at device address @src to the host. */
static gboolean
read_bytes(RsCudaRank *cr, const guint8 *src, guint8 *out, guint n, GError **error)
{
    return rs_cuda_check(cudaMemcpyAsync(cr->host, src, n, cudaMemcpyDeviceToHost, cr->stream),
                         "cudaMemcpyAsync", cr->rank, error) &&
           rs_cuda_rank_sync(cr, error) && (memcpy(out, cr->host, n), TRUE);
}

static gboolean
dev_check_box(RsEndpoint *ep, guint64 seed, const RsBoxIndex *box, guint elem_bytes,
              const guint8 *buffer, guint64 *n_bad_out, guint64 *first_out, guint8 *got_out,
              GError **error)
{
    RsCudaRank *cr = rank_of(ep);
    *n_bad_out = 0;
    *first_out = 0;
    if (!scratch_reset(cr, error) ||
        !launched(rs_cuda_launch_check(box, seed, elem_bytes, buffer, cr->scratch, cr->stream),
                  "the pattern check kernel", cr, error) ||
        !scratch_read(cr, error))
        return FALSE;
    *n_bad_out = cr->host[2];
    if (*n_bad_out == 0)
        return TRUE;
    *first_out = cr->host[3];
    guint64 g, local;
    rs_box_index_elem(box, *first_out, &g, &local);
    return read_bytes(cr, buffer + local * elem_bytes, got_out, elem_bytes, error);
}

static gboolean
dev_check_padding(RsEndpoint *ep, const RsBoxIndex *boxes, guint n_boxes, guint elem_bytes,
                  const guint8 *buffer, guint64 n_elems, guint64 *n_bad_out, guint64 *first_out,
                  guint8 *got_out, GError **error)
{
    RsCudaRank *cr = rank_of(ep);
    *n_bad_out = 0;
    *first_out = 0;
    guint8 *covered = NULL;
    if (!dev_alloc(ep, n_elems, &covered, error))
        return FALSE;
    gboolean ok = TRUE;
    for (guint b = 0; ok && b < n_boxes; b++)
        ok = launched(rs_cuda_launch_mark(&boxes[b], covered, cr->stream),
                      "the padding mark kernel", cr, error);
    ok = ok && scratch_reset(cr, error) &&
         launched(rs_cuda_launch_check_zero(buffer, covered, n_elems, elem_bytes, cr->scratch,
                                            cr->stream),
                  "the padding check kernel", cr, error) &&
         scratch_read(cr, error);
    dev_free(ep, covered);
    if (!ok)
        return FALSE;
    *n_bad_out = cr->host[2];
    if (*n_bad_out == 0)
        return TRUE;
    *first_out = cr->host[3];
    return read_bytes(cr, buffer + *first_out * elem_bytes, got_out, elem_bytes, error);
}

static gboolean
dev_move(RsEndpoint *ep, const RsRegion *region, guint64 from, guint64 to, guint8 *wire,
         gboolean pack, GError **error)
{
    RsCudaRank *cr = rank_of(ep);
    return launched(rs_cuda_launch_move(region, from, to, wire, pack, cr->stream),
                    pack ? "the pack kernel" : "the unpack kernel", cr, error);
}

static gboolean
dev_copy(RsEndpoint *ep, const RsRegion *dst, const RsRegion *src, GError **error)
{
    RsCudaRank *cr = rank_of(ep);
    return launched(rs_cuda_launch_copy(dst, src, cr->stream), "the local copy kernel", cr,
                    error);
}

static gboolean
dev_flip_byte(RsEndpoint *ep, guint8 *ptr, GError **error)
{
    RsCudaRank *cr = rank_of(ep);
    return launched(rs_cuda_launch_xor_byte(ptr, cr->stream), "the corrupt-byte kernel", cr,
                    error);
}

static gboolean
dev_sync(RsEndpoint *ep, GError **error)
{
    return rs_cuda_rank_sync(rank_of(ep), error);
}

const RsDeviceOps rs_cuda_device_ops = {
    .alloc = dev_alloc,
    .free = dev_free,
    .zero = dev_zero,
    .fill_box = dev_fill_box,
    .check_box = dev_check_box,
    .check_padding = dev_check_padding,
    .move = dev_move,
    .copy = dev_copy,
    .flip_byte = dev_flip_byte,
    .sync = dev_sync,
};

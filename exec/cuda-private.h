/* cuda-private.h — what the CUDA files of exec/ share: CUDA and NCCL codes as GErrors, the
 * per-rank device state (device, stream, scratch words), the waits that honour --timeout
 * and an abort of the world, and the device operations of device-private.h.
 *
 * Only files Meson compiles when it found CUDA include this header (cuda_runtime_api.h is
 * the runtime's C interface). */
#pragma once

#include <cuda_runtime_api.h>
#include <glib.h>

#include "exec/device-private.h"
#include "exec/transport-private.h"

G_BEGIN_DECLS

/**
 * rs_cuda_check:
 * @rc: what the call returned
 * @call: the call, as the user should read it ("cudaMemcpyAsync")
 * @rank: the rank that made it, for the message
 * @error: set unless @rc is cudaSuccess: RS_TRANSPORT_ERROR_FAILED, "rank 3: cudaMalloc:
 *   out of memory (cudaErrorMemoryAllocation)"
 *
 * Returns: TRUE when @rc is cudaSuccess. A plain function, not a macro: the caller returns.
 */
gboolean rs_cuda_check(cudaError_t rc, const char *call, guint32 rank, GError **error);

/**
 * rs_cuda_get_device_count:
 * @error: RS_TRANSPORT_ERROR_FAILED "no CUDA device was found (cudaGetDeviceCount: …)"
 *   when the runtime reports none or cannot start (no driver)
 *
 * Returns: the number of visible CUDA devices (>= 1), or 0 with @error.
 */
int rs_cuda_get_device_count(GError **error);

/* A test of the world a rank belongs to, run while it waits: FALSE with @error ends the
 * wait (an NCCL asynchronous error). */
typedef gboolean (*RsCudaPollFunc)(gpointer data, GError **error);

/* The device state of one rank. */
typedef struct {
    guint32 rank;
    int device;
    cudaStream_t stream;          /* every operation of the rank, in order */
    unsigned long long *scratch;  /* device: 2 words for the checks */
    unsigned long long *host;     /* pinned: 4 words (initial values, read back) */
    const gint *aborted;          /* (nullable): non-zero once another rank failed */
    double timeout_s;             /* > 0: a wait without progress fails after this long */
    RsCudaPollFunc poll;          /* (nullable) */
    gpointer poll_data;
} RsCudaRank;

/**
 * rs_cuda_rank_init:
 * @cr: (out caller-allocates): the state
 * @device: the CUDA device, made current for the calling thread
 *
 * Creates the rank's non-blocking stream and scratch memory. Returns: TRUE, or FALSE with
 * @error naming the call.
 */
gboolean rs_cuda_rank_init(RsCudaRank *cr, guint32 rank, int device, const gint *aborted,
                           double timeout_s, GError **error);

/** rs_cuda_rank_clear: Waits for the stream and frees what rs_cuda_rank_init() made. */
void rs_cuda_rank_clear(RsCudaRank *cr);

/**
 * rs_cuda_rank_wait_event:
 * @event: recorded on a stream
 *
 * Polls @event (cudaEventQuery) until it completed. Fails with RS_TRANSPORT_ERROR_ABORTED
 * when the world was aborted, RS_TRANSPORT_ERROR_TIMEOUT ("rank 2: the GPU did not finish
 * within 30 s") after timeout_s, the poll function's error, or a CUDA error.
 */
gboolean rs_cuda_rank_wait_event(RsCudaRank *cr, cudaEvent_t event, GError **error);

/** rs_cuda_rank_sync: rs_cuda_rank_wait_event() for everything queued on the stream. */
gboolean rs_cuda_rank_sync(RsCudaRank *cr, GError **error);

/**
 * rs_cuda_event_is_done:
 * @done_out: (out): TRUE when @event completed
 *
 * Returns: FALSE with @error when the query reports an error other than "not ready".
 */
gboolean rs_cuda_event_is_done(cudaEvent_t event, guint32 rank, gboolean *done_out,
                               GError **error);

/**
 * rs_cuda_measure_copy_bytes_per_s:
 * @device: the CUDA device
 * @size_bytes: bytes per copy, >= 1 (two buffers of this size are allocated)
 * @n_runs: copies timed with CUDA events after one untimed copy; the median is taken
 *
 * The reference of the pack and unpack kernels and of calibration on a GPU: cudaMemcpyAsync
 * device to device on one stream. Returns: bytes per second (each byte read once and
 * written once), or 0 when a CUDA call failed (@error says which).
 */
double rs_cuda_measure_copy_bytes_per_s(int device, guint64 size_bytes, guint n_runs,
                                        GError **error);

/* measure_copy of both CUDA transport classes: rs_cuda_measure_copy_bytes_per_s on GPU 0. */
double rs_cuda_transport_measure_copy(RsTransport *transport, guint64 size_bytes, guint n_runs);

/* The device operations on the RsCudaRank in RsEndpoint.device_ctx. */
extern const RsDeviceOps rs_cuda_device_ops;

G_END_DECLS

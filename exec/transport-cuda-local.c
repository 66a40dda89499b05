/* transport-cuda-local.c — several logical ranks in one process on the GPUs it has (even
 * one), messages moved by device-to-device or peer copies.
 *
 * Ranks are the threads of an inner `host` transport (transport-host.c), rank r on device
 * r mod (number of devices), each with its own non-blocking stream; the host transport
 * also carries the bookkeeping collectives (barrier, gather, broadcast). A send does not
 * move bytes itself: it records an event on the sender's stream (after the pack queued
 * before it) and sends an 8-byte descriptor — a pointer to a shared Xfer naming the device
 * buffer, its size and that event — through the host transport, which matches it to the
 * receive in posting order and checks the tag. The receiver then makes its stream wait for
 * the sender's event, queues the copy (cudaMemcpyAsync within a device, cudaMemcpyPeerAsync
 * between devices, over NVLink where the GPUs have it) and records a second event; both
 * requests are done when that event completed. So a rank's stream holds, in order, its
 * packs, the copies into it, and its unpacks, and no host thread touches the bytes. A
 * receive's completion time is its copy's CUDA event, put on the host clock through an event
 * recorded when the rank left its last barrier, so the trace's message ends are device
 * times, not the moment a polling thread noticed them.
 */
#include "exec/cuda-private.h"

#include <string.h>

typedef struct {
    RsTransport base;
    RsTransport *inner; /* host: threads, matching, collectives */
    int n_devices;
    gint aborted;       /* set when a rank failed */
} CudaLocalTransport;

typedef struct {
    RsEndpoint base;
    RsEndpoint *inner;
    CudaLocalTransport *t;
    RsCudaRank cuda;
    GPtrArray *active; /* LocalOp */
    cudaEvent_t ref_event; /* recorded when the rank left its last barrier */
    double ref_host_s;     /* the host clock then */
} CudaLocalEndpoint;

/* One matched message, shared by its two ends; the last one to let go frees it. */
typedef struct {
    gint refs;
    const guint8 *src;
    int src_device;
    guint32 src_rank;
    gsize size_bytes;
    cudaEvent_t ready;   /* on the sender's stream, after its pack */
    cudaEvent_t copied;  /* on the receiver's stream, after the copy; published by it */
    gint copied_set;     /* atomic: copied was recorded */
} Xfer;

typedef struct {
    RsTransportRequest *req;
    gboolean is_send;
    RsTransportRequest inner_req;
    Xfer *xfer;        /* the sender's own; the receiver's once the descriptor arrived */
    guint8 *dst;
    gsize size_bytes;
    gboolean copy_queued;
} LocalOp;

static void
xfer_unref(Xfer *x)
{
    if (x == NULL || !g_atomic_int_dec_and_test(&x->refs))
        return;
    if (x->ready != NULL)
        (void)cudaEventDestroy(x->ready);
    if (x->copied != NULL)
        (void)cudaEventDestroy(x->copied);
    g_free(x);
}

static void
local_op_free(gpointer p)
{
    LocalOp *op = p;
    xfer_unref(op->xfer);
    g_free(op);
}

static CudaLocalEndpoint *
self_of(RsEndpoint *ep)
{
    return (CudaLocalEndpoint *)ep;
}

static RsTransport *
cuda_local_open(const RsTransportConfig *config, GError **error)
{
    int n_devices = rs_cuda_get_device_count(error);
    if (n_devices == 0)
        return NULL;
    /* Peer access between every pair that supports it: copies between the ranks' GPUs
     * then go over NVLink or PCIe peer-to-peer instead of through host memory. */
    for (int a = 0; a < n_devices; a++) {
        for (int b = 0; b < n_devices; b++) {
            int can = 0;
            if (a == b || cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can)
                continue;
            if (!rs_cuda_check(cudaSetDevice(a), "cudaSetDevice", 0, error))
                return NULL;
            cudaError_t rc = cudaDeviceEnablePeerAccess(b, 0);
            if (rc == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();
            else if (!rs_cuda_check(rc, "cudaDeviceEnablePeerAccess", 0, error))
                return NULL;
        }
    }
    RsTransport *inner = rs_transport_open("host", config, error);
    if (inner == NULL)
        return NULL;
    CudaLocalTransport *t = g_new0(CudaLocalTransport, 1);
    t->inner = inner;
    t->n_devices = n_devices;
    t->base.world_size = 0;
    t->base.is_root = TRUE;
    return &t->base;
}

static void
cuda_local_close(RsTransport *transport)
{
    CudaLocalTransport *t = (CudaLocalTransport *)transport;
    rs_transport_close(t->inner);
    g_free(t);
}

typedef struct {
    CudaLocalTransport *t;
    RsRankFunc fn;
    gpointer user_data;
} LaunchData;

static gboolean
rank_main(RsEndpoint *inner, gpointer data, GError **error)
{
    LaunchData *ld = data;
    CudaLocalTransport *t = ld->t;
    CudaLocalEndpoint ep = {0};
    ep.base.transport = &t->base;
    ep.base.rank = rs_endpoint_get_rank(inner);
    ep.base.n_ranks = rs_endpoint_get_n_ranks(inner);
    ep.base.device = &rs_cuda_device_ops;
    ep.base.device_ctx = &ep.cuda;
    ep.inner = inner;
    ep.t = t;
    int device = (int)(ep.base.rank % (guint)t->n_devices);
    if (!rs_cuda_rank_init(&ep.cuda, ep.base.rank, device, &t->aborted, t->base.config.timeout_s,
                           error)) {
        g_atomic_int_set(&t->aborted, 1);
        return FALSE;
    }
    ep.active = g_ptr_array_new_with_free_func(local_op_free);
    gboolean ok = ld->fn(&ep.base, ld->user_data, error);
    if (!ok)
        g_atomic_int_set(&t->aborted, 1);
    /* Operations still active after a failure: wait for the stream before their events
     * and buffers go. */
    (void)cudaStreamSynchronize(ep.cuda.stream);
    g_ptr_array_unref(ep.active);
    if (ep.ref_event != NULL)
        (void)cudaEventDestroy(ep.ref_event);
    rs_cuda_rank_clear(&ep.cuda);
    return ok;
}

static gboolean
cuda_local_launch(RsTransport *transport, guint n_ranks, RsRankFunc fn, gpointer user_data,
                  GError **error)
{
    CudaLocalTransport *t = (CudaLocalTransport *)transport;
    g_atomic_int_set(&t->aborted, 0);
    t->inner->config.timeout_s = transport->config.timeout_s;
    LaunchData ld = {t, fn, user_data};
    return rs_transport_launch(t->inner, n_ranks, rank_main, &ld, error);
}

static gboolean
cuda_local_isend(RsEndpoint *base, guint32 peer, guint32 tag, const void *buf, gsize size,
                 RsTransportRequest *req, GError **error)
{
    CudaLocalEndpoint *self = self_of(base);
    guint32 rank = base->rank;
    Xfer *x = g_new0(Xfer, 1);
    x->refs = 2; /* the sender's op and the receiver's */
    x->src = buf;
    x->src_device = self->cuda.device;
    x->src_rank = rank;
    x->size_bytes = size;
    if (!rs_cuda_check(cudaEventCreateWithFlags(&x->ready, cudaEventDisableTiming),
                       "cudaEventCreateWithFlags", rank, error) ||
        !rs_cuda_check(cudaEventRecord(x->ready, self->cuda.stream), "cudaEventRecord", rank,
                       error)) {
        x->refs = 1;
        xfer_unref(x);
        return FALSE;
    }
    LocalOp *op = g_new0(LocalOp, 1);
    op->req = req;
    op->is_send = TRUE;
    op->xfer = x;
    op->size_bytes = size;
    req->priv[0] = op;
    /* The descriptor is the pointer itself: 8 bytes, copied eagerly by the host transport.
     * If the receiver never takes it, the receiver's reference is dropped with the world. */
    if (!rs_endpoint_isend(self->inner, peer, tag, &op->xfer, sizeof op->xfer, &op->inner_req,
                           error)) {
        x->refs = 1;
        local_op_free(op);
        return FALSE;
    }
    g_ptr_array_add(self->active, op);
    return TRUE;
}

static gboolean
cuda_local_irecv(RsEndpoint *base, guint32 peer, guint32 tag, void *buf, gsize size,
                 RsTransportRequest *req, GError **error)
{
    CudaLocalEndpoint *self = self_of(base);
    LocalOp *op = g_new0(LocalOp, 1);
    op->req = req;
    op->dst = buf;
    op->size_bytes = size;
    req->priv[0] = op;
    if (!rs_endpoint_irecv(self->inner, peer, tag, &op->xfer, sizeof op->xfer, &op->inner_req,
                           error)) {
        g_free(op);
        return FALSE;
    }
    g_ptr_array_add(self->active, op);
    return TRUE;
}

/* The descriptor of receive @op arrived: queue the copy on this rank's stream. */
static gboolean
queue_copy(CudaLocalEndpoint *self, LocalOp *op, GError **error)
{
    Xfer *x = op->xfer;
    guint32 rank = self->base.rank;
    if (x->size_bytes != op->size_bytes) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_MISMATCH,
                    "rank %u: the message from rank %u (tag %u) has %" G_GSIZE_FORMAT
                    " bytes, the receive expects %" G_GSIZE_FORMAT,
                    rank, x->src_rank, op->req->tag, x->size_bytes, op->size_bytes);
        return FALSE;
    }
    cudaStream_t s = self->cuda.stream;
    if (!rs_cuda_check(cudaStreamWaitEvent(s, x->ready, 0), "cudaStreamWaitEvent", rank, error))
        return FALSE;
    if (op->size_bytes > 0) {
        cudaError_t rc =
            x->src_device == self->cuda.device
                ? cudaMemcpyAsync(op->dst, x->src, op->size_bytes, cudaMemcpyDeviceToDevice, s)
                : cudaMemcpyPeerAsync(op->dst, self->cuda.device, x->src, x->src_device,
                                      op->size_bytes, s);
        if (!rs_cuda_check(rc, x->src_device == self->cuda.device ? "cudaMemcpyAsync"
                                                                  : "cudaMemcpyPeerAsync",
                           rank, error))
            return FALSE;
    }
    /* A timing event: the receive's completion time is read from it (cuda_local_barrier). */
    if (!rs_cuda_check(cudaEventCreate(&x->copied), "cudaEventCreate", rank, error) ||
        !rs_cuda_check(cudaEventRecord(x->copied, s), "cudaEventRecord", rank, error))
        return FALSE;
    g_atomic_int_set(&x->copied_set, 1);
    op->copy_queued = TRUE;
    return TRUE;
}

/* One pass over the active operations; *n_done_out counts those that completed. */
static gboolean
poll_ops(CudaLocalEndpoint *self, guint *n_done_out, GError **error)
{
    *n_done_out = 0;
    for (guint i = 0; i < self->active->len;) {
        LocalOp *op = g_ptr_array_index(self->active, i);
        gboolean done = FALSE;
        if (!op->is_send && !op->copy_queued) {
            if (g_atomic_int_get(&op->inner_req.done) && !queue_copy(self, op, error))
                return FALSE;
        }
        Xfer *x = op->xfer;
        gboolean ready = op->is_send ? g_atomic_int_get(&op->inner_req.done) &&
                                           g_atomic_int_get(&x->copied_set)
                                     : op->copy_queued;
        if (ready && !rs_cuda_event_is_done(x->copied, self->base.rank, &done, error))
            return FALSE;
        if (!done) {
            i++;
            continue;
        }
        float ms = 0;
        if (!op->is_send && self->ref_host_s > 0 &&
            cudaEventElapsedTime(&ms, self->ref_event, x->copied) == cudaSuccess)
            op->req->done_s = self->ref_host_s + ms * 1e-3;
        g_atomic_int_set(&op->req->done, 1);
        g_ptr_array_remove_index_fast(self->active, i);
        (*n_done_out)++;
    }
    return TRUE;
}

static gboolean
cuda_local_progress(RsEndpoint *base, double timeout_s, GError **error)
{
    CudaLocalEndpoint *self = self_of(base);
    gint64 start_us = g_get_monotonic_time();
    for (guint pass = 0;; pass++) {
        if (!rs_endpoint_progress(self->inner, -1, error))
            return FALSE;
        guint n_done;
        if (!poll_ops(self, &n_done, error))
            return FALSE;
        if (n_done > 0 || timeout_s < 0)
            return TRUE;
        if (g_atomic_int_get(&self->t->aborted)) {
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_ABORTED,
                        "rank %u: aborted (another rank failed)", base->rank);
            return FALSE;
        }
        gint64 waited_us = g_get_monotonic_time() - start_us;
        if (timeout_s > 0 && waited_us >= timeout_s * 1e6)
            return TRUE;
        /* Spin briefly (copies of a chunk take microseconds), then sleep between polls. */
        if (pass > 64)
            g_usleep(20);
        else
            g_thread_yield();
    }
}

/* The bookkeeping barrier; then a timing event on the rank's stream, waited for, and the
 * host clock at that moment: receives are timed from it by their copy's event. */
static gboolean
cuda_local_barrier(RsEndpoint *base, GError **error)
{
    CudaLocalEndpoint *self = self_of(base);
    if (!rs_endpoint_barrier(self->inner, error))
        return FALSE;
    self->ref_host_s = 0;
    if (self->ref_event == NULL &&
        !rs_cuda_check(cudaEventCreate(&self->ref_event), "cudaEventCreate", base->rank, error))
        return FALSE;
    if (!rs_cuda_check(cudaEventRecord(self->ref_event, self->cuda.stream), "cudaEventRecord",
                       base->rank, error) ||
        !rs_cuda_rank_wait_event(&self->cuda, self->ref_event, error))
        return FALSE;
    self->ref_host_s = rs_transport_clock_s();
    return TRUE;
}

static gboolean
cuda_local_gather(RsEndpoint *base, GBytes *data, GPtrArray **all_out, GError **error)
{
    return rs_endpoint_gather(self_of(base)->inner, data, all_out, error);
}

static gboolean
cuda_local_bcast(RsEndpoint *base, GBytes *data, GBytes **data_out, GError **error)
{
    return rs_endpoint_bcast(self_of(base)->inner, data, data_out, error);
}

const RsTransportClass rs_transport_cuda_local_class = {
    .name = "cuda-local",
    .description = "logical ranks on the GPUs of this process (rank r on GPU r mod GPUs); "
                   "device-to-device and peer copies",
    .available = TRUE,
    .open = cuda_local_open,
    .close = cuda_local_close,
    .abort = NULL,
    .launch = cuda_local_launch,
    .isend = cuda_local_isend,
    .irecv = cuda_local_irecv,
    .progress = cuda_local_progress,
    .barrier = cuda_local_barrier,
    .gather = cuda_local_gather,
    .bcast = cuda_local_bcast,
    .device_buffers = TRUE,
    .measure_copy = rs_cuda_transport_measure_copy,
};

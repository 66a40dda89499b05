/* cuda.c — CUDA codes as GErrors, the per-rank device state, and waits that poll.
 *
 * Waits poll (cudaEventQuery, then a short sleep) instead of blocking in
 * cudaEventSynchronize, so that a rank can see that another rank failed, that NCCL
 * reported an asynchronous error, or that --timeout passed, and give up instead of hanging
 * on a peer that will never answer. The first 200 µs spin (a short kernel ends within
 * that), then the rank sleeps 50 µs between queries. */
#include "exec/cuda-private.h"

#include "base/stats.h"

#include <string.h>

gboolean
rs_cuda_check(cudaError_t rc, const char *call, guint32 rank, GError **error)
{
    if (rc == cudaSuccess)
        return TRUE;
    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED, "rank %u: %s: %s (%s)",
                rank, call, cudaGetErrorString(rc), cudaGetErrorName(rc));
    return FALSE;
}

int
rs_cuda_get_device_count(GError **error)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n <= 0) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                    "no CUDA device was found (cudaGetDeviceCount: %s)",
                    rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
        /* Clear the sticky error, so that a later call starts clean. */
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

gboolean
rs_cuda_rank_init(RsCudaRank *cr, guint32 rank, int device, const gint *aborted,
                  double timeout_s, GError **error)
{
    memset(cr, 0, sizeof *cr);
    cr->rank = rank;
    cr->device = device;
    cr->aborted = aborted;
    cr->timeout_s = timeout_s;
    if (!rs_cuda_check(cudaSetDevice(device), "cudaSetDevice", rank, error) ||
        !rs_cuda_check(cudaStreamCreateWithFlags(&cr->stream, cudaStreamNonBlocking),
                       "cudaStreamCreateWithFlags", rank, error) ||
        !rs_cuda_check(cudaMalloc((void **)&cr->scratch, 2 * sizeof *cr->scratch), "cudaMalloc",
                       rank, error) ||
        !rs_cuda_check(cudaMallocHost((void **)&cr->host, 4 * sizeof *cr->host),
                       "cudaMallocHost", rank, error)) {
        rs_cuda_rank_clear(cr);
        return FALSE;
    }
    return TRUE;
}

void
rs_cuda_rank_clear(RsCudaRank *cr)
{
    if (cr->stream != NULL) {
        (void)cudaStreamSynchronize(cr->stream);
        (void)cudaStreamDestroy(cr->stream);
    }
    if (cr->scratch != NULL)
        (void)cudaFree(cr->scratch);
    if (cr->host != NULL)
        (void)cudaFreeHost(cr->host);
    cr->stream = NULL;
    cr->scratch = NULL;
    cr->host = NULL;
}

gboolean
rs_cuda_event_is_done(cudaEvent_t event, guint32 rank, gboolean *done_out, GError **error)
{
    cudaError_t rc = cudaEventQuery(event);
    *done_out = rc == cudaSuccess;
    if (rc == cudaErrorNotReady)
        return TRUE;
    return rs_cuda_check(rc, "cudaEventQuery", rank, error);
}

gboolean
rs_cuda_rank_wait_event(RsCudaRank *cr, cudaEvent_t event, GError **error)
{
    gint64 start_us = g_get_monotonic_time();
    for (;;) {
        gboolean done;
        if (!rs_cuda_event_is_done(event, cr->rank, &done, error))
            return FALSE;
        if (done)
            return TRUE;
        if (cr->poll != NULL && !cr->poll(cr->poll_data, error))
            return FALSE;
        if (cr->aborted != NULL && g_atomic_int_get(cr->aborted)) {
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_ABORTED,
                        "rank %u: aborted (another rank failed)", cr->rank);
            return FALSE;
        }
        gint64 waited_us = g_get_monotonic_time() - start_us;
        if (cr->timeout_s > 0 && waited_us > cr->timeout_s * 1e6) {
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_TIMEOUT,
                        "rank %u: the GPU (device %d) did not finish its queued work within "
                        "%g s",
                        cr->rank, cr->device, cr->timeout_s);
            return FALSE;
        }
        if (waited_us > 200)
            g_usleep(50);
    }
}

gboolean
rs_cuda_rank_sync(RsCudaRank *cr, GError **error)
{
    cudaEvent_t event;
    if (!rs_cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                       "cudaEventCreateWithFlags", cr->rank, error))
        return FALSE;
    gboolean ok = rs_cuda_check(cudaEventRecord(event, cr->stream), "cudaEventRecord", cr->rank,
                                error) &&
                  rs_cuda_rank_wait_event(cr, event, error);
    (void)cudaEventDestroy(event);
    return ok;
}

double
rs_cuda_measure_copy_bytes_per_s(int device, guint64 size_bytes, guint n_runs, GError **error)
{
    RsCudaRank cr;
    if (!rs_cuda_rank_init(&cr, 0, device, NULL, 0, error))
        return 0;
    n_runs = MAX(n_runs, 1);
    void *a = NULL, *b = NULL;
    cudaEvent_t start = NULL, end = NULL;
    g_autofree double *t = g_new0(double, n_runs);
    gboolean ok = rs_cuda_check(cudaMalloc(&a, size_bytes), "cudaMalloc", 0, error) &&
                  rs_cuda_check(cudaMalloc(&b, size_bytes), "cudaMalloc", 0, error) &&
                  rs_cuda_check(cudaEventCreate(&start), "cudaEventCreate", 0, error) &&
                  rs_cuda_check(cudaEventCreate(&end), "cudaEventCreate", 0, error) &&
                  rs_cuda_check(cudaMemsetAsync(a, 1, size_bytes, cr.stream), "cudaMemsetAsync",
                                0, error) &&
                  rs_cuda_check(cudaMemcpyAsync(b, a, size_bytes, cudaMemcpyDeviceToDevice,
                                                cr.stream),
                                "cudaMemcpyAsync", 0, error);
    for (guint i = 0; ok && i < n_runs; i++) {
        float ms = 0;
        ok = rs_cuda_check(cudaEventRecord(start, cr.stream), "cudaEventRecord", 0, error) &&
             rs_cuda_check(cudaMemcpyAsync(b, a, size_bytes, cudaMemcpyDeviceToDevice,
                                           cr.stream),
                           "cudaMemcpyAsync", 0, error) &&
             rs_cuda_check(cudaEventRecord(end, cr.stream), "cudaEventRecord", 0, error) &&
             rs_cuda_rank_wait_event(&cr, end, error) &&
             rs_cuda_check(cudaEventElapsedTime(&ms, start, end), "cudaEventElapsedTime", 0,
                           error);
        t[i] = ms * 1e-3;
    }
    double median = ok ? rs_stats_median(t, n_runs) : 0;
    if (start != NULL)
        (void)cudaEventDestroy(start);
    if (end != NULL)
        (void)cudaEventDestroy(end);
    if (a != NULL)
        (void)cudaFree(a);
    if (b != NULL)
        (void)cudaFree(b);
    rs_cuda_rank_clear(&cr);
    return median > 0 ? (double)size_bytes / median : 0;
}

double
rs_cuda_transport_measure_copy(RsTransport *transport, guint64 size_bytes, guint n_runs)
{
    g_autoptr(GError) error = NULL;
    double bw = rs_cuda_measure_copy_bytes_per_s(0, size_bytes, n_runs, &error);
    if (error != NULL)
        g_warning("device memcpy reference: %s", error->message);
    return bw;
}

/* transport-nccl.c — the executor's ranks on GPUs, bytes moved by NCCL point-to-point.
 *
 * Two ways to start, chosen by how the process was launched:
 *   - under mpirun (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK set): one process per GPU.
 *     An inner `mpi` transport gives the world, rank 0 creates the NCCL unique id and
 *     broadcasts it through MPI, every process picks its GPU by its local rank and calls
 *     ncclCommInitRank; MPI also carries the bookkeeping collectives and ends the job on a
 *     failure (rs_transport_abort: the process exits, mpirun ends the others);
 *   - otherwise: one process drives every local GPU. ncclCommInitAll makes one
 *     communicator per rank (rank r on GPU r), and an inner `host` transport runs a thread
 *     per GPU and carries the bookkeeping collectives.
 *
 * Sends and receives are queued when posted and handed to NCCL at the next progress call as
 * one ncclGroupStart … ncclGroupEnd of ncclSend/ncclRecv on the rank's stream: the
 * executor posts its window of chunk operations (in the plan's rounds and global key order,
 * schedule.h) and then progresses, so each group holds what the rank posted since its last
 * progress call (at most its window): groups follow progress calls, not the plan's rounds
 * (sim/gpu-cost.c's round queue takes one group per round, an approximation). Groups on a
 * stream run one after another and each group holds a contiguous run of the rank's keys, so
 * the operation with the smallest unfinished key always sits in a running group at both
 * ends and completes: no deadlock for any window. A CUDA event recorded after each group
 * times it on the device (against an event recorded when the rank left its last barrier,
 * which puts it on the host clock: RsTransportRequest.done_s); the requests of a group are
 * done when its event completed (cudaEventQuery, polled).
 *
 * NCCL connects peers lazily, inside the first group that names them, and a rank blocked
 * there could hold up peers that wait for it; so launch first runs one group in which every
 * rank sends one byte to and receives one byte from every other rank, which sets up all
 * connections at once, before the executor's runs.
 *
 * NCCL matches sends and receives between two ranks in posting order, by count only: tags
 * are not carried (both ends derive them from the plan). Faults: NCCL and CUDA codes become
 * GErrors naming the call and the rank; ncclCommGetAsyncError is polled while waiting; a
 * rank that fails (a --timeout of the executor, an NCCL error) sets the world's abort flag
 * and aborts its communicator (ncclCommAbort); the other ranks see the flag while they
 * wait, abort theirs and end with RS_TRANSPORT_ERROR_ABORTED; under mpirun the command then
 * ends the job through rs_transport_abort (the process exits; mpirun ends the others).
 */
#include "exec/cuda-private.h"

#include <nccl.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    RsTransport base;
    RsTransport *inner;       /* mpi (one rank here) or host (every rank here) */
    gboolean multi_process;
    int n_devices;
    ncclComm_t *comms;        /* single process: per rank, ncclCommInitAll */
    ncclComm_t own_comm;      /* multi-process: this process's, for abort */
    gint aborted;
} NcclTransport;

typedef struct {
    gboolean is_send;
    guint32 peer;
    void *buf;
    gsize size_bytes;
    RsTransportRequest *req;
} Pending;

typedef struct {
    cudaEvent_t end;  /* after the group's kernels on the rank's stream */
    GPtrArray *reqs;  /* RsTransportRequest, borrowed */
} Group;

typedef struct {
    RsEndpoint base;
    RsEndpoint *inner;
    NcclTransport *t;
    RsCudaRank cuda;
    ncclComm_t comm;
    gboolean comm_aborted;
    GArray *queued;   /* Pending: posted, not yet handed to NCCL */
    GQueue groups;    /* Group, in launch order */
    cudaEvent_t ref_event; /* recorded when the rank left its last barrier */
    double ref_host_s;     /* the host clock then (the event had completed) */
} NcclEndpoint;

static gboolean
nccl_check(ncclResult_t rc, const char *call, guint32 rank, ncclComm_t comm, GError **error)
{
    if (rc == ncclSuccess)
        return TRUE;
    const char *detail = comm != NULL ? ncclGetLastError(comm) : NULL;
    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED, "rank %u: %s: %s%s%s", rank,
                call, ncclGetErrorString(rc), detail && *detail ? ": " : "",
                detail && *detail ? detail : "");
    return FALSE;
}

static NcclEndpoint *
self_of(RsEndpoint *ep)
{
    return (NcclEndpoint *)ep;
}

static gboolean
launched_by_mpirun(void)
{
    return g_getenv("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv("PMI_SIZE") != NULL ||
           g_getenv("PMIX_RANK") != NULL;
}

/* The GPU of this process under mpirun: its rank among the processes of its node. */
static int
local_rank(guint32 rank)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                       "SLURM_LOCALID", "LOCAL_RANK"};
    for (guint i = 0; i < G_N_ELEMENTS(vars); i++) {
        const char *v = g_getenv(vars[i]);
        if (v != NULL && *v != '\0')
            return atoi(v);
    }
    return (int)rank;
}

static RsTransport *
nccl_open(const RsTransportConfig *config, GError **error)
{
    int n_devices = rs_cuda_get_device_count(error);
    if (n_devices == 0)
        return NULL;
    gboolean multi = launched_by_mpirun();
    RsTransport *inner = rs_transport_open(multi ? "mpi" : "host", config, error);
    if (inner == NULL) {
        g_prefix_error(error, "nccl transport: %s", multi ? "bootstrap through MPI: " : "");
        return NULL;
    }
    NcclTransport *t = g_new0(NcclTransport, 1);
    t->inner = inner;
    t->multi_process = multi;
    t->n_devices = n_devices;
    t->base.world_size = rs_transport_get_world_size(inner);
    t->base.is_root = rs_transport_is_root(inner);
    return &t->base;
}

static void
nccl_close(RsTransport *transport)
{
    NcclTransport *t = (NcclTransport *)transport;
    rs_transport_close(t->inner);
    g_free(t->comms);
    g_free(t);
}

static void
nccl_abort(RsTransport *transport, int exit_code)
{
    NcclTransport *t = (NcclTransport *)transport;
    g_atomic_int_set(&t->aborted, 1);
    if (t->own_comm != NULL) {
        (void)ncclCommAbort(t->own_comm);
        t->own_comm = NULL;
    }
    rs_transport_abort(t->inner, exit_code);
}

/* Aborts this rank's communicator once (it is freed by the abort). */
static void
endpoint_abort_comm(NcclEndpoint *self)
{
    if (self->comm == NULL || self->comm_aborted)
        return;
    self->comm_aborted = TRUE;
    (void)ncclCommAbort(self->comm);
    if (self->t->own_comm == self->comm)
        self->t->own_comm = NULL;
}

/* The rank's RsCudaPollFunc: an asynchronous NCCL error ends a wait. */
static gboolean
poll_async(gpointer data, GError **error)
{
    NcclEndpoint *self = data;
    ncclResult_t state = ncclSuccess;
    if (self->comm == NULL || self->comm_aborted)
        return TRUE;
    ncclResult_t rc = ncclCommGetAsyncError(self->comm, &state);
    if (!nccl_check(rc, "ncclCommGetAsyncError", self->base.rank, self->comm, error))
        return FALSE;
    if (state != ncclSuccess && state != ncclInProgress)
        return nccl_check(state, "NCCL (asynchronous error)", self->base.rank, self->comm, error);
    return TRUE;
}

static void
group_free(gpointer p)
{
    Group *g = p;
    if (g->end != NULL)
        (void)cudaEventDestroy(g->end);
    g_ptr_array_unref(g->reqs);
    g_free(g);
}

/* Hands the queued operations to NCCL as one group and records its events. */
static gboolean
flush_group(NcclEndpoint *self, GError **error)
{
    if (self->queued->len == 0)
        return TRUE;
    guint32 rank = self->base.rank;
    cudaStream_t s = self->cuda.stream;
    Group *g = g_new0(Group, 1);
    g->reqs = g_ptr_array_sized_new(self->queued->len);
    gboolean ok = rs_cuda_check(cudaEventCreate(&g->end), "cudaEventCreate", rank, error) &&
                  nccl_check(ncclGroupStart(), "ncclGroupStart", rank, self->comm, error);
    if (!ok) {
        group_free(g);
        return FALSE;
    }
    gboolean posted = TRUE;
    for (guint i = 0; posted && i < self->queued->len; i++) {
        Pending *p = &g_array_index(self->queued, Pending, i);
        posted = p->is_send
                     ? nccl_check(ncclSend(p->buf, p->size_bytes, ncclUint8, (int)p->peer,
                                           self->comm, s),
                                  "ncclSend", rank, self->comm, error)
                     : nccl_check(ncclRecv(p->buf, p->size_bytes, ncclUint8, (int)p->peer,
                                           self->comm, s),
                                  "ncclRecv", rank, self->comm, error);
        g_ptr_array_add(g->reqs, p->req);
    }
    /* The group is closed even after a failed call, so that NCCL's group state is clean. */
    ok = nccl_check(ncclGroupEnd(), "ncclGroupEnd", rank, self->comm, posted ? error : NULL) &&
         posted;
    g_array_set_size(self->queued, 0);
    if (!ok || !rs_cuda_check(cudaEventRecord(g->end, s), "cudaEventRecord", rank, error)) {
        group_free(g);
        return FALSE;
    }
    g_queue_push_tail(&self->groups, g);
    return TRUE;
}

/* Completes the groups whose end event passed, in order; *n_done_out counts requests. */
static gboolean
poll_groups(NcclEndpoint *self, guint *n_done_out, GError **error)
{
    *n_done_out = 0;
    while (!g_queue_is_empty(&self->groups)) {
        Group *g = g_queue_peek_head(&self->groups);
        gboolean done;
        if (!rs_cuda_event_is_done(g->end, self->base.rank, &done, error))
            return FALSE;
        if (!done)
            return TRUE;
        float since_ref_ms = 0;
        /* The group's end on the host clock: the barrier's reference event plus the device
         * time since it. */
        double done_s = 0;
        if (self->ref_host_s > 0 &&
            cudaEventElapsedTime(&since_ref_ms, self->ref_event, g->end) == cudaSuccess)
            done_s = self->ref_host_s + since_ref_ms * 1e-3;
        for (guint i = 0; i < g->reqs->len; i++) {
            RsTransportRequest *req = g_ptr_array_index(g->reqs, i);
            req->done_s = done_s;
            g_atomic_int_set(&req->done, 1);
        }
        *n_done_out += g->reqs->len;
        group_free(g_queue_pop_head(&self->groups));
    }
    return TRUE;
}

/* Sets up every peer connection: one group in which each rank sends one byte to and
 * receives one byte from every other rank. */
static gboolean
warm_up(NcclEndpoint *self, GError **error)
{
    guint n = self->base.n_ranks;
    if (n < 2)
        return TRUE;
    guint8 *buf = NULL;
    if (!rs_cuda_device_ops.alloc(&self->base, 2 * n, &buf, error))
        return FALSE;
    g_autofree RsTransportRequest *reqs = g_new0(RsTransportRequest, 2 * n);
    for (guint32 p = 0; p < n; p++) {
        if (p == self->base.rank)
            continue;
        Pending s = {TRUE, p, buf + p, 1, &reqs[2 * p]};
        Pending r = {FALSE, p, buf + n + p, 1, &reqs[2 * p + 1]};
        g_array_append_val(self->queued, s);
        g_array_append_val(self->queued, r);
    }
    gboolean ok = flush_group(self, error) && rs_cuda_rank_sync(&self->cuda, error);
    guint n_done;
    ok = ok && poll_groups(self, &n_done, error);
    rs_cuda_device_ops.free(&self->base, buf);
    return ok;
}

typedef struct {
    NcclTransport *t;
    RsRankFunc fn;
    gpointer user_data;
} LaunchData;

/* Multi-process: this process's communicator, from the unique id rank 0 broadcasts. */
static gboolean
init_comm_mpi(NcclEndpoint *self, GError **error)
{
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    guint32 rank = self->base.rank;
    if (rank == 0 && !nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId", rank, NULL, error))
        return FALSE;
    g_autoptr(GBytes) mine = g_bytes_new(&id, sizeof id);
    g_autoptr(GBytes) got = NULL;
    if (!rs_endpoint_bcast(self->inner, mine, &got, error))
        return FALSE;
    memcpy(&id, g_bytes_get_data(got, NULL), sizeof id);
    if (!nccl_check(ncclCommInitRank(&self->comm, (int)self->base.n_ranks, id, (int)rank),
                    "ncclCommInitRank", rank, NULL, error))
        return FALSE;
    self->t->own_comm = self->comm;
    return TRUE;
}

static gboolean
rank_main(RsEndpoint *inner, gpointer data, GError **error)
{
    LaunchData *ld = data;
    NcclTransport *t = ld->t;
    NcclEndpoint ep = {0};
    ep.base.transport = &t->base;
    ep.base.rank = rs_endpoint_get_rank(inner);
    ep.base.n_ranks = rs_endpoint_get_n_ranks(inner);
    ep.base.device = &rs_cuda_device_ops;
    ep.base.device_ctx = &ep.cuda;
    ep.inner = inner;
    ep.t = t;
    ep.queued = g_array_new(FALSE, FALSE, sizeof(Pending));
    g_queue_init(&ep.groups);
    int device = t->multi_process ? local_rank(ep.base.rank) % t->n_devices : (int)ep.base.rank;
    /* Single process: the communicator ncclCommInitAll made for this rank, taken first so
     * that a failure below still aborts it. */
    if (!t->multi_process)
        ep.comm = t->comms[ep.base.rank];
    gboolean ok = rs_cuda_rank_init(&ep.cuda, ep.base.rank, device, &t->aborted,
                                    t->base.config.timeout_s, error);
    ep.cuda.poll = poll_async;
    ep.cuda.poll_data = &ep;
    if (ok && t->multi_process)
        ok = init_comm_mpi(&ep, error);
    ok = ok && warm_up(&ep, error);
    ok = ok && ld->fn(&ep.base, ld->user_data, error);
    if (!ok) {
        g_atomic_int_set(&t->aborted, 1);
        endpoint_abort_comm(&ep);
    }
    if (ep.cuda.stream != NULL)
        (void)cudaStreamSynchronize(ep.cuda.stream);
    g_queue_clear_full(&ep.groups, group_free);
    if (ep.ref_event != NULL)
        (void)cudaEventDestroy(ep.ref_event);
    g_array_unref(ep.queued);
    if (ep.comm != NULL && !ep.comm_aborted)
        (void)ncclCommDestroy(ep.comm);
    if (t->own_comm == ep.comm)
        t->own_comm = NULL;
    if (!t->multi_process && t->comms != NULL)
        t->comms[ep.base.rank] = NULL;
    rs_cuda_rank_clear(&ep.cuda);
    return ok;
}

static gboolean
nccl_launch(RsTransport *transport, guint n_ranks, RsRankFunc fn, gpointer user_data,
            GError **error)
{
    NcclTransport *t = (NcclTransport *)transport;
    g_atomic_int_set(&t->aborted, 0);
    if (!t->multi_process) {
        if ((int)n_ranks > t->n_devices) {
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_WORLD,
                        "the work needs %u ranks but this machine has %d GPU%s: the nccl "
                        "transport drives one GPU per rank (start one process per GPU with "
                        "mpirun on several machines, or use --transport cuda-local to run "
                        "several ranks per GPU)",
                        n_ranks, t->n_devices, t->n_devices == 1 ? "" : "s");
            return FALSE;
        }
        g_autofree int *devices = g_new(int, n_ranks);
        for (guint r = 0; r < n_ranks; r++)
            devices[r] = (int)r;
        g_free(t->comms);
        t->comms = g_new0(ncclComm_t, n_ranks);
        if (!nccl_check(ncclCommInitAll(t->comms, (int)n_ranks, devices), "ncclCommInitAll", 0,
                        NULL, error))
            return FALSE;
    }
    LaunchData ld = {t, fn, user_data};
    gboolean ok = rs_transport_launch(t->inner, n_ranks, rank_main, &ld, error);
    g_clear_pointer(&t->comms, g_free);
    return ok;
}

static gboolean
queue_op(RsEndpoint *base, gboolean is_send, guint32 peer, void *buf, gsize size,
         RsTransportRequest *req)
{
    NcclEndpoint *self = self_of(base);
    Pending p = {is_send, peer, buf, size, req};
    g_array_append_val(self->queued, p);
    return TRUE;
}

static gboolean
nccl_isend(RsEndpoint *base, guint32 peer, guint32 tag, const void *buf, gsize size,
           RsTransportRequest *req, GError **error)
{
    return queue_op(base, TRUE, peer, (void *)buf, size, req);
}

static gboolean
nccl_irecv(RsEndpoint *base, guint32 peer, guint32 tag, void *buf, gsize size,
           RsTransportRequest *req, GError **error)
{
    return queue_op(base, FALSE, peer, buf, size, req);
}

static gboolean
nccl_progress(RsEndpoint *base, double timeout_s, GError **error)
{
    NcclEndpoint *self = self_of(base);
    gint64 start_us = g_get_monotonic_time();
    if (!flush_group(self, error)) {
        endpoint_abort_comm(self);
        return FALSE;
    }
    for (guint pass = 0;; pass++) {
        guint n_done;
        if (!poll_groups(self, &n_done, error) || !poll_async(self, error)) {
            endpoint_abort_comm(self);
            return FALSE;
        }
        if (n_done > 0 || timeout_s < 0)
            return TRUE;
        if (g_atomic_int_get(&self->t->aborted)) {
            endpoint_abort_comm(self);
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_ABORTED,
                        "rank %u: aborted (another rank failed)", base->rank);
            return FALSE;
        }
        gint64 waited_us = g_get_monotonic_time() - start_us;
        if (timeout_s > 0 && waited_us >= timeout_s * 1e6)
            return TRUE;
        if (pass > 64)
            g_usleep(20);
        else
            g_thread_yield();
    }
}

/* The bookkeeping barrier; then an event on the rank's stream, waited for, and the host
 * clock at that moment: the reference that puts CUDA event times on the host clock. */
static gboolean
nccl_barrier(RsEndpoint *base, GError **error)
{
    NcclEndpoint *self = self_of(base);
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
nccl_gather(RsEndpoint *base, GBytes *data, GPtrArray **all_out, GError **error)
{
    return rs_endpoint_gather(self_of(base)->inner, data, all_out, error);
}

static gboolean
nccl_bcast(RsEndpoint *base, GBytes *data, GBytes **data_out, GError **error)
{
    return rs_endpoint_bcast(self_of(base)->inner, data, data_out, error);
}

const RsTransportClass rs_transport_nccl_class = {
    .name = "nccl",
    .description = "NCCL grouped send/receive on GPUs: one process per GPU under mpirun, or "
                   "one process driving every local GPU",
    .available = TRUE,
    .open = nccl_open,
    .close = nccl_close,
    .abort = nccl_abort,
    .launch = nccl_launch,
    .isend = nccl_isend,
    .irecv = nccl_irecv,
    .progress = nccl_progress,
    .barrier = nccl_barrier,
    .gather = nccl_gather,
    .bcast = nccl_bcast,
    .device_buffers = TRUE,
    .measure_copy = rs_cuda_transport_measure_copy,
};

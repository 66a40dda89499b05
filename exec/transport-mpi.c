/* transport-mpi.c — one process per rank, Open MPI non-blocking point-to-point.
 *
 * Sends are MPI_Isend with the caller's tag; receives are MPI_Irecv from the peer with
 * MPI_ANY_TAG, so that MPI's non-overtaking rule (messages between two processes on one
 * communicator match in order) gives the in-order matching of transport.h, and the tag and
 * size are then checked on the status rather than trusted. The communicator returns errors
 * (MPI_ERRORS_RETURN) so every failure becomes a GError naming the call. Progress polls
 * the endpoint's active requests with MPI_Testsome, yielding the CPU between polls: with
 * more processes than cores (mpirun --oversubscribe) a spinning rank would starve the
 * rank it waits for. */
#include "exec/transport-private.h"

#include <mpi.h>
#include <sched.h>
#include <string.h>

G_STATIC_ASSERT(sizeof(MPI_Request) <= sizeof(gpointer));

typedef struct {
    RsTransport base;
    gboolean initialized_here;
    int rank;
    int size;
} MpiTransport;

typedef struct {
    RsEndpoint base;
    GPtrArray *active; /* RsTransportRequest*, posted and not yet done */
} MpiEndpoint;

/* Turns an MPI return code into a GError naming the call. */
static gboolean
mpi_check(int code, int rank, const char *call, GError **error)
{
    if (code == MPI_SUCCESS)
        return TRUE;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        g_strlcpy(text, "unknown MPI error", sizeof text);
    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED, "rank %d: %s: %s", rank,
                call, text);
    return FALSE;
}

static RsTransport *
mpi_open(const RsTransportConfig *config, GError **error)
{
    int initialized = 0, finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                    "MPI was already finalized in this process: open the mpi transport once "
                    "and keep it open");
        return NULL;
    }
    MPI_Initialized(&initialized);
    gboolean here = FALSE;
    if (!initialized) {
        int provided;
        if (!mpi_check(MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided), -1,
                       "MPI_Init_thread", error))
            return NULL;
        here = TRUE;
    }
    MpiTransport *t = g_new0(MpiTransport, 1);
    t->initialized_here = here;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t->size);
    t->base.world_size = (guint)t->size;
    t->base.is_root = t->rank == 0;
    return &t->base;
}

static void
mpi_close(RsTransport *transport)
{
    MpiTransport *t = (MpiTransport *)transport;
    if (t->initialized_here)
        MPI_Finalize();
    g_free(t);
}

static void
mpi_abort(RsTransport *transport, int exit_code)
{
    MPI_Abort(MPI_COMM_WORLD, exit_code);
}

static gboolean
mpi_launch(RsTransport *transport, guint n_ranks, RsRankFunc fn, gpointer user_data,
           GError **error)
{
    MpiTransport *t = (MpiTransport *)transport;
    MpiEndpoint ep = {{.transport = transport, .rank = (guint32)t->rank, .n_ranks = n_ranks},
                      g_ptr_array_new()};
    gboolean ok = fn(&ep.base, user_data, error);
    g_ptr_array_unref(ep.active);
    return ok;
}

static void
set_request(RsTransportRequest *req, MPI_Request mreq)
{
    memcpy(&req->priv[0], &mreq, sizeof mreq);
}

static MPI_Request
get_request(const RsTransportRequest *req)
{
    MPI_Request mreq;
    memcpy(&mreq, &req->priv[0], sizeof mreq);
    return mreq;
}

static gboolean
mpi_isend(RsEndpoint *base, guint32 peer, guint32 tag, const void *buf, gsize size,
          RsTransportRequest *req, GError **error)
{
    MpiEndpoint *ep = (MpiEndpoint *)base;
    MPI_Request mreq;
    if (!mpi_check(MPI_Isend(buf, (int)size, MPI_BYTE, (int)peer, (int)tag, MPI_COMM_WORLD,
                             &mreq),
                   (int)base->rank, "MPI_Isend", error))
        return FALSE;
    set_request(req, mreq);
    req->priv[1] = GINT_TO_POINTER(0); /* a send */
    g_ptr_array_add(ep->active, req);
    return TRUE;
}

static gboolean
mpi_irecv(RsEndpoint *base, guint32 peer, guint32 tag, void *buf, gsize size,
          RsTransportRequest *req, GError **error)
{
    MpiEndpoint *ep = (MpiEndpoint *)base;
    MPI_Request mreq;
    if (!mpi_check(MPI_Irecv(buf, (int)size, MPI_BYTE, (int)peer, MPI_ANY_TAG, MPI_COMM_WORLD,
                             &mreq),
                   (int)base->rank, "MPI_Irecv", error))
        return FALSE;
    set_request(req, mreq);
    req->priv[1] = GINT_TO_POINTER(1); /* a receive */
    g_ptr_array_add(ep->active, req);
    return TRUE;
}

/* Checks a completed receive's status against what the rank expected. */
static gboolean
check_recv_status(const RsEndpoint *base, const RsTransportRequest *req, MPI_Status *status,
                  GError **error)
{
    int count = 0;
    MPI_Get_count(status, MPI_BYTE, &count);
    if ((guint32)status->MPI_TAG != req->tag || (gsize)count != req->size_bytes) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_MISMATCH,
                    "rank %u expected a message with tag %u and %" G_GSIZE_FORMAT
                    " bytes from rank %u, but the next one has tag %d and %d bytes",
                    base->rank, req->tag, req->size_bytes, req->peer, status->MPI_TAG, count);
        return FALSE;
    }
    return TRUE;
}

static gboolean
mpi_progress(RsEndpoint *base, double timeout_s, GError **error)
{
    MpiEndpoint *ep = (MpiEndpoint *)base;
    double deadline = timeout_s > 0 ? rs_transport_clock_s() + timeout_s : 0.0;
    guint n = ep->active->len;
    if (n == 0)
        return TRUE;
    g_autofree MPI_Request *reqs = g_new(MPI_Request, n);
    g_autofree int *indices = g_new(int, n);
    g_autofree MPI_Status *statuses = g_new(MPI_Status, n);
    for (guint i = 0; i < n; i++)
        reqs[i] = get_request(g_ptr_array_index(ep->active, i));
    for (guint spins = 0;; spins++) {
        int outcount = 0;
        int code = MPI_Testsome((int)n, reqs, &outcount, indices, statuses);
        if (code == MPI_ERR_IN_STATUS) {
            for (int k = 0; k < outcount; k++)
                if (statuses[k].MPI_ERROR != MPI_SUCCESS) {
                    RsTransportRequest *req = g_ptr_array_index(ep->active, indices[k]);
                    mpi_check(statuses[k].MPI_ERROR, (int)base->rank,
                              req->priv[1] ? "MPI_Irecv completion" : "MPI_Isend completion",
                              error);
                    g_prefix_error(error, "message with rank %u, tag %u: ", req->peer, req->tag);
                    return FALSE;
                }
        }
        if (!mpi_check(code == MPI_ERR_IN_STATUS ? MPI_SUCCESS : code, (int)base->rank,
                       "MPI_Testsome", error))
            return FALSE;
        if (outcount > 0 && outcount != MPI_UNDEFINED) {
            for (int k = 0; k < outcount; k++) {
                RsTransportRequest *req = g_ptr_array_index(ep->active, indices[k]);
                if (req->priv[1] && !check_recv_status(base, req, &statuses[k], error))
                    return FALSE;
                g_atomic_int_set(&req->done, 1);
            }
            /* Drop the completed requests, keeping the others in posting order. */
            guint kept = 0;
            for (guint i = 0; i < n; i++) {
                RsTransportRequest *req = g_ptr_array_index(ep->active, i);
                if (!g_atomic_int_get(&req->done))
                    ep->active->pdata[kept++] = req;
            }
            g_ptr_array_set_size(ep->active, kept);
            return TRUE;
        }
        if (timeout_s < 0)
            return TRUE;
        if (deadline > 0 && rs_transport_clock_s() > deadline)
            return TRUE;
        /* Let the peer run: with --oversubscribe it may share this core. */
        if (spins > 64)
            g_usleep(20);
        else
            sched_yield();
    }
}

static gboolean
mpi_barrier(RsEndpoint *base, GError **error)
{
    return mpi_check(MPI_Barrier(MPI_COMM_WORLD), (int)base->rank, "MPI_Barrier", error);
}

static gboolean
mpi_gather(RsEndpoint *base, GBytes *data, GPtrArray **all_out, GError **error)
{
    int rank = (int)base->rank, n = (int)base->n_ranks;
    gsize size;
    const void *bytes = g_bytes_get_data(data, &size);
    if (size > (gsize)G_MAXINT32) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                    "rank %d: %" G_GSIZE_FORMAT " bytes are too many to gather", rank, size);
        return FALSE;
    }
    int my_size = (int)size;
    g_autofree int *sizes = rank == 0 ? g_new0(int, n) : NULL;
    if (!mpi_check(MPI_Gather(&my_size, 1, MPI_INT, sizes, 1, MPI_INT, 0, MPI_COMM_WORLD), rank,
                   "MPI_Gather", error))
        return FALSE;
    g_autofree int *displs = NULL;
    g_autofree guint8 *all = NULL;
    if (rank == 0) {
        displs = g_new0(int, n);
        gint64 total = 0;
        for (int r = 0; r < n; r++) {
            displs[r] = (int)total;
            total += sizes[r];
        }
        if (total > G_MAXINT32) {
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                        "rank 0: %" G_GINT64_FORMAT " bytes are too many to gather", total);
            return FALSE;
        }
        all = g_malloc(MAX(total, 1));
    }
    if (!mpi_check(MPI_Gatherv(bytes, my_size, MPI_BYTE, all, sizes, displs, MPI_BYTE, 0,
                               MPI_COMM_WORLD),
                   rank, "MPI_Gatherv", error))
        return FALSE;
    if (rank == 0) {
        GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
        for (int r = 0; r < n; r++)
            g_ptr_array_add(out, g_bytes_new(all + displs[r], (gsize)sizes[r]));
        *all_out = out;
    }
    return TRUE;
}

static gboolean
mpi_bcast(RsEndpoint *base, GBytes *data, GBytes **data_out, GError **error)
{
    int rank = (int)base->rank;
    gsize size = 0;
    const void *bytes = rank == 0 ? g_bytes_get_data(data, &size) : NULL;
    long long size_ll = (long long)size;
    if (!mpi_check(MPI_Bcast(&size_ll, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), rank, "MPI_Bcast",
                   error))
        return FALSE;
    if (size_ll > G_MAXINT32) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                    "rank %d: %lld bytes are too many to broadcast", rank, size_ll);
        return FALSE;
    }
    guint8 *buf = g_malloc(MAX(size_ll, 1));
    if (rank == 0 && size_ll > 0)
        memcpy(buf, bytes, (gsize)size_ll);
    if (!mpi_check(MPI_Bcast(buf, (int)size_ll, MPI_BYTE, 0, MPI_COMM_WORLD), rank, "MPI_Bcast",
                   error)) {
        g_free(buf);
        return FALSE;
    }
    *data_out = g_bytes_new_take(buf, (gsize)size_ll);
    return TRUE;
}

const RsTransportClass rs_transport_mpi_class = {
    .name = "mpi",
    .description = "one process per rank (mpirun -np N); Open MPI non-blocking send/receive",
    .available = TRUE,
    .open = mpi_open,
    .close = mpi_close,
    .abort = mpi_abort,
    .launch = mpi_launch,
    .isend = mpi_isend,
    .irecv = mpi_irecv,
    .progress = mpi_progress,
    .barrier = mpi_barrier,
    .gather = mpi_gather,
    .bcast = mpi_bcast,
};

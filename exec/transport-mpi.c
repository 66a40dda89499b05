/* transport-mpi.c — one process per rank, Open MPI non-blocking point-to-point.
 *
 * Sends are MPI_Isend with the caller's tag; receives are MPI_Irecv from the peer with
 * MPI_ANY_TAG, so that MPI's non-overtaking rule (messages between two processes on one
 * communicator match in order) gives the in-order matching of transport.h, and the tag and
 * size are then checked on the status rather than trusted. The communicator returns errors
 * (MPI_ERRORS_RETURN) so every failure becomes a GError naming the call. Progress polls
 * the endpoint's active requests with MPI_Testsome, yielding the CPU between polls: with
 * more processes than cores (mpirun --oversubscribe) a spinning rank would starve the
 * rank it waits for.
 *
 * With a timeout (config timeout_s > 0), the barrier, gather and broadcast between runs
 * are point-to-point messages to and from
 * rank 0 on a duplicate of MPI_COMM_WORLD (so that no data receive, which takes any tag,
 * can match one), polled like the data and bounded by the config's timeout_s: a blocking
 * MPI collective would leave every rank waiting for ever on a stopped peer, and only
 * messages from each rank let rank 0 name the rank that is missing. Rank 0 waits
 * timeout_s, the others 1.5 timeout_s, so that rank 0 reports first when it is a peer
 * that stopped, and a stopped rank 0 is still named within twice the timeout. */
#include "exec/transport-private.h"

#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

G_STATIC_ASSERT(sizeof(MPI_Request) <= sizeof(gpointer));

typedef struct {
    RsTransport base;
    gboolean initialized_here;
    int rank;
    int size;
    MPI_Comm coll; /* a duplicate of MPI_COMM_WORLD for barrier, gather and broadcast */
} MpiTransport;

/* Tags on the collectives' communicator. */
enum { TAG_BARRIER_IN = 1, TAG_BARRIER_OUT, TAG_GATHER_SIZE, TAG_GATHER_DATA, TAG_BCAST_SIZE,
       TAG_BCAST_DATA };

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
    if (!mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &t->coll), t->rank, "MPI_Comm_dup", error)) {
        if (here)
            MPI_Finalize();
        g_free(t);
        return NULL;
    }
    MPI_Comm_set_errhandler(t->coll, MPI_ERRORS_RETURN);
    return &t->base;
}

static void
mpi_close(RsTransport *transport)
{
    MpiTransport *t = (MpiTransport *)transport;
    MPI_Comm_free(&t->coll);
    if (t->initialized_here)
        MPI_Finalize();
    g_free(t);
}

/* Not MPI_Abort: when several ranks fail at once each would call it, and Open MPI 4.1's
 * mpirun then sometimes crashes relaying their abort messages (SIGSEGV in
 * pmix_server_log_fn after orte/util/show_help.c). The process leaves with @exit_code,
 * without MPI_Finalize (which would wait for the ranks still blocked on it): mpirun ends
 * the job when a process exits non-zero (orte's default, "Per user-direction, the job has
 * been aborted") and exits with the first such code; a rank it did not end meets its own
 * --timeout on the message it waits for. Its error was printed before this call. */
static void
mpi_abort(RsTransport *transport, int exit_code)
{
    fflush(stdout);
    fflush(stderr);
    _exit(exit_code);
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

/* Waits for @n requests of a collective, polling as mpi_progress does, for at most
 * @timeout_s seconds (0: for ever). On timeout: RS_TRANSPORT_ERROR_TIMEOUT naming @call and
 * the peers (@peers[i] for reqs[i]) whose messages are still outstanding; the requests are
 * left to the process's end (rs_transport_abort), which the caller's failure leads to. */
static gboolean
wait_all(MPI_Request *reqs, const int *peers, int n, int rank, const char *call,
         double timeout_s, GError **error)
{
    double deadline = timeout_s > 0 ? rs_transport_clock_s() + timeout_s : 0.0;
    for (guint spins = 0;; spins++) {
        int done = 0;
        if (!mpi_check(MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE), rank, call, error))
            return FALSE;
        if (done)
            return TRUE;
        if (deadline > 0 && rs_transport_clock_s() > deadline)
            break;
        if (spins > 64)
            g_usleep(50);
        else
            sched_yield();
    }
    g_autoptr(GString) missing = g_string_new(NULL);
    guint n_missing = 0;
    for (int i = 0; i < n; i++) {
        int done = 0;
        if (reqs[i] != MPI_REQUEST_NULL)
            MPI_Test(&reqs[i], &done, MPI_STATUS_IGNORE);
        if (reqs[i] != MPI_REQUEST_NULL && !done) {
            g_string_append_printf(missing, "%s%d", n_missing ? ", " : "", peers[i]);
            n_missing++;
        }
    }
    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_TIMEOUT,
                "rank %d: %s: no answer within %g s from rank%s %s (stopped, killed or stalled)",
                rank, call, timeout_s, n_missing == 1 ? "" : "s", missing->str);
    return FALSE;
}

/* The timeout of a rank's wait: rank 0 waits the configured time, the others half as long
 * again (see the file comment). */
static double
wait_timeout_s(const RsEndpoint *base)
{
    double t = base->transport->config.timeout_s;
    return base->rank == 0 ? t : 1.5 * t;
}

/* Every rank sends to rank 0 (@in_tag, @size_in bytes at @in[i·size_in], NULL for none);
 * rank 0 waits for all, then answers each (@out_tag, @size_out bytes of @out). */
static gboolean
fan_in_out(RsEndpoint *base, int in_tag, void *in, int size_in, int out_tag, void *out,
           int size_out, const char *call, GError **error)
{
    MpiTransport *t = (MpiTransport *)base->transport;
    int rank = (int)base->rank, n = (int)base->n_ranks;
    double timeout_s = wait_timeout_s(base);
    if (n <= 1)
        return TRUE;
    if (rank == 0) {
        g_autofree MPI_Request *reqs = g_new(MPI_Request, n - 1);
        g_autofree int *peers = g_new(int, n - 1);
        for (int r = 1; r < n; r++) {
            peers[r - 1] = r;
            guint8 *slot = in != NULL ? (guint8 *)in + (gsize)r * (gsize)size_in : NULL;
            if (!mpi_check(MPI_Irecv(slot, size_in, MPI_BYTE, r, in_tag, t->coll, &reqs[r - 1]),
                           rank, call, error))
                return FALSE;
        }
        if (!wait_all(reqs, peers, n - 1, rank, call, timeout_s, error))
            return FALSE;
        for (int r = 1; r < n; r++)
            if (!mpi_check(MPI_Isend(out, size_out, MPI_BYTE, r, out_tag, t->coll, &reqs[r - 1]),
                           rank, call, error))
                return FALSE;
        return wait_all(reqs, peers, n - 1, rank, call, timeout_s, error);
    }
    MPI_Request reqs[2];
    int peers[2] = {0, 0};
    guint8 *mine = in != NULL ? (guint8 *)in + (gsize)rank * (gsize)size_in : NULL;
    if (!mpi_check(MPI_Isend(mine, size_in, MPI_BYTE, 0, in_tag, t->coll, &reqs[0]), rank, call,
                   error) ||
        !mpi_check(MPI_Irecv(out, size_out, MPI_BYTE, 0, out_tag, t->coll, &reqs[1]), rank, call,
                   error))
        return FALSE;
    return wait_all(reqs, peers, 2, rank, call, timeout_s, error);
}

/* After a barrier every rank reached with its operations complete: a data message that
 * arrived and no receive took (MPI_Iprobe on the data communicator, polled a few times so
 * that a message still in flight lands), or a send of this rank still posted, was never
 * asked for. */
static gboolean
mpi_check_no_stray(RsEndpoint *base, GError **error)
{
    MpiEndpoint *ep = (MpiEndpoint *)base;
    int rank = (int)base->rank;
    for (guint poll = 0; poll < 3; poll++) {
        int flag = 0;
        MPI_Status status;
        if (!mpi_check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status),
                       rank, "MPI_Iprobe", error))
            return FALSE;
        if (flag) {
            int count = 0;
            MPI_Get_count(&status, MPI_BYTE, &count);
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_MISMATCH,
                        "rank %d: a message from rank %d arrived that no receive took (tag %d, "
                        "%d bytes): a duplicated or stray message",
                        rank, status.MPI_SOURCE, status.MPI_TAG, count);
            return FALSE;
        }
        g_usleep(1000);
    }
    if (!mpi_progress(base, -1.0, error))
        return FALSE;
    for (guint i = 0; i < ep->active->len; i++) {
        RsTransportRequest *req = g_ptr_array_index(ep->active, i);
        if (!g_atomic_int_get(&req->done)) {
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_MISMATCH,
                        "rank %d: a %s rank %u (tag %u, %" G_GSIZE_FORMAT " bytes) is still "
                        "posted after every rank finished: a duplicated or stray message",
                        rank, GPOINTER_TO_INT(req->priv[1]) ? "receive from" : "send to", req->peer,
                        req->tag, req->size_bytes);
            return FALSE;
        }
    }
    return TRUE;
}

/* Without a timeout, MPI's own collectives: their exits are close together, which the
 * timings of calibrate and of each run's start need (a polled release adds the poll's
 * sleep to some ranks). */
static gboolean
blocking_barrier(RsEndpoint *base, GError **error)
{
    return mpi_check(MPI_Barrier(MPI_COMM_WORLD), (int)base->rank, "MPI_Barrier", error);
}

static gboolean
blocking_gather(RsEndpoint *base, GBytes *data, GPtrArray **all_out, GError **error)
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
blocking_bcast(RsEndpoint *base, GBytes *data, GBytes **data_out, GError **error)
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

static gboolean
mpi_barrier(RsEndpoint *base, GError **error)
{
    if (base->transport->config.timeout_s <= 0)
        return blocking_barrier(base, error);
    return fan_in_out(base, TAG_BARRIER_IN, NULL, 0, TAG_BARRIER_OUT, NULL, 0, "barrier", error);
}

static gboolean
mpi_gather(RsEndpoint *base, GBytes *data, GPtrArray **all_out, GError **error)
{
    if (base->transport->config.timeout_s <= 0)
        return blocking_gather(base, data, all_out, error);
    MpiTransport *t = (MpiTransport *)base->transport;
    int rank = (int)base->rank, n = (int)base->n_ranks;
    gsize size;
    const void *bytes = g_bytes_get_data(data, &size);
    if (size > (gsize)G_MAXINT32) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                    "rank %d: %" G_GSIZE_FORMAT " bytes are too many to gather", rank, size);
        return FALSE;
    }
    double timeout_s = wait_timeout_s(base);
    int my_size = (int)size;
    if (rank != 0) {
        MPI_Request reqs[2];
        int peers[2] = {0, 0};
        if (!mpi_check(MPI_Isend(&my_size, 1, MPI_INT, 0, TAG_GATHER_SIZE, t->coll, &reqs[0]),
                       rank, "gather", error) ||
            !mpi_check(MPI_Isend(bytes, my_size, MPI_BYTE, 0, TAG_GATHER_DATA, t->coll, &reqs[1]),
                       rank, "gather", error))
            return FALSE;
        return wait_all(reqs, peers, 2, rank, "gather", timeout_s, error);
    }
    g_autofree int *sizes = g_new0(int, n);
    g_autofree MPI_Request *reqs = g_new(MPI_Request, MAX(n - 1, 1));
    g_autofree int *peers = g_new(int, MAX(n - 1, 1));
    sizes[0] = my_size;
    for (int r = 1; r < n; r++) {
        peers[r - 1] = r;
        if (!mpi_check(MPI_Irecv(&sizes[r], 1, MPI_INT, r, TAG_GATHER_SIZE, t->coll, &reqs[r - 1]),
                       rank, "gather", error))
            return FALSE;
    }
    if (n > 1 && !wait_all(reqs, peers, n - 1, rank, "gather", timeout_s, error))
        return FALSE;
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    g_autofree guint8 **bufs = g_new0(guint8 *, n);
    for (int r = 1; r < n; r++) {
        bufs[r] = g_malloc(MAX(sizes[r], 1));
        if (!mpi_check(MPI_Irecv(bufs[r], sizes[r], MPI_BYTE, r, TAG_GATHER_DATA, t->coll,
                                 &reqs[r - 1]),
                       rank, "gather", error)) {
            for (int k = 1; k <= r; k++)
                g_free(bufs[k]);
            g_ptr_array_unref(out);
            return FALSE;
        }
    }
    if (n > 1 && !wait_all(reqs, peers, n - 1, rank, "gather", timeout_s, error)) {
        for (int r = 1; r < n; r++)
            g_free(bufs[r]);
        g_ptr_array_unref(out);
        return FALSE;
    }
    g_ptr_array_add(out, g_bytes_new(bytes, size));
    for (int r = 1; r < n; r++)
        g_ptr_array_add(out, g_bytes_new_take(bufs[r], (gsize)sizes[r]));
    *all_out = out;
    return TRUE;
}

static gboolean
mpi_bcast(RsEndpoint *base, GBytes *data, GBytes **data_out, GError **error)
{
    if (base->transport->config.timeout_s <= 0)
        return blocking_bcast(base, data, data_out, error);
    MpiTransport *t = (MpiTransport *)base->transport;
    int rank = (int)base->rank, n = (int)base->n_ranks;
    double timeout_s = wait_timeout_s(base);
    if (rank == 0) {
        gsize size = 0;
        const void *bytes = g_bytes_get_data(data, &size);
        if (size > (gsize)G_MAXINT32) {
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                        "rank 0: %" G_GSIZE_FORMAT " bytes are too many to broadcast", size);
            return FALSE;
        }
        int size_i = (int)size;
        g_autofree MPI_Request *reqs = g_new(MPI_Request, MAX(2 * (n - 1), 1));
        g_autofree int *peers = g_new(int, MAX(2 * (n - 1), 1));
        for (int r = 1; r < n; r++) {
            peers[2 * (r - 1)] = peers[2 * (r - 1) + 1] = r;
            if (!mpi_check(MPI_Isend(&size_i, 1, MPI_INT, r, TAG_BCAST_SIZE, t->coll,
                                     &reqs[2 * (r - 1)]),
                           rank, "broadcast", error) ||
                !mpi_check(MPI_Isend(bytes, size_i, MPI_BYTE, r, TAG_BCAST_DATA, t->coll,
                                     &reqs[2 * (r - 1) + 1]),
                           rank, "broadcast", error))
                return FALSE;
        }
        if (n > 1 && !wait_all(reqs, peers, 2 * (n - 1), rank, "broadcast", timeout_s, error))
            return FALSE;
        *data_out = g_bytes_ref(data);
        return TRUE;
    }
    int size_i = 0;
    int peer = 0;
    MPI_Request req;
    if (!mpi_check(MPI_Irecv(&size_i, 1, MPI_INT, 0, TAG_BCAST_SIZE, t->coll, &req), rank,
                   "broadcast", error) ||
        !wait_all(&req, &peer, 1, rank, "broadcast of the run's result", timeout_s, error))
        return FALSE;
    guint8 *buf = g_malloc(MAX(size_i, 1));
    if (!mpi_check(MPI_Irecv(buf, size_i, MPI_BYTE, 0, TAG_BCAST_DATA, t->coll, &req), rank,
                   "broadcast", error) ||
        !wait_all(&req, &peer, 1, rank, "broadcast of the run's result", timeout_s, error)) {
        g_free(buf);
        return FALSE;
    }
    *data_out = g_bytes_new_take(buf, (gsize)size_i);
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
    .check_no_stray = mpi_check_no_stray,
    .gather = mpi_gather,
    .bcast = mpi_bcast,
};

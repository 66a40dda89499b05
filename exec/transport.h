/* transport.h — how ranks of the executor move bytes: a table of operations per backend and
 * a registry of backends, as NCCL keeps its network and P2P transports.
 *
 * A transport hosts a world of ranks 0..n-1. rs_transport_launch() runs a function once for
 * every rank this process hosts (all of them for `host`, whose ranks are threads; one for
 * `mpi`, one process per rank) and hands it that rank's endpoint. Inside, a rank moves bytes
 * only through its endpoint:
 *
 *   rs_endpoint_isend / rs_endpoint_irecv   post a non-blocking send or receive of one
 *                                           contiguous buffer to or from a peer rank;
 *   rs_endpoint_progress                    advance posted operations, optionally blocking
 *                                           until one of them completes;
 *   rs_endpoint_barrier / _gather / _bcast  bookkeeping collectives (start times, results).
 *
 * Matching follows NCCL's point-to-point rule: between one sender and one receiver,
 * operations match in the order they were posted on each side. The tag is a check, not a
 * selector: a receive whose next incoming message carries another tag or size fails with
 * RS_TRANSPORT_ERROR_MISMATCH instead of delivering the wrong bytes. Buffers of a posted
 * operation belong to the transport until it completes.
 *
 * Backends: `host` (threads of one process, each with private buffers; bytes cross only
 * through bounded per-pair queues in the transport), `mpi` (Open MPI non-blocking
 * point-to-point; built when Meson finds MPI, otherwise its open reports that it is not
 * built), and two GPU backends whose buffers are device memory (built when Meson finds
 * CUDA, and NCCL for the second): `cuda-local` (several logical ranks in one process on
 * the GPUs it has, even one; messages are device-to-device or peer copies) and `nccl` (one
 * process per GPU under mpirun, or one process driving every local GPU with a thread per
 * GPU; grouped ncclSend/ncclRecv, one group per batch of posted operations).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define RS_TRANSPORT_ERROR (rs_transport_error_quark())
GQuark rs_transport_error_quark(void);

typedef enum {
    RS_TRANSPORT_ERROR_UNKNOWN,     /* no transport of that name; the message lists them */
    RS_TRANSPORT_ERROR_UNAVAILABLE, /* known but not built into this binary (MPI missing) */
    RS_TRANSPORT_ERROR_WORLD,       /* the world size does not fit (mpirun -np N) */
    RS_TRANSPORT_ERROR_MISMATCH,    /* a message arrived with another tag or size */
    RS_TRANSPORT_ERROR_TIMEOUT,     /* an operation did not complete within the deadline */
    RS_TRANSPORT_ERROR_ABORTED,     /* another rank failed and the world was aborted */
    RS_TRANSPORT_ERROR_FAILED,      /* a backend call failed (the backend's message) */
    RS_TRANSPORT_ERROR_INVALID,     /* a setting out of range (RsTransportConfig) */
} RsTransportError;

typedef struct _RsTransport RsTransport;
typedef struct _RsEndpoint RsEndpoint;

/* Settings of a transport; zero fields take the defaults below. */
typedef struct {
    /* Host: messages up to this size are copied into the queue slot at once (eager) and the
     * send completes; larger ones wait in the queue until the receiver copies them straight
     * from the sender's buffer (rendezvous, one copy). Default 16 KiB, at most
     * RS_TRANSPORT_MAX_EAGER_BYTES. When a channel's slots cannot be allocated its messages
     * all go by rendezvous. */
    gsize eager_bytes;
    /* Host: messages one sender may have queued to one receiver before further sends wait
     * in the sender (the bounded queue). Default 8, at most RS_TRANSPORT_MAX_QUEUE_DEPTH. */
    guint queue_depth;
    /* > 0: seconds a blocking wait may see no progress before it fails with
     * RS_TRANSPORT_ERROR_TIMEOUT naming the rank; 0 waits for ever. Finite, >= 0.
     * mpi: the barrier, gather and broadcast between runs fail when they do not complete
     * within this many seconds (rank 0 waiting for the others) or 1.5 times it (a rank
     * waiting for rank 0, so that rank 0, which knows who is missing, reports first),
     * naming the ranks that did not answer. Device transports: a collective or a stream
     * wait; the NCCL communicators are then aborted (ncclCommAbort). reshard's --timeout. */
    double timeout_s;
} RsTransportConfig;

#define RS_TRANSPORT_DEFAULT_EAGER_BYTES ((gsize)16 << 10)
#define RS_TRANSPORT_DEFAULT_QUEUE_DEPTH 8
/* The largest settings accepted: each receiver holds queue_depth × eager_bytes of slots per
 * sender it hears from (1 GiB at both limits); eager copying pays off for small messages
 * only (MPI libraries switch to rendezvous at 4 to 64 KiB). */
#define RS_TRANSPORT_MAX_EAGER_BYTES ((gsize)1 << 20)
#define RS_TRANSPORT_MAX_QUEUE_DEPTH 1024

/* One contiguous run of bytes of a scatter-gather operation. */
typedef struct {
    void *base;
    gsize len;
} RsIovec;

/* A posted operation. The caller owns the storage and keeps it in place until done. */
typedef struct {
    gint done;          /* set (atomically) by the transport when the operation completed */
    guint32 peer;       /* the other rank */
    guint32 tag;        /* checked against the matching side */
    gsize size_bytes;   /* bytes sent, or bytes expected */
    /* When the bytes were in place, on the clock of rs_endpoint_now_s(), as a device
     * measured it (the GPU backends: a CUDA event after the operation, placed on the host
     * clock through an event recorded when the rank left its last barrier); 0 when the
     * backend records no such time (the caller then takes the time it saw done turn TRUE). */
    double done_s;
    gpointer priv[4];   /* backend state */
} RsTransportRequest;

/**
 * RsRankFunc:
 * @endpoint: (transfer none): the rank's endpoint, alive until the function returns
 * @user_data: as given to rs_transport_launch()
 * @error: set on failure; the other ranks are then aborted
 *
 * Returns: TRUE on success.
 */
typedef gboolean (*RsRankFunc)(RsEndpoint *endpoint, gpointer user_data, GError **error);

/**
 * rs_transport_list:
 * Returns: (transfer full): the names of the registered transports, comma-separated, each
 * followed by " (not built)" when this binary lacks it.
 */
char *rs_transport_list(void);

/**
 * rs_transport_open:
 * @name: "host", "mpi", "cuda-local" or "nccl"
 * @config: (nullable): settings; NULL for the defaults
 * @error: RS_TRANSPORT_ERROR_UNKNOWN listing the transports, RS_TRANSPORT_ERROR_UNAVAILABLE
 *   when the backend is not built ("the mpi transport is not built: install libopenmpi-dev
 *   and reconfigure with -Dmpi=enabled"), RS_TRANSPORT_ERROR_FAILED when the backend does
 *   not start (MPI_Init failed; "no CUDA device was found" for cuda-local and nccl on a
 *   machine without a GPU)
 *
 * The `mpi` backend initialises MPI here (MPI_Init_thread, one thread per process) and
 * finalises it in rs_transport_close(); open it once per process.
 *
 * Returns: (transfer full): the transport, or NULL.
 */
RsTransport *rs_transport_open(const char *name, const RsTransportConfig *config,
                               GError **error);

/** rs_transport_close: Ends the transport (MPI_Finalize for mpi); NULL is ignored. */
void rs_transport_close(RsTransport *transport);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsTransport, rs_transport_close)

/** rs_transport_get_name: Returns: (transfer none): "host", "mpi". */
const char *rs_transport_get_name(const RsTransport *transport);

/**
 * rs_transport_get_world_size:
 * Returns: the number of ranks the transport is bound to (the mpirun process count), or 0
 * when any number can be launched (host).
 */
guint rs_transport_get_world_size(const RsTransport *transport);

/**
 * rs_transport_is_root:
 * Returns: TRUE when this process hosts rank 0 (it prints results; the others stay quiet).
 */
gboolean rs_transport_is_root(const RsTransport *transport);

/**
 * rs_transport_abort:
 * @exit_code: the status the whole job ends with
 *
 * Ends every process of a multi-process world after a failure this process has already
 * reported: mpi (and nccl over it) ends this process with @exit_code, without MPI_Abort or
 * MPI_Finalize, and the launcher (mpirun) ends the others as one exited non-zero; the job
 * exits with the first failing process's code. Returns for single-process transports,
 * which have nothing to end.
 */
void rs_transport_abort(RsTransport *transport, int exit_code);

/**
 * rs_transport_get_launch_bytes:
 * @n_ranks: the world size to launch, >= 1
 * @n_pairs: the ordered pairs (sender, receiver), sender != receiver, that exchange at
 *   least one message; at most @n_ranks × (@n_ranks − 1)
 *
 * The memory the transport's own state takes in this process when it launches @n_ranks
 * ranks, before any buffer of the caller's: for `host` (every rank a thread here) a
 * channel and two queues per ordered pair of ranks (sizeof of its structs: 80 bytes on
 * x86-64, so n_ranks² of them: 2,000 ranks 320 MB, 10,000 ranks 8 GB), and per pair that
 * exchanges messages a ring of queue_depth entries and its eager slots (queue_depth ×
 * eager_bytes: 128 KiB at the defaults, taken at its first eager message); the threads'
 * stacks (virtual memory, touched only as used) are not counted. 0 for transports whose
 * state does not grow with the ranks of this process (mpi: one rank per process; the
 * device transports keep their buffers in GPU memory). Callers refuse a launch whose
 * figure does not fit (exec/executor.c does, with its buffers).
 *
 * Returns: bytes, saturating at G_MAXUINT64.
 */
guint64 rs_transport_get_launch_bytes(const RsTransport *transport, guint n_ranks,
                                      guint64 n_pairs);

/**
 * rs_transport_launch:
 * @n_ranks: the world size, >= 1; must equal the world size of a bound transport
 * @fn: the function every rank runs
 * @user_data: passed to @fn (shared by the ranks of one process; read it, do not write it
 *   without your own locking)
 * @error: RS_TRANSPORT_ERROR_WORLD ("the plan needs 8 ranks but mpirun started 4
 *   processes"), or the first error a rank reported (later ranks see
 *   RS_TRANSPORT_ERROR_ABORTED, which is not reported in its place)
 *
 * Runs @fn for each rank this process hosts and returns when all have returned. When a rank
 * fails, the other ranks' blocked operations end with RS_TRANSPORT_ERROR_ABORTED. A
 * multi-process transport cannot unblock peers in other processes: the caller then reports
 * the error and calls rs_transport_abort().
 *
 * Returns: TRUE when every rank of this process succeeded.
 */
gboolean rs_transport_launch(RsTransport *transport, guint n_ranks, RsRankFunc fn,
                             gpointer user_data, GError **error);

/** rs_endpoint_get_rank: Returns: the rank of @endpoint, 0..n_ranks-1. */
guint32 rs_endpoint_get_rank(const RsEndpoint *endpoint);
/** rs_endpoint_get_n_ranks: Returns: the world size. */
guint rs_endpoint_get_n_ranks(const RsEndpoint *endpoint);

/**
 * rs_endpoint_isend:
 * @peer: destination rank, != own rank
 * @tag: checked by the receiver, 0..32767
 * @buf: (array length=size_bytes): bytes to send; not modified or freed until done
 * @size_bytes: 0..2^31-1 (larger messages are the caller's to chunk)
 * @req: (out caller-allocates): the operation; req->done turns TRUE on completion
 * @error: RS_TRANSPORT_ERROR_FAILED for a backend error, RS_TRANSPORT_ERROR_ABORTED
 *
 * Returns: TRUE when posted.
 */
gboolean rs_endpoint_isend(RsEndpoint *endpoint, guint32 peer, guint32 tag, const void *buf,
                           gsize size_bytes, RsTransportRequest *req, GError **error);

/**
 * rs_endpoint_irecv:
 * @peer: source rank, != own rank
 * @tag: the tag the matching send must carry
 * @buf: (array length=size_bytes): where the bytes go
 * @size_bytes: the exact size the matching send must have
 * @req: (out caller-allocates): the operation
 * @error: as rs_endpoint_isend()
 *
 * Returns: TRUE when posted.
 */
gboolean rs_endpoint_irecv(RsEndpoint *endpoint, guint32 peer, guint32 tag, void *buf,
                           gsize size_bytes, RsTransportRequest *req, GError **error);

/**
 * rs_transport_has_device_buffers:
 * Returns: TRUE when the ranks keep their buffers in GPU memory (cuda-local, nccl): the
 * executor then fills, packs, unpacks, copies and checks them with CUDA kernels, and the
 * pointers given to rs_endpoint_isend() and rs_endpoint_irecv() are device pointers.
 */
gboolean rs_transport_has_device_buffers(const RsTransport *transport);

/**
 * rs_transport_has_iov:
 * Returns: TRUE when the backend moves scatter-gather lists itself (rs_endpoint_isendv,
 * rs_endpoint_irecvv): the host backend copies straight from the sender's runs into the
 * receiver's runs, one copy per byte. Other backends take contiguous buffers only, and the
 * caller packs.
 */
gboolean rs_transport_has_iov(const RsTransport *transport);

/**
 * rs_endpoint_isendv:
 * @iov: (array length=n_iov): the runs the message is made of, in order; the array and the
 *   bytes stay untouched until the send is done
 * @n_iov: >= 1
 *
 * As rs_endpoint_isend() for the concatenation of @iov (at most 2^31-1 bytes). Only for a
 * transport with rs_transport_has_iov(). The receiver sees one message; it may receive it
 * into one buffer or into runs of its own.
 */
gboolean rs_endpoint_isendv(RsEndpoint *endpoint, guint32 peer, guint32 tag, const RsIovec *iov,
                            guint n_iov, RsTransportRequest *req, GError **error);

/** rs_endpoint_irecvv: As rs_endpoint_irecv() into the runs of @iov, filled in order. */
gboolean rs_endpoint_irecvv(RsEndpoint *endpoint, guint32 peer, guint32 tag, const RsIovec *iov,
                            guint n_iov, RsTransportRequest *req, GError **error);

/**
 * rs_endpoint_progress:
 * @timeout_s: < 0: one pass, then return; 0: block until something happened; > 0: block
 *   at most this many seconds
 * @error: RS_TRANSPORT_ERROR_MISMATCH naming both ranks, the tags and the sizes;
 *   RS_TRANSPORT_ERROR_ABORTED; RS_TRANSPORT_ERROR_FAILED
 *
 * Advances the posted operations of this endpoint. Blocking ends as soon as an operation
 * of this endpoint completed, or anything that may complete one happened, since the
 * previous call returned, so a caller that looks at its requests between calls never
 * sleeps through a completion. Callers loop: look at req->done, call again.
 *
 * Returns: TRUE on success (a timeout with nothing completed is not an error here: the
 * caller sees no request done and decides).
 */
gboolean rs_endpoint_progress(RsEndpoint *endpoint, double timeout_s, GError **error);

/**
 * rs_endpoint_check_no_stray:
 * @error: RS_TRANSPORT_ERROR_MISMATCH naming this rank, the peer, the tag and the size of
 *   the first message that arrived and no receive took (a duplicated or stray message), or
 *   of a send of this rank that still waits for its receiver
 *
 * Called after a barrier that every rank reaches once all its operations completed: any
 * message still queued then was never asked for. Transports that cannot look
 * (rs_transport_can_check_stray() FALSE) return TRUE.
 *
 * Returns: TRUE when nothing is left over.
 */
gboolean rs_endpoint_check_no_stray(RsEndpoint *endpoint, GError **error);

/** rs_transport_can_check_stray: Returns: TRUE when rs_endpoint_check_no_stray() looks
 * (host, mpi). */
gboolean rs_transport_can_check_stray(const RsTransport *transport);

/** rs_endpoint_barrier: Waits until every rank reached the barrier. Returns: TRUE on success. */
gboolean rs_endpoint_barrier(RsEndpoint *endpoint, GError **error);

/**
 * rs_endpoint_gather:
 * @data: (transfer none): this rank's bytes (any size, may differ between ranks)
 * @all_out: (out) (transfer full) (nullable) (element-type GBytes): on rank 0, the bytes of
 *   every rank in rank order; NULL on the other ranks
 *
 * Collective: every rank calls it. Returns: TRUE on success.
 */
gboolean rs_endpoint_gather(RsEndpoint *endpoint, GBytes *data, GPtrArray **all_out,
                            GError **error);

/**
 * rs_endpoint_bcast:
 * @data: (transfer none) (nullable): rank 0's bytes; ignored on the other ranks
 * @data_out: (out) (transfer full): rank 0's bytes, on every rank
 *
 * Collective. Returns: TRUE on success.
 */
gboolean rs_endpoint_bcast(RsEndpoint *endpoint, GBytes *data, GBytes **data_out,
                           GError **error);

/**
 * rs_endpoint_now_s:
 * Returns: a monotonic clock in seconds, the same one for every rank of one process.
 */
double rs_endpoint_now_s(const RsEndpoint *endpoint);

G_END_DECLS

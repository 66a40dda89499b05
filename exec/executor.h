/* exec/ — runs plans with real bytes and measures them. It uses plan/ (and everything
 * below), never sim/: a measurement knows nothing of the prediction it is compared with.
 * It owns:
 *   executor.h     the executor (this header): buffers, posting, packing, relays, timing
 *   schedule.h     the chunk schedule from the plan alone (chunks, slots, each rank's order)
 *   transport.h    the transport table and registry (host threads, MPI processes);
 *                  transport-private.h what backends fill in; transport-mpi-unavailable.c
 *                  the backend of builds without MPI
 *   region.h       a box's elements in a local buffer, packed to and from messages
 *   pattern.h      the position-unique fill pattern and the validation of destinations
 *   calibrate.h    measuring a transport and fitting the cost model's figures to it
 *
 */
/* executor.h — runs a plan for real: every rank owns private buffers for its source shards,
 * destination shards and staging buffers, and moves the plan's bytes through a transport.
 *
 * Per rank, in phase order, the executor posts the chunks of the messages it sends and
 * receives, packs each send chunk from its boxes (or sends straight from the shard when the
 * chunk is one contiguous run of it), unpacks each received chunk into its boxes, performs
 * its local copies, and forwards relays (gather-broadcast chains) chunk by chunk as soon as
 * the bytes they forward have arrived, as NCCL's pipelined ring broadcast does. With a
 * transport that takes scatter-gather lists (host), a chunk whose pieces have rows of at
 * least 64 bytes is described by the runs of the shards it covers instead of being packed:
 * the transport then copies from the sender's shard rows into the receiver's shard rows,
 * one copy per byte.
 *
 * Order and bounds. Every network message is cut into chunks of chunk_bytes. Each chunk
 * gets a key (phase, slot, colour, message, chunk) where slot is the chunk's place in its
 * relay chain (a chunk that forwards bytes gets a slot above the chunks that bring them)
 * and colour its message's colour (schedule.h: ranks posting a colour meet). Every
 * rank posts its chunk operations in key order, at most `window` at a time. Both ends of a
 * chunk see the same key, so sends and receives between two ranks are posted in the same
 * order on both sides; and the operation with the smallest unfinished key can always
 * complete (its dependencies have smaller keys), so the schedule cannot deadlock however
 * small the window. Pack and unpack memory per rank is at most window × chunk_bytes.
 *
 * Device buffers. With a transport whose ranks keep their buffers in GPU memory
 * (rs_transport_has_device_buffers: cuda-local, nccl) the same schedule runs with every
 * buffer, pack buffer included, in device memory: filling, packing, unpacking, local copies
 * and the checks are CUDA kernels queued on the rank's stream (exec/cuda-kernels.cu, the
 * index arithmetic of exec/region-index.h), in the order the host code issues them, and the
 * stream is drained before a run's time is taken. Message completion times then come from
 * the transport's CUDA events (RsTransportRequest.done_s).
 *
 * Validation: source shards are filled with the pattern of pattern.h; after each run every
 * element of every destination box is compared with its expected value and every padding
 * element of a destination buffer with zero. Timing covers only the movement of bytes
 * (from the first rank leaving the start barrier to the last rank's last completion), not
 * filling or checking. Times of all ranks are put on one axis through the monotonic clock,
 * which the ranks of one machine share; ranks on several machines would need synchronised
 * clocks for the trace and the run time to be exact.
 */
#pragma once

#include <glib.h>

#include "exec/transport.h"
#include "plan/plan.h"
#include "layout/refit.h"
#include "base/trace.h"

G_BEGIN_DECLS

#define RS_EXEC_ERROR (rs_exec_error_quark())
GQuark rs_exec_error_quark(void);

typedef enum {
    RS_EXEC_ERROR_INVALID, /* options or a plan that cannot be executed (message names it) */
    RS_EXEC_ERROR_MEMORY,  /* the buffers do not fit in this machine's memory */
    RS_EXEC_ERROR_STALLED, /* no operation can make progress (a plan or transport fault) */
} RsExecError;

#define RS_EXEC_DEFAULT_CHUNK_BYTES ((guint64)4 << 20)
#define RS_EXEC_DEFAULT_WINDOW 8
#define RS_EXEC_MAX_CHUNK_BYTES ((guint64)1 << 30)

typedef enum {
    RS_EXEC_FAULT_NONE,
    RS_EXEC_FAULT_DROP,      /* the sender never sends message fault_message */
    RS_EXEC_FAULT_DELAY,     /* the sender waits fault_delay_s before its first chunk */
    RS_EXEC_FAULT_STOP,      /* rank fault_rank stops itself (SIGSTOP) at the first run's start */
    RS_EXEC_FAULT_KILL,      /* rank fault_rank kills itself (SIGKILL) at the first run's start */
    RS_EXEC_FAULT_DUPLICATE, /* the sender sends chunk 0 of message fault_message twice */
} RsExecFault;

typedef struct {
    guint64 chunk_bytes;        /* 0: RS_EXEC_DEFAULT_CHUNK_BYTES; at most 2^30 */
    guint window;               /* chunk operations in flight per rank; 0: default 8 */
    guint n_runs;               /* 0 or 1: one run */
    gboolean no_validate;       /* skip filling and checking (timing only) */
    double timeout_s;           /* > 0: fail when no operation of a rank completes for this
                                 * long; 0: wait forever */
    guint64 memory_limit_bytes; /* host: refuse when all buffers exceed it; 0: 90% of RAM */
    /* Test option: flip byte corrupt_byte of network message corrupt_message when it
     * arrives, before it is unpacked. */
    gboolean corrupt;
    guint32 corrupt_message;
    guint64 corrupt_byte;
    /* Test option: one injected fault (RS_EXEC_FAULT_NONE: none), for the checks that must
     * catch it: a dropped or delayed network message is caught by timeout_s (required, > 0;
     * a delay must exceed it; the delayed sender keeps serving its transport meanwhile, so
     * the job ends within the timeout, not after the delay), a duplicated one by the check
     * for stray messages after each run (or, when a later receive from the same sender
     * takes it, by that receive's tag and size check or by the validation; host and mpi
     * transports), a stopped rank by timeout_s in the others, a killed rank by the
     * launcher (mpirun; reshard run's supervisor names it). fault_message names the
     * message, fault_rank the rank (mpi transport only: stopping or killing a thread would
     * take the whole process). */
    RsExecFault fault;
    guint32 fault_message;
    guint32 fault_rank;
    double fault_delay_s;
} RsExecOptions;

/* The first destination element that does not hold its expected value. */
typedef struct {
    guint32 tensor_idx;
    guint32 rank;        /* global rank (GPU) */
    gboolean padding;    /* TRUE: a padding element that is not zero (see local_index) */
    guint64 local_index; /* element of the rank's local buffer */
    guint n_dims;
    gint64 global_index[RS_MAX_DIMS];
    guint64 flat_index;  /* global row-major index */
    guint elem_bytes;
    guint8 expected[8];
    guint8 got[8];
} RsExecMismatch;

typedef struct {
    guint n_ranks;          /* ranks that took part (transport world size) */
    guint n_runs;           /* runs done (a failed validation stops further runs) */
    GArray *run_s;          /* double: measured time of each run, seconds */
    double median_s;        /* median of run_s */
    guint64 bytes_moved;    /* bytes between distinct ranks, per run */
    guint64 local_bytes;    /* bytes of local copies, per run */
    RsTrace *trace;         /* per message post and completion times of the median run */
    GArray *phase_s;        /* double per phase: first post to last completion, median run */
    gboolean validated;     /* FALSE with no_validate */
    guint64 n_bad_elems;    /* differing elements over all ranks, in the first failing run */
    RsExecMismatch first_bad; /* valid when n_bad_elems > 0: lowest (tensor, rank) */
    /* Statistics of one run, summed (n_*) or maximised (max_, peak_) over ranks. */
    guint64 n_sends;        /* transport send calls (chunks sent) */
    guint64 n_zero_copy;    /* chunks sent or received without packing */
    guint64 n_pack_allocs;  /* pack buffers allocated (not taken from the pool) in the run */
    guint max_outstanding;  /* most chunk operations one rank had in flight */
    guint64 peak_pack_bytes; /* most pack/unpack buffer memory one rank held, bytes, as
                              * allocated, in use and idle in its pool (<= window × chunk) */
    guint64 buffer_bytes;   /* shard and staging bytes all ranks allocated */
} RsExecResult;

/**
 * rs_exec_check_refit:
 * @refit: tensors and layouts
 * @error: RS_EXEC_ERROR_INVALID naming the first tensor of half-byte MXFP4 elements on the
 *   wire (the executor's buffers, packs and validation address whole bytes per element;
 *   MXFP4 refits are planned and simulated, not run)
 *
 * What rs_exec_run() refuses of @refit itself, for a caller to check before it plans.
 * Returns: TRUE when the executor can run @refit.
 */
gboolean rs_exec_check_refit(const RsRefit *refit, GError **error);

/**
 * rs_exec_run:
 * @transport: an open transport; with `mpi` every process of the job calls this
 * @plan: the plan, built from @refit
 * @refit: tensors and layouts; its ranks (every rank of a source or destination layout)
 *   become transport ranks 0..n-1 in increasing order
 * @options: (nullable): NULL for the defaults
 * @result: (out caller-allocates): filled in the process hosting rank 0; the other processes
 *   get n_ranks, n_runs, validated and n_bad_elems only. Clear with rs_exec_result_clear().
 * @error: RS_EXEC_ERROR_INVALID (an option out of range, --corrupt-byte naming a local or
 *   missing message or a byte beyond it, a transfer whose source does not hold its box, a
 *   tensor of half-byte MXFP4 elements),
 *   RS_EXEC_ERROR_MEMORY (the buffers and the transport's queues for the ranks of this
 *   process, rs_transport_get_launch_bytes(), would exceed the limit; the message gives
 *   the figures), RS_EXEC_ERROR_STALLED, RS_TRANSPORT_ERROR_* from the transport (a failed or
 *   mismatched transfer, a timeout naming the message and chunk)
 *
 * A validation failure is not an error: it is reported in @result (n_bad_elems,
 * first_bad), and the caller decides (reshard exits 3).
 *
 * Returns: TRUE when every run completed.
 */
gboolean rs_exec_run(RsTransport *transport, const RsPlan *plan, const RsRefit *refit,
                     const RsExecOptions *options, RsExecResult *result, GError **error);

void rs_exec_result_clear(RsExecResult *result);

/**
 * rs_exec_mismatch_format:
 * Returns: (transfer full): "tensor w1 (index 0), rank 3, global index [1, 5] (flat 13):
 *   expected 0x3f1c, got 0xc01c" (bytes as a little-endian number of the element's size).
 */
char *rs_exec_mismatch_format(const RsExecMismatch *mismatch, const RsRefit *refit);

/**
 * rs_exec_get_buffer_bytes:
 * Returns: the bytes of source, destination and staging buffers all ranks of @plan need.
 */
guint64 rs_exec_get_buffer_bytes(const RsPlan *plan, const RsRefit *refit);

G_END_DECLS

/* schedule.h — the executor's chunk schedule: what every rank sends and receives, cut into
 * which chunks, in which order, computed from the plan alone (no transport, no buffers).
 *
 * Every network message (src != dst) is cut into chunks of chunk_bytes; the last chunk
 * holds the rest (a message of 2.5 chunks has 3 chunks, the last half full). A local
 * message (src == dst) has no chunks: its transfers are copied one by one.
 *
 * Dependencies. A relay transfer forwards bytes another transfer of the same phase
 * brought (RsTransfer.depends_on). A chunk depends on a prefix of each message whose
 * transfers it forwards: the first need_bytes of that message must have arrived before the
 * chunk is sent. When the relay forwards its box exactly as it arrived (one piece on both
 * hops: "aligned"), the chunk needs only the bytes up to the matching end of the
 * dependency; otherwise it needs the dependency's whole transfer. Dependencies on earlier
 * phases are dropped: a phase starts after every earlier phase has finished.
 *
 * Slots. Chunks get a slot, their place in their relay chain: chunk j of a message with no
 * dependency has slot j; a chunk's slot is above its predecessor's in the message and above
 * the slot of the chunk holding the last byte it needs from each dependency. A local
 * message gets one slot, above those its transfers need. Slots are assigned in topological
 * order of the message dependencies (Kahn's algorithm) inside a phase. So in a gather-
 * broadcast chain 0 -> 2 -> 3 of 3 chunks each, the chunks of 0 -> 2 have slots 0, 1, 2 and
 * those of 2 -> 3 slots 1, 2, 3: chunk j is forwarded one step after it arrives.
 *
 * Order and window. Every rank posts its chunk operations in increasing key (phase, slot,
 * colour, message, chunk), both ends of a chunk see the same key, and at most `window`
 * operations are in flight per rank (the window is the executor's; it does not change the
 * order): with a window of 2, a rank sending a 3-chunk message posts chunks 0 and 1, and
 * chunk 2 when one of them has completed. The operation with the smallest unfinished key can
 * always complete (its dependencies have smaller keys), so no window, however small,
 * deadlocks. The colour (base/edge-colour.h, König's colouring of each phase's network
 * messages in plan order) makes the operations ranks post together meet: each colour is a set of
 * messages in which every rank sends at most once and receives at most once. Without it a
 * slot's operations went by message, and the plan orders messages by (src, dst), so every
 * sender walked its receivers from the lowest and every receiver its senders from the
 * lowest: a window of 8 mostly held operations whose other end was busy elsewhere, and the
 * flow model of this schedule (sim/flow-sim.h, RS_FLOW_SIM_POST_WINDOW) put the default
 * scenario's plans at 2.8 to 3.6 times their whole-phase time (docs/DESIGN.md, "The
 * executor's window").
 */
#pragma once

#include <glib.h>

#include "plan/plan.h"

G_BEGIN_DECLS

/* The first need_bytes of message msg must have arrived. */
typedef struct {
    guint32 msg;
    guint64 need_bytes;
} RsScheduleDep;

/* One chunk operation of a rank, as rs_schedule_get_rank_ops() lists them. */
typedef struct {
    guint32 phase;
    guint64 slot;
    guint32 msg;   /* plan message */
    guint32 chunk; /* chunk of the message, from 0 */
    gboolean is_send;
    guint32 colour; /* the message's colour (rs_schedule_get_message_colour()) */
} RsScheduleOp;

typedef struct _RsSchedule RsSchedule;

/**
 * rs_schedule_new:
 * @plan: the plan; borrowed, must outlive the schedule
 * @chunk_bytes: chunk size in bytes, > 0
 * @aligned: (array length=n_transfers) (nullable): per transfer of @plan, TRUE when it is a
 *   relay of a same-phase transfer and both hops are one piece (the forwarded bytes are the
 *   arrived bytes in the same order); NULL: no transfer is aligned
 * @error: RS_EXEC_ERROR_INVALID when the message dependencies inside a phase form a cycle
 *
 * Deterministic. O(chunks + transfers × chunks they span + message dependencies).
 *
 * Returns: (transfer full): the schedule, or NULL on error.
 */
RsSchedule *rs_schedule_new(const RsPlan *plan, guint64 chunk_bytes, const gboolean *aligned,
                            GError **error);

void rs_schedule_free(RsSchedule *schedule);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsSchedule, rs_schedule_free)

/** rs_schedule_get_chunk_bytes: Returns: the chunk size in bytes. */
guint64 rs_schedule_get_chunk_bytes(const RsSchedule *schedule);

/**
 * rs_schedule_get_transfer_message:
 * @transfer: a transfer index of the plan
 * Returns: the message holding it.
 */
guint32 rs_schedule_get_transfer_message(const RsSchedule *schedule, guint transfer);

/**
 * rs_schedule_get_transfer_offset:
 * @transfer: a transfer index of the plan
 * Returns: the byte offset of the transfer in its message's wire image (the transfers of a
 *   message one after the other, in plan order).
 */
guint64 rs_schedule_get_transfer_offset(const RsSchedule *schedule, guint transfer);

/**
 * rs_schedule_get_n_chunks:
 * @msg: a message index of the plan
 * Returns: ceil(size / chunk_bytes) for a network message, 0 for a local one.
 */
guint rs_schedule_get_n_chunks(const RsSchedule *schedule, guint32 msg);

/**
 * rs_schedule_get_chunk_range:
 * @msg: a network message; @chunk: below rs_schedule_get_n_chunks()
 * @begin_out: (out): first byte of the chunk in the message; @end_out: (out): one past its
 *   last byte (the message's size for the last chunk)
 */
void rs_schedule_get_chunk_range(const RsSchedule *schedule, guint32 msg, guint chunk,
                                 guint64 *begin_out, guint64 *end_out);

/**
 * rs_schedule_get_chunk_slot:
 * @msg: a network message; @chunk: below rs_schedule_get_n_chunks()
 * Returns: the chunk's slot (see the top of this file).
 */
guint64 rs_schedule_get_chunk_slot(const RsSchedule *schedule, guint32 msg, guint chunk);

/**
 * rs_schedule_get_local_slot:
 * @msg: a local message (src == dst)
 * Returns: its slot: 0, or one above the slot of the last chunk any of its transfers needs.
 */
guint64 rs_schedule_get_local_slot(const RsSchedule *schedule, guint32 msg);

/**
 * rs_schedule_get_chunk_deps:
 * @msg: a network message; @chunk: below rs_schedule_get_n_chunks()
 * @n_deps_out: (out): number of entries
 * Returns: (transfer none) (array length=n_deps_out): the prefixes the chunk waits for, one
 *   per message, in the order of the chunk's transfers; valid while @schedule lives.
 */
const RsScheduleDep *rs_schedule_get_chunk_deps(const RsSchedule *schedule, guint32 msg,
                                                guint chunk, guint *n_deps_out);

/**
 * rs_schedule_get_message_colour:
 * @msg: a message index of the plan
 * Returns: its colour: rs_edge_colour_bipartite() over the messages of its phase in plan
 *   order (base/edge-colour.h); 0 for a local message.
 */
guint32 rs_schedule_get_message_colour(const RsSchedule *schedule, guint32 msg);

/**
 * rs_schedule_get_rank_ops:
 * @gpu: a global rank (GPU) of the plan
 *
 * The chunk operations of @gpu, sends and receives of its network messages, in the order
 * it posts them: increasing (phase, slot, colour, message, chunk). O(chunks of the plan + k log k)
 * for k operations of @gpu.
 *
 * Returns: (transfer full) (element-type RsScheduleOp): the operations; empty when @gpu has
 *   no network message.
 */
GArray *rs_schedule_get_rank_ops(const RsSchedule *schedule, guint32 gpu);

G_END_DECLS

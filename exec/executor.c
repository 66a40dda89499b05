/* executor.c — the plan executed with real bytes; see executor.h for the model.
 *
 * Shared, read-only state (ExecContext) is computed once per process before the ranks
 * start: the rank map, the staging boxes, and the schedule (schedule.h: each transfer's
 * message and byte offset in it, the chunks of every network message with their slot and
 * their dependencies, which prefix of which other message a relay chunk forwards). Each
 * rank then builds its own view (Rank): buffers, the pieces of its messages mapped onto its
 * buffers (RsRegion), and its chunk operations in the schedule's key order. The wire image
 * of a transfer is the concatenation of its pieces — the transfer's box cut by the sender's
 * boxes and then by the receiver's boxes, in that order — each in row-major order, so both
 * ends agree on it without talking and each end only needs its own side's memory layout. */
#include "exec/executor.h"

#include "exec/pattern.h"
#include "exec/region.h"
#include "exec/schedule.h"
#include "exec/transport-private.h"

#include "base/hash.h"
#include "base/stats.h"

#include <math.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK(rs-exec-error-quark, rs_exec_error)

/* --- shared context --- */

typedef struct {
    const RsPlan *plan;
    const RsRefit *refit;
    RsExecOptions opts;
    guint64 chunk;
    guint n_ranks;
    guint32 *gpu_of_rank;   /* [n_ranks], increasing */
    GHashTable *rank_of_gpu; /* gpu + 1 → rank + 1 */
    RsSchedule *schedule;    /* chunks, their slots and dependencies */
    RsLocalBox *staging_local; /* per tensor: the whole tensor, row-major */
    GHashTable *staging;       /* (tensor << 32 | gpu) + 1 present when a staging buffer is used */
    gboolean is_root_process; /* this process hosts rank 0 */
    gboolean use_iov;         /* the transport takes scatter-gather lists */
    /* Written by rank 0 only. */
    RsExecResult *result;
    GArray *run_rows; /* per run: double[2 × n_messages] (start, end) */
} ExecContext;

/* Staging buffers are keyed by (tensor, GPU); rs_hash_u64 mixes the key, where folding
 * its halves with XOR would give every (tensor, GPU) with the same tensor ^ (GPU + 1) one
 * hash value (see base/hash.h). */
static guint64
staging_key(guint32 tensor, guint32 gpu)
{
    return ((guint64)tensor << 32 | gpu) + 1;
}

static gint
rank_of(const ExecContext *ctx, guint32 gpu)
{
    gpointer v = g_hash_table_lookup(ctx->rank_of_gpu, GUINT_TO_POINTER(gpu + 1));
    return v ? (gint)GPOINTER_TO_UINT(v) - 1 : -1;
}

/* Elements a rank's local buffer needs: the layout's size, or more if a box reaches
 * further (offsets and strides decide, not the label). */
static guint64
buffer_elems(const RsLayout *layout, guint index)
{
    guint64 n = rs_layout_get_local_n_elems(layout, index);
    guint n_boxes;
    const RsLocalBox *boxes = rs_layout_get_boxes(layout, index, &n_boxes);
    for (guint b = 0; b < n_boxes; b++) {
        if (rs_box_is_empty(&boxes[b].box))
            continue;
        gint64 end = (gint64)boxes[b].offset_elems;
        for (guint d = 0; d < boxes[b].box.n_dims; d++)
            end += (rs_box_get_count(&boxes[b].box, d) - 1) * MAX(boxes[b].strides_elems[d], 0);
        n = MAX(n, (guint64)end + 1);
    }
    return n;
}

/* The pieces of one transfer: its box cut by the boxes that hold it on the sending side
 * (the staging buffer or the source shard) and then by those on the receiving side. */
typedef struct {
    RsBox box;
    const RsLocalBox *src_local;
    const RsLocalBox *dst_local;
} PieceBox;

static gboolean
side_boxes(const ExecContext *ctx, const RsTransfer *tr, gboolean src_side,
           const RsLocalBox **boxes, guint *n_boxes, GError **error)
{
    *boxes = rs_transfer_get_side_boxes(ctx->refit, tr, src_side,
                                        &ctx->staging_local[tr->tensor_idx], n_boxes);
    if (*boxes == NULL) {
        const RsRefitTensor *t = rs_refit_get_tensor(ctx->refit, tr->tensor_idx);
        gboolean from_src = src_side && !(tr->flags & RS_TRANSFER_FROM_DESTINATION);
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "%s: a transfer %u -> %u uses rank %u, which is not in the %s layout",
                    t->name, tr->src, tr->dst, src_side ? tr->src : tr->dst,
                    from_src ? "source" : "destination");
        return FALSE;
    }
    return TRUE;
}

static gboolean
build_pieces(const ExecContext *ctx, guint transfer, GArray *out, GError **error)
{
    const RsTransfer *tr = rs_plan_get_transfer(ctx->plan, transfer);
    const RsLocalBox *src_boxes, *dst_boxes;
    guint n_src, n_dst;
    if (!side_boxes(ctx, tr, TRUE, &src_boxes, &n_src, error) ||
        !side_boxes(ctx, tr, FALSE, &dst_boxes, &n_dst, error))
        return FALSE;
    g_array_set_size(out, 0);
    guint64 covered = 0;
    for (guint i = 0; i < n_src; i++) {
        RsBox a;
        if (!rs_box_intersect(tr->box, &src_boxes[i].box, &a))
            continue;
        for (guint j = 0; j < n_dst; j++) {
            PieceBox p;
            if (!rs_box_intersect(&a, &dst_boxes[j].box, &p.box))
                continue;
            p.src_local = &src_boxes[i];
            p.dst_local = &dst_boxes[j];
            g_array_append_val(out, p);
            covered += rs_box_get_n_elems(&p.box);
        }
    }
    guint64 want = rs_box_get_n_elems(tr->box);
    if (covered != want) {
        const RsRefitTensor *t = rs_refit_get_tensor(ctx->refit, tr->tensor_idx);
        g_autofree char *box = rs_box_format(tr->box);
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "%s: transfer %u -> %u of %s: the buffers of both ranks hold %" G_GUINT64_FORMAT
                    " of its %" G_GUINT64_FORMAT " elements",
                    t->name, tr->src, tr->dst, box, covered, want);
        return FALSE;
    }
    return TRUE;
}

static void
exec_context_clear(ExecContext *ctx)
{
    g_free(ctx->gpu_of_rank);
    if (ctx->rank_of_gpu)
        g_hash_table_unref(ctx->rank_of_gpu);
    rs_schedule_free(ctx->schedule);
    g_free(ctx->staging_local);
    if (ctx->staging)
        g_hash_table_unref(ctx->staging);
    if (ctx->run_rows)
        g_array_unref(ctx->run_rows);
}

static gint
cmp_u32(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

/* Stage: the options with their defaults filled in; refuses a chunk over the limit. */
static gboolean
context_set_options(ExecContext *ctx, const RsExecOptions *opts, GError **error)
{
    if (opts != NULL)
        ctx->opts = *opts;
    if (ctx->opts.chunk_bytes == 0)
        ctx->opts.chunk_bytes = RS_EXEC_DEFAULT_CHUNK_BYTES;
    if (ctx->opts.window == 0)
        ctx->opts.window = RS_EXEC_DEFAULT_WINDOW;
    if (ctx->opts.n_runs == 0)
        ctx->opts.n_runs = 1;
    if (ctx->opts.chunk_bytes > RS_EXEC_MAX_CHUNK_BYTES) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "chunk size %" G_GUINT64_FORMAT " bytes is over the limit of 1 GiB "
                    "(transports take at most 2^31 - 1 bytes per call)",
                    ctx->opts.chunk_bytes);
        return FALSE;
    }
    ctx->chunk = ctx->opts.chunk_bytes;
    return TRUE;
}

/* Stage: the ranks, every rank of every layout (empty shards included), in increasing
 * order; and every tensor of whole-byte elements: MXFP4's half-byte values (two per byte)
 * are planned and simulated, not run (the buffers, packs and validation address bytes per
 * element; it failed to allocate a 0-byte buffer). */
gboolean
rs_exec_check_refit(const RsRefit *refit, GError **error)
{
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        if (rs_refit_tensor_get_elem_bytes(t) == 0) {
            g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                        "\"%s\" is %s on the wire: the executor moves whole-byte elements, "
                        "and MXFP4's half-byte values are planned and simulated (reshard plan, "
                        "simulate), not run; choose another --dtype, --dst-dtype or --infer-dtype",
                        t->name, rs_dtype_get_name(t->dtype));
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
context_map_ranks(ExecContext *ctx, GError **error)
{
    const RsRefit *refit = ctx->refit;
    if (!rs_exec_check_refit(refit, error))
        return FALSE;
    g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autoptr(GArray) gpus = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        const RsLayout *layouts[2] = {t->src, t->dst};
        for (guint l = 0; l < 2; l++)
            for (guint e = 0; e < rs_layout_get_n_ranks(layouts[l]); e++) {
                guint32 g = rs_layout_get_rank(layouts[l], e);
                if (g_hash_table_add(seen, GUINT_TO_POINTER(g + 1)))
                    g_array_append_val(gpus, g);
            }
    }
    g_array_sort(gpus, cmp_u32);
    ctx->n_ranks = gpus->len;
    ctx->gpu_of_rank = g_memdup2(gpus->data, MAX(gpus->len, 1) * sizeof(guint32));
    ctx->rank_of_gpu = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint r = 0; r < gpus->len; r++)
        g_hash_table_insert(ctx->rank_of_gpu, GUINT_TO_POINTER(ctx->gpu_of_rank[r] + 1),
                            GUINT_TO_POINTER(r + 1));
    if (ctx->n_ranks == 0) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID, "the refit has no ranks");
        return FALSE;
    }
    return TRUE;
}

/* Stage: checks that every message names ranks of the refit and records which (tensor,
 * GPU) pairs use a staging buffer. */
static gboolean
context_find_staging(ExecContext *ctx, GError **error)
{
    const RsPlan *plan = ctx->plan;
    ctx->staging = g_hash_table_new_full(rs_hash_u64, rs_hash_u64_equal, g_free, NULL);
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (rank_of(ctx, msg->src) < 0 || rank_of(ctx, msg->dst) < 0) {
            g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                        "message %u (%u -> %u) names a rank that is in no layout", m, msg->src,
                        msg->dst);
            return FALSE;
        }
        for (guint k = msg->first_transfer; k < msg->first_transfer + msg->n_transfers; k++) {
            const RsTransfer *tr = rs_plan_get_transfer(plan, k);
            if (tr->flags & RS_TRANSFER_TO_STAGING) {
                guint64 key = staging_key(tr->tensor_idx, tr->dst);
                g_hash_table_add(ctx->staging, g_memdup2(&key, sizeof key));
            }
            if (tr->flags & RS_TRANSFER_FROM_STAGING) {
                guint64 key = staging_key(tr->tensor_idx, tr->src);
                g_hash_table_add(ctx->staging, g_memdup2(&key, sizeof key));
            }
        }
    }
    guint n_tensors = rs_refit_get_n_tensors(ctx->refit);
    ctx->staging_local = g_new0(RsLocalBox, MAX(n_tensors, 1));
    for (guint t = 0; t < n_tensors; t++) {
        const RsRefitTensor *rt = rs_refit_get_tensor(ctx->refit, t);
        rs_local_box_init_row_major(&ctx->staging_local[t], rt->n_dims, rt->shape);
    }
    return TRUE;
}

/* Stage: the test option --corrupt-byte must name a byte of a network message. */
static gboolean
context_check_corrupt(const ExecContext *ctx, GError **error)
{
    if (!ctx->opts.corrupt)
        return TRUE;
    guint n_messages = rs_plan_get_n_messages(ctx->plan);
    guint32 m = ctx->opts.corrupt_message;
    /* Say which part is wrong: the message, or the byte (the message's size given). */
    if (m >= n_messages) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "corrupt byte %" G_GUINT64_FORMAT " of message %u: the plan has %u "
                    "messages (0-%u); pick a network message (src != dst)",
                    ctx->opts.corrupt_byte, m, n_messages, n_messages - 1);
        return FALSE;
    }
    const RsMessage *msg = rs_plan_get_message(ctx->plan, m);
    if (msg->src == msg->dst) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "corrupt byte %" G_GUINT64_FORMAT " of message %u: it is a local copy on "
                    "rank %u; pick a network message (src != dst)",
                    ctx->opts.corrupt_byte, m, msg->src);
        return FALSE;
    }
    if (ctx->opts.corrupt_byte >= msg->size_bytes) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "corrupt byte %" G_GUINT64_FORMAT " of message %u: it has %" G_GUINT64_FORMAT
                    " bytes; pick a byte below that",
                    ctx->opts.corrupt_byte, m, msg->size_bytes);
        return FALSE;
    }
    return TRUE;
}

/* Stage: an injected fault names a network message or a rank of the plan, and one that
 * would hang without a timeout has one. */
static gboolean
context_check_fault(const ExecContext *ctx, GError **error)
{
    const RsExecOptions *o = &ctx->opts;
    if (o->fault == RS_EXEC_FAULT_NONE)
        return TRUE;
    if (o->no_validate) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "an injected fault needs validation (no_validate is set)");
        return FALSE;
    }
    if (o->fault == RS_EXEC_FAULT_DROP || o->fault == RS_EXEC_FAULT_DELAY ||
        o->fault == RS_EXEC_FAULT_DUPLICATE) {
        guint n_messages = rs_plan_get_n_messages(ctx->plan);
        guint32 m = o->fault_message;
        if (m >= n_messages ||
            rs_plan_get_message(ctx->plan, m)->src == rs_plan_get_message(ctx->plan, m)->dst) {
            g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                        "fault on message %u: the plan has %u messages; pick a network message "
                        "(src != dst)",
                        m, n_messages);
            return FALSE;
        }
        if (o->fault == RS_EXEC_FAULT_DELAY && (!isfinite(o->fault_delay_s) ||
                                                o->fault_delay_s <= 0 || o->fault_delay_s > 3600)) {
            g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                        "fault delay %g s: must be above 0 and at most 3600 s", o->fault_delay_s);
            return FALSE;
        }
    } else if (o->fault_rank >= ctx->n_ranks) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "fault on rank %u: the plan has ranks 0-%u", o->fault_rank, ctx->n_ranks - 1);
        return FALSE;
    }
    /* A delay ends by itself; the others (a drop, a stop) only through the timeout. */
    if (o->fault != RS_EXEC_FAULT_KILL && o->fault != RS_EXEC_FAULT_DUPLICATE &&
        o->fault != RS_EXEC_FAULT_DELAY && o->timeout_s <= 0) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "this injected fault is caught by the timeout: give one (it would wait for "
                    "ever)");
        return FALSE;
    }
    return TRUE;
}

/* Stage: relay transfers forward exactly what arrived when both hops are one piece.
 * Returns per transfer whether it is such a relay (transfer full), or NULL on error. */
static gboolean *
context_find_aligned(const ExecContext *ctx, GError **error)
{
    const RsPlan *plan = ctx->plan;
    guint n_transfers = rs_plan_get_n_transfers(plan);
    g_autofree gboolean *aligned = g_new0(gboolean, MAX(n_transfers, 1));
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(PieceBox));
    for (guint k = 0; k < n_transfers; k++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, k);
        if (tr->depends_on < 0)
            continue;
        const RsTransfer *dep = rs_plan_get_transfer(plan, (guint)tr->depends_on);
        if (dep->phase != tr->phase || !rs_box_is_equal(tr->box, dep->box))
            continue;
        if (!build_pieces(ctx, k, pieces, error))
            return NULL;
        guint n_k = pieces->len;
        if (!build_pieces(ctx, (guint)tr->depends_on, pieces, error))
            return NULL;
        aligned[k] = n_k == 1 && pieces->len == 1;
    }
    return g_steal_pointer(&aligned);
}

/* The shared state of a run, in stages; on error @ctx holds what was built so far (clear
 * it with exec_context_clear). */
static gboolean
exec_context_init(ExecContext *ctx, const RsPlan *plan, const RsRefit *refit,
                  const RsExecOptions *opts, GError **error)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->plan = plan;
    ctx->refit = refit;
    if (!context_set_options(ctx, opts, error) || !context_map_ranks(ctx, error) ||
        !context_find_staging(ctx, error) || !context_check_corrupt(ctx, error) ||
        !context_check_fault(ctx, error))
        return FALSE;
    g_autofree gboolean *aligned = context_find_aligned(ctx, error);
    if (aligned == NULL)
        return FALSE;
    /* Chunks, their dependencies and slots, phase by phase in dependency order. */
    ctx->schedule = rs_schedule_new(plan, ctx->chunk, aligned, error);
    return ctx->schedule != NULL;
}

/* --- one rank --- */

typedef struct {
    guint64 wire_offset;
    RsRegion region;
} Piece;

typedef struct {
    guint32 msg;
    guint32 peer;       /* transport rank */
    gboolean is_send;
    guint first_piece;  /* into Rank.pieces */
    guint n_pieces;
    guint64 size_bytes;
    guint8 *chunk_done; /* receive side */
    guint prefix_chunks;
    double start_s, end_s;
} RankMsg;

typedef struct {
    RsRegion src, dst;
} LocalPiece;

typedef struct {
    guint32 msg;
    guint32 phase;
    guint first_tpiece; /* into Rank.tpiece_first: per transfer, its first LocalPiece */
    guint n_transfers;
    guint cursor;       /* transfers done this run */
    guint64 prefix_bytes;
    double start_s, end_s;
} RankLocal;

typedef struct {
    guint32 phase;
    guint64 slot;
    guint32 rmsg;  /* into Rank.msgs */
    guint32 chunk;
    RsTransportRequest req;
    guint8 *bounce; /* pack buffer, or NULL when sent from / received into the buffers */
    guint64 bounce_capacity; /* its size as allocated (>= the chunk's bytes) */
    GArray *iov;    /* RsIovec: the runs of the buffers a scatter-gather chunk uses */
    guint8 *ptr;    /* the chunk's bytes when they are one run (bounce or in place) */
    double post_s, done_s;
} Op;

/* What each rank sends to rank 0 after a run. */
typedef struct {
    double t0_abs;    /* the rank's clock when it left the start barrier */
    double elapsed_s; /* from then to its last completion */
    guint64 n_bad;
    RsExecMismatch first;
    guint64 n_sends;
    guint64 n_zero_copy;
    guint64 n_pack_allocs;
    guint32 max_outstanding;
    guint32 n_times;
    guint64 peak_pack_bytes;
    guint64 buffer_bytes;
} RankSummary;

typedef struct {
    guint32 msg;
    guint32 kind; /* 0: start, 1: end */
    double t;
} TimeRecord;

/* An idle pack buffer and its allocated size. */
typedef struct {
    guint8 *ptr;
    guint64 capacity;
} Bounce;

typedef struct {
    const ExecContext *ctx;
    RsEndpoint *ep;
    const RsDeviceOps *dev; /* device buffers (cuda-local, nccl); NULL: host memory */
    guint32 rank;
    guint32 gpu;
    guint8 **src_buf, **dst_buf, **stage_buf; /* per tensor */
    guint64 *dst_elems, *stage_elems;
    GArray *msgs;    /* RankMsg, sorted by plan message */
    GArray *pieces;  /* Piece */
    GArray *locals;  /* RankLocal, sorted by plan message */
    GArray *tpiece_first; /* guint per local transfer + 1 */
    GArray *lpieces; /* LocalPiece */
    GArray *ops;     /* Op, sorted by key */
    GArray *free_bounce; /* Bounce: idle pack buffers kept for reuse */
    guint64 pooled_bounce_bytes;
    GPtrArray *free_iov; /* GArray of RsIovec, reused */
    guint64 bounce_in_use, peak_bounce;
    guint64 buffer_bytes;
    guint64 n_sends, n_zero_copy, n_pack_allocs;
    guint max_outstanding;
    double t0;
    /* The duplicate fault's second send of chunk 0: its request and a copy of its bytes. */
    RsTransportRequest dup_req;
    guint8 *dup_buf;
} Rank;

/* Frees a buffer of the rank's memory (host or device). */
static void
buf_free(Rank *r, guint8 *ptr)
{
    if (r->dev != NULL)
        r->dev->free(r->ep, ptr);
    else
        g_free(ptr);
}

static void
rank_free(Rank *r, guint n_tensors)
{
    for (guint t = 0; r->src_buf != NULL && t < n_tensors; t++) {
        buf_free(r, r->src_buf[t]);
        buf_free(r, r->dst_buf[t]);
        buf_free(r, r->stage_buf[t]);
    }
    g_free(r->src_buf);
    g_free(r->dst_buf);
    g_free(r->stage_buf);
    g_free(r->dst_elems);
    g_free(r->stage_elems);
    if (r->msgs) {
        for (guint i = 0; i < r->msgs->len; i++)
            g_free(g_array_index(r->msgs, RankMsg, i).chunk_done);
        g_array_unref(r->msgs);
    }
    if (r->pieces)
        g_array_unref(r->pieces);
    if (r->locals)
        g_array_unref(r->locals);
    if (r->tpiece_first)
        g_array_unref(r->tpiece_first);
    if (r->lpieces)
        g_array_unref(r->lpieces);
    if (r->ops) {
        for (guint i = 0; i < r->ops->len; i++) {
            buf_free(r, g_array_index(r->ops, Op, i).bounce);
            if (g_array_index(r->ops, Op, i).iov)
                g_array_unref(g_array_index(r->ops, Op, i).iov);
        }
        g_array_unref(r->ops);
    }
    if (r->free_bounce) {
        for (guint i = 0; i < r->free_bounce->len; i++)
            buf_free(r, g_array_index(r->free_bounce, Bounce, i).ptr);
        g_array_unref(r->free_bounce);
    }
    if (r->free_iov)
        g_ptr_array_unref(r->free_iov);
    g_free(r->dup_buf);
}

/* A zeroed buffer of @size bytes in the rank's memory: host pages touched now (so that
 * first-touch faults stay out of the timed part), or device memory. */
static guint8 *
alloc_buffer(Rank *r, guint64 size, GError **error)
{
    guint8 *buf = NULL;
    if (r->dev != NULL) {
        g_autoptr(GError) dev_error = NULL;
        if (!r->dev->alloc(r->ep, size, &buf, &dev_error)) {
            g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_MEMORY,
                        "rank %u (GPU %u): could not allocate %.3f GB of device memory after "
                        "%.3f GB of buffers: %s",
                        r->rank, r->gpu, size / 1e9, r->buffer_bytes / 1e9,
                        dev_error->message);
            return NULL;
        }
    } else {
        buf = g_try_malloc(size);
        if (buf != NULL)
            memset(buf, 0, size);
    }
    if (buf == NULL)
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_MEMORY,
                    "rank %u (GPU %u): could not allocate %.3f GB after %.3f GB of buffers",
                    r->rank, r->gpu, size / 1e9, r->buffer_bytes / 1e9);
    else
        r->buffer_bytes += size;
    return buf;
}

/* Allocates the rank's buffers, touching every page now so that first-touch faults do not
 * land in the timed part, and fills source shards with the pattern. */
static gboolean
rank_alloc(Rank *r, GError **error)
{
    const ExecContext *ctx = r->ctx;
    guint n_tensors = rs_refit_get_n_tensors(ctx->refit);
    r->src_buf = g_new0(guint8 *, MAX(n_tensors, 1));
    r->dst_buf = g_new0(guint8 *, MAX(n_tensors, 1));
    r->stage_buf = g_new0(guint8 *, MAX(n_tensors, 1));
    r->dst_elems = g_new0(guint64, MAX(n_tensors, 1));
    r->stage_elems = g_new0(guint64, MAX(n_tensors, 1));
    for (guint t = 0; t < n_tensors; t++) {
        const RsRefitTensor *rt = rs_refit_get_tensor(ctx->refit, t);
        guint e = rs_refit_tensor_get_elem_bytes(rt);
        gint si = rs_layout_find_rank(rt->src, r->gpu);
        if (si >= 0) {
            guint64 n = buffer_elems(rt->src, (guint)si);
            if (n > 0) {
                /* Padding stays zero; the boxes get the pattern. */
                r->src_buf[t] = alloc_buffer(r, n * e, error);
                if (r->src_buf[t] == NULL)
                    return FALSE;
                guint n_boxes;
                const RsLocalBox *boxes = rs_layout_get_boxes(rt->src, (guint)si, &n_boxes);
                if (!ctx->opts.no_validate) {
                    guint64 seed = rs_pattern_seed(t);
                    for (guint b = 0; b < n_boxes; b++) {
                        if (r->dev == NULL) {
                            rs_pattern_fill_box(seed, rt->n_dims, rt->shape, &boxes[b],
                                                r->src_buf[t], e);
                            continue;
                        }
                        RsBoxIndex bi;
                        rs_box_index_init(&bi, rt->n_dims, rt->shape, &boxes[b]);
                        if (bi.n_elems > 0 &&
                            !r->dev->fill_box(r->ep, seed, &bi, e, r->src_buf[t], error))
                            return FALSE;
                    }
                }
            }
        }
        gint di = rs_layout_find_rank(rt->dst, r->gpu);
        if (di >= 0) {
            guint64 n = buffer_elems(rt->dst, (guint)di);
            r->dst_elems[t] = n;
            if (n > 0) {
                r->dst_buf[t] = alloc_buffer(r, n * e, error);
                if (r->dst_buf[t] == NULL)
                    return FALSE;
            }
        }
        guint64 key = staging_key(t, r->gpu);
        if (g_hash_table_contains(ctx->staging, &key)) {
            guint64 n = rs_layout_get_n_elems(rt->src);
            r->stage_elems[t] = n;
            if (n > 0) {
                r->stage_buf[t] = alloc_buffer(r, n * e, error);
                if (r->stage_buf[t] == NULL)
                    return FALSE;
            }
        }
    }
    /* Device fills run on the rank's stream: done before the first timed run. */
    return r->dev == NULL || r->dev->sync(r->ep, error);
}

static guint8 *
side_buffer(const Rank *r, const RsTransfer *tr, gboolean src_side)
{
    /* The same choice as rs_transfer_get_side_boxes. */
    if (src_side && (tr->flags & RS_TRANSFER_FROM_STAGING))
        return r->stage_buf[tr->tensor_idx];
    if (src_side)
        return (tr->flags & RS_TRANSFER_FROM_DESTINATION) ? r->dst_buf[tr->tensor_idx]
                                                          : r->src_buf[tr->tensor_idx];
    return (tr->flags & RS_TRANSFER_TO_STAGING) ? r->stage_buf[tr->tensor_idx]
                                                : r->dst_buf[tr->tensor_idx];
}

/* The local copy of message @m: its transfers' pieces, source and destination regions. */
static gboolean
rank_build_local(Rank *r, guint m, GArray *boxes, GError **error)
{
    const ExecContext *ctx = r->ctx;
    const RsMessage *msg = rs_plan_get_message(ctx->plan, m);
    RankLocal l = {m, msg->phase, r->tpiece_first->len, msg->n_transfers, 0, 0, 0, 0};
    for (guint k = msg->first_transfer; k < msg->first_transfer + msg->n_transfers; k++) {
        const RsTransfer *tr = rs_plan_get_transfer(ctx->plan, k);
        guint e =
            rs_refit_tensor_get_elem_bytes(rs_refit_get_tensor(ctx->refit, tr->tensor_idx));
        guint first = r->lpieces->len;
        g_array_append_val(r->tpiece_first, first);
        if (!build_pieces(ctx, k, boxes, error))
            return FALSE;
        for (guint p = 0; p < boxes->len; p++) {
            const PieceBox *pb = &g_array_index(boxes, PieceBox, p);
            LocalPiece lp;
            rs_region_init(&lp.src, side_buffer(r, tr, TRUE), pb->src_local, &pb->box, e);
            rs_region_init(&lp.dst, side_buffer(r, tr, FALSE), pb->dst_local, &pb->box, e);
            g_array_append_val(r->lpieces, lp);
        }
    }
    guint end = r->lpieces->len;
    g_array_append_val(r->tpiece_first, end);
    g_array_append_val(r->locals, l);
    return TRUE;
}

/* The rank's side of network message @m: its pieces in wire order on this rank's buffers. */
static gboolean
rank_build_network(Rank *r, guint m, GArray *boxes, GError **error)
{
    const ExecContext *ctx = r->ctx;
    const RsMessage *msg = rs_plan_get_message(ctx->plan, m);
    gboolean is_send = msg->src == r->gpu;
    RankMsg rm = {0};
    rm.msg = m;
    rm.peer = (guint32)rank_of(ctx, is_send ? msg->dst : msg->src);
    rm.is_send = is_send;
    rm.first_piece = r->pieces->len;
    rm.size_bytes = msg->size_bytes;
    for (guint k = msg->first_transfer; k < msg->first_transfer + msg->n_transfers; k++) {
        const RsTransfer *tr = rs_plan_get_transfer(ctx->plan, k);
        guint e =
            rs_refit_tensor_get_elem_bytes(rs_refit_get_tensor(ctx->refit, tr->tensor_idx));
        if (!build_pieces(ctx, k, boxes, error))
            return FALSE;
        guint64 wire = rs_schedule_get_transfer_offset(ctx->schedule, k);
        for (guint p = 0; p < boxes->len; p++) {
            const PieceBox *pb = &g_array_index(boxes, PieceBox, p);
            Piece piece = {wire, {0}};
            rs_region_init(&piece.region, side_buffer(r, tr, is_send),
                           is_send ? pb->src_local : pb->dst_local, &pb->box, e);
            g_array_append_val(r->pieces, piece);
            wire += piece.region.n_bytes;
        }
    }
    rm.n_pieces = r->pieces->len - rm.first_piece;
    if (!is_send)
        rm.chunk_done = g_new0(guint8, rs_schedule_get_n_chunks(ctx->schedule, m));
    g_array_append_val(r->msgs, rm);
    return TRUE;
}

static RankMsg *find_msg(Rank *r, guint32 msg);

/* The rank's chunk operations in the schedule's order. */
static void
rank_order_ops(Rank *r)
{
    g_autoptr(GArray) order = rs_schedule_get_rank_ops(r->ctx->schedule, r->gpu);
    g_array_set_size(r->ops, order->len);
    for (guint i = 0; i < order->len; i++) {
        const RsScheduleOp *so = &g_array_index(order, RsScheduleOp, i);
        Op *op = &g_array_index(r->ops, Op, i);
        op->phase = so->phase;
        op->slot = so->slot;
        op->rmsg = (guint32)(find_msg(r, so->msg) - (RankMsg *)r->msgs->data);
        op->chunk = so->chunk;
    }
}

/* Builds the rank's messages, pieces, local copies and ordered chunk operations. */
static gboolean
rank_build(Rank *r, GError **error)
{
    const RsPlan *plan = r->ctx->plan;
    r->msgs = g_array_new(FALSE, TRUE, sizeof(RankMsg));
    r->pieces = g_array_new(FALSE, FALSE, sizeof(Piece));
    r->locals = g_array_new(FALSE, TRUE, sizeof(RankLocal));
    r->tpiece_first = g_array_new(FALSE, FALSE, sizeof(guint));
    r->lpieces = g_array_new(FALSE, FALSE, sizeof(LocalPiece));
    r->ops = g_array_new(FALSE, TRUE, sizeof(Op));
    r->free_bounce = g_array_new(FALSE, FALSE, sizeof(Bounce));
    r->free_iov = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_autoptr(GArray) boxes = g_array_new(FALSE, FALSE, sizeof(PieceBox));
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        if (msg->src != r->gpu && msg->dst != r->gpu)
            continue;
        gboolean ok = msg->src == msg->dst ? rank_build_local(r, m, boxes, error)
                                           : rank_build_network(r, m, boxes, error);
        if (!ok)
            return FALSE;
    }
    rank_order_ops(r);
    return TRUE;
}

static RankMsg *
find_msg(Rank *r, guint32 msg)
{
    guint lo = 0, hi = r->msgs->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        guint32 v = g_array_index(r->msgs, RankMsg, mid).msg;
        if (v == msg)
            return &g_array_index(r->msgs, RankMsg, mid);
        if (v < msg)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static RankLocal *
find_local(Rank *r, guint32 msg)
{
    guint lo = 0, hi = r->locals->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        guint32 v = g_array_index(r->locals, RankLocal, mid).msg;
        if (v == msg)
            return &g_array_index(r->locals, RankLocal, mid);
        if (v < msg)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Bytes of message @msg that have arrived at this rank (a prefix). */
static guint64
arrived_bytes(Rank *r, guint32 msg)
{
    RankMsg *rm = find_msg(r, msg);
    if (rm != NULL && !rm->is_send)
        return MIN((guint64)rm->prefix_chunks * r->ctx->chunk, rm->size_bytes);
    RankLocal *l = find_local(r, msg);
    return l != NULL ? l->prefix_bytes : 0;
}

static gboolean
send_ready(Rank *r, const Op *op)
{
    const ExecContext *ctx = r->ctx;
    const RankMsg *rm = &g_array_index(r->msgs, RankMsg, op->rmsg);
    guint n_deps;
    const RsScheduleDep *deps =
        rs_schedule_get_chunk_deps(ctx->schedule, rm->msg, op->chunk, &n_deps);
    for (guint i = 0; i < n_deps; i++)
        if (arrived_bytes(r, deps[i].msg) < deps[i].need_bytes)
            return FALSE;
    return TRUE;
}

/* Pack buffers are pooled: a request takes the smallest idle buffer that holds it, so
 * repeated runs and messages whose last chunk is short reuse memory instead of mapping
 * fresh pages (a page fault per 4 KiB cost about a fifth of the CPU time of a 64-byte-row
 * refit). A fresh buffer is the size rounded up to a power of two from 4 KiB, at most a
 * chunk; before allocating one, idle buffers are freed (largest first) until the rank's
 * pack memory, in use and idle, stays within window × chunk. */
static guint64
pack_capacity(guint64 size, guint64 chunk)
{
    guint64 capacity = 4096;
    while (capacity < size && capacity < chunk)
        capacity <<= 1;
    return MAX(MIN(capacity, chunk), size);
}

static guint64
bounce_capacity(const Rank *r, guint64 size)
{
    return pack_capacity(size, r->ctx->chunk);
}

/* The largest pack buffer one chunk operation of @plan takes at chunk @chunk bytes: its
 * largest message's chunk, rounded as bounce_capacity() rounds (so a plan of 16 KiB
 * messages counts 16 KiB per operation in flight, not the chunk). */
static guint64
plan_pack_bytes_per_op(const RsPlan *plan, guint64 chunk)
{
    guint64 largest = 0;
    for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++)
        largest = MAX(largest, MIN(rs_plan_get_transfer(plan, i)->size_bytes, chunk));
    return largest == 0 ? 0 : pack_capacity(largest, chunk);
}

static void
bounce_note_peak(Rank *r)
{
    r->peak_bounce = MAX(r->peak_bounce, r->bounce_in_use + r->pooled_bounce_bytes);
}

static guint8 *
bounce_get(Rank *r, guint64 size, guint64 *capacity_out, GError **error)
{
    guint best = G_MAXUINT;
    for (guint i = 0; i < r->free_bounce->len; i++) {
        guint64 c = g_array_index(r->free_bounce, Bounce, i).capacity;
        if (c >= size &&
            (best == G_MAXUINT || c < g_array_index(r->free_bounce, Bounce, best).capacity))
            best = i;
    }
    if (best != G_MAXUINT) {
        Bounce found = g_array_index(r->free_bounce, Bounce, best);
        g_array_remove_index_fast(r->free_bounce, best);
        r->pooled_bounce_bytes -= found.capacity;
        r->bounce_in_use += found.capacity;
        *capacity_out = found.capacity;
        return found.ptr;
    }
    guint64 capacity = bounce_capacity(r, size);
    guint64 limit = (guint64)r->ctx->opts.window * r->ctx->chunk;
    while (r->free_bounce->len > 0 &&
           r->bounce_in_use + r->pooled_bounce_bytes + capacity > limit) {
        guint largest = 0;
        for (guint i = 1; i < r->free_bounce->len; i++)
            if (g_array_index(r->free_bounce, Bounce, i).capacity >
                g_array_index(r->free_bounce, Bounce, largest).capacity)
                largest = i;
        Bounce drop = g_array_index(r->free_bounce, Bounce, largest);
        g_array_remove_index_fast(r->free_bounce, largest);
        r->pooled_bounce_bytes -= drop.capacity;
        buf_free(r, drop.ptr);
    }
    guint8 *ptr = NULL;
    if (r->dev != NULL) {
        if (!r->dev->alloc(r->ep, capacity, &ptr, error)) {
            g_prefix_error(error, "rank %u (GPU %u): pack buffer of %" G_GUINT64_FORMAT
                           " bytes: ", r->rank, r->gpu, capacity);
            return NULL;
        }
    } else {
        ptr = g_malloc(capacity);
    }
    r->n_pack_allocs++;
    r->bounce_in_use += capacity;
    bounce_note_peak(r);
    *capacity_out = capacity;
    return ptr;
}

static void
bounce_put(Rank *r, guint8 *buf, guint64 capacity)
{
    Bounce idle = {buf, capacity};
    r->bounce_in_use -= capacity;
    r->pooled_bounce_bytes += capacity;
    g_array_append_val(r->free_bounce, idle);
}

/* The first piece of @rm that ends after wire byte @a. */
static guint
first_piece_after(Rank *r, const RankMsg *rm, guint64 a)
{
    guint lo = rm->first_piece, hi = rm->first_piece + rm->n_pieces;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const Piece *p = &g_array_index(r->pieces, Piece, mid);
        if (p->wire_offset + p->region.n_bytes <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Packs (or unpacks) wire bytes [a, b) of @rm from (into) @wire; on a device, kernels
 * queued on the rank's stream. */
static gboolean
move_chunk(Rank *r, const RankMsg *rm, guint64 a, guint64 b, guint8 *wire, gboolean pack,
           GError **error)
{
    guint end = rm->first_piece + rm->n_pieces;
    for (guint i = first_piece_after(r, rm, a); i < end; i++) {
        const Piece *p = &g_array_index(r->pieces, Piece, i);
        if (p->wire_offset >= b)
            break;
        guint64 from = MAX(a, p->wire_offset) - p->wire_offset;
        guint64 to = MIN(b, p->wire_offset + p->region.n_bytes) - p->wire_offset;
        guint8 *w = wire + (p->wire_offset + from - a);
        if (r->dev != NULL) {
            if (!r->dev->move(r->ep, &p->region, from, to, w, pack, error))
                return FALSE;
        } else if (pack) {
            rs_region_pack(&p->region, from, to, w);
        } else {
            rs_region_unpack(&p->region, from, to, w);
        }
    }
    return TRUE;
}

/* Where wire bytes [a, b) of @rm lie when they are one run of the rank's memory. */
static gboolean
chunk_in_place(Rank *r, const RankMsg *rm, guint64 a, guint64 b, guint8 **ptr)
{
    guint i = first_piece_after(r, rm, a);
    const Piece *p = &g_array_index(r->pieces, Piece, i);
    if (p->wire_offset + p->region.n_bytes < b)
        return FALSE;
    return rs_region_get_contiguous(&p->region, a - p->wire_offset, b - p->wire_offset, ptr);
}

/* Rows shorter than this go through a pack buffer rather than a scatter-gather list: a
 * list entry per few bytes costs more than the copy it saves. Measured with reshard
 * calibrate's copy sweep (4 host ranks, 32 MiB each, all ranks at once, on 2 cores): 64-B
 * runs, every other one read, moved at 6.1-6.6 GB/s packed against 4.6 GB/s as a list
 * (one in four: 3.3-3.5 against 3.1-3.2); 128-B runs, every other one, at 7.1-7.5 GB/s as
 * a list against 6.1 packed, and longer runs gain more from the list. */
#define MIN_IOV_ROW_BYTES 128

/* The runs of the rank's memory that hold wire bytes [a, b) of @rm, when every piece they
 * touch has rows long enough; NULL otherwise. */
static GArray *
chunk_runs(Rank *r, const RankMsg *rm, guint64 a, guint64 b)
{
    guint end = rm->first_piece + rm->n_pieces;
    guint first = first_piece_after(r, rm, a);
    for (guint i = first; i < end; i++) {
        const Piece *p = &g_array_index(r->pieces, Piece, i);
        if (p->wire_offset >= b)
            break;
        if (!rs_region_has_long_rows(&p->region, MIN_IOV_ROW_BYTES))
            return NULL;
    }
    GArray *iov = r->free_iov->len > 0
                      ? g_ptr_array_steal_index_fast(r->free_iov, r->free_iov->len - 1)
                      : g_array_new(FALSE, FALSE, sizeof(RsIovec));
    g_array_set_size(iov, 0);
    for (guint i = first; i < end; i++) {
        const Piece *p = &g_array_index(r->pieces, Piece, i);
        if (p->wire_offset >= b)
            break;
        guint64 from = MAX(a, p->wire_offset) - p->wire_offset;
        guint64 to = MIN(b, p->wire_offset + p->region.n_bytes) - p->wire_offset;
        rs_region_append_runs(&p->region, from, to, iov);
    }
    return iov;
}

/* The byte at wire offset @off of a chunk, wherever the chunk's bytes lie. */
static guint8 *
chunk_byte(const Op *op, guint64 off)
{
    if (op->iov == NULL)
        return op->ptr + off;
    for (guint i = 0; i < op->iov->len; i++) {
        const RsIovec *run = &g_array_index(op->iov, RsIovec, i);
        if (off < run->len)
            return (guint8 *)run->base + off;
        off -= run->len;
    }
    g_return_val_if_reached(NULL);
}

static gboolean
post_op(Rank *r, Op *op, GError **error)
{
    const ExecContext *ctx = r->ctx;
    RankMsg *rm = &g_array_index(r->msgs, RankMsg, op->rmsg);
    guint64 a, b;
    rs_schedule_get_chunk_range(ctx->schedule, rm->msg, op->chunk, &a, &b);
    guint32 tag = rm->msg % 32768;
    op->post_s = rs_endpoint_now_s(r->ep) - r->t0;
    op->bounce = NULL;
    op->iov = NULL;
    if (chunk_in_place(r, rm, a, b, &op->ptr)) {
        r->n_zero_copy++;
    } else if (ctx->use_iov && (op->iov = chunk_runs(r, rm, a, b)) != NULL) {
        /* The transport copies between the shards' runs directly: no pack, no unpack. */
        r->n_zero_copy++;
    } else {
        op->bounce = bounce_get(r, b - a, &op->bounce_capacity, error);
        if (op->bounce == NULL)
            return FALSE;
        op->ptr = op->bounce;
        if (rm->is_send && !move_chunk(r, rm, a, b, op->bounce, TRUE, error))
            return FALSE;
    }
    if (op->chunk == 0 && rm->is_send)
        rm->start_s = op->post_s;
    gboolean ok;
    const RsIovec *iov = op->iov ? (const RsIovec *)op->iov->data : NULL;
    guint n_iov = op->iov ? op->iov->len : 0;
    gboolean faulty = rm->is_send && rm->msg == ctx->opts.fault_message;
    if (faulty && ctx->opts.fault == RS_EXEC_FAULT_DROP) {
        /* Dropped: reported done, never sent; the receiver's timeout must catch it. */
        g_atomic_int_set(&op->req.done, 1);
        return TRUE;
    }
    if (faulty && ctx->opts.fault == RS_EXEC_FAULT_DELAY && op->chunk == 0) {
        /* Delayed, but the rank keeps serving its transport (and sees an abort of the job:
         * the receiver's timeout then ends it within that timeout, not after the delay). */
        double until = rs_endpoint_now_s(r->ep) + ctx->opts.fault_delay_s;
        for (double left; (left = until - rs_endpoint_now_s(r->ep)) > 0;) {
            if (!rs_endpoint_progress(r->ep, MIN(left, 0.05), error))
                return FALSE;
            g_usleep((gulong)(MIN(left, 0.002) * 1e6));
        }
    }
    if (rm->is_send) {
        r->n_sends++;
        ok = iov ? rs_endpoint_isendv(r->ep, rm->peer, tag, iov, n_iov, &op->req, error)
                 : rs_endpoint_isend(r->ep, rm->peer, tag, op->ptr, b - a, &op->req, error);
    } else {
        ok = iov ? rs_endpoint_irecvv(r->ep, rm->peer, tag, iov, n_iov, &op->req, error)
                 : rs_endpoint_irecv(r->ep, rm->peer, tag, op->ptr, b - a, &op->req, error);
    }
    if (ok && faulty && ctx->opts.fault == RS_EXEC_FAULT_DUPLICATE && op->chunk == 0) {
        /* The same bytes again, from a copy of its own (host memory: the fault is refused
         * on device transports), under the same tag. */
        r->dup_buf = g_malloc(MAX(b - a, 1));
        if (iov == NULL) {
            memcpy(r->dup_buf, op->ptr, b - a);
        } else {
            guint64 off = 0;
            for (guint i = 0; i < n_iov; i++) {
                memcpy(r->dup_buf + off, iov[i].base, iov[i].len);
                off += iov[i].len;
            }
        }
        r->n_sends++;
        ok = rs_endpoint_isend(r->ep, rm->peer, tag, r->dup_buf, b - a, &r->dup_req, error);
    }
    if (!ok)
        g_prefix_error(error, "message %u (%u -> %u) chunk %u: ", rm->msg,
                       rs_plan_get_message(ctx->plan, rm->msg)->src,
                       rs_plan_get_message(ctx->plan, rm->msg)->dst, op->chunk);
    return ok;
}

static gboolean
complete_op(Rank *r, Op *op, GError **error)
{
    const ExecContext *ctx = r->ctx;
    RankMsg *rm = &g_array_index(r->msgs, RankMsg, op->rmsg);
    guint64 a, b;
    rs_schedule_get_chunk_range(ctx->schedule, rm->msg, op->chunk, &a, &b);
    /* A device transport times the operation with CUDA events; others when seen done. */
    op->done_s = (op->req.done_s > 0 ? op->req.done_s : rs_endpoint_now_s(r->ep)) - r->t0;
    if (!rm->is_send) {
        if (ctx->opts.corrupt && ctx->opts.corrupt_message == rm->msg &&
            ctx->opts.corrupt_byte >= a && ctx->opts.corrupt_byte < b) {
            guint8 *p = chunk_byte(op, ctx->opts.corrupt_byte - a);
            if (r->dev == NULL)
                *p ^= 0xff;
            else if (!r->dev->flip_byte(r->ep, p, error))
                return FALSE;
        }
        if (op->bounce != NULL && !move_chunk(r, rm, a, b, op->bounce, FALSE, error))
            return FALSE;
        rm->chunk_done[op->chunk] = 1;
        guint n_chunks = rs_schedule_get_n_chunks(ctx->schedule, rm->msg);
        while (rm->prefix_chunks < n_chunks && rm->chunk_done[rm->prefix_chunks])
            rm->prefix_chunks++;
        rm->end_s = MAX(rm->end_s, op->done_s);
    }
    if (op->bounce != NULL) {
        bounce_put(r, op->bounce, op->bounce_capacity);
        op->bounce = NULL;
    }
    if (op->iov != NULL) {
        g_ptr_array_add(r->free_iov, op->iov);
        op->iov = NULL;
    }
    return TRUE;
}

/* Runs the next local transfer of @l whose dependencies arrived; *@ran tells whether it
 * ran. Returns FALSE with @error when a device copy could not be queued. */
static gboolean
run_local_step(Rank *r, RankLocal *l, gboolean *ran, GError **error)
{
    const ExecContext *ctx = r->ctx;
    *ran = FALSE;
    if (l->cursor == l->n_transfers)
        return TRUE;
    const RsMessage *msg = rs_plan_get_message(ctx->plan, l->msg);
    guint k = msg->first_transfer + l->cursor;
    const RsTransfer *tr = rs_plan_get_transfer(ctx->plan, k);
    if (tr->depends_on >= 0) {
        const RsTransfer *dep = rs_plan_get_transfer(ctx->plan, (guint)tr->depends_on);
        guint32 dm = rs_schedule_get_transfer_message(ctx->schedule, (guint)tr->depends_on);
        guint64 need =
            rs_schedule_get_transfer_offset(ctx->schedule, (guint)tr->depends_on) +
            dep->size_bytes;
        if (dep->phase == tr->phase && arrived_bytes(r, dm) < need)
            return TRUE;
    }
    double now = rs_endpoint_now_s(r->ep) - r->t0;
    if (l->cursor == 0)
        l->start_s = now;
    guint first = g_array_index(r->tpiece_first, guint, l->first_tpiece + l->cursor);
    guint end = g_array_index(r->tpiece_first, guint, l->first_tpiece + l->cursor + 1);
    for (guint p = first; p < end; p++) {
        const LocalPiece *lp = &g_array_index(r->lpieces, LocalPiece, p);
        if (r->dev == NULL)
            rs_region_copy(&lp->dst, &lp->src);
        else if (!r->dev->copy(r->ep, &lp->dst, &lp->src, error))
            return FALSE;
    }
    l->cursor++;
    l->prefix_bytes += tr->size_bytes;
    if (l->cursor == l->n_transfers)
        l->end_s = rs_endpoint_now_s(r->ep) - r->t0;
    *ran = TRUE;
    return TRUE;
}

static char *
describe_op(Rank *r, const Op *op)
{
    const RankMsg *rm = &g_array_index(r->msgs, RankMsg, op->rmsg);
    const RsMessage *msg = rs_plan_get_message(r->ctx->plan, rm->msg);
    return g_strdup_printf("message %u (%u -> %u, %" G_GUINT64_FORMAT " bytes, phase %u) chunk "
                           "%u of %u",
                           rm->msg, msg->src, msg->dst, msg->size_bytes, msg->phase, op->chunk,
                           rs_schedule_get_n_chunks(r->ctx->schedule, rm->msg));
}

/* Executes every operation of the rank, phase by phase. */
static gboolean
rank_execute(Rank *r, GError **error)
{
    const ExecContext *ctx = r->ctx;
    guint n_ops = r->ops->len;
    guint next = 0, outstanding = 0;
    g_autofree guint *active = g_new(guint, ctx->opts.window);
    guint n_phases = rs_plan_get_n_phases(ctx->plan);
    guint next_local = 0;
    for (guint32 phase = 0; phase < n_phases; phase++) {
        guint phase_end = next;
        while (phase_end < n_ops && g_array_index(r->ops, Op, phase_end).phase == phase)
            phase_end++;
        guint local_begin = next_local, local_end = next_local;
        while (local_end < r->locals->len &&
               g_array_index(r->locals, RankLocal, local_end).phase <= phase)
            local_end++;
        /* Locals are sorted by message and messages by phase: a phase's locals are a run. */
        next_local = local_end;
        double last_progress_s = rs_endpoint_now_s(r->ep);
        for (;;) {
            gboolean moved = FALSE;
            while (next < phase_end && outstanding < ctx->opts.window) {
                Op *op = &g_array_index(r->ops, Op, next);
                RankMsg *rm = &g_array_index(r->msgs, RankMsg, op->rmsg);
                if (rm->is_send && !send_ready(r, op))
                    break;
                if (!post_op(r, op, error))
                    return FALSE;
                active[outstanding++] = next++;
                r->max_outstanding = MAX(r->max_outstanding, outstanding);
                moved = TRUE;
            }
            gboolean locals_left = FALSE;
            for (guint i = local_begin; i < local_end; i++) {
                RankLocal *l = &g_array_index(r->locals, RankLocal, i);
                /* One transfer per pass, so that network progress is not held up. */
                gboolean ran;
                if (!run_local_step(r, l, &ran, error))
                    return FALSE;
                if (ran)
                    moved = TRUE;
                if (l->cursor < l->n_transfers)
                    locals_left = TRUE;
            }
            if (!rs_endpoint_progress(r->ep, -1, error))
                return FALSE;
            for (guint i = 0; i < outstanding;) {
                Op *op = &g_array_index(r->ops, Op, active[i]);
                if (g_atomic_int_get(&op->req.done)) {
                    if (!complete_op(r, op, error))
                        return FALSE;
                    active[i] = active[--outstanding];
                    moved = TRUE;
                } else {
                    i++;
                }
            }
            if (next == phase_end && outstanding == 0 && !locals_left)
                break;
            double now = rs_endpoint_now_s(r->ep);
            if (moved) {
                last_progress_s = now;
                continue;
            }
            if (outstanding == 0) {
                /* Nothing in flight, nothing runnable: no event can ever wake this rank. */
                if (next < phase_end) {
                    g_autofree char *what = describe_op(r, &g_array_index(r->ops, Op, next));
                    g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_STALLED,
                                "rank %u (GPU %u): %s waits for bytes that never arrive", r->rank,
                                r->gpu, what);
                } else {
                    g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_STALLED,
                                "rank %u (GPU %u): a local copy in phase %u waits for bytes that "
                                "never arrive",
                                r->rank, r->gpu, phase);
                }
                return FALSE;
            }
            double wait_s = 0.0;
            if (ctx->opts.timeout_s > 0) {
                wait_s = last_progress_s + ctx->opts.timeout_s - now;
                if (wait_s <= 0) {
                    guint oldest = active[0];
                    for (guint i = 1; i < outstanding; i++)
                        oldest = MIN(oldest, active[i]);
                    g_autofree char *what = describe_op(r, &g_array_index(r->ops, Op, oldest));
                    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_TIMEOUT,
                                "rank %u (GPU %u): %s did not complete within %g s", r->rank,
                                r->gpu, what, ctx->opts.timeout_s);
                    return FALSE;
                }
            }
            if (!rs_endpoint_progress(r->ep, wait_s, error))
                return FALSE;
        }
    }
    /* The last unpacks and copies on a device end when its stream drains. */
    return r->dev == NULL || r->dev->sync(r->ep, error);
}

/* Zeroes @size bytes of the rank's memory. */
static gboolean
buf_zero(Rank *r, guint8 *ptr, guint64 size, GError **error)
{
    if (r->dev != NULL)
        return r->dev->zero(r->ep, ptr, size, error);
    memset(ptr, 0, size);
    return TRUE;
}

static gboolean
rank_reset(Rank *r, GError **error)
{
    const ExecContext *ctx = r->ctx;
    guint n_tensors = rs_refit_get_n_tensors(ctx->refit);
    for (guint t = 0; t < n_tensors; t++) {
        guint e = rs_refit_tensor_get_elem_bytes(rs_refit_get_tensor(ctx->refit, t));
        if (r->dst_buf[t] && !buf_zero(r, r->dst_buf[t], r->dst_elems[t] * e, error))
            return FALSE;
        if (r->stage_buf[t] && !buf_zero(r, r->stage_buf[t], r->stage_elems[t] * e, error))
            return FALSE;
    }
    for (guint i = 0; i < r->msgs->len; i++) {
        RankMsg *rm = &g_array_index(r->msgs, RankMsg, i);
        rm->prefix_chunks = 0;
        rm->start_s = rm->end_s = 0;
        if (rm->chunk_done)
            memset(rm->chunk_done, 0, rs_schedule_get_n_chunks(ctx->schedule, rm->msg));
    }
    for (guint i = 0; i < r->locals->len; i++) {
        RankLocal *l = &g_array_index(r->locals, RankLocal, i);
        l->cursor = 0;
        l->prefix_bytes = 0;
        l->start_s = l->end_s = 0;
    }
    r->n_sends = r->n_zero_copy = r->n_pack_allocs = 0;
    r->max_outstanding = 0;
    r->bounce_in_use = 0;
    r->peak_bounce = r->pooled_bounce_bytes; /* idle buffers kept from the last run */
    return r->dev == NULL || r->dev->sync(r->ep, error);
}

/* Marks the local elements of @local in @covered (one byte per element). */
static void
mark_box(const RsLocalBox *local, guint8 *covered)
{
    const RsBox *box = &local->box;
    if (rs_box_is_empty(box))
        return;
    gint64 k[RS_MAX_DIMS] = {0};
    for (;;) {
        gint64 pos = (gint64)local->offset_elems;
        for (guint d = 0; d < box->n_dims; d++)
            pos += k[d] * local->strides_elems[d];
        covered[pos] = 1;
        gint d = (gint)box->n_dims - 1;
        while (d >= 0 && ++k[d] == rs_box_get_count(box, (guint)d))
            k[d--] = 0;
        if (d < 0)
            return;
    }
}

/* The device form of the check of tensor @t on this rank: the pattern compared by a kernel
 * per box, then the padding by a kernel; the first mismatch is reported as on the host
 * (the lowest box, then the lowest element of it in row-major order). */
static gboolean
rank_validate_device(Rank *r, guint t, const RsRefitTensor *rt, const RsLocalBox *boxes,
                     guint n_boxes, RankSummary *sum, GError **error)
{
    guint e = rs_refit_tensor_get_elem_bytes(rt);
    guint64 seed = rs_pattern_seed(t);
    g_autofree RsBoxIndex *index = g_new(RsBoxIndex, MAX(n_boxes, 1));
    guint64 in_boxes = 0;
    for (guint b = 0; b < n_boxes; b++) {
        rs_box_index_init(&index[b], rt->n_dims, rt->shape, &boxes[b]);
        in_boxes += index[b].n_elems;
        if (index[b].n_elems == 0)
            continue;
        guint64 n_bad = 0, first = 0;
        guint8 got[8] = {0};
        if (!r->dev->check_box(r->ep, seed, &index[b], e, r->dst_buf[t], &n_bad, &first, got,
                               error))
            return FALSE;
        if (n_bad == 0)
            continue;
        if (sum->n_bad == 0) {
            RsExecMismatch *m = &sum->first;
            guint64 g, local;
            rs_box_index_elem(&index[b], first, &g, &local);
            m->tensor_idx = t;
            m->rank = r->gpu;
            m->n_dims = rt->n_dims;
            rs_box_index_position(&index[b], first, m->global_index);
            m->flat_index = g;
            m->elem_bytes = e;
            rs_pattern_get_elem(seed, g, e, m->expected);
            memcpy(m->got, got, e);
        }
        sum->n_bad += n_bad;
    }
    if (in_boxes == r->dst_elems[t])
        return TRUE;
    guint64 n_bad = 0, first = 0;
    guint8 got[8] = {0};
    if (!r->dev->check_padding(r->ep, index, n_boxes, e, r->dst_buf[t], r->dst_elems[t], &n_bad,
                               &first, got, error))
        return FALSE;
    if (n_bad > 0 && sum->n_bad == 0) {
        RsExecMismatch *m = &sum->first;
        m->tensor_idx = t;
        m->rank = r->gpu;
        m->padding = TRUE;
        m->local_index = first;
        m->elem_bytes = e;
        memcpy(m->got, got, e);
    }
    sum->n_bad += n_bad;
    return TRUE;
}

/* Checks every destination element of the rank; returns the count of bad elements and the
 * first one (lowest tensor, then box order). FALSE with @error only when a device check
 * could not run. */
static gboolean
rank_validate(Rank *r, RankSummary *sum, GError **error)
{
    const ExecContext *ctx = r->ctx;
    for (guint t = 0; t < rs_refit_get_n_tensors(ctx->refit); t++) {
        const RsRefitTensor *rt = rs_refit_get_tensor(ctx->refit, t);
        gint di = rs_layout_find_rank(rt->dst, r->gpu);
        if (di < 0 || r->dst_buf[t] == NULL)
            continue;
        guint e = rs_refit_tensor_get_elem_bytes(rt);
        guint n_boxes;
        const RsLocalBox *boxes = rs_layout_get_boxes(rt->dst, (guint)di, &n_boxes);
        if (r->dev != NULL) {
            if (!rank_validate_device(r, t, rt, boxes, n_boxes, sum, error))
                return FALSE;
            continue;
        }
        guint64 seed = rs_pattern_seed(t);
        guint64 in_boxes = 0;
        for (guint b = 0; b < n_boxes; b++) {
            RsPatternMismatch pm = {0};
            in_boxes += rs_box_get_n_elems(&boxes[b].box);
            if (rs_pattern_check_box(seed, rt->n_dims, rt->shape, &boxes[b], r->dst_buf[t], e,
                                     &pm))
                continue;
            if (sum->n_bad == 0) {
                RsExecMismatch *m = &sum->first;
                m->tensor_idx = t;
                m->rank = r->gpu;
                m->n_dims = rt->n_dims;
                memcpy(m->global_index, pm.global_index, sizeof pm.global_index);
                m->flat_index = pm.flat_index;
                m->elem_bytes = e;
                memcpy(m->expected, pm.expected, 8);
                memcpy(m->got, pm.got, 8);
            }
            sum->n_bad += pm.n_bad;
        }
        /* Padding: elements of the buffer outside every box must still be zero. */
        if (in_boxes == r->dst_elems[t])
            continue;
        g_autofree guint8 *covered = g_malloc0(r->dst_elems[t]);
        for (guint b = 0; b < n_boxes; b++)
            mark_box(&boxes[b], covered);
        static const guint8 zero[8] = {0};
        for (guint64 i = 0; i < r->dst_elems[t]; i++) {
            if (covered[i] || memcmp(r->dst_buf[t] + i * e, zero, e) == 0)
                continue;
            if (sum->n_bad == 0) {
                RsExecMismatch *m = &sum->first;
                m->tensor_idx = t;
                m->rank = r->gpu;
                m->padding = TRUE;
                m->local_index = i;
                m->elem_bytes = e;
                memcpy(m->got, r->dst_buf[t] + i * e, e);
            }
            sum->n_bad++;
        }
    }
    return TRUE;
}

static gboolean
mismatch_before(const RsExecMismatch *a, const RsExecMismatch *b)
{
    if (a->tensor_idx != b->tensor_idx)
        return a->tensor_idx < b->tensor_idx;
    return a->rank < b->rank;
}

/* Rank 0: folds the summaries of one run into the result. Returns TRUE to go on. */
static gboolean
collect_run(ExecContext *ctx, GPtrArray *all)
{
    RsExecResult *res = ctx->result;
    guint n_messages = rs_plan_get_n_messages(ctx->plan);
    double *rows = g_new0(double, 2 * MAX(n_messages, 1));
    double run_s = 0;
    guint64 n_bad = 0;
    RsExecMismatch first = {0};
    guint64 n_sends = 0, n_zero_copy = 0, n_pack_allocs = 0, peak = 0, buffer_bytes = 0;
    guint max_out = 0;
    /* Times of all ranks on one axis: from the first rank leaving the start barrier (the
     * ranks of one machine share the monotonic clock). */
    double ref = INFINITY;
    for (guint r = 0; r < all->len; r++) {
        RankSummary sum;
        memcpy(&sum, g_bytes_get_data(g_ptr_array_index(all, r), NULL), sizeof sum);
        ref = MIN(ref, sum.t0_abs);
    }
    for (guint r = 0; r < all->len; r++) {
        gsize size;
        const guint8 *data = g_bytes_get_data(g_ptr_array_index(all, r), &size);
        RankSummary sum;
        memcpy(&sum, data, sizeof sum);
        double shift = sum.t0_abs - ref;
        run_s = MAX(run_s, shift + sum.elapsed_s);
        if (sum.n_bad > 0 && (n_bad == 0 || mismatch_before(&sum.first, &first)))
            first = sum.first;
        n_bad += sum.n_bad;
        n_sends += sum.n_sends;
        n_zero_copy += sum.n_zero_copy;
        n_pack_allocs += sum.n_pack_allocs;
        max_out = MAX(max_out, sum.max_outstanding);
        peak = MAX(peak, sum.peak_pack_bytes);
        buffer_bytes += sum.buffer_bytes;
        const TimeRecord *times = (const TimeRecord *)(data + sizeof sum);
        for (guint i = 0; i < sum.n_times; i++)
            rows[2 * times[i].msg + times[i].kind] = times[i].t + shift;
    }
    g_array_append_val(res->run_s, run_s);
    g_array_append_val(ctx->run_rows, rows);
    res->n_runs++;
    res->n_sends = n_sends;
    res->n_zero_copy = n_zero_copy;
    res->n_pack_allocs = n_pack_allocs;
    res->max_outstanding = max_out;
    res->peak_pack_bytes = peak;
    res->buffer_bytes = buffer_bytes;
    if (n_bad > 0 && res->n_bad_elems == 0) {
        res->n_bad_elems = n_bad;
        res->first_bad = first;
        return FALSE;
    }
    return TRUE;
}

static GBytes *
rank_summary_bytes(Rank *r, RankSummary *sum)
{
    g_autoptr(GArray) times = g_array_new(FALSE, FALSE, sizeof(TimeRecord));
    for (guint i = 0; i < r->msgs->len; i++) {
        const RankMsg *rm = &g_array_index(r->msgs, RankMsg, i);
        TimeRecord tr = {rm->msg, rm->is_send ? 0 : 1, rm->is_send ? rm->start_s : rm->end_s};
        g_array_append_val(times, tr);
    }
    for (guint i = 0; i < r->locals->len; i++) {
        const RankLocal *l = &g_array_index(r->locals, RankLocal, i);
        TimeRecord a = {l->msg, 0, l->start_s}, b = {l->msg, 1, l->end_s};
        g_array_append_val(times, a);
        g_array_append_val(times, b);
    }
    sum->n_times = times->len;
    sum->n_sends = r->n_sends;
    sum->n_zero_copy = r->n_zero_copy;
    sum->n_pack_allocs = r->n_pack_allocs;
    sum->max_outstanding = r->max_outstanding;
    sum->peak_pack_bytes = r->peak_bounce;
    sum->buffer_bytes = r->buffer_bytes;
    GByteArray *out = g_byte_array_sized_new(sizeof *sum + times->len * sizeof(TimeRecord));
    g_byte_array_append(out, (const guint8 *)sum, sizeof *sum);
    g_byte_array_append(out, (const guint8 *)times->data, times->len * sizeof(TimeRecord));
    return g_byte_array_free_to_bytes(out);
}

static gboolean
rank_main(RsEndpoint *ep, gpointer data, GError **error)
{
    ExecContext *ctx = data;
    Rank r = {0};
    r.ctx = ctx;
    r.ep = ep;
    r.dev = ep->device;
    r.rank = rs_endpoint_get_rank(ep);
    r.gpu = ctx->gpu_of_rank[r.rank];
    guint n_tensors = rs_refit_get_n_tensors(ctx->refit);
    gboolean ok = rank_alloc(&r, error) && rank_build(&r, error);
    for (guint run = 0; ok && run < ctx->opts.n_runs; run++) {
        if (run > 0 && !(ok = rank_reset(&r, error)))
            break;
        ok = rs_endpoint_barrier(ep, error);
        if (!ok)
            break;
        if (run == 0 && r.rank == ctx->opts.fault_rank &&
            (ctx->opts.fault == RS_EXEC_FAULT_STOP || ctx->opts.fault == RS_EXEC_FAULT_KILL))
            raise(ctx->opts.fault == RS_EXEC_FAULT_STOP ? SIGSTOP : SIGKILL);
        r.t0 = rs_endpoint_now_s(ep);
        ok = rank_execute(&r, error);
        if (!ok)
            break;
        RankSummary sum = {0};
        sum.t0_abs = r.t0;
        sum.elapsed_s = rs_endpoint_now_s(ep) - r.t0;
        /* Once every rank is done, nothing may be left over: a message no receive took (a
         * duplicated or stray one) fails the run. Outside the timed part. */
        if (rs_transport_can_check_stray(ep->transport) &&
            !(ok = rs_endpoint_barrier(ep, error) && rs_endpoint_check_no_stray(ep, error)))
            break;
        if (!ctx->opts.no_validate && !(ok = rank_validate(&r, &sum, error)))
            break;
        g_autoptr(GBytes) mine = rank_summary_bytes(&r, &sum);
        g_autoptr(GPtrArray) all = NULL;
        ok = rs_endpoint_gather(ep, mine, &all, error);
        if (!ok)
            break;
        /* Rank 0 decides whether to go on (a failed validation stops) and tells everyone
         * the outcome, so every process ends with the same exit status. */
        guint64 verdict[2] = {0, 0};
        if (r.rank == 0) {
            verdict[0] = collect_run(ctx, all) ? 1 : 0;
            verdict[1] = ctx->result->n_bad_elems;
        }
        g_autoptr(GBytes) out = g_bytes_new(verdict, sizeof verdict);
        g_autoptr(GBytes) in = NULL;
        ok = rs_endpoint_bcast(ep, out, &in, error);
        if (!ok)
            break;
        memcpy(verdict, g_bytes_get_data(in, NULL), sizeof verdict);
        if (!ctx->is_root_process) {
            ctx->result->n_bad_elems = verdict[1];
            ctx->result->n_runs = run + 1;
        }
        if (!verdict[0])
            break;
    }
    rank_free(&r, n_tensors);
    return ok;
}

/* --- public --- */

guint64
rs_exec_get_buffer_bytes(const RsPlan *plan, const RsRefit *refit)
{
    guint64 total = 0;
    g_autoptr(GHashTable) staging =
        g_hash_table_new_full(rs_hash_u64, rs_hash_u64_equal, g_free, NULL);
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        guint e = rs_refit_tensor_get_elem_bytes(t);
        for (guint r = 0; r < rs_layout_get_n_ranks(t->src); r++)
            total += buffer_elems(t->src, r) * e;
        for (guint r = 0; r < rs_layout_get_n_ranks(t->dst); r++)
            total += buffer_elems(t->dst, r) * e;
    }
    for (guint k = 0; k < rs_plan_get_n_transfers(plan); k++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, k);
        guint32 ranks[2] = {tr->dst, tr->src};
        guint32 flags[2] = {RS_TRANSFER_TO_STAGING, RS_TRANSFER_FROM_STAGING};
        for (guint s = 0; s < 2; s++) {
            if (!(tr->flags & flags[s]))
                continue;
            guint64 key = staging_key(tr->tensor_idx, ranks[s]);
            if (g_hash_table_contains(staging, &key))
                continue;
            g_hash_table_add(staging, g_memdup2(&key, sizeof key));
            const RsRefitTensor *t = rs_refit_get_tensor(refit, tr->tensor_idx);
            total += rs_layout_get_n_elems(t->src) * rs_refit_tensor_get_elem_bytes(t);
        }
    }
    return total;
}

static void
free_rows(gpointer p)
{
    g_free(*(double **)p);
}

/* The ordered pairs (src, dst), src != dst, that @plan's messages join: a set of
 * (src << 32 | dst) keys (base/hash.h, which mixes both halves). */
static guint64
plan_rank_pairs(const RsPlan *plan)
{
    guint n = rs_plan_get_n_messages(plan);
    g_autofree guint64 *keys = g_new(guint64, MAX(n, 1));
    g_autoptr(GHashTable) pairs = g_hash_table_new(rs_hash_u64, rs_hash_u64_equal);
    for (guint m = 0; m < n; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        keys[m] = (guint64)msg->src << 32 | msg->dst;
        if (msg->src != msg->dst)
            g_hash_table_add(pairs, &keys[m]);
    }
    return g_hash_table_size(pairs);
}

static guint64
physical_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (guint64)pages * (guint64)page : G_MAXUINT64;
}

gboolean
rs_exec_run(RsTransport *transport, const RsPlan *plan, const RsRefit *refit,
            const RsExecOptions *options, RsExecResult *result, GError **error)
{
    memset(result, 0, sizeof *result);
    ExecContext ctx;
    if (!exec_context_init(&ctx, plan, refit, options, error)) {
        exec_context_clear(&ctx);
        return FALSE;
    }
    if ((options->fault == RS_EXEC_FAULT_STOP || options->fault == RS_EXEC_FAULT_KILL) &&
        rs_transport_get_world_size(transport) == 0) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "stopping or killing a rank needs one process per rank (the mpi "
                    "transport): on the %s transport it would take every rank",
                    rs_transport_get_name(transport));
        exec_context_clear(&ctx);
        return FALSE;
    }
    if (options->fault == RS_EXEC_FAULT_DUPLICATE &&
        (rs_transport_has_device_buffers(transport) || !rs_transport_can_check_stray(transport))) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "duplicating a message needs a host-memory transport that sees stray "
                    "messages (host, mpi), not %s",
                    rs_transport_get_name(transport));
        exec_context_clear(&ctx);
        return FALSE;
    }
    if (rs_transport_get_world_size(transport) == 0 &&
        !rs_transport_has_device_buffers(transport)) {
        /* All ranks live in this process: their buffers, and the transport's state for
         * them (its queues between every pair of ranks), must fit in its memory (device
         * transports keep buffers in GPU memory, whose allocation reports its own limit). */
        guint64 buffers = rs_exec_get_buffer_bytes(plan, refit) +
                          (guint64)ctx.n_ranks * ctx.opts.window *
                              plan_pack_bytes_per_op(plan, ctx.chunk);
        guint64 queues =
            rs_transport_get_launch_bytes(transport, ctx.n_ranks, plan_rank_pairs(plan));
        guint64 need = buffers > G_MAXUINT64 - queues ? G_MAXUINT64 : buffers + queues;
        guint64 limit = ctx.opts.memory_limit_bytes;
        if (limit == 0)
            limit = physical_memory_bytes() / 10 * 9;
        if (need > limit) {
            g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_MEMORY,
                        "the %u ranks need %.2f GB of buffers and %.2f GB of %s transport "
                        "queues, more than the %.2f GB this machine allows",
                        ctx.n_ranks, buffers / 1e9, queues / 1e9,
                        rs_transport_get_name(transport), limit / 1e9);
            exec_context_clear(&ctx);
            return FALSE;
        }
    }
    result->n_ranks = ctx.n_ranks;
    result->run_s = g_array_new(FALSE, FALSE, sizeof(double));
    result->phase_s = g_array_new(FALSE, TRUE, sizeof(double));
    result->bytes_moved = rs_plan_get_bytes_moved(plan);
    result->local_bytes = rs_plan_get_local_bytes(plan);
    result->validated = !ctx.opts.no_validate;
    ctx.result = result;
    ctx.is_root_process = rs_transport_is_root(transport);
    ctx.use_iov = rs_transport_has_iov(transport);
    ctx.run_rows = g_array_new(FALSE, FALSE, sizeof(double *));
    g_array_set_clear_func(ctx.run_rows, free_rows);
    gboolean ok = rs_transport_launch(transport, ctx.n_ranks, rank_main, &ctx, error);
    if (ok && rs_transport_is_root(transport) && result->n_runs > 0) {
        /* The median run (the lower one of an even count) gives the trace. */
        double median = rs_stats_median((const double *)result->run_s->data, result->run_s->len);
        result->median_s = median;
        guint pick = 0;
        for (guint i = 0; i < result->run_s->len; i++)
            if (g_array_index(result->run_s, double, i) == median)
                pick = i;
        const double *rows = g_array_index(ctx.run_rows, double *, pick);
        guint n_phases = rs_plan_get_n_phases(plan);
        g_array_set_size(result->phase_s, n_phases);
        g_autofree double *phase_first = g_new(double, MAX(n_phases, 1));
        g_autofree double *phase_last = g_new0(double, MAX(n_phases, 1));
        for (guint p = 0; p < n_phases; p++)
            phase_first[p] = INFINITY;
        result->trace = rs_trace_new();
        rs_trace_set_meta(result->trace, "source", "measured");
        rs_trace_set_meta(result->trace, "strategy",
                          rs_strategy_get_name(rs_plan_get_strategy(plan)));
        rs_trace_set_meta(result->trace, "transport", rs_transport_get_name(transport));
        g_autofree char *ranks = g_strdup_printf("%u", ctx.n_ranks);
        rs_trace_set_meta(result->trace, "ranks", ranks);
        g_autofree char *chunk = g_strdup_printf("%" G_GUINT64_FORMAT, ctx.chunk);
        rs_trace_set_meta(result->trace, "chunk_bytes", chunk);
        g_autofree char *run = g_strdup_printf("%u of %u (median)", pick + 1, result->n_runs);
        rs_trace_set_meta(result->trace, "run", run);
        for (guint m = 0; m < rs_plan_get_n_messages(plan); m++) {
            const RsMessage *msg = rs_plan_get_message(plan, m);
            double start = rows[2 * m], end = rows[2 * m + 1];
            /* The start is the sender's host clock at post, the end the receiver's (on GPUs
             * a CUDA event put on the host clock through a reference event): clocks a few
             * microseconds apart can put an end before its start, which no trace may hold
             * (base/trace.h). Such a message took no measurable time. */
            if (isfinite(start) && isfinite(end) && end < start)
                end = start;
            const guint *deps = rs_plan_get_message_deps(plan, msg);
            g_autofree guint32 *deps32 = g_new(guint32, MAX(msg->n_deps, 1));
            for (guint i = 0; i < msg->n_deps; i++)
                deps32[i] = deps[i];
            rs_trace_add(result->trace, m, msg->src, msg->dst, msg->size_bytes, msg->phase,
                         start, end, NULL, deps32, msg->n_deps);
            phase_first[msg->phase] = MIN(phase_first[msg->phase], start);
            phase_last[msg->phase] = MAX(phase_last[msg->phase], end);
        }
        for (guint p = 0; p < n_phases; p++)
            g_array_index(result->phase_s, double, p) =
                isfinite(phase_first[p]) ? phase_last[p] - phase_first[p] : 0.0;
    }
    exec_context_clear(&ctx);
    return ok;
}

void
rs_exec_result_clear(RsExecResult *result)
{
    if (result->run_s)
        g_array_unref(result->run_s);
    if (result->phase_s)
        g_array_unref(result->phase_s);
    rs_trace_free(result->trace);
    memset(result, 0, sizeof *result);
}

static void
append_hex(GString *s, const guint8 *bytes, guint n)
{
    g_string_append(s, "0x");
    for (gint i = (gint)n - 1; i >= 0; i--)
        g_string_append_printf(s, "%02x", bytes[i]);
}

char *
rs_exec_mismatch_format(const RsExecMismatch *m, const RsRefit *refit)
{
    GString *s = g_string_new(NULL);
    const RsRefitTensor *t = rs_refit_get_tensor(refit, m->tensor_idx);
    g_string_append_printf(s, "tensor %s (index %u), rank %u, ", t->name, m->tensor_idx,
                           m->rank);
    if (m->padding) {
        g_string_append_printf(s, "padding element %" G_GUINT64_FORMAT " of the local buffer: "
                               "expected 0, got ",
                               m->local_index);
        append_hex(s, m->got, m->elem_bytes);
        return g_string_free(s, FALSE);
    }
    g_string_append(s, "global index [");
    for (guint d = 0; d < m->n_dims; d++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? ", " : "", m->global_index[d]);
    g_string_append_printf(s, "] (flat %" G_GUINT64_FORMAT "): expected ", m->flat_index);
    append_hex(s, m->expected, m->elem_bytes);
    g_string_append(s, ", got ");
    append_hex(s, m->got, m->elem_bytes);
    return g_string_free(s, FALSE);
}

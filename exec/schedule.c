/* schedule.c — the chunks of every network message, their dependencies on prefixes of other
 * messages (relays) and their slots, from the plan alone; see schedule.h for the model.
 *
 * Chunks are numbered globally, message by message; chunk_first_dep is a CSR index into
 * chunk_deps (the dependencies of chunk c are chunk_deps[chunk_first_dep[c] ..
 * chunk_first_dep[c + 1])). */
#include "exec/schedule.h"

#include "exec/executor.h"
#include "base/edge-colour.h"

typedef struct {
    guint n_chunks;
    guint first_chunk; /* into chunk_slot / chunk_first_dep */
    guint64 slot;      /* local messages: their slot */
    gboolean is_local;
    guint32 colour; /* network messages: rs_edge_colour_bipartite() over their phase */
} MsgSched;

struct _RsSchedule {
    const RsPlan *plan;
    guint64 chunk_bytes;
    guint32 *message_of_transfer; /* [n_transfers] */
    guint64 *transfer_offset;     /* [n_transfers]: byte offset of a transfer in its message */
    MsgSched *msgs;               /* [n_messages] */
    GArray *chunk_slot;           /* guint64 per chunk */
    GArray *chunk_first_dep;      /* guint per chunk + 1 (CSR) */
    GArray *chunk_deps;           /* RsScheduleDep */
};

void
rs_schedule_free(RsSchedule *s)
{
    if (s == NULL)
        return;
    g_free(s->message_of_transfer);
    g_free(s->transfer_offset);
    g_free(s->msgs);
    if (s->chunk_slot)
        g_array_unref(s->chunk_slot);
    if (s->chunk_first_dep)
        g_array_unref(s->chunk_first_dep);
    if (s->chunk_deps)
        g_array_unref(s->chunk_deps);
    g_free(s);
}

/* The slot of the chunk that holds the last of the first @need bytes of message @m. */
static guint64
slot_of_prefix(const RsSchedule *s, guint32 m, guint64 need)
{
    const MsgSched *ms = &s->msgs[m];
    if (ms->is_local)
        return ms->slot;
    guint j = need == 0 ? 0 : (guint)((need - 1) / s->chunk_bytes);
    j = MIN(j, ms->n_chunks - 1);
    return g_array_index(s->chunk_slot, guint64, ms->first_chunk + j);
}

/* Same-phase dependencies of the bytes [x, y) of transfer @k (relative to the transfer):
 * appends (message, bytes needed) to @deps. Forwarding the same box as it arrived (one
 * piece on both hops) needs only the matching bytes; anything else needs the whole
 * dependency. */
static void
transfer_deps(const RsSchedule *s, guint k, guint64 x, guint64 y, const gboolean *aligned,
              GArray *deps)
{
    const RsTransfer *tr = rs_plan_get_transfer(s->plan, k);
    if (tr->depends_on < 0)
        return;
    guint d = (guint)tr->depends_on;
    const RsTransfer *dep = rs_plan_get_transfer(s->plan, d);
    if (dep->phase < tr->phase)
        return;
    RsScheduleDep cd = {s->message_of_transfer[d], 0};
    gboolean is_aligned = aligned != NULL && aligned[k];
    cd.need_bytes = s->transfer_offset[d] + (is_aligned ? y : dep->size_bytes);
    for (guint i = 0; i < deps->len; i++) {
        RsScheduleDep *old = &g_array_index(deps, RsScheduleDep, i);
        if (old->msg == cd.msg) {
            old->need_bytes = MAX(old->need_bytes, cd.need_bytes);
            return;
        }
    }
    g_array_append_val(deps, cd);
}

/* Stage 1: each transfer's message and byte offset in it; which messages are local. */
static void
place_transfers(RsSchedule *s)
{
    for (guint m = 0; m < rs_plan_get_n_messages(s->plan); m++) {
        const RsMessage *msg = rs_plan_get_message(s->plan, m);
        guint64 off = 0;
        for (guint k = msg->first_transfer; k < msg->first_transfer + msg->n_transfers; k++) {
            s->message_of_transfer[k] = m;
            s->transfer_offset[k] = off;
            off += rs_plan_get_transfer(s->plan, k)->size_bytes;
        }
        s->msgs[m].is_local = msg->src == msg->dst;
    }
}

/* Stage 2: the chunks of every network message, numbered message by message. */
static void
cut_chunks(RsSchedule *s)
{
    guint n_chunks_total = 0;
    for (guint m = 0; m < rs_plan_get_n_messages(s->plan); m++) {
        const RsMessage *msg = rs_plan_get_message(s->plan, m);
        MsgSched *ms = &s->msgs[m];
        ms->first_chunk = n_chunks_total;
        ms->n_chunks =
            ms->is_local ? 0 : (guint)((msg->size_bytes + s->chunk_bytes - 1) / s->chunk_bytes);
        n_chunks_total += ms->n_chunks;
    }
    g_array_set_size(s->chunk_slot, n_chunks_total);
    g_array_set_size(s->chunk_first_dep, n_chunks_total + 1);
}

/* Stage 3: the dependencies of every chunk (CSR), in chunk order. */
static void
chunk_dependencies(RsSchedule *s, const gboolean *aligned)
{
    g_autoptr(GArray) deps = g_array_new(FALSE, FALSE, sizeof(RsScheduleDep));
    for (guint m = 0; m < rs_plan_get_n_messages(s->plan); m++) {
        const RsMessage *msg = rs_plan_get_message(s->plan, m);
        const MsgSched *ms = &s->msgs[m];
        for (guint j = 0; j < ms->n_chunks; j++) {
            guint64 a, b;
            rs_schedule_get_chunk_range(s, m, j, &a, &b);
            g_array_set_size(deps, 0);
            for (guint k = msg->first_transfer; k < msg->first_transfer + msg->n_transfers; k++) {
                guint64 t0 = s->transfer_offset[k];
                guint64 t1 = t0 + rs_plan_get_transfer(s->plan, k)->size_bytes;
                if (t1 <= a || t0 >= b)
                    continue;
                transfer_deps(s, k, MAX(a, t0) - t0, MIN(b, t1) - t0, aligned, deps);
            }
            g_array_index(s->chunk_first_dep, guint, ms->first_chunk + j) = s->chunk_deps->len;
            g_array_append_vals(s->chunk_deps, deps->data, deps->len);
        }
    }
    g_array_index(s->chunk_first_dep, guint, s->chunk_slot->len) = s->chunk_deps->len;
}

static void
array_unref_nullable(gpointer p)
{
    if (p != NULL)
        g_array_unref(p);
}

/* The same-phase dependents of every message (NULL for none) and their in-degrees. */
static GPtrArray *
message_dependents(const RsPlan *plan, guint *indegree)
{
    guint n_messages = rs_plan_get_n_messages(plan);
    GPtrArray *dependents = g_ptr_array_new_with_free_func(array_unref_nullable);
    for (guint m = 0; m < n_messages; m++)
        g_ptr_array_add(dependents, NULL);
    for (guint m = 0; m < n_messages; m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        const guint *md = rs_plan_get_message_deps(plan, msg);
        for (guint i = 0; i < msg->n_deps; i++) {
            if (rs_plan_get_message(plan, md[i])->phase != msg->phase)
                continue;
            indegree[m]++;
            GArray *list = g_ptr_array_index(dependents, md[i]);
            if (list == NULL) {
                list = g_array_new(FALSE, FALSE, sizeof(guint));
                g_ptr_array_index(dependents, md[i]) = list;
            }
            g_array_append_val(list, m);
        }
    }
    return dependents;
}

/* The slots of message @m, whose dependencies have their slots. */
static void
slot_message(RsSchedule *s, guint m, const gboolean *aligned, GArray *deps)
{
    const RsMessage *msg = rs_plan_get_message(s->plan, m);
    MsgSched *ms = &s->msgs[m];
    if (ms->is_local) {
        guint64 slot = 0;
        for (guint k = msg->first_transfer; k < msg->first_transfer + msg->n_transfers; k++) {
            g_array_set_size(deps, 0);
            transfer_deps(s, k, 0, rs_plan_get_transfer(s->plan, k)->size_bytes, aligned, deps);
            for (guint i = 0; i < deps->len; i++) {
                const RsScheduleDep *cd = &g_array_index(deps, RsScheduleDep, i);
                slot = MAX(slot, slot_of_prefix(s, cd->msg, cd->need_bytes) + 1);
            }
        }
        ms->slot = slot;
        return;
    }
    guint64 prev = 0;
    for (guint j = 0; j < ms->n_chunks; j++) {
        guint64 slot = j == 0 ? 0 : prev + 1;
        guint n_deps;
        const RsScheduleDep *cd = rs_schedule_get_chunk_deps(s, m, j, &n_deps);
        for (guint i = 0; i < n_deps; i++)
            slot = MAX(slot, slot_of_prefix(s, cd[i].msg, cd[i].need_bytes) + 1);
        g_array_index(s->chunk_slot, guint64, ms->first_chunk + j) = slot;
        prev = slot;
    }
}

/* Stage 4: slots in topological order of the message dependencies (Kahn), restricted to
 * dependencies inside a phase: earlier phases are finished before a phase starts. */
static gboolean
assign_slots(RsSchedule *s, const gboolean *aligned, GError **error)
{
    guint n_messages = rs_plan_get_n_messages(s->plan);
    g_autofree guint *indegree = g_new0(guint, MAX(n_messages, 1));
    g_autoptr(GPtrArray) dependents = message_dependents(s->plan, indegree);
    g_autoptr(GArray) ready = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GArray) deps = g_array_new(FALSE, FALSE, sizeof(RsScheduleDep));
    for (guint m = 0; m < n_messages; m++)
        if (indegree[m] == 0)
            g_array_append_val(ready, m);
    for (guint head = 0; head < ready->len; head++) {
        guint m = g_array_index(ready, guint, head);
        slot_message(s, m, aligned, deps);
        GArray *list = g_ptr_array_index(dependents, m);
        for (guint i = 0; list != NULL && i < list->len; i++) {
            guint next = g_array_index(list, guint, i);
            if (--indegree[next] == 0)
                g_array_append_val(ready, next);
        }
    }
    if (ready->len != n_messages) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "the plan's message dependencies form a cycle");
        return FALSE;
    }
    return TRUE;
}

/* Stage 5: the message colours that order a slot's operations (schedule.h, "Order"). */
static void
colour_messages(RsSchedule *s)
{
    guint n = rs_plan_get_n_messages(s->plan);
    g_autofree guint32 *src = g_new(guint32, MAX(n, 1));
    g_autofree guint32 *dst = g_new(guint32, MAX(n, 1));
    g_autofree guint32 *phase = g_new(guint32, MAX(n, 1));
    g_autofree guint32 *colour = g_new(guint32, MAX(n, 1));
    guint32 n_gpus = 0;
    for (guint m = 0; m < n; m++) {
        const RsMessage *msg = rs_plan_get_message(s->plan, m);
        src[m] = msg->src;
        dst[m] = msg->dst;
        phase[m] = msg->phase;
        n_gpus = MAX(n_gpus, MAX(msg->src, msg->dst) + 1);
    }
    rs_edge_colour_bipartite(src, dst, phase, n, n_gpus, colour);
    for (guint m = 0; m < n; m++)
        s->msgs[m].colour = colour[m];
}

RsSchedule *
rs_schedule_new(const RsPlan *plan, guint64 chunk_bytes, const gboolean *aligned,
                GError **error)
{
    g_return_val_if_fail(plan != NULL && chunk_bytes > 0, NULL);
    guint n_transfers = rs_plan_get_n_transfers(plan);
    guint n_messages = rs_plan_get_n_messages(plan);
    g_autoptr(RsSchedule) s = g_new0(RsSchedule, 1);
    s->plan = plan;
    s->chunk_bytes = chunk_bytes;
    s->message_of_transfer = g_new0(guint32, MAX(n_transfers, 1));
    s->transfer_offset = g_new0(guint64, MAX(n_transfers, 1));
    s->msgs = g_new0(MsgSched, MAX(n_messages, 1));
    s->chunk_slot = g_array_new(FALSE, TRUE, sizeof(guint64));
    s->chunk_first_dep = g_array_new(FALSE, TRUE, sizeof(guint));
    s->chunk_deps = g_array_new(FALSE, FALSE, sizeof(RsScheduleDep));
    place_transfers(s);
    cut_chunks(s);
    chunk_dependencies(s, aligned);
    if (!assign_slots(s, aligned, error))
        return NULL;
    colour_messages(s);
    return g_steal_pointer(&s);
}

guint64
rs_schedule_get_chunk_bytes(const RsSchedule *s)
{
    return s->chunk_bytes;
}

guint32
rs_schedule_get_transfer_message(const RsSchedule *s, guint transfer)
{
    return s->message_of_transfer[transfer];
}

guint64
rs_schedule_get_transfer_offset(const RsSchedule *s, guint transfer)
{
    return s->transfer_offset[transfer];
}

guint
rs_schedule_get_n_chunks(const RsSchedule *s, guint32 msg)
{
    return s->msgs[msg].n_chunks;
}

void
rs_schedule_get_chunk_range(const RsSchedule *s, guint32 msg, guint chunk, guint64 *begin_out,
                            guint64 *end_out)
{
    guint64 a = (guint64)chunk * s->chunk_bytes;
    *begin_out = a;
    *end_out = MIN(a + s->chunk_bytes, rs_plan_get_message(s->plan, msg)->size_bytes);
}

guint64
rs_schedule_get_chunk_slot(const RsSchedule *s, guint32 msg, guint chunk)
{
    return g_array_index(s->chunk_slot, guint64, s->msgs[msg].first_chunk + chunk);
}

guint32
rs_schedule_get_message_colour(const RsSchedule *s, guint32 msg)
{
    return s->msgs[msg].colour;
}

guint64
rs_schedule_get_local_slot(const RsSchedule *s, guint32 msg)
{
    return s->msgs[msg].slot;
}

const RsScheduleDep *
rs_schedule_get_chunk_deps(const RsSchedule *s, guint32 msg, guint chunk, guint *n_deps_out)
{
    guint c = s->msgs[msg].first_chunk + chunk;
    guint first = g_array_index(s->chunk_first_dep, guint, c);
    *n_deps_out = g_array_index(s->chunk_first_dep, guint, c + 1) - first;
    return &g_array_index(s->chunk_deps, RsScheduleDep, first);
}

static gint
op_compare(gconstpointer pa, gconstpointer pb)
{
    const RsScheduleOp *a = pa, *b = pb;
    if (a->phase != b->phase)
        return a->phase < b->phase ? -1 : 1;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    if (a->colour != b->colour)
        return a->colour < b->colour ? -1 : 1;
    if (a->msg != b->msg)
        return a->msg < b->msg ? -1 : 1;
    return a->chunk < b->chunk ? -1 : a->chunk > b->chunk;
}

GArray *
rs_schedule_get_rank_ops(const RsSchedule *s, guint32 gpu)
{
    GArray *ops = g_array_new(FALSE, TRUE, sizeof(RsScheduleOp));
    for (guint m = 0; m < rs_plan_get_n_messages(s->plan); m++) {
        const RsMessage *msg = rs_plan_get_message(s->plan, m);
        if (msg->src == msg->dst || (msg->src != gpu && msg->dst != gpu))
            continue;
        for (guint j = 0; j < s->msgs[m].n_chunks; j++) {
            RsScheduleOp op = {msg->phase, rs_schedule_get_chunk_slot(s, m, j), m, j,
                               msg->src == gpu, s->msgs[m].colour};
            g_array_append_val(ops, op);
        }
    }
    g_array_sort(ops, op_compare);
    return ops;
}

/* transport-host.c — ranks as threads of one process, bytes through bounded queues.
 *
 * The model: every ordered pair of ranks (sender, receiver) has a channel, a ring of
 * queue_depth entries owned by the receiver's endpoint and guarded by its lock. A send
 * places one entry: a message of at most eager_bytes is copied into the entry's slot at
 * once and the send completes (eager); a larger one records where the sender's bytes are,
 * and the receiver copies them straight into its own buffer when its receive matches, then
 * completes the send (rendezvous: one copy, as MPI's single-copy shared-memory path does).
 * Both sides may describe their bytes as scatter-gather lists, so a message made of rows
 * of several shards goes from the sender's shards into the receiver's shards in that one
 * copy, with no pack or unpack buffer.
 * When the ring is full, further sends to that receiver wait in the sender, in order, so
 * no rank can queue unbounded work on another. Receives match the head of the channel:
 * messages between two ranks arrive in the order they were sent, and the receiver checks
 * tag and size before it copies.
 *
 * Waiting: every endpoint has a condition variable and an event counter bumped, under its
 * lock, whenever something it may wait for happens (an entry arrived, an entry it sent was
 * taken, the world was aborted). A rank that found nothing to do sleeps until the counter
 * moves, so idle ranks cost no CPU.
 *
 * The rank code never dereferences another rank's buffers; only this file does, while it
 * moves a message. */
#include "exec/transport-private.h"

#include <string.h>

typedef struct _HostWorld HostWorld;

typedef struct {
    guint32 tag;
    gsize size;
    const RsIovec *iov;          /* the sender's runs (rendezvous) or the slot (eager) */
    guint n_iov;
    RsIovec slot;                /* eager: the slot, as a run */
    RsTransportRequest *send_req; /* rendezvous: completed by the receiver; NULL when eager */
} Entry;

typedef struct {
    Entry *ring;    /* queue_depth entries, allocated at the channel's first message */
    guint8 *slots;  /* queue_depth × eager_bytes, allocated at the first eager message */
    gboolean no_slots; /* that allocation failed: every message goes by rendezvous */
    guint head;
    guint count;
} Channel;

typedef struct {
    RsEndpoint base;
    HostWorld *world;
    GMutex lock; /* guards in[], events */
    GCond cond;
    guint64 events;
    /* Used by the owning thread only: the event count when progress last returned. An
     * event after that (a send of this rank completed by its receiver while the caller
     * was looking at its requests) must end the next wait at once, or it is lost. */
    guint64 consumed;
    Channel *in; /* [n_ranks]: the channel from each sender */
    /* Used by the owning thread only. */
    GQueue *pending_sends; /* [n_ranks]: sends waiting for room, per receiver, in order */
    GQueue *posted_recvs;  /* [n_ranks]: receives waiting for a message, per sender */
} HostEndpoint;

struct _HostWorld {
    guint n_ranks;
    gsize eager_bytes;
    guint depth;
    HostEndpoint *eps;
    RsRankFunc fn;
    gpointer user_data;
    /* Abort: the first failure, and a flag every wait checks. */
    GMutex lock;
    GCond cond; /* barrier */
    gint aborted;
    GError *first_error;
    guint barrier_count;
    guint64 barrier_generation;
    GBytes **gather_slots;
    GBytes *bcast_data;
};

typedef struct {
    RsTransport base;
} HostTransport;

/* Request fields: priv[0] the runs, priv[1] their count, priv[2..3] one run for the
 * contiguous calls. */
static void
set_iov(RsTransportRequest *req, const RsIovec *iov, guint n_iov)
{
    req->priv[0] = (gpointer)iov;
    req->priv[1] = GUINT_TO_POINTER(n_iov);
}

static const RsIovec *
get_iov(const RsTransportRequest *req, guint *n_iov)
{
    *n_iov = GPOINTER_TO_UINT(req->priv[1]);
    return req->priv[0];
}

static RsIovec *
inline_iov(RsTransportRequest *req, const void *buf, gsize size)
{
    G_STATIC_ASSERT(sizeof(RsIovec) <= 2 * sizeof(gpointer));
    RsIovec *iov = (RsIovec *)&req->priv[2];
    iov->base = (void *)buf;
    iov->len = size;
    return iov;
}

/* Copies the bytes of @src into @dst, run by run; both hold the same number of bytes. */
static void
iov_copy(const RsIovec *dst, guint n_dst, const RsIovec *src, guint n_src)
{
    guint i = 0, j = 0;
    gsize off_i = 0, off_j = 0;
    while (i < n_dst && j < n_src) {
        gsize n = MIN(dst[i].len - off_i, src[j].len - off_j);
        if (n > 0)
            memcpy((guint8 *)dst[i].base + off_i, (const guint8 *)src[j].base + off_j, n);
        off_i += n;
        off_j += n;
        if (off_i == dst[i].len) {
            i++;
            off_i = 0;
        }
        if (off_j == src[j].len) {
            j++;
            off_j = 0;
        }
    }
}

static RsTransport *
host_open(const RsTransportConfig *config, GError **error)
{
    HostTransport *t = g_new0(HostTransport, 1);
    t->base.world_size = 0;
    t->base.is_root = TRUE;
    return &t->base;
}

static void
host_close(RsTransport *transport)
{
    g_free(transport);
}

static void
endpoint_notify(HostEndpoint *ep)
{
    g_mutex_lock(&ep->lock);
    ep->events++;
    g_cond_broadcast(&ep->cond);
    g_mutex_unlock(&ep->lock);
}

static void
world_abort(HostWorld *w, GError *error)
{
    g_mutex_lock(&w->lock);
    if (w->first_error == NULL && error != NULL)
        w->first_error = g_error_copy(error);
    g_atomic_int_set(&w->aborted, 1);
    g_cond_broadcast(&w->cond);
    g_mutex_unlock(&w->lock);
    for (guint r = 0; r < w->n_ranks; r++)
        endpoint_notify(&w->eps[r]);
}

static gboolean
check_aborted(HostEndpoint *ep, GError **error)
{
    if (!g_atomic_int_get(&ep->world->aborted))
        return TRUE;
    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_ABORTED,
                "rank %u: stopped because another rank failed", ep->base.rank);
    return FALSE;
}

/* Places @req (a send of the calling rank) into its receiver's channel; FALSE when full. */
static gboolean
try_place(HostEndpoint *self, RsTransportRequest *req)
{
    HostWorld *w = self->world;
    HostEndpoint *to = &w->eps[req->peer];
    Channel *ch = &to->in[self->base.rank];
    gboolean eager = req->size_bytes <= w->eager_bytes;
    g_mutex_lock(&to->lock);
    if (ch->count == w->depth) {
        g_mutex_unlock(&to->lock);
        return FALSE;
    }
    if (eager && ch->slots == NULL && !ch->no_slots) {
        ch->slots = g_try_malloc((gsize)w->depth * w->eager_bytes);
        ch->no_slots = ch->slots == NULL;
    }
    eager = eager && !ch->no_slots;
    if (ch->ring == NULL)
        ch->ring = g_new0(Entry, w->depth);
    guint pos = (ch->head + ch->count) % w->depth;
    Entry *e = &ch->ring[pos];
    e->tag = req->tag;
    e->size = req->size_bytes;
    guint n_iov;
    const RsIovec *iov = get_iov(req, &n_iov);
    if (eager) {
        e->slot.base = ch->slots + (gsize)pos * w->eager_bytes;
        e->slot.len = req->size_bytes;
        iov_copy(&e->slot, 1, iov, n_iov);
        e->iov = NULL;
        e->n_iov = 0;
        e->send_req = NULL;
    } else {
        e->iov = iov;
        e->n_iov = n_iov;
        e->send_req = req;
    }
    ch->count++;
    to->events++;
    g_cond_broadcast(&to->cond);
    g_mutex_unlock(&to->lock);
    if (eager)
        g_atomic_int_set(&req->done, 1);
    return TRUE;
}

static gboolean
host_isendv(RsEndpoint *base, guint32 peer, guint32 tag, const RsIovec *iov, guint n_iov,
            RsTransportRequest *req, GError **error)
{
    HostEndpoint *self = (HostEndpoint *)base;
    if (!check_aborted(self, error))
        return FALSE;
    set_iov(req, iov, n_iov);
    GQueue *pending = &self->pending_sends[peer];
    if (!g_queue_is_empty(pending) || !try_place(self, req))
        g_queue_push_tail(pending, req);
    return TRUE;
}

static gboolean
host_isend(RsEndpoint *base, guint32 peer, guint32 tag, const void *buf, gsize size,
           RsTransportRequest *req, GError **error)
{
    return host_isendv(base, peer, tag, inline_iov(req, buf, size), 1, req, error);
}

static gboolean
host_irecvv(RsEndpoint *base, guint32 peer, guint32 tag, const RsIovec *iov, guint n_iov,
            RsTransportRequest *req, GError **error)
{
    HostEndpoint *self = (HostEndpoint *)base;
    if (!check_aborted(self, error))
        return FALSE;
    set_iov(req, iov, n_iov);
    g_queue_push_tail(&self->posted_recvs[peer], req);
    return TRUE;
}

static gboolean
host_irecv(RsEndpoint *base, guint32 peer, guint32 tag, void *buf, gsize size,
           RsTransportRequest *req, GError **error)
{
    return host_irecvv(base, peer, tag, inline_iov(req, buf, size), 1, req, error);
}

/* Matches posted receives from @peer with arrived entries. Returns the number completed,
 * or -1 with @error set on a tag or size mismatch. */
static gint
match_from(HostEndpoint *self, guint32 peer, GError **error)
{
    HostWorld *w = self->world;
    Channel *ch = &self->in[peer];
    GQueue *posted = &self->posted_recvs[peer];
    gint n_done = 0;
    while (!g_queue_is_empty(posted)) {
        RsTransportRequest *recv = g_queue_peek_head(posted);
        g_mutex_lock(&self->lock);
        if (ch->count == 0) {
            g_mutex_unlock(&self->lock);
            break;
        }
        /* The entry stays in the ring while we copy: the sender only appends at the tail,
         * and an eager slot is reused only after we pop it. */
        Entry e = ch->ring[ch->head];
        g_mutex_unlock(&self->lock);
        if (e.tag != recv->tag || e.size != recv->size_bytes) {
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_MISMATCH,
                        "rank %u expected a message with tag %u and %" G_GSIZE_FORMAT
                        " bytes from rank %u, but the next one has tag %u and %" G_GSIZE_FORMAT
                        " bytes",
                        self->base.rank, recv->tag, recv->size_bytes, peer, e.tag, e.size);
            return -1;
        }
        guint n_dst;
        const RsIovec *dst = get_iov(recv, &n_dst);
        if (e.send_req == NULL)
            iov_copy(dst, n_dst, &e.slot, 1);
        else
            iov_copy(dst, n_dst, e.iov, e.n_iov);
        g_mutex_lock(&self->lock);
        ch->head = (ch->head + 1) % w->depth;
        ch->count--;
        g_mutex_unlock(&self->lock);
        if (e.send_req != NULL)
            g_atomic_int_set(&e.send_req->done, 1);
        /* The sender may wait for room or for the completion of its send. */
        endpoint_notify(&w->eps[peer]);
        g_queue_pop_head(posted);
        g_atomic_int_set(&recv->done, 1);
        n_done++;
    }
    return n_done;
}

/* After a barrier every rank reached with all its operations complete: an entry left in a
 * channel to this rank, or a send of this rank still waiting for room, was never received. */
static gboolean
host_check_no_stray(RsEndpoint *base, GError **error)
{
    HostEndpoint *self = (HostEndpoint *)base;
    HostWorld *w = self->world;
    for (guint32 peer = 0; peer < w->n_ranks; peer++) {
        g_mutex_lock(&self->lock);
        Channel *ch = &self->in[peer];
        gboolean left = ch->count > 0;
        Entry e = left ? ch->ring[ch->head] : (Entry){0};
        guint count = ch->count;
        g_mutex_unlock(&self->lock);
        if (left) {
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_MISMATCH,
                        "rank %u: %u message%s from rank %u arrived that no receive took "
                        "(the first: tag %u, %" G_GSIZE_FORMAT " bytes): a duplicated or stray "
                        "message",
                        self->base.rank, count, count == 1 ? "" : "s", peer, e.tag, e.size);
            return FALSE;
        }
        GQueue *pending = &self->pending_sends[peer];
        if (!g_queue_is_empty(pending)) {
            const RsTransportRequest *req = g_queue_peek_head(pending);
            g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_MISMATCH,
                        "rank %u: a send to rank %u (tag %u, %" G_GSIZE_FORMAT " bytes) still "
                        "waits for room: a duplicated or stray message",
                        self->base.rank, peer, req->tag, req->size_bytes);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
host_progress(RsEndpoint *base, double timeout_s, GError **error)
{
    HostEndpoint *self = (HostEndpoint *)base;
    HostWorld *w = self->world;
    gint64 deadline_us = 0;
    if (timeout_s > 0)
        deadline_us = g_get_monotonic_time() + (gint64)(timeout_s * 1e6);
    for (;;) {
        if (!check_aborted(self, error))
            return FALSE;
        guint64 seen = self->consumed;
        gint n_done = 0;
        for (guint32 peer = 0; peer < w->n_ranks; peer++) {
            GQueue *pending = &self->pending_sends[peer];
            while (!g_queue_is_empty(pending) && try_place(self, g_queue_peek_head(pending))) {
                g_queue_pop_head(pending);
                n_done++;
            }
            gint n = match_from(self, peer, error);
            if (n < 0)
                return FALSE;
            n_done += n;
        }
        /* Sleep only when nothing moved and no event came since the last return: until
         * an event for this endpoint or the deadline. */
        gboolean timed_out = FALSE;
        g_mutex_lock(&self->lock);
        while (n_done == 0 && timeout_s >= 0 && self->events == seen &&
               !g_atomic_int_get(&w->aborted)) {
            if (deadline_us == 0) {
                g_cond_wait(&self->cond, &self->lock);
            } else if (!g_cond_wait_until(&self->cond, &self->lock, deadline_us)) {
                timed_out = TRUE;
                break;
            }
        }
        gboolean changed = self->events != seen;
        self->consumed = self->events;
        g_mutex_unlock(&self->lock);
        if (n_done > 0 || timeout_s < 0 || timed_out || changed)
            return TRUE;
    }
}

static gboolean
host_barrier(RsEndpoint *base, GError **error)
{
    HostEndpoint *self = (HostEndpoint *)base;
    HostWorld *w = self->world;
    g_mutex_lock(&w->lock);
    guint64 generation = w->barrier_generation;
    if (++w->barrier_count == w->n_ranks) {
        w->barrier_count = 0;
        w->barrier_generation++;
        g_cond_broadcast(&w->cond);
    } else {
        while (w->barrier_generation == generation && !g_atomic_int_get(&w->aborted))
            g_cond_wait(&w->cond, &w->lock);
    }
    g_mutex_unlock(&w->lock);
    return check_aborted(self, error);
}

static gboolean
host_gather(RsEndpoint *base, GBytes *data, GPtrArray **all_out, GError **error)
{
    HostEndpoint *self = (HostEndpoint *)base;
    HostWorld *w = self->world;
    w->gather_slots[self->base.rank] = g_bytes_ref(data);
    if (!host_barrier(base, error))
        return FALSE;
    if (self->base.rank == 0) {
        GPtrArray *all = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
        for (guint r = 0; r < w->n_ranks; r++) {
            g_ptr_array_add(all, w->gather_slots[r]);
            w->gather_slots[r] = NULL;
        }
        *all_out = all;
    }
    /* Nobody may store the next gather's bytes before rank 0 took these. */
    return host_barrier(base, error);
}

static gboolean
host_bcast(RsEndpoint *base, GBytes *data, GBytes **data_out, GError **error)
{
    HostEndpoint *self = (HostEndpoint *)base;
    HostWorld *w = self->world;
    if (self->base.rank == 0)
        w->bcast_data = g_bytes_ref(data);
    if (!host_barrier(base, error))
        return FALSE;
    *data_out = g_bytes_ref(w->bcast_data);
    if (!host_barrier(base, error))
        return FALSE;
    if (self->base.rank == 0)
        g_clear_pointer(&w->bcast_data, g_bytes_unref);
    return TRUE;
}

static gpointer
rank_thread(gpointer data)
{
    HostEndpoint *ep = data;
    HostWorld *w = ep->world;
    g_autoptr(GError) error = NULL;
    if (!w->fn(&ep->base, w->user_data, &error)) {
        if (error == NULL)
            g_set_error(&error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                        "rank %u failed", ep->base.rank);
        /* A rank stopped by another rank's failure does not replace the cause. */
        if (!g_error_matches(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_ABORTED))
            world_abort(w, error);
        else
            world_abort(w, NULL);
    }
    return NULL;
}

static gboolean
host_launch(RsTransport *transport, guint n_ranks, RsRankFunc fn, gpointer user_data,
            GError **error)
{
    HostWorld w = {0};
    w.n_ranks = n_ranks;
    w.eager_bytes = transport->config.eager_bytes;
    w.depth = transport->config.queue_depth;
    w.fn = fn;
    w.user_data = user_data;
    g_mutex_init(&w.lock);
    g_cond_init(&w.cond);
    w.gather_slots = g_new0(GBytes *, n_ranks);
    w.eps = g_new0(HostEndpoint, n_ranks);
    for (guint r = 0; r < n_ranks; r++) {
        HostEndpoint *ep = &w.eps[r];
        ep->base.transport = transport;
        ep->base.rank = r;
        ep->base.n_ranks = n_ranks;
        ep->world = &w;
        g_mutex_init(&ep->lock);
        g_cond_init(&ep->cond);
        ep->in = g_new0(Channel, n_ranks);
        ep->pending_sends = g_new0(GQueue, n_ranks);
        ep->posted_recvs = g_new0(GQueue, n_ranks);
    }
    GThread **threads = g_new0(GThread *, n_ranks);
    for (guint r = 0; r < n_ranks; r++) {
        g_autofree char *name = g_strdup_printf("rank-%u", r);
        threads[r] = g_thread_new(name, rank_thread, &w.eps[r]);
    }
    for (guint r = 0; r < n_ranks; r++)
        g_thread_join(threads[r]);
    g_free(threads);

    for (guint r = 0; r < n_ranks; r++) {
        HostEndpoint *ep = &w.eps[r];
        for (guint s = 0; s < n_ranks; s++) {
            g_free(ep->in[s].ring);
            g_free(ep->in[s].slots);
            g_queue_clear(&ep->pending_sends[s]);
            g_queue_clear(&ep->posted_recvs[s]);
        }
        g_free(ep->in);
        g_free(ep->pending_sends);
        g_free(ep->posted_recvs);
        g_mutex_clear(&ep->lock);
        g_cond_clear(&ep->cond);
    }
    g_free(w.eps);
    for (guint r = 0; r < n_ranks; r++)
        if (w.gather_slots[r] != NULL)
            g_bytes_unref(w.gather_slots[r]);
    g_free(w.gather_slots);
    if (w.bcast_data != NULL)
        g_bytes_unref(w.bcast_data);
    g_mutex_clear(&w.lock);
    g_cond_clear(&w.cond);
    if (w.first_error != NULL) {
        g_propagate_error(error, w.first_error);
        return FALSE;
    }
    if (w.aborted) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED, "a rank failed");
        return FALSE;
    }
    return TRUE;
}

/* rs_transport_get_launch_bytes() for host: what host_launch() and try_place() allocate. */
static guint64
host_launch_bytes(const RsTransport *transport, guint n_ranks, guint64 n_pairs)
{
    guint64 per_pair_all = sizeof(Channel) + 2 * sizeof(GQueue);
    guint64 per_pair_used = (guint64)transport->config.queue_depth *
                            (sizeof(Entry) + transport->config.eager_bytes);
    guint64 per_rank = sizeof(HostEndpoint) + sizeof(GBytes *) + sizeof(GThread *);
    guint64 n = n_ranks;
    guint64 all_pairs = n * n, total;
    if (!g_uint64_checked_mul(&total, all_pairs, per_pair_all))
        return G_MAXUINT64;
    guint64 used;
    if (!g_uint64_checked_mul(&used, MIN(n_pairs, all_pairs), per_pair_used) ||
        !g_uint64_checked_add(&total, total, used) ||
        !g_uint64_checked_add(&total, total, n * per_rank))
        return G_MAXUINT64;
    return total;
}

const RsTransportClass rs_transport_host_class = {
    .launch_bytes = host_launch_bytes,
    .name = "host",
    .description = "ranks are threads of this process; bytes move through bounded queues",
    .available = TRUE,
    .open = host_open,
    .close = host_close,
    .abort = NULL,
    .launch = host_launch,
    .check_no_stray = host_check_no_stray,
    .isend = host_isend,
    .irecv = host_irecv,
    .isendv = host_isendv,
    .irecvv = host_irecvv,
    .progress = host_progress,
    .barrier = host_barrier,
    .gather = host_gather,
    .bcast = host_bcast,
};

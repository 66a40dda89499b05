/* flow-sim.c — the event-driven flow-level simulator; the model is described in flow-sim.h.
 *
 * State per message: where it is in its life (idle until its phase is posted, paying its
 * software overhead, waiting for its dependencies, paying route latency, taking bandwidth,
 * done), the chunk it is on and the bytes it has delivered. A message taking bandwidth owns a
 * flow slot: its route, its place in the flow list of every non-dominated link it crosses
 * (swap-remove keeps joins and leaves O(1)), its rate and the bytes left of its chunk.
 *
 * Two heaps drive time: timers (overhead and latency ends; each pushed once) and the
 * indexed heap of flow completion times (updated in place when a rate changes). Events
 * within a relative 1e-12 of the earliest are handled as one batch, then the rates are
 * recomputed once for the flows on the links whose flow set changed (fill()), and, in the
 * default mode, for the flows those new rates leave wrong (expand(), a few rounds).
 *
 * Progressive filling: every link of the recomputed set starts with its residual capacity
 * (capacity minus the rates of flows outside the set) and its count of unfrozen flows; the
 * link with the smallest fair share residual / count freezes all its unfrozen flows at that
 * share, which lowers residuals and counts of their other links; repeat. A heap of links
 * keyed by fair share (keys only grow, so a stale key is re-pushed when popped) makes it
 * O(F·R·log L). */
#include "sim/flow-sim.h"
#include "sim/gpu-cost.h"

#include "base/edge-colour.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

/* clang-format off */
G_DEFINE_QUARK(rs-flow-sim-error-quark, rs_flow_sim_error)
/* clang-format on */

#define NO_POS G_MAXUINT32
#define NO_SLOT G_MAXUINT32
#define BATCH_REL_TOLERANCE 1e-12
#define INITIAL_BUCKET_S 1e-7
#define EXACT_REFRESH_EVERY 64
#define SATURATED_REL_TOLERANCE 1e-6
#define MAX_EXPAND_ROUNDS 4
#define MAX_EXPAND_GROWTH 2
#define MAX_EXPAND_EXTRA 64

enum {
    ST_IDLE,       /* its phase has not been posted */
    ST_OVERHEAD,   /* paying the software overhead */
    ST_WAIT,       /* waiting for its dependencies to deliver the next chunk */
    ST_LATENCY,    /* first chunk paying route latency */
    ST_ACTIVE,     /* a flow taking bandwidth */
    ST_WAIT_LOCAL, /* a local copy waiting for its dependencies */
    ST_COPY_LOCAL, /* a local copy paying its pre + post time (GPU-side costs) */
    ST_DONE,       /* its bytes arrived (its post time may still be running) */
};

/* TIMER_POST_DONE: a network message's post time (unpack) ended; TIMER_LOCAL_DONE: a local
 * copy's pre + post time ended; TIMER_ROUND: a rank posts its next round. */
enum { TIMER_OVERHEAD_DONE, TIMER_ACTIVATE, TIMER_POST_DONE, TIMER_LOCAL_DONE, TIMER_ROUND };

/* Fluid relays: a gap of progress (fraction of a message) this small is closed; a
 * dependency's bytes this close to a threshold have reached it. */
#define FLUID_REL_TOLERANCE 1e-9
/* A link loaded below (1 − this) of its capacity has slack for fluid_passive(). */
#define FLUID_PASSIVE_SLACK 1e-6
/* Window posting: peak memory per chunk operation, bytes (run_window()). */
#define WINDOW_BYTES_PER_OP 176.0

typedef struct {
    double t;
    guint64 seq;
    guint32 message;
    guint32 kind;
} Timer;

/* One link of a flow's route, with the bytes it puts on the link per byte of the flow
 * (weighted max-min; 1 for every flow of a message). */
typedef struct {
    guint32 link;
    guint32 pos;   /* index in the link's flow list, NO_POS if dominated */
    double weight; /* bytes per reference byte */
} FlowLink;

typedef struct {
    guint32 message; /* NO_SLOT when the slot is free; a route group's first member */
    guint32 n_links, cap_links;
    FlowLink in[RS_TOPOLOGY_MAX_ROUTE]; /* the links while they fit */
    FlowLink *ext;                      /* (nullable) the links when there are more */
    double rate;                        /* bytes/s */
    double new_rate;
    double remaining; /* bytes of the current chunk (fluid: of the message) still to send */
    double last_t;    /* time remaining was last brought up to date */
    guint32 mark;       /* epoch of membership of the recomputed set */
    guint32 frozen;     /* epoch in which its new rate was fixed */
    double cap_hint;    /* fluid relays: the cap a clamp found, for the next filling */
    guint32 hint_epoch; /* the set epoch cap_hint belongs to */
    /* Route groups (sim->grouped): the flow of every message flowing between its (src, dst)
     * pair. They share one route, so max-min gives each the same rate: the group is one flow
     * of weight n_members on each of its links, `rate` is each member's, and a member's
     * chunk ends when the group's clock `sent` reaches its tag (sim->tag). Recomputations
     * then cost the groups on a link, not its messages. */
    guint32 n_members, cap_members;
    guint32 *members; /* [cap_members]: a binary heap of messages by (tag, message) */
    double sent;      /* bytes each member has sent since the group started */
    double next_tag;  /* the first member's tag: `remaining` is next_tag − sent */
} Flow;

typedef struct {
    guint32 slot;  /* flow slot */
    guint32 entry; /* index into the flow's FlowLink array */
} LinkItem;

typedef struct {
    double t;     /* when the flow's chunk (fluid: its next event) completes, seconds */
    guint32 slot; /* flow slot */
    guint32 message; /* its message (a route group's first member): orders equal times */
} HeapEntry;

/* The fields the filling reads for every link of a set come first, within 64 bytes (the
 * struct is ~200 bytes and a set's links are scattered over all of them: 6.7 -> 6.4 s for
 * bench-flow-sim's 10^6 messages). */
typedef struct {
    /* recompute temporaries */
    guint32 mark;
    guint32 n_in_set;
    guint32 n_unfrozen;
    guint32 csr_first, csr_fill;
    guint32 len; /* of items */
    double residual;
    double w_unfrozen, w_in_set; /* weighted: n_unfrozen, n_in_set */
    double old_sum;
    double used; /* sum of the rates of items */
    /* --- */
    double capacity; /* bytes/s */
    double freeze_share; /* the share its flows froze at in the last fill, or −1 */
    double max_rate;     /* an upper bound of the rates of its flows (exact after a scan) */
    LinkItem *items; /* flows taking bandwidth on this link (non-dominated links only) */
    guint32 cap;
    guint32 n_incremental;
    guint32 n_active; /* flows taking bandwidth, all links */
    gboolean dominated;
    gboolean changed;
    guint32 pend_bucket;
    double new_sum;
    double busy_since;
    double rate_sum;   /* sum of the rates of the flows crossing it, all links (timeline) */
    double rate_since; /* time rate_sum last changed */
    double pend_bytes; /* timeline bytes of bucket pend_bucket not yet in its row: the rows
                        * (n_links × n_buckets) are written when the bucket changes, not at
                        * every rate change (each write was a cache miss: 12% of the time
                        * of 10^6 messages) */
    double lost;         /* exact rates: bytes/s of the flows that left it since the last
                          * recomputation, and the largest of their rates */
    double lost_max;
} LinkState;

typedef struct {
    double share;
    guint32 link;
} LinkKey;

/* RS_FLOW_SIM_POST_WINDOW: the simulated messages are the chunk operations of the input's
 * messages (groups); run_window() fills this. */
typedef struct {
    guint n_groups;
    const guint32 *op_group; /* [ops]: its message */
    const guint32 *op_chunk; /* [ops]: its chunk of that message */
    const guint64 *first;    /* [n_groups + 1]: a group's chunks are first[g] .. first[g + 1] */
    const guint32 *group_op; /* [ops]: the operation of chunk first[g] + k */
} WindowGroups;

typedef struct {
    const RsTopology *topo;
    RsFlowSimOptions opt;
    const WindowGroups *wg; /* window only */
    guint32 *prefix;        /* window: [n_groups]: the chunks of a message arrived in a row
                             * from its first (the executor's prefix_chunks) */
    RsFlowSimResult *res;
    guint n;
    const RsFlowMessage *msgs;
    const guint32 *deps;
    guint *dependents_first; /* [n + 1] */
    guint32 *dependents;
    guint *dependents_edge; /* per dependents entry: its edge's index into deps (and capped) */
    guint8 *state;
    guint32 *chunk; /* chunked: the chunk it is on; fluid: 1 once it held its last chunk
                     * (fluid_hold()), else 0 */
    guint32 *n_chunks;
    guint64 *chunk_size;
    guint64 *delivered; /* bytes counted as arrived (progress; chunked: where its next chunk
                         * starts, for its dependents); fluid: set once whole or held */
    guint32 *slot;
    /* phases */
    guint32 *phase_order; /* message indices by (phase, index) */
    guint *phase_first;   /* [n_phases + 1] */
    guint cur_phase;
    guint remaining_in_phase;
    guint n_done;
    /* flows */
    GArray *flows;      /* Flow */
    GArray *free_slots; /* guint32 */
    guint n_active_flows;
    HeapEntry *heap;    /* the flowing slots ordered by (t, slot) */
    guint32 *heap_pos;  /* [heap_pos_cap]: per flow slot, its place in heap */
    guint heap_pos_cap;
    guint heap_len, heap_cap;
    GArray *timers; /* Timer, binary heap */
    guint64 timer_seq;
    /* links */
    LinkState *links;
    guint n_links;
    GArray *changed; /* guint32 link ids */
    guint32 epoch;
    GArray *set;   /* guint32 flow slots being recomputed */
    GArray *lset;  /* guint32 links of the set */
    GArray *csr;   /* guint32 flow slots per link of lset */
    GArray *csr_w; /* double: the weight of each csr entry's flow on that link */
    GArray *lheap; /* LinkKey */
    guint fill_unfrozen; /* flows of the set the filling has not frozen yet */
    double now;
    /* fluid relays */
    gboolean fluid;
    double *phi;           /* [n]: its chunk as a fraction of its bytes (1: unchunked) */
    guint32 *n_chunks_ref; /* [n]: the chunks the chunked model sends for it */
    gboolean *capped;      /* [n_deps]: dependency edge binding: the message caught up with
                            * that dependency and follows it at its pace (fluid_set_capped()) */
    guint32 *n_followers;  /* [n]: its capped dependent edges */
    GArray *forced;        /* guint32 flow slots to recompute at the next batch */
    GArray *chain;         /* guint32 flow slots fluid_propagate() walks (scratch) */
    GArray *fresh;         /* exact rates: guint32 flow slots started since the last batch */
    GArray *cheap;         /* LinkKey (share: a cap in bytes/s, link: a flow slot) */
    GArray *sched_queue;   /* guint32 messages whose next event is due (fluid_reschedule()) */
    guint32 *sched_mark;   /* [n]: sched_epoch when queued */
    guint32 sched_epoch;   /* starts at 1 */
    gboolean exact;        /* RS_FLOW_SIM_RATES_EXACT without fluid relays */
    /* route groups (Flow): every mode but fluid relays, whose followers' caps differ per
     * message */
    gboolean grouped;
    GHashTable *groups;  /* a member's RsFlowMessage (its src, dst) -> the flow slot + 1 */
    double *tag;         /* [n]: where its current chunk ends on its group's clock */
    guint32 *member_pos; /* [n]: its place in its group's members heap */
    /* rounds (RS_FLOW_SIM_POST_ROUNDS) */
    gboolean rounds;
    guint n_gpus;
    guint *rank_first;    /* [n_gpus + 1]: CSR into rank_msgs */
    guint32 *rank_msgs;   /* the messages of each rank (sent, received or local copies) by
                           * (phase, round, index) */
    guint *rank_next;     /* [n_gpus]: its first message not yet posted */
    guint *rank_pending;  /* [n_gpus]: messages of its posted round not yet arrived */
    guint8 *rank_waiting; /* [n_gpus]: its next round's post is scheduled */
    guint8 *ends_posted;  /* [n]: how many of its ranks posted its round (window: its
                           * chunk operation) */
    /* window (RS_FLOW_SIM_POST_WINDOW): the messages are chunk operations, numbered in key
     * order; rank_msgs lists each rank's network ones, rank_next its next to post */
    gboolean window;
    guint *rank_outstanding; /* [n_gpus]: its operations posted and not yet arrived */
    double *stream_free_s;   /* [n_gpus]: when its stream ends the packs and unpacks queued */
    double *ready_s;         /* [n]: when the sender's pack of this operation ends */
    /* the topology's software costs, read once */
    double message_overhead_s;
    double chunk_overhead_s; /* per chunk operation (software.chunk_overhead); 0: none */
    /* progress */
    guint64 bytes_done;
    gint64 start_us, next_progress_us;
} Sim;

void
rs_flow_sim_options_init(RsFlowSimOptions *options)
{
    options->chunk_bytes = RS_FLOW_SIM_DEFAULT_CHUNK_BYTES;
    options->max_chunks_per_message = RS_FLOW_SIM_DEFAULT_MAX_CHUNKS;
    options->rates = RS_FLOW_SIM_RATES_EXACT;
    options->n_timeline_buckets = RS_FLOW_SIM_DEFAULT_BUCKETS;
    options->relays = RS_FLOW_SIM_RELAYS_CHUNKED;
    options->progress = NULL;
    options->progress_data = NULL;
    options->progress_interval_s = 0.0;
    options->progress_label = NULL;
    options->posting = RS_FLOW_SIM_POST_PHASES;
    options->message_pre_s = NULL;
    options->message_post_s = NULL;
    options->round_fixed_s = 0.0;
    options->max_events = 0;
    options->plan_relays = TRUE;
    options->flow_per_message = FALSE;
    options->window = RS_FLOW_SIM_DEFAULT_WINDOW;
}

guint32
rs_flow_sim_result_get_last_receiver(const RsFlowSimResult *result, double *finish_s)
{
    guint32 last = 0;
    *finish_s = -1.0;
    for (guint m = 0; m < result->n_messages; m++) {
        double end = result->message_end_s[m];
        if (!isnan(end) && end > *finish_s) {
            *finish_s = end;
            last = result->messages[m].dst;
        }
    }
    return last;
}

void
rs_flow_sim_result_free(RsFlowSimResult *r)
{
    if (r == NULL)
        return;
    g_free(r->messages);
    g_free(r->deps);
    g_free(r->message_start_s);
    g_free(r->message_end_s);
    g_free(r->phase_ids);
    g_free(r->phase_end_s);
    g_free(r->gpu_finish_s);
    g_free(r->link_bytes);
    g_free(r->link_busy_s);
    g_free(r->link_timeline_bytes);
    g_free(r);
}

static inline Flow *
flow_at(Sim *sim, guint32 slot)
{
    return &g_array_index(sim->flows, Flow, slot);
}

/* --- flow completion heap (indexed) ---
 * Entries carry their completion time and slot, and each slot's place lives in the compact
 * heap_pos array, so a sift step touches no Flow (each touch was a cache miss: with ~10^5
 * flows the sifts were 30% of the default scenario's time). Order: (t, message): equal
 * times go in message order, whatever slots they hold. */

static inline gboolean
entry_less(const HeapEntry *a, const HeapEntry *b)
{
    return a->t < b->t || (a->t == b->t && a->message < b->message);
}

/* Sift-up and sift-down move a hole instead of swapping: each step one write. */
static void
heap_up(Sim *sim, guint i)
{
    HeapEntry moving = sim->heap[i];
    while (i > 0) {
        guint parent = (i - 1) / 2;
        if (!entry_less(&moving, &sim->heap[parent]))
            break;
        sim->heap[i] = sim->heap[parent];
        sim->heap_pos[sim->heap[i].slot] = i;
        i = parent;
    }
    sim->heap[i] = moving;
    sim->heap_pos[moving.slot] = i;
}

static void
heap_down(Sim *sim, guint i)
{
    HeapEntry moving = sim->heap[i];
    guint n = sim->heap_len;
    for (;;) {
        guint l = 2 * i + 1, r = l + 1, m = l;
        if (l >= n)
            break;
        if (r < n && entry_less(&sim->heap[r], &sim->heap[l]))
            m = r;
        if (!entry_less(&sim->heap[m], &moving))
            break;
        sim->heap[i] = sim->heap[m];
        sim->heap_pos[sim->heap[i].slot] = i;
        i = m;
    }
    sim->heap[i] = moving;
    sim->heap_pos[moving.slot] = i;
}

static void
heap_push(Sim *sim, guint32 slot, double t)
{
    if (sim->heap_len == sim->heap_cap) {
        sim->heap_cap = MAX(64, sim->heap_cap * 2);
        sim->heap = g_renew(HeapEntry, sim->heap, sim->heap_cap);
    }
    if (slot >= sim->heap_pos_cap) {
        guint cap = MAX(MAX(64u, slot + 1), sim->heap_pos_cap * 2);
        sim->heap_pos = g_renew(guint32, sim->heap_pos, cap);
        sim->heap_pos_cap = cap;
    }
    sim->heap[sim->heap_len] = (HeapEntry){t, slot, flow_at(sim, slot)->message};
    sim->heap_pos[slot] = sim->heap_len;
    sim->heap_len++;
    heap_up(sim, sim->heap_len - 1);
}

static void
heap_remove(Sim *sim, guint32 slot)
{
    guint i = sim->heap_pos[slot];
    guint last = sim->heap_len - 1;
    sim->heap_len--;
    if (i != last) {
        HeapEntry moved = sim->heap[last];
        sim->heap[i] = moved;
        sim->heap_pos[moved.slot] = i;
        heap_up(sim, i);
        if (sim->heap_pos[moved.slot] == i)
            heap_down(sim, i);
    }
}

/* @slot now completes at @t: its entry takes it and moves. */
static void
heap_update(Sim *sim, guint32 slot, double t)
{
    guint i = sim->heap_pos[slot];
    sim->heap[i].t = t;
    heap_up(sim, i);
    heap_down(sim, sim->heap_pos[slot]);
}

/* --- timers --- */

static inline gboolean
timer_less(const Timer *a, const Timer *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void
timer_push(Sim *sim, double t, guint32 message, guint32 kind)
{
    Timer tm = {t, sim->timer_seq++, message, kind};
    g_array_append_val(sim->timers, tm);
    Timer *h = (Timer *)sim->timers->data;
    guint i = sim->timers->len - 1;
    while (i > 0) {
        guint parent = (i - 1) / 2;
        if (!timer_less(&h[i], &h[parent]))
            break;
        Timer tmp = h[i];
        h[i] = h[parent];
        h[parent] = tmp;
        i = parent;
    }
}

static Timer
timer_pop(Sim *sim)
{
    Timer *h = (Timer *)sim->timers->data;
    Timer top = h[0];
    guint n = sim->timers->len - 1;
    h[0] = h[n];
    g_array_set_size(sim->timers, n);
    h = (Timer *)sim->timers->data;
    guint i = 0;
    for (;;) {
        guint l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && timer_less(&h[l], &h[m]))
            m = l;
        if (r < n && timer_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            break;
        Timer tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
    return top;
}

/* --- link heap for progressive filling --- */

static inline gboolean
key_less(const LinkKey *a, const LinkKey *b)
{
    return a->share < b->share || (a->share == b->share && a->link < b->link);
}

static void
lheap_push(GArray *heap, double share, guint32 link)
{
    LinkKey k = {share, link};
    g_array_set_size(heap, heap->len + 1);
    LinkKey *h = (LinkKey *)heap->data;
    guint i = heap->len - 1;
    while (i > 0) {
        guint parent = (i - 1) / 2;
        if (!key_less(&k, &h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = k;
}

/* Moves @moving down from slot @i of the @n keys of @h to where it belongs (the smaller
 * child picked without a branch on which it is: half of those were mispredicted). */
static inline void
lheap_sift_down(LinkKey *h, guint n, guint i, LinkKey moving)
{
    for (guint l = 2 * i + 1; l < n; l = 2 * i + 1) {
        guint m = l + (guint)(l + 1 < n && key_less(&h[l + 1], &h[l]));
        if (!key_less(&h[m], &moving))
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = moving;
}

static LinkKey
lheap_pop(GArray *heap)
{
    LinkKey *h = (LinkKey *)heap->data;
    LinkKey top = h[0];
    guint n = heap->len - 1;
    LinkKey moving = h[n];
    g_array_set_size(heap, n);
    if (n > 0)
        lheap_sift_down((LinkKey *)heap->data, n, 0, moving);
    return top;
}

/* Makes @heap's keys a heap in O(len) (Floyd's bottom-up construction). */
static void
lheap_build(GArray *heap)
{
    LinkKey *h = (LinkKey *)heap->data;
    for (guint k = heap->len / 2; k-- > 0;)
        lheap_sift_down(h, heap->len, k, h[k]);
}

/* --- timeline --- */

/* Writes @link's pending timeline bytes into its row. */
static inline void
timeline_write_pending(Sim *sim, guint32 link)
{
    LinkState *ls = &sim->links[link];
    if (ls->pend_bytes != 0.0) {
        sim->res->link_timeline_bytes[(gsize)link * sim->res->n_buckets + ls->pend_bucket] +=
            ls->pend_bytes;
        ls->pend_bytes = 0.0;
    }
}

/* Doubles the bucket width (merging pairs) until @t fits in the timeline. */
static void
timeline_fit(Sim *sim, double t)
{
    RsFlowSimResult *res = sim->res;
    guint nb = res->n_buckets;
    if (nb == 0)
        return;
    if (t > nb * res->bucket_s)
        for (guint32 l = 0; l < sim->n_links; l++)
            timeline_write_pending(sim, l);
    while (t > nb * res->bucket_s) {
        for (guint l = 0; l < sim->n_links; l++) {
            double *row = &res->link_timeline_bytes[(gsize)l * nb];
            for (guint b = 0; b < nb / 2; b++)
                row[b] = row[2 * b] + row[2 * b + 1];
            for (guint b = nb / 2; b < nb; b++)
                row[b] = 0.0;
        }
        res->bucket_s *= 2;
    }
}

/* Spreads @bytes carried evenly over [t0, t1] into @link's buckets. */
static void
timeline_add(Sim *sim, guint32 link, double t0, double t1, double bytes)
{
    RsFlowSimResult *res = sim->res;
    guint nb = res->n_buckets;
    double w = res->bucket_s;
    double *row = &res->link_timeline_bytes[(gsize)link * nb];
    guint b0 = MIN((guint)(t0 / w), nb - 1);
    guint b1 = MIN((guint)(t1 / w), nb - 1);
    if (b0 == b1 || t1 <= t0) {
        LinkState *ls = &sim->links[link];
        if (ls->pend_bucket != b0) {
            timeline_write_pending(sim, link);
            ls->pend_bucket = b0;
        }
        ls->pend_bytes += bytes;
        return;
    }
    double per_s = bytes / (t1 - t0);
    for (guint b = b0; b <= b1; b++) {
        double lo = MAX(t0, b * w), hi = MIN(t1, (b + 1) * w);
        if (b == b1)
            hi = t1;
        if (hi > lo)
            row[b] += per_s * (hi - lo);
    }
}

/* --- flows --- */

static inline FlowLink *
flow_links(Flow *f)
{
    return f->ext != NULL ? f->ext : f->in;
}

/* Brings @f's remaining bytes up to now at its current rate. */
static void
settle(Sim *sim, Flow *f)
{
    double dt = sim->now - f->last_t;
    if (dt > 0 && f->rate > 0) {
        f->sent += f->rate * dt;
        f->remaining = f->n_members > 0 ? MAX(0.0, f->next_tag - f->sent)
                                        : MAX(0.0, f->remaining - f->rate * dt);
    }
    f->last_t = sim->now;
}

/* --- route groups (Flow): the members heap, ordered by (tag, message) --- */

static guint64 chunk_bytes(Sim *sim, guint32 m, guint32 k);

static inline gboolean
member_less(const Sim *sim, guint32 a, guint32 b)
{
    return sim->tag[a] < sim->tag[b] || (sim->tag[a] == sim->tag[b] && a < b);
}

static void
members_sift(Sim *sim, Flow *f, guint i)
{
    guint32 *h = f->members;
    guint32 moving = h[i];
    while (i > 0 && member_less(sim, moving, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        sim->member_pos[h[i]] = i;
        i = (i - 1) / 2;
    }
    for (;;) {
        guint l = 2 * i + 1, c = l;
        if (l >= f->n_members)
            break;
        if (l + 1 < f->n_members && member_less(sim, h[l + 1], h[l]))
            c = l + 1;
        if (!member_less(sim, h[c], moving))
            break;
        h[i] = h[c];
        sim->member_pos[h[i]] = i;
        i = c;
    }
    h[i] = moving;
    sim->member_pos[moving] = i;
}

/* The group's next chunk end: its remaining bytes and its place in the completion heap. */
static void
group_schedule(Sim *sim, guint32 slot)
{
    Flow *f = flow_at(sim, slot);
    f->message = f->members[0];
    f->next_tag = sim->tag[f->message];
    f->remaining = MAX(0.0, f->next_tag - f->sent);
    sim->heap[sim->heap_pos[slot]].message = f->message;
    heap_update(sim, slot, f->rate > 0 ? sim->now + f->remaining / f->rate : INFINITY);
}

/* Message @m joins the members of @f (settled) with its current chunk. */
static void
member_add(Sim *sim, Flow *f, guint32 m)
{
    if (f->n_members == f->cap_members) {
        f->cap_members = MAX(4, f->cap_members * 2);
        f->members = g_renew(guint32, f->members, f->cap_members);
    }
    sim->tag[m] = f->sent + (double)chunk_bytes(sim, m, sim->chunk[m]);
    f->members[f->n_members] = m;
    sim->member_pos[m] = f->n_members;
    members_sift(sim, f, f->n_members++);
}

static void
member_remove(Sim *sim, Flow *f, guint32 m)
{
    guint i = sim->member_pos[m];
    guint32 last = f->members[--f->n_members];
    if (i < f->n_members) {
        f->members[i] = last;
        sim->member_pos[last] = i;
        members_sift(sim, f, i);
    }
}

/* Route groups are keyed by a member's message (sim->msgs, which outlives the table), read
 * as its (src, dst) pair: no key to allocate. The pair is Fibonacci-hashed (Knuth, TAOCP
 * vol. 3, 6.4): g_int64_hash() folds the halves by XOR, and src ^ dst collides for every
 * pair at one XOR distance (about 25 keys a bucket on bench-flow-sim's 10^5 flows). */
static guint
group_key_hash(gconstpointer key)
{
    const RsFlowMessage *msg = key;
    guint64 pair = ((guint64)msg->src << 32) | msg->dst;
    return (guint)((pair * G_GUINT64_CONSTANT(0x9E3779B97F4A7C15)) >> 32);
}

static gboolean
group_key_equal(gconstpointer a, gconstpointer b)
{
    const RsFlowMessage *x = a, *y = b;
    return x->src == y->src && x->dst == y->dst;
}

/* Adds the bytes @link carried since its rate sum last changed to its timeline. */
static void
link_flush(Sim *sim, guint32 link)
{
    LinkState *ls = &sim->links[link];
    double dt = sim->now - ls->rate_since;
    if (dt > 0 && ls->rate_sum > 0 && sim->res->n_buckets > 0) {
        timeline_fit(sim, sim->now);
        timeline_add(sim, link, ls->rate_since, sim->now, ls->rate_sum * dt);
    }
    ls->rate_since = sim->now;
}

/* @f's rate becomes @rate: its links' timelines are brought up to now first. */
static void
flow_set_rate(Sim *sim, Flow *f, double rate)
{
    settle(sim, f);
    FlowLink *fl = flow_links(f);
    for (guint i = 0; i < f->n_links; i++) {
        LinkState *ls = &sim->links[fl[i].link];
        link_flush(sim, fl[i].link);
        ls->rate_sum = MAX(0.0, ls->rate_sum + (rate - f->rate) * fl[i].weight);
        ls->max_rate = MAX(ls->max_rate, rate);
    }
    f->rate = rate;
}

static void
link_mark_changed(Sim *sim, guint32 link)
{
    LinkState *ls = &sim->links[link];
    if (!ls->changed) {
        ls->changed = TRUE;
        g_array_append_val(sim->changed, link);
    }
}

static void
link_busy_inc(Sim *sim, guint32 link)
{
    LinkState *ls = &sim->links[link];
    if (ls->n_active++ == 0)
        ls->busy_since = sim->now;
}

static void
link_busy_dec(Sim *sim, guint32 link)
{
    LinkState *ls = &sim->links[link];
    if (--ls->n_active == 0)
        sim->res->link_busy_s[link] += sim->now - ls->busy_since;
}

static guint64
chunk_end(Sim *sim, guint32 m, guint32 k)
{
    guint64 end = (guint64)(k + 1) * sim->chunk_size[m];
    return MIN(end, sim->msgs[m].size_bytes);
}

static guint64
chunk_bytes(Sim *sim, guint32 m, guint32 k)
{
    guint64 begin = (guint64)k * sim->chunk_size[m];
    return chunk_end(sim, m, k) - MIN(begin, sim->msgs[m].size_bytes);
}

/* Appends @link_id to the flow list of its link as entry @entry of flow @slot. */
static void
link_add_item(Sim *sim, guint32 link_id, guint32 slot, guint32 entry)
{
    LinkState *ls = &sim->links[link_id];
    if (ls->len == ls->cap) {
        ls->cap = MAX(4, ls->cap * 2);
        ls->items = g_renew(LinkItem, ls->items, ls->cap);
    }
    flow_links(flow_at(sim, slot))[entry].pos = ls->len;
    ls->items[ls->len++] = (LinkItem){slot, entry};
    link_mark_changed(sim, link_id);
}

/* Swap-removes item @pos of @link_id's flow list. */
static void
link_remove_item(Sim *sim, guint32 link_id, guint32 pos)
{
    LinkState *ls = &sim->links[link_id];
    LinkItem last = ls->items[--ls->len];
    if (pos != ls->len) {
        ls->items[pos] = last;
        flow_links(flow_at(sim, last.slot))[last.entry].pos = pos;
    }
    /* Every flow sharing the link may speed up. (Skipping links with slack would be exact
     * only if every rate were max-min; with bounded propagation some rates are stale, and a
     * flow left at a stale low rate on a link that looks unsaturated would never be
     * recomputed.) */
    link_mark_changed(sim, link_id);
}

/* Takes a free flow slot for @m, cleared. */
static Flow *
flow_init(Sim *sim, guint32 slot, guint32 m)
{
    Flow *f = flow_at(sim, slot);
    guint32 *members = f->members, cap_members = f->cap_members; /* a freed slot's, reused */
    memset(f, 0, sizeof *f);
    f->members = members;
    f->cap_members = cap_members;
    f->message = m;
    f->cap_links = RS_TOPOLOGY_MAX_ROUTE;
    f->last_t = sim->now;
    return f;
}

static guint32
flow_take_slot(Sim *sim)
{
    guint32 slot;
    if (sim->free_slots->len > 0) {
        slot = g_array_index(sim->free_slots, guint32, sim->free_slots->len - 1);
        g_array_set_size(sim->free_slots, sim->free_slots->len - 1);
    } else {
        slot = sim->flows->len;
        g_array_set_size(sim->flows, slot + 1);
        Flow *f = flow_at(sim, slot);
        f->members = NULL;
        f->cap_members = 0;
    }
    return slot;
}

/* Route groups: each link of flow @slot (settled) carries @delta more members at its rate.
 * A member leaving counts as a flow leaving for exact rates' verification (`lost`). */
static void
group_reweigh(Sim *sim, guint32 slot, double delta)
{
    Flow *f = flow_at(sim, slot);
    FlowLink *fl = flow_links(f);
    for (guint j = 0; j < f->n_links; j++) {
        guint32 l = fl[j].link;
        LinkState *ls = &sim->links[l];
        link_flush(sim, l);
        ls->rate_sum = MAX(0.0, ls->rate_sum + f->rate * delta);
        fl[j].weight += delta;
        if (fl[j].pos == NO_POS)
            continue;
        ls->used = MAX(0.0, ls->used + f->rate * delta);
        if (delta < 0) {
            ls->lost -= f->rate * delta;
            ls->lost_max = MAX(ls->lost_max, f->rate);
        }
        link_mark_changed(sim, l);
    }
}

/* Charges flow @slot @weight on @link_id, a new entry: the flow must be settled. */
static void
flow_add_link(Sim *sim, guint32 slot, guint32 link_id, double weight)
{
    Flow *f = flow_at(sim, slot);
    FlowLink *fl = flow_links(f);
    if (f->n_links == f->cap_links) {
        guint cap = f->cap_links * 2;
        FlowLink *ext = g_new(FlowLink, cap);
        memcpy(ext, fl, sizeof(FlowLink) * f->n_links);
        g_free(f->ext);
        f->ext = ext;
        f->cap_links = cap;
        fl = ext;
    }
    guint32 e = f->n_links++;
    fl[e] = (FlowLink){link_id, NO_POS, weight};
    LinkState *ls = &sim->links[link_id];
    link_busy_inc(sim, link_id);
    link_flush(sim, link_id);
    ls->rate_sum += f->rate * weight;
    if (!ls->dominated) {
        ls->used += f->rate * weight;
        link_add_item(sim, link_id, slot, e);
    }
}

static double fluid_last_chunk(Sim *sim, guint32 m);

/* Starts a flow for the current chunk of @m (fluid: for the whole message, or for its last
 * chunk when it held that for its dependencies, chunk[m] > 0). */
static void
flow_start(Sim *sim, guint32 m)
{
    if (sim->grouped) {
        gpointer found = g_hash_table_lookup(sim->groups, &sim->msgs[m]);
        if (found != NULL) {
            /* Joins its route's group at the group's rate, recomputed with this batch. */
            guint32 slot = GPOINTER_TO_UINT(found) - 1;
            Flow *f = flow_at(sim, slot);
            settle(sim, f);
            group_reweigh(sim, slot, 1.0);
            member_add(sim, f, m);
            group_schedule(sim, slot);
            if (sim->exact)
                g_array_append_val(sim->fresh, slot);
            sim->slot[m] = slot;
            sim->state[m] = ST_ACTIVE;
            sim->res->n_chunks++;
            return;
        }
    }
    guint32 slot = flow_take_slot(sim);
    Flow *f = flow_init(sim, slot, m);
    guint32 route[RS_TOPOLOGY_MAX_ROUTE];
    guint n_route = rs_topology_route(sim->topo, sim->msgs[m].src, sim->msgs[m].dst, route);
    f->remaining = !sim->fluid          ? (double)chunk_bytes(sim, m, sim->chunk[m])
                   : sim->chunk[m] > 0 ? fluid_last_chunk(sim, m) /* held: resumes */
                                       : (double)sim->msgs[m].size_bytes;
    for (guint i = 0; i < n_route; i++)
        flow_add_link(sim, slot, route[i], 1.0);
    heap_push(sim, slot, INFINITY);
    if (sim->grouped) {
        member_add(sim, f, m);
        f->next_tag = sim->tag[m];
        g_hash_table_insert(sim->groups, (gpointer)&sim->msgs[m], GUINT_TO_POINTER(slot + 1));
    }
    if (sim->exact)
        g_array_append_val(sim->fresh, slot);
    sim->slot[m] = slot;
    sim->state[m] = ST_ACTIVE;
    sim->n_active_flows++;
    if (!sim->fluid)
        sim->res->n_chunks++;
}

/* Takes flow @slot off its links and frees the slot. */
static void
flow_release(Sim *sim, guint32 slot)
{
    Flow *f = flow_at(sim, slot);
    double rate = f->rate;
    flow_set_rate(sim, f, 0.0);
    FlowLink *fl = flow_links(f);
    for (guint i = 0; i < f->n_links; i++) {
        guint32 l = fl[i].link;
        LinkState *ls = &sim->links[l];
        link_busy_dec(sim, l);
        if (fl[i].pos == NO_POS)
            continue;
        link_remove_item(sim, l, fl[i].pos);
        ls->used = ls->len == 0 ? 0.0 : ls->used - rate * fl[i].weight;
        ls->lost += rate * fl[i].weight;
        ls->lost_max = MAX(ls->lost_max, rate);
    }
    heap_remove(sim, slot);
    g_clear_pointer(&f->ext, g_free);
    f->n_links = 0;
    f->message = NO_SLOT;
    f->n_members = 0;
    g_array_append_val(sim->free_slots, slot);
    sim->n_active_flows--;
}

/* Takes @m's flow off its links; its chunk is finished or paused. */
static void
flow_stop(Sim *sim, guint32 m)
{
    guint32 slot = sim->slot[m];
    Flow *f = flow_at(sim, slot);
    sim->slot[m] = NO_SLOT;
    if (!sim->grouped) {
        flow_release(sim, slot);
        return;
    }
    settle(sim, f);
    if (f->n_members == 1) {
        g_hash_table_remove(sim->groups, &sim->msgs[m]);
        flow_release(sim, slot);
        return;
    }
    member_remove(sim, f, m);
    group_reweigh(sim, slot, -1.0);
    group_schedule(sim, slot);
}

/* --- message life --- */

static gboolean fluid_start_ready(Sim *sim, guint32 m);
static void fluid_dep_done(Sim *sim, guint32 m, guint32 d);

static gboolean
all_deps_done(Sim *sim, guint32 m)
{
    const RsFlowMessage *msg = &sim->msgs[m];
    if (sim->window) {
        /* Chunk j of a message counts once chunks 0 .. j all arrived: the executor checks
         * the arrived prefix (exec/executor.c, prefix_chunks), and chunks of one message
         * may arrive out of order (the last is shorter). */
        for (guint i = 0; i < msg->n_deps; i++) {
            guint32 d = sim->deps[msg->first_dep + i];
            if (sim->prefix[sim->wg->op_group[d]] <= sim->wg->op_chunk[d])
                return FALSE;
        }
        return TRUE;
    }
    for (guint i = 0; i < msg->n_deps; i++)
        if (sim->state[sim->deps[msg->first_dep + i]] != ST_DONE)
            return FALSE;
    return TRUE;
}

/* May chunk @k of @m take bandwidth, as far as its dependencies go? */
static gboolean
deps_ready(Sim *sim, guint32 m, guint32 k)
{
    if (sim->rounds || sim->window)
        return all_deps_done(sim, m);
    if (sim->fluid)
        return sim->msgs[m].size_bytes > 0 && sim->msgs[m].src != sim->msgs[m].dst &&
                       sim->chunk[m] == 0
                   ? fluid_start_ready(sim, m)
                   : all_deps_done(sim, m); /* (a held last chunk waits for them whole) */
    const RsFlowMessage *msg = &sim->msgs[m];
    gboolean last = k + 1 >= sim->n_chunks[m];
    guint64 end = last ? 0 : chunk_end(sim, m, k);
    for (guint i = 0; i < msg->n_deps; i++) {
        guint32 d = sim->deps[msg->first_dep + i];
        if (sim->state[d] == ST_DONE)
            continue;
        if (last)
            return FALSE;
        /* The same fraction of the dependency as chunk k ends at, rounded up. */
        unsigned __int128 x = (unsigned __int128)end * sim->msgs[d].size_bytes;
        guint64 need = (guint64)((x + msg->size_bytes - 1) / msg->size_bytes);
        if (sim->delivered[d] < need)
            return FALSE;
    }
    return TRUE;
}

static void notify_dependents(Sim *sim, guint32 m);
static void rounds_message_done(Sim *sim, guint32 m);
static void window_message_done(Sim *sim, guint32 m);
static void window_deps_done(Sim *sim, guint32 m);

/* GPU-side costs of message @m (RsFlowSimOptions.message_pre_s / message_post_s). */
static inline double
pre_s(const Sim *sim, guint32 m)
{
    return sim->opt.message_pre_s != NULL ? sim->opt.message_pre_s[m] : 0.0;
}

static inline double
post_s(const Sim *sim, guint32 m)
{
    return sim->opt.message_post_s != NULL ? sim->opt.message_post_s[m] : 0.0;
}

/* Message @m counts as arrived (its post time is over): its end time, its phase. */
static void
complete(Sim *sim, guint32 m)
{
    sim->res->message_end_s[m] = sim->now;
    if (isnan(sim->res->message_start_s[m]))
        sim->res->message_start_s[m] = sim->now;
    sim->n_done++;
    sim->remaining_in_phase--;
    if (sim->rounds)
        rounds_message_done(sim, m);
    else if (sim->window)
        window_message_done(sim, m);
}

/* The last byte of @m arrived (a local copy: its copy ended): its dependents may go on;
 * with a post time, it counts as arrived when that time is over (TIMER_POST_DONE). */
static void
finish(Sim *sim, guint32 m)
{
    if (sim->slot[m] != NO_SLOT)
        flow_stop(sim, m);
    sim->state[m] = ST_DONE;
    if (sim->msgs[m].src != sim->msgs[m].dst)
        sim->bytes_done += sim->msgs[m].size_bytes - sim->delivered[m]; /* the chunks counted */
    sim->delivered[m] = sim->msgs[m].size_bytes;
    if (sim->msgs[m].src != sim->msgs[m].dst && post_s(sim, m) > 0.0) {
        if (isnan(sim->res->message_start_s[m]))
            sim->res->message_start_s[m] = sim->now;
        double done_s = sim->now + post_s(sim, m);
        if (sim->window) {
            /* The receiver unpacks it on its stream, after what is queued there. */
            guint32 dst = sim->msgs[m].dst;
            done_s = MAX(sim->now, sim->stream_free_s[dst]) + post_s(sim, m);
            sim->stream_free_s[dst] = done_s;
        }
        timer_push(sim, done_s, m, TIMER_POST_DONE);
    } else {
        complete(sim, m);
    }
    if (!sim->window) {
        notify_dependents(sim, m);
        return;
    }
    /* The operations this arrival completes a prefix through wake their dependents. */
    const WindowGroups *wg = sim->wg;
    guint32 g = wg->op_group[m];
    guint64 n_chunks = wg->first[g + 1] - wg->first[g];
    guint32 from = sim->prefix[g];
    while (sim->prefix[g] < n_chunks &&
           sim->state[wg->group_op[wg->first[g] + sim->prefix[g]]] == ST_DONE)
        sim->prefix[g]++;
    for (guint32 k = from; k < sim->prefix[g]; k++) {
        guint32 c = wg->group_op[wg->first[g] + k];
        notify_dependents(sim, c);
        window_deps_done(sim, c);
    }
}

static void
try_local(Sim *sim, guint32 m)
{
    if (!deps_ready(sim, m, sim->n_chunks[m] - 1))
        return;
    double copy_s = pre_s(sim, m) + post_s(sim, m);
    if (copy_s > 0.0) {
        sim->state[m] = ST_COPY_LOCAL;
        sim->res->message_start_s[m] = sim->now;
        timer_push(sim, sim->now + copy_s, m, TIMER_LOCAL_DONE);
        return;
    }
    finish(sim, m);
}

static void
try_start(Sim *sim, guint32 m)
{
    guint32 k = sim->chunk[m];
    if (!deps_ready(sim, m, k))
        return;
    if (isnan(sim->res->message_start_s[m]))
        sim->res->message_start_s[m] = sim->now;
    if (k == 0) {
        sim->state[m] = ST_LATENCY;
        double latency_s =
            rs_topology_get_route_latency_s(sim->topo, sim->msgs[m].src, sim->msgs[m].dst);
        timer_push(sim, sim->now + latency_s, m, TIMER_ACTIVATE);
    } else {
        flow_start(sim, m);
    }
}

static void
notify_dependents(Sim *sim, guint32 m)
{
    for (guint i = sim->dependents_first[m]; i < sim->dependents_first[m + 1]; i++) {
        guint32 d = sim->dependents[i];
        switch (sim->state[d]) {
        case ST_WAIT:
            try_start(sim, d);
            break;
        case ST_OVERHEAD:
            if (isnan(sim->res->message_start_s[d]) && deps_ready(sim, d, 0))
                sim->res->message_start_s[d] = sim->now;
            break;
        case ST_ACTIVE:
            if (sim->fluid && sim->state[m] == ST_DONE)
                fluid_dep_done(sim, d, m);
            break;
        case ST_WAIT_LOCAL:
            try_local(sim, d);
            break;
        default:
            break;
        }
    }
}

/* The flow of @m finished its current chunk at sim->now. */
static void
chunk_done(Sim *sim, guint32 m)
{
    Flow *f = flow_at(sim, sim->slot[m]);
    settle(sim, f);
    guint32 k = sim->chunk[m];
    guint64 end = chunk_end(sim, m, k);
    sim->bytes_done += end - sim->delivered[m]; /* (progress: bytes delivered so far) */
    sim->delivered[m] = end;
    if (k + 1 == sim->n_chunks[m]) {
        finish(sim, m);
        return;
    }
    sim->chunk[m] = k + 1;
    if (deps_ready(sim, m, k + 1)) {
        /* The next chunk follows on the same links at the same rate. */
        if (sim->grouped) {
            sim->tag[m] = f->sent + (double)chunk_bytes(sim, m, k + 1);
            members_sift(sim, f, sim->member_pos[m]);
            group_schedule(sim, sim->slot[m]);
        } else {
            f->remaining = (double)chunk_bytes(sim, m, k + 1);
            heap_update(sim, sim->slot[m],
                        f->rate > 0 ? sim->now + f->remaining / f->rate : INFINITY);
        }
        sim->res->n_chunks++;
    } else {
        flow_stop(sim, m);
        sim->state[m] = ST_WAIT;
    }
    notify_dependents(sim, m);
}

/* --- fluid relays ---
 * Every network message is one flow. A pipelined dependency d of m (same phase, both
 * network messages) lets m start once d delivered the offset max(phi[m], phi[d]) of its
 * bytes (m's first chunk needs that much of d), and then bounds m's progress (fractions of
 * the bytes) to d's minus that offset: m runs at its own max-min rate until it catches up,
 * then follows d (capped edge) until d arrives whole, when m has its last chunk left. */

static inline gboolean
fluid_edge(Sim *sim, guint32 m, guint32 d)
{
    const RsFlowMessage *a = &sim->msgs[m], *b = &sim->msgs[d];
    return a->phase == b->phase && a->src != a->dst && b->src != b->dst && b->size_bytes > 0 &&
           a->size_bytes > 0;
}

static inline double
fluid_offset(Sim *sim, guint32 m, guint32 d)
{
    return MAX(sim->phi[m], sim->phi[d]);
}

/* The bytes of @m's last chunk, which the chunked model sends once every dependency
 * arrived whole: size − (c − 1) · chunk. */
static double
fluid_last_chunk(Sim *sim, guint32 m)
{
    double size = (double)sim->msgs[m].size_bytes;
    double c = MIN((double)sim->chunk_size[m], size);
    return MAX(0.0, size - (double)(sim->n_chunks_ref[m] - 1) * c);
}

/* Does @m wait for a pipelined dependency (one still flowing or held) to arrive whole
 * before it may send its last chunk? */
static gboolean
fluid_holds_last(Sim *sim, guint32 m)
{
    const RsFlowMessage *msg = &sim->msgs[m];
    if (sim->n_chunks_ref[m] <= 1)
        return FALSE;
    for (guint i = 0; i < msg->n_deps; i++) {
        guint32 d = sim->deps[msg->first_dep + i];
        if (sim->state[d] != ST_DONE && fluid_edge(sim, m, d))
            return TRUE;
    }
    return FALSE;
}

/* Bytes @m has delivered by sim->now, or (@soon) a little later: within the time an event
 * batch spans, so that an event the rates put a rounding error away counts as reached. */
static double
fluid_delivered(Sim *sim, guint32 m, gboolean soon)
{
    double size = (double)sim->msgs[m].size_bytes;
    if (sim->state[m] == ST_DONE)
        return size;
    if (sim->slot[m] == NO_SLOT)
        return sim->chunk[m] > 0 ? size - fluid_last_chunk(sim, m) : 0.0;
    Flow *f = flow_at(sim, sim->slot[m]);
    double dt = sim->now - f->last_t;
    if (soon)
        dt += MAX(sim->now * 4 * BATCH_REL_TOLERANCE, 1e-15);
    double rem = dt > 0 && f->rate > 0 ? f->remaining - f->rate * dt : f->remaining;
    return MAX(0.0, size - MAX(0.0, rem));
}

/* Has every dependency of @m done what its first chunk needs? */
static gboolean
fluid_start_ready(Sim *sim, guint32 m)
{
    const RsFlowMessage *msg = &sim->msgs[m];
    for (guint i = 0; i < msg->n_deps; i++) {
        guint32 d = sim->deps[msg->first_dep + i];
        if (sim->state[d] == ST_DONE)
            continue;
        if (!fluid_edge(sim, m, d))
            return FALSE;
        double need = fluid_offset(sim, m, d) * (double)sim->msgs[d].size_bytes;
        if (fluid_delivered(sim, d, TRUE) < need * (1.0 - FLUID_REL_TOLERANCE))
            return FALSE;
    }
    return TRUE;
}

/* The gap in progress between dependency @d and @m's bound behind it (≤ 0: caught up).
 * A hop faster than its dependency sends each chunk as soon as it is there and trails by
 * its own chunk's time, c_m / rate_m: in progress, phi_m × (d's fraction rate) / (m's). */
static double
fluid_gap(Sim *sim, guint32 m, guint32 d, gboolean soon)
{
    double sm = (double)sim->msgs[m].size_bytes, sd = (double)sim->msgs[d].size_bytes;
    double pm = fluid_delivered(sim, m, soon) / sm;
    double pd = fluid_delivered(sim, d, FALSE) / sd;
    double vm = flow_at(sim, sim->slot[m])->rate / sm, vd = flow_at(sim, sim->slot[d])->rate / sd;
    double trail = vm > vd ? sim->phi[m] * vd / vm : sim->phi[m];
    return pd - trail - pm;
}

static void
fluid_force(Sim *sim, guint32 m)
{
    guint32 slot = sim->slot[m];
    g_array_append_val(sim->forced, slot);
}

/* Does the dependent of entry @i of sim->dependents follow what it depends on there (a
 * capped edge)? O(1): scanning the dependent's dependencies for the edge was a quarter
 * of nccl-broadcast's time, its bucket messages depending on hundreds of others. */
static inline gboolean
fluid_follows(const Sim *sim, guint i)
{
    return sim->capped[sim->dependents_edge[i]];
}

/* Dependency edge @edge (an index into deps) becomes capped (@capped) or free; its
 * dependency's count of followers follows, so that the walks over a message's followers
 * skip the many messages no one follows. */
static inline void
fluid_set_capped(Sim *sim, guint edge, gboolean capped)
{
    if (sim->capped[edge] == capped)
        return;
    sim->capped[edge] = capped;
    guint32 d = sim->deps[edge];
    if (capped)
        sim->n_followers[d]++;
    else
        sim->n_followers[d]--;
}

/* @m's next event: its end, a waiting dependent's start threshold, or catching up with a
 * dependency it does not follow yet; into the completion heap. */
static void
fluid_schedule(Sim *sim, guint32 m)
{
    Flow *f = flow_at(sim, sim->slot[m]);
    settle(sim, f);
    double dt = INFINITY;
    /* Its hold (fluid_hold()) comes before its end while a dependency is not whole. */
    double last = fluid_holds_last(sim, m) ? fluid_last_chunk(sim, m) : 0.0;
    if (f->remaining <= 0 || f->remaining - last <= last * FLUID_REL_TOLERANCE)
        dt = 0.0;
    else if (f->rate > 0) {
        dt = (f->remaining - last) / f->rate;
        double size = (double)sim->msgs[m].size_bytes;
        double done = size - f->remaining;
        double done_soon = fluid_delivered(sim, m, TRUE);
        for (guint i = sim->dependents_first[m]; i < sim->dependents_first[m + 1]; i++) {
            guint32 n = sim->dependents[i];
            if (sim->state[n] != ST_WAIT || !fluid_edge(sim, n, m))
                continue;
            /* (A threshold reached already waits for another dependency.) */
            double need = fluid_offset(sim, n, m) * size;
            if (done_soon < need * (1.0 - FLUID_REL_TOLERANCE))
                dt = MIN(dt, (need - done) / f->rate);
        }
    }
    const RsFlowMessage *msg = &sim->msgs[m];
    for (guint i = 0; f->rate > 0 && i < msg->n_deps; i++) {
        guint32 d = sim->deps[msg->first_dep + i];
        if (sim->capped[msg->first_dep + i] || sim->state[d] != ST_ACTIVE || !fluid_edge(sim, m, d))
            continue;
        Flow *g = flow_at(sim, sim->slot[d]);
        double closing =
            f->rate / (double)msg->size_bytes - g->rate / (double)sim->msgs[d].size_bytes;
        if (closing <= 0)
            continue;
        if (fluid_gap(sim, m, d, TRUE) > FLUID_REL_TOLERANCE) {
            dt = MIN(dt, fluid_gap(sim, m, d, FALSE) / closing);
        } else {
            /* Caught up and faster: it follows from now on. */
            fluid_set_capped(sim, msg->first_dep + i, TRUE);
            fluid_force(sim, m);
        }
    }
    heap_update(sim, sim->slot[m], sim->now + dt);
}

/* Queues @m for fluid_flush_schedules() once (a mark of this recomputation). */
static inline void
fluid_queue_schedule(Sim *sim, guint32 m)
{
    if (sim->sched_mark[m] != sim->sched_epoch) {
        sim->sched_mark[m] = sim->sched_epoch;
        g_array_append_val(sim->sched_queue, m);
    }
}

/* @m's rate changed: its next event and its flowing dependents' (their catching up) are
 * computed once the recomputation has set every rate (fluid_flush_schedules()). Computed
 * at once, a chain of passive followers scheduled each of them twice, the second time
 * with its new rate: a fifth of nccl-broadcast's time. */
static void
fluid_reschedule(Sim *sim, guint32 m)
{
    fluid_queue_schedule(sim, m);
    for (guint k = sim->dependents_first[m]; k < sim->dependents_first[m + 1]; k++)
        fluid_queue_schedule(sim, sim->dependents[k]);
}

/* The next events of the flows fluid_reschedule() queued, at their final rates. */
static void
fluid_flush_schedules(Sim *sim)
{
    for (guint i = 0; i < sim->sched_queue->len; i++) {
        guint32 m = g_array_index(sim->sched_queue, guint32, i);
        if (sim->state[m] == ST_ACTIVE)
            fluid_schedule(sim, m);
    }
    g_array_set_size(sim->sched_queue, 0);
    sim->sched_epoch++;
}

/* @m has only its last chunk left and a dependency has not arrived whole: it stops taking
 * bandwidth until then (try_start() resumes it with that chunk), as the chunked model's
 * last chunk waits. Its followers run free from here: they hold at their own last chunk.
 * Without the hold a follower kept its pace past that point, and a follower of it could
 * end before the hop it forwards (tests/test-flow-sim.c, /flow-sim/fluid/passive-chain). */
static void
fluid_hold(Sim *sim, guint32 m)
{
    for (guint i = sim->dependents_first[m]; i < sim->dependents_first[m + 1]; i++) {
        guint32 n = sim->dependents[i];
        if (sim->state[n] != ST_ACTIVE)
            continue;
        if (fluid_follows(sim, i)) {
            fluid_set_capped(sim, sim->dependents_edge[i], FALSE);
            fluid_force(sim, n);
        }
    }
    flow_stop(sim, m);
    sim->state[m] = ST_WAIT;
    sim->chunk[m] = 1;
    /* (Progress: what it delivered stays counted while it waits.) */
    guint64 held = sim->msgs[m].size_bytes - (guint64)fluid_last_chunk(sim, m);
    sim->bytes_done += held - MIN(held, sim->delivered[m]);
    sim->delivered[m] = MAX(held, sim->delivered[m]);
}

/* The flow of @m reached its next event. */
static void
fluid_event(Sim *sim, guint32 m)
{
    Flow *f = flow_at(sim, sim->slot[m]);
    settle(sim, f);
    double size = (double)sim->msgs[m].size_bytes;
    if (size - fluid_delivered(sim, m, TRUE) <= size * FLUID_REL_TOLERANCE) {
        sim->res->n_chunks += sim->n_chunks_ref[m];
        finish(sim, m);
        return;
    }
    for (guint i = sim->dependents_first[m]; i < sim->dependents_first[m + 1]; i++) {
        guint32 n = sim->dependents[i];
        if (sim->state[n] == ST_WAIT)
            try_start(sim, n);
    }
    double left_soon = size - fluid_delivered(sim, m, TRUE);
    if (fluid_holds_last(sim, m) &&
        left_soon <= fluid_last_chunk(sim, m) * (1.0 + FLUID_REL_TOLERANCE)) {
        fluid_hold(sim, m);
        return;
    }
    const RsFlowMessage *msg = &sim->msgs[m];
    for (guint i = 0; i < msg->n_deps; i++) {
        guint32 d = sim->deps[msg->first_dep + i];
        if (sim->capped[msg->first_dep + i] || sim->state[d] != ST_ACTIVE || !fluid_edge(sim, m, d))
            continue;
        if (fluid_gap(sim, m, d, TRUE) <= FLUID_REL_TOLERANCE) {
            fluid_set_capped(sim, msg->first_dep + i, TRUE);
            fluid_force(sim, m);
        }
    }
    fluid_schedule(sim, m);
}

/* @m began to wait for its dependencies: its overhead ended before they delivered what its
 * first chunk needs. Each flowing dependency's next event must now include that threshold,
 * which its schedule, made while @m still paid its overhead, left out (fluid_schedule()
 * looks only at waiting dependents). */
static void
fluid_watch_deps(Sim *sim, guint32 m)
{
    const RsFlowMessage *msg = &sim->msgs[m];
    for (guint i = 0; i < msg->n_deps; i++) {
        guint32 d = sim->deps[msg->first_dep + i];
        if (sim->state[d] == ST_ACTIVE && fluid_edge(sim, m, d))
            fluid_schedule(sim, d);
    }
}

/* Dependency @d of the flowing @m arrived whole: a following @m has its last chunk left
 * (the chunked model sends that chunk once the dependency is whole, having sent the others
 * as they came) and runs free. */
static void
fluid_dep_done(Sim *sim, guint32 m, guint32 d)
{
    const RsFlowMessage *msg = &sim->msgs[m];
    for (guint i = 0; i < msg->n_deps; i++) {
        if (sim->deps[msg->first_dep + i] != d || !sim->capped[msg->first_dep + i])
            continue;
        fluid_set_capped(sim, msg->first_dep + i, FALSE);
        Flow *f = flow_at(sim, sim->slot[m]);
        settle(sim, f);
        double size = (double)msg->size_bytes;
        double c = MIN((double)sim->chunk_size[m], size);
        /* (A follower its links held a little below its cap has more left: it keeps
         * what it has.) */
        f->remaining = MAX(f->remaining, size - (double)(sim->n_chunks_ref[m] - 1) * c);
        fluid_force(sim, m);
    }
    fluid_schedule(sim, m);
}

/* @m is posted: a local copy waits for its dependencies, a network message pays its
 * overhead. */
static void
post_message(Sim *sim, guint32 m)
{
    if (sim->msgs[m].src == sim->msgs[m].dst) {
        sim->state[m] = ST_WAIT_LOCAL;
        try_local(sim, m);
        return;
    }
    sim->state[m] = ST_OVERHEAD;
    if (deps_ready(sim, m, 0))
        sim->res->message_start_s[m] = sim->now;
    double overhead_s = sim->message_overhead_s;
    /* A calibrated executor's cost per chunk operation (software.chunk_overhead), as the
     * first-order model charges it: before the message's bytes, like its own overhead. */
    if (sim->chunk_overhead_s > 0)
        overhead_s += sim->chunk_overhead_s * (double)rs_topology_count_chunks(
                                                  sim->topo, sim->msgs[m].size_bytes,
                                                  sim->opt.chunk_bytes);
    timer_push(sim,
               sim->window ? MAX(sim->now, sim->ready_s[m]) + overhead_s
                           : sim->now + overhead_s + pre_s(sim, m),
               m, TIMER_OVERHEAD_DONE);
}

/* --- rounds ---
 * A rank posts its rounds one after another, as the executor's groups: its next round
 * once every message of the one before arrived (after round_fixed_s), and only rounds of
 * the current phase. A message is posted when both its ranks posted its round. */

/* Schedules @rank's next round if it is idle and has one in the current phase. */
static void
rounds_advance(Sim *sim, guint32 rank)
{
    if (sim->rank_waiting[rank] || sim->rank_pending[rank] > 0 ||
        sim->rank_next[rank] == sim->rank_first[rank + 1])
        return;
    guint32 m = sim->rank_msgs[sim->rank_next[rank]];
    if (sim->msgs[m].phase != sim->res->phase_ids[sim->cur_phase])
        return;
    sim->rank_waiting[rank] = TRUE;
    timer_push(sim, sim->now + sim->opt.round_fixed_s, rank, TIMER_ROUND);
}

/* @rank posts its next round: its messages of that (phase, round). */
static void
rounds_post(Sim *sim, guint32 rank)
{
    sim->rank_waiting[rank] = FALSE;
    guint i = sim->rank_next[rank], end = sim->rank_first[rank + 1];
    const RsFlowMessage *first = &sim->msgs[sim->rank_msgs[i]];
    guint32 phase = first->phase, round = first->round;
    /* Counted before any is posted: a local copy may arrive at once. */
    guint j = i;
    while (j < end && sim->msgs[sim->rank_msgs[j]].phase == phase &&
           sim->msgs[sim->rank_msgs[j]].round == round)
        j++;
    sim->rank_next[rank] = j;
    sim->rank_pending[rank] += j - i;
    for (; i < j; i++) {
        guint32 m = sim->rank_msgs[i];
        guint ends = sim->msgs[m].src == sim->msgs[m].dst ? 1 : 2;
        if (++sim->ends_posted[m] == ends)
            post_message(sim, m);
    }
}

static void
rounds_message_done(Sim *sim, guint32 m)
{
    guint32 ranks[2] = {sim->msgs[m].src, sim->msgs[m].dst};
    for (guint k = 0; k < (ranks[0] == ranks[1] ? 1u : 2u); k++)
        if (--sim->rank_pending[ranks[k]] == 0)
            rounds_advance(sim, ranks[k]);
}

/* --- window ---
 * The messages are the plan's chunk operations (run_window() cuts them), numbered in the
 * executor's key order (phase, slot, colour, message, chunk). A rank posts its network
 * operations in that order while fewer than opt.window are in flight; a send only once
 * what it forwards arrived (exec/executor.c rank_execute(): the executor's send_ready() holds
 * the rank's posting there). An operation takes bandwidth once both its ranks posted it;
 * its arrival frees a place at both. Local copies are not in the window: they run once
 * their dependencies arrived. */

/* @rank posts operation @c: a sender packs it on its stream as it posts it; it is posted
 * once both its ranks did. */
static void
window_post(Sim *sim, guint32 rank, guint32 c)
{
    const RsFlowMessage *msg = &sim->msgs[c];
    sim->rank_outstanding[rank]++;
    if (msg->src == rank) {
        sim->stream_free_s[rank] = MAX(sim->now, sim->stream_free_s[rank]) + pre_s(sim, c);
        sim->ready_s[c] = sim->stream_free_s[rank];
    }
    if (++sim->ends_posted[c] == 2)
        post_message(sim, c);
}

/* @rank posts operations of the current phase while its window has room. */
static void
window_advance(Sim *sim, guint32 rank)
{
    guint end = sim->rank_first[rank + 1];
    guint32 phase = sim->res->phase_ids[sim->cur_phase];
    while (sim->rank_outstanding[rank] < sim->opt.window && sim->rank_next[rank] < end) {
        guint32 c = sim->rank_msgs[sim->rank_next[rank]];
        const RsFlowMessage *msg = &sim->msgs[c];
        if (msg->phase != phase || (msg->src == rank && !all_deps_done(sim, c)))
            break;
        sim->rank_next[rank]++;
        window_post(sim, rank, c);
    }
}

static void
window_message_done(Sim *sim, guint32 m)
{
    const RsFlowMessage *msg = &sim->msgs[m];
    if (msg->src == msg->dst)
        return;
    sim->rank_outstanding[msg->src]--;
    sim->rank_outstanding[msg->dst]--;
    window_advance(sim, msg->src);
    window_advance(sim, msg->dst);
}

/* @m arrived whole: a send of a rank held at it may now be posted. */
static void
window_deps_done(Sim *sim, guint32 m)
{
    for (guint i = sim->dependents_first[m]; i < sim->dependents_first[m + 1]; i++) {
        guint32 d = sim->dependents[i];
        guint32 src = sim->msgs[d].src;
        if (sim->state[d] == ST_IDLE && src != sim->msgs[d].dst &&
            sim->rank_next[src] < sim->rank_first[src + 1] &&
            sim->rank_msgs[sim->rank_next[src]] == d)
            window_advance(sim, src);
    }
}

static void
post_phase(Sim *sim, guint phase)
{
    sim->cur_phase = phase;
    sim->remaining_in_phase = sim->phase_first[phase + 1] - sim->phase_first[phase];
    if (sim->window) {
        for (guint i = sim->phase_first[phase]; i < sim->phase_first[phase + 1]; i++) {
            guint32 m = sim->phase_order[i];
            if (sim->msgs[m].src == sim->msgs[m].dst)
                post_message(sim, m);
        }
        for (guint32 g = 0; g < sim->n_gpus; g++)
            window_advance(sim, g);
        return;
    }
    if (sim->rounds) {
        for (guint32 g = 0; g < sim->n_gpus; g++)
            rounds_advance(sim, g);
        return;
    }
    for (guint i = sim->phase_first[phase]; i < sim->phase_first[phase + 1]; i++)
        post_message(sim, sim->phase_order[i]);
}

static void
handle_timer(Sim *sim, const Timer *tm)
{
    guint32 m = tm->message;
    if (tm->kind == TIMER_ROUND) {
        rounds_post(sim, m); /* m: a rank */
        return;
    }
    if (tm->kind == TIMER_OVERHEAD_DONE) {
        sim->state[m] = ST_WAIT;
        try_start(sim, m);
        if (sim->fluid && sim->state[m] == ST_WAIT)
            fluid_watch_deps(sim, m);
        return;
    }
    if (tm->kind == TIMER_POST_DONE) {
        complete(sim, m);
        return;
    }
    if (tm->kind == TIMER_LOCAL_DONE) {
        finish(sim, m);
        return;
    }
    /* TIMER_ACTIVATE: the first chunk's latency is paid. */
    if (sim->msgs[m].size_bytes == 0)
        finish(sim, m);
    else
        flow_start(sim, m);
}

/* --- rates --- */

/* The fair share of @ls's unfrozen flows: its residual capacity over their weights. */
static inline double
link_share(const LinkState *ls)
{
    if (ls->n_unfrozen == 0 || ls->w_unfrozen <= 0)
        return INFINITY;
    return MAX(0.0, ls->residual) / ls->w_unfrozen;
}

/* Progressive filling over the flows of sim->set (those marked @set_epoch): sets each one's
 * new_rate, with the flows outside the set held at their rates. Marks links with @iter. */

/* The byte rate dependency @d's (new) rate @rate_d allows its follower @n. */
static inline double
fluid_cap(Sim *sim, guint32 n, guint32 d, double rate_d)
{
    return rate_d * (double)sim->msgs[n].size_bytes / (double)sim->msgs[d].size_bytes;
}

/* Flow @slot froze at @rate: the caps it puts on its followers in the set. */
static void
fluid_push_caps(Sim *sim, guint32 slot, double rate, guint32 set_epoch, guint32 iter)
{
    guint32 d = flow_at(sim, slot)->message;
    if (sim->n_followers[d] == 0)
        return;
    for (guint i = sim->dependents_first[d]; i < sim->dependents_first[d + 1]; i++) {
        guint32 n = sim->dependents[i];
        if (sim->state[n] != ST_ACTIVE || !fluid_follows(sim, i))
            continue;
        Flow *g = flow_at(sim, sim->slot[n]);
        if (g->mark == set_epoch && g->frozen != iter)
            lheap_push(sim->cheap, fluid_cap(sim, n, d, rate), sim->slot[n]);
    }
}

/* Flow @slot's new rate is @share: its links lose that much residual and one flow. */
static void
freeze(Sim *sim, guint32 slot, double share, guint32 set_epoch, guint32 iter)
{
    Flow *f = flow_at(sim, slot);
    f->frozen = iter;
    f->new_rate = share;
    sim->fill_unfrozen--;
    FlowLink *fl = flow_links(f);
    for (guint j = 0; j < f->n_links; j++) {
        if (fl[j].pos == NO_POS)
            continue;
        LinkState *ls2 = &sim->links[fl[j].link];
        ls2->residual -= share * fl[j].weight;
        ls2->w_unfrozen -= fl[j].weight;
        ls2->n_unfrozen--;
    }
    if (sim->fluid)
        fluid_push_caps(sim, slot, share, set_epoch, iter);
}

static void
fill(Sim *sim, guint32 set_epoch, guint32 iter)
{
    guint n_set = sim->set->len;
    const guint32 *set = (const guint32 *)sim->set->data;
    /* The links of the set, their residual capacity and their flows. */
    g_array_set_size(sim->lset, 0);
    for (guint i = 0; i < n_set; i++) {
        Flow *f = flow_at(sim, set[i]);
        FlowLink *fl = flow_links(f);
        for (guint j = 0; j < f->n_links; j++) {
            if (fl[j].pos == NO_POS)
                continue;
            guint32 l = fl[j].link;
            LinkState *ls = &sim->links[l];
            if (ls->mark != iter) {
                ls->mark = iter;
                ls->n_in_set = 0;
                ls->w_in_set = 0.0;
                ls->old_sum = 0.0;
                ls->freeze_share = -1.0;
                g_array_append_val(sim->lset, l);
            }
            ls->n_in_set++;
            ls->w_in_set += fl[j].weight;
            ls->old_sum += f->rate * fl[j].weight;
        }
    }
    guint n_lset = sim->lset->len;
    const guint32 *lset = (const guint32 *)sim->lset->data;
    guint total = 0;
    g_array_set_size(sim->lheap, 0);
    for (guint i = 0; i < n_lset; i++) {
        LinkState *ls = &sim->links[lset[i]];
        ls->csr_first = ls->csr_fill = total;
        total += ls->n_in_set;
        ls->n_unfrozen = ls->n_in_set;
        ls->w_unfrozen = ls->w_in_set;
        /* Capacity left by the flows outside the set. */
        double outside = ls->n_in_set == ls->len ? 0.0 : ls->used - ls->old_sum;
        ls->residual = MAX(0.0, ls->capacity - MAX(0.0, outside));
        g_array_append_val(sim->lheap, ((LinkKey){link_share(ls), lset[i]}));
    }
    lheap_build(sim->lheap);
    g_array_set_size(sim->csr, total);
    g_array_set_size(sim->csr_w, total);
    guint32 *csr = (guint32 *)sim->csr->data;
    double *csr_w = (double *)sim->csr_w->data;
    /* Fluid relays: a follower's cap from a dependency outside the set is known now. */
    g_array_set_size(sim->cheap, 0);
    for (guint i = 0; sim->fluid && i < n_set; i++) {
        guint32 m = flow_at(sim, set[i])->message;
        const RsFlowMessage *msg = &sim->msgs[m];
        for (guint k = 0; k < msg->n_deps; k++) {
            guint32 d = sim->deps[msg->first_dep + k];
            if (!sim->capped[msg->first_dep + k] || sim->state[d] != ST_ACTIVE)
                continue;
            Flow *g = flow_at(sim, sim->slot[d]);
            if (g->mark != set_epoch)
                lheap_push(sim->cheap, fluid_cap(sim, m, d, g->rate), set[i]);
        }
        Flow *f = flow_at(sim, set[i]);
        if (f->hint_epoch == set_epoch)
            lheap_push(sim->cheap, f->cap_hint, set[i]);
    }
    for (guint i = 0; i < n_set; i++) {
        Flow *f = flow_at(sim, set[i]);
        FlowLink *fl = flow_links(f);
        for (guint j = 0; j < f->n_links; j++)
            if (fl[j].pos != NO_POS) {
                guint c = sim->links[fl[j].link].csr_fill++;
                csr[c] = set[i];
                csr_w[c] = fl[j].weight;
            }
    }

    /* Progressive filling. Freezing flows at the smallest fair share only raises the
     * shares of the other links, so keys are lower bounds: a popped link whose share has
     * grown goes back with its current share (each link is in the heap once). Once every
     * flow froze, the links left would only be popped with nothing to freeze (most of
     * them: stopping then cut a fifth of the time of 10^6 messages). */
    sim->fill_unfrozen = n_set;
    while ((sim->lheap->len > 0 || sim->cheap->len > 0) && sim->fill_unfrozen > 0) {
        double cap_top =
            sim->cheap->len > 0 ? g_array_index(sim->cheap, LinkKey, 0).share : INFINITY;
        if (sim->lheap->len == 0 || cap_top <= g_array_index(sim->lheap, LinkKey, 0).share) {
            /* A follower reaches the rate its dependency allows before any link binds. */
            LinkKey key = lheap_pop(sim->cheap);
            if (flow_at(sim, key.link)->frozen != iter)
                freeze(sim, key.link, key.share, set_epoch, iter);
            continue;
        }
        LinkKey key = lheap_pop(sim->lheap);
        LinkState *ls = &sim->links[key.link];
        if (ls->n_unfrozen == 0)
            continue;
        double share = link_share(ls);
        if (!isfinite(share))
            continue; /* only weightless flows left: they take what their links allow */
        if (share > key.share &&
            ((sim->lheap->len > 0 && share > g_array_index(sim->lheap, LinkKey, 0).share) ||
             share > cap_top)) {
            lheap_push(sim->lheap, share, key.link);
            continue;
        }
        ls->freeze_share = share;
        for (guint c = ls->csr_first; c < ls->csr_first + ls->n_in_set; c++)
            if (flow_at(sim, csr[c])->frozen != iter)
                freeze(sim, csr[c], share, set_epoch, iter);
    }
    for (guint i = 0; i < n_set; i++) {
        Flow *f = flow_at(sim, set[i]);
        if (f->frozen != iter) {
            /* Only dominated links (or weightless ones): the smallest of them limits it. */
            double cap = INFINITY;
            FlowLink *fl = flow_links(f);
            for (guint j = 0; j < f->n_links; j++)
                if (fl[j].weight > 0)
                    cap = MIN(cap, sim->links[fl[j].link].capacity / fl[j].weight);
            f->new_rate = isfinite(cap) ? cap : 0.0;
        }
    }
}

/* After fill(): flows outside the set that the new rates leave wrong join the set. On a
 * saturated link that loses load, the outside flows bottlenecked there (those at its top
 * rate: in max-min a link's bottlenecked flows have its largest rate) may speed up; on a
 * link that froze set flows at some share, outside flows faster than that share should
 * slow down to it. Returns TRUE when any flow joined. */
static gboolean
expand(Sim *sim, guint32 set_epoch)
{
    gboolean grew = FALSE;
    guint n_lset = sim->lset->len;
    for (guint i = 0; i < n_lset; i++) {
        guint32 l = g_array_index(sim->lset, guint32, i);
        LinkState *ls = &sim->links[l];
        if (ls->n_in_set == ls->len)
            continue;
        double tol = ls->capacity * SATURATED_REL_TOLERANCE;
        double new_sum = 0.0;
        for (guint c = ls->csr_first; c < ls->csr_first + ls->n_in_set; c++)
            new_sum += flow_at(sim, g_array_index(sim->csr, guint32, c))->new_rate *
                       g_array_index(sim->csr_w, double, c);
        gboolean freed = ls->used >= ls->capacity - tol && new_sum < ls->old_sum - tol;
        double limit = ls->freeze_share >= 0 ? ls->freeze_share + tol : INFINITY;
        /* max_rate bounds every rate on the link: most links need no scan. */
        if (!freed && ls->max_rate <= limit)
            continue;
        double top = 0.0;
        for (guint j = 0; j < ls->len; j++)
            top = MAX(top, flow_at(sim, ls->items[j].slot)->rate);
        ls->max_rate = top;
        if (!freed && top <= limit)
            continue;
        for (guint j = 0; j < ls->len; j++) {
            Flow *g = flow_at(sim, ls->items[j].slot);
            if (g->mark == set_epoch)
                continue;
            if ((freed && g->rate >= top - tol) || g->rate > limit) {
                g->mark = set_epoch;
                g_array_append_val(sim->set, ls->items[j].slot);
                grew = TRUE;
            }
        }
    }
    return grew;
}

/* Fluid relays: is follower @g held by its cap alone? Every link it takes bandwidth on has
 * slack, so no flow is bottlenecked there (max-min: a bottleneck is saturated) and its rate
 * follows its dependency's without touching anyone else's. */
static gboolean
fluid_passive(Sim *sim, Flow *g)
{
    FlowLink *fl = flow_links(g);
    for (guint j = 0; j < g->n_links; j++) {
        if (fl[j].pos == NO_POS)
            continue;
        const LinkState *ls = &sim->links[fl[j].link];
        if (ls->used >= ls->capacity * (1.0 - FLUID_PASSIVE_SLACK))
            return FALSE;
    }
    return TRUE;
}

/* Fluid relays: the followers of the set's flows join it (their caps move with it), but
 * for passive ones (fluid_passive()), which fluid_propagate() gives their new caps after
 * the filling: whole rings of followers would otherwise join every recomputation (the
 * default scenario's nccl-broadcast did not finish in 6 minutes; 249 s with passive
 * followers and held last chunks). */
static void
fluid_close_set(Sim *sim, guint32 set_epoch, guint *closed)
{
    /* The set's flows from *closed on: those before were closed by an earlier call of this
     * recomputation (passivity reads link loads, which change only once the rates are
     * applied). Closing the whole set again in each round of propagation was a third of
     * nccl-broadcast's time on kimi-k3-gb300. */
    for (guint i = *closed; i < sim->set->len; i++) {
        guint32 d = flow_at(sim, g_array_index(sim->set, guint32, i))->message;
        if (sim->n_followers[d] == 0)
            continue;
        for (guint k = sim->dependents_first[d]; k < sim->dependents_first[d + 1]; k++) {
            guint32 n = sim->dependents[k];
            if (sim->state[n] != ST_ACTIVE || !fluid_follows(sim, k))
                continue;
            Flow *g = flow_at(sim, sim->slot[n]);
            if (g->mark != set_epoch && !fluid_passive(sim, g)) {
                g->mark = set_epoch;
                g_array_append_val(sim->set, sim->slot[n]);
            }
        }
    }
    *closed = sim->set->len;
}

/* The rate @m's capped edges allow it: the smallest cap of its flowing dependencies, at
 * their new rates for those in the set of @set_epoch (INFINITY when none caps it). */
static double
fluid_follow_cap(Sim *sim, guint32 m, guint32 set_epoch)
{
    const RsFlowMessage *msg = &sim->msgs[m];
    double cap = INFINITY;
    for (guint k = 0; k < msg->n_deps; k++) {
        guint32 d = sim->deps[msg->first_dep + k];
        if (!sim->capped[msg->first_dep + k] || sim->state[d] != ST_ACTIVE)
            continue;
        Flow *g = flow_at(sim, sim->slot[d]);
        cap = MIN(cap, fluid_cap(sim, m, d, g->mark == set_epoch ? g->new_rate : g->rate));
    }
    return cap;
}

/* Fluid relays, after filling: a follower never outruns a dependency (its rate is clamped
 * to the cap); one its links hold below the cap falls behind and runs free. */
static gboolean
fluid_clamp(Sim *sim, guint32 set_epoch, gboolean final)
{
    gboolean clamped = FALSE;
    for (guint i = 0; i < sim->set->len; i++) {
        Flow *f = flow_at(sim, g_array_index(sim->set, guint32, i));
        guint32 m = f->message;
        const RsFlowMessage *msg = &sim->msgs[m];
        double cap = fluid_follow_cap(sim, m, set_epoch);
        if (!isfinite(cap))
            continue;
        if (f->new_rate > cap) {
            /* Its links froze it before its dependency's rate was known: the next filling
             * caps it first and gives the rest to the others. */
            if (f->new_rate > cap * (1.0 + FLUID_REL_TOLERANCE) &&
                (f->hint_epoch != set_epoch || cap < f->cap_hint)) {
                f->hint_epoch = set_epoch;
                f->cap_hint = cap;
                clamped = TRUE;
            }
            f->new_rate = cap;
            continue;
        }
        for (guint k = 0; final && k < msg->n_deps; k++) {
            guint32 d = sim->deps[msg->first_dep + k];
            if (!sim->capped[msg->first_dep + k] || sim->state[d] != ST_ACTIVE)
                continue;
            Flow *g = flow_at(sim, sim->slot[d]);
            double c = fluid_cap(sim, m, d, g->mark == set_epoch ? g->new_rate : g->rate);
            if (f->new_rate < c * (1.0 - FLUID_REL_TOLERANCE)) {
                /* It runs free from now on. The rate it froze at may be a cap's (a hint of
                 * an earlier filling) that no longer holds it and that no link
                 * bottlenecks: the next batch recomputes it as a free flow, or it could
                 * keep that rate to its end. */
                fluid_set_capped(sim, msg->first_dep + k, FALSE);
                fluid_force(sim, m);
            }
        }
    }
    return clamped;
}

/* --- exact incremental rates ---
 * The max-min fair allocation is the one feasible allocation in which every flow has a
 * bottleneck: a saturated link on its route where no flow is faster (Bertsekas & Gallager,
 * "Data Networks", 2nd ed., §6.5.2). Before a batch every flow has one. The batch adds
 * flows (rate 0, into the set) and removes others (their links remember the bytes/s and
 * the top rate that left). Filling the set with the flows outside it held gives every set
 * flow a bottleneck in the residual network; verify() then looks only at the links whose
 * load can have changed (the set's links and those that lost a flow) for the two ways an
 * allocation can still be wrong there:
 *   V1: a set flow froze at the link at share s, and a flow outside is faster than s (the
 *       set flow is not the fastest at its bottleneck: the outsider must slow down);
 *   V2: the link was saturated, and a flow outside that was at its top rate (bottlenecked
 *       there) is no longer the fastest or the link has slack, and no link outside the
 *       changed ones (saturated, no faster flow by its rate bound) bottlenecks it instead:
 *       it may speed up.
 * Those flows join the set, which is filled again, until no link shows either: every flow
 * then has a bottleneck, so the rates are the exact max-min ones. The set only grows, so
 * the loop ends (at worst with every flow: a global filling). SimGrid's LMM solver
 * (src/kernel/lmm/maxmin.cpp) restricts a solve to the constraints a change reaches,
 * transitively (a connected component); checking bottlenecks stops at flows whose
 * bottleneck holds, so a change costs the flows whose rates change, not the component. */
#define EXACT_REL_TOLERANCE 1e-9

/* Does flow @g (outside the set) keep a bottleneck on a link other than @except that no
 * change of this batch touched (set links carry mark @iter; links that gained or lost a
 * flow are `changed`)? */
static gboolean
exact_other_bottleneck(Sim *sim, Flow *g, guint32 except, guint32 iter)
{
    double top = g->rate * (1.0 + EXACT_REL_TOLERANCE);
    FlowLink *fl = flow_links(g);
    for (guint j = 0; j < g->n_links; j++) {
        if (fl[j].pos == NO_POS || fl[j].link == except)
            continue;
        LinkState *o = &sim->links[fl[j].link];
        if (o->mark == iter || o->changed)
            continue;
        if (o->used >= o->capacity * (1.0 - EXACT_REL_TOLERANCE) && o->max_rate <= top)
            return TRUE;
    }
    return FALSE;
}

/* Checks one link after a filling (see above); flows that V1 or V2 finds join the set.
 * Returns TRUE when any joined. */
static gboolean
exact_verify_link(Sim *sim, guint32 l, guint32 set_epoch, guint32 iter)
{
    LinkState *ls = &sim->links[l];
    gboolean in_lset = ls->mark == iter;
    guint n_in = in_lset ? ls->n_in_set : 0;
    if (n_in == ls->len)
        return FALSE; /* no flow outside the set */
    double old_in = 0.0, new_in = 0.0, old_in_max = 0.0, new_in_max = 0.0;
    for (guint c = in_lset ? ls->csr_first : 0; in_lset && c < ls->csr_first + n_in; c++) {
        Flow *f = flow_at(sim, g_array_index(sim->csr, guint32, c));
        new_in += f->new_rate * g_array_index(sim->csr_w, double, c);
        old_in_max = MAX(old_in_max, f->rate);
        new_in_max = MAX(new_in_max, f->new_rate);
    }
    old_in = in_lset ? ls->old_sum : 0.0;
    double outside = MAX(0.0, ls->used - old_in);
    double sat = ls->capacity * (1.0 - EXACT_REL_TOLERANCE);
    gboolean was_sat = ls->used + ls->lost >= sat;
    gboolean now_sat = outside + new_in >= sat;
    double limit = in_lset && ls->freeze_share >= 0 ? ls->freeze_share * (1.0 + EXACT_REL_TOLERANCE)
                                                    : INFINITY;
    gboolean v1 = ls->max_rate > limit;
    gboolean v2 = was_sat && (!now_sat || new_in_max > MAX(old_in_max, ls->lost_max) *
                                                           (1.0 + EXACT_REL_TOLERANCE));
    if (!v1 && !v2)
        return FALSE;
    /* The rates now (the set's before this filling) and what left: the top before. */
    double top = 0.0;
    for (guint j = 0; j < ls->len; j++)
        top = MAX(top, flow_at(sim, ls->items[j].slot)->rate);
    ls->max_rate = top;
    top = MAX(top, ls->lost_max);
    v1 = ls->max_rate > limit;
    v2 = was_sat && (!now_sat || new_in_max > top * (1.0 + EXACT_REL_TOLERANCE));
    if (!v1 && !v2)
        return FALSE;
    gboolean grew = FALSE;
    for (guint j = 0; j < ls->len; j++) {
        guint32 slot = ls->items[j].slot;
        Flow *g = flow_at(sim, slot);
        if (g->mark == set_epoch)
            continue;
        gboolean join = v1 && g->rate > limit;
        if (!join && v2 && g->rate >= top * (1.0 - EXACT_REL_TOLERANCE) &&
            (!now_sat || new_in_max > g->rate * (1.0 + EXACT_REL_TOLERANCE)))
            join = !exact_other_bottleneck(sim, g, l, iter);
        if (join) {
            g->mark = set_epoch;
            g_array_append_val(sim->set, slot);
            grew = TRUE;
        }
    }
    return grew;
}

/* After filling with mark @iter: verifies the set's links and those that lost a flow. */
static gboolean
exact_verify(Sim *sim, guint32 set_epoch, guint32 iter)
{
    gboolean grew = FALSE;
    guint n_lset = sim->lset->len;
    for (guint i = 0; i < n_lset; i++)
        grew |= exact_verify_link(sim, g_array_index(sim->lset, guint32, i), set_epoch, iter);
    for (guint i = 0; i < sim->changed->len; i++) {
        guint32 l = g_array_index(sim->changed, guint32, i);
        if (sim->links[l].mark != iter)
            grew |= exact_verify_link(sim, l, set_epoch, iter);
    }
    return grew;
}

/* Adds flow @slot to the set of @set_epoch unless it is free or in it already. */
static void
set_add(Sim *sim, guint32 slot, guint32 set_epoch)
{
    if (slot >= sim->flows->len)
        return;
    Flow *f = flow_at(sim, slot);
    if (f->message != NO_SLOT && f->mark != set_epoch) {
        f->mark = set_epoch;
        g_array_append_val(sim->set, slot);
    }
}

/* Adds every active flow to the set of @set_epoch: the next filling is a global one. */
static void
set_add_all(Sim *sim, guint32 set_epoch)
{
    for (guint32 slot = 0; slot < sim->flows->len; slot++)
        set_add(sim, slot, set_epoch);
}

/* Exact rates: the set starts with the flows that started (and forced ones), then grows
 * by verification (above) until the rates are max-min. A set that holds at least
 * 1 / EXACT_GLOBAL_FRACTION of the active flows is filled globally instead (exact too: it
 * then takes one filling and its verification finds no flow outside): a filling costs its
 * set's flows and each round of growth fills the whole set again, and a whole phase
 * posted at once (its flows fresh, a few of the previous phase's still flowing) took 4
 * to 5 rounds of about 15,600 flows each on bench-flow-sim --relays none, where one
 * global filling takes 15,800 (rate updates per event 20.7 -> 15.5 on 10^6 messages, same
 * events and times). */
#define EXACT_GLOBAL_FRACTION 2

static void
recompute_exact(Sim *sim, guint32 set_epoch)
{
    /* Never with fluid relays (sim_setup(): their caps are not bottleneck-checked, so they
     * run LOCAL's propagation), so no followers and no forced flows here. */
    g_assert(!sim->fluid);
    for (guint i = 0; i < sim->fresh->len; i++)
        set_add(sim, g_array_index(sim->fresh, guint32, i), set_epoch);
    g_array_set_size(sim->fresh, 0);
    for (;;) {
        if ((guint64)sim->set->len * EXACT_GLOBAL_FRACTION >= sim->n_active_flows)
            set_add_all(sim, set_epoch);
        guint32 iter = ++sim->epoch;
        fill(sim, set_epoch, iter);
        sim->res->n_rate_updates += sim->set->len;
        if (sim->set->len == sim->n_active_flows || !exact_verify(sim, set_epoch, iter))
            break;
    }
    for (guint i = 0; i < sim->changed->len; i++) {
        LinkState *ls = &sim->links[g_array_index(sim->changed, guint32, i)];
        ls->changed = FALSE;
        ls->lost = ls->lost_max = 0.0;
    }
    g_array_set_size(sim->changed, 0);
}

static void apply_rates(Sim *sim, guint32 set_epoch);

/* Fluid relays, after apply_rates(): the passive followers left out of the set of
 * @set_epoch (fluid_close_set()) take the rate their dependencies' new rates cap them at,
 * transitively down their chains. One whose links would lose their slack (before or after
 * the change) is not passive any more: it is recomputed at once instead (forced; with the
 * flows of its links too, the forced sets cascaded: the hierarchical plan of
 * deepseek-v3-gb200 did not finish in minutes). */
static void
fluid_propagate(Sim *sim, guint32 set_epoch)
{
    guint32 done_epoch = ++sim->epoch;
    GArray *work = sim->chain;
    guint n_set = sim->set->len;
    g_array_set_size(work, 0);
    g_array_append_vals(work, sim->set->data, n_set);
    for (guint w = 0; w < work->len; w++) {
        guint32 d = flow_at(sim, g_array_index(work, guint32, w))->message;
        if (sim->n_followers[d] == 0)
            continue;
        for (guint k = sim->dependents_first[d]; k < sim->dependents_first[d + 1]; k++) {
            guint32 n = sim->dependents[k];
            if (sim->state[n] != ST_ACTIVE || !fluid_follows(sim, k))
                continue;
            Flow *g = flow_at(sim, sim->slot[n]);
            FlowLink *fl = flow_links(g);
            if (g->mark == set_epoch || g->mark == set_epoch + 1) {
                /* A follower in the set of a passive one: filled with its old cap. */
                if (w >= n_set)
                    fluid_force(sim, n);
                continue;
            }
            if (g->mark == done_epoch)
                continue;
            g->mark = done_epoch;
            /* (After apply_rates(), a set flow's rate is its new rate.) */
            double cap = fluid_follow_cap(sim, n, set_epoch);
            if (!isfinite(cap) || cap == g->rate)
                continue;
            double delta = cap - g->rate;
            gboolean slack = TRUE;
            for (guint j = 0; slack && j < g->n_links; j++) {
                if (fl[j].pos == NO_POS)
                    continue;
                const LinkState *ls = &sim->links[fl[j].link];
                double full = ls->capacity * (1.0 - FLUID_PASSIVE_SLACK);
                slack = ls->used < full && ls->used + delta * fl[j].weight < full;
            }
            if (!slack) {
                fluid_force(sim, n);
                continue;
            }
            for (guint j = 0; j < g->n_links; j++)
                if (fl[j].pos != NO_POS)
                    sim->links[fl[j].link].used += delta * fl[j].weight;
            flow_set_rate(sim, g, cap);
            fluid_reschedule(sim, n);
            g_array_append_val(work, sim->slot[n]);
            sim->res->n_rate_updates++;
        }
    }
}

static void
recompute_rates(Sim *sim)
{
    gboolean global = sim->opt.rates == RS_FLOW_SIM_RATES_GLOBAL;
    if (sim->changed->len == 0 && sim->forced->len == 0 && sim->fresh->len == 0)
        return;
    guint32 set_epoch = ++sim->epoch;
    g_array_set_size(sim->set, 0);
    if (sim->exact) {
        recompute_exact(sim, set_epoch);
        apply_rates(sim, set_epoch);
        return;
    }
    for (guint i = 0; !global && i < sim->forced->len; i++) {
        guint32 slot = g_array_index(sim->forced, guint32, i);
        Flow *f = flow_at(sim, slot);
        if (slot < sim->flows->len && f->message != NO_SLOT && f->mark != set_epoch) {
            f->mark = set_epoch;
            g_array_append_val(sim->set, slot);
        }
    }
    g_array_set_size(sim->forced, 0);
    if (global) {
        for (guint32 s = 0; s < sim->flows->len; s++) {
            Flow *f = flow_at(sim, s);
            if (f->message != NO_SLOT) {
                f->mark = set_epoch;
                g_array_append_val(sim->set, s);
            }
        }
    }
    for (guint i = 0; i < sim->changed->len; i++) {
        LinkState *ls = &sim->links[g_array_index(sim->changed, guint32, i)];
        ls->changed = FALSE;
        ls->lost = ls->lost_max = 0.0;
        for (guint j = 0; !global && j < ls->len; j++) {
            Flow *f = flow_at(sim, ls->items[j].slot);
            if (f->mark != set_epoch) {
                f->mark = set_epoch;
                g_array_append_val(sim->set, ls->items[j].slot);
            }
        }
    }
    g_array_set_size(sim->changed, 0);
    if (sim->set->len == 0)
        return;
    /* Propagation is bounded, so that an event never costs a global recomputation. */
    guint max_set = MAX_EXPAND_GROWTH * sim->set->len + MAX_EXPAND_EXTRA;
    guint closed = 0;
    for (guint round = 0;; round++) {
        if (sim->fluid && !global)
            fluid_close_set(sim, set_epoch, &closed);
        fill(sim, set_epoch, ++sim->epoch);
        sim->res->n_rate_updates += sim->set->len;
        if (sim->opt.rates != RS_FLOW_SIM_RATES_LOCAL || round + 1 >= MAX_EXPAND_ROUNDS ||
            sim->set->len >= max_set || !expand(sim, set_epoch))
            break;
    }

    /* Fluid relays: clamped followers are capped first in a new filling (a few times). */
    for (guint k = 0; sim->fluid && k < 4 && fluid_clamp(sim, set_epoch, FALSE); k++) {
        fill(sim, set_epoch, ++sim->epoch);
        sim->res->n_rate_updates += sim->set->len;
    }
    if (sim->fluid)
        fluid_clamp(sim, set_epoch, TRUE);
    apply_rates(sim, set_epoch);
    if (sim->fluid && !global)
        fluid_propagate(sim, set_epoch);
    if (sim->fluid)
        fluid_flush_schedules(sim);
}

/* Applies the new rates of the set of @set_epoch (the last filling's). */
static void
apply_rates(Sim *sim, guint32 set_epoch)
{
    guint n_set = sim->set->len;
    const guint32 *set = (const guint32 *)sim->set->data;
    guint n_lset = sim->lset->len;
    const guint32 *lset = (const guint32 *)sim->lset->data;
    for (guint i = 0; i < n_lset; i++)
        sim->links[lset[i]].new_sum = 0.0;
    for (guint i = 0; i < n_set; i++) {
        Flow *f = flow_at(sim, set[i]);
        FlowLink *fl = flow_links(f);
        for (guint j = 0; j < f->n_links; j++)
            if (fl[j].pos != NO_POS)
                sim->links[fl[j].link].new_sum += f->new_rate * fl[j].weight;
        if (f->new_rate == f->rate)
            continue; /* same rate, same completion time */
        flow_set_rate(sim, f, f->new_rate);
        if (sim->fluid) {
            f->mark = set_epoch + 1; /* rate changed: rescheduled below */
            continue;
        }
        double t = f->remaining <= 0 ? sim->now
                   : f->rate > 0     ? sim->now + f->remaining / f->rate
                                     : INFINITY;
        heap_update(sim, set[i], t);
    }
    /* Fluid relays: the next event of a flow whose rate changed (its end, a dependent's
     * start) and of its flowing dependents (their catching up). */
    for (guint i = 0; sim->fluid && i < n_set; i++) {
        Flow *f = flow_at(sim, set[i]);
        if (f->mark == set_epoch + 1)
            fluid_reschedule(sim, f->message);
    }
    sim->epoch++; /* set_epoch + 1 is spent */
    for (guint i = 0; i < n_lset; i++) {
        LinkState *ls = &sim->links[lset[i]];
        if (ls->n_in_set == ls->len || ++ls->n_incremental >= EXACT_REFRESH_EVERY) {
            /* Exact sum, so rounding never accumulates. */
            double used = 0.0;
            for (guint j = 0; j < ls->len; j++) {
                LinkItem it = ls->items[j];
                Flow *g = flow_at(sim, it.slot);
                used += g->rate * flow_links(g)[it.entry].weight;
            }
            ls->used = used;
            ls->n_incremental = 0;
        } else {
            ls->used += ls->new_sum - ls->old_sum;
        }
    }
}

/* --- setup --- */

static gint
compare_by_phase(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const RsFlowMessage *msgs = user_data;
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    if (msgs[x].phase != msgs[y].phase)
        return msgs[x].phase < msgs[y].phase ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Kahn's algorithm over the same-phase dependencies (those on earlier phases are met when
 * a phase starts): writes the messages in a topological order to @order ([n]) and returns
 * how many it placed, n when they form no cycle. O(n + dependencies). */
static guint
same_phase_order(const RsFlowMessage *msgs, guint n, const guint32 *deps, guint32 *order)
{
    g_autofree guint *indegree = g_new0(guint, MAX(n, 1));
    g_autofree guint *first = g_new0(guint, n + 1);
    for (guint m = 0; m < n; m++)
        for (guint i = 0; i < msgs[m].n_deps; i++) {
            guint32 d = deps[msgs[m].first_dep + i];
            if (msgs[d].phase == msgs[m].phase) {
                indegree[m]++;
                first[d + 1]++;
            }
        }
    for (guint m = 0; m < n; m++)
        first[m + 1] += first[m];
    g_autofree guint32 *out = g_new(guint32, first[n] + 1);
    g_autofree guint *fill = g_memdup2(first, sizeof(guint) * (n + 1));
    for (guint m = 0; m < n; m++)
        for (guint i = 0; i < msgs[m].n_deps; i++) {
            guint32 d = deps[msgs[m].first_dep + i];
            if (msgs[d].phase == msgs[m].phase)
                out[fill[d]++] = m;
        }
    guint head = 0, tail = 0;
    for (guint m = 0; m < n; m++)
        if (indegree[m] == 0)
            order[tail++] = m;
    while (head < tail) {
        guint32 d = order[head++];
        for (guint i = first[d]; i < first[d + 1]; i++)
            if (--indegree[out[i]] == 0)
                order[tail++] = out[i];
    }
    return tail;
}

static gboolean
validate(const RsFlowMessage *msgs, guint n, const guint32 *deps, guint n_deps,
         const RsTopology *topo, gboolean rounds, GError **error)
{
    guint n_gpus = rs_topology_get_n_gpus(topo);
    for (guint m = 0; m < n; m++) {
        const RsFlowMessage *msg = &msgs[m];
        if (msg->src >= n_gpus || msg->dst >= n_gpus) {
            g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_RANK,
                        "message %u: rank %u is not a GPU of topology %s (%u GPUs)", m,
                        msg->src >= n_gpus ? msg->src : msg->dst, rs_topology_get_name(topo),
                        n_gpus);
            return FALSE;
        }
        if ((guint64)msg->first_dep + msg->n_deps > n_deps) {
            g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_DEPENDENCY,
                        "message %u: dependencies out of the dependency array", m);
            return FALSE;
        }
        for (guint i = 0; i < msg->n_deps; i++) {
            guint32 d = deps[msg->first_dep + i];
            const char *why = NULL;
            if (d >= n)
                why = "is not a message";
            else if (d == m)
                why = "is the message itself";
            else if (msgs[d].phase > msg->phase)
                why = "belongs to a later phase";
            else if (rounds && msgs[d].phase == msg->phase && msgs[d].round > msg->round)
                why = "belongs to a later round (its ranks would wait for each other)";
            if (why != NULL) {
                g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_DEPENDENCY,
                            "message %u depends on message %u, which %s", m, d, why);
                return FALSE;
            }
        }
    }
    /* Same-phase dependencies must not form a cycle. */
    g_autofree guint32 *order = g_new(guint32, n + 1);
    guint n_placed = same_phase_order(msgs, n, deps, order);
    if (n_placed < n) {
        g_autofree gboolean *placed = g_new0(gboolean, n);
        for (guint i = 0; i < n_placed; i++)
            placed[order[i]] = TRUE;
        guint32 stuck = 0;
        while (placed[stuck])
            stuck++;
        g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_DEPENDENCY,
                    "message %u is part of a dependency cycle", stuck);
        return FALSE;
    }
    return TRUE;
}

static void
sim_clear(Sim *sim)
{
    g_free(sim->prefix);
    g_free(sim->dependents_first);
    g_free(sim->dependents);
    g_free(sim->dependents_edge);
    g_free(sim->state);
    g_free(sim->chunk);
    g_free(sim->n_chunks);
    g_free(sim->chunk_size);
    g_free(sim->delivered);
    g_free(sim->slot);
    g_free(sim->phi);
    g_free(sim->n_chunks_ref);
    g_free(sim->capped);
    g_free(sim->n_followers);
    if (sim->forced)
        g_array_unref(sim->forced);
    if (sim->chain)
        g_array_unref(sim->chain);
    if (sim->fresh)
        g_array_unref(sim->fresh);
    if (sim->cheap)
        g_array_unref(sim->cheap);
    if (sim->sched_queue)
        g_array_unref(sim->sched_queue);
    g_free(sim->sched_mark);
    g_free(sim->phase_order);
    g_free(sim->phase_first);
    g_free(sim->rank_first);
    g_free(sim->rank_msgs);
    g_free(sim->rank_next);
    g_free(sim->rank_pending);
    g_free(sim->rank_waiting);
    g_free(sim->ends_posted);
    g_free(sim->rank_outstanding);
    g_free(sim->stream_free_s);
    g_free(sim->ready_s);
    for (guint32 slot = 0; sim->flows && slot < sim->flows->len; slot++) {
        g_free(flow_at(sim, slot)->members);
        g_free(flow_at(sim, slot)->ext);
    }
    if (sim->flows)
        g_array_unref(sim->flows);
    if (sim->groups)
        g_hash_table_unref(sim->groups);
    g_free(sim->tag);
    g_free(sim->member_pos);
    if (sim->free_slots)
        g_array_unref(sim->free_slots);
    g_free(sim->heap);
    g_free(sim->heap_pos);
    if (sim->timers)
        g_array_unref(sim->timers);
    for (guint l = 0; sim->links && l < sim->n_links; l++)
        g_free(sim->links[l].items);
    g_free(sim->links);
    if (sim->changed)
        g_array_unref(sim->changed);
    if (sim->set)
        g_array_unref(sim->set);
    if (sim->lset)
        g_array_unref(sim->lset);
    if (sim->csr)
        g_array_unref(sim->csr);
    if (sim->csr_w)
        g_array_unref(sim->csr_w);
    if (sim->lheap)
        g_array_unref(sim->lheap);
}

/* Stage 1, dependents (reverse dependencies) in CSR form: dependents_first[m] ..
 * dependents_first[m + 1] index the messages waiting for message m. */
static void
setup_dependents(Sim *sim)
{
    guint n = sim->n;
    const RsFlowMessage *msgs = sim->msgs;
    sim->dependents_first = g_new0(guint, n + 1);
    for (guint m = 0; m < n; m++)
        for (guint i = 0; i < msgs[m].n_deps; i++)
            sim->dependents_first[sim->deps[msgs[m].first_dep + i] + 1]++;
    for (guint m = 0; m < n; m++)
        sim->dependents_first[m + 1] += sim->dependents_first[m];
    sim->dependents = g_new(guint32, sim->dependents_first[n] + 1);
    sim->dependents_edge = g_new(guint, sim->dependents_first[n] + 1);
    g_autofree guint *fill = g_memdup2(sim->dependents_first, sizeof(guint) * (n + 1));
    for (guint m = 0; m < n; m++)
        for (guint i = 0; i < msgs[m].n_deps; i++) {
            guint k = fill[sim->deps[msgs[m].first_dep + i]]++;
            sim->dependents[k] = m;
            sim->dependents_edge[k] = msgs[m].first_dep + i;
        }
}

/* Stage 2, chunks: relays and what they forward are pipelined; per-message state, and the
 * result's network message and byte counts. */
static void
setup_chunks(Sim *sim, RsFlowSimResult *res)
{
    guint n = sim->n;
    const RsFlowMessage *msgs = sim->msgs;
    sim->state = g_new0(guint8, n);
    sim->chunk = g_new0(guint32, n);
    sim->n_chunks = g_new(guint32, n);
    sim->chunk_size = g_new(guint64, n);
    sim->delivered = g_new0(guint64, n);
    sim->slot = g_new(guint32, n);
    sim->phi = g_new0(double, MAX(n, 1));
    sim->n_chunks_ref = g_new0(guint32, MAX(n, 1));
    sim->capped = g_new0(gboolean, MAX(sim->res->n_deps, 1));
    sim->n_followers = g_new0(guint32, MAX(n, 1));
    for (guint m = 0; m < n; m++) {
        guint64 size = msgs[m].size_bytes;
        gboolean pipelined =
            !sim->rounds && !sim->window && msgs[m].src != msgs[m].dst && size > 0 &&
            sim->opt.chunk_bytes > 0 &&
            (msgs[m].n_deps > 0 || sim->dependents_first[m + 1] > sim->dependents_first[m]);

        guint64 c = MAX(size, 1);
        if (pipelined) {
            c = sim->opt.chunk_bytes;
            if (sim->opt.max_chunks_per_message > 0)
                c = MAX(c, (size + sim->opt.max_chunks_per_message - 1) /
                               sim->opt.max_chunks_per_message);
        }
        sim->n_chunks[m] = size == 0 ? 1 : (guint32)((size + c - 1) / c);
        if (sim->fluid) {
            /* One flow per message; the chunk sets only how far a relay lags. */
            sim->n_chunks_ref[m] = sim->n_chunks[m];
            sim->phi[m] = pipelined ? MIN(1.0, (double)c / (double)size) : 1.0;
            sim->chunk_size[m] = c;
            sim->n_chunks[m] = 1;
        } else {
            sim->chunk_size[m] = c;
        }
        sim->slot[m] = NO_SLOT;
        res->message_start_s[m] = NAN;
        res->message_end_s[m] = NAN;
        if (msgs[m].src != msgs[m].dst) {
            res->n_network_messages++;
            res->bytes_moved += size;
        }
    }
}

/* Stage 3, phases in increasing order: phase_order lists the messages by phase,
 * phase_first[p] where phase p starts in it. */
static void
setup_phases(Sim *sim, RsFlowSimResult *res)
{
    guint n = sim->n;
    const RsFlowMessage *msgs = sim->msgs;
    sim->phase_order = g_new(guint32, n + 1);
    for (guint m = 0; m < n; m++)
        sim->phase_order[m] = m;
    g_qsort_with_data(sim->phase_order, (gint)n, sizeof(guint32), compare_by_phase, (gpointer)msgs);
    guint n_phases = 0;
    for (guint i = 0; i < n; i++)
        if (i == 0 || msgs[sim->phase_order[i]].phase != msgs[sim->phase_order[i - 1]].phase)
            n_phases++;
    res->n_phases = n_phases;
    res->phase_ids = g_new0(guint32, n_phases + 1);
    res->phase_end_s = g_new0(double, n_phases + 1);
    sim->phase_first = g_new0(guint, n_phases + 1);
    guint p = 0;
    for (guint i = 0; i < n; i++) {
        if (i == 0 || msgs[sim->phase_order[i]].phase != msgs[sim->phase_order[i - 1]].phase) {
            sim->phase_first[p] = i;
            res->phase_ids[p] = msgs[sim->phase_order[i]].phase;
            p++;
        }
    }
    sim->phase_first[n_phases] = n;
}

/* Stage 4, links: capacities, the result's per-link arrays and the bytes each message
 * puts on its route. */
static void
setup_links(Sim *sim, RsFlowSimResult *res)
{
    const RsFlowMessage *msgs = sim->msgs;
    sim->n_links = rs_topology_get_n_links(sim->topo);
    sim->links = g_new0(LinkState, sim->n_links);
    for (guint32 l = 0; l < sim->n_links; l++) {
        sim->links[l].capacity =
            rs_link_get_capacity_bytes_per_s(rs_topology_get_link(sim->topo, l));
        sim->links[l].dominated = rs_topology_link_is_dominated(sim->topo, l);
    }
    res->n_links = sim->n_links;
    res->link_bytes = g_new0(guint64, sim->n_links);
    res->link_busy_s = g_new0(double, sim->n_links);
    res->n_buckets = sim->opt.n_timeline_buckets + (sim->opt.n_timeline_buckets & 1);
    res->bucket_s = INITIAL_BUCKET_S;
    if (res->n_buckets > 0)
        res->link_timeline_bytes = g_new0(double, (gsize)sim->n_links * res->n_buckets);
    for (guint m = 0; m < sim->n; m++) {
        guint32 route[RS_TOPOLOGY_MAX_ROUTE];
        guint n_route = rs_topology_route(sim->topo, msgs[m].src, msgs[m].dst, route);
        for (guint i = 0; i < n_route; i++)
            res->link_bytes[route[i]] += msgs[m].size_bytes;
    }
}

static gint
compare_by_round(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const RsFlowMessage *msgs = user_data;
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    if (msgs[x].phase != msgs[y].phase)
        return msgs[x].phase < msgs[y].phase ? -1 : 1;
    if (msgs[x].round != msgs[y].round)
        return msgs[x].round < msgs[y].round ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Every rank's messages in index order, CSR (rank_first, rank_msgs; rank_next at each
 * rank's first): a message under its sender and its receiver; a local copy under its rank
 * once when @with_locals, else not at all. */
static void
setup_rank_lists(Sim *sim, gboolean with_locals)
{
    guint n = sim->n;
    const RsFlowMessage *msgs = sim->msgs;
    sim->n_gpus = rs_topology_get_n_gpus(sim->topo);
    sim->rank_first = g_new0(guint, sim->n_gpus + 1);
    for (guint m = 0; m < n; m++) {
        if (msgs[m].dst == msgs[m].src) {
            sim->rank_first[msgs[m].src + 1] += with_locals;
            continue;
        }
        sim->rank_first[msgs[m].src + 1]++;
        sim->rank_first[msgs[m].dst + 1]++;
    }
    for (guint g = 0; g < sim->n_gpus; g++)
        sim->rank_first[g + 1] += sim->rank_first[g];
    sim->rank_msgs = g_new(guint32, sim->rank_first[sim->n_gpus] + 1);
    g_autofree guint *fill = g_memdup2(sim->rank_first, sizeof(guint) * (sim->n_gpus + 1));
    for (guint32 m = 0; m < n; m++) {
        if (msgs[m].dst == msgs[m].src) {
            if (with_locals)
                sim->rank_msgs[fill[msgs[m].src]++] = m;
            continue;
        }
        sim->rank_msgs[fill[msgs[m].src]++] = m;
        sim->rank_msgs[fill[msgs[m].dst]++] = m;
    }
    sim->rank_next = g_memdup2(sim->rank_first, sizeof(guint) * (sim->n_gpus + 1));
    sim->ends_posted = g_new0(guint8, MAX(n, 1));
}

/* Stage 5, rounds: every rank's messages by (phase, round, index), and the rounds. */
static void
setup_rounds(Sim *sim, RsFlowSimResult *res)
{
    guint n = sim->n;
    const RsFlowMessage *msgs = sim->msgs;
    setup_rank_lists(sim, TRUE);
    for (guint g = 0; g < sim->n_gpus; g++) {
        guint k = sim->rank_first[g + 1] - sim->rank_first[g];
        if (k > 1)
            g_qsort_with_data(&sim->rank_msgs[sim->rank_first[g]], (gint)k, sizeof(guint32),
                              compare_by_round, (gpointer)msgs);
    }
    sim->rank_pending = g_new0(guint, sim->n_gpus + 1);
    sim->rank_waiting = g_new0(guint8, sim->n_gpus + 1);
    /* Distinct (phase, round) pairs, in phase order. */
    g_autofree guint32 *order = g_memdup2(sim->phase_order, sizeof(guint32) * (n + 1));
    g_qsort_with_data(order, (gint)n, sizeof(guint32), compare_by_round, (gpointer)msgs);
    for (guint i = 0; i < n; i++)
        if (i == 0 || msgs[order[i]].phase != msgs[order[i - 1]].phase ||
            msgs[order[i]].round != msgs[order[i - 1]].round)
            res->n_rounds++;
}

/* Stage 5, window: every rank's network operations in index order (the key order
 * run_window() numbered them in). */
static void
setup_window(Sim *sim)
{
    setup_rank_lists(sim, FALSE);
    sim->rank_outstanding = g_new0(guint, sim->n_gpus + 1);
    sim->stream_free_s = g_new0(double, sim->n_gpus + 1);
    sim->ready_s = g_new0(double, MAX(sim->n, 1));
}

/* Does any message forward another's bytes in its phase (a fluid edge)? Without one, fluid
 * relays are the chunked model's messages, every chunk following the one before on the
 * same links at the same rate: it is run as that, with exact rates and route groups, and
 * its answers are the chunked model's (under local propagation, which fluid relays keep,
 * m2n-deepseek-v3-gb200's direct and node-aware plans, which relay nothing, had GPUs
 * 1.63% and 2.91% off the chunked figures). */
static gboolean
has_fluid_edge(Sim *sim)
{
    for (guint32 m = 0; m < sim->n; m++)
        for (guint i = 0; i < sim->msgs[m].n_deps; i++)
            if (fluid_edge(sim, m, sim->deps[sim->msgs[m].first_dep + i]))
                return TRUE;
    return FALSE;
}

static void
sim_setup(Sim *sim, RsFlowSimResult *res)
{
    sim->n = res->n_messages;
    sim->msgs = res->messages;
    sim->deps = res->deps;
    sim->res = res;
    sim->rounds = sim->opt.posting == RS_FLOW_SIM_POST_ROUNDS;
    sim->window = sim->opt.posting == RS_FLOW_SIM_POST_WINDOW;
    sim->fluid = !sim->rounds && !sim->window && sim->opt.relays == RS_FLOW_SIM_RELAYS_FLUID &&
                 has_fluid_edge(sim);
    /* Fluid relays' caps are not bottleneck-checked (yet): they keep local's propagation. */
    sim->exact = sim->opt.rates == RS_FLOW_SIM_RATES_EXACT && !sim->fluid;
    if (sim->opt.rates == RS_FLOW_SIM_RATES_EXACT && sim->fluid)
        sim->opt.rates = RS_FLOW_SIM_RATES_LOCAL;
    setup_dependents(sim);
    setup_chunks(sim, res);
    setup_phases(sim, res);
    setup_links(sim, res);
    if (sim->rounds)
        setup_rounds(sim, res);
    if (sim->window)
        setup_window(sim);
    /* Stage 6: the event machinery's work arrays, empty. */
    sim->flows = g_array_new(FALSE, FALSE, sizeof(Flow));
    sim->free_slots = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->timers = g_array_new(FALSE, FALSE, sizeof(Timer));
    sim->changed = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->set = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->lset = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->csr = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->csr_w = g_array_new(FALSE, FALSE, sizeof(double));
    sim->lheap = g_array_new(FALSE, FALSE, sizeof(LinkKey));
    sim->cheap = g_array_new(FALSE, FALSE, sizeof(LinkKey));
    sim->forced = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->chain = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->fresh = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->sched_queue = g_array_new(FALSE, FALSE, sizeof(guint32));
    sim->sched_mark = g_new0(guint32, MAX(sim->n, 1));
    sim->sched_epoch = 1;
    sim->grouped = !sim->fluid && !sim->opt.flow_per_message;
    if (sim->grouped) {
        sim->groups = g_hash_table_new(group_key_hash, group_key_equal);
        sim->tag = g_new0(double, MAX(sim->n, 1));
        sim->member_pos = g_new0(guint32, MAX(sim->n, 1));
    }
}

static void
sim_finish_stats(Sim *sim)
{
    RsFlowSimResult *res = sim->res;
    const RsTopology *topo = sim->topo;
    res->n_gpus = rs_topology_get_n_gpus(topo);
    res->gpu_finish_s = g_new(double, res->n_gpus);
    for (guint g = 0; g < res->n_gpus; g++)
        res->gpu_finish_s[g] = -1.0;
    for (guint p = 0; p < res->n_phases; p++)
        for (guint i = sim->phase_first[p]; i < sim->phase_first[p + 1]; i++) {
            guint32 m = sim->phase_order[i];
            double end = res->message_end_s[m];
            if (isnan(end))
                continue; /* stopped before it arrived */
            res->phase_end_s[p] = MAX(res->phase_end_s[p], end);
            res->total_s = MAX(res->total_s, end);
            res->gpu_finish_s[sim->msgs[m].src] = MAX(res->gpu_finish_s[sim->msgs[m].src], end);
            res->gpu_finish_s[sim->msgs[m].dst] = MAX(res->gpu_finish_s[sim->msgs[m].dst], end);
        }
    res->bottleneck_link = G_MAXUINT32;
    for (guint32 l = 0; l < sim->n_links; l++) {
        if (sim->links[l].n_active > 0)
            res->link_busy_s[l] += sim->now - sim->links[l].busy_since;
        if (res->link_bytes[l] == 0 || sim->links[l].dominated)
            continue;
        double load_s = (double)res->link_bytes[l] / sim->links[l].capacity;
        if (load_s > res->bottleneck_load_s) {
            res->bottleneck_load_s = load_s;
            res->bottleneck_link = l;
        }
    }
    if (res->stopped)
        res->total_s = sim->now;
    if (res->n_buckets > 0)
        timeline_fit(sim, res->total_s);
    for (guint32 l = 0; res->n_buckets > 0 && l < sim->n_links; l++)
        timeline_write_pending(sim, l);
}

/* Calls the progress function when its interval has passed (or @finished). */
static void
report_progress(Sim *sim, gboolean finished)
{
    gint64 now_us = g_get_monotonic_time();
    if (!finished && now_us < sim->next_progress_us)
        return;
    double interval_s = sim->opt.progress_interval_s > 0 ? sim->opt.progress_interval_s : 0.25;
    sim->next_progress_us = now_us + (gint64)(interval_s * 1e6);
    /* Bytes through: the chunks delivered (bytes_done: messages whole, and the chunks of the
     * others, paused ones too), and what the flowing flows delivered of their own. */
    double flowing = 0.0;
    for (guint32 slot = 0; !finished && slot < sim->flows->len; slot++) {
        Flow *f = flow_at(sim, slot);
        if (f->message == NO_SLOT)
            continue;
        guint32 m = f->message;
        double dt = MAX(0.0, sim->now - f->last_t);
        for (guint i = 0; i < f->n_members; i++) {
            guint32 g = f->members[i];
            double left = sim->tag[g] - (f->sent + f->rate * dt);
            flowing += MAX(0.0, (double)chunk_bytes(sim, g, sim->chunk[g]) - MAX(0.0, left));
        }
        if (f->n_members > 0)
            continue;
        double sent = sim->fluid ? (double)(sim->msgs[m].size_bytes - sim->delivered[m])
                                 : (double)chunk_bytes(sim, m, sim->chunk[m]);
        flowing += MAX(0.0, sent - MAX(0.0, f->remaining - f->rate * dt));
    }
    RsFlowSimProgress p = {sim->n,
                           sim->n_done,
                           sim->res->bytes_moved,
                           MIN(sim->res->bytes_moved, sim->bytes_done + (guint64)flowing),
                           sim->res->n_events,
                           finished ? sim->res->total_s : sim->now,
                           (now_us - sim->start_us) / 1e6,
                           finished,
                           sim->opt.progress_label};
    sim->opt.progress(&p, sim->opt.progress_data);
}

/* @res holds copies of @msgs and @deps (replacing what it held). */
static void
result_set_messages(RsFlowSimResult *res, const RsFlowMessage *msgs, guint n,
                    const guint32 *deps, guint n_deps)
{
    g_free(res->messages);
    g_free(res->deps);
    res->n_messages = n;
    res->messages = g_memdup2(msgs, sizeof(RsFlowMessage) * MAX(n, 1));
    res->deps = g_new0(guint32, MAX(n_deps, 1));
    if (n_deps > 0)
        memcpy(res->deps, deps, sizeof(guint32) * n_deps);
    res->n_deps = n_deps;
}

/* Runs messages already validated. */
static RsFlowSimResult *
run_core(const RsFlowMessage *messages, guint n_messages, const guint32 *deps, guint n_deps,
         const RsTopology *topo, const RsFlowSimOptions *options, const WindowGroups *wg,
         GError **error)
{
    RsFlowSimResult *res = g_new0(RsFlowSimResult, 1);
    result_set_messages(res, messages, n_messages, deps, n_deps);
    res->message_start_s = g_new0(double, MAX(n_messages, 1));
    res->message_end_s = g_new0(double, MAX(n_messages, 1));

    Sim sim;
    memset(&sim, 0, sizeof sim);
    sim.topo = topo;
    sim.message_overhead_s = rs_topology_get_message_overhead_s(topo);
    sim.chunk_overhead_s = rs_topology_get_chunk_overhead_s(topo, NULL);
    if (options != NULL)
        sim.opt = *options;
    else
        rs_flow_sim_options_init(&sim.opt);
    sim.wg = wg;
    if (wg != NULL)
        sim.prefix = g_new0(guint32, MAX(wg->n_groups, 1));
    if (sim.opt.window == 0)
        sim.opt.window = RS_FLOW_SIM_DEFAULT_WINDOW;
    res->chunk_bytes = sim.opt.chunk_bytes;
    res->relays = sim.opt.relays;
    res->posting = sim.opt.posting;
    res->window = sim.opt.posting == RS_FLOW_SIM_POST_WINDOW ? sim.opt.window : 0;
    sim_setup(&sim, res);
    sim.start_us = g_get_monotonic_time();
    /* The first report comes at once at the default interval (a terminal's bar), else after
     * the interval asked for (a log's lines). */
    sim.next_progress_us = sim.start_us + (gint64)(MAX(sim.opt.progress_interval_s, 0.0) * 1e6);

    if (res->n_phases > 0)
        post_phase(&sim, 0);
    double horizon = 0.0;
    for (;;) {
        gboolean progressed;
        do {
            progressed = FALSE;
            for (;;) {
                double t_timer = sim.timers->len ? g_array_index(sim.timers, Timer, 0).t : INFINITY;
                double t_flow = sim.heap_len ? sim.heap[0].t : INFINITY;
                if (MIN(t_timer, t_flow) > horizon)
                    break;
                progressed = TRUE;
                if (t_timer <= t_flow) {
                    Timer tm = timer_pop(&sim);
                    handle_timer(&sim, &tm);
                } else {
                    guint32 top = flow_at(&sim, sim.heap[0].slot)->message;
                    if (sim.fluid)
                        fluid_event(&sim, top);
                    else
                        chunk_done(&sim, top);
                }
            }
            while (sim.remaining_in_phase == 0 && sim.cur_phase + 1 < res->n_phases) {
                post_phase(&sim, sim.cur_phase + 1);
                progressed = TRUE;
            }
        } while (progressed);
        recompute_rates(&sim);
        /* Fluid relays: flows that caught up with a dependency at these rates follow it. */
        for (guint k = 0; k < 16 && sim.forced->len > 0; k++)
            recompute_rates(&sim);
        res->n_events++;
        if (sim.opt.progress != NULL && (res->n_events & 63) == 0)
            report_progress(&sim, FALSE);
        if (sim.n_done == n_messages)
            break;
        if (sim.opt.max_events > 0 && res->n_events >= sim.opt.max_events) {
            res->stopped = TRUE;
            for (guint m = 0; m < n_messages; m++)
                if (isnan(res->message_end_s[m]))
                    res->message_start_s[m] = NAN; /* not arrived (or still unpacking) */
            break;
        }
        double t_timer = sim.timers->len ? g_array_index(sim.timers, Timer, 0).t : INFINITY;
        double t_flow = sim.heap_len ? sim.heap[0].t : INFINITY;
        double t = MIN(t_timer, t_flow);
        if (!isfinite(t)) {
            g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_FAILED,
                        "the simulation stalled at %.9g s with %u of %u messages done", sim.now,
                        sim.n_done, n_messages);
            sim_clear(&sim);
            rs_flow_sim_result_free(res);
            return NULL;
        }
        sim.now = MAX(sim.now, t);
        horizon = sim.now * (1.0 + BATCH_REL_TOLERANCE);
    }
    sim_finish_stats(&sim);
    g_debug("%s%sflow model: %u messages, %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
            " rate updates (%.1f per event), %.1f s of wall time",
            sim.opt.progress_label ? sim.opt.progress_label : "",
            sim.opt.progress_label ? ": " : "", n_messages, res->n_events, res->n_rate_updates,
            (double)res->n_rate_updates / MAX(res->n_events, 1),
            (double)(g_get_monotonic_time() - sim.start_us) / 1e6);
    if (sim.opt.progress != NULL)
        report_progress(&sim, TRUE);
    sim_clear(&sim);
    return res;
}

/* --- window: the executor's chunk operations (flow-sim.h, RS_FLOW_SIM_POST_WINDOW) --- */

typedef struct {
    const RsFlowMessage *msgs;
    const guint64 *first; /* [n + 1]: message m's chunk operations are first[m] .. first[m+1] */
    const guint32 *op_msg; /* [ops]: the message of each operation */
    const guint64 *slot;   /* [ops] */
    const guint32 *colour; /* [n]: per message, exec/schedule.h's colour */
} WindowKey;

/* The chunk of network message @d that holds the last byte chunk @k of message @m needs:
 * the same fraction of @d as chunk k ends at, rounded up (the chunked relay model's rule,
 * deps_ready()); a last chunk or a local copy needs @d whole. */
static guint64
window_dep_chunk(const RsFlowMessage *msgs, const guint64 *first, guint64 chunk, guint32 m,
                 guint64 k, guint32 d)
{
    guint64 nd = first[d + 1] - first[d], nm = first[m + 1] - first[m];
    if (nd == 1 || msgs[m].src == msgs[m].dst || k + 1 >= nm)
        return nd - 1;
    unsigned __int128 x = (unsigned __int128)((k + 1) * chunk) * msgs[d].size_bytes;
    guint64 need = (guint64)((x + msgs[m].size_bytes - 1) / msgs[m].size_bytes);
    return need == 0 ? 0 : MIN((need - 1) / chunk, nd - 1);
}

static gint
compare_window_key(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const WindowKey *key = user_data;
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    guint32 px = key->msgs[key->op_msg[x]].phase, py = key->msgs[key->op_msg[y]].phase;
    if (px != py)
        return px < py ? -1 : 1;
    if (key->slot[x] != key->slot[y])
        return key->slot[x] < key->slot[y] ? -1 : 1;
    guint32 cx = key->colour[key->op_msg[x]], cy = key->colour[key->op_msg[y]];
    if (cx != cy)
        return cx < cy ? -1 : 1;
    return x < y ? -1 : x > y; /* operation ids run in (message, chunk) order */
}

/* Cuts every network message into chunk operations of chunk_bytes, numbers them in the
 * executor's key order (phase, slot, colour, message, chunk) with exec/schedule.h's slots
 * and colours, runs them with window posting and folds the result back onto the messages:
 * a message starts with its first operation and ends with its last. */
static RsFlowSimResult *
run_window(const RsFlowMessage *msgs, guint n, const guint32 *deps, guint n_deps,
           const RsTopology *topo, const RsFlowSimOptions *options, GError **error)
{
    guint64 chunk = options->chunk_bytes;
    g_autofree guint64 *first = g_new(guint64, n + 1);
    first[0] = 0;
    for (guint m = 0; m < n; m++) {
        guint64 size = msgs[m].size_bytes;
        gboolean cut = msgs[m].src != msgs[m].dst && size > 0 && chunk > 0;
        first[m + 1] = first[m] + (cut ? (size + chunk - 1) / chunk : 1);
    }
    guint64 n_ops = first[n];
    if (n_ops > G_MAXINT) {
        g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_FAILED,
                    "%" G_GUINT64_FORMAT " chunk operations of %" G_GUINT64_FORMAT
                    " bytes are more than the simulator indexes (2^31 - 1): give a larger "
                    "chunk",
                    n_ops, chunk);
        return NULL;
    }
    /* About WINDOW_BYTES_PER_OP each (measured 164 to 175 B: the default scenario's direct
     * plan, 2.5 × 10^6 operations, peaks 0.41 GB above the same plan posted whole): refuse
     * what this machine cannot hold rather than abort in an allocation. */
    long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
    double need_bytes = (double)n_ops * WINDOW_BYTES_PER_OP;
    if (pages > 0 && page_bytes > 0 && need_bytes > (double)pages * (double)page_bytes) {
        g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_FAILED,
                    "%" G_GUINT64_FORMAT " chunk operations of %" G_GUINT64_FORMAT
                    " bytes need about %.1f GB, more than this machine's %.1f GB: give a "
                    "larger chunk",
                    n_ops, chunk, need_bytes / 1e9, (double)pages * (double)page_bytes / 1e9);
        return NULL;
    }
    /* Slots in topological order of the same-phase dependencies (validate() excluded
     * cycles): chunk k of a message sits above chunk k − 1 and above every chunk it needs. */
    g_autofree guint32 *topo_order = g_new(guint32, n + 1);
    same_phase_order(msgs, n, deps, topo_order);
    g_autofree guint32 *op_msg = g_new(guint32, MAX(n_ops, 1));
    g_autofree guint64 *slot = g_new0(guint64, MAX(n_ops, 1));
    for (guint m = 0; m < n; m++)
        for (guint64 c = first[m]; c < first[m + 1]; c++)
            op_msg[c] = m;
    for (guint t = 0; t < n; t++) {
        guint32 m = topo_order[t];
        for (guint64 k = 0; k < first[m + 1] - first[m]; k++) {
            guint64 sl = k == 0 ? 0 : slot[first[m] + k - 1] + 1;
            for (guint i = 0; i < msgs[m].n_deps; i++) {
                guint32 d = deps[msgs[m].first_dep + i];
                if (msgs[d].phase != msgs[m].phase)
                    continue;
                guint64 j = window_dep_chunk(msgs, first, chunk, m, k, d);
                sl = MAX(sl, slot[first[d] + j] + 1);
            }
            slot[first[m] + k] = sl;
        }
    }
    g_clear_pointer(&topo_order, g_free);
    /* Key order, and each operation's place in it. */
    g_autofree guint32 *order = g_new(guint32, MAX(n_ops, 1));
    for (guint64 c = 0; c < n_ops; c++)
        order[c] = (guint32)c;
    /* Colours as exec/schedule.c gives them: per phase, in message order. */
    g_autofree guint32 *colour = g_new(guint32, MAX(n, 1));
    {
        g_autofree guint32 *src = g_new(guint32, MAX(n, 1)), *dst = g_new(guint32, MAX(n, 1));
        g_autofree guint32 *phase = g_new(guint32, MAX(n, 1));
        for (guint m = 0; m < n; m++) {
            src[m] = msgs[m].src;
            dst[m] = msgs[m].dst;
            phase[m] = msgs[m].phase;
        }
        rs_edge_colour_bipartite(src, dst, phase, n, rs_topology_get_n_gpus(topo), colour);
    }
    WindowKey key = {msgs, first, op_msg, slot, colour};
    g_qsort_with_data(order, (gint)n_ops, sizeof(guint32), compare_window_key, &key);
    g_autofree guint32 *pos = g_new(guint32, MAX(n_ops, 1));
    for (guint64 i = 0; i < n_ops; i++)
        pos[order[i]] = (guint32)i;
    g_clear_pointer(&slot, g_free);
    /* The operations as messages, with their GPU-side costs split by bytes. */
    g_autofree RsFlowMessage *ops = g_new0(RsFlowMessage, MAX(n_ops, 1));
    g_autoptr(GArray) op_deps = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_autofree double *pre = options->message_pre_s ? g_new(double, MAX(n_ops, 1)) : NULL;
    g_autofree double *post = options->message_post_s ? g_new(double, MAX(n_ops, 1)) : NULL;
    g_autofree guint32 *op_owner = g_new(guint32, MAX(n_ops, 1));
    g_autofree guint32 *op_chunk = g_new(guint32, MAX(n_ops, 1));
    for (guint64 i = 0; i < n_ops; i++) {
        guint32 c = order[i], m = op_msg[c];
        guint64 k = c - first[m], nc = first[m + 1] - first[m];
        guint64 size = nc == 1 ? msgs[m].size_bytes
                       : k + 1 < nc ? chunk
                                    : msgs[m].size_bytes - (nc - 1) * chunk;
        RsFlowMessage *op = &ops[i];
        *op = (RsFlowMessage){msgs[m].src, msgs[m].dst, msgs[m].phase, size, op_deps->len, 0, 0};
        for (guint j = 0; j < msgs[m].n_deps; j++) {
            guint32 d = deps[msgs[m].first_dep + j];
            if (msgs[d].phase != msgs[m].phase)
                continue; /* an earlier phase has ended before this one is posted */
            guint32 p = pos[first[d] + window_dep_chunk(msgs, first, chunk, m, k, d)];
            g_array_append_val(op_deps, p);
            op->n_deps++;
        }
        double share = msgs[m].size_bytes > 0 ? (double)size / (double)msgs[m].size_bytes : 1.0;
        if (pre)
            pre[i] = options->message_pre_s[m] * share;
        if (post)
            post[i] = options->message_post_s[m] * share;
        op_owner[i] = m;
        op_chunk[i] = (guint32)k;
    }
    g_clear_pointer(&order, g_free);
    g_clear_pointer(&op_msg, g_free);
    WindowGroups wg = {n, op_owner, op_chunk, first, pos};
    RsFlowSimOptions opt = *options;
    opt.message_pre_s = pre;
    opt.message_post_s = post;
    RsFlowSimResult *res = run_core(ops, (guint)n_ops, (const guint32 *)op_deps->data,
                                    op_deps->len, topo, &opt, &wg, error);
    if (res == NULL)
        return NULL;
    /* Fold: a message starts with its first operation and arrives with its last. */
    double *start = g_new(double, MAX(n, 1)), *end = g_new(double, MAX(n, 1));
    for (guint m = 0; m < n; m++) {
        start[m] = INFINITY;
        end[m] = -INFINITY;
    }
    for (guint64 i = 0; i < n_ops; i++) {
        guint32 m = op_owner[i];
        double s0 = res->message_start_s[i], e = res->message_end_s[i];
        if (isnan(e) || isnan(end[m])) {
            end[m] = NAN;
            continue;
        }
        end[m] = MAX(end[m], e);
        if (!isnan(s0))
            start[m] = MIN(start[m], s0);
    }
    res->n_network_messages = 0;
    for (guint m = 0; m < n; m++) {
        if (isnan(end[m]) || !isfinite(start[m]))
            start[m] = end[m] = NAN;
        if (msgs[m].src != msgs[m].dst)
            res->n_network_messages++;
    }
    g_free(res->message_start_s);
    g_free(res->message_end_s);
    res->message_start_s = start;
    res->message_end_s = end;
    result_set_messages(res, msgs, n, deps, n_deps);
    return res;
}

RsFlowSimResult *
rs_flow_sim_run_messages(const RsFlowMessage *messages, guint n_messages, const guint32 *deps,
                         guint n_deps, const RsTopology *topo, const RsFlowSimOptions *options,
                         GError **error)
{
    g_return_val_if_fail(topo != NULL, NULL);
    g_return_val_if_fail(messages != NULL || n_messages == 0, NULL);
    gboolean rounds = options != NULL && options->posting == RS_FLOW_SIM_POST_ROUNDS;
    if (!validate(messages, n_messages, deps, n_deps, topo, rounds, error))
        return NULL;
    if (options != NULL && options->posting == RS_FLOW_SIM_POST_WINDOW)
        return run_window(messages, n_messages, deps, n_deps, topo, options, error);
    return run_core(messages, n_messages, deps, n_deps, topo, options, NULL, error);
}

RsFlowSimPosting
rs_flow_sim_get_plan_posting(const RsPlan *plan, const RsFlowSimOptions *options)
{
    if (options == NULL)
        return RS_FLOW_SIM_POST_PHASES; /* the default */
    if (options->plan_relays && options->posting == RS_FLOW_SIM_POST_WINDOW &&
        (rs_plan_get_relay_chunk_bytes(plan) > 0 ||
         !rs_strategy_runs_in_executor(rs_plan_get_strategy(plan))))
        return RS_FLOW_SIM_POST_PHASES;
    return options->posting;
}

RsFlowSimResult *
rs_flow_sim_run(const RsPlan *plan, const RsTopology *topo, const RsFlowSimOptions *options,
                GError **error)
{
    guint n = rs_plan_get_n_messages(plan);
    g_autofree RsFlowMessage *msgs = g_new0(RsFlowMessage, MAX(n, 1));
    g_autoptr(GArray) deps = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint i = 0; i < n; i++) {
        const RsMessage *m = rs_plan_get_message(plan, i);
        const guint *d = rs_plan_get_message_deps(plan, m);
        msgs[i] = (RsFlowMessage){m->src,    m->dst,    m->phase, m->size_bytes,
                                  deps->len, m->n_deps, m->round};
        for (guint k = 0; k < m->n_deps; k++) {
            guint32 d32 = d[k];
            g_array_append_val(deps, d32);
        }
    }
    /* A plan that pipelines its relays as a library does runs in that library's step, as
     * fluid relays (flow-sim.h, "Relays a plan pipelines itself"). */
    RsFlowSimOptions opt;
    if (options != NULL)
        opt = *options;
    else
        rs_flow_sim_options_init(&opt);
    /* A baseline's or a peer's call is not exec/'s window: posted as whole phases. */
    opt.posting = rs_flow_sim_get_plan_posting(plan, &opt);
    if (opt.plan_relays && opt.posting == RS_FLOW_SIM_POST_PHASES &&
        rs_plan_get_relay_chunk_bytes(plan) > 0) {
        opt.chunk_bytes = rs_plan_get_relay_chunk_bytes(plan);
        opt.relays = RS_FLOW_SIM_RELAYS_FLUID;
    }
    return rs_flow_sim_run_messages(msgs, n, (const guint32 *)deps->data, deps->len, topo, &opt,
                                    error);
}

RsFlowSimResult *
rs_flow_sim_run_trace(const RsTrace *trace, const RsTopology *topo, const RsFlowSimOptions *options,
                      GError **error)
{
    guint n = rs_trace_get_n_rows(trace);
    guint n_gpus = rs_topology_get_n_gpus(topo);
    g_autoptr(GHashTable) index = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < n; i++) {
        const RsTraceRow *r = rs_trace_get_row(trace, i);
        g_autofree char *where = rs_trace_format_row_where(trace, r);
        if (!g_hash_table_insert(index, GUINT_TO_POINTER(r->message + 1),
                                 GUINT_TO_POINTER(i + 1))) {
            g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_DEPENDENCY,
                        "%s: the message id is given twice", where);
            return NULL;
        }
        if (r->src >= n_gpus || r->dst >= n_gpus) {
            g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_RANK,
                        "%s: rank %u is not a GPU of topology %s (%u GPUs)", where,
                        r->src >= n_gpus ? r->src : r->dst, rs_topology_get_name(topo), n_gpus);
            return NULL;
        }
    }
    g_autofree RsFlowMessage *msgs = g_new0(RsFlowMessage, MAX(n, 1));
    g_autoptr(GArray) deps = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint i = 0; i < n; i++) {
        const RsTraceRow *r = rs_trace_get_row(trace, i);
        msgs[i] = (RsFlowMessage){
            r->src, r->dst, r->phase, r->size_bytes, deps->len, r->depends_on->len, 0};
        for (guint k = 0; k < r->depends_on->len; k++) {
            guint32 id = g_array_index(r->depends_on, guint32, k);
            gpointer found = g_hash_table_lookup(index, GUINT_TO_POINTER(id + 1));
            if (found == NULL) {
                g_autofree char *where = rs_trace_format_row_where(trace, r);
                g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_DEPENDENCY,
                            "%s: depends on message %u, which is not in the trace", where, id);
                return NULL;
            }
            guint32 d = GPOINTER_TO_UINT(found) - 1;
            /* Named here by id and row (validate() would name row indices, no line). */
            const RsTraceRow *dr = rs_trace_get_row(trace, d);
            if (dr->phase > r->phase) {
                g_autofree char *where = rs_trace_format_row_where(trace, r);
                g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_DEPENDENCY,
                            "%s: depends on message %u, which belongs to a later phase (%u, "
                            "this message %u): phases run one after another",
                            where, id, dr->phase, r->phase);
                return NULL;
            }
            g_array_append_val(deps, d);
        }
    }
    /* A dependency cycle, named by a row of the file (Kahn's algorithm: what is left when
     * no row without pending dependencies remains lies on or behind a cycle). */
    g_autofree guint *pending = g_new0(guint, MAX(n, 1));
    g_autofree guint *first_dependent = g_new0(guint, n + 1);
    for (guint i = 0; i < n; i++) {
        pending[i] = msgs[i].n_deps;
        for (guint k = 0; k < msgs[i].n_deps; k++)
            first_dependent[g_array_index(deps, guint32, msgs[i].first_dep + k) + 1]++;
    }
    for (guint i = 0; i < n; i++)
        first_dependent[i + 1] += first_dependent[i];
    g_autofree guint32 *dependents = g_new(guint32, MAX(deps->len, 1));
    g_autofree guint *fill = g_memdup2(first_dependent, (n + 1) * sizeof(guint));
    for (guint i = 0; i < n; i++)
        for (guint k = 0; k < msgs[i].n_deps; k++)
            dependents[fill[g_array_index(deps, guint32, msgs[i].first_dep + k)]++] = i;
    g_autoptr(GArray) ready = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint32 i = 0; i < n; i++)
        if (pending[i] == 0)
            g_array_append_val(ready, i);
    for (guint head = 0; head < ready->len; head++) {
        guint32 m = g_array_index(ready, guint32, head);
        for (guint k = first_dependent[m]; k < first_dependent[m + 1]; k++)
            if (--pending[dependents[k]] == 0)
                g_array_append_val(ready, dependents[k]);
    }
    if (ready->len < n) {
        guint stuck = 0;
        while (pending[stuck] == 0)
            stuck++;
        g_autofree char *where = rs_trace_format_row_where(trace, rs_trace_get_row(trace, stuck));
        g_set_error(error, RS_FLOW_SIM_ERROR, RS_FLOW_SIM_ERROR_DEPENDENCY,
                    "%s: is part of, or waits on, a dependency cycle", where);
        return NULL;
    }
    /* GPU-side costs: a row has bytes but no layout, so a network message is read and
     * written in place (one contiguous run each side, as NCCL reads it) and a local copy is
     * one contiguous copy (rs_gpu_cost_contiguous_local_copy_s()); it cost 0 s before. */
    RsFlowSimOptions opt;
    if (options != NULL)
        opt = *options;
    else
        rs_flow_sim_options_init(&opt);
    g_autofree double *pre = NULL;
    if (opt.message_pre_s == NULL && rs_gpu_cost_has_costs(topo)) {
        pre = g_new0(double, MAX(n, 1));
        for (guint i = 0; i < n; i++)
            if (msgs[i].src == msgs[i].dst)
                pre[i] = rs_gpu_cost_contiguous_local_copy_s(rs_topology_get_gpu_costs(topo),
                                                             msgs[i].size_bytes);
        opt.message_pre_s = pre;
    }
    return rs_flow_sim_run_messages(msgs, n, (const guint32 *)deps->data, deps->len, topo, &opt,
                                    error);
}

RsTrace *
rs_flow_sim_result_to_trace(const RsFlowSimResult *result, const RsTopology *topo,
                            const guint32 *message_ids)
{
    RsTrace *trace = rs_trace_new();
    rs_trace_set_meta(trace, "source", "simulated");
    rs_trace_set_meta(trace, "model", "flow");
    rs_trace_set_meta(trace, "topology", rs_topology_get_name(topo));
    g_autoptr(GString) route = g_string_new(NULL);
    g_autoptr(GArray) deps = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint i = 0; i < result->n_messages; i++) {
        const RsFlowMessage *m = &result->messages[i];
        guint32 links[RS_TOPOLOGY_MAX_ROUTE];
        guint n_links = rs_topology_route(topo, m->src, m->dst, links);
        g_string_truncate(route, 0);
        for (guint k = 0; k < n_links; k++) {
            g_autofree char *name = rs_topology_format_link(topo, links[k]);
            if (k > 0)
                g_string_append_c(route, ';');
            g_string_append(route, name);
        }
        g_array_set_size(deps, 0);
        for (guint k = 0; k < m->n_deps; k++) {
            guint32 d = result->deps[m->first_dep + k];
            guint32 id = message_ids ? message_ids[d] : d;
            g_array_append_val(deps, id);
        }
        rs_trace_add(trace, message_ids ? message_ids[i] : i, m->src, m->dst, m->size_bytes,
                     m->phase, result->message_start_s[i], result->message_end_s[i], route->str,
                     (const guint32 *)deps->data, deps->len);
    }
    return trace;
}

double
rs_flow_sim_get_link_utilisation(const RsFlowSimResult *result, const RsTopology *topo,
                                 guint32 link_id)
{
    g_return_val_if_fail(link_id < result->n_links, 0.0);
    if (result->total_s <= 0)
        return 0.0;
    double cap = rs_link_get_capacity_bytes_per_s(rs_topology_get_link(topo, link_id));
    return MIN(1.0, (double)result->link_bytes[link_id] / (cap * result->total_s));
}

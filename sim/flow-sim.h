/* flow-sim.h — event-driven flow-level simulation of a plan's messages on a topology.
 *
 * The model (a fluid, flow-level network model as in SimGrid or htsim's flow mode):
 *  - Phases run one after another: phase p+1 is posted when every message of the phases
 *    before it has arrived. Inside a phase (RsFlowSimOptions.posting):
 *      RS_FLOW_SIM_POST_ROUNDS: every rank posts the plan's rounds (RsMessage.round,
 *        RsFlowMessage.round) one after another, as the groups of non-blocking sends and
 *        receives the plan defines (plan/plan.h, RsPlanOptions): it waits round_fixed_s
 *        (launch + synchronisation; 0 by default) and posts its next round once every
 *        message of the round before (sent, received or a local copy) arrived; a message is
 *        posted when both its ranks posted its round. Every dependency must have arrived
 *        whole before a message takes bandwidth (a relay sits in a later round than what it
 *        forwards, so that is already so in a plan): no chunks, no per-chunk events. A rank
 *        with k × max-ops messages of equal cost takes k rounds one after another. This is
 *        an executor that runs each round as one group (NCCL: ncclGroupStart … ncclGroupEnd
 *        on the rank's stream, where a group starts once the one before it ended). The
 *        executor of exec/ posts chunk operations within a sliding window and forwards relay
 *        chunks as they arrive (exec/executor.h), so for relay chains this figure is an upper
 *        one and the pipelined models below are its ideal.
 *      RS_FLOW_SIM_POST_PHASES (default): all messages of a phase are posted at once and
 *        relays are pipelined as `relays` says (below): what exec/ does (decision in
 *        docs/DESIGN.md, "Posting") when its window does not bind.
 *      RS_FLOW_SIM_POST_WINDOW: the executor's own schedule (exec/schedule.h,
 *        exec/executor.c rank_execute()). Every network message is cut into chunk
 *        operations of chunk_bytes (the last holds the rest; chunk_bytes 0: one operation
 *        per message; no max_chunks_per_message cap; more operations than this machine's
 *        memory holds at about 176 B each are refused), each with the key (phase, slot,
 *        colour, message, chunk): the colour is exec/schedule.h's (base/edge-colour.h,
 *        König's colouring of each phase's messages in index order, the same inputs, so the
 *        same colours); chunk k of a message without dependencies has slot k, a chunk's slot
 *        is above its predecessor's and above that of the chunk of each same-phase
 *        dependency holding the last byte it needs (the same fraction of the dependency as
 *        the chunk ends at, rounded up; a last chunk needs the dependency whole). For plans
 *        without relays these are exec/schedule.h's slots; for relays they are not always:
 *        the executor cuts dependencies per transfer by byte range and makes a hop that
 *        does not forward its box as it arrived ("unaligned") wait for the whole
 *        transfer, which needs the plan's boxes (the refit), not its messages; a review
 *        found different slots on a small hierarchical plan (docs/DESIGN.md). A chunk
 *        counts as arrived for what depends on it once every chunk of its message up to it
 *        arrived (the executor's arrived prefix). Every rank posts its operations, sends
 *        and receives, in increasing key while fewer than `window` are in flight, and
 *        stops at a send whose bytes have not all arrived (send_ready()). An operation is
 *        a message of its own: once both its ranks posted it, it pays the software
 *        overhead and its route latency, then takes its max-min share; it frees a place at
 *        both ranks when it arrived. Packs (message_pre_s) and unpacks (message_post_s)
 *        are split over a message's operations by bytes and queue on the rank's stream: a
 *        sender packs an operation when it posts it, a receiver unpacks after what is
 *        queued. Local copies stay outside the window and run once what they copy
 *        arrived, not on the stream; a zero-byte network message is one operation (the
 *        executor sends none). A message starts with its first operation and arrives with
 *        its last. Which messages move at once thus depends on the plan's message order,
 *        as on the machine: a rank whose first `window` operations wait for ranks busy
 *        with others idles. Events: two per operation, not per message; the flows per
 *        link are at most window × the ranks behind it.
 *  - A posted message first pays the per-message software overhead (and, on a calibrated
 *    topology, its chunk operations' overhead, rs_topology_get_chunk_overhead_s(), counted
 *    in chunks of chunk_bytes, else the topology's chunk_size). Its first chunk then
 *    waits for its dependencies (below), pays the route latency (links crossed plus switches,
 *    rs_topology_get_route_latency_s()) and only then takes bandwidth.
 *  - A message that takes bandwidth is a flow on its route (rs_topology_route()). Rates are
 *    max-min fair over the directed links (progressive filling, Bertsekas & Gallager, "Data
 *    Networks", 2nd ed., §6.5.2): each link's capacity is bandwidth × efficiency; dominated
 *    links (rs_topology_link_is_dominated()) never bind and are skipped.
 *  - Rates change only when a flow starts or stops taking bandwidth. Events that fall at the
 *    same time (within 1e-12 relative) are handled together, then rates are recomputed:
 *      RS_FLOW_SIM_RATES_EXACT (default): exact max-min, incrementally. An allocation is
 *        max-min fair iff it is feasible and every flow has a bottleneck: a saturated link
 *        on its route where no flow is faster (Bertsekas & Gallager §6.5.2). The flows that
 *        started are filled (progressive filling, the others held at their rates); then
 *        only the links whose load changed are checked, and a flow outside the set joins
 *        it and the set is filled again when (V1) a set flow froze on its link at a share
 *        below its rate, or (V2) it was at the top rate of a saturated link that now has
 *        slack or a faster flow, and no untouched link still bottlenecks it; until no link
 *        shows either. The set only grows, so this ends (at worst in a global filling) with
 *        the exact rates (ties and saturation within 1e-9 relative). SimGrid's LMM solver
 *        (src/kernel/lmm/maxmin.cpp) restricts a solve to the constraints a change reaches
 *        (a connected component); the bottleneck check stops at flows whose bottleneck
 *        holds. Measured (bench-flow-sim --exact-vs-global, tests/test-flow-sim.c): message
 *        end times within 1e-9 of GLOBAL; the work per event grows with the flows whose
 *        rates a change really moves (see the README's benchmark). With fluid relays the
 *        caps are not bottleneck-checked: EXACT then runs LOCAL's bounded propagation.
 *    The other modes fill a set of flows, the others held at their rates:
 *      RS_FLOW_SIM_RATES_NEIGHBOURS: the flows sharing a non-dominated link with a flow that
 *        started or stopped. O(flows touched) per event, but a rate that drops leaves
 *        capacity unused two links away until something else changes there.
 *      RS_FLOW_SIM_RATES_LOCAL: the same, except that a flow stopping on a link
 *        with slack touches nobody there (in max-min a link with slack bottlenecks nobody);
 *        then up to 4 rounds of propagation: flows outside the set that the new rates leave
 *        wrong join it (on a saturated link that lost load, those at the link's top rate;
 *        on a link that froze set flows at a share, those faster than it) and the set is
 *        filled again; the set grows at most to 2× its size + 64 flows, so no event costs a
 *        global recomputation.
 *      RS_FLOW_SIM_RATES_GLOBAL: every active flow at every event: exact max-min.
 *    All four keep every link within its capacity. Against GLOBAL on 10^4 random messages
 *    on 4,096 GPUs (bench-flow-sim --compare) LOCAL's message end times differ by 3e-5 on
 *    average, NEIGHBOURS' by 2e-2, and both totals agree; with tens of flows per link
 *    (10^5 messages at once) single message times move by a few percent between budgets
 *    while the total does not. Completion times live in an indexed binary heap, equal
 *    times taken in message order (since e6a008f; by flow slot before, an artefact of slot
 *    reuse). The modes with bounded propagation (LOCAL, NEIGHBOURS, and fluid relays,
 *    which run LOCAL's) depend on that order, and on their budget counting flows (route
 *    groups, below): the change moved single messages of random lists by up to 0.4% and
 *    the default scenario's nccl-broadcast 4.99062 -> 4.99046 s; EXACT and GLOBAL do not.
 *  - Route groups (every relay model but fluid): the messages flowing at once between one
 *    (src, dst) pair share one route, and max-min gives flows of the same route the same
 *    rate (the allocation is unique and symmetric in them), so they are one flow of weight
 *    k (the messages flowing) on each of its links, at the rate of each: weighted max-min
 *    (Bertsekas & Gallager §6.5.2) over groups gives every member its exact max-min rate.
 *    The members' chunks end in the order of their tags on the group's clock (the bytes
 *    each member has sent since the group formed; a chunk joining at clock v with b bytes
 *    ends at v + b), the virtual time of processor sharing (Parekh & Gallager, "A
 *    Generalized Processor Sharing Approach to Flow Control in Integrated Services Networks:
 *    The Single-Node Case", IEEE/ACM Trans. Networking 1(3), 1993): a
 *    member joining or leaving reweighs the group's links, and a recomputation costs the
 *    groups on a link, not its messages. On the default scenario's hierarchical plan with
 *    domain relays (`--layers 3-24`) a set holds 2.5 times fewer flows (191 -> 73 per
 *    event); under EXACT and GLOBAL the answers are those of one flow per message to
 *    rounding (1e-13 relative over ~5,000 random message lists, a reviewer's check;
 *    tests/test-flow-sim.c checks them against RsFlowSimOptions.flow_per_message).
 *    Fluid relays keep one flow per message: a follower's cap is its own.
 *  - Relays, posting whole phases (RS_FLOW_SIM_RELAYS_CHUNKED, the reference): a message
 *    with dependencies (rs_plan_get_message_deps(), or a trace's depends_on) and a
 *    message others depend on are cut into chunks of max(chunk_bytes, ceil(size /
 *    max_chunks_per_message)) bytes sent one after another; chunk k of a message may
 *    take bandwidth once every dependency has delivered the same fraction of its bytes as
 *    chunk k ends at (ceil(end_k × size_dep / size)), and its last chunk once every
 *    dependency has arrived whole. Only the first
 *    chunk pays the route latency, so a chain of h equal hops of c chunks of s bytes on
 *    links of capacity B takes overhead + h·latency + (h + c − 1)·s / B: the pipeline
 *    formula of store-and-forward packet switching, T = (S/s + h − 1)·s/B for S = c·s bytes
 *    over h hops (Kurose & Ross, "Computer Networking", ch. 1, packet switching). Every
 *    chunk that pauses or restarts is a rate recomputation.
 *  - Relays (RS_FLOW_SIM_RELAYS_FLUID): the same pipeline in the fluid limit, one
 *    flow per message. Let p_m be the fraction of its bytes message m delivered, phi_m its
 *    chunk over its bytes (1 when it is not chunked) and, for a dependency d of the same
 *    phase, delta = max(phi_m, phi_d) (m's first chunk needs that much of d). Then:
 *      fill: m takes bandwidth once p_d ≥ delta for every such d (and pays its route
 *        latency then), every other dependency having arrived;
 *      bound: p_m ≤ p_d − delta while d flows; m runs at its own max-min rate until it
 *        catches up (an event, computed in closed form from the two rates), then follows d:
 *        in the filling its rate is capped at rate_d × size_m / size_d (a hop that forwards
 *        a part of what it receives follows at that part of d's rate); a follower its own
 *        links hold below the cap falls behind and runs free (it never holds d back, as in
 *        the chunked model, where d never waits for m);
 *      drain: m sends its last chunk (size − (c − 1)·s) only once every dependency arrived
 *        whole, as in the chunked model: a hop that reaches it earlier holds (takes no
 *        bandwidth) until then, and its followers run free to their own last chunk;
 *        when d arrives whole, a follower has at least its last chunk left and runs free.
 *    For the lone chain above: hop k starts when hop k − 1 delivered one chunk, at
 *    overhead + Σ_{j≤k} latency_j + k·s/B, every hop runs at B, so the chain ends at
 *    overhead + h·latency + (h − 1)·s/B + c·s/B: exactly the chunked formula. A hop that
 *    joins late (its overhead, latency or another dependency holds it) starts behind the
 *    bound and runs free until it catches up. Recomputations happen per message start,
 *    catch-up, hold and end, not per chunk; the rates are max-min fair with the caps as
 *    extra one-flow constraints (progressive filling over links and caps, Bertsekas & Gallager
 *    §6.5.2). A follower whose links all have slack (loaded below capacity × (1 − 1e-6))
 *    bottlenecks nobody and is held by its cap alone: it stays out of the filling and takes
 *    its new cap after it, down its chain (without this, every recomputation filled whole
 *    rings of followers: nccl-broadcast's 255-hop rings on the default scenario did not
 *    finish in 6 minutes); one whose links would lose their slack is recomputed at once
 *    (forced into the next filling). Measured against the chunked model:
 *    tests/test-flow-sim.c (chains exact, random relay trees, /flow-sim/fluid/passive-chain)
 *    and scripts/fluid-vs-chunked.sh (the README's benchmark table). The caps are not
 *    bottleneck-checked by the exact rates' verification, so fluid relays run --rates
 *    local's propagation; a message list without a fluid edge (no message forwarding
 *    another's bytes in its phase) is the chunked model's, and runs as that, exact rates and
 *    route groups included: the same figures (/flow-sim/fluid/without-relays).
 *  - Relays a plan pipelines itself (rs_flow_sim_run() with plan_relays, the default): the
 *    peers whose relays are a library's collective state its step
 *    (rs_plan_get_relay_chunk_bytes(): NCCL's ring broadcast, 512 KiB, for nccl-broadcast
 *    and checkpoint-engine); their relays run at that chunk as fluid flows. At 4 MiB chunks,
 *    the chunked model's bursts misprice rings of hundreds of hops: a hop holding a chunk
 *    takes its max-min share in bursts where NCCL streams its steps, and on the default
 *    scenario's first three layers (--layers 0-2, eight 256-hop rings sharing every
 *    GPU's NVLink) the chunked ring took 26.8 ms against 23.5 ms fluid; at NCCL's 512 KiB
 *    the two agree (16.86 and 17.03 ms, +1.0%; layers 3-4 +0.58%, 58-60 −0.38%, 0-5
 *    −0.65%), while the chunked model needs 8 times the chunks (about 7 × 10^8 on the
 *    whole default scenario, which at 4 MiB did not finish in 28 minutes).
 *  - A local copy (src == dst) takes no time (without GPU-side costs: message_pre_s and
 *    message_post_s below); it completes once its dependencies arrived.
 * Same inputs give bit-identical results (all ties are broken by index).
 */
#pragma once

#include <glib.h>

#include "plan/plan.h"
#include "topologies/topology.h"
#include "base/trace.h"

G_BEGIN_DECLS

#define RS_FLOW_SIM_ERROR (rs_flow_sim_error_quark())
GQuark rs_flow_sim_error_quark(void);

typedef enum {
    RS_FLOW_SIM_ERROR_RANK,       /* a message's rank is not a GPU of the topology */
    RS_FLOW_SIM_ERROR_DEPENDENCY, /* a dependency out of range, on a later phase, or a cycle */
    RS_FLOW_SIM_ERROR_FAILED,     /* anything else */
} RsFlowSimError;

typedef enum {
    RS_FLOW_SIM_RATES_LOCAL,      /* the flows sharing a link with a changed flow, then the
                                   * flows those changes make wrong (bounded propagation) */
    RS_FLOW_SIM_RATES_GLOBAL,     /* every active flow: exact max-min, slowest */
    RS_FLOW_SIM_RATES_NEIGHBOURS, /* only the flows sharing a link with a changed flow:
                                   * fastest, least exact */
    RS_FLOW_SIM_RATES_EXACT,      /* the flows whose bottleneck a change can move, found by
                                   * verification: exact max-min, incremental (default) */
} RsFlowSimRates;

typedef enum {
    RS_FLOW_SIM_RELAYS_CHUNKED, /* every chunk of a relay is its own flow (default: the
                                 * reference) */
    RS_FLOW_SIM_RELAYS_FLUID,   /* one flow per message, following what it forwards */
} RsFlowSimRelays;

typedef enum {
    /* A whole phase at once, relays pipelined as `relays` says (the default): how
     * exec/executor.h runs a plan (chunk operations in key order within a window per rank,
     * a relay forwarded chunk by chunk as soon as its bytes arrived, never a wait for a
     * round), and how the peers run one call (a phase of their plans: m2n's ncclReshard,
     * an NCCL broadcast of one bucket) whose chains pipeline inside the call. A rank's
     * packs and per-round fixed costs then queue on its stream: for our plans chunk by
     * chunk (sim/gpu-cost.h rs_gpu_cost_queue_chunks(), the window's limit), for the
     * peers' calls each round's packs before it (rs_gpu_cost_queue_rounds()). */
    RS_FLOW_SIM_POST_PHASES,
    RS_FLOW_SIM_POST_ROUNDS, /* every rank posts the plan's rounds one after another, each
                              * once every message of its previous round arrived (after
                              * round_fixed_s): an executor that waits for each group */
    RS_FLOW_SIM_POST_WINDOW, /* the executor's schedule (exec/schedule.h): every network
                              * message cut into chunk operations of chunk_bytes, each rank
                              * posting them in key order, at most `window` in flight */
} RsFlowSimPosting;

/* Where a running simulation stands (RsFlowSimOptions.progress). */
typedef struct {
    guint n_messages;    /* including local copies */
    guint n_done;        /* messages arrived */
    guint64 bytes_total; /* bytes of the network messages */
    guint64 bytes_done;  /* bytes of the network messages delivered so far, whole or in part */
    guint64 n_events;    /* event batches handled so far */
    double sim_s;        /* simulated time reached, seconds */
    double wall_s;       /* wall time since the simulation started, seconds */
    gboolean finished;   /* the last call: every message arrived */
    const char *label;   /* (nullable) (transfer none) RsFlowSimOptions.progress_label */
} RsFlowSimProgress;

/* Called from inside rs_flow_sim_run_messages(); must not call back into the simulator. */
typedef void (*RsFlowSimProgressFunc)(const RsFlowSimProgress *progress, gpointer user_data);

typedef struct {
    guint64 chunk_bytes;          /* relay pipelining granularity, bytes; 0: a relay waits for
                                   * whole messages */
    guint max_chunks_per_message; /* caps the chunks of one message (0: no cap) */
    RsFlowSimRates rates;
    guint n_timeline_buckets; /* utilisation over time, buckets per link (0: none); even */
    RsFlowSimRelays relays;
    RsFlowSimProgressFunc progress; /* (nullable) called every progress_interval_s of wall
                                     * time and once when finished */
    gpointer progress_data;
    double progress_interval_s; /* 0: 0.25 s */
    const char *progress_label; /* (nullable) (transfer none) passed on in the progress, to
                                 * tell simulations run at once apart */
    RsFlowSimPosting posting; /* whole phases (default), rounds or the executor's window */
    guint window;             /* RS_FLOW_SIM_POST_WINDOW: chunk operations in flight per rank
                               * (0: RS_FLOW_SIM_DEFAULT_WINDOW) */
    /* GPU-side costs (sim/gpu-cost.h computes them from a plan and its topology): */
    const double *message_pre_s;  /* (nullable) [n_messages]: per message, seconds its sender
                                   * spends (packing) after its phase is posted, on top of the
                                   * software overhead, before its first byte may move; a
                                   * local copy (src == dst) takes pre + post seconds once its
                                   * dependencies arrived, and its dependents wait for that */
    const double *message_post_s; /* (nullable) [n_messages]: per message, seconds its
                                   * receiver spends (unpacking) after its last byte arrived;
                                   * its end time and its phase's end wait for it, its
                                   * dependents do not (a relay unpacks and forwards chunk by
                                   * chunk as the bytes come); in rounds, its ranks' next
                                   * round waits for it */
    double round_fixed_s;         /* per round and rank: launch + synchronisation before it
                                   * posts, seconds (rounds only; 0 by default) */
    guint64 max_events;           /* stop after this many event batches (0: run to the end);
                                   * the result then holds what happened so far (stopped) */
    gboolean plan_relays;         /* rs_flow_sim_run(), posting whole phases: a plan whose
                                   * relays pipeline in a library's step
                                   * (rs_plan_get_relay_chunk_bytes() > 0: NCCL's 512 KiB for
                                   * nccl-broadcast and checkpoint-engine) runs at that chunk
                                   * with fluid relays, whatever chunk_bytes and relays say
                                   * (default TRUE; see "Relays a plan pipelines itself"
                                   * above). FALSE: chunk_bytes and relays for every plan */
    gboolean flow_per_message;    /* TRUE: no route groups ("Route groups" above), a flow per
                                   * message: the reference the tests check them against
                                   * (default FALSE) */
} RsFlowSimOptions;

/* Defaults: chunk_bytes 4 MiB (NCCL's default NCCL_BUFFSIZE, the size one channel stages per
 * pipelined step group), max_chunks_per_message 1024, RS_FLOW_SIM_RATES_EXACT,
 * n_timeline_buckets 20, RS_FLOW_SIM_POST_ROUNDS with round_fixed_s 0 (with
 * RS_FLOW_SIM_POST_PHASES: RS_FLOW_SIM_RELAYS_CHUNKED), no progress function, no GPU-side
 * costs, no max_events. */
#define RS_FLOW_SIM_DEFAULT_CHUNK_BYTES (4u << 20)
#define RS_FLOW_SIM_DEFAULT_MAX_CHUNKS 1024u
#define RS_FLOW_SIM_DEFAULT_BUCKETS 20u
/* The executor's default window (exec/executor.h RS_EXEC_DEFAULT_WINDOW; sim/ does not
 * include exec/, tests/test-flow-sim.c checks the two agree). */
#define RS_FLOW_SIM_DEFAULT_WINDOW 8u

/** rs_flow_sim_options_init: fills @options with the defaults above. */
void rs_flow_sim_options_init(RsFlowSimOptions *options);

/* One message to simulate. Dependencies are indices into the same message array. */
typedef struct {
    guint32 src, dst; /* GPUs */
    guint32 phase;    /* phases run in increasing order; numbers may have gaps */
    guint64 size_bytes;
    guint first_dep; /* into the dependency array */
    guint n_deps;
    guint32 round; /* the plan's round (RsMessage.round; 0 for a trace's rows): the group of
                    * operations both its ranks post together; increasing with the phase */
} RsFlowMessage;

typedef struct {
    double total_s;           /* when the last message arrived, seconds */
    guint64 chunk_bytes;      /* the relay chunk it ran with (RsFlowSimOptions.chunk_bytes,
                               * or the plan's with plan_relays) */
    RsFlowSimRelays relays;   /* the relay model it ran with (likewise) */
    RsFlowSimPosting posting; /* the posting it ran with (likewise) */
    guint window;             /* RS_FLOW_SIM_POST_WINDOW: operations per rank in flight */
    guint n_messages;         /* including local copies */
    guint n_network_messages; /* src != dst */
    guint n_phases;           /* distinct phase numbers */
    guint n_rounds;           /* posting rounds: distinct (phase, round) pairs; 0 when posting
                               * whole phases */
    guint64 bytes_moved;      /* bytes of network messages */
    guint64 n_chunks;         /* chunks sent (one per unchunked network message); fluid: the
                               * chunks the chunked model sends */
    guint64 n_events;         /* event batches handled */
    guint64 n_rate_updates;   /* flow rates computed, summed over events (work measure; a
                               * route group's counts once) */
    gboolean stopped;         /* max_events ended it early: messages not arrived have start
                               * and end NAN, total_s is the time reached */

    RsFlowMessage *messages; /* [n_messages], copied from the input */
    guint32 *deps;           /* [n_deps] */
    guint n_deps;
    double *message_start_s; /* [n_messages]: its phase began and its first chunk's
                              * dependencies had arrived */
    double *message_end_s;   /* [n_messages]: its last byte arrived */
    guint32 *phase_ids;      /* [n_phases]: the phase numbers, increasing */
    double *phase_end_s;     /* [n_phases] */

    guint n_gpus;
    double *gpu_finish_s; /* [n_gpus]: last arrival it sent or received; −1 when idle */

    guint n_links;       /* as the topology */
    guint64 *link_bytes; /* [n_links]: bytes crossing each link */
    double *link_busy_s; /* [n_links]: time with at least one flow taking bandwidth */
    guint n_buckets;
    double bucket_s;             /* width of one timeline bucket, seconds */
    double *link_timeline_bytes; /* [n_links × n_buckets], row per link: bytes carried per
                                  * bucket; utilisation = bytes / (capacity × bucket_s) */
    guint32 bottleneck_link;     /* the non-dominated link with the most bytes / capacity,
                                  * G_MAXUINT32 when nothing crossed a link */
    double bottleneck_load_s;    /* its bytes / capacity, seconds */
} RsFlowSimResult;

void rs_flow_sim_result_free(RsFlowSimResult *result);

/**
 * rs_flow_sim_result_get_last_receiver:
 * @result: a finished simulation
 * @finish_s: (out): when its last byte arrived, seconds; -1 when no message arrived
 *
 * The GPU that received the message arriving last (a refit ends when its last receiver
 * holds its weights; its sender, which finishes at the same instant, is not named): the
 * destination of the message with the latest message_end_s, the lowest message index on a
 * tie. Messages that did not arrive (a stopped run) are skipped.
 *
 * Returns: that GPU; 0 when no message arrived.
 */
guint32 rs_flow_sim_result_get_last_receiver(const RsFlowSimResult *result, double *finish_s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsFlowSimResult, rs_flow_sim_result_free)

/**
 * rs_flow_sim_run_messages:
 * @messages: (array length=n_messages): the messages; indices are message ids
 * @deps: (array length=n_deps): dependency message indices, referenced by the messages
 * @topo: the topology the ranks are GPUs of
 * @options: (nullable): NULL for the defaults
 * @error: RS_FLOW_SIM_ERROR_RANK naming the message and rank; RS_FLOW_SIM_ERROR_DEPENDENCY
 *   for a dependency out of range, on itself, on a message of a later phase, or a cycle
 *
 * Simulates the messages as described above. Complexity: O(E·log A + Σ_events F·R) for E
 * events (about two per message plus, chunked, one per chunk; fluid, one per catch-up and
 * per start threshold), A active flows, F flows recomputed per
 * event and R links per route (≤ 8). Memory: O(n_messages + n_links × n_buckets + A).
 *
 * Returns: (transfer full): the result, or NULL on error.
 */
RsFlowSimResult *rs_flow_sim_run_messages(const RsFlowMessage *messages, guint n_messages,
                                          const guint32 *deps, guint n_deps, const RsTopology *topo,
                                          const RsFlowSimOptions *options, GError **error);

/**
 * rs_flow_sim_run:
 * @plan: a plan; its messages (local copies included) and their dependencies are simulated
 *
 * As rs_flow_sim_run_messages(); message i of the result is message i of @plan.
 * Returns: (transfer full): the result, or NULL on error.
 */
RsFlowSimResult *rs_flow_sim_run(const RsPlan *plan, const RsTopology *topo,
                                 const RsFlowSimOptions *options, GError **error);

/**
 * rs_flow_sim_get_plan_posting:
 * @plan: a plan
 * @options: (nullable): the options rs_flow_sim_run() would get (NULL: the defaults)
 *
 * The posting rs_flow_sim_run() runs @plan with: with plan_relays, a plan exec/ does not
 * run as its own (a baseline or a peer's algorithm, RsStrategyKind: their calls are the
 * phases of their plans, and a plan whose relays a library pipelines,
 * rs_plan_get_relay_chunk_bytes() > 0, is an NCCL collective) posts whole phases even when
 * @options say RS_FLOW_SIM_POST_WINDOW; otherwise @options->posting.
 */
RsFlowSimPosting rs_flow_sim_get_plan_posting(const RsPlan *plan, const RsFlowSimOptions *options);

/**
 * rs_flow_sim_run_trace:
 * @trace: explicit messages (src, dst, bytes, phase, depends_on by message id); measured or
 *   other tools' traffic
 *
 * As rs_flow_sim_run_messages(); message i of the result is row i of @trace. Times and
 * routes in @trace are ignored. Without @options->message_pre_s, on a topology with GPU
 * costs, a local copy row costs one contiguous copy (rs_gpu_cost_contiguous_local_copy_s());
 * network rows are read in place (no pack). @error: also RS_FLOW_SIM_ERROR_DEPENDENCY for a message id
 * given twice.
 * Returns: (transfer full): the result, or NULL on error.
 */
RsFlowSimResult *rs_flow_sim_run_trace(const RsTrace *trace, const RsTopology *topo,
                                       const RsFlowSimOptions *options, GError **error);

/**
 * rs_flow_sim_result_to_trace:
 * @message_ids: (nullable) (array length=n_messages): the id to write per message (a
 *   replayed trace's ids), NULL for the message index
 *
 * Returns: (transfer full): one row per message in the base/trace.h schema: src, dst, bytes,
 * phase, start_s, end_s, route (link names of @topo, ';'-separated) and depends_on; metadata
 * "source: simulated" and "model: flow".
 */
RsTrace *rs_flow_sim_result_to_trace(const RsFlowSimResult *result, const RsTopology *topo,
                                     const guint32 *message_ids);

/**
 * rs_flow_sim_get_link_utilisation:
 * Returns: mean utilisation of @link_id over [0, total_s]: bytes / (capacity × total_s),
 * in [0, 1]; 0 when total_s is 0.
 */
double rs_flow_sim_get_link_utilisation(const RsFlowSimResult *result, const RsTopology *topo,
                                        guint32 link_id);

G_END_DECLS

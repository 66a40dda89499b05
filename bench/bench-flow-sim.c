/* bench-flow-sim.c — how the flow-level simulator scales with the number of flows.
 *
 * Builds synthetic workloads of 10^4, 10^5 and 10^6 messages on a 4,096-GPU DGX H100
 * SuperPOD (topologies/dgx-h100.yaml with 512 nodes: 16 scalable units, PXN on) and
 * simulates each in a child process, printing simulated time, wall time, messages simulated
 * per second, events, and the child's peak resident memory (getrusage via wait4). Ratios
 * are against the smallest case of the same run, so they do not depend on the machine.
 *
 * Workloads (deterministic, seeded):
 *   rounds     every GPU sends 4 messages per phase (an executor's bounded rounds): 1 in 4
 *              to a GPU of its node (NVLink), the rest to a random GPU; sizes 1–16 MiB;
 *              one message in 16 is a relay forwarding the previous message of its phase
 *              (chunked, pipelined). Concurrency stays ~16k flows whatever the total.
 *   one-phase  the same messages all in one phase, as a direct plan posts them: concurrency
 *              grows with the total, so the cost per flow grows too.
 *
 * --compare N also simulates N messages of each workload with exact (incremental), local,
 * neighbours and global (exact max-min at every event) rate recomputation and prints how
 * far the first three are from global's times. --exact-vs-global 10000,100000,1000000
 * prints only the table of exact against global at those concurrent flow counts (one
 * phase, no relays), both over the same first event batches: events per second, rates
 * computed per event, the wall ratio and the largest per-message difference. --compare-relays N simulates N messages of each workload with fluid and
 * chunked relays and prints the fluid total and message end times against the chunked
 * ones and the wall-time ratio chunked / fluid (same run). --relays none drops the
 * dependencies (no relays: the "10^6 messages without relays" case), and the table then
 * ends with the wall time of the largest case over its 5 s target.
 *
 * Usage: bench-flow-sim [--flows 10000,100000,1000000] [--workload rounds|one-phase|all]
 *                       [--rates exact|local|neighbours|global]
 *                       [--relays fluid|chunked|none] [--compare N] [--compare-relays N]
 *                       [--exact-vs-global LIST [--exact-events K]]
 * Every case posts whole phases (RS_FLOW_SIM_POST_PHASES): the workloads carry no rounds.
 * Not a test: it measures, it does not assert.
 */
#include "base/data.h"
#include "sim/flow-sim.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_NODES 512
#define PER_GPU_PER_PHASE 4

typedef struct {
    guint64 n_flows;
    double sim_s;
    double wall_s;
    guint64 events;
    guint64 chunks;
    guint64 rate_updates;
    guint phases;
} Measure;

static char *opt_relays = "chunked";

static void
build_workload(guint n, guint n_gpus, guint gpus_per_node, gboolean one_phase,
               RsFlowMessage **msgs_out, guint32 **deps_out, guint *n_deps_out)
{
    gboolean relays = strcmp(opt_relays, "none") != 0;
    GRand *rand = g_rand_new_with_seed(4096);
    RsFlowMessage *msgs = g_new0(RsFlowMessage, n);
    guint32 *deps = g_new(guint32, n / 16 + 1);
    guint n_deps = 0;
    guint per_phase = n_gpus * PER_GPU_PER_PHASE;
    for (guint i = 0; i < n; i++) {
        guint32 phase = one_phase ? 0 : i / per_phase;
        guint32 src = i % n_gpus;
        guint32 dst;
        if (g_rand_int_range(rand, 0, 4) == 0)
            dst = (src / gpus_per_node) * gpus_per_node + g_rand_int_range(rand, 0, gpus_per_node);
        else
            dst = g_rand_int_range(rand, 0, n_gpus);
        if (dst == src)
            dst = (src + 1) % n_gpus;
        guint64 size = (guint64)g_rand_int_range(rand, 1, 17) << 20;
        msgs[i] = (RsFlowMessage){src, dst, phase, size, n_deps, 0, 0};
        /* A relay: forward the previous message of the phase from where it arrived. */
        if (relays && i % 16 == 15 && i > 0 && msgs[i - 1].phase == phase) {
            msgs[i].src = msgs[i - 1].dst;
            if (msgs[i].dst == msgs[i].src)
                msgs[i].dst = (msgs[i].src + 9) % n_gpus;
            msgs[i].size_bytes = msgs[i - 1].size_bytes;
            deps[n_deps++] = i - 1;
            msgs[i].n_deps = 1;
        }
    }
    g_rand_free(rand);
    *msgs_out = msgs;
    *deps_out = deps;
    *n_deps_out = n_deps;
}

/* Simulates the messages with @opt; @wall_s (out): its wall time, seconds. Returns: (transfer
 * full): the result (aborts on a simulation error: the workloads are valid). */
static RsFlowSimResult *
run_timed(const RsFlowMessage *msgs, guint n, const guint32 *deps, guint n_deps,
          const RsTopology *topo, const RsFlowSimOptions *opt, double *wall_s)
{
    gint64 t0 = g_get_monotonic_time();
    RsFlowSimResult *r = rs_flow_sim_run_messages(msgs, n, deps, n_deps, topo, opt, NULL);
    *wall_s = (g_get_monotonic_time() - t0) / 1e6;
    g_assert(r != NULL);
    return r;
}

/* Local and neighbours-only against exact max-min rates on the same messages. */
static void
compare_rates(const RsTopology *topo, guint n, gboolean one_phase)
{
    static const RsFlowSimRates modes[] = {RS_FLOW_SIM_RATES_GLOBAL, RS_FLOW_SIM_RATES_EXACT,
                                           RS_FLOW_SIM_RATES_LOCAL, RS_FLOW_SIM_RATES_NEIGHBOURS};
    static const char *const names[] = {"global", "exact", "local", "neighbours"};
    enum { N_MODES = G_N_ELEMENTS(modes) };
    RsFlowMessage *msgs;
    guint32 *deps;
    guint n_deps;
    build_workload(n, rs_topology_get_n_gpus(topo), rs_topology_get_gpus_per_node(topo), one_phase,
                   &msgs, &deps, &n_deps);
    RsFlowSimResult *r[N_MODES];
    double wall[N_MODES];
    for (guint k = 0; k < N_MODES; k++) {
        RsFlowSimOptions opt;
        rs_flow_sim_options_init(&opt);
        opt.posting = RS_FLOW_SIM_POST_PHASES;
        opt.rates = modes[k];
        r[k] = run_timed(msgs, n, deps, n_deps, topo, &opt, &wall[k]);
    }
    printf("%-9s %u messages, exact (global): total %.9g s, wall %.3f s\n",
           one_phase ? "one-phase" : "rounds", n, r[0]->total_s, wall[0]);
    for (guint k = 1; k < N_MODES; k++) {
        double max_rel = 0.0, sum_rel = 0.0;
        for (guint i = 0; i < n; i++) {
            double exact = r[0]->message_end_s[i];
            double rel = exact > 0 ? fabs(r[k]->message_end_s[i] - exact) / exact : 0.0;
            max_rel = MAX(max_rel, rel);
            sum_rel += rel;
        }
        printf("  %-10s total %+.2e relative; message end times: max %.2e, mean %.2e "
               "relative; wall %.3f s\n",
               names[k], (r[k]->total_s - r[0]->total_s) / r[0]->total_s, max_rel, sum_rel / n,
               wall[k]);
    }
    for (guint k = 0; k < N_MODES; k++)
        rs_flow_sim_result_free(r[k]);
    g_free(msgs);
    g_free(deps);
}

/* Exact incremental rates against global max-min at high concurrency: n messages of the
 * one-phase workload without relays are n concurrent flows at the start. Both modes run the
 * same first @events event batches (global cannot finish 10^6 concurrent flows: every
 * batch recomputes every flow); the messages that arrived in both are compared. */
static void
exact_vs_global(const RsTopology *topo, guint n, guint64 events)
{
    char *saved = opt_relays;
    opt_relays = "none";
    RsFlowMessage *msgs;
    guint32 *deps;
    guint n_deps;
    build_workload(n, rs_topology_get_n_gpus(topo), rs_topology_get_gpus_per_node(topo), TRUE,
                   &msgs, &deps, &n_deps);
    opt_relays = saved;
    RsFlowSimResult *r[2];
    double wall[2];
    for (guint k = 0; k < 2; k++) {
        RsFlowSimOptions opt;
        rs_flow_sim_options_init(&opt);
        opt.posting = RS_FLOW_SIM_POST_PHASES;
        opt.rates = k == 0 ? RS_FLOW_SIM_RATES_EXACT : RS_FLOW_SIM_RATES_GLOBAL;
        opt.max_events = events;
        opt.n_timeline_buckets = 0;
        r[k] = run_timed(msgs, n, deps, n_deps, topo, &opt, &wall[k]);
    }
    double max_rel = 0.0;
    guint compared = 0;
    for (guint i = 0; i < n; i++) {
        double a = r[0]->message_end_s[i], b = r[1]->message_end_s[i];
        if (isnan(a) || isnan(b))
            continue;
        compared++;
        if (b > 0)
            max_rel = MAX(max_rel, fabs(a - b) / b);
    }
    printf("%10u %8" G_GUINT64_FORMAT " %11.3f %11.0f %13.1f %11.3f %11.0f %13.1f %8.1f %9u %10.2e\n",
           n, r[0]->n_events, wall[0], r[0]->n_events / MAX(wall[0], 1e-9),
           (double)r[0]->n_rate_updates / MAX(r[0]->n_events, 1), wall[1],
           r[1]->n_events / MAX(wall[1], 1e-9),
           (double)r[1]->n_rate_updates / MAX(r[1]->n_events, 1), wall[1] / MAX(wall[0], 1e-9),
           compared, max_rel);
    fflush(stdout);
    for (guint k = 0; k < 2; k++)
        rs_flow_sim_result_free(r[k]);
    g_free(msgs);
    g_free(deps);
}

/* Fluid against chunked relays on the same messages. */
static void
compare_relays(const RsTopology *topo, guint n, gboolean one_phase)
{
    RsFlowMessage *msgs;
    guint32 *deps;
    guint n_deps;
    build_workload(n, rs_topology_get_n_gpus(topo), rs_topology_get_gpus_per_node(topo), one_phase,
                   &msgs, &deps, &n_deps);
    RsFlowSimResult *r[2];
    double wall[2];
    for (guint k = 0; k < 2; k++) {
        RsFlowSimOptions opt;
        rs_flow_sim_options_init(&opt);
        opt.posting = RS_FLOW_SIM_POST_PHASES;
        opt.relays = k == 0 ? RS_FLOW_SIM_RELAYS_CHUNKED : RS_FLOW_SIM_RELAYS_FLUID;
        r[k] = run_timed(msgs, n, deps, n_deps, topo, &opt, &wall[k]);
    }
    double max_rel = 0.0;
    for (guint i = 0; i < n; i++) {
        double ref = r[0]->message_end_s[i];
        if (ref > 0)
            max_rel = MAX(max_rel, fabs(r[1]->message_end_s[i] - ref) / ref);
    }
    printf("%-9s %u messages (%u relays): chunked total %.9g s (%" G_GUINT64_FORMAT
           " events, wall %.3f s); fluid total %+.2e relative (%" G_GUINT64_FORMAT
           " events, wall %.3f s); message end times max %.2e relative; wall ratio "
           "chunked/fluid %.1f\n",
           one_phase ? "one-phase" : "rounds", n, n_deps, r[0]->total_s, r[0]->n_events, wall[0],
           (r[1]->total_s - r[0]->total_s) / r[0]->total_s, r[1]->n_events, wall[1], max_rel,
           wall[0] / MAX(wall[1], 1e-9));
    for (guint k = 0; k < 2; k++)
        rs_flow_sim_result_free(r[k]);
    g_free(msgs);
    g_free(deps);
}

/* Runs one case in a child; returns its measure and peak resident memory (KiB). */
static gboolean
run_case(const RsTopology *topo, guint n, gboolean one_phase, RsFlowSimRates rates, Measure *m,
         long *peak_kib)
{
    int fds[2];
    if (pipe(fds) != 0)
        return FALSE;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return FALSE;
    if (pid == 0) {
        close(fds[0]);
        RsFlowMessage *msgs;
        guint32 *deps;
        guint n_deps;
        build_workload(n, rs_topology_get_n_gpus(topo), rs_topology_get_gpus_per_node(topo),
                       one_phase, &msgs, &deps, &n_deps);
        RsFlowSimOptions opt;
        rs_flow_sim_options_init(&opt);
        opt.posting = RS_FLOW_SIM_POST_PHASES;
        opt.rates = rates;
        opt.relays = strcmp(opt_relays, "fluid") == 0 ? RS_FLOW_SIM_RELAYS_FLUID
                                                      : RS_FLOW_SIM_RELAYS_CHUNKED;
        g_autoptr(GError) error = NULL;
        gint64 t0 = g_get_monotonic_time();
        RsFlowSimResult *r = rs_flow_sim_run_messages(msgs, n, deps, n_deps, topo, &opt, &error);
        gint64 t1 = g_get_monotonic_time();
        if (r == NULL) {
            fprintf(stderr, "bench-flow-sim: %s\n", error->message);
            _exit(1);
        }
        Measure out = {n,           r->total_s,        (t1 - t0) / 1e6, r->n_events,
                       r->n_chunks, r->n_rate_updates, r->n_phases};
        if (write(fds[1], &out, sizeof out) != (ssize_t)sizeof out)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    gboolean ok = read(fds[0], m, sizeof *m) == (ssize_t)sizeof *m;
    close(fds[0]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return FALSE;
    *peak_kib = ru.ru_maxrss;
    return ok;
}

static char *opt_flows = "10000,100000,1000000";
static char *opt_workload = "rounds";
static char *opt_rates = "exact";
static gint opt_compare = 0;
static gint opt_compare_relays = 0;
static char *opt_exact = NULL;
static gint opt_exact_events = 0;

static GOptionEntry entries[] = {
    {"flows", 0, 0, G_OPTION_ARG_STRING, &opt_flows, "Message counts, comma-separated", "LIST"},
    {"workload", 0, 0, G_OPTION_ARG_STRING, &opt_workload, "rounds, one-phase or all", "NAME"},
    {"rates", 0, 0, G_OPTION_ARG_STRING, &opt_rates,
     "Rate recomputation: exact (default), local, neighbours or global", "MODE"},
    {"compare", 0, 0, G_OPTION_ARG_INT, &opt_compare,
     "Compare local with exact (global) rates on N messages", "N"},
    {"relays", 0, 0, G_OPTION_ARG_STRING, &opt_relays,
     "Relays: chunked (default), fluid, or none (no dependencies)", "MODEL"},
    {"compare-relays", 0, 0, G_OPTION_ARG_INT, &opt_compare_relays,
     "Compare fluid with chunked relays on N messages", "N"},
    {"exact-vs-global", 0, 0, G_OPTION_ARG_STRING, &opt_exact,
     "Exact incremental against global rates at these concurrent flow counts (e.g. "
     "10000,100000,1000000), over the same first event batches; only this table", "LIST"},
    {"exact-events", 0, 0, G_OPTION_ARG_INT, &opt_exact_events,
     "Event batches per case of --exact-vs-global (default 3·10^7 / flows, 20 to 2000)", "K"},
    {NULL},
};

int
main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    g_autoptr(GError) error = NULL;
    g_autoptr(GOptionContext) context = g_option_context_new("- flow simulator scaling benchmark");
    g_option_context_add_main_entries(context, entries, NULL);
    if (!g_option_context_parse(context, &argc, &argv, &error)) {
        fprintf(stderr, "bench-flow-sim: %s\n", error->message);
        return 2;
    }
    if (argc > 1) {
        fprintf(stderr, "bench-flow-sim: unexpected argument \"%s\" (see --help)\n", argv[1]);
        return 2;
    }
    RsFlowSimRates rates = strcmp(opt_rates, "global") == 0       ? RS_FLOW_SIM_RATES_GLOBAL
                           : strcmp(opt_rates, "neighbours") == 0 ? RS_FLOW_SIM_RATES_NEIGHBOURS
                           : strcmp(opt_rates, "local") == 0      ? RS_FLOW_SIM_RATES_LOCAL
                                                                  : RS_FLOW_SIM_RATES_EXACT;
    g_autofree char *path = rs_data_find("topologies", "dgx-h100", &error);
    if (path == NULL) {
        fprintf(stderr, "bench-flow-sim: %s\n", error->message);
        return 2;
    }
    RsTopologyOverrides ov = {.n_nodes = N_NODES};
    g_autoptr(RsTopology) topo = rs_topology_load_file(path, &ov, &error);
    if (topo == NULL) {
        fprintf(stderr, "bench-flow-sim: %s\n", error->message);
        return 2;
    }
    if (opt_exact != NULL) {
        printf("exact incremental against global max-min rates, one phase of N messages (N "
               "concurrent flows), no relays, the same first event batches in both\n"
               "%10s %8s %11s %11s %13s %11s %11s %13s %8s %9s %10s\n",
               "flows", "events", "exact s", "exact ev/s", "exact rates/ev", "global s",
               "global ev/s", "global rates/ev", "g/e wall", "compared", "max rel");
        g_auto(GStrv) ns = g_strsplit(opt_exact, ",", -1);
        for (guint i = 0; ns[i] != NULL; i++) {
            guint n = (guint)g_ascii_strtoull(ns[i], NULL, 10);
            guint64 k = opt_exact_events > 0 ? (guint64)opt_exact_events
                                             : CLAMP((guint64)(3e7 / MAX(n, 1)), 20, 2000);
            exact_vs_global(topo, n, k);
        }
        return 0;
    }
    g_auto(GStrv) counts = g_strsplit(opt_flows, ",", -1);
    printf("topology %s: %u GPUs, %u links, %u scalable units, PXN %s; rates %s, relays %s\n",
           rs_topology_get_name(topo), rs_topology_get_n_gpus(topo), rs_topology_get_n_links(topo),
           rs_topology_get_n_scalable_units(topo), rs_topology_has_pxn(topo) ? "on" : "off",
           opt_rates, opt_relays);
    const char *const workloads[] = {"rounds", "one-phase"};
    for (guint w = 0; w < G_N_ELEMENTS(workloads); w++) {
        if (strcmp(opt_workload, "all") != 0 && strcmp(opt_workload, workloads[w]) != 0)
            continue;
        gboolean one_phase = w == 1;
        printf("\nworkload %s\n%10s %7s %9s %9s %10s %10s %10s %13s %9s %14s %11s\n", workloads[w],
               "messages", "phases", "chunks", "sim s", "wall s", "msgs/s", "events", "rates/event",
               "peak MiB", "wall/msg ratio", "B/message");
        double ref_per_flow = 0.0, last_wall = 0.0;
        guint last_n = 0;
        for (guint i = 0; counts[i] != NULL; i++) {
            guint n = (guint)g_ascii_strtoull(counts[i], NULL, 10);
            Measure m;
            long peak_kib;
            if (!run_case(topo, n, one_phase, rates, &m, &peak_kib)) {
                fprintf(stderr, "bench-flow-sim: the %u-message case failed\n", n);
                return 1;
            }
            double per_flow = m.wall_s / n;
            if (i == 0)
                ref_per_flow = per_flow;
            printf("%10u %7u %9" G_GUINT64_FORMAT " %9.4f %10.3f %10.0f %10" G_GUINT64_FORMAT
                   " %13.1f %9.1f %14.2f %11.0f\n",
                   n, m.phases, m.chunks, m.sim_s, m.wall_s, n / m.wall_s, m.events,
                   (double)m.rate_updates / MAX(m.events, 1), peak_kib / 1024.0,
                   per_flow / ref_per_flow, peak_kib * 1024.0 / n);
            fflush(stdout);
            last_wall = m.wall_s;
            last_n = n;
        }
        if (strcmp(opt_relays, "none") == 0 && last_n >= 1000000)
            printf("target: %u messages without relays in <= 5 s: wall %.3f s, ratio %.2f\n",
                   last_n, last_wall, last_wall / 5.0);
    }
    printf("\nwall/msg ratio: wall time per message relative to the first row (1.00 = linear "
           "growth)\n");
    if (opt_compare_relays > 0) {
        printf("\nfluid against chunked relays (the same messages)\n");
        compare_relays(topo, (guint)opt_compare_relays, FALSE);
        compare_relays(topo, (guint)opt_compare_relays, TRUE);
    }
    if (opt_compare > 0) {
        printf("\nlocal and neighbours-only against exact (global) max-min rates\n");
        compare_rates(topo, (guint)opt_compare, FALSE);
        compare_rates(topo, (guint)opt_compare, TRUE);
    }
    return 0;
}

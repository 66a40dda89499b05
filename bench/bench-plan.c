/* bench-plan.c — how fast and how lean planning is: the strategies `reshard simulate` plans
 * for a scenario (by default the default scenario, DeepSeek-V3 256 → 256 H100, and its five
 * candidates: nccl-broadcast, direct, node-aware, hierarchical with and without domain
 * relays), each built with rs_plan_build_full() as the command builds them (layout
 * resolution is done once, before, and timed apart).
 *
 * Per strategy it prints the transfers, messages and rounds of the plan, its planning time,
 * and that time as a ratio against a reference measured in the same run on the same machine:
 * qsort() (the C library's) of as many 16-byte records (a pseudo-random 64-bit key and an
 * index) as the plan has transfers, so that the ratio stays comparable across machines and
 * loads. The plan's own memory per transfer (its transfers, messages and dependencies
 * divided by its transfers) and the peak resident memory the planning added (getrusage's
 * ru_maxrss before and after the strategy; the largest plan sets it) follow, per transfer
 * of that plan. Planning speed is measured here, never asserted; a ratio of 1 means planning
 * costs one qsort of its transfers.
 *
 * Usage: bench-plan [--scenario NAME|FILE] [--all-strategies] [--repeat N]
 *   [--memory-limit BYTES]
 *   (default: deepseek-v3-h100, the five candidates of `reshard simulate`, 1 repetition:
 *   each time is the fastest of N; the planner's memory limit, RsPlanOptions
 *   .memory_limit_bytes, the machine's memory). As `reshard simulate --all-strategies`
 *   (plan/auto.c), a peer's strategy whose plan is too large for the limit
 *   (RS_PLAN_ERROR_TOO_LARGE) is left out with a warning naming it and why. Exit 0 when
 *   every other plan was built, 1 otherwise, 2 for bad arguments.
 */
#include "base/data.h"
#include "layout/scenario.h"
#include "plan/plan.h"
#include "plan/policy.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Peak resident memory of this process so far, bytes (ru_maxrss is in KiB on Linux). */
static guint64
peak_rss_bytes(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (guint64)u.ru_maxrss * 1024;
}

typedef struct {
    guint64 key;
    guint64 index;
} Record;

static int
record_compare(const void *pa, const void *pb)
{
    const Record *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Seconds qsort() takes for @n records of pseudo-random keys (a fixed seed). */
static double
reference_sort_s(guint n)
{
    Record *r = g_new(Record, MAX(n, 1));
    guint64 x = 0x9E3779B97F4A7C15u;
    for (guint i = 0; i < n; i++) {
        /* xorshift64 */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r[i] = (Record){x, i};
    }
    gint64 t0 = g_get_monotonic_time();
    qsort(r, n, sizeof(Record), record_compare);
    double s = (g_get_monotonic_time() - t0) / 1e6;
    g_free(r);
    return s;
}

/* The plan's own arrays, bytes: transfers and their boxes, messages and message
 * dependencies. */
static guint64
plan_bytes(const RsPlan *plan)
{
    guint64 deps = 0;
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++)
        deps += rs_plan_get_message(plan, m)->n_deps;
    return (guint64)rs_plan_get_n_transfers(plan) * sizeof(RsTransfer) +
           (guint64)rs_plan_get_n_boxes(plan) * sizeof(RsBox) +
           (guint64)rs_plan_get_n_messages(plan) * sizeof(RsMessage) + deps * sizeof(guint);
}

int
main(int argc, char **argv)
{
    setlocale(LC_ALL, "C");
    g_autofree gchar *opt_scenario = NULL;
    gboolean opt_all = FALSE;
    gint opt_repeat = 1;
    gint64 opt_memory_limit = 0;
    GOptionEntry entries[] = {
        {"scenario", 's', 0, G_OPTION_ARG_STRING, &opt_scenario,
         "Scenario name or file (default deepseek-v3-h100)", "NAME|FILE"},
        {"all-strategies", 0, 0, G_OPTION_ARG_NONE, &opt_all,
         "Every strategy of `reshard simulate --all-strategies`, the peers' too", NULL},
        {"repeat", 0, 0, G_OPTION_ARG_INT, &opt_repeat,
         "Build each plan N times and keep the fastest (default 1)", "N"},
        {"memory-limit", 0, 0, G_OPTION_ARG_INT64, &opt_memory_limit,
         "Memory a plan may take to build, bytes (default: the machine's)", "BYTES"},
        {NULL},
    };
    g_autoptr(GError) error = NULL;
    g_autoptr(GOptionContext) context =
        g_option_context_new("- planning time and memory per strategy against a qsort");
    g_option_context_add_main_entries(context, entries, NULL);
    if (!g_option_context_parse(context, &argc, &argv, &error) || argc > 1 || opt_repeat < 1 ||
        opt_memory_limit < 0) {
        fprintf(stderr, "bench-plan: %s\n",
                error ? error->message
                      : "expected --repeat N >= 1, --memory-limit BYTES >= 0 and no other "
                        "argument");
        return 2;
    }
    g_autofree char *path =
        rs_data_find("scenarios", opt_scenario ? opt_scenario : "deepseek-v3-h100", &error);
    g_autoptr(RsScenario) scenario = path ? rs_scenario_load_file(path, &error) : NULL;
    if (scenario == NULL) {
        fprintf(stderr, "bench-plan: %s\n", error->message);
        return 2;
    }
    gint64 t0 = g_get_monotonic_time();
    RsScenarioBuild build;
    if (!rs_scenario_build(scenario, &build, &error)) {
        fprintf(stderr, "bench-plan: %s: %s\n", path, error->message);
        return 1;
    }
    double layout_s = (g_get_monotonic_time() - t0) / 1e6;
    RsPolicyRequest request;
    rs_policy_request_init_all(&request);
    if (opt_all)
        rs_policy_request_init_every(&request);
    RsAutoCandidate tried[RS_AUTO_MAX_CANDIDATES];
    guint n_tried = rs_policy_get_candidates(&request, tried);
    RsPlanOptions options;
    rs_plan_options_init(&options, build.topology);
    options.memory_limit_bytes = (guint64)opt_memory_limit;
    gboolean any_in_auto = FALSE;
    for (guint c = 0; c < n_tried; c++)
        any_in_auto = any_in_auto || tried[c].in_auto;

    printf("planning %s (%u tensors; layouts and refit resolved in %.3f s)\n", scenario->name,
           rs_refit_get_n_tensors(build.refit), layout_s);
    printf("reference: qsort() of as many 16-byte records as the plan has transfers\n\n");
    printf("%-20s %10s %9s %7s %9s %9s %7s %9s %9s\n", "strategy", "transfers", "messages",
           "rounds", "plan s", "ref s", "ratio", "plan B/tr", "peak B/tr");
    gboolean ok = TRUE;
    double total_s = 0, total_ref_s = 0;
    guint64 total_transfers = 0;
    for (guint c = 0; c < n_tried; c++) {
        RsPlanOptions o = options;
        o.domain_relays = tried[c].domain_relays;
        double best_s = G_MAXDOUBLE;
        guint n_transfers = 0, n_messages = 0, n_rounds = 0;
        guint64 bytes = 0, peak_before = peak_rss_bytes();
        for (gint k = 0; k < opt_repeat; k++) {
            g_autoptr(GError) plan_error = NULL;
            gint64 p0 = g_get_monotonic_time();
            g_autoptr(RsPlan) plan =
                rs_plan_build_full(build.refit, tried[c].strategy, &o, &plan_error);
            double s = (g_get_monotonic_time() - p0) / 1e6;
            if (plan == NULL && any_in_auto && !tried[c].in_auto &&
                g_error_matches(plan_error, RS_PLAN_ERROR, RS_PLAN_ERROR_TOO_LARGE)) {
                /* A peer shown beside ours that this machine cannot build: the others go
                 * on, as in rs_auto_build_plan(). */
                fprintf(stderr, "bench-plan: warning: %s not planned, its row left out: %s\n",
                        tried[c].label, plan_error->message);
                break;
            }
            if (plan == NULL) {
                fprintf(stderr, "bench-plan: %s: %s\n", tried[c].label, plan_error->message);
                ok = FALSE;
                break;
            }
            best_s = MIN(best_s, s);
            n_transfers = rs_plan_get_n_transfers(plan);
            n_messages = rs_plan_get_n_messages(plan);
            n_rounds = rs_plan_get_n_rounds(plan);
            bytes = plan_bytes(plan);
        }
        if (best_s == G_MAXDOUBLE)
            continue;
        guint64 peak_growth = peak_rss_bytes() - peak_before;
        double ref_s = G_MAXDOUBLE;
        for (gint k = 0; k < opt_repeat; k++)
            ref_s = MIN(ref_s, reference_sort_s(n_transfers));
        printf("%-20s %10u %9u %7u %9.3f %9.3f %7.2f %9.1f %9.1f\n", tried[c].label, n_transfers,
               n_messages, n_rounds, best_s, ref_s, best_s / ref_s,
               (double)bytes / MAX(n_transfers, 1), (double)peak_growth / MAX(n_transfers, 1));
        total_s += best_s;
        total_ref_s += ref_s;
        total_transfers += n_transfers;
    }
    printf("%-20s %10" G_GUINT64_FORMAT " %9s %7s %9.3f %9.3f %7.2f\n", "all", total_transfers, "",
           "", total_s, total_ref_s, total_s / MAX(total_ref_s, 1e-9));
    printf("\npeak resident memory of the run: %.3f GB\n", peak_rss_bytes() / 1e9);
    rs_scenario_build_clear(&build);
    return ok ? 0 : 1;
}

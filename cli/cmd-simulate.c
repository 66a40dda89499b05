/* cmd-simulate.c — `reshard simulate`: plan a refit with each strategy and simulate it.
 *
 * Loads a scenario (the shipped default unless --scenario), applies the overriding flags,
 * resolves layouts, builds a plan per strategy, simulates each on the topology with the
 * flow-level model (or the first-order estimate), computes the lower bound, and prints the
 * comparison. Which candidates are planned and which the hierarchical and auto rows show
 * is the strategy policy's (plan/policy.h); the evaluation of each is sim/evaluate.h's.
 * This file parses the flags, writes each candidate's trace and prints. With --messages,
 * an explicit message list is simulated instead. */
#include "cli/cli.h"
#include "base/output.h"
#include "base/progress.h"
#include "cli/model-args.h"
#include "cli/outputs.h"

#include "analysis/plot.h"
#include "analysis/report.h"
#include "analysis/timeline.h"
#include "cli/scenario-args.h"
#include "cli/topology-args.h"
#include "base/data.h"
#include "base/units.h"
#include "layout/scenario.h"
#include "plan/plan.h"
#include "plan/policy.h"
#include "sim/evaluate.h"
#include "sim/flow-sim.h"
#include "sim/lower-bound.h"

#include "analysis/report-html.h"

#include <glib/gstdio.h>
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_SCENARIO "deepseek-v3-h100"

static RsScenarioArgs sargs;
static char *opt_dtype;
static char *opt_strategy;
static gboolean opt_all_strategies;
static char *opt_format;
static gboolean opt_check;
static char *opt_network;
static char *opt_trace;
static char *opt_messages;
static char *opt_link_stats;
static char *opt_chunk_size;
static char *opt_window; /* an integer, as text (rs_cli_parse_int) */
static char *opt_rates;
static char *opt_relays;
static char *opt_staging;
static char *opt_max_ops; /* an integer, as text (rs_cli_parse_int) */
static char *opt_stripe;
static char *opt_domain_relays;
static char *opt_timeline;
static char *opt_plot;
static char *opt_threads; /* an integer, as text (rs_cli_parse_int) */
/* `reshard report`: the document's path (NULL: reshard simulate prints its report). */
static const char *report_output;

#define FORMAT_HELP_SIMULATE "table, csv or json (default table)"

static GOptionEntry entries[] = {
    {"dtype", 0, 0, G_OPTION_ARG_STRING, &opt_dtype, "dtype of the weights moved (bf16, f32, ...)",
     "DTYPE"},
    {"strategy", 0, 0, G_OPTION_ARG_STRING, &opt_strategy,
     NULL /* rs_cli_strategy_help(), set by make_context() */, "NAME"},
    {"all-strategies", 0, 0, G_OPTION_ARG_NONE, &opt_all_strategies,
     "Every strategy side by side, the peers' too (m2n, m2n-direct, checkpoint-engine, "
     "rdma-p2p; same as --strategy all); without it, ours, nccl-broadcast and auto",
     NULL},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, FORMAT_HELP_SIMULATE, "FORMAT"},
    {"check", 0, 0, G_OPTION_ARG_NONE, &opt_check,
     "Verify every plan with the invariant checker and the fused buffers (exit 3 when wrong)",
     NULL},
    {"staging-bytes", 0, 0, G_OPTION_ARG_STRING, &opt_staging,
     "Bucket size and per-rank staging memory per round, with a unit (default 1/16 of GPU "
     "memory)",
     "SIZE"},
    {"max-ops-per-group", 0, 0, G_OPTION_ARG_STRING, &opt_max_ops,
     "Most sends and receives one rank posts per round (default 256)", "N"},
    {"stripe-bytes", 0, 0, G_OPTION_ARG_STRING, &opt_stripe,
     "node-aware, hierarchical: split pieces larger than this over replicas (default 64 MiB)",
     "SIZE"},
    {"domain-relays", 0, 0, G_OPTION_ARG_STRING, &opt_domain_relays,
     "hierarchical: on (NVLink domains forward to each other), off, or auto (simulate both, "
     "keep the faster; default)",
     "on|off|auto"},
    {"network", 0, 0, G_OPTION_ARG_STRING, &opt_network,
     "flow (flow-level simulation, default) or bottleneck (first-order estimate)", "MODEL"},
    {"trace", 0, 0, G_OPTION_ARG_FILENAME, &opt_trace,
     "Write the simulated per-message trace (CSV); with several strategies, "
     "FILE-STRATEGY.csv each",
     "FILE.csv"},
    {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &opt_timeline,
     "Write the simulated per-message trace as a Chrome trace event timeline (Perfetto, "
     "chrome://tracing): one track per GPU and per link class; with several strategies, "
     "FILE-STRATEGY.json each",
     "FILE.json"},
    {"plot", 0, 0, G_OPTION_ARG_FILENAME, &opt_plot,
     "Plot with gnuplot (PNG and SVG): PREFIX-strategies (time split per strategy, the "
     "bound as a line) and with the flow model, of the strategy shown last, PREFIX-timeline, "
     "PREFIX-links (utilisation heatmap) and PREFIX-traffic (source x destination)",
     "PREFIX"},
    {"messages", 0, 0, G_OPTION_ARG_FILENAME, &opt_messages,
     "Simulate this message list (CSV: src,dst,bytes[,phase][,depends_on]) on --topology "
     "(without it, the topology and node count of --scenario or of the default scenario) "
     "instead of planning a scenario",
     "FILE.csv"},
    {"link-stats", 0, 0, G_OPTION_ARG_FILENAME, &opt_link_stats,
     "Write per-link bytes, busy time and utilisation over time (CSV); with several "
     "strategies, FILE-STRATEGY.csv each",
     "FILE.csv"},
    {"chunk-size", 0, 0, G_OPTION_ARG_STRING, &opt_chunk_size,
     "Relay pipelining chunk, with its unit (default 4 MiB, and NCCL's 512 KiB step for "
     "nccl-broadcast and checkpoint-engine; 0 B: relays wait for whole messages); given, "
     "it applies to every strategy",
     "SIZE"},
    {"rates", 0, 0, G_OPTION_ARG_STRING, &opt_rates,
     "Rate recomputation: exact (incremental: the flows whose bottleneck a change moves; "
     "default), local (flows sharing a link with a change, then bounded propagation: "
     "inexact), neighbours (no propagation: least exact) or global (every flow at every "
     "event: exact, slowest)",
     "MODE"},
    {"threads", 'j', 0, G_OPTION_ARG_STRING, &opt_threads,
     "Candidates planned and simulated at once (default: every core, at most the "
     "candidates; each holds its own plan and simulation in memory)",
     "N"},
    {"window", 0, 0, G_OPTION_ARG_STRING, &opt_window,
     "With --relays window: chunk operations in flight per rank, as reshard run --window "
     "(default 8, the executor's)",
     "N"},
    {"relays", 0, 0, G_OPTION_ARG_STRING, &opt_relays,
     "Whole phases posted at once with relays pipelined: chunked (every chunk of a relay "
     "its own flow; the default) or fluid (one flow per message that follows what it "
     "forwards once caught up); or window (the schedule `reshard run` executes: every "
     "message cut into --chunk-size operations, each rank posting them in key order, at "
     "most --window (8) in flight, a send once what it forwards arrived); or rounds "
     "(every rank posts the plan's rounds one after another, a relay once what it forwards "
     "arrived: an "
     "executor that waits for each group; faster to simulate, an upper figure). Without it "
     "(and --chunk-size), nccl-broadcast and checkpoint-engine, whose rings NCCL pipelines "
     "in 512 KiB steps, run fluid at that step, the others chunked; given, it applies to "
     "every strategy (window: to ours and gather-broadcast, which reshard run executes; the "
     "baseline and the peers keep their own calls, whole phases, NCCL's rings fluid)",
     "MODEL"},
    {NULL},
};

/* The options of simulate (and report) under @parameter_string, the usage line's tail. */
static GOptionContext *
make_context_for(const char *parameter_string, const char *format_help)
{
    rs_cli_set_strategy_help(entries, TRUE,
                             "default: ours, nccl-broadcast and auto; list: what each is");
    /* report takes the same entries but writes html or md, and neither replays a message
     * list nor takes a --plot prefix (it makes its own plots): those two are hidden from its
     * help (and refused if given, parse_settings()). */
    gboolean report = strcmp(format_help, FORMAT_HELP_SIMULATE) != 0;
    for (GOptionEntry *e = entries; e->long_name != NULL; e++) {
        if (strcmp(e->long_name, "format") == 0)
            e->description = format_help;
        if (strcmp(e->long_name, "messages") == 0 || strcmp(e->long_name, "plot") == 0)
            e->flags =
                report ? (e->flags | G_OPTION_FLAG_HIDDEN) : (e->flags & ~G_OPTION_FLAG_HIDDEN);
    }
    GOptionContext *context = g_option_context_new(parameter_string);
    g_option_context_set_summary(
        context, "Plans the refit of a scenario (model, topology, training and inference\n"
                 "layouts) with each strategy, simulates it on the topology (flow-level:\n"
                 "max-min fair rates over every link, latency, pipelined relays) and prints\n"
                 "bytes moved, the busiest GPU and NIC, the predicted time, the lower bound\n"
                 "and the efficiency. `auto` keeps the fastest strategy and says why.\n"
                 "Flags override the scenario's parts. With --messages, simulates an explicit\n"
                 "message list on a topology instead. The flow model takes minutes on big\n"
                 "scenarios (the default: about 6 on 2 cores); --network bottleneck answers\n"
                 "in seconds.");
    g_option_context_set_description(
        context, "The scenario's parts (--scenario, --model, --topology, --train, --infer,\n"
                 "their GPUs, dtypes and layers) are under --help-scenario, the fabric's\n"
                 "overrides (--nodes, --nic-bw, ...) under --help-topology, -q and -v under\n"
                 "--help-common; --help-all (or reshard help simulate) shows every option.\n\n"
                 "Examples:\n"
                 "  reshard simulate\n"
                 "  reshard simulate --scenario deepseek-v3-gb200 --all-strategies\n"
                 "  reshard simulate --infer vllm:tp=16 --strategy auto --format json\n"
                 "  reshard simulate --model llama-3.1-8b --nodes 2 --train megatron:tp=2,pp=2 "
                 "--train-gpus 0-7 --infer vllm:tp=4 --infer-gpus 8-15\n"
                 "  reshard simulate --strategy hierarchical --domain-relays on --trace h.csv\n"
                 "  reshard simulate --network bottleneck\n"
                 "  reshard simulate --messages traffic.csv --topology dgx-h100 --nodes 4\n");
    g_option_context_add_main_entries(context, entries, NULL);
    g_option_context_add_group(context, rs_scenario_args_make_group(&sargs));
    g_option_context_add_group(context, rs_topology_args_group_new());
    rs_cli_add_common_options(context);
    return context;
}

static GOptionContext *
make_context(void)
{
    return make_context_for("- simulate a refit with each strategy", FORMAT_HELP_SIMULATE);
}

static gboolean
write_text(const char *path, const char *text, GError **error)
{
    /* rs_output_write_file: a temporary file renamed over the path, nothing half-written; a
     * device or FIFO (/dev/null) is written into, never replaced. */
    return rs_output_write_file(path, text, -1, error); /* (its message names the path) */
}

/* FILE.csv → FILE-LABEL.csv when several strategies write one file each. */
static char *
strategy_path(const char *path, const char *label, gboolean several)
{
    if (!several)
        return g_strdup(path);
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot == NULL || (slash != NULL && dot < slash))
        return g_strdup_printf("%s-%s", path, label);
    return g_strdup_printf("%.*s-%s%s", (int)(dot - path), path, label, dot);
}

/* Every file the command will write: per candidate its trace and the trace's .meta
 * sidecar, link stats and timeline (FILE-LABEL.EXT with several candidates), and the
 * plots' PREFIX-NAME.dat/.gp/.png/.svg (the strategies plot; with the flow model also the
 * timeline, links and traffic plots). Appended to @options and @paths (owned by @paths). */
static void
collect_outputs(const RsAutoCandidate *tried, guint n_tried, gboolean several,
                gboolean use_flow, GPtrArray *options, GPtrArray *paths)
{
    for (guint i = 0; i < n_tried; i++) {
        const char *label = tried != NULL ? tried[i].label : NULL;
        char *t = opt_trace ? (label ? strategy_path(opt_trace, label, several)
                                     : g_strdup(opt_trace))
                            : NULL;
        g_ptr_array_add(options, "--trace");
        g_ptr_array_add(paths, t);
        g_ptr_array_add(options, "--trace (its metadata sidecar)");
        g_ptr_array_add(paths, t ? rs_trace_get_meta_path(t) : NULL);
        g_ptr_array_add(options, "--link-stats");
        g_ptr_array_add(paths, opt_link_stats ? (label ? strategy_path(opt_link_stats, label,
                                                                       several)
                                                       : g_strdup(opt_link_stats))
                                              : NULL);
        g_ptr_array_add(options, "--timeline");
        g_ptr_array_add(paths, opt_timeline ? (label ? strategy_path(opt_timeline, label, several)
                                                     : g_strdup(opt_timeline))
                                            : NULL);
    }
    g_ptr_array_add(options, "--output");
    g_ptr_array_add(paths, report_output != NULL && strcmp(report_output, "-") != 0
                               ? g_strdup(report_output)
                               : NULL);
    if (opt_plot == NULL)
        return;
    static const char *const plots[] = {"strategies", "timeline", "links", "traffic"};
    for (guint p = 0; p < (use_flow ? G_N_ELEMENTS(plots) : 1u); p++)
        for (guint e = 0; e < RS_CLI_N_PLOT_FILES; e++) {
            g_ptr_array_add(options, "--plot");
            g_ptr_array_add(paths,
                            g_strconcat(opt_plot, "-", plots[p], rs_cli_plot_exts[e], NULL));
        }
}

/* No two outputs of the command may be one file, and none an input of the command
 * (checked before any work, so that nothing is overwritten). @tried NULL: the --messages
 * mode (one trace, link stats and timeline, no candidates). */
static gboolean
check_candidate_outputs(const RsAutoCandidate *tried, guint n_tried, gboolean several,
                        gboolean use_flow, GError **error)
{
    g_autoptr(GPtrArray) options = g_ptr_array_new();
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
    /* One row: the candidates take turns at the same paths, the best one's files kept. */
    collect_outputs(tried, tried != NULL && several ? n_tried : 1, several, use_flow, options,
                    paths);
    return rs_cli_check_output_set((const char *const *)options->pdata,
                                   (const char *const *)paths->pdata, paths->len, error);
}

static gboolean
write_outputs(const RsFlowSimResult *flow, const RsTopology *topo, const char *trace_path,
              const char *links_path, const char *timeline_path, const guint32 *ids,
              const char *scenario, const char *strategy, GError **error)
{
    if (trace_path != NULL || timeline_path != NULL) {
        if (trace_path != NULL && !rs_cli_begin_output("--trace", trace_path, error))
            return FALSE;
        if (timeline_path != NULL && !rs_cli_begin_output("--timeline", timeline_path, error))
            return FALSE;
        g_autoptr(RsTrace) trace = rs_flow_sim_result_to_trace(flow, topo, ids);
        if (scenario != NULL)
            rs_trace_set_meta(trace, "scenario", scenario);
        if (strategy != NULL)
            rs_trace_set_meta(trace, "strategy", strategy);
        if (trace_path != NULL) {
            g_autofree char *meta = rs_trace_get_meta_path(trace_path);
            if (!rs_cli_begin_output("--trace", meta, error) ||
                !rs_trace_write_file(trace, trace_path, error))
                return FALSE;
        }
        if (timeline_path != NULL && !rs_timeline_write_file(trace, timeline_path, error))
            return FALSE;
    }
    if (links_path != NULL) {
        g_autoptr(GString) csv = g_string_new(NULL);
        rs_report_link_stats(flow, topo, csv);
        if (!rs_cli_begin_output("--link-stats", links_path, error))
            return FALSE;
        if (!write_text(links_path, csv->str, error))
            return FALSE;
    }
    return TRUE;
}

/* The running simulations' progress on stderr. On a terminal, one line redrawn: per
 * simulation, the bytes its network messages delivered and the wall time left at their
 * recent rate (base/progress.h); with one running, its bar, events and rates too.
 * Elsewhere (a log, a pipe) a line per running simulation every PROGRESS_LOG_INTERVAL_S
 * of wall time. Candidates simulated at once (--threads) call this from their threads:
 * progress_lock serialises it with the lines on_candidate prints, which first clear the
 * bar's line. */
static GMutex progress_lock;

#define MAX_RUNNING 16

static struct {
    const char *label; /* NULL: a free slot */
    RsFlowSimProgress p;
    RsProgressHistory history; /* of its fraction done, for the time left */
    double logged_s;           /* wall time of its last log line */
} running[MAX_RUNNING];
static gboolean progress_drawn; /* the bar's line is on the terminal */
static gboolean progress_tty;   /* stderr is a terminal: the bar; else log lines */

/* Seconds of wall time between two progress lines when stderr is not a terminal. */
#define PROGRESS_LOG_INTERVAL_S 30.0
/* Seconds between two progress reports of a simulation in a log: the history the time
 * left is measured on (the terminal's bar is redrawn every 0.25 s, the simulator's
 * default). */
#define PROGRESS_SAMPLE_INTERVAL_S 1.0

/* Clears the bar's line (progress_lock held). */
static void
clear_progress_line(void)
{
    if (progress_drawn)
        g_printerr("\r\033[K");
    progress_drawn = FALSE;
}

static double
progress_fraction(const RsFlowSimProgress *p)
{
    return p->bytes_total > 0 ? (double)p->bytes_done / (double)p->bytes_total
                              : (double)p->n_done / MAX(p->n_messages, 1);
}

/* Below this fraction of its bytes a simulation states no time left: its first events
 * (every message's start, each pack on its rank's stream) move few bytes and cost the most;
 * the default's hierarchical plan with domain relays had 0.1% of its bytes after 60 s of
 * its 544, and the estimate read 49,652 s. */
#define PROGRESS_MIN_FRACTION 0.05

/* ", about N s left", ", too early for an estimate", ", no estimate: ...", or "" once
 * done, for running slot @i (progress_lock held).
 * Returns: (transfer full). */
static char *
time_left(guint i)
{
    if (running[i].p.finished)
        return g_strdup("");
    double window_s = 0.0;
    double left_s = rs_progress_seconds_left(&running[i].history, PROGRESS_MIN_FRACTION, &window_s);
    if (left_s == -1.0)
        return g_strdup(", too early for an estimate");
    if (left_s < 0)
        return g_strdup_printf(", no estimate: no bytes delivered in the last %.0f s", window_s);
    return g_strdup_printf(", about %.0f s left", left_s);
}

static void
print_flow_progress(const RsFlowSimProgress *p, gpointer user_data)
{
    const char *label = p->label != NULL ? p->label : "";
    g_mutex_lock(&progress_lock);
    guint slot = MAX_RUNNING, n_running = 0;
    for (guint i = 0; i < MAX_RUNNING; i++)
        if (running[i].label != NULL && strcmp(running[i].label, label) == 0)
            slot = i;
    for (guint i = 0; slot == MAX_RUNNING && i < MAX_RUNNING; i++)
        if (running[i].label == NULL) {
            slot = i;
            rs_progress_history_init(&running[i].history);
            running[i].logged_s = 0.0;
        }
    if (slot == MAX_RUNNING) {
        g_mutex_unlock(&progress_lock); /* more at once than the table holds: not shown */
        return;
    }
    running[slot].label = p->finished ? NULL : label;
    running[slot].p = *p;
    rs_progress_history_add(&running[slot].history, p->wall_s, progress_fraction(p));
    for (guint i = 0; i < MAX_RUNNING; i++)
        n_running += running[i].label != NULL;
    if (!progress_tty) {
        /* A log: a whole line per interval (its row follows when it ends). */
        if (!p->finished && p->wall_s - running[slot].logged_s >= PROGRESS_LOG_INTERVAL_S) {
            running[slot].logged_s = p->wall_s;
            g_autofree char *left = time_left(slot);
            g_printerr("  %s: %.0f%% of %.1f GB, %" G_GUINT64_FORMAT " events, simulated "
                       "%.4f s, wall %.1f s%s\n",
                       label, 100 * progress_fraction(p), p->bytes_total / 1e9, p->n_events,
                       p->sim_s, p->wall_s, left);
        }
        g_mutex_unlock(&progress_lock);
        return;
    }
    clear_progress_line();
    if (n_running == 1 || (n_running == 0 && p->finished)) {
        guint shown = slot;
        for (guint i = 0; n_running == 1 && i < MAX_RUNNING; i++)
            if (running[i].label != NULL)
                shown = i;
        const RsFlowSimProgress *q = &running[shown].p;
        double frac = progress_fraction(q);
        char bar[25];
        guint filled = (guint)(frac * (sizeof bar - 1));
        for (guint i = 0; i < sizeof bar - 1; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[sizeof bar - 1] = '\0';
        g_autofree char *left = time_left(shown);
        g_printerr("\r  %s%s[%s] %3.0f%% of %.1f GB, %" G_GUINT64_FORMAT " events (%.0f/s), "
                   "simulated %.4f s, wall %.1f s%s",
                   q->label != NULL ? q->label : "", q->label != NULL ? " " : "", bar,
                   100 * frac, q->bytes_total / 1e9, q->n_events,
                   q->wall_s > 0 ? q->n_events / q->wall_s : 0.0, q->sim_s, q->wall_s, left);
        progress_drawn = TRUE;
        if (q->finished) {
            g_printerr("\n");
            progress_drawn = FALSE;
        }
    } else if (n_running > 1) {
        g_autoptr(GString) line = g_string_new("\r ");
        for (guint i = 0; i < MAX_RUNNING; i++) {
            if (running[i].label == NULL)
                continue;
            const RsFlowSimProgress *q = &running[i].p;
            g_string_append_printf(line, " %s %.0f%%", running[i].label,
                                   100 * progress_fraction(q));
            double left_s =
                rs_progress_seconds_left(&running[i].history, PROGRESS_MIN_FRACTION, NULL);
            if (left_s >= 0)
                g_string_append_printf(line, " (%.0f s left)", left_s);
            g_string_append_c(line, ';');
        }
        g_string_truncate(line, line->len - 1);
        g_printerr("%s", line->str);
        progress_drawn = TRUE;
    }
    g_mutex_unlock(&progress_lock);
}

static gboolean
parse_flow_options(RsFlowSimOptions *opt, gboolean *use_flow, GError **error)
{
    rs_flow_sim_options_init(opt);
    progress_tty = isatty(STDERR_FILENO);
    if (!rs_cli_quiet) {
        opt->progress = print_flow_progress;
        opt->progress_interval_s = progress_tty ? 0.0 : PROGRESS_SAMPLE_INTERVAL_S;
    }
    *use_flow = TRUE;
    if (opt_network != NULL) {
        if (strcmp(opt_network, "bottleneck") == 0) {
            *use_flow = FALSE;
        } else if (strcmp(opt_network, "flow") != 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--network: unknown model \"%s\" (known: flow, bottleneck)", opt_network);
            return FALSE;
        }
    }
    /* The flow model's options do nothing under the first-order one: refused, as --trace
     * is (they were ignored, the output byte for byte the same). */
    const char *flow_only = opt_rates        ? "--rates"
                            : opt_relays     ? "--relays"
                            : opt_window     ? "--window"
                            : opt_chunk_size ? "--chunk-size"
                                             : NULL;
    if (!*use_flow && flow_only != NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s applies to the flow model, not --network bottleneck", flow_only);
        return FALSE;
    }
    if (opt_rates != NULL) {
        if (strcmp(opt_rates, "global") == 0) {
            opt->rates = RS_FLOW_SIM_RATES_GLOBAL;
        } else if (strcmp(opt_rates, "neighbours") == 0) {
            opt->rates = RS_FLOW_SIM_RATES_NEIGHBOURS;
        } else if (strcmp(opt_rates, "local") == 0) {
            opt->rates = RS_FLOW_SIM_RATES_LOCAL;
        } else if (strcmp(opt_rates, "exact") != 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--rates: unknown mode \"%s\" (known: exact, local, neighbours, global)",
                        opt_rates);
            return FALSE;
        }
    }
    const char *relays = opt_relays != NULL ? opt_relays : "chunked";
    if (strcmp(relays, "rounds") == 0) {
        opt->posting = RS_FLOW_SIM_POST_ROUNDS;
    } else if (strcmp(relays, "chunked") == 0) {
        opt->posting = RS_FLOW_SIM_POST_PHASES;
        opt->relays = RS_FLOW_SIM_RELAYS_CHUNKED;
    } else if (strcmp(relays, "fluid") == 0) {
        opt->posting = RS_FLOW_SIM_POST_PHASES;
        opt->relays = RS_FLOW_SIM_RELAYS_FLUID;
    } else if (strcmp(relays, "window") == 0) {
        opt->posting = RS_FLOW_SIM_POST_WINDOW;
    } else {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--relays: unknown model \"%s\" (known: chunked, fluid, rounds, window)",
                    relays);
        return FALSE;
    }
    if (opt_window != NULL) {
        gint64 window = 0;
        if (!rs_cli_parse_int("--window", opt_window, 1, G_MAXINT32, &window, error))
            return FALSE;
        if (opt->posting != RS_FLOW_SIM_POST_WINDOW) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--window applies to the executor's schedule: give --relays window");
            return FALSE;
        }
        opt->window = (guint)window;
    }
    if (opt_chunk_size != NULL) {
        guint64 bytes;
        g_autoptr(GError) local = NULL;
        if (strcmp(opt_chunk_size, "0") == 0) {
            bytes = 0;
        } else if (!rs_units_parse_size(opt_chunk_size, &bytes, &local)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--chunk-size: %s",
                        local->message);
            return FALSE;
        }
        opt->chunk_bytes = bytes;
    }
    /* Asked for a relay model or chunk: every strategy runs it, the peers' rings too. */
    opt->plan_relays = (opt_relays == NULL && opt_chunk_size == NULL) ||
                       opt->posting == RS_FLOW_SIM_POST_WINDOW;
    if (!*use_flow && (opt_trace != NULL || opt_link_stats != NULL || opt_timeline != NULL)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--trace, --link-stats and --timeline need the flow model, not --network "
                    "bottleneck");
        return FALSE;
    }
    return TRUE;
}

/* --messages replaces the model, the layouts and the planner: their flags would be
 * silently ignored, so they are refused (--scenario stays: it supplies the topology). */
static gboolean
check_messages_flags(gboolean use_flow, GError **error)
{
    if (!use_flow) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--messages: only the flow model simulates a message list");
        return FALSE;
    }
    const struct {
        const char *flag;
        gboolean given;
    } unused[] = {
        {"--model", sargs.model != NULL},
        {"--mtp", sargs.mtp},
        {"--stored", sargs.stored},
        {"--dtype", opt_dtype != NULL},
        {"--infer-dtype", sargs.infer_dtype != NULL},
        {"--train", sargs.train != NULL},
        {"--train-gpus", sargs.train_gpus != NULL},
        {"--infer", sargs.infer != NULL},
        {"--infer-gpus", sargs.infer_gpus != NULL},
        {"--scale", sargs.scale != NULL},
        {"--layers", sargs.layers != NULL},
        {"--strategy", opt_strategy != NULL},
        {"--all-strategies", opt_all_strategies},
        {"--check", opt_check},
        {"--staging-bytes", opt_staging != NULL},
        {"--max-ops-per-group", opt_max_ops != NULL},
        {"--stripe-bytes", opt_stripe != NULL},
        {"--domain-relays", opt_domain_relays != NULL},
        {"--plot", opt_plot != NULL},
    };
    for (guint i = 0; i < G_N_ELEMENTS(unused); i++) {
        if (unused[i].given) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s does not apply with --messages (the message list replaces the "
                        "model, the layouts and the plan)",
                        unused[i].flag);
            return FALSE;
        }
    }
    /* Both given, the scenario would be read for nothing. */
    if (sargs.scenario != NULL && sargs.topology != NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--scenario does not apply with --messages when --topology is given (a "
                    "scenario only supplies the topology of a message list)");
        return FALSE;
    }
    return TRUE;
}

/* The topology of a message list: --topology, else the scenario's (with its node
 * count). */
static RsTopology *
load_messages_topology(GError **error)
{
    g_autoptr(RsScenario) scenario = NULL;
    if (sargs.topology == NULL) {
        g_autofree char *spath =
            rs_data_find("scenarios", sargs.scenario ? sargs.scenario : DEFAULT_SCENARIO, error);
        if (spath == NULL || (scenario = rs_scenario_load_file(spath, error)) == NULL)
            return NULL;
        rs_cli_note_input(spath);
    }
    RsTopologyOverrides ov;
    if (!rs_topology_args_get(&ov, error))
        return NULL;
    if (ov.n_nodes == 0 && scenario != NULL)
        ov.n_nodes = scenario->n_nodes;
    g_autofree char *tpath =
        rs_data_find("topologies", sargs.topology ? sargs.topology : scenario->topology, error);
    if (tpath == NULL)
        return NULL;
    rs_cli_note_input(tpath);
    RsTopology *topo = rs_topology_load_file(tpath, &ov, error);
    rs_cli_print_topology_warnings(topo);
    return topo;
}

/* The message list of --messages, at least one row. */
static RsTrace *
read_messages(GError **error)
{
    g_autoptr(RsTrace) trace = rs_trace_read_file(opt_messages, error);
    if (trace == NULL) {
        /* A file that cannot be read names the option (GLib's message names only the file);
         * the parser's errors already start with FILE:LINE. */
        if (g_error_matches(*error, RS_TRACE_ERROR, RS_TRACE_ERROR_IO))
            g_prefix_error(error, "--messages: ");
        return NULL;
    }
    if (rs_trace_get_n_rows(trace) == 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: no messages",
                    opt_messages);
        return NULL;
    }
    return g_steal_pointer(&trace);
}

static int
run_messages(const char *cmd, const RsFlowSimOptions *fopt, gboolean use_flow, RsFormat format)
{
    g_autoptr(GError) error = NULL;
    if (!check_messages_flags(use_flow, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsTopology) topo = load_messages_topology(&error);
    if (topo == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsTrace) trace = read_messages(&error);
    rs_cli_note_input(opt_messages);
    if (trace == NULL || !check_candidate_outputs(NULL, 1, FALSE, use_flow, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    rs_cli_progress("simulating %u message%s of %s on %s%s%s%s ...", rs_trace_get_n_rows(trace),
                    rs_trace_get_n_rows(trace) == 1 ? "" : "s", opt_messages,
                    rs_topology_get_name(topo), sargs.topology ? "" : " (the topology of scenario ",
                    sargs.topology ? "" : sargs.scenario ? sargs.scenario : DEFAULT_SCENARIO,
                    sargs.topology ? "" : "; --topology to choose)");
    g_autoptr(RsFlowSimResult) flow = rs_flow_sim_run_trace(trace, topo, fopt, &error);
    if (flow == NULL) {
        /* Row errors already start with "FILE:LINE: message ID". */
        if (!g_str_has_prefix(error->message, opt_messages))
            g_prefix_error(&error, "%s: ", opt_messages);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    g_autofree guint32 *ids = g_new(guint32, MAX(flow->n_messages, 1));
    for (guint i = 0; i < flow->n_messages; i++)
        ids[i] = rs_trace_get_row(trace, i)->message;
    if (!write_outputs(flow, topo, opt_trace, opt_link_stats, opt_timeline, ids, NULL, NULL,
                       &error)) {
        rs_cli_remove_created_outputs();
        return rs_cli_fail(cmd, error,
                           error->domain == G_OPTION_ERROR ? RS_EXIT_USAGE : RS_EXIT_RUNTIME);
    }
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_replay(opt_messages, topo, flow, format, out);
    fputs(out->str, stdout);
    return RS_EXIT_OK;
}

/* --strategy X (list included) with --all-strategies: one of them would be ignored, so
 * the pair is a usage error (G_OPTION_ERROR_BAD_VALUE) naming both. */
static gboolean
check_strategy_pair(GError **error)
{
    if (opt_all_strategies && opt_strategy != NULL && strcmp(opt_strategy, "all") != 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--strategy %s and --all-strategies: give one (--all-strategies is "
                    "--strategy all)",
                    opt_strategy);
        return FALSE;
    }
    return TRUE;
}

/* Which rows to print (the relay modes come with the planner options). */
static gboolean
parse_requested(RsPolicyRequest *req, GError **error)
{
    rs_policy_request_init_all(req);
    if (!check_strategy_pair(error))
        return FALSE;
    if (opt_all_strategies || (opt_strategy != NULL && strcmp(opt_strategy, "all") == 0)) {
        rs_policy_request_init_every(req);
        return TRUE;
    }
    if (opt_strategy == NULL)
        return TRUE;
    memset(req->row, 0, sizeof req->row);
    if (strcmp(opt_strategy, "auto") == 0)
        return TRUE;
    req->auto_row = FALSE;
    RsStrategy s;
    if (!rs_strategy_parse(opt_strategy, &s, NULL)) {
        g_autofree char *names = rs_cli_strategy_names(TRUE, ", ");
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--strategy: unknown strategy \"%s\" (known: %s)", opt_strategy, names);
        return FALSE;
    }
    req->row[s] = TRUE;
    return TRUE;
}

static gboolean
parse_size_flag(const char *flag, const char *text, guint64 min, guint64 *out, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (!rs_units_parse_size(text, out, &local)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: %s", flag,
                    local->message);
        return FALSE;
    }
    if (*out < min) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s: %s is below the smallest allowed, %" G_GUINT64_FORMAT " B%s", flag,
                    text, min, min == (1 << 20) ? " (1 MiB)" : "");
        return FALSE;
    }
    return TRUE;
}

/* Planner options from the flags, and the hierarchical row's relay modes. */
static gboolean
parse_plan_options(RsPlanOptions *o, const RsTopology *topo, RsPolicyRelays *relays,
                   GError **error)
{
    rs_plan_options_init(o, topo);
    /* Below 1 MiB the buckets get so many that a plan of real weights would not fit. */
    if (opt_staging != NULL && !parse_size_flag("--staging-bytes", opt_staging, 1 << 20,
                                                &o->staging_bytes, error))
        return FALSE;
    if (opt_max_ops != NULL) {
        gint64 max_ops = 0;
        if (!rs_cli_parse_int("--max-ops-per-group", opt_max_ops, 1, G_MAXINT32, &max_ops, error))
            return FALSE;
        o->max_ops_per_group = (guint)max_ops;
    }
    if (opt_stripe != NULL &&
        !parse_size_flag("--stripe-bytes", opt_stripe, 1, &o->stripe_bytes, error))
        return FALSE;
    *relays = RS_POLICY_RELAYS_AUTO;
    if (opt_domain_relays != NULL) {
        if (strcmp(opt_domain_relays, "on") == 0) {
            *relays = RS_POLICY_RELAYS_ON;
        } else if (strcmp(opt_domain_relays, "off") == 0) {
            *relays = RS_POLICY_RELAYS_OFF;
        } else if (strcmp(opt_domain_relays, "auto") != 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--domain-relays: \"%s\": expected on, off or auto", opt_domain_relays);
            return FALSE;
        }
    }
    return TRUE;
}

/* The command's side of each candidate's evaluation: progress on stderr, and with the
 * flow model its trace and link statistics (FILE-LABEL.csv when there are several). */
typedef struct {
    const RsTopology *topology;
    const char *scenario_name;
    gboolean several; /* several rows: FILE-LABEL per candidate */
    /* One row of several candidates (auto, or hierarchical in both relay modes): FILE is
     * the row's candidate, the fastest (ties: the first, as the policy picks), so each
     * candidate faster than every earlier one overwrites it. */
    gboolean have_best;
    double best_s;
    guint best_index; /* with candidates at once, a later one may be done first */
    gint64 start_us;  /* when the first candidate began */
} CandidateOutputs;

/* rs_cli_progress() on a line of its own, below the progress bar of the simulations
 * still running (redrawn at their next report). */
static void G_GNUC_PRINTF(1, 2)
progress_line(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *text = g_strdup_vprintf(format, args);
    va_end(args);
    g_mutex_lock(&progress_lock);
    clear_progress_line();
    rs_cli_progress("%s", text);
    g_mutex_unlock(&progress_lock);
}

static gboolean
on_candidate(RsEvaluateStage stage, const RsPlan *plan, const RsEvaluation *e,
             gpointer user_data, GError **error)
{
    CandidateOutputs *o = user_data;
    const char *label = e->candidate.label;
    switch (stage) {
    case RS_EVALUATE_STAGE_CHECKED:
        progress_line("check passed for %s: %u transfers; every destination element received "
                      "once, from a holder or an earlier relay",
                      label, rs_plan_get_n_transfers(plan));
        return TRUE;
    case RS_EVALUATE_STAGE_SIMULATING:
        /* The tables count network messages; local copies are simulated too. */
        if (e->n_messages == e->n_network_messages)
            progress_line("simulating %s: %u network messages ...", label, e->n_network_messages);
        else
            progress_line("simulating %s: %u network messages (%u with local copies) ...", label,
                          e->n_network_messages, e->n_messages);
        return TRUE;
    case RS_EVALUATE_STAGE_DONE:
        break;
    }
    /* Its row's time as soon as it is known (the table comes when every candidate is). */
    gint64 now_us = g_get_monotonic_time();
    progress_line("%s: %.4g s (%s), evaluated in %.1f s of wall time (%.1f s after the start)",
                  label, e->predicted_s, e->flow != NULL ? "flow model" : "first-order",
                  e->wall_s, (now_us - o->start_us) / 1e6);
    if (e->flow == NULL)
        return TRUE;
    if (!o->several) {
        /* Faster than every one so far, or as fast and earlier (the policy's tie rule). */
        if (o->have_best && !(e->predicted_s < o->best_s ||
                              (e->predicted_s == o->best_s && e->index < o->best_index)))
            return TRUE;
        o->have_best = TRUE;
        o->best_s = e->predicted_s;
        o->best_index = e->index;
    }
    g_autofree char *trace_path =
        opt_trace ? strategy_path(opt_trace, label, o->several) : NULL;
    g_autofree char *links_path =
        opt_link_stats ? strategy_path(opt_link_stats, label, o->several) : NULL;
    g_autofree char *timeline_path =
        opt_timeline ? strategy_path(opt_timeline, label, o->several) : NULL;
    return write_outputs(e->flow, o->topology, trace_path, links_path, timeline_path, NULL,
                         o->scenario_name, label, error);
}

/* Exit codes of the errors planning, evaluating and writing the outputs can end with: a
 * check that failed (--check's fused buffers or invariant checker, or a plan the checker
 * found wrong) is 3; an output that could not be written (no space, an I/O error: the paths
 * were checked before the work began, rs_cli_begin_output()) is a failure while running, 1;
 * anything else, a rank outside the topology included, is bad input. */
static int
exit_code_for(const GError *error)
{
    static const struct {
        GQuark (*domain)(void);
        gint code;
        int exit_code;
    } codes[] = {
        {rs_evaluate_error_quark, RS_EVALUATE_ERROR_CHECK, RS_EXIT_CHECK},
        {rs_plan_error_quark, RS_PLAN_ERROR_INVALID, RS_EXIT_CHECK},
        {rs_trace_error_quark, RS_TRACE_ERROR_IO, RS_EXIT_RUNTIME},
        {g_file_error_quark, -1, RS_EXIT_RUNTIME}, /* -1: every code of the domain */
    };
    if (error == NULL) /* (a g_return_val_if_fail() without an error: a bug, not input) */
        return RS_EXIT_RUNTIME;
    for (guint i = 0; i < G_N_ELEMENTS(codes); i++)
        if (error->domain == codes[i].domain() && (codes[i].code < 0 || error->code == codes[i].code))
            return codes[i].exit_code;
    return RS_EXIT_USAGE;
}

/* The rows of the report, each the figures of the candidate it shows. */
static GArray *
make_results(const RsPolicyResult *policy, const RsEvaluator *ev)
{
    GArray *results = g_array_new(FALSE, TRUE, sizeof(RsStrategyResult));
    for (guint i = 0; i < policy->n_rows; i++) {
        const RsPolicyRow *row = &policy->rows[i];
        const RsEvaluation *e = rs_evaluator_get_evaluation(ev, row->candidate);
        RsStrategyResult r;
        memset(&r, 0, sizeof r);
        r.strategy = e->candidate.strategy;
        r.label = row->label;
        r.note = row->note;
        r.n_transfers = e->n_transfers;
        r.n_rounds = e->n_rounds;
        r.max_round_staging_bytes = e->max_round_staging_bytes;
        r.cost = e->cost;
        r.flow = e->flow;
        g_array_append_val(results, r);
    }
    return results;
}

/* Everything the report shows, printed in @format. */
/* The plots of `reshard report`, in the order they appear: PREFIX-NAME.svg each. */
static const struct {
    const char *name;
    const char *title;
    const char *description;
} report_plots[] = {
    {"strategies", "Refit time per strategy",
     "Each bar stacks the first-order parts of a strategy's time: the busiest link's time "
     "(scale-out network or NVLink), copies and fixed per-message costs; the dot is the "
     "predicted time (flow-level when simulated) and the dashed line the lower bound."},
    {"timeline", "Per-GPU timeline of messages",
     "Each message of the strategy shown last is a segment from its start to its end on the "
     "row of its destination GPU."},
    {"links", "Link utilisation over time",
     "The most loaded links (rows) against time (columns): the fraction of each link's "
     "capacity in use in each slice of the run."},
    {"traffic", "Traffic matrix",
     "GB sent from each source GPU (rows) to each destination GPU (columns)."},
};

/* `reshard report`: the plots (made in a temporary folder) inlined into one document. */
static gboolean
write_document(const RsSimulateReport *report, GError **error)
{
    gboolean markdown = opt_format != NULL && strcmp(opt_format, "md") == 0;
    GArray *plots = g_array_new(FALSE, TRUE, sizeof(RsReportPlot));
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < G_N_ELEMENTS(report_plots); i++) {
        g_autofree char *path = g_strdup_printf("%s-%s.svg", opt_plot, report_plots[i].name);
        char *svg = NULL;
        if (!g_file_get_contents(path, &svg, NULL, NULL))
            continue; /* the first-order model makes the strategies plot only */
        g_ptr_array_add(texts, svg);
        RsReportPlot p = {report_plots[i].title, report_plots[i].description, svg};
        g_array_append_val(plots, p);
    }
    g_autoptr(GString) doc = g_string_new(NULL);
    rs_report_document(report, (const RsReportPlot *)plots->data, plots->len, markdown, doc);
    g_array_unref(plots);
    if (strcmp(report_output, "-") == 0) {
        /* "-": the document on standard output (progress goes to stderr). */
        if (fwrite(doc->str, 1, doc->len, stdout) != doc->len || fflush(stdout) != 0) {
            int e = errno;
            g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                        "--output -: writing the report to standard output: %s",
                        g_strerror(e));
            return FALSE;
        }
        return TRUE;
    }
    if (!rs_cli_begin_output("--output", report_output, error))
        return FALSE;
    if (!rs_output_write_file(report_output, doc->str, (gssize)doc->len, error)) {
        g_prefix_error(error, "--output: "); /* (the message names the path) */
        return FALSE;
    }
    rs_cli_progress("wrote %s", report_output);
    return TRUE;
}

/* The flags that replaced parts of the scenario (rs_scenario_args_format_overrides()) and
 * simulate's own --dtype, or NULL. */
static char *
simulate_overrides(void)
{
    char *flags = rs_scenario_args_format_overrides(&sargs);
    if (opt_dtype == NULL)
        return flags;
    char *all = flags ? g_strconcat(flags, ", --dtype", NULL) : g_strdup("--dtype");
    g_free(flags);
    return all;
}

/* The scenario's name with the flags that replaced parts of it (rs_report_format_scenario()),
 * as the header, the progress and the traces' metadata name it. */
static char *
format_scenario_text(const RsScenario *scenario)
{
    g_autofree char *overrides = simulate_overrides();
    return rs_report_format_scenario(scenario->name, overrides);
}

static gboolean
print_report(const RsScenario *scenario, const RsScenarioBuild *build,
             const RsPlanOptions *plan_options, const RsFlowSimOptions *flow_options,
             const RsPolicyResult *policy, const RsEvaluator *ev, const RsLowerBound *bound,
             const RsMemoryResult *memory, RsFormat format, GError **error)
{
    g_autoptr(GArray) results = make_results(policy, ev);
    g_autofree char *overrides = simulate_overrides();
    g_autofree char *train_desc = rs_convention_format(scenario->train);
    g_autofree char *infer_desc = rs_convention_format(scenario->infer);
    g_autofree char *train_gpus = rs_ranks_format((const guint32 *)scenario->train_gpus->data,
                                                  scenario->train_gpus->len);
    g_autofree char *infer_gpus = rs_ranks_format((const guint32 *)scenario->infer_gpus->data,
                                                  scenario->infer_gpus->len);
    RsSimulateReport report = {0};
    report.scenario_name = scenario->name;
    report.scenario_overrides = overrides;
    report.model = build->model;
    report.topology = build->topology;
    report.refit = build->refit;
    report.train_desc = train_desc;
    report.train_gpus = train_gpus;
    report.train_summary = build->train_summary;
    report.infer_desc = infer_desc;
    report.infer_gpus = infer_gpus;
    report.infer_summary = build->infer_summary;
    report.bound = *bound;
    report.results = (const RsStrategyResult *)results->data;
    report.n_results = results->len;
    report.flow_options = flow_options;
    report.staging_bytes = rs_plan_options_get_staging_bytes(plan_options);
    report.max_ops_per_group =
        plan_options->max_ops_per_group ? plan_options->max_ops_per_group : 256;
    report.auto_reason = policy->auto_reason;
    report.hierarchical_note = policy->hierarchical_note;
    report.memory = memory;
    g_autoptr(GString) out = g_string_new(NULL);
    if (report_output != NULL)
        return write_document(&report, error);
    rs_report_simulate(&report, format, out);
    fputs(out->str, stdout);
    return TRUE;
}

/* PREFIX-NAME for --plot, its four files (PREFIX-NAME.dat/.gp/.png/.svg, rs_plot_render())
 * noted for removal if the command fails later (rs_cli_begin_output()). Returns NULL with
 * @error set when one of them is an input of the command. */
static char *
plot_prefix(const char *name, GError **error)
{
    char *prefix = g_strdup_printf("%s-%s", opt_plot, name);
    if (!rs_cli_begin_plot_outputs("--plot", prefix, error)) {
        g_free(prefix);
        return NULL;
    }
    return prefix;
}

/* --plot: the strategies plot, and with the flow model the timeline, link utilisation and
 * traffic matrix of the last row's candidate (auto's pick, or the one strategy asked). */
static gboolean
write_plots(const RsScenarioBuild *build, const RsPolicyResult *policy, const RsEvaluator *ev,
            const RsLowerBound *bound, GError **error)
{
    g_autofree RsPlotBar *bars = g_new0(RsPlotBar, policy->n_rows);
    g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < policy->n_rows; i++) {
        const RsEvaluation *e = rs_evaluator_get_evaluation(ev, policy->rows[i].candidate);
        /* As the table names it: "auto: hierarchical+relays". */
        const RsPolicyRow *row = &policy->rows[i];
        char *label = row->note != NULL && strcmp(row->label, "auto") == 0
                          ? g_strdup_printf("%s: %s", row->label, row->note)
                          : g_strdup(row->label);
        g_ptr_array_add(labels, label);
        bars[i].label = label;
        bars[i].network_s = e->cost.network_s;
        bars[i].nvlink_s = e->cost.nvlink_s;
        bars[i].copy_s = e->cost.gpu_copy_s;
        bars[i].fixed_s = e->cost.fixed_s;
        bars[i].time_s = e->predicted_s;
    }
    g_autofree char *p = plot_prefix("strategies", error);
    if (p == NULL || !rs_plot_strategies(bars, policy->n_rows, bound->time_s, p, error))
        return FALSE;
    const RsEvaluation *last =
        rs_evaluator_get_evaluation(ev, policy->rows[policy->n_rows - 1].candidate);
    if (last->flow == NULL)
        return TRUE;
    g_autoptr(RsTrace) trace = rs_flow_sim_result_to_trace(last->flow, build->topology, NULL);
    g_autofree char *pt = plot_prefix("timeline", error);
    if (pt == NULL)
        return FALSE;
    g_autofree char *pl = plot_prefix("links", error);
    if (pl == NULL)
        return FALSE;
    g_autofree char *pm = plot_prefix("traffic", error);
    if (pm == NULL)
        return FALSE;
    return rs_plot_timeline(trace, pt, error) &&
           rs_plot_links(last->flow, build->topology, 40, pl, error) &&
           rs_plot_traffic(trace, rs_topology_get_gpus_per_node(build->topology), pm, error);
}

/* What the flags asked for, parsed before any work. */
typedef struct {
    RsFormat format;
    RsFlowSimOptions flow_options;
    gboolean use_flow;
    guint n_threads; /* candidates at once (--threads; default: the cores) */
} Settings;

static gboolean
parse_settings(Settings *set, GError **error)
{
    gint64 threads = 0;
    if (!rs_cli_parse_int("--threads", opt_threads, 1, 1024, &threads, error))
        return FALSE;
    set->n_threads = threads > 0 ? (guint)threads : g_get_num_processors();
    if (report_output != NULL) {
        set->format = RS_FORMAT_TABLE;
        if (opt_format != NULL && strcmp(opt_format, "html") != 0 && strcmp(opt_format, "md") != 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--format: \"%s\": a report is html (default) or md", opt_format);
            return FALSE;
        }
        if (opt_messages != NULL || opt_plot != NULL) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s does not apply to a report (it plans a scenario and makes its "
                        "own plots)",
                        opt_messages ? "--messages" : "--plot");
            return FALSE;
        }
        if ((strcmp(report_output, "-") != 0 &&
             !rs_cli_check_output("--output", report_output, error)) ||
            !parse_flow_options(&set->flow_options, &set->use_flow, error))
            return FALSE;
    } else if (!rs_cli_parse_format(opt_format, &set->format, error) ||
               !parse_flow_options(&set->flow_options, &set->use_flow, error))
        return FALSE;
    /* Every output path before any work: a wrong folder is found now, not after the first
     * strategy's simulation. */
    if (opt_plot != NULL && *opt_plot == '\0') {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--plot: empty prefix (the files would be -strategies.png, ...)");
        return FALSE;
    }
    g_autofree char *plot_png = opt_plot ? g_strconcat(opt_plot, "-strategies.png", NULL) : NULL;
    return rs_cli_check_output("--trace", opt_trace, error) &&
           rs_cli_check_output("--timeline", opt_timeline, error) &&
           rs_cli_check_output("--plot", plot_png, error) &&
           rs_cli_check_output("--link-stats", opt_link_stats, error) &&
           rs_cli_check_distinct_outputs("--trace", opt_trace, "--link-stats", opt_link_stats,
                                         error);
}

/* Plans and evaluates the candidates of @req (the policy's), computes the lower bound,
 * prints the report. A failed command leaves none of its files (a strategy's trace
 * written before a later one failed). */
static int
simulate_scenario(const char *cmd, const Settings *set, const RsScenario *scenario,
                  const RsScenarioBuild *build, const RsPlanOptions *plan_options,
                  const RsPolicyRequest *req)
{
    g_autoptr(GError) error = NULL;
    RsMemoryOptions mo;
    if (!rs_scenario_args_get_memory_options(
            &sargs, rs_plan_options_get_staging_bytes(plan_options), &mo, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    RsMemoryResult memory;
    rs_memory_compute(build->refit, build->topology, &mo, &memory);
    for (guint s = 0; s < RS_MEMORY_SIDE_N; s++) {
        const RsMemorySideResult *m = &memory.side[s];
        if (!m->feasible)
            rs_cli_warn(cmd,
                        "the %s layout does not fit in GPU memory: GPU %u needs %.2f GB "
                        "(%.2f GB weights + %.2f GB staging + %.2f GB reserve) of %.2f GB",
                        s == RS_MEMORY_TRAIN ? "training" : "inference", m->max_gpu,
                        m->total_bytes / 1e9, m->weights_bytes / 1e9, m->staging_bytes / 1e9,
                        m->reserve_bytes / 1e9, m->capacity_bytes / 1e9);
    }
    RsAutoCandidate tried[RS_AUTO_MAX_CANDIDATES];
    guint n_tried = rs_policy_get_candidates(req, tried);
    guint n_rows = req->auto_row;
    for (guint i = 0; i < RS_STRATEGY_N; i++)
        n_rows += req->row[i];
    if (!check_candidate_outputs(tried, n_tried, n_rows > 1, set->use_flow, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    /* The traces' metadata names the scenario as the table's header does: with the flags
     * that replaced parts of it (it said "deepseek-v3-h100" for a run whose model, layouts
     * and topology all came from the command line). */
    g_autofree char *scenario_text = format_scenario_text(scenario);
    CandidateOutputs outputs = {build->topology, scenario_text, n_rows > 1, FALSE, 0, 0,
                                g_get_monotonic_time()};
    RsEvaluatorOptions eo = {build->refit, build->topology,
                             set->use_flow ? &set->flow_options : NULL,
                             opt_check, on_candidate, &outputs};
    g_autoptr(RsEvaluator) ev = rs_evaluator_new(&eo);
    guint n_at_once = MIN(MAX(req->n_threads, 1), n_tried);
    if (n_at_once > 1)
        rs_cli_progress("planning and simulating %u candidates, %u at once ...", n_tried,
                        n_at_once);
    else
        rs_cli_progress("planning and simulating %u candidate%s ...", n_tried,
                        n_tried == 1 ? "" : "s");
    RsPolicyResult policy;
    g_autoptr(RsPlan) best = rs_policy_run(build->refit, plan_options, req,
                                           rs_evaluator_evaluate, ev, &policy, &error);
    RsLowerBound bound;
    int code = RS_EXIT_OK;
    /* Peers' plans too large for this machine: said, and the others reported. */
    for (guint i = 0; best != NULL && i < policy.evaluated.n_skipped; i++)
        rs_cli_warn(cmd, "%s not planned, its row left out: %s", policy.evaluated.skipped[i].label,
                    policy.evaluated.skipped_reason[i]);
    if (best == NULL)
        code = rs_cli_fail(cmd, error, exit_code_for(error));
    else if (!rs_lower_bound_compute(build->refit, build->topology, &bound, &error))
        code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    else if (opt_plot != NULL && !write_plots(build, &policy, ev, &bound, &error))
        code = rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    else if (!print_report(scenario, build, plan_options, eo.flow_options, &policy, ev, &bound,
                           &memory, set->format, &error))
        code = rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    if (code != RS_EXIT_OK)
        rs_cli_remove_created_outputs();
    rs_policy_result_clear(&policy);
    return code;
}

static int
run_scenario(const char *cmd, const Settings *set)
{
    g_autoptr(GError) error = NULL;
    RsPolicyRequest req;
    if (!parse_requested(&req, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    req.n_threads = set->n_threads;
    g_autoptr(RsScenario) scenario =
        rs_scenario_args_load(&sargs, DEFAULT_SCENARIO, opt_dtype, &error);
    if (scenario == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autofree char *scenario_text = format_scenario_text(scenario);
    rs_cli_progress("resolving layouts of %s ...", scenario_text);
    RsScenarioBuild build;
    if (!rs_scenario_build(scenario, &build, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    rs_cli_print_model_warnings(cmd, build.model);
    rs_cli_print_topology_warnings(build.topology);
    RsPlanOptions plan_options;
    int code;
    if (!parse_plan_options(&plan_options, build.topology, &req.relays, &error))
        code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    else
        code = simulate_scenario(cmd, set, scenario, &build, &plan_options, &req);
    rs_scenario_build_clear(&build);
    return code;
}

/* After the flags are parsed: simulate, or with report_output set, the report. */
static int
run_parsed(const char *cmd)
{
    g_autoptr(GError) error = NULL;
    if (!check_strategy_pair(&error)) /* before list, which would ignore --all-strategies */
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_strategy != NULL && strcmp(opt_strategy, "list") == 0) {
        RsFormat format;
        if (!rs_cli_parse_format(opt_format, &format, &error))
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        rs_cli_print_strategies(format);
        return RS_EXIT_OK;
    }
    Settings set;
    if (!parse_settings(&set, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_messages != NULL)
        return run_messages(cmd, &set.flow_options, set.use_flow, set.format);
    if (report_output == NULL)
        return run_scenario(cmd, &set);
    /* The report's plots go to a temporary folder and into the document. */
    g_autofree char *dir = g_dir_make_tmp("reshard-report-XXXXXX", &error);
    if (dir == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    opt_plot = g_build_filename(dir, "plot", NULL);
    /* A signal (SIGPIPE: `report -o - | head`) removes it too, not only its files. */
    rs_cli_remove_temp_dir_on_signal(dir);
    int code = run_scenario(cmd, &set);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    for (const char *name; d != NULL && (name = g_dir_read_name(d)) != NULL;) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_unlink(path);
    }
    g_rmdir(dir);
    rs_cli_forget_temp_dir();
    g_clear_pointer(&opt_plot, g_free);
    return code;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "simulate";
    int code = RS_EXIT_OK;
    if (!rs_cli_parse(cmd, make_context, &argc, &argv, &code))
        return code;
    return run_parsed(cmd);
}

GOptionContext *
rs_cli_simulate_make_context(const char *parameter_string)
{
    return make_context_for(parameter_string, "html or md (default html)");
}

int
rs_cli_simulate_report(const char *output)
{
    gboolean markdown = opt_format != NULL && strcmp(opt_format, "md") == 0;
    report_output = output ? output : markdown ? "report.md" : "report.html";
    return run_parsed("report");
}

const RsCommand rs_command_simulate = {
    "simulate",
    "Simulate a refit with each strategy and state the lower bound",
    run,
    make_context,
};

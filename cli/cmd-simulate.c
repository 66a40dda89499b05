/* cmd-simulate.c — `reshard simulate`: plan a refit with each strategy and simulate it.
 *
 * Loads a scenario (the shipped default unless --scenario), applies the overriding flags,
 * resolves layouts, builds a plan per strategy, simulates each on the topology with the
 * flow-level model (or the first-order estimate), computes the lower bound, and prints the
 * comparison. `auto` and `hierarchical` are chosen by simulation: hierarchical tries the
 * star (every NVLink domain pulls from the sources) and the tree of domains (domains
 * forward to each other), auto every strategy; the fastest is kept and the reason printed.
 * With --messages, an explicit message list is simulated instead. */
#include "cli/cli.h"
#include "cli/outputs.h"

#include "analysis/report.h"
#include "cli/scenario-args.h"
#include "cli/topology-args.h"
#include "plan/auto.h"
#include "sim/cost.h"
#include "sim/lower-bound.h"
#include "base/data.h"
#include "sim/flow-sim.h"
#include "plan/plan.h"
#include "layout/scenario.h"
#include "base/units.h"

#include <stdio.h>
#include <string.h>

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
static char *opt_rates;
static char *opt_staging;
static char *opt_max_ops; /* an integer, as text (rs_cli_parse_int) */
static char *opt_stripe;
static char *opt_domain_relays;

static GOptionEntry entries[] = {
    {"dtype", 0, 0, G_OPTION_ARG_STRING, &opt_dtype, "dtype of the weights moved (bf16, f32, ...)",
     "DTYPE"},
    {"strategy", 0, 0, G_OPTION_ARG_STRING, &opt_strategy,
     NULL /* rs_cli_strategy_help(), set by make_context() */, "NAME"},
    {"all-strategies", 0, 0, G_OPTION_ARG_NONE, &opt_all_strategies,
     "Every strategy side by side (the default; same as --strategy all)", NULL},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table, csv or json (default table)",
     "FORMAT"},
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
    {"messages", 0, 0, G_OPTION_ARG_FILENAME, &opt_messages,
     "Simulate this message list (CSV: src,dst,bytes[,phase][,depends_on]) on --topology "
     "instead of planning a scenario",
     "FILE.csv"},
    {"link-stats", 0, 0, G_OPTION_ARG_FILENAME, &opt_link_stats,
     "Write per-link bytes, busy time and utilisation over time (CSV)", "FILE.csv"},
    {"chunk-size", 0, 0, G_OPTION_ARG_STRING, &opt_chunk_size,
     "Relay pipelining chunk, with its unit (default 4 MiB; 0 B: relays wait for whole "
     "messages)",
     "SIZE"},
    {"rates", 0, 0, G_OPTION_ARG_STRING, &opt_rates,
     "Rate recomputation: local (flows sharing a link with a change, then bounded "
     "propagation; default), neighbours (no propagation: fastest) or global (exact max-min "
     "at every event: slowest)",
     "MODE"},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    rs_cli_set_strategy_help(entries, TRUE, "default all");
    GOptionContext *context = g_option_context_new("- simulate a refit with each strategy");
    g_option_context_set_summary(
        context, "Plans the refit of a scenario (model, topology, training and inference\n"
                 "layouts) with each strategy, simulates it on the topology (flow-level:\n"
                 "max-min fair rates over every link, latency, pipelined relays) and prints\n"
                 "bytes moved, the busiest GPU and NIC, the predicted time, the lower bound\n"
                 "and the efficiency. `auto` keeps the fastest strategy and says why.\n"
                 "Flags override the scenario's parts. With --messages, simulates an explicit\n"
                 "message list on a topology instead.");
    g_option_context_set_description(
        context, "Examples:\n"
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

static gboolean
write_text(const char *path, const char *text, GError **error)
{
    /* g_file_set_contents writes a temporary file and renames it: nothing half-written. */
    if (!g_file_set_contents(path, text, -1, error)) {
        g_prefix_error(error, "%s: ", path);
        return FALSE;
    }
    return TRUE;
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

static gboolean
write_outputs(const RsFlowSimResult *flow, const RsTopology *topo, const char *trace_path,
              const char *links_path, const guint32 *ids, const char *scenario,
              const char *strategy, GError **error)
{
    if (trace_path != NULL) {
        g_autoptr(RsTrace) trace = rs_flow_sim_result_to_trace(flow, topo, ids);
        rs_cli_note_output(trace_path);
        if (scenario != NULL)
            rs_trace_set_meta(trace, "scenario", scenario);
        if (strategy != NULL)
            rs_trace_set_meta(trace, "strategy", strategy);
        if (!rs_trace_write_file(trace, trace_path, error))
            return FALSE;
    }
    if (links_path != NULL) {
        g_autoptr(GString) csv = g_string_new(NULL);
        rs_report_link_stats(flow, topo, csv);
        rs_cli_note_output(links_path);
        if (!write_text(links_path, csv->str, error))
            return FALSE;
    }
    return TRUE;
}

static gboolean
parse_flow_options(RsFlowSimOptions *opt, gboolean *use_flow, GError **error)
{
    rs_flow_sim_options_init(opt);
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
    if (opt_rates != NULL) {
        if (strcmp(opt_rates, "global") == 0) {
            opt->rates = RS_FLOW_SIM_RATES_GLOBAL;
        } else if (strcmp(opt_rates, "neighbours") == 0) {
            opt->rates = RS_FLOW_SIM_RATES_NEIGHBOURS;
        } else if (strcmp(opt_rates, "local") != 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--rates: unknown mode \"%s\" (known: local, neighbours, global)",
                        opt_rates);
            return FALSE;
        }
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
    if (!*use_flow && (opt_trace != NULL || opt_link_stats != NULL)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--trace and --link-stats need the flow model, not --network bottleneck");
        return FALSE;
    }
    return TRUE;
}

static int
run_messages(const char *cmd, const RsFlowSimOptions *fopt, gboolean use_flow, RsFormat format)
{
    g_autoptr(GError) error = NULL;
    if (!use_flow) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--messages: only the flow model simulates a message list");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    /* A message list is given, not planned: the flags of the model, the layouts and the
     * planner would be silently ignored. --scenario stays: it supplies the topology. */
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
    };
    for (guint i = 0; i < G_N_ELEMENTS(unused); i++) {
        if (unused[i].given) {
            g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s does not apply with --messages (the message list replaces the "
                        "model, the layouts and the plan)",
                        unused[i].flag);
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        }
    }
    /* The topology: --topology, else the scenario's (with its node count). Both given, the
     * scenario would be read for nothing: refused like the flags above. */
    if (sargs.scenario != NULL && sargs.topology != NULL) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--scenario does not apply with --messages when --topology is given (a "
                    "scenario only supplies the topology of a message list)");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    g_autoptr(RsScenario) scenario = NULL;
    if (sargs.topology == NULL) {
        g_autofree char *spath =
            rs_data_find("scenarios", sargs.scenario ? sargs.scenario : DEFAULT_SCENARIO, &error);
        if (spath == NULL || (scenario = rs_scenario_load_file(spath, &error)) == NULL)
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    RsTopologyOverrides ov;
    if (!rs_topology_args_get(&ov, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (ov.n_nodes == 0 && scenario != NULL)
        ov.n_nodes = scenario->n_nodes;
    g_autofree char *tpath =
        rs_data_find("topologies", sargs.topology ? sargs.topology : scenario->topology, &error);
    if (tpath == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsTopology) topo = rs_topology_load_file(tpath, &ov, &error);
    if (topo == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsTrace) trace = rs_trace_read_file(opt_messages, &error);
    if (trace == NULL) {
        /* A file that cannot be read names the option (GLib's message names only the file);
         * the parser's errors already start with FILE:LINE. */
        if (g_error_matches(error, RS_TRACE_ERROR, RS_TRACE_ERROR_IO))
            g_prefix_error(&error, "--messages: ");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    if (rs_trace_get_n_rows(trace) == 0) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: no messages",
                    opt_messages);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    rs_cli_progress("simulating %u messages of %s on %s ...", rs_trace_get_n_rows(trace),
                    opt_messages, rs_topology_get_name(topo));
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
    if (!write_outputs(flow, topo, opt_trace, opt_link_stats, ids, NULL, NULL, &error)) {
        rs_cli_remove_created_outputs();
        return rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    }
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_replay(opt_messages, topo, flow, format, out);
    fputs(out->str, stdout);
    return RS_EXIT_OK;
}

/* Which rows to print. */
typedef struct {
    gboolean row[RS_STRATEGY_N];
    gboolean auto_row;
} Requested;

static gboolean
parse_requested(Requested *req, GError **error)
{
    memset(req, 0, sizeof *req);
    if (opt_strategy == NULL || opt_all_strategies || strcmp(opt_strategy, "all") == 0) {
        for (guint s = 0; s < RS_STRATEGY_N; s++)
            req->row[s] = TRUE;
        req->auto_row = TRUE;
        return TRUE;
    }
    if (strcmp(opt_strategy, "auto") == 0) {
        req->auto_row = TRUE;
        return TRUE;
    }
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

/* Planner options from the flags; *relays_mode: 0 off, 1 on, 2 auto. */
static gboolean
parse_plan_options(RsPlanOptions *o, const RsTopology *topo, guint *relays_mode, GError **error)
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
    *relays_mode = 2;
    if (opt_domain_relays != NULL) {
        if (strcmp(opt_domain_relays, "on") == 0) {
            *relays_mode = 1;
        } else if (strcmp(opt_domain_relays, "off") == 0) {
            *relays_mode = 0;
        } else if (strcmp(opt_domain_relays, "auto") != 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--domain-relays: \"%s\": expected on, off or auto", opt_domain_relays);
            return FALSE;
        }
    }
    return TRUE;
}

/* One evaluated candidate. */
typedef struct {
    RsAutoCandidate candidate;
    RsStrategyResult result;
    double predicted_s;
} Evaluated;

typedef struct {
    const RsRefit *refit;
    const RsTopology *topology;
    const RsFlowSimOptions *flow_options; /* NULL: first-order estimate */
    const char *scenario_name;
    gboolean check;
    guint n_files; /* trace/link files written: several strategies get suffixed names */
    GArray *evaluated;  /* Evaluated */
    GPtrArray *flows;   /* RsFlowSimResult, owned */
} Evaluator;

static gboolean
evaluate(const RsPlan *plan, const RsAutoCandidate *candidate, gpointer user_data,
         double *predicted_s, GError **error)
{
    Evaluator *ev = user_data;
    if (ev->check) {
        if (!rs_plan_check(plan, ev->refit, error))
            return FALSE;
        rs_cli_progress("check passed for %s: %u transfers; every destination element received "
                        "once, from a holder or an earlier relay",
                        candidate->label, rs_plan_get_n_transfers(plan));
    }
    Evaluated e;
    memset(&e, 0, sizeof e);
    e.candidate = *candidate;
    e.result.strategy = candidate->strategy;
    e.result.label = candidate->label;
    e.result.n_transfers = rs_plan_get_n_transfers(plan);
    e.result.n_rounds = rs_plan_get_n_rounds(plan);
    e.result.max_round_staging_bytes = rs_plan_get_max_round_staging_bytes(plan);
    if (!rs_cost_estimate_full(plan, ev->refit, ev->topology, &e.result.cost, error))
        return FALSE;
    e.predicted_s = e.result.cost.predicted_s;
    if (ev->flow_options != NULL) {
        /* The tables count network messages; local copies are simulated too. */
        rs_cli_progress("simulating %s: %u network messages (%u with local copies) ...",
                        candidate->label, rs_plan_get_n_network_messages(plan),
                        rs_plan_get_n_messages(plan));
        RsFlowSimResult *flow = rs_flow_sim_run(plan, ev->topology, ev->flow_options, error);
        if (flow == NULL)
            return FALSE;
        g_ptr_array_add(ev->flows, flow);
        e.result.flow = flow;
        e.predicted_s = flow->total_s;
        g_autofree char *trace_path =
            opt_trace ? strategy_path(opt_trace, candidate->label, ev->n_files > 1) : NULL;
        g_autofree char *links_path =
            opt_link_stats ? strategy_path(opt_link_stats, candidate->label, ev->n_files > 1)
                           : NULL;
        if (!write_outputs(flow, ev->topology, trace_path, links_path, NULL, ev->scenario_name,
                           candidate->label, error))
            return FALSE;
    }
    g_array_append_val(ev->evaluated, e);
    *predicted_s = e.predicted_s;
    return TRUE;
}

static const Evaluated *
find_evaluated(GArray *evaluated, const char *label)
{
    for (guint i = 0; i < evaluated->len; i++) {
        const Evaluated *e = &g_array_index(evaluated, Evaluated, i);
        if (strcmp(e->candidate.label, label) == 0)
            return e;
    }
    return NULL;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "simulate";
    int code = RS_EXIT_OK;
    if (!rs_cli_parse(cmd, make_context, &argc, &argv, &code))
        return code;

    g_autoptr(GError) error = NULL;
    RsFormat format;
    if (!rs_cli_parse_format(opt_format, &format, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    RsFlowSimOptions fopt;
    gboolean use_flow;
    if (!parse_flow_options(&fopt, &use_flow, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    /* Every output path before any work: a wrong folder is found now, not after the first
     * strategy's simulation. */
    if (!rs_cli_check_output("--trace", opt_trace, &error) ||
        !rs_cli_check_output("--link-stats", opt_link_stats, &error) ||
        !rs_cli_check_distinct_outputs("--trace", opt_trace, "--link-stats", opt_link_stats,
                                       &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_messages != NULL)
        return run_messages(cmd, &fopt, use_flow, format);
    Requested req;
    if (!parse_requested(&req, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);

    g_autoptr(RsScenario) scenario =
        rs_scenario_args_load(&sargs, DEFAULT_SCENARIO, opt_dtype, &error);
    if (scenario == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    rs_cli_progress("resolving layouts of %s ...", scenario->name);
    RsScenarioBuild build;
    if (!rs_scenario_build(scenario, &build, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);

    RsPlanOptions plan_options;
    guint relays_mode;
    if (!parse_plan_options(&plan_options, build.topology, &relays_mode, &error)) {
        rs_scenario_build_clear(&build);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }

    /* The candidates to plan and simulate: every strategy asked for, hierarchical in the
     * relay modes asked for, and all of them for auto. */
    guint n_all;
    const RsAutoCandidate *all = rs_auto_get_candidates(&n_all);
    RsAutoCandidate tried[RS_AUTO_MAX_CANDIDATES];
    guint n_tried = 0;
    for (guint c = 0; c < n_all; c++) {
        gboolean wanted = req.auto_row || req.row[all[c].strategy];
        if (all[c].strategy == RS_STRATEGY_HIERARCHICAL && !req.auto_row &&
            relays_mode != 2 && (guint)all[c].domain_relays != relays_mode)
            wanted = FALSE;
        if (wanted)
            tried[n_tried++] = all[c];
    }
    /* With several candidates each writes FILE-LABEL.csv: no trace may be another's link
     * stats (checked before any work, so that nothing is overwritten). */
    for (guint i = 0; opt_trace != NULL && opt_link_stats != NULL && i < n_tried; i++)
        for (guint j = 0; j < n_tried; j++) {
            g_autofree char *t = strategy_path(opt_trace, tried[i].label, n_tried > 1);
            g_autofree char *l = strategy_path(opt_link_stats, tried[j].label, n_tried > 1);
            if (!rs_cli_check_distinct_outputs("--trace", t, "--link-stats", l, &error)) {
                rs_scenario_build_clear(&build);
                return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
            }
        }
    Evaluator ev = {build.refit,
                    build.topology,
                    use_flow ? &fopt : NULL,
                    scenario->name,
                    opt_check,
                    n_tried,
                    g_array_new(FALSE, TRUE, sizeof(Evaluated)),
                    g_ptr_array_new_with_free_func((GDestroyNotify)rs_flow_sim_result_free)};
    RsAutoResult auto_result;
    rs_cli_progress("planning and simulating %u candidates ...", n_tried);
    g_autoptr(RsPlan) best = rs_auto_build_plan(build.refit, &plan_options, tried, n_tried,
                                                evaluate, &ev, &auto_result, &error);
    if (best == NULL) {
        gboolean wrong_plan = g_error_matches(error, RS_PLAN_ERROR, RS_PLAN_ERROR_INVALID) ||
                              g_str_has_prefix(error->message, "buffers:");
        code = rs_cli_fail(cmd, error, wrong_plan ? RS_EXIT_CHECK : RS_EXIT_USAGE);
    }

    RsSimulateReport report = {0};
    g_autoptr(GArray) results = g_array_new(FALSE, TRUE, sizeof(RsStrategyResult));
    g_autofree char *auto_reason = NULL;
    g_autofree char *hier_note = NULL;
    for (guint s = 0; code == RS_EXIT_OK && s < RS_STRATEGY_N; s++) {
        if (!req.row[s])
            continue;
        if (s != RS_STRATEGY_HIERARCHICAL) {
            const Evaluated *e = find_evaluated(ev.evaluated, rs_strategy_get_name(s));
            g_array_append_val(results, e->result);
            continue;
        }
        /* hierarchical: the faster of its relay modes. */
        const Evaluated *star = find_evaluated(ev.evaluated, "hierarchical");
        const Evaluated *tree = find_evaluated(ev.evaluated, "hierarchical+relays");
        const Evaluated *pick = star;
        if (pick == NULL || (tree != NULL && tree->predicted_s < pick->predicted_s))
            pick = tree;
        RsStrategyResult r = pick->result;
        r.label = "hierarchical";
        if (star != NULL && tree != NULL) {
            hier_note = g_strdup_printf(
                "hierarchical: %s (tree of NVLink domains %.4g s, every domain from the "
                "sources %.4g s)",
                pick == tree ? "domains relay to each other" : "every domain pulls from the sources",
                tree->predicted_s, star->predicted_s);
        }
        r.note = pick == tree ? "domain relays" : "no domain relays";
        g_array_append_val(results, r);
    }
    if (code == RS_EXIT_OK && req.auto_row) {
        const Evaluated *e =
            find_evaluated(ev.evaluated, auto_result.candidates[auto_result.chosen].label);
        RsStrategyResult r = e->result;
        r.label = "auto";
        r.note = e->candidate.label;
        g_array_append_val(results, r);
        auto_reason = rs_auto_result_format_reason(&auto_result);
    }
    if (code == RS_EXIT_OK && !rs_lower_bound_compute(build.refit, build.topology, &report.bound,
                                                      &error))
        code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (code == RS_EXIT_OK) {
        g_autofree char *overrides = rs_scenario_args_format_overrides(&sargs);
        g_autofree char *train_desc = rs_convention_format(scenario->train);
        g_autofree char *infer_desc = rs_convention_format(scenario->infer);
        g_autofree char *train_gpus = rs_ranks_format((const guint32 *)scenario->train_gpus->data,
                                                      scenario->train_gpus->len);
        g_autofree char *infer_gpus = rs_ranks_format((const guint32 *)scenario->infer_gpus->data,
                                                      scenario->infer_gpus->len);
        report.scenario_name = scenario->name;
        report.scenario_overrides = overrides;
        report.model = build.model;
        report.topology = build.topology;
        report.refit = build.refit;
        report.train_desc = train_desc;
        report.train_gpus = train_gpus;
        report.train_summary = build.train_summary;
        report.infer_desc = infer_desc;
        report.infer_gpus = infer_gpus;
        report.infer_summary = build.infer_summary;
        report.results = (const RsStrategyResult *)results->data;
        report.n_results = results->len;
        report.flow_options = use_flow ? &fopt : NULL;
        report.staging_bytes = rs_plan_options_get_staging_bytes(&plan_options);
        report.max_ops_per_group = plan_options.max_ops_per_group ? plan_options.max_ops_per_group
                                                                   : 256;
        report.auto_reason = auto_reason;
        report.hierarchical_note = hier_note;
        g_autoptr(GString) out = g_string_new(NULL);
        rs_report_simulate(&report, format, out);
        fputs(out->str, stdout);
    }
    /* A failed command leaves none of its files (a strategy's trace written before a later
     * one failed). */
    if (code != RS_EXIT_OK)
        rs_cli_remove_created_outputs();
    g_array_unref(ev.evaluated);
    g_ptr_array_unref(ev.flows);
    rs_scenario_build_clear(&build);
    return code;
}

const RsCommand rs_command_simulate = {
    "simulate",
    "Simulate a refit with each strategy and state the lower bound",
    run,
    make_context,
};

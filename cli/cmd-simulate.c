/* cmd-simulate.c — `reshard simulate`: plan a refit with each strategy and simulate it.
 *
 * Loads a scenario (the shipped default unless --scenario), applies the overriding flags,
 * resolves layouts, builds a plan per strategy, simulates each on the topology with the
 * flow-level model (or the first-order estimate with --network bottleneck), computes the
 * lower bound, and prints the comparison. With --messages it simulates an explicit message
 * list (a trace) on a topology instead. */
#include "cli/cli.h"

#include "analysis/report.h"
#include "cli/topology-args.h"
#include "sim/cost.h"
#include "sim/data.h"
#include "sim/flow-sim.h"
#include "sim/plan.h"
#include "sim/scenario.h"
#include "sim/units.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_SCENARIO "deepseek-v3-h100"

static char *opt_scenario;
static char *opt_model;
static char *opt_dtype;
static gboolean opt_mtp;
static char *opt_topology;
static char *opt_train;
static char *opt_train_gpus;
static char *opt_infer;
static char *opt_infer_gpus;
static char *opt_strategy;
static char *opt_format;
static gboolean opt_check;
static char *opt_network;
static char *opt_trace;
static char *opt_messages;
static char *opt_link_stats;
static char *opt_chunk_size;
static char *opt_rates;

static GOptionEntry entries[] = {
    {"scenario", 's', 0, G_OPTION_ARG_STRING, &opt_scenario,
     "Scenario name or file (default " DEFAULT_SCENARIO ")", "NAME|FILE"},
    {"model", 'm', 0, G_OPTION_ARG_STRING, &opt_model, "Model name or file", "NAME|FILE"},
    {"dtype", 0, 0, G_OPTION_ARG_STRING, &opt_dtype, "dtype of the weights moved (bf16, f32, ...)",
     "DTYPE"},
    {"mtp", 0, 0, G_OPTION_ARG_NONE, &opt_mtp, "Include multi-token-prediction layers", NULL},
    {"topology", 't', 0, G_OPTION_ARG_STRING, &opt_topology, "Topology name or file", "NAME|FILE"},
    {"train", 0, 0, G_OPTION_ARG_STRING, &opt_train,
     "Training layout, e.g. megatron:tp=1,pp=16,ep=16", "SPEC"},
    {"train-gpus", 0, 0, G_OPTION_ARG_STRING, &opt_train_gpus, "GPUs of the training ranks",
     "RANGES"},
    {"infer", 0, 0, G_OPTION_ARG_STRING, &opt_infer, "Inference layout, e.g. vllm:tp=32,dp=8",
     "SPEC"},
    {"infer-gpus", 0, 0, G_OPTION_ARG_STRING, &opt_infer_gpus, "GPUs of the inference ranks",
     "RANGES"},
    {"strategy", 0, 0, G_OPTION_ARG_STRING, &opt_strategy,
     "gather-broadcast, direct or all (default all)", "NAME"},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table, csv or json (default table)",
     "FORMAT"},
    {"check", 0, 0, G_OPTION_ARG_NONE, &opt_check,
     "Verify every plan with the invariant checker (exit 3 on a wrong plan)", NULL},
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
    GOptionContext *context = g_option_context_new("- simulate a refit with each strategy");
    g_option_context_set_summary(
        context, "Plans the refit of a scenario (model, topology, training and inference\n"
                 "layouts) with each strategy, simulates it on the topology (flow-level:\n"
                 "max-min fair rates over every link, latency, pipelined relays) and prints\n"
                 "bytes moved, the busiest GPU and NIC, the predicted time, the lower bound\n"
                 "and the efficiency. Flags override the scenario's parts. With --messages,\n"
                 "simulates an explicit message list on a topology instead.");
    g_option_context_set_description(
        context, "Examples:\n"
                 "  reshard simulate\n"
                 "  reshard simulate --infer vllm:tp=16 --format json\n"
                 "  reshard simulate --model llama-3.1-8b --nodes 2 --train megatron:tp=2,pp=2 "
                 "--train-gpus 0-7 --infer vllm:tp=4 --infer-gpus 8-15\n"
                 "  reshard simulate --strategy direct --trace direct.csv --link-stats links.csv\n"
                 "  reshard simulate --network bottleneck\n"
                 "  reshard simulate --messages traffic.csv --topology dgx-h100 --nodes 4\n");
    g_option_context_add_main_entries(context, entries, NULL);
    g_option_context_add_group(context, rs_topology_args_group_new());
    rs_cli_add_common_options(context);
    return context;
}

/* Applies the command-line overrides to the scenario. Returns FALSE with @error set. */
static gboolean
apply_overrides(RsScenario *s, GError **error)
{
    if (opt_model != NULL) {
        g_free(s->model);
        s->model = g_strdup(opt_model);
    }
    if (opt_dtype != NULL) {
        if (!rs_dtype_parse(opt_dtype, &s->dtype, error)) {
            g_prefix_error(error, "--dtype: ");
            return FALSE;
        }
        s->has_dtype = TRUE;
    }
    if (opt_mtp)
        s->include_mtp = TRUE;
    if (opt_topology != NULL) {
        g_free(s->topology);
        s->topology = g_strdup(opt_topology);
    }
    RsTopologyOverrides ov;
    if (!rs_topology_args_get(&ov, error))
        return FALSE;
    if (ov.n_nodes != 0)
        s->n_nodes = ov.n_nodes;
    ov.n_nodes = 0;
    s->topology_overrides = ov;
    if (opt_train != NULL) {
        RsConvention *conv = rs_convention_parse(opt_train, error);
        if (conv == NULL) {
            g_prefix_error(error, "--train: ");
            return FALSE;
        }
        rs_convention_free(s->train);
        s->train = conv;
    }
    if (opt_infer != NULL) {
        RsConvention *conv = rs_convention_parse(opt_infer, error);
        if (conv == NULL) {
            g_prefix_error(error, "--infer: ");
            return FALSE;
        }
        rs_convention_free(s->infer);
        s->infer = conv;
    }
    if (opt_train_gpus != NULL) {
        GArray *gpus;
        if (!rs_ranks_parse(opt_train_gpus, &gpus, error)) {
            g_prefix_error(error, "--train-gpus: ");
            return FALSE;
        }
        if (s->train_gpus)
            g_array_unref(s->train_gpus);
        s->train_gpus = gpus;
    }
    if (opt_infer_gpus != NULL) {
        GArray *gpus;
        if (!rs_ranks_parse(opt_infer_gpus, &gpus, error)) {
            g_prefix_error(error, "--infer-gpus: ");
            return FALSE;
        }
        if (s->infer_gpus)
            g_array_unref(s->infer_gpus);
        s->infer_gpus = gpus;
    }
    return TRUE;
}

/* "trace.csv" → "trace-direct.csv" when several strategies are simulated. */
static char *
strategy_path(const char *path, RsStrategy strategy, gboolean several)
{
    if (!several)
        return g_strdup(path);
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot == NULL || (slash != NULL && dot < slash))
        return g_strdup_printf("%s-%s", path, rs_strategy_get_name(strategy));
    return g_strdup_printf("%.*s-%s%s", (int)(dot - path), path, rs_strategy_get_name(strategy),
                           dot);
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

/* Writes the trace and link statistics files asked for, for one simulation. */
static gboolean
write_outputs(const RsFlowSimResult *flow, const RsTopology *topo, const char *trace_path,
              const char *links_path, const guint32 *ids, const char *scenario,
              const char *strategy, GError **error)
{
    if (trace_path != NULL) {
        g_autoptr(RsTrace) trace = rs_flow_sim_result_to_trace(flow, topo, ids);
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

/* `--messages FILE`: simulate an explicit message list on a topology. */
static int
run_messages(const char *cmd, const RsFlowSimOptions *fopt, gboolean use_flow, RsFormat format)
{
    g_autoptr(GError) error = NULL;
    if (!use_flow) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--messages: only the flow model simulates a message list");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    /* The topology: --topology, else the scenario's (with its node count). */
    g_autoptr(RsScenario) scenario = NULL;
    if (opt_topology == NULL) {
        g_autofree char *spath =
            rs_data_find("scenarios", opt_scenario ? opt_scenario : DEFAULT_SCENARIO, &error);
        if (spath == NULL || (scenario = rs_scenario_load_file(spath, &error)) == NULL)
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    RsTopologyOverrides ov;
    if (!rs_topology_args_get(&ov, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (ov.n_nodes == 0 && scenario != NULL)
        ov.n_nodes = scenario->n_nodes;
    g_autofree char *tpath =
        rs_data_find("topologies", opt_topology ? opt_topology : scenario->topology, &error);
    if (tpath == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsTopology) topo = rs_topology_load_file(tpath, &ov, &error);
    if (topo == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsTrace) trace = rs_trace_read_file(opt_messages, &error);
    if (trace == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    rs_cli_progress("simulating %u messages of %s on %s ...", rs_trace_get_n_rows(trace),
                    opt_messages, rs_topology_get_name(topo));
    g_autoptr(RsFlowSimResult) flow = rs_flow_sim_run_trace(trace, topo, fopt, &error);
    if (flow == NULL) {
        g_prefix_error(&error, "%s: ", opt_messages);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    g_autofree guint32 *ids = g_new(guint32, MAX(flow->n_messages, 1));
    for (guint i = 0; i < flow->n_messages; i++)
        ids[i] = rs_trace_get_row(trace, i)->message;
    if (!write_outputs(flow, topo, opt_trace, opt_link_stats, ids, NULL, NULL, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_replay(opt_messages, topo, flow, format, out);
    fputs(out->str, stdout);
    return RS_EXIT_OK;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "simulate";
    int code = RS_EXIT_OK;
    GOptionContext *context = make_context();
    gboolean go_on = rs_cli_parse(cmd, context, &argc, &argv, &code);
    g_option_context_free(context);
    if (!go_on)
        return code;

    g_autoptr(GError) error = NULL;
    RsFormat format = RS_FORMAT_TABLE;
    if (opt_format != NULL && !rs_format_parse(opt_format, &format, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    RsFlowSimOptions fopt;
    gboolean use_flow;
    if (!parse_flow_options(&fopt, &use_flow, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_messages != NULL)
        return run_messages(cmd, &fopt, use_flow, format);
    gboolean strategies[RS_STRATEGY_N];
    for (guint i = 0; i < RS_STRATEGY_N; i++)
        strategies[i] = opt_strategy == NULL || g_strcmp0(opt_strategy, "all") == 0;
    if (opt_strategy != NULL && g_strcmp0(opt_strategy, "all") != 0) {
        RsStrategy s;
        if (!rs_strategy_parse(opt_strategy, &s, &error))
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        strategies[s] = TRUE;
    }
    guint n_strategies = 0;
    for (guint i = 0; i < RS_STRATEGY_N; i++)
        n_strategies += strategies[i];

    g_autofree char *path =
        rs_data_find("scenarios", opt_scenario ? opt_scenario : DEFAULT_SCENARIO, &error);
    if (path == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsScenario) scenario = rs_scenario_load_file(path, &error);
    if (scenario == NULL || !apply_overrides(scenario, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);

    rs_cli_progress("resolving layouts of %s ...", scenario->name);
    RsScenarioBuild build;
    if (!rs_scenario_build(scenario, &build, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);

    g_autoptr(GArray) results = g_array_new(FALSE, TRUE, sizeof(RsStrategyResult));
    g_autoptr(GPtrArray) flows =
        g_ptr_array_new_with_free_func((GDestroyNotify)rs_flow_sim_result_free);
    RsSimulateReport report = {0};
    for (guint s = 0; s < RS_STRATEGY_N && code == RS_EXIT_OK; s++) {
        if (!strategies[s])
            continue;
        const char *name = rs_strategy_get_name((RsStrategy)s);
        rs_cli_progress("planning %s ...", name);
        g_autoptr(RsPlan) plan = rs_plan_build(build.refit, (RsStrategy)s, &error);
        if (plan == NULL) {
            code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
            break;
        }
        if (opt_check && !rs_plan_check(plan, build.refit, &error)) {
            code = rs_cli_fail(cmd, error, RS_EXIT_CHECK);
            break;
        }
        RsStrategyResult r = {.strategy = (RsStrategy)s, .n_transfers = rs_plan_get_n_transfers(plan)};
        if (!rs_cost_estimate(plan, build.topology, &r.cost, &error)) {
            code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
            break;
        }
        if (use_flow) {
            rs_cli_progress("simulating %s: %u messages ...", name, rs_plan_get_n_messages(plan));
            RsFlowSimResult *flow = rs_flow_sim_run(plan, build.topology, &fopt, &error);
            if (flow == NULL) {
                code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
                break;
            }
            g_ptr_array_add(flows, flow);
            r.flow = flow;
            g_autofree char *trace_path =
                opt_trace ? strategy_path(opt_trace, (RsStrategy)s, n_strategies > 1) : NULL;
            g_autofree char *links_path =
                opt_link_stats ? strategy_path(opt_link_stats, (RsStrategy)s, n_strategies > 1)
                               : NULL;
            if (!write_outputs(flow, build.topology, trace_path, links_path, NULL, scenario->name,
                               name, &error)) {
                code = rs_cli_fail(cmd, error, RS_EXIT_RUNTIME);
                break;
            }
        }
        g_array_append_val(results, r);
    }
    if (code == RS_EXIT_OK && !rs_lower_bound_compute(build.refit, build.topology, &report.bound,
                                                      &error))
        code = rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (code == RS_EXIT_OK) {
        g_autofree char *train_desc = rs_convention_format(scenario->train);
        g_autofree char *infer_desc = rs_convention_format(scenario->infer);
        g_autofree char *train_gpus = rs_ranks_format((const guint32 *)scenario->train_gpus->data,
                                                      scenario->train_gpus->len);
        g_autofree char *infer_gpus = rs_ranks_format((const guint32 *)scenario->infer_gpus->data,
                                                      scenario->infer_gpus->len);
        report.scenario_name = scenario->name;
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
        g_autoptr(GString) out = g_string_new(NULL);
        rs_report_simulate(&report, format, out);
        fputs(out->str, stdout);
    }
    rs_scenario_build_clear(&build);
    return code;
}

const RsCommand rs_command_simulate = {
    "simulate",
    "Simulate a refit with each strategy and state the lower bound",
    run,
    make_context,
};

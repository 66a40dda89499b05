/* cmd-simulate.c — `reshard simulate`: plan a refit with each strategy and estimate it.
 *
 * Loads a scenario (the shipped default unless --scenario), applies the overriding flags,
 * resolves layouts, builds a plan per strategy, estimates each on the topology, computes
 * the lower bound, and prints the comparison. */
#include "cli/cli.h"

#include "analysis/report.h"
#include "cli/scenario-args.h"
#include "sim/cost.h"
#include "sim/data.h"
#include "sim/plan.h"
#include "sim/scenario.h"

#include <stdio.h>

#define DEFAULT_SCENARIO "deepseek-v3-h100"

static char *opt_scenario;
static char *opt_model;
static char *opt_dtype;
static char *opt_infer_dtype;
static gboolean opt_mtp;
static gboolean opt_stored;
static char *opt_topology;
static gint opt_nodes;
static char *opt_train;
static char *opt_train_gpus;
static char *opt_infer;
static char *opt_infer_gpus;
static char *opt_strategy;
static char *opt_format;
static gboolean opt_check;
static gint opt_scale;
static char *opt_layers;

static GOptionEntry entries[] = {
    {"scenario", 's', 0, G_OPTION_ARG_STRING, &opt_scenario,
     "Scenario name or file (default " DEFAULT_SCENARIO ")", "NAME|FILE"},
    {"model", 'm', 0, G_OPTION_ARG_STRING, &opt_model,
     "Model name or file (model YAML, config.json, .safetensors, .safetensors.index.json)",
     "NAME|FILE"},
    {"dtype", 0, 0, G_OPTION_ARG_STRING, &opt_dtype, "dtype of the weights moved (bf16, f32, ...)",
     "DTYPE"},
    {"mtp", 0, 0, G_OPTION_ARG_NONE, &opt_mtp, "Include multi-token-prediction layers", NULL},
    {"infer-dtype", 0, 0, G_OPTION_ARG_STRING, &opt_infer_dtype,
     "dtype of the inference weights (fp8-e4m3, mxfp4: converted at the source, with block "
     "scales)",
     "DTYPE"},
    {"stored", 0, 0, G_OPTION_ARG_NONE, &opt_stored,
     "Move the weights as the checkpoint stores them (FP8 + block scales, MXFP4)", NULL},
    {"topology", 't', 0, G_OPTION_ARG_STRING, &opt_topology, "Topology name or file",
     "NAME|FILE"},
    {"nodes", 'n', 0, G_OPTION_ARG_INT, &opt_nodes, "Number of nodes of the topology", "N"},
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
     "Verify every plan with the invariant checker and the fused buffers (exit 3 when wrong)",
     NULL},
    {"scale", 0, 0, G_OPTION_ARG_INT, &opt_scale,
     "Divide hidden, intermediate, vocabulary and expert widths by F (as reshard run)", "F"},
    {"layers", 0, 0, G_OPTION_ARG_STRING, &opt_layers,
     "Only decoder layers A to B, no embedding or head (as reshard run)", "A-B"},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    GOptionContext *context = g_option_context_new("- estimate a refit with each strategy");
    g_option_context_set_summary(
        context, "Plans the refit of a scenario (model, topology, training and inference\n"
                 "layouts) with each strategy, estimates its time on the topology and\n"
                 "prints bytes moved, the busiest GPU and NIC, the estimate, the lower\n"
                 "bound and the efficiency. Flags override the scenario's parts.");
    g_option_context_set_description(
        context, "Examples:\n"
                 "  reshard simulate\n"
                 "  reshard simulate --infer vllm:tp=16 --format json\n"
                 "  reshard simulate --model llama-3.1-8b --nodes 2 --train megatron:tp=2,pp=2 "
                 "--train-gpus 0-7 --infer vllm:tp=4 --infer-gpus 8-15\n");
    g_option_context_add_main_entries(context, entries, NULL);
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
    if (opt_infer_dtype != NULL) {
        if (!rs_dtype_parse(opt_infer_dtype, &s->infer_dtype, error)) {
            g_prefix_error(error, "--infer-dtype: ");
            return FALSE;
        }
        s->has_infer_dtype = TRUE;
    }
    if (opt_mtp)
        s->include_mtp = TRUE;
    if (opt_stored)
        s->stored = TRUE;
    if (opt_topology != NULL) {
        g_free(s->topology);
        s->topology = g_strdup(opt_topology);
    }
    if (opt_nodes != 0) {
        if (opt_nodes < 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--nodes: must be positive, not %d", opt_nodes);
            return FALSE;
        }
        s->n_nodes = (guint)opt_nodes;
    }
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
    return rs_scenario_apply_variant(s, opt_scale, opt_layers, error);
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
    gboolean strategies[RS_STRATEGY_N];
    for (guint i = 0; i < RS_STRATEGY_N; i++)
        strategies[i] = opt_strategy == NULL || g_strcmp0(opt_strategy, "all") == 0;
    if (opt_strategy != NULL && g_strcmp0(opt_strategy, "all") != 0) {
        RsStrategy s;
        if (!rs_strategy_parse(opt_strategy, &s, &error))
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        strategies[s] = TRUE;
    }

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

    if (opt_check && !rs_refit_check_buffers(build.refit, &error)) {
        code = rs_cli_fail(cmd, error, RS_EXIT_CHECK);
        rs_scenario_build_clear(&build);
        return code;
    }
    g_autoptr(GArray) results = g_array_new(FALSE, TRUE, sizeof(RsStrategyResult));
    RsSimulateReport report = {0};
    for (guint s = 0; s < RS_STRATEGY_N && code == RS_EXIT_OK; s++) {
        if (!strategies[s])
            continue;
        rs_cli_progress("planning %s ...", rs_strategy_get_name((RsStrategy)s));
        RsPlanOptions plan_options;
        rs_plan_options_init(&plan_options, build.topology);
        plan_options.domain_relays = g_getenv("RS_RELAYS") != NULL;
        g_autoptr(RsPlan) plan =
            rs_plan_build_full(build.refit, (RsStrategy)s, &plan_options, &error);
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
        g_autoptr(GString) out = g_string_new(NULL);
        rs_report_simulate(&report, format, out);
        fputs(out->str, stdout);
    }
    rs_scenario_build_clear(&build);
    return code;
}

const RsCommand rs_command_simulate = {
    "simulate",
    "Estimate a refit with each strategy and state the lower bound",
    run,
    make_context,
};

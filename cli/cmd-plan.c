/* cmd-plan.c — `reshard plan`: the transfers of a refit, one tensor given by its source and
 * destination layouts (the single-tensor flags twice) or a model's tensors under two
 * conventions. The report is rs_report_plan() (analysis/report.h).
 *
 * Model mode (a scenario or the model flags) builds its refit and topology through
 * rs_scenario_build(), as `reshard simulate` and `reshard run` do, and plans on that
 * topology. Single-tensor mode builds a one-tensor refit (rs_tensor_args_build_refit: a
 * scenario names a model, not a tensor) and plans on --topology; without it, node-aware and
 * hierarchical plan on DEFAULT_TOPOLOGY (they route over NVLink domains and NICs), and
 * gather-broadcast and direct, which use no topology, on none. */
#include "cli/cli.h"
#include "cli/model-args.h"

#include "analysis/report.h"
#include "cli/scenario-args.h"
#include "cli/tensor-args.h"
#include "cli/topology-args.h"
#include "base/dtype.h"
#include "plan/plan.h"

#include <stdio.h>
#include <string.h>

/* The topology of a plan when neither a scenario nor --topology names one. */
#define DEFAULT_TOPOLOGY "dgx-h100"

static RsScenarioArgs sargs;
static char *opt_tensor;
static char *opt_strategy;
static char *opt_format;
static gboolean opt_check;
static RsTensorArgs targs;

static GOptionEntry entries[] = {
    {"tensor", 0, 0, G_OPTION_ARG_STRING, &opt_tensor,
     "List only this tensor's (or fused buffer's) transfers; the byte totals then cover them "
     "alone",
     "NAME"},
    {"strategy", 0, 0, G_OPTION_ARG_STRING, &opt_strategy,
     NULL /* rs_cli_strategy_help(), set by make_context() */, "NAME"},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table, csv or json (default table)",
     "FORMAT"},
    {"check", 0, 0, G_OPTION_ARG_NONE, &opt_check,
     "Verify the plan and the fused buffers (exit 3 when wrong)", NULL},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    rs_cli_set_strategy_help(entries, FALSE, "default direct");
    GOptionContext *context = g_option_context_new("- list the transfers of a reshard");
    g_option_context_set_summary(
        context,
        "Plans a reshard and prints every transfer: source rank, destination rank, the\n"
        "global box it carries and its bytes (in the destination dtype: conversions happen\n"
        "once, at the source). Transfers with source = destination are local copies,\n"
        "counted apart from the bytes moved between ranks. A model's refit (a scenario, or\n"
        "--model with --train and --infer) is planned on its topology (--topology, default\n"
        DEFAULT_TOPOLOGY "), as reshard simulate plans it.");
    g_option_context_set_description(
        context,
        "Examples:\n"
        "  reshard plan --shape 200x200 --dtype bf16 --src-mesh 2 --src-placements \"S(0)\" \\\n"
        "      --dst-mesh 4 --dst-placements \"S(1)\" --dst-ranks 2-5\n"
        "  reshard plan --shape 4x1 --src-mesh 2x2 --src-placements \"SS(0,2),S(0)\" \\\n"
        "      --dst-mesh 2x2 --dst-placements R,R --format json\n"
        "  reshard plan --shape 8x4 --src-mesh 1 --src-placements R --src-ranks 0 \\\n"
        "      --dst-mesh 1 --dst-placements R --dst-ranks 1 --dtype f32 --dst-dtype bf16\n"
        "  reshard plan --model llama-3.1-8b --train megatron:tp=2,pp=2 --infer vllm:tp=4 \\\n"
        "      --tensor model.layers.0.self_attn.qkv_proj.weight\n");
    g_option_context_add_main_entries(context, entries, NULL);
    g_option_context_add_group(context, rs_scenario_args_make_group(&sargs));
    g_option_context_add_group(context, rs_topology_args_group_new());
    g_option_context_add_group(context, rs_tensor_args_make_group(&targs));
    rs_cli_add_common_options(context);
    return context;
}

/* Which refit tensors to list: all, or those named @name (or in buffer @name). */
static gboolean *
select_tensors(const RsRefit *refit, const char *name, GError **error)
{
    guint n = rs_refit_get_n_tensors(refit);
    gboolean *keep = g_new0(gboolean, MAX(n, 1));
    gboolean any = FALSE;
    for (guint i = 0; i < n; i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        keep[i] = name == NULL || strcmp(t->name, name) == 0 ||
                  g_strcmp0(t->src_buffer, name) == 0 || g_strcmp0(t->dst_buffer, name) == 0;
        any = any || keep[i];
    }
    if (!any) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--tensor: no tensor or fused buffer named \"%s\"", name);
        g_free(keep);
        return NULL;
    }
    return keep;
}

/* The work to plan: a refit, the topology it is planned on, and its description. */
typedef struct {
    RsScenarioBuild build; /* model mode */
    RsRefit *own_refit;    /* single-tensor mode */
    RsTopology *own_topology;
    const RsRefit *refit;
    const RsTopology *topology; /* nullable */
    GString *header;
} Work;

static void
work_clear(Work *w)
{
    rs_scenario_build_clear(&w->build);
    rs_refit_free(w->own_refit);
    rs_topology_free(w->own_topology);
    if (w->header)
        g_string_free(w->header, TRUE);
}

static gboolean
load_model_work(Work *w, GError **error)
{
    g_autoptr(RsScenario) scenario =
        rs_scenario_args_load_model(&sargs, DEFAULT_TOPOLOGY, NULL, error);
    if (scenario == NULL || !rs_scenario_build(scenario, &w->build, error))
        return FALSE;
    rs_cli_print_model_warnings("plan", w->build.model);
    rs_cli_print_topology_warnings(w->build.topology);
    w->refit = w->build.refit;
    w->topology = w->build.topology;
    g_autofree char *train = rs_convention_format(scenario->train);
    g_autofree char *infer = rs_convention_format(scenario->infer);
    g_autofree char *tg = rs_ranks_format((const guint32 *)scenario->train_gpus->data,
                                          scenario->train_gpus->len);
    g_autofree char *ig = rs_ranks_format((const guint32 *)scenario->infer_gpus->data,
                                          scenario->infer_gpus->len);
    g_autofree char *topo = rs_topology_format_summary(w->topology);
    g_string_append_printf(w->header,
                           "model     %s, %u tensors\nsource    %s on GPUs %s\n"
                           "dest      %s on GPUs %s\ntopology  %s\n",
                           rs_model_get_name(w->build.model), rs_model_get_n_tensors(w->build.model),
                           train, tg, infer, ig, topo);
    return TRUE;
}

static gboolean
needs_topology(RsStrategy strategy)
{
    return strategy != RS_STRATEGY_DIRECT && strategy != RS_STRATEGY_GATHER_BROADCAST &&
           strategy != RS_STRATEGY_RDMA_P2P;
}

static gboolean
load_tensor_work(Work *w, RsStrategy strategy, GError **error)
{
    w->own_refit = rs_tensor_args_build_refit(&targs, error);
    if (w->own_refit == NULL)
        return FALSE;
    w->refit = w->own_refit;
    if (sargs.topology != NULL || needs_topology(strategy)) {
        w->own_topology =
            rs_topology_args_load(sargs.topology ? sargs.topology : DEFAULT_TOPOLOGY, error);
        if (w->own_topology == NULL) {
            g_prefix_error(error, "--topology: ");
            return FALSE;
        }
        w->topology = w->own_topology;
    }
    const RsRefitTensor *t = rs_refit_get_tensor(w->refit, 0);
    g_autofree char *src = rs_layout_format(t->src);
    g_autofree char *dst = rs_layout_format(t->dst);
    g_string_append_printf(w->header, "tensor    %s, %s on the source, %s on the wire", targs.shape,
                           rs_dtype_get_name(t->src_dtype), rs_dtype_get_name(t->dtype));
    if (t->load_dtype != t->dtype)
        g_string_append_printf(w->header,
                               " (no source rank holds a %s block whole: the destination "
                               "quantises to %s on load)",
                               rs_dtype_get_name(t->load_dtype), rs_dtype_get_name(t->load_dtype));
    g_string_append_printf(w->header, "\nsource    %s\ndest      %s\n", src, dst);
    if (w->topology != NULL) {
        g_autofree char *topo = rs_topology_format_summary(w->topology);
        g_string_append_printf(w->header, "topology  %s\n", topo);
    }
    return TRUE;
}

static gboolean
load_work(Work *w, RsStrategy strategy, GError **error)
{
    memset(w, 0, sizeof *w);
    w->header = g_string_new(NULL);
    if (rs_scenario_args_is_set(&sargs) && rs_tensor_args_is_set(&targs)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "give either --model (with --train and --infer) or the single-tensor "
                    "flags, not both");
        return FALSE;
    }
    if (rs_scenario_args_is_set(&sargs))
        return load_model_work(w, error);
    return load_tensor_work(w, strategy, error);
}

/* Plans @w on its topology, checks it when asked, and prints it. */
static int
plan_work(const char *cmd, const Work *w, RsStrategy strategy, RsFormat format)
{
    g_autoptr(GError) error = NULL;
    g_autofree gboolean *keep = select_tensors(w->refit, opt_tensor, &error);
    if (keep == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    RsPlanOptions options;
    rs_plan_options_init(&options, w->topology);
    g_autoptr(RsPlan) plan = rs_plan_build_full(w->refit, strategy, &options, &error);
    if (plan == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_check &&
        (!rs_refit_check_buffers(w->refit, &error) || !rs_plan_check(plan, w->refit, &error)))
        return rs_cli_fail(cmd, error, RS_EXIT_CHECK);
    if (opt_check)
        rs_cli_progress("check passed: %u transfers; fused buffers consistent; every "
                        "destination element received once, from a holder or an earlier relay",
                        rs_plan_get_n_transfers(plan));
    RsPlanReport report = {plan, w->refit, keep, w->topology, w->header->str};
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_plan(&report, format, out);
    fputs(out->str, stdout);
    return RS_EXIT_OK;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "plan";
    int code = RS_EXIT_OK;
    if (!rs_cli_parse(cmd, make_context, &argc, &argv, &code))
        return code;
    g_autoptr(GError) error = NULL;
    RsFormat format;
    if (!rs_cli_parse_format(opt_format, &format, &error) ||
        !rs_scenario_args_check_no_memory(&sargs, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    RsStrategy strategy = RS_STRATEGY_DIRECT;
    if (opt_strategy != NULL && !rs_strategy_parse(opt_strategy, &strategy, &error)) {
        g_prefix_error(&error, "--strategy: ");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    Work w;
    if (!load_work(&w, strategy, &error)) {
        work_clear(&w);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    code = plan_work(cmd, &w, strategy, format);
    work_clear(&w);
    return code;
}

const RsCommand rs_command_plan = {
    "plan",
    "List the transfers of a reshard (one tensor, or a model between two conventions)",
    run,
    make_context,
};

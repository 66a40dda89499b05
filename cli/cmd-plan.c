/* cmd-plan.c — `reshard plan`: the transfers of a refit, one tensor given by its source and
 * destination layouts (the single-tensor flags twice) or a model's tensors under two
 * conventions. The JSON form has bytes_moved, local_bytes and transfers[] with tensor,
 * src, dst, phase, lo, hi, step and bytes. */
#include "cli/cli.h"

#include "analysis/report.h"
#include "cli/model-args.h"
#include "cli/tensor-args.h"
#include "base/dtype.h"
#include "plan/plan.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

static char *opt_model;
static char *opt_train;
static char *opt_train_gpus;
static char *opt_infer;
static char *opt_infer_gpus;
static char *opt_infer_dtype;
static char *opt_tensor;
static gboolean opt_mtp;
static char *opt_strategy;
static char *opt_format;
static gboolean opt_check;
static RsTensorArgs targs;

static GOptionEntry entries[] = {
    {"model", 'm', 0, G_OPTION_ARG_STRING, &opt_model, "Model name or file", "NAME|FILE"},
    {"train", 0, 0, G_OPTION_ARG_STRING, &opt_train, "Training convention (source)", "SPEC"},
    {"train-gpus", 0, 0, G_OPTION_ARG_STRING, &opt_train_gpus,
     "GPUs of the training ranks (default 0..N-1)", "RANGES"},
    {"infer", 0, 0, G_OPTION_ARG_STRING, &opt_infer, "Inference convention (destination)", "SPEC"},
    {"infer-gpus", 0, 0, G_OPTION_ARG_STRING, &opt_infer_gpus,
     "GPUs of the inference ranks (default: right after the training GPUs)", "RANGES"},
    {"infer-dtype", 0, 0, G_OPTION_ARG_STRING, &opt_infer_dtype,
     "dtype of the inference weights (converted at the source)", "DTYPE"},
    {"tensor", 't', 0, G_OPTION_ARG_STRING, &opt_tensor,
     "List only this tensor's (or fused buffer's) transfers; the byte totals then cover them "
     "alone",
     "NAME"},
    {"mtp", 0, 0, G_OPTION_ARG_NONE, &opt_mtp, "Include multi-token-prediction layers", NULL},
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
        "counted apart from the bytes moved between ranks.");
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
    g_option_context_add_group(context, rs_tensor_args_make_group(&targs));
    rs_cli_add_common_options(context);
    return context;
}

static void
append_ints(GString *s, const gint64 *v, guint n, const char *sep)
{
    for (guint d = 0; d < n; d++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? sep : "", v[d]);
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

static void
print_plan(const RsPlan *plan, const RsRefit *refit, const gboolean *keep, RsFormat format,
           const char *header)
{
    guint64 moved = 0, local = 0;
    guint n_listed = 0;
    for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, i);
        if (!keep[tr->tensor_idx])
            continue;
        n_listed++;
        if (tr->src != tr->dst)
            moved += tr->size_bytes;
        else
            local += tr->size_bytes;
    }
    const char *strategy = rs_strategy_get_name(rs_plan_get_strategy(plan));
    if (format == RS_FORMAT_JSON) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "strategy");
        json_builder_add_string_value(b, strategy);
        json_builder_set_member_name(b, "bytes_moved");
        json_builder_add_int_value(b, (gint64)moved);
        json_builder_set_member_name(b, "local_bytes");
        json_builder_add_int_value(b, (gint64)local);
        json_builder_set_member_name(b, "transfers");
        json_builder_begin_array(b);
        for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++) {
            const RsTransfer *tr = rs_plan_get_transfer(plan, i);
            if (!keep[tr->tensor_idx])
                continue;
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "tensor");
            json_builder_add_string_value(b, rs_refit_get_tensor(refit, tr->tensor_idx)->name);
            json_builder_set_member_name(b, "src");
            json_builder_add_int_value(b, tr->src);
            json_builder_set_member_name(b, "dst");
            json_builder_add_int_value(b, tr->dst);
            json_builder_set_member_name(b, "phase");
            json_builder_add_int_value(b, tr->phase);
            const char *keys[3] = {"lo", "hi", "step"};
            const gint64 *vals[3] = {tr->box.lo, tr->box.hi, tr->box.step};
            for (guint j = 0; j < 3; j++) {
                json_builder_set_member_name(b, keys[j]);
                json_builder_begin_array(b);
                for (guint d = 0; d < tr->box.n_dims; d++)
                    json_builder_add_int_value(b, vals[j][d]);
                json_builder_end_array(b);
            }
            json_builder_set_member_name(b, "bytes");
            json_builder_add_int_value(b, (gint64)tr->size_bytes);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
        g_autoptr(GString) text = g_string_new(NULL);
        rs_report_json_append_full(b, FALSE, text);
        fputs(text->str, stdout);
        return;
    }
    if (format == RS_FORMAT_CSV) {
        printf("phase,src,dst,tensor,lo,hi,step,bytes,local\n");
        for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++) {
            const RsTransfer *tr = rs_plan_get_transfer(plan, i);
            if (!keep[tr->tensor_idx])
                continue;
            g_autoptr(GString) s = g_string_new(NULL);
            g_string_append_printf(s, "%u,%u,%u,%s,", tr->phase, tr->src, tr->dst,
                                   rs_refit_get_tensor(refit, tr->tensor_idx)->name);
            append_ints(s, tr->box.lo, tr->box.n_dims, ";");
            g_string_append_c(s, ',');
            append_ints(s, tr->box.hi, tr->box.n_dims, ";");
            g_string_append_c(s, ',');
            append_ints(s, tr->box.step, tr->box.n_dims, ";");
            g_string_append_printf(s, ",%" G_GUINT64_FORMAT ",%d", tr->size_bytes,
                                   tr->src == tr->dst);
            printf("%s\n", s->str);
        }
        return;
    }
    fputs(header, stdout);
    printf("strategy  %s: %u transfers listed, %u phase(s)\n", strategy, n_listed,
           rs_plan_get_n_phases(plan));
    printf("moved     %" G_GUINT64_FORMAT " bytes between ranks, %" G_GUINT64_FORMAT
           " bytes of local copies\n\n",
           moved, local);
    guint name_width = 6;
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++)
        if (keep[i])
            name_width = MAX(name_width, strlen(rs_refit_get_tensor(refit, i)->name));
    printf("%-5s  %-6s  %-6s  %-*s  %-34s  %12s  %s\n", "phase", "src", "dst", name_width, "tensor",
           "box (global lo:hi[:step] per dim)", "bytes", "kind");
    for (guint i = 0; i < rs_plan_get_n_transfers(plan); i++) {
        const RsTransfer *tr = rs_plan_get_transfer(plan, i);
        if (!keep[tr->tensor_idx])
            continue;
        g_autofree char *box = rs_box_format(&tr->box);
        const char *kind = tr->src == tr->dst                     ? "local copy"
                           : (tr->flags & RS_TRANSFER_TO_STAGING) ? "to staging"
                                                                  : "network";
        printf("%-5u  %-6u  %-6u  %-*s  %-34s  %12" G_GUINT64_FORMAT "  %s\n", tr->phase, tr->src,
               tr->dst, name_width, rs_refit_get_tensor(refit, tr->tensor_idx)->name, box,
               tr->size_bytes, kind);
    }
}

/* The model-mode refit; @header gets the description. */
static RsRefit *
build_model_refit(GString *header, GError **error)
{
    if (opt_train == NULL || opt_infer == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--model needs --train and --infer");
        return NULL;
    }
    RsRefitDtypes dtypes = {FALSE, RS_DTYPE_BF16};
    if (opt_infer_dtype != NULL) {
        if (!rs_dtype_parse(opt_infer_dtype, &dtypes.dst_dtype, error)) {
            g_prefix_error(error, "--infer-dtype: ");
            return NULL;
        }
        dtypes.has_dst_dtype = TRUE;
    }
    g_autoptr(RsModel) model = rs_cli_load_model(opt_model, opt_mtp, error);
    if (model == NULL)
        return NULL;
    g_autoptr(RsConvention) train = NULL, infer = NULL;
    g_autoptr(GArray) train_gpus = NULL, infer_gpus = NULL;
    RsConventionResult src, dst;
    if (!rs_cli_resolve_side("--train", opt_train, "--train-gpus", opt_train_gpus, 0, model, &train,
                             &train_gpus, &src, error))
        return NULL;
    guint32 next = 0;
    for (guint i = 0; i < train_gpus->len; i++)
        next = MAX(next, g_array_index(train_gpus, guint32, i) + 1);
    if (!rs_cli_resolve_side("--infer", opt_infer, "--infer-gpus", opt_infer_gpus, next, model,
                             &infer, &infer_gpus, &dst, error)) {
        rs_convention_result_clear(&src);
        return NULL;
    }
    RsRefit *refit = rs_refit_new_from_model_full(model, src.layouts, src.buffers, dst.layouts,
                                                  dst.buffers, &dtypes, error);
    g_autofree char *train_text = rs_convention_format(train);
    g_autofree char *infer_text = rs_convention_format(infer);
    g_autofree char *tg = rs_ranks_format((const guint32 *)train_gpus->data, train_gpus->len);
    g_autofree char *ig = rs_ranks_format((const guint32 *)infer_gpus->data, infer_gpus->len);
    g_string_append_printf(header,
                           "model     %s, %u tensors\nsource    %s on GPUs %s\n"
                           "dest      %s on GPUs %s\n",
                           rs_model_get_name(model), rs_model_get_n_tensors(model), train_text, tg,
                           infer_text, ig);
    rs_convention_result_clear(&src);
    rs_convention_result_clear(&dst);
    return refit;
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
    if (!rs_cli_parse_format(opt_format, &format, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    RsStrategy strategy = RS_STRATEGY_DIRECT;
    if (opt_strategy != NULL && !rs_strategy_parse(opt_strategy, &strategy, &error)) {
        g_prefix_error(&error, "--strategy: ");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    if (opt_model != NULL && rs_tensor_args_is_set(&targs)) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "give either --model (with --train and --infer) or the single-tensor "
                    "flags, not both");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    g_autoptr(GString) header = g_string_new(NULL);
    g_autoptr(RsRefit) refit = NULL;
    if (opt_model != NULL) {
        refit = build_model_refit(header, &error);
    } else {
        refit = rs_tensor_args_build_refit(&targs, &error);
        if (refit != NULL) {
            const RsRefitTensor *t = rs_refit_get_tensor(refit, 0);
            g_autofree char *src = rs_layout_format(t->src);
            g_autofree char *dst = rs_layout_format(t->dst);
            g_string_append_printf(header,
                                   "tensor    %s, %s on the source, %s on the wire\n"
                                   "source    %s\ndest      %s\n",
                                   targs.shape, rs_dtype_get_name(t->src_dtype),
                                   rs_dtype_get_name(t->dtype), src, dst);
        }
    }
    if (refit == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autofree gboolean *keep = select_tensors(refit, opt_tensor, &error);
    if (keep == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    g_autoptr(RsPlan) plan = rs_plan_build(refit, strategy, &error);
    if (plan == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_check &&
        (!rs_refit_check_buffers(refit, &error) || !rs_plan_check(plan, refit, &error)))
        return rs_cli_fail(cmd, error, RS_EXIT_CHECK);
    if (opt_check)
        rs_cli_progress("check passed: %u transfers; fused buffers consistent; every "
                        "destination element received once, from a holder or an earlier relay",
                        rs_plan_get_n_transfers(plan));
    print_plan(plan, refit, keep, format, header->str);
    return RS_EXIT_OK;
}

const RsCommand rs_command_plan = {
    "plan",
    "List the transfers of a reshard (one tensor, or a model between two conventions)",
    run,
    make_context,
};

/* cmd-layout.c — `reshard layout`: every rank's boxes of one tensor, as global index ranges
 * with their offsets in the rank's local buffer.
 *
 * Two modes: a model tensor (or a fused buffer, listing the boxes of every tensor in it)
 * under a convention, or one tensor given by shape, mesh and placements. The report is
 * rs_report_layout() (analysis/report.h).
 *
 * The model mode lays out one side, a convention on its GPUs: a scenario with that one
 * side, resolved by rs_scenario_build_side() (layout/scenario.h), the same code that
 * loads the model and resolves each side for simulate, plan and run. */
#include "cli/cli.h"
#include "cli/topology-args.h"

#include "analysis/report.h"
#include "cli/model-args.h"
#include "cli/tensor-args.h"
#include "layout/refit.h"
#include "layout/scenario.h"
#include "base/box.h"
#include "base/dtype.h"

#include <stdio.h>
#include <string.h>

/* The most ranks `layout` numbers 0..N-1 itself (a convention's sizes go to 2^24 each). */
#define RS_LAYOUT_ARGS_MAX_GPUS (1u << 20)

static char *opt_model;
static char *opt_train;
static char *opt_infer;
static char *opt_infer_dtype;
static char *opt_gpus;
static char *opt_tensor;
static char *opt_rank; /* an integer >= 0, as text (rs_cli_parse_int) */
static gint64 rank_only = -1; /* --rank; -1: every rank */
static gboolean opt_mtp;
static char *opt_format;
static RsTensorArgs targs;

static GOptionEntry entries[] = {
    {"model", 'm', 0, G_OPTION_ARG_STRING, &opt_model, "Model name or file", "NAME|FILE"},
    {"train", 0, 0, G_OPTION_ARG_STRING, &opt_train,
     "A training convention, e.g. megatron:tp=2,pp=2 or fsdp2:dp=4", "SPEC"},
    {"infer", 0, 0, G_OPTION_ARG_STRING, &opt_infer,
     "An inference convention, e.g. vllm:tp=4 or sglang:tp=8,dp=2,dp-attention", "SPEC"},
    {"infer-dtype", 0, 0, G_OPTION_ARG_STRING, &opt_infer_dtype,
     "With --infer: the dtype the engine serves (vllm lays gpt-oss's mxfp4 experts out in "
     "whole blocks)",
     "DTYPE"},
    {"gpus", 0, 0, G_OPTION_ARG_STRING, &opt_gpus,
     "GPUs of the convention's ranks (default 0..N-1)", "RANGES"},
    {"tensor", 't', 0, G_OPTION_ARG_STRING, &opt_tensor,
     "A model tensor, a fused buffer (all its tensors), or one routed expert's checkpoint "
     "name (model.layers.3.mlp.experts.5.down_proj.weight: expert 5 of the stacked tensor)",
     "NAME"},
    {"rank", 'r', 0, G_OPTION_ARG_STRING, &opt_rank, "Only this rank (GPU)", "R"},
    {"mtp", 0, 0, G_OPTION_ARG_NONE, &opt_mtp, "Include multi-token-prediction layers", NULL},
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table, csv or json (default table)",
     "FORMAT"},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    GOptionContext *context = g_option_context_new("- show every rank's boxes of one tensor");
    g_option_context_set_summary(
        context, "Resolves one tensor's layout to explicit boxes: for each rank, the global index\n"
                 "ranges it holds (lo:hi, with :step for strided runs) and where each sits in the\n"
                 "rank's local buffer (offset in elements). A model tensor is laid out as the\n"
                 "convention lays it out (fused buffers, vocabulary padding, experts, pipeline\n"
                 "stages); a fused buffer's name lists the boxes of all its tensors.");
    g_option_context_set_description(
        context,
        "Examples:\n"
        "  reshard layout --model llama-3.1-8b --train megatron:tp=2,pp=2 \\\n"
        "      --tensor model.layers.0.self_attn.q_proj.weight --rank 1\n"
        "  reshard layout --model llama-3.1-8b --infer vllm:tp=4 \\\n"
        "      --tensor model.layers.0.self_attn.qkv_proj.weight\n"
        "  reshard layout --model deepseek-v3 --train megatron:pp=16,ep=16,dp=16 \\\n"
        "      --tensor model.layers.3.mlp.experts.5.down_proj.weight\n"
        "  reshard layout --shape 200x200 --dtype bf16 --mesh 2x2 --placements \"S(0),R\"\n"
        "  reshard layout --shape 4x1 --mesh 2x2 --placements \"SS(0,2),S(0)\" --format json\n"
        "  reshard layout --shape 144x4 --mesh 8 --placements \"S(0)\" --fused qkv:128,8\n");
    g_option_context_add_main_entries(context, entries, NULL);
    g_option_context_add_group(context, rs_tensor_args_make_layout_group(&targs));
    rs_cli_add_common_options(context);
    return context;
}

/* Prints the boxes of @layouts (rs_report_layout()). */
static void
print_ranks(const RsLayout *const *layouts, const char *const *names, guint n, gint64 expert,
            RsFormat format, const char *header)
{
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_layout(layouts, names, n, rank_only, expert, header, format, out);
    fputs(out->str, stdout);
}

/* The part of @stacked (a stacked expert tensor's layout, dim 0 the expert) that holds
 * expert @expert: the ranks holding any of it, each with its buffer, and each box cut to
 * that expert's rows at the same buffer positions (a box's element k sits at its first
 * element's position + k in every dim, rs_layout_builder_add_box()). Returns: (transfer
 * full), or NULL on error. */
static RsLayout *
expert_layout(const RsLayout *stacked, gint64 expert, GError **error)
{
    guint n_dims = rs_layout_get_n_dims(stacked);
    const gint64 *shape = rs_layout_get_shape(stacked);
    RsBox want;
    rs_box_init_full(&want, n_dims, shape);
    want.lo[0] = expert;
    want.hi[0] = expert + 1;
    g_autoptr(RsLayoutBuilder) b = rs_layout_builder_new(n_dims, shape);
    g_autoptr(GArray) holders = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint i = 0; i < rs_layout_get_n_ranks(stacked); i++) {
        const gint64 *buffer = rs_layout_get_buffer_shape(stacked, i);
        gboolean added = FALSE;
        guint n;
        const RsLocalBox *lb = rs_layout_get_boxes(stacked, i, &n);
        for (guint k = 0; k < n; k++) {
            RsBox part;
            if (!rs_box_intersect(&lb[k].box, &want, &part))
                continue;
            /* The box's first element in buffer coordinates, then the part's. */
            gint64 position[RS_MAX_DIMS];
            rs_local_box_get_position(stacked, i, &lb[k], position);
            for (guint d = 0; d < n_dims; d++)
                position[d] += (part.lo[d] - lb[k].box.lo[d]) / lb[k].box.step[d];
            if (!added) {
                guint32 rank = rs_layout_get_rank(stacked, i);
                rs_layout_builder_add_rank(b, rank, buffer);
                g_array_append_val(holders, rank);
            }
            added = TRUE;
            rs_layout_builder_add_box(b, &part, position);
        }
    }
    g_autofree char *text = rs_layout_format(stacked);
    g_autofree char *held = rs_ranks_format((const guint32 *)holders->data, holders->len);
    g_autofree char *desc =
        g_strdup_printf("expert %" G_GINT64_FORMAT " (dim 0) of %s; held by rank%s %s", expert,
                        text, holders->len == 1 ? "" : "s", held);
    rs_layout_builder_set_description(b, desc);
    return rs_layout_builder_finish(g_steal_pointer(&b), error); /* (consumes it) */
}

/* --rank must name one of @ranks (guint32), the layout's GPUs. */
static gboolean
check_rank(GArray *ranks, GError **error)
{
    for (guint i = 0; i < ranks->len; i++)
        if (g_array_index(ranks, guint32, i) == (guint32)rank_only)
            return TRUE;
    g_autofree char *text = rs_ranks_format((const guint32 *)ranks->data, ranks->len);
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--rank %" G_GINT64_FORMAT ": not in the layout, whose ranks are %s", rank_only,
                text);
    return FALSE;
}

static int
run_single(const char *cmd, RsFormat format)
{
    g_autoptr(GError) error = NULL;
    if (targs.shape == NULL) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--shape is required (or --model with --tensor)");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    if (opt_infer_dtype != NULL) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--infer-dtype applies to --model with --infer; a single tensor takes "
                    "--dtype");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    gint64 shape[RS_MAX_DIMS];
    guint n_dims;
    RsDtype dtype = RS_DTYPE_F32;
    if (!rs_tensor_args_parse_shape(targs.shape, shape, &n_dims, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (targs.dtype != NULL && !rs_dtype_parse(targs.dtype, &dtype, &error)) {
        g_prefix_error(&error, "--dtype: ");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    g_autoptr(RsLayout) layout =
        rs_tensor_args_build_layout_full("--", n_dims, shape, targs.mesh, targs.placements,
                                         targs.ranks, targs.fused, targs.pad, &error);
    if (layout == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (!rs_layout_check_packed(layout, dtype, &error)) {
        g_prefix_error(&error, "--dtype %s: ", rs_dtype_get_name(dtype));
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    if (rank_only >= 0) {
        const RsMesh *mesh = rs_layout_get_mesh(layout);
        g_autoptr(GArray) mesh_ranks = g_array_new(FALSE, FALSE, sizeof(guint32));
        for (guint e = 0; e < rs_mesh_get_n_ranks(mesh); e++) {
            guint32 r = rs_mesh_get_rank(mesh, e);
            g_array_append_val(mesh_ranks, r);
        }
        if (!check_rank(mesh_ranks, &error))
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    const RsLayout *layouts[1] = {layout};
    const char *names[1] = {"tensor"};
    g_autofree char *shape_text = rs_shape_format(shape, n_dims);
    g_autofree char *desc = rs_layout_format(layout);
    g_autofree char *header = g_strdup_printf(
        "tensor  tensor, %s %s (%" G_GUINT64_FORMAT " bytes)\nlayout  %s\n", shape_text,
        rs_dtype_get_name(dtype), rs_dtype_get_n_bytes(dtype, rs_layout_get_n_elems(layout)), desc);
    print_ranks(layouts, names, 1, -1, format, header);
    return RS_EXIT_OK;
}

/* The scenario of one side: --model, and --train or --infer on --gpus (default GPUs 0 to
 * the convention's world size - 1), with each part's flag recorded for messages. */
static RsScenario *
side_scenario(GError **error)
{
    const char *flag = opt_train ? "--train" : "--infer";
    g_autoptr(RsConvention) conv = rs_convention_parse(opt_train ? opt_train : opt_infer, error);
    if (conv == NULL) {
        g_prefix_error(error, "%s: ", flag);
        return NULL;
    }
    RsDtype infer_dtype = RS_DTYPE_BF16;
    if (opt_infer_dtype != NULL) {
        if (opt_infer == NULL) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--infer-dtype needs --infer");
            return NULL;
        }
        if (!rs_dtype_parse(opt_infer_dtype, &infer_dtype, error)) {
            g_prefix_error(error, "--infer-dtype: ");
            return NULL;
        }
    }
    g_autoptr(GArray) gpus = NULL;
    if (opt_gpus != NULL) {
        if (!rs_ranks_parse(opt_gpus, &gpus, error)) {
            g_prefix_error(error, "--gpus: ");
            return NULL;
        }
    } else {
        guint64 world = rs_convention_get_world_size(conv);
        if (world > RS_LAYOUT_ARGS_MAX_GPUS) {
            g_autofree char *desc = rs_convention_format(conv);
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s: %s: %" G_GUINT64_FORMAT " ranks, more than the %u GPUs "
                        "layout lays out (give --gpus)",
                        flag, desc, world, RS_LAYOUT_ARGS_MAX_GPUS);
            return NULL;
        }
        gpus = g_array_sized_new(FALSE, FALSE, sizeof(guint32), (guint)world);
        for (guint64 i = 0; i < world; i++) {
            guint32 g = (guint32)i;
            g_array_append_val(gpus, g);
        }
    }
    RsScenario *s = rs_scenario_new();
    s->model = g_strdup(opt_model);
    rs_scenario_set_where(&s->model_where, "--model");
    s->include_mtp = opt_mtp;
    if (opt_mtp)
        rs_scenario_set_where(&s->mtp_where, "--mtp");
    if (opt_train != NULL) {
        s->train = g_steal_pointer(&conv);
        s->train_gpus = g_steal_pointer(&gpus);
        rs_scenario_set_where(&s->train_where, flag);
        rs_scenario_set_where(&s->train_gpus_where, opt_gpus ? "--gpus" : flag);
    } else {
        s->infer = g_steal_pointer(&conv);
        s->infer_gpus = g_steal_pointer(&gpus);
        s->has_infer_dtype = opt_infer_dtype != NULL;
        s->infer_dtype = infer_dtype;
        if (s->has_infer_dtype)
            rs_scenario_set_where(&s->infer_dtype_where, "--infer-dtype");
        rs_scenario_set_where(&s->infer_where, flag);
        rs_scenario_set_where(&s->infer_gpus_where, opt_gpus ? "--gpus" : flag);
    }
    return s;
}

static int
run_model(const char *cmd, RsFormat format)
{
    g_autoptr(GError) error = NULL;
    if ((opt_train == NULL) == (opt_infer == NULL) || opt_tensor == NULL) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--model needs one of --train or --infer, and --tensor");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    g_autoptr(RsScenario) scenario = side_scenario(&error);
    if (scenario == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    RsScenarioSide side = opt_train ? RS_SCENARIO_SIDE_TRAIN : RS_SCENARIO_SIDE_INFER;
    RsScenarioSideBuild build;
    if (!rs_scenario_build_side(scenario, side, &build, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    rs_cli_print_model_warnings(cmd, build.model);
    rs_cli_print_topology_warnings(build.topology);
    const RsModel *model = build.model;
    const RsConvention *conv = opt_train ? scenario->train : scenario->infer;
    GArray *gpus = opt_train ? scenario->train_gpus : scenario->infer_gpus;
    RsConventionResult res = build.layouts;
    memset(&build.layouts, 0, sizeof build.layouts);
    if (rank_only >= 0 && !check_rank(gpus, &error)) {
        rs_convention_result_clear(&res);
        rs_scenario_side_build_clear(&build);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    gint64 expert = -1;
    g_autoptr(GArray) members =
        rs_cli_find_tensors(model, res.buffers, opt_tensor, &expert, &error);
    g_autoptr(RsLayout) one_expert = NULL;
    if (members != NULL && expert >= 0)
        one_expert = expert_layout(g_ptr_array_index(res.layouts, g_array_index(members, guint, 0)),
                                   expert, &error);
    if (members == NULL || (expert >= 0 && one_expert == NULL)) {
        rs_convention_result_clear(&res);
        rs_scenario_side_build_clear(&build);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    g_autofree const RsLayout **layouts = g_new(const RsLayout *, members->len);
    g_autofree const char **names = g_new(const char *, members->len);
    g_autoptr(GString) header = g_string_new(NULL);
    for (guint i = 0; i < members->len; i++) {
        guint idx = g_array_index(members, guint, i);
        const RsTensorSpec *t = rs_model_get_tensor(model, idx);
        layouts[i] = one_expert ? one_expert : g_ptr_array_index(res.layouts, idx);
        names[i] = t->name;
        if (one_expert != NULL)
            g_string_append_printf(header,
                                   "expert  %s: expert %" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                                   ", rows %" G_GINT64_FORMAT ":%" G_GINT64_FORMAT " of dim 0 of\n",
                                   opt_tensor, expert, t->shape[0], expert, expert + 1);
        g_autofree char *shape = rs_shape_format(t->shape, t->n_dims);
        /* The inference side holds it in the dtype it serves (quantised on load). */
        RsRefitDtypes served = {!opt_train && scenario->has_infer_dtype, scenario->infer_dtype};
        RsDtype served_dtype = rs_refit_get_served_dtype(&served, t);
        /* A layout the refit refuses in that dtype (boxes off its blocks) is refused here
         * too, with simulate's message, not shown as if the engine could load it. */
        if (!rs_refit_check_served_layout(t->name, t->dtype, served_dtype, layouts[i], &error)) {
            g_prefix_error(&error, "%s: ", scenario->infer_dtype_where);
            rs_convention_result_clear(&res);
            rs_scenario_side_build_clear(&build);
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        }
        g_autofree char *dtype =
            served_dtype == t->dtype
                ? g_strdup(rs_dtype_get_name(t->dtype))
                : g_strdup_printf("%s, served as %s", rs_dtype_get_name(t->dtype),
                                  rs_dtype_get_name(served_dtype));
        g_string_append_printf(header, "tensor  %s, %s %s (%s, %s)\n", t->name, shape, dtype,
                               rs_tensor_role_get_name(t->role),
                               t->layer < 0 ? "before the layers"
                               : (guint)t->layer >= rs_model_get_n_layers(model)
                                   ? "after the layers"
                                   : "a decoder layer");
    }
    guint first = g_array_index(members, guint, 0);
    const char *buffer = g_ptr_array_index(res.buffers, first);
    g_autofree char *conv_text = rs_convention_format(conv);
    g_autofree char *gpu_text = rs_ranks_format((const guint32 *)gpus->data, gpus->len);
    g_autofree char *desc = rs_layout_format(layouts[0]);
    g_string_append_printf(header, "buffer  %s\nlayout  %s on GPUs %s\n        %s\n",
                           buffer ? buffer : "its own (not fused)", conv_text, gpu_text, desc);
    print_ranks(layouts, (const char *const *)names, members->len, expert, format, header->str);
    rs_convention_result_clear(&res);
    rs_scenario_side_build_clear(&build);
    return RS_EXIT_OK;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "layout";
    int code = RS_EXIT_OK;
    if (!rs_cli_parse(cmd, make_context, &argc, &argv, &code))
        return code;
    g_autoptr(GError) error = NULL;
    RsFormat format;
    if (!rs_cli_parse_format(opt_format, &format, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (!rs_cli_parse_int("--rank", opt_rank, 0, G_MAXINT32, &rank_only, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_model != NULL && rs_tensor_args_is_set(&targs)) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "give either --model (with --train/--infer and --tensor) or the "
                    "single-tensor flags (--shape, --mesh, --placements), not both");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    /* The model flags mean nothing to a single tensor: refused, not ignored. */
    const char *model_only = opt_model != NULL   ? NULL
                             : opt_tensor != NULL ? "--tensor"
                             : opt_gpus != NULL   ? "--gpus"
                             : opt_mtp            ? "--mtp"
                             : opt_train != NULL  ? "--train"
                             : opt_infer != NULL  ? "--infer"
                                                  : NULL;
    if (model_only != NULL) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s applies to a model tensor: give it with --model (and --train or "
                    "--infer), or leave it out with the single-tensor flags",
                    model_only);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    return opt_model != NULL ? run_model(cmd, format) : run_single(cmd, format);
}

const RsCommand rs_command_layout = {
    "layout",
    "Show every rank's boxes of a tensor (global ranges, local offsets)",
    run,
    make_context,
};

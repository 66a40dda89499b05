/* cmd-layout.c — `reshard layout`: every rank's boxes of one tensor, as global index ranges
 * with their offsets in the rank's local buffer.
 *
 * Two modes: a model tensor (or a fused buffer, listing the boxes of every tensor in it)
 * under a convention, or one tensor given by shape, mesh and placements. The JSON form is
 * {"ranks":[{"rank":0,"boxes":[{"tensor":"…","lo":[…],"hi":[…],"step":[…],
 * "offset_elems":0}]}]}. */
#include "cli/cli.h"

#include "analysis/report.h"
#include "cli/model-args.h"
#include "cli/tensor-args.h"
#include "base/dtype.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

static char *opt_model;
static char *opt_train;
static char *opt_infer;
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
    {"gpus", 0, 0, G_OPTION_ARG_STRING, &opt_gpus,
     "GPUs of the convention's ranks (default 0..N-1)", "RANGES"},
    {"tensor", 't', 0, G_OPTION_ARG_STRING, &opt_tensor,
     "A model tensor, or a fused buffer (all its tensors)", "NAME"},
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
        "  reshard layout --shape 200x200 --dtype bf16 --mesh 2x2 --placements \"S(0),R\"\n"
        "  reshard layout --shape 4x1 --mesh 2x2 --placements \"SS(0,2),S(0)\" --format json\n"
        "  reshard layout --shape 144x4 --mesh 8 --placements \"S(0)\" --fused qkv:128,8\n");
    g_option_context_add_main_entries(context, entries, NULL);
    g_option_context_add_group(context, rs_tensor_args_make_layout_group(&targs));
    rs_cli_add_common_options(context);
    return context;
}

/* One box of the listing. */
typedef struct {
    const char *tensor;
    RsLocalBox lb;
} BoxRow;

typedef struct {
    guint32 rank;
    guint n_dims;
    gint64 buffer_shape[RS_MAX_DIMS];
    guint64 buffer_elems;
    GArray *rows; /* BoxRow, by offset */
} RankRows;

static void
rank_rows_clear(gpointer p)
{
    RankRows *r = p;
    g_array_unref(r->rows);
}

static gint
row_compare(gconstpointer a, gconstpointer b)
{
    guint64 x = ((const BoxRow *)a)->lb.offset_elems, y = ((const BoxRow *)b)->lb.offset_elems;
    return x < y ? -1 : x > y;
}

static gint
rank_compare(gconstpointer a, gconstpointer b)
{
    guint32 x = ((const RankRows *)a)->rank, y = ((const RankRows *)b)->rank;
    return x < y ? -1 : x > y;
}

/* Gathers the boxes of @layouts (one per tensor name) per rank. */
static GArray *
collect(const RsLayout *const *layouts, const char *const *names, guint n, gint only_rank)
{
    GArray *ranks = g_array_new(FALSE, TRUE, sizeof(RankRows));
    g_array_set_clear_func(ranks, rank_rows_clear);
    g_autoptr(GHashTable) index = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint t = 0; t < n; t++) {
        for (guint e = 0; e < rs_layout_get_n_ranks(layouts[t]); e++) {
            guint32 rank = rs_layout_get_rank(layouts[t], e);
            if (only_rank >= 0 && rank != (guint32)only_rank)
                continue;
            gpointer found = g_hash_table_lookup(index, GUINT_TO_POINTER(rank + 1));
            RankRows *rr;
            if (found == NULL) {
                RankRows fresh = {rank,
                                  rs_layout_get_n_dims(layouts[t]),
                                  {0},
                                  rs_layout_get_local_n_elems(layouts[t], e),
                                  g_array_new(FALSE, FALSE, sizeof(BoxRow))};
                memcpy(fresh.buffer_shape, rs_layout_get_buffer_shape(layouts[t], e),
                       fresh.n_dims * sizeof(gint64));
                g_array_append_val(ranks, fresh);
                g_hash_table_insert(index, GUINT_TO_POINTER(rank + 1),
                                    GUINT_TO_POINTER(ranks->len));
                rr = &g_array_index(ranks, RankRows, ranks->len - 1);
            } else {
                rr = &g_array_index(ranks, RankRows, GPOINTER_TO_UINT(found) - 1);
            }
            guint nb;
            const RsLocalBox *boxes = rs_layout_get_boxes(layouts[t], e, &nb);
            for (guint b = 0; b < nb; b++) {
                BoxRow row = {names[t], boxes[b]};
                g_array_append_val(rr->rows, row);
            }
        }
    }
    g_array_sort(ranks, rank_compare);
    for (guint i = 0; i < ranks->len; i++)
        g_array_sort(g_array_index(ranks, RankRows, i).rows, row_compare);
    return ranks;
}

static void
append_ints(GString *s, const gint64 *v, guint n, const char *sep)
{
    for (guint d = 0; d < n; d++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? sep : "", v[d]);
}

static void
print_json(GArray *ranks)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "ranks");
    json_builder_begin_array(b);
    for (guint i = 0; i < ranks->len; i++) {
        const RankRows *rr = &g_array_index(ranks, RankRows, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "rank");
        json_builder_add_int_value(b, rr->rank);
        json_builder_set_member_name(b, "boxes");
        json_builder_begin_array(b);
        for (guint k = 0; k < rr->rows->len; k++) {
            const BoxRow *row = &g_array_index(rr->rows, BoxRow, k);
            const RsBox *box = &row->lb.box;
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "tensor");
            json_builder_add_string_value(b, row->tensor);
            const char *keys[3] = {"lo", "hi", "step"};
            const gint64 *vals[3] = {box->lo, box->hi, box->step};
            for (guint j = 0; j < 3; j++) {
                json_builder_set_member_name(b, keys[j]);
                json_builder_begin_array(b);
                for (guint d = 0; d < box->n_dims; d++)
                    json_builder_add_int_value(b, vals[j][d]);
                json_builder_end_array(b);
            }
            json_builder_set_member_name(b, "offset_elems");
            json_builder_add_int_value(b, (gint64)row->lb.offset_elems);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    g_autoptr(GString) text = g_string_new(NULL);
    rs_report_json_append_full(b, FALSE, text);
    fputs(text->str, stdout);
}

static void
print_csv(GArray *ranks)
{
    printf("rank,tensor,lo,hi,step,offset_elems,elems,buffer_shape\n");
    for (guint i = 0; i < ranks->len; i++) {
        const RankRows *rr = &g_array_index(ranks, RankRows, i);
        g_autoptr(GString) bshape = g_string_new(NULL);
        append_ints(bshape, rr->buffer_shape, rr->n_dims, ";");
        for (guint k = 0; k < rr->rows->len; k++) {
            const BoxRow *row = &g_array_index(rr->rows, BoxRow, k);
            g_autoptr(GString) s = g_string_new(NULL);
            g_string_append_printf(s, "%u,%s,", rr->rank, row->tensor);
            append_ints(s, row->lb.box.lo, row->lb.box.n_dims, ";");
            g_string_append_c(s, ',');
            append_ints(s, row->lb.box.hi, row->lb.box.n_dims, ";");
            g_string_append_c(s, ',');
            append_ints(s, row->lb.box.step, row->lb.box.n_dims, ";");
            g_string_append_printf(s, ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s",
                                   row->lb.offset_elems, rs_box_get_n_elems(&row->lb.box),
                                   bshape->str);
            printf("%s\n", s->str);
        }
        if (rr->rows->len == 0)
            printf("%u,,,,,,0,%s\n", rr->rank, bshape->str);
    }
}

static void
print_table(GArray *ranks, const char *header)
{
    fputs(header, stdout);
    guint name_width = 6;
    for (guint i = 0; i < ranks->len; i++) {
        const RankRows *rr = &g_array_index(ranks, RankRows, i);
        for (guint k = 0; k < rr->rows->len; k++)
            name_width = MAX(name_width, strlen(g_array_index(rr->rows, BoxRow, k).tensor));
    }
    printf("\n%-6s  %-*s  %-34s  %14s  %12s  %s\n", "rank", name_width, "tensor",
           "box (global lo:hi[:step] per dim)", "offset elems", "elems", "buffer shape (elems)");
    for (guint i = 0; i < ranks->len; i++) {
        const RankRows *rr = &g_array_index(ranks, RankRows, i);
        g_autoptr(GString) bshape = g_string_new("[");
        append_ints(bshape, rr->buffer_shape, rr->n_dims, ", ");
        guint64 held = 0;
        for (guint k = 0; k < rr->rows->len; k++)
            held += rs_box_get_n_elems(&g_array_index(rr->rows, BoxRow, k).lb.box);
        g_string_append_printf(bshape, "] = %" G_GUINT64_FORMAT, rr->buffer_elems);
        if (held < rr->buffer_elems)
            g_string_append_printf(bshape, " (%" G_GUINT64_FORMAT " not in these boxes)",
                                   rr->buffer_elems - held);
        if (rr->rows->len == 0)
            printf("%-6u  %-*s  %-34s  %14s  %12s  %s\n", rr->rank, name_width, "-",
                   "(empty shard)", "-", "0", bshape->str);
        for (guint k = 0; k < rr->rows->len; k++) {
            const BoxRow *row = &g_array_index(rr->rows, BoxRow, k);
            g_autofree char *box = rs_box_format(&row->lb.box);
            printf("%-6u  %-*s  %-34s  %14" G_GUINT64_FORMAT "  %12" G_GUINT64_FORMAT "  %s\n",
                   rr->rank, name_width, row->tensor, box, row->lb.offset_elems,
                   rs_box_get_n_elems(&row->lb.box), k == 0 ? bshape->str : "");
        }
    }
}

static void
print_ranks(GArray *ranks, RsFormat format, const char *header)
{
    switch (format) {
    case RS_FORMAT_JSON:
        print_json(ranks);
        break;
    case RS_FORMAT_CSV:
        print_csv(ranks);
        break;
    case RS_FORMAT_TABLE:
        print_table(ranks, header);
        if (ranks->len == 0 && rank_only >= 0)
            printf("(rank %" G_GINT64_FORMAT " holds nothing of this tensor)\n", rank_only);
        break;
    }
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

static char *
format_shape(const gint64 *shape, guint n_dims)
{
    GString *s = g_string_new("[");
    append_ints(s, shape, n_dims, ", ");
    g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
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
    g_autoptr(GArray) ranks = collect(layouts, names, 1, (gint)rank_only);
    g_autofree char *shape_text = format_shape(shape, n_dims);
    g_autofree char *desc = rs_layout_format(layout);
    g_autofree char *header = g_strdup_printf(
        "tensor  tensor, %s %s (%" G_GUINT64_FORMAT " bytes)\nlayout  %s\n", shape_text,
        rs_dtype_get_name(dtype), rs_dtype_get_n_bytes(dtype, rs_layout_get_n_elems(layout)), desc);
    print_ranks(ranks, format, header);
    return RS_EXIT_OK;
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
    g_autoptr(RsModel) model = rs_cli_load_model(opt_model, opt_mtp, &error);
    if (model == NULL)
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    const char *flag = opt_train ? "--train" : "--infer";
    g_autoptr(RsConvention) conv = NULL;
    g_autoptr(GArray) gpus = NULL;
    RsConventionResult res;
    if (!rs_cli_resolve_side(flag, opt_train ? opt_train : opt_infer, "--gpus", opt_gpus, 0, model,
                             &conv, &gpus, &res, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (rank_only >= 0 && !check_rank(gpus, &error)) {
        rs_convention_result_clear(&res);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    g_autoptr(GArray) members = rs_cli_find_tensors(model, res.buffers, opt_tensor, &error);
    if (members == NULL) {
        rs_convention_result_clear(&res);
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    g_autofree const RsLayout **layouts = g_new(const RsLayout *, members->len);
    g_autofree const char **names = g_new(const char *, members->len);
    g_autoptr(GString) header = g_string_new(NULL);
    for (guint i = 0; i < members->len; i++) {
        guint idx = g_array_index(members, guint, i);
        const RsTensorSpec *t = rs_model_get_tensor(model, idx);
        layouts[i] = g_ptr_array_index(res.layouts, idx);
        names[i] = t->name;
        g_autofree char *shape = format_shape(t->shape, t->n_dims);
        g_string_append_printf(header, "tensor  %s, %s %s (%s, %s)\n", t->name, shape,
                               rs_dtype_get_name(t->dtype), rs_tensor_role_get_name(t->role),
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
    g_autoptr(GArray) ranks = collect(layouts, names, members->len, (gint)rank_only);
    print_ranks(ranks, format, header->str);
    rs_convention_result_clear(&res);
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
    return opt_model != NULL ? run_model(cmd, format) : run_single(cmd, format);
}

const RsCommand rs_command_layout = {
    "layout",
    "Show every rank's boxes of a tensor (global ranges, local offsets)",
    run,
    make_context,
};

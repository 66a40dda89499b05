/* tensor-args.c — single-tensor flags to a layout or a one-tensor refit. */
#include "cli/tensor-args.h"

#include "cli/cli.h"
#include "base/dtype.h"

#include <string.h>

GOptionGroup *
rs_tensor_args_make_group(RsTensorArgs *args)
{
    GOptionEntry entries[] = {
        {"shape", 0, 0, G_OPTION_ARG_STRING, &args->shape, "Global shape of one tensor", "200x200"},
        {"dtype", 0, 0, G_OPTION_ARG_STRING, &args->dtype, "Its dtype on the source (default f32)",
         "DTYPE"},
        {"dst-dtype", 0, 0, G_OPTION_ARG_STRING, &args->dst_dtype,
         "Its dtype on the destination and the wire (default --dtype; converted at the "
         "source; fp8-e4m3 and mxfp4 add block scales)",
         "DTYPE"},
        {"src-mesh", 0, 0, G_OPTION_ARG_STRING, &args->src_mesh, "Source device mesh", "2x2"},
        {"src-placements", 0, 0, G_OPTION_ARG_STRING, &args->src_placements,
         "Source placements, one per mesh dim: R, S(d), SS(d,f)", "S(0),R"},
        {"src-ranks", 0, 0, G_OPTION_ARG_STRING, &args->src_ranks,
         "Source ranks, row-major over the mesh (default 0..N-1)", "0-3"},
        {"src-fused", 0, 0, G_OPTION_ARG_STRING, &args->src_fused,
         "Source fused split replacing its Shard: qkv:Q,KV, qkv-grouped:Q,KV, gate-up, "
         "concat:A,B, interleaved[:P]",
         "KIND"},
        {"src-pad", 0, 0, G_OPTION_ARG_STRING, &args->src_pad,
         "Source vocabulary padding multiple replacing its Shard", "M"},
        {"dst-mesh", 0, 0, G_OPTION_ARG_STRING, &args->dst_mesh, "Destination device mesh", "4"},
        {"dst-placements", 0, 0, G_OPTION_ARG_STRING, &args->dst_placements,
         "Destination placements", "S(1)"},
        {"dst-ranks", 0, 0, G_OPTION_ARG_STRING, &args->dst_ranks,
         "Destination ranks (default 0..N-1)", "4-7"},
        {"dst-fused", 0, 0, G_OPTION_ARG_STRING, &args->dst_fused,
         "Destination fused split (as --src-fused)", "KIND"},
        {"dst-pad", 0, 0, G_OPTION_ARG_STRING, &args->dst_pad,
         "Destination vocabulary padding multiple", "M"},
        {NULL},
    };
    GOptionGroup *group = g_option_group_new(
        "tensor", "Single-tensor options:", "Show single-tensor options", NULL, NULL);
    g_option_group_add_entries(group, entries);
    return group;
}

GOptionGroup *
rs_tensor_args_make_layout_group(RsTensorArgs *args)
{
    GOptionEntry entries[] = {
        {"shape", 0, 0, G_OPTION_ARG_STRING, &args->shape, "Global shape of one tensor", "200x200"},
        {"dtype", 0, 0, G_OPTION_ARG_STRING, &args->dtype, "Its dtype (default f32)", "DTYPE"},
        {"mesh", 0, 0, G_OPTION_ARG_STRING, &args->mesh, "Device mesh", "2x2"},
        {"placements", 0, 0, G_OPTION_ARG_STRING, &args->placements,
         "Placements, one per mesh dim: R, S(d), SS(d,f)", "S(0),R"},
        {"ranks", 0, 0, G_OPTION_ARG_STRING, &args->ranks,
         "Ranks, row-major over the mesh (default 0..N-1)", "0-3"},
        {"fused", 0, 0, G_OPTION_ARG_STRING, &args->fused,
         "Fused split replacing the Shard: qkv:Q,KV, qkv-grouped:Q,KV, gate-up, concat:A,B, "
         "interleaved[:P]",
         "KIND"},
        {"pad", 0, 0, G_OPTION_ARG_STRING, &args->pad,
         "Vocabulary padding multiple replacing the Shard (vLLM 64, Megatron 128 x tp)", "M"},
        {NULL},
    };
    GOptionGroup *group = g_option_group_new(
        "tensor", "Single-tensor options:", "Show single-tensor options", NULL, NULL);
    g_option_group_add_entries(group, entries);
    return group;
}

gboolean
rs_tensor_args_is_set(const RsTensorArgs *args)
{
    return args->shape || args->dtype || args->src_mesh || args->src_placements ||
           args->src_ranks || args->dst_mesh || args->dst_placements || args->dst_ranks ||
           args->dst_dtype || args->src_fused || args->dst_fused || args->src_pad ||
           args->dst_pad || args->mesh || args->placements || args->ranks || args->fused ||
           args->pad;
}

gboolean
rs_tensor_args_parse_shape(const char *text, gint64 *shape, guint *n_dims_out, GError **error)
{
    g_auto(GStrv) parts = g_strsplit_set(text, "x,", -1);
    guint n = 0;
    for (guint i = 0; parts[i] != NULL; i++) {
        guint64 v;
        if (n == RS_MAX_DIMS ||
            !g_ascii_string_to_unsigned(g_strstrip(parts[i]), 10, 0, G_MAXINT64 / 2, &v, NULL)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--shape \"%s\": expected 1 to %d sizes like 200x200", text, RS_MAX_DIMS);
            return FALSE;
        }
        shape[n++] = (gint64)v;
    }
    if (n == 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--shape \"%s\": empty; expected 1 to %d sizes like 200x200", text,
                    RS_MAX_DIMS);
        return FALSE;
    }
    /* The layout refuses more than 2^62 elements too, but under the name of the flag it
     * is building (--placements): check here so the message names --shape. */
    guint64 n_elems = 1;
    for (guint d = 0; d < n; d++) {
        if (!g_uint64_checked_mul(&n_elems, n_elems, (guint64)shape[d]) ||
            n_elems > (G_GUINT64_CONSTANT(1) << 62)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--shape \"%s\": more than 2^62 elements", text);
            return FALSE;
        }
    }
    *n_dims_out = n;
    return TRUE;
}

/* Parses a --fused value for a dim of @extent rows into @fusion. */
static gboolean
parse_fused(const char *flag, const char *text, gint64 extent, RsFusion *fusion, GError **error)
{
    memset(fusion, 0, sizeof *fusion);
    g_autofree char *kind = g_strdup(text);
    char *colon = strchr(kind, ':');
    char *args = NULL;
    if (colon != NULL) {
        *colon = '\0';
        args = colon + 1;
    }
    gint64 values[RS_MAX_SEGMENTS];
    guint n_values = 0;
    if (args != NULL) {
        g_auto(GStrv) items = g_strsplit(args, ",", -1);
        for (guint i = 0; items[i] != NULL; i++) {
            if (n_values == RS_MAX_SEGMENTS ||
                !g_ascii_string_to_signed(g_strstrip(items[i]), 10, 1, G_MAXINT64 / 2,
                                          &values[n_values], NULL))
                goto bad;
            n_values++;
        }
    }
    if (strcmp(kind, "qkv") == 0 || strcmp(kind, "qkv-grouped") == 0) {
        if (n_values != 2)
            goto bad;
        gint64 heads = values[0] + 2 * values[1];
        if (extent % heads != 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s \"%s\": %" G_GINT64_FORMAT " rows are not %" G_GINT64_FORMAT
                        " + 2 x %" G_GINT64_FORMAT " heads of equal size",
                        flag, text, extent, values[0], values[1]);
            return FALSE;
        }
        gint64 head_dim = extent / heads;
        fusion->kind = strcmp(kind, "qkv") == 0 ? RS_FUSION_QKV : RS_FUSION_QKV_GROUPED;
        fusion->n_segments = 3;
        fusion->unit = head_dim;
        fusion->segment_len[0] = values[0] * head_dim;
        fusion->segment_len[1] = values[1] * head_dim;
        fusion->segment_len[2] = values[1] * head_dim;
        return TRUE;
    }
    if (strcmp(kind, "gate-up") == 0) {
        if (n_values != 0 || extent % 2 != 0)
            goto bad;
        fusion->kind = RS_FUSION_CONCAT;
        fusion->n_segments = 2;
        fusion->unit = 1;
        fusion->segment_len[0] = fusion->segment_len[1] = extent / 2;
        return TRUE;
    }
    if (strcmp(kind, "concat") == 0) {
        if (n_values == 0)
            goto bad;
        fusion->kind = RS_FUSION_CONCAT;
        fusion->n_segments = n_values;
        fusion->unit = 1;
        memcpy(fusion->segment_len, values, n_values * sizeof *values);
        return TRUE;
    }
    if (strcmp(kind, "interleaved") == 0) {
        if (n_values > 1)
            goto bad;
        fusion->kind = RS_FUSION_INTERLEAVED;
        fusion->n_segments = 1;
        fusion->unit = n_values ? values[0] : 2;
        fusion->segment_len[0] = extent;
        return TRUE;
    }
bad:
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s \"%s\": expected qkv:Q,KV, qkv-grouped:Q,KV, gate-up, concat:A,B,… or "
                "interleaved[:P]",
                flag, text);
    return FALSE;
}

RsLayout *
rs_tensor_args_build_layout_full(const char *flag_prefix, guint n_dims, const gint64 *shape,
                                 const char *mesh_text, const char *placements_text,
                                 const char *ranks, const char *fused, const char *pad, GError **error)
{
    if (mesh_text == NULL || placements_text == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%smesh and %splacements are required", flag_prefix, flag_prefix);
        return NULL;
    }
    g_autoptr(RsMesh) mesh = rs_mesh_parse(mesh_text, ranks, error);
    if (mesh == NULL) {
        g_prefix_error(error, "%smesh/%sranks: ", flag_prefix, flag_prefix);
        return NULL;
    }
    RsPlacement placements[RS_MAX_MESH_DIMS];
    guint n_placements;
    if (!rs_placements_parse(placements_text, placements, &n_placements, error) ||
        !rs_placements_normalize(placements, n_placements, n_dims, error)) {
        g_prefix_error(error, "%splacements: ", flag_prefix);
        return NULL;
    }
    RsSplit splits[RS_MAX_MESH_DIMS];
    for (guint m = 0; m < n_placements; m++)
        splits[m] = rs_split_placement(placements[m]);
    if (fused != NULL || pad != NULL) {
        const char *what = fused != NULL ? "fused" : "pad";
        if (fused != NULL && pad != NULL) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%sfused and %spad cannot be combined", flag_prefix, flag_prefix);
            return NULL;
        }
        gint target = -1;
        for (guint m = 0; m < n_placements; m++) {
            if (placements[m].kind != RS_PLACEMENT_SHARD)
                continue;
            if (target >= 0) {
                target = -2;
                break;
            }
            target = (gint)m;
        }
        if (target < 0 || (guint)placements[target].dim >= n_dims) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s%s needs exactly one S(d) placement of a tensor dim in %splacements "
                        "\"%s\" (the split it replaces)",
                        flag_prefix, what, flag_prefix, placements_text);
            return NULL;
        }
        gint dim = placements[target].dim;
        RsSplit s;
        memset(&s, 0, sizeof s);
        s.dim = dim;
        if (fused != NULL) {
            g_autofree char *flag = g_strdup_printf("%sfused", flag_prefix);
            s.kind = RS_SPLIT_FUSED;
            if (!parse_fused(flag, fused, shape[dim], &s.fusion, error))
                return NULL;
        } else {
            g_autofree char *flag = g_strdup_printf("%spad", flag_prefix);
            gint64 multiple = 0;
            if (!rs_cli_parse_int(flag, pad, 1, G_MAXINT64, &multiple, error))
                return NULL;
            s.kind = RS_SPLIT_PADDED;
            s.multiple = multiple;
        }
        splits[target] = s;
    }
    RsLayout *layout = rs_layout_new_split(n_dims, shape, mesh, splits, n_placements, error);
    if (layout == NULL)
        g_prefix_error(error, "%s%s: ", flag_prefix, fused ? "fused" : pad ? "pad" : "placements");
    return layout;
}

RsLayout *
rs_tensor_args_build_layout(const char *flag_prefix, guint n_dims, const gint64 *shape,
                            const char *mesh_text, const char *placements_text, const char *ranks,
                            GError **error)
{
    return rs_tensor_args_build_layout_full(flag_prefix, n_dims, shape, mesh_text, placements_text,
                                            ranks, NULL, NULL, error);
}

RsRefit *
rs_tensor_args_build_refit(const RsTensorArgs *args, GError **error)
{
    if (args->shape == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--shape is required");
        return NULL;
    }
    gint64 shape[RS_MAX_DIMS];
    guint n_dims;
    if (!rs_tensor_args_parse_shape(args->shape, shape, &n_dims, error))
        return NULL;
    RsDtype dtype = RS_DTYPE_F32;
    if (args->dtype != NULL && !rs_dtype_parse(args->dtype, &dtype, error)) {
        g_prefix_error(error, "--dtype: ");
        return NULL;
    }
    RsDtype dst_dtype = dtype;
    if (args->dst_dtype != NULL && !rs_dtype_parse(args->dst_dtype, &dst_dtype, error)) {
        g_prefix_error(error, "--dst-dtype: ");
        return NULL;
    }
    g_autoptr(RsLayout) src = rs_tensor_args_build_layout_full(
        "--src-", n_dims, shape, args->src_mesh, args->src_placements, args->src_ranks,
        args->src_fused, args->src_pad, error);
    if (src == NULL)
        return NULL;
    g_autoptr(RsLayout) dst = rs_tensor_args_build_layout_full(
        "--dst-", n_dims, shape, args->dst_mesh, args->dst_placements, args->dst_ranks,
        args->dst_fused, args->dst_pad, error);
    if (dst == NULL)
        return NULL;
    g_autoptr(RsRefit) refit = rs_refit_new();
    RsRefitEntry entry = {"tensor", dtype, dst_dtype, NULL, NULL};
    if (!rs_refit_add_converted(refit, &entry, src, dst, error)) {
        /* A conversion's error names --dst-dtype; without one, the layouts' of --dtype. */
        g_prefix_error(error, "%s %s: ", dst_dtype != dtype ? "--dst-dtype" : "--dtype",
                       rs_dtype_get_name(dst_dtype));
        return NULL;
    }
    return g_steal_pointer(&refit);
}

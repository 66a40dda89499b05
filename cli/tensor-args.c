/* tensor-args.c — single-tensor flags to a one-tensor refit. */
#include "cli/tensor-args.h"

#include "sim/dtype.h"

GOptionGroup *
rs_tensor_args_make_group(RsTensorArgs *args)
{
    GOptionEntry entries[] = {
        {"shape", 0, 0, G_OPTION_ARG_STRING, &args->shape, "Global shape of one tensor",
         "200x200"},
        {"dtype", 0, 0, G_OPTION_ARG_STRING, &args->dtype, "Its dtype (default f32)", "DTYPE"},
        {"src-mesh", 0, 0, G_OPTION_ARG_STRING, &args->src_mesh, "Source device mesh", "2x2"},
        {"src-placements", 0, 0, G_OPTION_ARG_STRING, &args->src_placements,
         "Source placements, one per mesh dim", "S(0),R"},
        {"src-ranks", 0, 0, G_OPTION_ARG_STRING, &args->src_ranks,
         "Source ranks, row-major over the mesh (default 0..N-1)", "0-3"},
        {"dst-mesh", 0, 0, G_OPTION_ARG_STRING, &args->dst_mesh, "Destination device mesh",
         "4"},
        {"dst-placements", 0, 0, G_OPTION_ARG_STRING, &args->dst_placements,
         "Destination placements", "S(1)"},
        {"dst-ranks", 0, 0, G_OPTION_ARG_STRING, &args->dst_ranks,
         "Destination ranks (default 0..N-1)", "4-7"},
        {NULL},
    };
    GOptionGroup *group = g_option_group_new("tensor", "Single-tensor options:",
                                             "Show single-tensor options", NULL, NULL);
    g_option_group_add_entries(group, entries);
    return group;
}

gboolean
rs_tensor_args_is_set(const RsTensorArgs *args)
{
    return args->shape || args->dtype || args->src_mesh || args->src_placements ||
           args->src_ranks || args->dst_mesh || args->dst_placements || args->dst_ranks;
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
    *n_dims_out = n;
    return TRUE;
}

RsLayout *
rs_tensor_args_build_layout(const char *flag_prefix, guint n_dims, const gint64 *shape,
                            const char *mesh_text, const char *placements_text,
                            const char *ranks, GError **error)
{
    if (mesh_text == NULL || placements_text == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%smesh and %splacements "
                    "are required", flag_prefix, flag_prefix);
        return NULL;
    }
    g_autoptr(RsMesh) mesh = rs_mesh_parse(mesh_text, ranks, error);
    if (mesh == NULL) {
        g_prefix_error(error, "%smesh/%sranks: ", flag_prefix, flag_prefix);
        return NULL;
    }
    RsPlacement placements[RS_MAX_MESH_DIMS];
    guint n_placements;
    if (!rs_placements_parse(placements_text, placements, &n_placements, error)) {
        g_prefix_error(error, "%splacements: ", flag_prefix);
        return NULL;
    }
    RsLayout *layout =
        rs_layout_new_dtensor(n_dims, shape, mesh, placements, n_placements, error);
    if (layout == NULL)
        g_prefix_error(error, "%splacements: ", flag_prefix);
    return layout;
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
    g_autoptr(RsLayout) src = rs_tensor_args_build_layout(
        "--src-", n_dims, shape, args->src_mesh, args->src_placements, args->src_ranks, error);
    if (src == NULL)
        return NULL;
    g_autoptr(RsLayout) dst = rs_tensor_args_build_layout(
        "--dst-", n_dims, shape, args->dst_mesh, args->dst_placements, args->dst_ranks, error);
    if (dst == NULL)
        return NULL;
    g_autoptr(RsRefit) refit = rs_refit_new();
    if (!rs_refit_add_tensor(refit, "tensor", dtype, src, dst, error))
        return NULL;
    return g_steal_pointer(&refit);
}

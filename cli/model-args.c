/* model-args.c — model-mode flags to layouts. */
#include "cli/model-args.h"

#include "base/data.h"
#include "models/model-load.h"

#include <string.h>

RsModel *
rs_cli_load_model(const char *name, gboolean include_mtp, GError **error)
{
    g_autofree char *path = rs_data_find("models", name, error);
    if (path == NULL) {
        g_prefix_error(error, "--model: ");
        return NULL;
    }
    RsModelOptions options = {.include_mtp = include_mtp};
    RsModel *model = rs_model_load_file(path, &options, error);
    if (model == NULL)
        g_prefix_error(error, "--model: ");
    else
        rs_cli_print_model_warnings("layout", model);
    return model;
}

void
rs_cli_print_model_warnings(const char *cmd, const RsModel *model)
{
    for (guint i = 0; i < rs_model_get_n_warnings(model); i++)
        g_printerr("reshard %s: warning: %s\n", cmd, rs_model_get_warning(model, i));
}

gboolean
rs_cli_resolve_side(const char *flag, const char *spec, const char *gpus_flag,
                    const char *gpus_text, guint32 first_gpu, const RsModel *model,
                    RsConvention **conv_out, GArray **gpus_out, RsConventionResult *out,
                    GError **error)
{
    g_autoptr(RsConvention) conv = rs_convention_parse(spec, error);
    if (conv == NULL) {
        g_prefix_error(error, "%s: ", flag);
        return FALSE;
    }
    g_autoptr(GArray) gpus = NULL;
    if (gpus_text != NULL) {
        if (!rs_ranks_parse(gpus_text, &gpus, error)) {
            g_prefix_error(error, "%s: ", gpus_flag);
            return FALSE;
        }
    } else {
        guint64 world = rs_convention_get_world_size(conv);
        gpus = g_array_sized_new(FALSE, FALSE, sizeof(guint32), (guint)world);
        for (guint64 i = 0; i < world; i++) {
            guint32 g = first_gpu + (guint32)i;
            g_array_append_val(gpus, g);
        }
    }
    g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < gpus->len; i++) {
        guint32 g = g_array_index(gpus, guint32, i);
        if (!g_hash_table_add(seen, GUINT_TO_POINTER(g + 1))) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s: GPU %u is listed twice", gpus_flag, g);
            return FALSE;
        }
    }
    if (!rs_convention_resolve_full(conv, model, (const guint32 *)gpus->data, gpus->len, out,
                                    error)) {
        g_prefix_error(error, "%s: ", flag);
        return FALSE;
    }
    *conv_out = g_steal_pointer(&conv);
    *gpus_out = g_steal_pointer(&gpus);
    return TRUE;
}

GArray *
rs_cli_find_tensors(const RsModel *model, GPtrArray *buffers, const char *name, GError **error)
{
    g_autoptr(GArray) found = g_array_new(FALSE, FALSE, sizeof(guint));
    gint idx = rs_model_find_tensor(model, name);
    if (idx >= 0) {
        guint i = (guint)idx;
        g_array_append_val(found, i);
        return g_steal_pointer(&found);
    }
    for (guint i = 0; buffers != NULL && i < buffers->len; i++) {
        const char *buffer = g_ptr_array_index(buffers, i);
        if (buffer != NULL && strcmp(buffer, name) == 0)
            g_array_append_val(found, i);
    }
    if (found->len > 0)
        return g_steal_pointer(&found);
    /* Suggest tensors of the same layer. */
    g_autoptr(GString) hint = g_string_new(NULL);
    const char *dot = strrchr(name, '.');
    gsize prefix_len = dot ? (gsize)(dot - name) : 0;
    for (guint i = 0; i < rs_model_get_n_tensors(model) && hint->len < 300; i++) {
        const char *t = rs_model_get_tensor(model, i)->name;
        if (prefix_len > 0 && strncmp(t, name, prefix_len / 2) == 0 &&
            strstr(t, name + prefix_len + 1) != NULL)
            g_string_append_printf(hint, "%s%s", hint->len ? ", " : "", t);
    }
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--tensor: no tensor or fused buffer named \"%s\" in %s%s%s%s", name,
                rs_model_get_name(model), hint->len ? " (similar: " : "", hint->str,
                hint->len ? ")" : "");
    return NULL;
}

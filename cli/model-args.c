/* model-args.c — model tensors and fused buffers by name, with suggestions. */
#include "cli/model-args.h"
#include "cli/cli.h"

#include "base/data.h"
#include "models/model-load.h"

#include <string.h>

void
rs_cli_print_model_warnings(const char *cmd, const RsModel *model)
{
    for (guint i = 0; i < rs_model_get_n_warnings(model); i++)
        rs_cli_warn(cmd, "%s", rs_model_get_warning(model, i));
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

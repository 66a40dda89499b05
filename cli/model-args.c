/* model-args.c — model tensors and fused buffers by name, with suggestions. */
#include "cli/model-args.h"
#include "cli/cli.h"

#include "base/data.h"
#include "base/text.h"
#include "models/model-load.h"

#include <string.h>

void
rs_cli_print_model_warnings(const char *cmd, const RsModel *model)
{
    for (guint i = 0; i < rs_model_get_n_warnings(model); i++)
        rs_cli_warn(cmd, "%s", rs_model_get_warning(model, i));
}

/* A checkpoint's per-expert name (rs_model_expert_group_name()) of a routed expert weight:
 * the stacked tensor (-1 when there is none), the expert in *expert. */
static gint
find_expert_tensor(const RsModel *model, const char *name, gint64 *expert)
{
    g_autofree char *stacked = rs_model_expert_group_name(name, expert);
    gint idx = stacked != NULL ? rs_model_find_tensor(model, stacked) : -1;
    if (idx < 0 || !rs_tensor_role_is_expert_weight(rs_model_get_tensor(model, idx)->role))
        return -1;
    return idx;
}

/* Appends to @hint the (at most 3) names of @model's tensors and of @buffers within a few
 * edits of @name, closest first: a misspelt top-level name ("lm_heads.weight") shares no
 * module and no last components with any. */
static void
hint_close_names(GString *hint, const RsModel *model, GPtrArray *buffers, const char *name)
{
    guint limit = MAX(2u, (guint)(strlen(name) / 8));
    const char *best[3] = {NULL, NULL, NULL};
    guint best_d[3] = {limit + 1, limit + 1, limit + 1};
    guint n_tensors = rs_model_get_n_tensors(model);
    guint n_buffers = buffers != NULL ? buffers->len : 0;
    for (guint i = 0; i < n_tensors + n_buffers; i++) {
        const char *t = i < n_tensors ? rs_model_get_tensor(model, i)->name
                                      : g_ptr_array_index(buffers, i - n_tensors);
        if (t == NULL)
            continue;
        guint d = rs_text_edit_distance(name, t, limit);
        for (guint k = 0; k < 3; k++) {
            if (best[k] != NULL && strcmp(best[k], t) == 0)
                break; /* a buffer named as its tensor */
            if (d < best_d[k]) {
                for (guint j = 2; j > k; j--) {
                    best[j] = best[j - 1];
                    best_d[j] = best_d[j - 1];
                }
                best[k] = t;
                best_d[k] = d;
                break;
            }
        }
    }
    for (guint k = 0; k < 3 && best[k] != NULL; k++)
        g_string_append_printf(hint, "%s%s", hint->len ? ", " : "", best[k]);
}

GArray *
rs_cli_find_tensors(const RsModel *model, GPtrArray *buffers, const char *name, gint64 *expert_out,
                    GError **error)
{
    g_autoptr(GArray) found = g_array_new(FALSE, FALSE, sizeof(guint));
    if (expert_out != NULL)
        *expert_out = -1;
    gint idx = rs_model_find_tensor(model, name);
    if (idx >= 0) {
        guint i = (guint)idx;
        g_array_append_val(found, i);
        return g_steal_pointer(&found);
    }
    gint64 expert = -1;
    gint stacked = expert_out != NULL ? find_expert_tensor(model, name, &expert) : -1;
    if (stacked >= 0) {
        const RsTensorSpec *t = rs_model_get_tensor(model, (guint)stacked);
        if (expert >= t->shape[0]) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--tensor: %s: expert %" G_GINT64_FORMAT
                        " of %s, which has %" G_GINT64_FORMAT " experts (0..%" G_GINT64_FORMAT ")",
                        name, expert, t->name, t->shape[0], t->shape[0] - 1);
            return NULL;
        }
        guint i = (guint)stacked;
        g_array_append_val(found, i);
        *expert_out = expert;
        return g_steal_pointer(&found);
    }
    for (guint i = 0; buffers != NULL && i < buffers->len; i++) {
        const char *buffer = g_ptr_array_index(buffers, i);
        if (buffer != NULL && strcmp(buffer, name) == 0)
            g_array_append_val(found, i);
    }
    if (found->len > 0)
        return g_steal_pointer(&found);
    /* Suggest the tensors of the deepest module the name shares with some (at least
     * "model.layers.N": the same layer), else the first few whose names contain its last two
     * components ("q_proj": layer 0's q_proj). It listed layer 0's weights for a name in
     * layer 3 (it matched half the prefix). */
    g_autoptr(GString) hint = g_string_new(NULL);
    g_auto(GStrv) parts = g_strsplit(name, ".", -1);
    guint n_parts = g_strv_length(parts), best = 0, n_tensors = rs_model_get_n_tensors(model);
    g_autofree guint *shared = g_new0(guint, n_tensors);
    for (guint i = 0; i < n_tensors; i++) {
        g_auto(GStrv) t = g_strsplit(rs_model_get_tensor(model, i)->name, ".", -1);
        while (shared[i] + 1 < n_parts && t[shared[i]] != NULL &&
               strcmp(t[shared[i]], parts[shared[i]]) == 0)
            shared[i]++;
        best = MAX(best, shared[i]);
    }
    const char *tail = n_parts >= 2 ? name + strlen(name) - strlen(parts[n_parts - 2]) -
                                          strlen(parts[n_parts - 1]) - 1
                                    : name;
    guint n_hints = 0;
    for (guint i = 0; i < n_tensors; i++) {
        const char *t = rs_model_get_tensor(model, i)->name;
        if (best >= 3 ? shared[i] != best : strstr(t, tail) == NULL)
            continue;
        if (hint->len >= 300 || (best < 3 && n_hints == 3)) {
            g_string_append(hint, ", ...");
            break;
        }
        g_string_append_printf(hint, "%s%s", hint->len ? ", " : "", t);
        n_hints++;
    }
    if (hint->len == 0)
        hint_close_names(hint, model, buffers, name);
    /* A layer past the decoder's: DeepSeek-V3's layer 61 is its multi-token-prediction
     * layer, generated only with --mtp (the name alone gave no clue). */
    g_autofree char *beyond = NULL;
    guint n_layers = rs_model_get_n_layers(model);
    guint64 layer = 0;
    const char *after = NULL;
    if (n_layers > 0 && g_str_has_prefix(name, "model.layers.") && g_ascii_isdigit(name[13]) &&
        (layer = g_ascii_strtoull(name + 13, (char **)&after, 10)) >= n_layers && *after == '.')
        beyond = g_strdup_printf(
            "; %s has %u decoder layers (0-%u)%s", rs_model_get_name(model), n_layers, n_layers - 1,
            rs_model_has_mtp(model) ? " and its multi-token-prediction layers after them"
                                    : ", and a layer after them is a multi-token-prediction "
                                      "layer, laid out with --mtp where the config has one");
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--tensor: no tensor or fused buffer named \"%s\" in %s%s%s%s%s", name,
                rs_model_get_name(model), hint->len ? " (similar: " : "", hint->str,
                hint->len ? ")" : "", beyond ? beyond : "");
    return NULL;
}

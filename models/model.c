/* model.c — the model container: the tensor list as loaders build it (one tensor at a
 * time, with layer ranges dropping what falls outside them), lookups by name and fusion
 * group, and the figures of a model (parameters, active parameters, bytes, the published
 * figure). It calls nothing else in models/; the loaders above it fill the struct. */
#include "models/model-private.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-model-error-quark, rs_model_error)
/* clang-format on */

static void
tensor_spec_free(gpointer p)
{
    RsTensorSpec *t = p;
    g_free(t->name);
    g_free(t->fuse_group);
    g_free(t);
}

RsModel *
rs_model_new(void)
{
    RsModel *m = g_new0(RsModel, 1);
    m->scale = 1;
    m->dtype = RS_DTYPE_BF16;
    m->tensors = g_ptr_array_new_with_free_func(tensor_spec_free);
    m->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    m->warnings = g_ptr_array_new_with_free_func(g_free);
    return m;
}

void
rs_model_free(RsModel *model)
{
    if (model == NULL)
        return;
    g_free(model->next_fuse_group);
    g_hash_table_unref(model->by_name);
    if (model->fuse_index != NULL)
        g_hash_table_unref(model->fuse_index);
    g_ptr_array_unref(model->tensors);
    g_ptr_array_unref(model->warnings);
    g_free(model->name);
    g_free(model->family);
    g_free(model);
}

gboolean
rs_model_is_layer_kept(const RsModel *model, gint layer)
{
    if (!model->has_layer_range)
        return TRUE;
    return layer >= 0 && layer < (gint)model->n_layers && layer >= model->first_layer &&
           layer <= model->last_layer;
}

void
rs_model_add_tensor_shape(RsModel *model, const char *name, RsTensorRole role, gint layer,
                          RsDtype dtype, guint n_heads, guint n_dims, const gint64 *shape)
{
    g_return_if_fail(n_dims <= RS_MAX_DIMS);
    /* A fusion announced with rs_model_fuse_next() belongs to this tensor only. */
    RsFuseKind fuse = model->next_fuse;
    guint fuse_segment = model->next_fuse_segment;
    g_autofree char *fuse_group = g_steal_pointer(&model->next_fuse_group);
    model->next_fuse = RS_FUSE_NONE;
    if (!rs_model_is_layer_kept(model, layer)) {
        /* Keep rs_model_mark_kv_heads() from marking the previous tensor. */
        model->last_dropped = TRUE;
        return;
    }
    model->last_dropped = FALSE;
    RsTensorSpec *t = g_new0(RsTensorSpec, 1);
    t->scale_of = -1;
    t->fuse = fuse;
    t->fuse_segment = fuse_segment;
    t->fuse_group = g_steal_pointer(&fuse_group);
    t->name = g_strdup(name);
    t->role = role;
    t->layer = layer;
    t->dtype = dtype;
    t->n_heads = n_heads;
    t->kv_heads = FALSE;
    t->n_dims = n_dims;
    t->format = RS_TENSOR_FORMAT_PLAIN;
    for (guint d = 0; d < n_dims; d++)
        t->shape[d] = shape[d];
    t->n_params = rs_tensor_spec_get_n_elems(t);
    g_ptr_array_add(model->tensors, t);
    g_hash_table_insert(model->by_name, t->name, GUINT_TO_POINTER(model->tensors->len));
}

void
rs_model_add_tensor(RsModel *model, const char *name, RsTensorRole role, gint layer,
                    RsDtype dtype, guint n_heads, guint n_dims, ...)
{
    g_return_if_fail(n_dims <= RS_MAX_DIMS);
    gint64 shape[RS_MAX_DIMS];
    va_list args;
    va_start(args, n_dims);
    for (guint d = 0; d < n_dims; d++)
        shape[d] = va_arg(args, gint64);
    va_end(args);
    rs_model_add_tensor_shape(model, name, role, layer, dtype, n_heads, n_dims, shape);
}

static RsTensorSpec *
last_tensor(RsModel *model)
{
    if (model->last_dropped || model->tensors->len == 0)
        return NULL;
    return g_ptr_array_index(model->tensors, model->tensors->len - 1);
}

void
rs_model_mark_kv_heads(RsModel *model)
{
    RsTensorSpec *t = last_tensor(model);
    if (t != NULL)
        t->kv_heads = TRUE;
}

void
rs_model_mark_fused(RsModel *model, RsFuseKind kind, guint segment, const char *group)
{
    RsTensorSpec *t = last_tensor(model);
    if (t == NULL)
        return;
    t->fuse = kind;
    t->fuse_segment = segment;
    g_free(t->fuse_group);
    t->fuse_group = g_strdup(group);
}

void
rs_model_fuse_next(RsModel *model, RsFuseKind kind, guint segment, const char *group)
{
    model->next_fuse = kind;
    model->next_fuse_segment = segment;
    g_free(model->next_fuse_group);
    model->next_fuse_group = g_strdup(group);
}

static char *
fuse_key(RsFuseKind kind, const char *group, guint segment)
{
    return g_strdup_printf("%d/%s/%u", (int)kind, group, segment);
}

gint
rs_model_find_fuse_sibling(const RsModel *model, guint index, guint segment)
{
    g_return_val_if_fail(index < model->tensors->len, -1);
    const RsTensorSpec *t = g_ptr_array_index(model->tensors, index);
    if (t->fuse == RS_FUSE_NONE || t->fuse_group == NULL)
        return -1;
    if (model->fuse_index == NULL) {
        /* Built lazily: the model is otherwise immutable after loading. */
        RsModel *m = (RsModel *)model;
        m->fuse_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        for (guint i = 0; i < m->tensors->len; i++) {
            const RsTensorSpec *s = g_ptr_array_index(m->tensors, i);
            if (s->fuse != RS_FUSE_NONE && s->fuse_group != NULL)
                g_hash_table_insert(m->fuse_index,
                                    fuse_key(s->fuse, s->fuse_group, s->fuse_segment),
                                    GUINT_TO_POINTER(i + 1));
        }
    }
    g_autofree char *key = fuse_key(t->fuse, t->fuse_group, segment);
    return (gint)GPOINTER_TO_UINT(g_hash_table_lookup(model->fuse_index, key)) - 1;
}

gboolean
rs_model_get_tie_embeddings(const RsModel *model)
{
    return model->tie_embeddings;
}

void
rs_model_set_last_format(RsModel *model, RsTensorFormat format, guint64 n_params)
{
    RsTensorSpec *t = last_tensor(model);
    if (t == NULL)
        return;
    t->format = format;
    t->n_params = n_params;
}

void
rs_model_mark_block_scale(RsModel *model, const gint64 *block)
{
    RsTensorSpec *t = last_tensor(model);
    if (t == NULL)
        return;
    g_return_if_fail(model->tensors->len >= 2);
    t->scale_of = (gint)model->tensors->len - 2;
    const RsTensorSpec *w = g_ptr_array_index(model->tensors, model->tensors->len - 2);
    g_return_if_fail(w->n_dims == t->n_dims);
    for (guint d = 0; d < t->n_dims; d++)
        t->scale_block[d] = block[d];
}

void
rs_model_set_last_segments(RsModel *model, guint n, const gint64 *sizes)
{
    g_return_if_fail(n <= RS_MAX_TENSOR_SEGMENTS);
    RsTensorSpec *t = last_tensor(model);
    if (t == NULL)
        return;
    t->n_segments = n;
    t->segment_dim = 0;
    for (guint i = 0; i < n; i++)
        t->segments[i] = sizes[i];
}

gboolean
rs_model_set_last_gate_up_halves(RsModel *model, guint dim)
{
    RsTensorSpec *t = last_tensor(model);
    if (t == NULL)
        return TRUE;
    g_return_val_if_fail(t->role == RS_ROLE_EXPERT_GATE_UP_FUSED, FALSE);
    if (dim == 0 || dim >= t->n_dims || t->shape[dim] % 2 != 0)
        return FALSE;
    t->n_segments = 2;
    t->segment_dim = dim;
    t->segments[0] = t->segments[1] = t->shape[dim] / 2;
    return TRUE;
}

/* --- figures --- */

const char *
rs_model_get_name(const RsModel *model)
{
    return model->name;
}

const char *
rs_model_get_family(const RsModel *model)
{
    return model->family;
}

RsDtype
rs_model_get_dtype(const RsModel *model)
{
    return model->dtype;
}

guint
rs_model_get_scale(const RsModel *model)
{
    return model->scale;
}

RsModelStorage
rs_model_get_storage(const RsModel *model)
{
    return model->storage;
}

guint
rs_model_get_n_experts_per_token(const RsModel *model)
{
    return model->n_experts_per_token;
}

gboolean
rs_model_has_mtp(const RsModel *model)
{
    return model->has_mtp;
}

void
rs_model_note_mtp(RsModel *model)
{
    for (guint i = 0; i < model->tensors->len && !model->has_mtp; i++) {
        const RsTensorSpec *t = g_ptr_array_index(model->tensors, i);
        if (g_str_has_prefix(t->name, "mtp.") || strstr(t->name, ".mtp.") != NULL) {
            model->has_mtp = TRUE;
            break;
        }
        for (const char *p = t->name; (p = strstr(p, "layers.")) != NULL; p++) {
            if (p != t->name && p[-1] != '.')
                continue;
            char *end = NULL;
            guint64 n = g_ascii_strtoull(p + strlen("layers."), &end, 10);
            if (end != p + strlen("layers.") && *end == '.' && n >= model->n_layers &&
                !g_str_has_prefix(t->name, "vision_model.")) {
                model->has_mtp = TRUE;
                break;
            }
        }
    }
}

/* The published figure for the form generated: for a model with MTP layers the one that
 * counts them (0 when the file states none: published_params counts the model without
 * them); else published_params. */
static guint64
published_figure(const RsModel *model, gboolean *rounded)
{
    if (model->include_mtp && model->has_mtp) {
        *rounded = model->published_mtp_rounded;
        return model->published_mtp_params;
    }
    *rounded = model->published_rounded;
    return model->published_params;
}

guint64
rs_model_get_published_params(const RsModel *model, gboolean *is_rounded_out)
{
    gboolean rounded;
    guint64 v = published_figure(model, &rounded);
    if (is_rounded_out != NULL)
        *is_rounded_out = rounded;
    return v;
}

guint64
rs_model_get_published_mtp_params(const RsModel *model, gboolean *is_rounded_out)
{
    if (is_rounded_out != NULL)
        *is_rounded_out = model->published_mtp_rounded;
    return model->published_mtp_params;
}

guint
rs_model_get_n_warnings(const RsModel *model)
{
    return model->warnings->len;
}

const char *
rs_model_get_warning(const RsModel *model, guint index)
{
    g_return_val_if_fail(index < model->warnings->len, NULL);
    return g_ptr_array_index(model->warnings, index);
}

gboolean
rs_model_check_published(const RsModel *model, GError **error)
{
    gboolean rounded;
    guint64 published = published_figure(model, &rounded);
    if (published == 0)
        return TRUE;
    guint64 n = rs_model_get_n_params(model);
    double diff = ((double)n - (double)published) / (double)published;
    if (!rounded && n != published) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: generated %" G_GUINT64_FORMAT " parameters, published %" G_GUINT64_FORMAT
                    " (exact): off by %+" G_GINT64_FORMAT,
                    model->name, n, published, (gint64)n - (gint64)published);
        return FALSE;
    }
    if (rounded && fabs(diff) > 0.01) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: generated %" G_GUINT64_FORMAT " parameters, %+.2f%% from the published "
                    "rounded figure %" G_GUINT64_FORMAT " (more than 1%%)",
                    model->name, n, 100 * diff, published);
        return FALSE;
    }
    return TRUE;
}

char *
rs_model_format_variant(const RsModel *model)
{
    GString *s = g_string_new(NULL);
    if (model->scale > 1)
        g_string_append_printf(s, "scale 1/%u", model->scale);
    if (model->has_layer_range)
        g_string_append_printf(s, "%slayers %d-%d", s->len ? ", " : "", model->first_layer,
                               model->last_layer);
    if (model->storage == RS_MODEL_STORAGE_CHECKPOINT)
        g_string_append_printf(s, "%sas stored", s->len ? ", " : "");
    return g_string_free(s, FALSE);
}

guint
rs_model_get_n_layers(const RsModel *model)
{
    return model->n_layers;
}

guint
rs_model_get_n_tensors(const RsModel *model)
{
    return model->tensors->len;
}

const RsTensorSpec *
rs_model_get_tensor(const RsModel *model, guint index)
{
    g_return_val_if_fail(index < model->tensors->len, NULL);
    return g_ptr_array_index(model->tensors, index);
}

gint
rs_model_find_tensor(const RsModel *model, const char *name)
{
    return (gint)GPOINTER_TO_UINT(g_hash_table_lookup(model->by_name, name)) - 1;
}

guint64
rs_tensor_spec_get_n_elems(const RsTensorSpec *spec)
{
    guint64 n = 1;
    for (guint d = 0; d < spec->n_dims; d++)
        n *= (guint64)spec->shape[d];
    return n;
}

guint64
rs_tensor_spec_get_n_params(const RsTensorSpec *spec)
{
    return spec->n_params;
}

guint64
rs_tensor_spec_get_size_bytes(const RsTensorSpec *spec)
{
    return rs_dtype_get_n_bytes(spec->dtype, rs_tensor_spec_get_n_elems(spec));
}

guint64
rs_model_get_n_params(const RsModel *model)
{
    guint64 n = 0;
    for (guint i = 0; i < model->tensors->len; i++)
        n += rs_tensor_spec_get_n_params(g_ptr_array_index(model->tensors, i));
    return n;
}

/* An expert's weight or its replicated [E, out] bias. */
static gboolean
role_is_expert(RsTensorRole role)
{
    return rs_tensor_role_is_expert_weight(role) || role == RS_ROLE_EXPERT_REPLICATED;
}

guint64
rs_model_get_n_active_params(const RsModel *model)
{
    guint64 n = 0;
    for (guint i = 0; i < model->tensors->len; i++) {
        const RsTensorSpec *t = g_ptr_array_index(model->tensors, i);
        guint64 params = rs_tensor_spec_get_n_params(t);
        if (role_is_expert(t->role) && t->shape[0] > 0 && model->n_experts_per_token > 0)
            params = params / (guint64)t->shape[0] * model->n_experts_per_token;
        n += params;
    }
    return n;
}

guint64
rs_model_get_n_embedding_params(const RsModel *model)
{
    guint64 n = 0;
    for (guint i = 0; i < model->tensors->len; i++) {
        const RsTensorSpec *t = g_ptr_array_index(model->tensors, i);
        if (g_str_has_suffix(t->name, "embed_tokens.weight"))
            n += rs_tensor_spec_get_n_params(t);
    }
    return n;
}

guint64
rs_model_get_size_bytes(const RsModel *model)
{
    guint64 n = 0;
    for (guint i = 0; i < model->tensors->len; i++)
        n += rs_tensor_spec_get_size_bytes(g_ptr_array_index(model->tensors, i));
    return n;
}

void
rs_model_get_size_bytes_by_dtype(const RsModel *model, guint64 *bytes_out)
{
    memset(bytes_out, 0, sizeof(guint64) * RS_DTYPE_N);
    for (guint i = 0; i < model->tensors->len; i++) {
        const RsTensorSpec *t = g_ptr_array_index(model->tensors, i);
        bytes_out[t->dtype] += rs_tensor_spec_get_size_bytes(t);
    }
}

static const char *const role_names[RS_ROLE_N] = {
    [RS_ROLE_COLUMN_PARALLEL] = "column-parallel",
    [RS_ROLE_ROW_PARALLEL] = "row-parallel",
    [RS_ROLE_VOCAB_PARALLEL] = "vocab-parallel",
    [RS_ROLE_REPLICATED] = "replicated",
    [RS_ROLE_NORM] = "norm",
    [RS_ROLE_ROUTER] = "router",
    [RS_ROLE_EXPERT_COLUMN] = "expert-column",
    [RS_ROLE_EXPERT_ROW] = "expert-row",
    [RS_ROLE_EXPERT_REPLICATED] = "expert-replicated",
    [RS_ROLE_COLUMN_SEGMENTED] = "column-segmented",
    [RS_ROLE_EXPERT_GATE_UP_FUSED] = "expert-gate-up-fused",
};

char *
rs_model_expert_group_name(const char *name, gint64 *expert)
{
    const char *key = "experts.";
    for (const char *p = strstr(name, key); p != NULL; p = strstr(p + 1, key)) {
        const char *digits = p + strlen(key), *end = digits;
        while (g_ascii_isdigit(*end))
            end++;
        gboolean at_component = p == name || p[-1] == '.';
        gboolean number =
            end > digits && end - digits <= 18 && (*digits != '0' || end == digits + 1);
        if (at_component && number && *end == '.') {
            *expert = g_ascii_strtoll(digits, NULL, 10);
            return g_strdup_printf("%.*s%s", (int)(digits - name), name, end + 1);
        }
    }
    return NULL;
}

gboolean
rs_tensor_role_is_expert_weight(RsTensorRole role)
{
    return role == RS_ROLE_EXPERT_COLUMN || role == RS_ROLE_EXPERT_ROW ||
           role == RS_ROLE_EXPERT_GATE_UP_FUSED;
}

const char *
rs_tensor_role_get_name(RsTensorRole role)
{
    g_return_val_if_fail(role < RS_ROLE_N, "invalid");
    return role_names[role];
}

gboolean
rs_tensor_role_parse(const char *name, RsTensorRole *role_out)
{
    for (guint i = 0; i < RS_ROLE_N; i++) {
        if (strcmp(name, role_names[i]) == 0) {
            *role_out = (RsTensorRole)i;
            return TRUE;
        }
    }
    return FALSE;
}

/* model.c — the model container, its YAML loading and the config reader generators use.
 * Loading reads name, family and dtype, hands every other key to the family generator
 * through RsModelConfig, and fails on keys no generator consumed. */
#include "sim/model-private.h"

#include "sim/yaml-reader.h"

#include <stdarg.h>
#include <string.h>

G_DEFINE_QUARK(rs-model-error-quark, rs_model_error)

typedef struct {
    char *value; /* NULL for an explicit null */
    char *where;
    gboolean consumed;
} ConfigEntry;

struct _RsModelConfig {
    char *source;
    guint scale; /* width divisor, >= 1 */
    GHashTable *entries; /* key → ConfigEntry* */
    GPtrArray *order;    /* keys in insertion order, for stable messages */
};

static void
config_entry_free(gpointer p)
{
    ConfigEntry *e = p;
    g_free(e->value);
    g_free(e->where);
    g_free(e);
}

RsModelConfig *
rs_model_config_new(const char *source)
{
    RsModelConfig *c = g_new0(RsModelConfig, 1);
    c->source = g_strdup(source);
    c->scale = 1;
    c->entries = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, config_entry_free);
    c->order = g_ptr_array_new_with_free_func(g_free);
    return c;
}

void
rs_model_config_free(RsModelConfig *config)
{
    if (config == NULL)
        return;
    g_hash_table_unref(config->entries);
    g_ptr_array_unref(config->order);
    g_free(config->source);
    g_free(config);
}

void
rs_model_config_set(RsModelConfig *config, const char *key, const char *value, const char *where)
{
    ConfigEntry *e = g_new0(ConfigEntry, 1);
    e->value = g_strdup(value);
    e->where = g_strdup(where);
    if (!g_hash_table_contains(config->entries, key))
        g_ptr_array_add(config->order, g_strdup(key));
    g_hash_table_replace(config->entries, g_strdup(key), e);
}

void
rs_model_config_set_error(RsModelConfig *config, const char *key, GError **error,
                          const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    ConfigEntry *e = key ? g_hash_table_lookup(config->entries, key) : NULL;
    g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG, "%s: %s%s%s",
                e ? e->where : config->source, key ? key : "", key ? ": " : "", message);
}

/* Looks @key up; *entry_out is NULL when absent or null. */
static gboolean
config_find(RsModelConfig *config, const char *key, gboolean required, ConfigEntry **entry_out,
            GError **error)
{
    ConfigEntry *e = g_hash_table_lookup(config->entries, key);
    if (e != NULL)
        e->consumed = TRUE;
    if (e == NULL || e->value == NULL) {
        *entry_out = NULL;
        if (required) {
            rs_model_config_set_error(config, key, error, "required field is missing");
            return FALSE;
        }
        return TRUE;
    }
    *entry_out = e;
    return TRUE;
}

gboolean
rs_model_config_get_int(RsModelConfig *config, const char *key, gboolean required, gint64 min,
                        gint64 max, gint64 *out, GError **error)
{
    ConfigEntry *e;
    if (!config_find(config, key, required, &e, error))
        return FALSE;
    if (e == NULL)
        return TRUE;
    gint64 v;
    if (!g_ascii_string_to_signed(e->value, 10, min, max, &v, NULL)) {
        rs_model_config_set_error(config, key, error,
                                  "\"%s\": expected an integer in [%" G_GINT64_FORMAT
                                  ", %" G_GINT64_FORMAT "]",
                                  e->value, min, max);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

gboolean
rs_model_config_get_width(RsModelConfig *config, const char *key, gboolean required, gint64 max,
                          gint64 *out, GError **error)
{
    gint64 v = 0;
    gboolean had = FALSE;
    ConfigEntry *e = g_hash_table_lookup(config->entries, key);
    had = e != NULL && e->value != NULL;
    if (!rs_model_config_get_int(config, key, required, 1, max, &v, error))
        return FALSE;
    if (had)
        *out = MAX(v / (gint64)config->scale, 1);
    return TRUE;
}

gboolean
rs_model_config_get_bool(RsModelConfig *config, const char *key, gboolean required,
                         gboolean *out, GError **error)
{
    ConfigEntry *e;
    if (!config_find(config, key, required, &e, error))
        return FALSE;
    if (e == NULL)
        return TRUE;
    if (g_ascii_strcasecmp(e->value, "true") == 0) {
        *out = TRUE;
    } else if (g_ascii_strcasecmp(e->value, "false") == 0) {
        *out = FALSE;
    } else {
        rs_model_config_set_error(config, key, error, "\"%s\": expected true or false",
                                  e->value);
        return FALSE;
    }
    return TRUE;
}

gboolean
rs_model_config_get_string(RsModelConfig *config, const char *key, gboolean required,
                           const char **out, GError **error)
{
    ConfigEntry *e;
    if (!config_find(config, key, required, &e, error))
        return FALSE;
    if (e != NULL)
        *out = e->value;
    return TRUE;
}

gboolean
rs_model_config_check_consumed(RsModelConfig *config, GError **error)
{
    for (guint i = 0; i < config->order->len; i++) {
        const char *key = g_ptr_array_index(config->order, i);
        ConfigEntry *e = g_hash_table_lookup(config->entries, key);
        if (!e->consumed) {
            rs_model_config_set_error(config, key, error,
                                      "unknown field for this family (a typo?)");
            return FALSE;
        }
    }
    return TRUE;
}

static void
tensor_spec_free(gpointer p)
{
    RsTensorSpec *t = p;
    g_free(t->name);
    g_free(t);
}

static RsModel *
model_new(void)
{
    RsModel *m = g_new0(RsModel, 1);
    m->tensors = g_ptr_array_new_with_free_func(tensor_spec_free);
    m->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    return m;
}

void
rs_model_free(RsModel *model)
{
    if (model == NULL)
        return;
    g_hash_table_unref(model->by_name);
    g_ptr_array_unref(model->tensors);
    g_free(model->name);
    g_free(model->family);
    g_free(model);
}

static gboolean
layer_is_kept(const RsModel *model, gint layer)
{
    if (!model->has_layer_range)
        return TRUE;
    return layer >= 0 && layer < (gint)model->n_layers && layer >= model->first_layer &&
           layer <= model->last_layer;
}

void
rs_model_add_tensor(RsModel *model, const char *name, RsTensorRole role, gint layer,
                    RsDtype dtype, guint n_heads, guint n_dims, ...)
{
    g_return_if_fail(n_dims <= RS_MAX_DIMS);
    if (!layer_is_kept(model, layer)) {
        /* Keep rs_model_mark_kv_heads() from marking the previous tensor. */
        model->last_dropped = TRUE;
        return;
    }
    model->last_dropped = FALSE;
    RsTensorSpec *t = g_new0(RsTensorSpec, 1);
    t->name = g_strdup(name);
    t->role = role;
    t->layer = layer;
    t->dtype = dtype;
    t->n_heads = n_heads;
    t->kv_heads = FALSE;
    t->n_dims = n_dims;
    va_list args;
    va_start(args, n_dims);
    for (guint d = 0; d < n_dims; d++)
        t->shape[d] = va_arg(args, gint64);
    va_end(args);
    g_ptr_array_add(model->tensors, t);
    g_hash_table_insert(model->by_name, t->name, GUINT_TO_POINTER(model->tensors->len));
}

void
rs_model_mark_kv_heads(RsModel *model)
{
    if (model->last_dropped)
        return;
    g_return_if_fail(model->tensors->len > 0);
    RsTensorSpec *t = g_ptr_array_index(model->tensors, model->tensors->len - 1);
    t->kv_heads = TRUE;
}

gboolean
rs_model_options_parse_layers(RsModelOptions *options, const char *text, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(text, "-", 3);
    guint n = g_strv_length(parts);
    guint64 first = 0, last = 0;
    gboolean ok = (n == 1 || n == 2) &&
                  g_ascii_string_to_unsigned(g_strstrip(parts[0]), 10, 0, G_MAXINT32, &first,
                                             NULL) &&
                  g_ascii_string_to_unsigned(g_strstrip(parts[n - 1]), 10, 0, G_MAXINT32, &last,
                                             NULL) &&
                  first <= last;
    if (!ok) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "layers \"%s\": expected A-B with 0 <= A <= B (decoder layers, inclusive)",
                    text);
        return FALSE;
    }
    options->has_layer_range = TRUE;
    options->first_layer = (gint)first;
    options->last_layer = (gint)last;
    return TRUE;
}

RsModel *
rs_model_load_file(const char *path, const RsModelOptions *options, GError **error)
{
    static const RsModelOptions defaults = {0};
    if (options == NULL)
        options = &defaults;
    g_autoptr(RsYaml) yaml = rs_yaml_load_file(path, error);
    if (yaml == NULL)
        return NULL;
    yaml_node_t *root = rs_yaml_get_root_mapping(yaml, error);
    if (root == NULL)
        return NULL;

    g_autoptr(RsModelConfig) config = rs_model_config_new(path);
    for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
         pair < root->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = rs_yaml_node_at(yaml, pair->key);
        yaml_node_t *v = rs_yaml_node_at(yaml, pair->value);
        const char *key = rs_yaml_scalar_value(k);
        if (key == NULL || v->type != YAML_SCALAR_NODE) {
            rs_yaml_set_error(yaml, v, NULL, key, error, RS_YAML_ERROR_TYPE,
                              "expected a single value");
            return NULL;
        }
        g_autofree char *where =
            g_strdup_printf("%s:%zu:%zu", path, v->start_mark.line + 1, v->start_mark.column + 1);
        const char *value = rs_yaml_scalar_value(v);
        gboolean is_null = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                           (strcmp(value, "null") == 0 || strcmp(value, "~") == 0 || *value == 0);
        rs_model_config_set(config, key, is_null ? NULL : value, where);
    }

    g_autoptr(RsModel) model = model_new();
    model->scale = options->scale > 1 ? options->scale : 1;
    config->scale = model->scale;
    if (options->has_layer_range) {
        if (options->first_layer < 0 || options->last_layer < options->first_layer) {
            g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                        "layers %d-%d: expected a range A-B with 0 <= A <= B",
                        options->first_layer, options->last_layer);
            return NULL;
        }
        model->has_layer_range = TRUE;
        model->first_layer = options->first_layer;
        model->last_layer = options->last_layer;
    }
    const char *name = NULL, *family = NULL, *dtype_name = "bf16";
    if (!rs_model_config_get_string(config, "name", TRUE, &name, error) ||
        !rs_model_config_get_string(config, "family", TRUE, &family, error) ||
        !rs_model_config_get_string(config, "dtype", FALSE, &dtype_name, error))
        return NULL;
    model->name = g_strdup(name);
    model->family = g_strdup(family);
    g_autoptr(GError) dtype_error = NULL;
    if (!rs_dtype_parse(dtype_name, &model->dtype, &dtype_error)) {
        rs_model_config_set_error(config, "dtype", error, "%s", dtype_error->message);
        return NULL;
    }
    if (options->has_dtype)
        model->dtype = options->dtype;

    /* Config values that describe the model but do not change its tensors; accepted so
     * that a config.json copied into YAML loads unchanged. */
    static const char *const informational[] = {
        "model_type", "architectures", "rms_norm_eps", "rope_theta", "max_position_embeddings",
        "hidden_act", "initializer_range", "attention_dropout", "bos_token_id", "eos_token_id",
        "use_cache", "source", "num_experts_per_tok_note", "transformers_version",
    };
    for (guint i = 0; i < G_N_ELEMENTS(informational); i++) {
        const char *ignored;
        rs_model_config_get_string(config, informational[i], FALSE, &ignored, NULL);
    }

    RsFamilyGenerator generate = rs_model_family_lookup(family);
    if (generate == NULL) {
        g_autofree char *list = rs_model_families_list();
        g_autoptr(GError) tmp = NULL;
        rs_model_config_set_error(config, "family", &tmp, "unknown family \"%s\" (supported: %s)",
                                  family, list);
        g_set_error_literal(error, RS_MODEL_ERROR, RS_MODEL_ERROR_UNKNOWN_FAMILY, tmp->message);
        return NULL;
    }
    if (!generate(model, config, options, error))
        return NULL;
    if (!rs_model_config_check_consumed(config, error))
        return NULL;
    if (model->has_layer_range && model->last_layer >= (gint)model->n_layers) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: layers %d-%d: the model has layers 0-%u", path, model->first_layer,
                    model->last_layer, model->n_layers - 1);
        return NULL;
    }
    return g_steal_pointer(&model);
}

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

char *
rs_model_format_variant(const RsModel *model)
{
    GString *s = g_string_new(NULL);
    if (model->scale > 1)
        g_string_append_printf(s, "scale 1/%u", model->scale);
    if (model->has_layer_range)
        g_string_append_printf(s, "%slayers %d-%d", s->len ? ", " : "", model->first_layer,
                               model->last_layer);
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
rs_tensor_spec_get_size_bytes(const RsTensorSpec *spec)
{
    return rs_tensor_spec_get_n_elems(spec) * rs_dtype_get_size_bytes(spec->dtype);
}

guint64
rs_model_get_n_params(const RsModel *model)
{
    guint64 n = 0;
    for (guint i = 0; i < model->tensors->len; i++)
        n += rs_tensor_spec_get_n_elems(g_ptr_array_index(model->tensors, i));
    return n;
}

guint64
rs_model_get_n_active_params(const RsModel *model)
{
    guint64 n = 0;
    for (guint i = 0; i < model->tensors->len; i++) {
        const RsTensorSpec *t = g_ptr_array_index(model->tensors, i);
        guint64 elems = rs_tensor_spec_get_n_elems(t);
        if ((t->role == RS_ROLE_EXPERT_COLUMN || t->role == RS_ROLE_EXPERT_ROW) &&
            t->shape[0] > 0)
            elems = elems / (guint64)t->shape[0] * model->n_experts_per_token;
        n += elems;
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

const char *
rs_tensor_role_get_name(RsTensorRole role)
{
    static const char *const names[RS_ROLE_N] = {
        [RS_ROLE_COLUMN_PARALLEL] = "column-parallel",
        [RS_ROLE_ROW_PARALLEL] = "row-parallel",
        [RS_ROLE_VOCAB_PARALLEL] = "vocab-parallel",
        [RS_ROLE_REPLICATED] = "replicated",
        [RS_ROLE_NORM] = "norm",
        [RS_ROLE_ROUTER] = "router",
        [RS_ROLE_EXPERT_COLUMN] = "expert-column",
        [RS_ROLE_EXPERT_ROW] = "expert-row",
    };
    g_return_val_if_fail(role < RS_ROLE_N, "invalid");
    return names[role];
}

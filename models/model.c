/* model.c — the model container, loading from each source, and the figures of a model.
 *
 * Loading reads name, family and dtype, hands every other key to the family generator
 * through RsModelConfig, and fails on keys no generator consumed. A config.json gets its
 * family from model_type and its name from _name_or_path (or its folder); a safetensors
 * checkpoint is read by model-import.c. */
#include "models/model-private.h"

#include "models/safetensors.h"
#include "base/yaml-reader.h"

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
    for (guint i = 0; i < n; i++)
        t->segments[i] = sizes[i];
}

/* --- size checks --- */

/* The largest tensor accepted, in elements: byte counts (up to 8 bytes an element) and the
 * sums the planner forms over a few such tensors then still fit in 64 bits. */
#define RS_MODEL_MAX_TENSOR_ELEMS ((guint64)1 << 62)

/* Checked bytes of @n_elems elements of @dtype (rs_dtype_get_n_bytes without the wrap). */
static gboolean
checked_n_bytes(RsDtype dtype, guint64 n_elems, guint64 *bytes_out)
{
    guint64 bits = rs_dtype_get_n_bytes(dtype, 8); /* bits of one element */
    guint64 n_bits;
    if (bits % 8 == 0)
        return !__builtin_mul_overflow(n_elems, bits / 8, bytes_out);
    if (__builtin_mul_overflow(n_elems, bits, &n_bits) || __builtin_add_overflow(n_bits, 7, &n_bits))
        return FALSE;
    *bytes_out = n_bits / 8;
    return TRUE;
}

/* Names the config fields behind @t's dimensions ("intermediate_size x hidden_size") and
 * sets *where_out to the location of the first one (the source when none is known). A
 * dimension no field states alone is written as its number. ASCII "x", not "×": GLib
 * prints messages in the locale's charset, where "×" may become "?". */
static char *
describe_fields(RsModelConfig *config, const RsTensorSpec *t, const char **where_out)
{
    GString *s = g_string_new(NULL);
    for (guint d = 0; d < t->n_dims; d++) {
        if (t->shape[d] == 1)
            continue;
        const char *where = NULL;
        g_autofree char *keys =
            config ? rs_model_config_dup_keys_for_value(config, t->shape[d], &where) : NULL;
        if (keys != NULL && *where_out == NULL)
            *where_out = where;
        g_string_append_printf(s, "%s%s", s->len ? " x " : "", keys ? keys : "");
        if (keys == NULL)
            g_string_append_printf(s, "%" G_GINT64_FORMAT, t->shape[d]);
    }
    return g_string_free(s, FALSE);
}

static char *
format_shape(const RsTensorSpec *t)
{
    GString *s = g_string_new("[");
    for (guint d = 0; d < t->n_dims; d++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? ", " : "", t->shape[d]);
    g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
}

/* "2^60" for a power of two, else "2^60.58": the size of @t's element count, computed in
 * floating point so that it is right also when the count does not fit in 64 bits. */
static char *
format_log2_elems(const RsTensorSpec *t)
{
    double l = 0;
    for (guint d = 0; d < t->n_dims; d++)
        l += log2((double)MAX(t->shape[d], 1));
    if (fabs(l - round(l)) < 1e-9)
        return g_strdup_printf("2^%.0f", l);
    return g_strdup_printf("2^%.2f", l);
}

static void
set_size_error(RsModelConfig *config, const char *source, const RsTensorSpec *t, GError **error,
               gboolean total, const char *what)
{
    const char *where = NULL;
    g_autofree char *dims = describe_fields(config, t, &where);
    /* A total overflows because of the layer count as much as the widths. */
    g_autofree char *fields =
        total && config != NULL && rs_model_config_has(config, "num_hidden_layers")
            ? g_strdup_printf("num_hidden_layers x %s", dims)
            : g_strdup(dims);
    g_autofree char *shape = format_shape(t);
    g_autofree char *log2s = format_log2_elems(t);
    g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                "%s: %s overflows: tensor %s %s %s (%s elements)", where ? where : source,
                fields, t->name, shape, what, log2s);
}

/* Checks every tensor's element count, logical parameters and bytes, and the running
 * totals per model (and so per layer), for 64-bit overflow: a tensor over 2^62 elements or a
 * total that does not fit is bad input (RS_MODEL_ERROR_CONFIG) naming @source and, through
 * @config (may be NULL), the fields whose values make the offending dimensions. Every
 * figure function of this module relies on a model having passed this check. */
static gboolean
check_sizes(const RsModel *model, RsModelConfig *config, const char *source, GError **error)
{
    /* A layer's totals are parts of the model's, so checking the model's covers them. */
    guint64 total_params = 0, total_bytes = 0;
    for (guint i = 0; i < model->tensors->len; i++) {
        const RsTensorSpec *t = g_ptr_array_index(model->tensors, i);
        guint64 n = 1, bytes;
        gboolean ok = TRUE;
        for (guint d = 0; d < t->n_dims && ok; d++)
            ok = t->shape[d] >= 0 && !__builtin_mul_overflow(n, (guint64)t->shape[d], &n);
        if (!ok || n > RS_MODEL_MAX_TENSOR_ELEMS) {
            set_size_error(config, source, t, error, FALSE, "would have more than 2^62 elements");
            return FALSE;
        }
        if (!checked_n_bytes(t->dtype, n, &bytes)) {
            set_size_error(config, source, t, error, FALSE, "would have more than 2^64 bytes");
            return FALSE;
        }
        if (t->n_params > RS_MODEL_MAX_TENSOR_ELEMS * 2 ||
            __builtin_add_overflow(total_params, t->n_params, &total_params) ||
            __builtin_add_overflow(total_bytes, bytes, &total_bytes)) {
            set_size_error(config, source, t, error, TRUE,
                           "makes the model's parameter or byte total exceed 2^64");
            return FALSE;
        }
    }
    return TRUE;
}

/* --- reading a model file into a config --- */

static gboolean
yaml_flatten(RsYaml *yaml, RsModelConfig *config, const char *path, const char *key,
             yaml_node_t *v, GError **error)
{
    g_autofree char *where =
        g_strdup_printf("%s:%zu:%zu", path, v->start_mark.line + 1, v->start_mark.column + 1);
    if (v->type == YAML_MAPPING_NODE) {
        if (!rs_yaml_check_unique_keys(yaml, v, key, error))
            return FALSE;
        for (yaml_node_pair_t *pair = v->data.mapping.pairs.start;
             pair < v->data.mapping.pairs.top; pair++) {
            const char *sub = rs_yaml_scalar_value(rs_yaml_node_at(yaml, pair->key));
            g_autofree char *full = g_strdup_printf("%s.%s", key, sub ? sub : "?");
            if (!yaml_flatten(yaml, config, path, full, rs_yaml_node_at(yaml, pair->value),
                              error))
                return FALSE;
        }
        return TRUE;
    }
    if (v->type == YAML_SEQUENCE_NODE) {
        gboolean scalars = TRUE;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++)
            if (rs_yaml_node_at(yaml, *it)->type != YAML_SCALAR_NODE)
                scalars = FALSE;
        guint i = 0;
        if (scalars) {
            GString *s = g_string_new(NULL);
            for (yaml_node_item_t *it = v->data.sequence.items.start;
                 it < v->data.sequence.items.top; it++, i++)
                g_string_append_printf(s, "%s%s", i ? "," : "",
                                       rs_yaml_scalar_value(rs_yaml_node_at(yaml, *it)));
            rs_model_config_set_list(config, key, s->str, where);
            g_string_free(s, TRUE);
            return TRUE;
        }
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++, i++) {
            g_autofree char *full = g_strdup_printf("%s.%u", key, i);
            if (!yaml_flatten(yaml, config, path, full, rs_yaml_node_at(yaml, *it), error))
                return FALSE;
        }
        return TRUE;
    }
    const char *value = rs_yaml_scalar_value(v);
    gboolean is_null = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                       (strcmp(value, "null") == 0 || strcmp(value, "~") == 0 || *value == 0);
    rs_model_config_set(config, key, is_null ? NULL : value, where);
    return TRUE;
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

static gboolean
load_yaml_config(RsModelConfig *config, const char *path, GError **error)
{
    g_autoptr(RsYaml) yaml = rs_yaml_load_file(path, error);
    if (yaml == NULL)
        return FALSE;
    yaml_node_t *root = rs_yaml_get_root_mapping(yaml, error);
    if (root == NULL || !rs_yaml_check_unique_keys(yaml, root, NULL, error))
        return FALSE;
    for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
         pair < root->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = rs_yaml_node_at(yaml, pair->key);
        const char *key = rs_yaml_scalar_value(k);
        if (key == NULL) {
            rs_yaml_set_error(yaml, k, NULL, NULL, error, RS_YAML_ERROR_TYPE,
                              "expected a plain key");
            return FALSE;
        }
        if (!yaml_flatten(yaml, config, path, key, rs_yaml_node_at(yaml, pair->value), error))
            return FALSE;
    }
    return TRUE;
}

/* The model_type values each family reads. Families read the model_type of their own
 * name; Kimi-K2's config.json says kimi_k2 and its checkpoint is DeepseekV3ForCausalLM. */
static const struct {
    const char *model_type;
    const char *family;
} model_types[] = {
    {"llama", "llama"},           {"qwen3", "qwen3"},           {"qwen3_moe", "qwen3_moe"},
    {"mixtral", "mixtral"},       {"gpt_oss", "gpt_oss"},       {"glm4_moe", "glm4_moe"},
    {"deepseek_v3", "deepseek_v3"}, {"kimi_k2", "deepseek_v3"}, {"kimi_k3", "kimi_k3"},
    {"qwen3_next", "qwen3_next"},
};

const char *
rs_model_family_for_model_type(const char *model_type)
{
    for (guint i = 0; i < G_N_ELEMENTS(model_types); i++)
        if (strcmp(model_type, model_types[i].model_type) == 0)
            return model_types[i].family;
    return NULL;
}

static char *
model_types_list(void)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(model_types); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", model_types[i].model_type);
    return g_string_free(s, FALSE);
}

/* Gives a config.json its name and family: the name from _name_or_path or the folder,
 * the family from model_type. */
static gboolean
name_json_config(RsModelConfig *config, const char *path, GError **error)
{
    const char *model_type = NULL, *name_or_path = NULL;
    if (!rs_model_config_get_string(config, "model_type", TRUE, &model_type, error) ||
        !rs_model_config_get_string(config, "_name_or_path", FALSE, &name_or_path, error))
        return FALSE;
    const char *family = rs_model_family_for_model_type(model_type);
    if (family == NULL) {
        g_autofree char *families = rs_model_families_list();
        g_autofree char *types = model_types_list();
        g_autoptr(GError) tmp = NULL;
        rs_model_config_set_error(config, "model_type", &tmp,
                                  "unknown model_type \"%s\" (supported families: %s; "
                                  "model_type values: %s)",
                                  model_type, families, types);
        g_set_error_literal(error, RS_MODEL_ERROR, RS_MODEL_ERROR_UNKNOWN_FAMILY, tmp->message);
        return FALSE;
    }
    g_autofree char *name = NULL;
    if (name_or_path != NULL && *name_or_path != '\0') {
        name = g_path_get_basename(name_or_path);
    } else {
        g_autofree char *abs = g_canonicalize_filename(path, NULL);
        g_autofree char *dir = g_path_get_dirname(abs);
        name = g_path_get_basename(dir);
    }
    if (!rs_model_config_has(config, "name"))
        rs_model_config_set(config, "name", name, path);
    if (!rs_model_config_has(config, "family"))
        rs_model_config_set(config, "family", family, path);
    return TRUE;
}

/* Parses a published figure: an exact integer ("671026419200", "1,026,408,232,448") or a
 * rounded one with a suffix ("2.8T", "141B", "355 B"). */
static gboolean
parse_published(const char *text, guint64 *value_out, gboolean *rounded_out)
{
    g_autofree char *s = g_strdup(text);
    g_strstrip(s);
    GString *digits = g_string_new(NULL);
    for (const char *p = s; *p; p++)
        if (*p != ',' && *p != '_' && *p != ' ')
            g_string_append_c(digits, *p);
    g_autofree char *d = g_string_free(digits, FALSE);
    gsize n = strlen(d);
    if (n == 0)
        return FALSE;
    double mult = 0;
    switch (d[n - 1]) {
    case 'T':
        mult = 1e12;
        break;
    case 'B':
        mult = 1e9;
        break;
    case 'M':
        mult = 1e6;
        break;
    default:
        break;
    }
    if (mult == 0) {
        guint64 v;
        if (!g_ascii_string_to_unsigned(d, 10, 1, G_MAXUINT64, &v, NULL))
            return FALSE;
        *value_out = v;
        *rounded_out = FALSE;
        return TRUE;
    }
    d[n - 1] = '\0';
    char *end = NULL;
    double v = g_ascii_strtod(d, &end);
    if (end == d || *end != '\0' || !isfinite(v) || v <= 0)
        return FALSE;
    *value_out = (guint64)llround(v * mult);
    *rounded_out = TRUE;
    return TRUE;
}

/* Config values that describe the model but do not change its tensors; accepted so that a
 * config.json (or one copied into YAML) loads unchanged. The first group are model fields,
 * the second the bookkeeping keys transformers writes into every config.json
 * (PretrainedConfig attributes). */
static const char *const informational[] = {
    "model_type", "architectures", "_name_or_path", "transformers_version", "rms_norm_eps",
    "layer_norm_eps", "rope_theta", "max_position_embeddings", "hidden_act",
    "initializer_range", "attention_dropout", "bos_token_id", "eos_token_id", "pad_token_id",
    "use_cache", "source", "num_experts_per_tok_note", "pretraining_tp", "use_sliding_window",
    "sliding_window", "max_window_layers", "output_router_logits", "router_aux_loss_coef",
    "router_jitter_noise", "norm_topk_prob", "aux_loss_alpha", "seq_aux", "ep_size",
    "partial_rotary_factor", "swiglu_limit", "initial_context_length", "use_bfloat16",
    "rope_interleave", "mla_use_nope", "moe_renormalize", "moe_router_activation_func",
    "use_grouped_topk", "num_expert_group", "activation_situ_beta",
    "activation_situ_linear_beta", "media_placeholder_token_id", "image_placeholder",
    "ignore_index", "mtp_use_dedicated_embeddings", "layer_types", "decoder_start_token_id",
    "add_cross_attention", "bad_words_ids", "begin_suppress_tokens", "chunk_size_feed_forward",
    "cross_attention_hidden_size", "diversity_penalty", "do_sample", "early_stopping",
    "encoder_no_repeat_ngram_size", "exponential_decay_length_penalty", "finetuning_task",
    "forced_bos_token_id", "forced_eos_token_id", "is_decoder", "is_encoder_decoder",
    "length_penalty", "max_length", "min_length", "no_repeat_ngram_size", "num_beam_groups",
    "num_beams", "num_return_sequences", "output_attentions", "output_hidden_states",
    "output_scores", "prefix", "problem_type", "pruned_heads", "remove_invalid_values",
    "repetition_penalty", "return_dict", "return_dict_in_generate", "sep_token_id",
    "suppress_tokens", "temperature", "tf_legacy_loss", "tie_encoder_decoder",
    "tokenizer_class", "top_k", "top_p", "torchscript", "typical_p",
    "keys_to_ignore_at_inference",
};
/* Whole sub-trees that never change the tensors: rotary scaling, generation bookkeeping,
 * and the vision tower of a vision-language wrapper (only the language model is
 * generated; a checkpoint import reads the vision tensors as they are). */
static const char *const informational_prefixes[] = {
    "rope_scaling", "rope_parameters", "auto_map", "id2label", "label2id",
    "task_specific_params", "vision_config", "text_config",
};

static void
consume_informational(RsModelConfig *config)
{
    for (guint i = 0; i < G_N_ELEMENTS(informational); i++) {
        const char *ignored;
        rs_model_config_get_string(config, informational[i], FALSE, &ignored, NULL);
    }
    for (guint i = 0; i < G_N_ELEMENTS(informational_prefixes); i++)
        rs_model_config_consume_prefix(config, informational_prefixes[i]);
}

/* Builds the model described by @config (from a YAML or JSON file at @path). */
static RsModel *
model_from_config(RsModelConfig *config, const char *path, const RsModelOptions *options,
                  GError **error)
{
    g_autoptr(RsModel) model = rs_model_new();
    model->scale = options->scale > 1 ? options->scale : 1;
    model->storage = options->storage;
    rs_model_config_set_scale(config, model->scale);
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
    const char *name = NULL, *family = NULL, *dtype_name = "bf16", *checkpoint = NULL;
    const char *published = NULL;
    if (!rs_model_config_get_string(config, "name", TRUE, &name, error) ||
        !rs_model_config_get_string(config, "safetensors", FALSE, &checkpoint, error) ||
        !rs_model_config_get_string(config, "family", checkpoint == NULL, &family, error) ||
        !rs_model_config_get_string(config, "torch_dtype", FALSE, &dtype_name, error) ||
        !rs_model_config_get_string(config, "dtype", FALSE, &dtype_name, error) ||
        !rs_model_config_get_string(config, "published_params", FALSE, &published, error))
        return NULL;
    /* Stated for the reader of `reshard models`; not checked. */
    const char *ignored;
    rs_model_config_get_string(config, "published_active_params", FALSE, &ignored, NULL);
    model->name = g_strdup(name);
    g_autoptr(GError) dtype_error = NULL;
    if (!rs_dtype_parse(dtype_name, &model->dtype, &dtype_error)) {
        rs_model_config_set_error(config, rs_model_config_has(config, "dtype") ? "dtype"
                                                                               : "torch_dtype",
                                  error, "%s", dtype_error->message);
        return NULL;
    }
    if (options->has_dtype)
        model->dtype = options->dtype;
    if (published != NULL &&
        !parse_published(published, &model->published_params, &model->published_rounded)) {
        rs_model_config_set_error(config, "published_params", error,
                                  "\"%s\": expected an integer (exact) or a number with T, B "
                                  "or M (a rounded figure, e.g. 2.8T)",
                                  published);
        return NULL;
    }
    consume_informational(config);

    if (checkpoint != NULL) {
        /* A model YAML that points at a checkpoint: tensors from the headers, roles from its
         * `roles:` rules first. A relative path is relative to the YAML file. */
        g_autofree char *dir = g_path_get_dirname(path);
        g_autofree char *ckpt = g_path_is_absolute(checkpoint)
                                    ? g_strdup(checkpoint)
                                    : g_build_filename(dir, checkpoint, NULL);
        model->family = g_strdup(family ? family : "checkpoint");
        if (!rs_model_import_safetensors(model, ckpt, config, options, error))
            return NULL;
        if (!rs_model_config_check_consumed(config, error) ||
            !check_sizes(model, NULL, ckpt, error))
            return NULL;
        return g_steal_pointer(&model);
    }

    model->family = g_strdup(family);
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
    if (!rs_model_config_check_consumed(config, error) ||
        !check_sizes(model, config, path, error))
        return NULL;
    if (model->has_layer_range && model->last_layer >= (gint)model->n_layers) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: layers %d-%d: the model has layers 0-%u", path, model->first_layer,
                    model->last_layer, model->n_layers - 1);
        return NULL;
    }
    return g_steal_pointer(&model);
}

static gboolean
is_checkpoint_path(const char *path)
{
    return g_str_has_suffix(path, ".safetensors") ||
           g_str_has_suffix(path, ".safetensors.index.json");
}

/* A checkpoint given directly: the config.json beside it (when there is one) supplies
 * name, family, head counts and experts per token. */
static RsModel *
load_checkpoint(const char *path, const RsModelOptions *options, GError **error)
{
    if (options->scale > 1) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: --scale applies to generated models; a checkpoint is read as stored",
                    path);
        return NULL;
    }
    g_autofree char *dir = g_path_get_dirname(path);
    g_autofree char *config_path = g_build_filename(dir, "config.json", NULL);
    g_autoptr(RsModelConfig) config = rs_model_config_new(config_path);
    g_autoptr(RsModel) model = rs_model_new();
    model->storage = RS_MODEL_STORAGE_CHECKPOINT;
    if (options->has_layer_range) {
        model->has_layer_range = TRUE;
        model->first_layer = options->first_layer;
        model->last_layer = options->last_layer;
    }
    const char *model_type = NULL;
    if (g_file_test(config_path, G_FILE_TEST_IS_REGULAR)) {
        if (!rs_model_config_load_json(config, config_path, error))
            return NULL;
        rs_model_config_get_string(config, "model_type", FALSE, &model_type, NULL);
    }
    const char *name_or_path = NULL;
    rs_model_config_get_string(config, "_name_or_path", FALSE, &name_or_path, NULL);
    g_autofree char *abs = g_canonicalize_filename(dir, NULL);
    model->name = name_or_path && *name_or_path ? g_path_get_basename(name_or_path)
                                                : g_path_get_basename(abs);
    const char *family = model_type ? rs_model_family_for_model_type(model_type) : NULL;
    model->family = g_strdup(family ? family : model_type ? model_type : "checkpoint");
    if (!rs_model_import_safetensors(model, path, config, options, error) ||
        !check_sizes(model, NULL, path, error))
        return NULL;
    return g_steal_pointer(&model);
}

RsModel *
rs_model_load_file(const char *path, const RsModelOptions *options, GError **error)
{
    static const RsModelOptions defaults = {0};
    if (options == NULL)
        options = &defaults;
    if (is_checkpoint_path(path))
        return load_checkpoint(path, options, error);
    g_autoptr(RsModelConfig) config = rs_model_config_new(path);
    if (g_str_has_suffix(path, ".json")) {
        if (!rs_model_config_load_json(config, path, error) ||
            !name_json_config(config, path, error))
            return NULL;
    } else if (!load_yaml_config(config, path, error)) {
        return NULL;
    }
    return model_from_config(config, path, options, error);
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

guint64
rs_model_get_published_params(const RsModel *model, gboolean *is_rounded_out)
{
    if (is_rounded_out != NULL)
        *is_rounded_out = model->published_rounded;
    return model->published_params;
}

gboolean
rs_model_check_published(const RsModel *model, GError **error)
{
    if (model->published_params == 0)
        return TRUE;
    guint64 n = rs_model_get_n_params(model);
    double diff = ((double)n - (double)model->published_params) / (double)model->published_params;
    if (!model->published_rounded && n != model->published_params) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: generated %" G_GUINT64_FORMAT " parameters, published %" G_GUINT64_FORMAT
                    " (exact): off by %+" G_GINT64_FORMAT,
                    model->name, n, model->published_params,
                    (gint64)n - (gint64)model->published_params);
        return FALSE;
    }
    if (model->published_rounded && fabs(diff) > 0.01) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: generated %" G_GUINT64_FORMAT " parameters, %+.2f%% from the published "
                    "rounded figure %" G_GUINT64_FORMAT " (more than 1%%)",
                    model->name, n, 100 * diff, model->published_params);
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

static gboolean
role_is_expert(RsTensorRole role)
{
    return role == RS_ROLE_EXPERT_COLUMN || role == RS_ROLE_EXPERT_ROW ||
           role == RS_ROLE_EXPERT_REPLICATED;
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
};

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

/* model-load.c — rs_model_load_file(): a model from a model YAML, a config.json or a
 * safetensors checkpoint, chosen by the file name.
 *
 * A YAML or JSON file becomes an RsModelConfig (model-config.c); loading reads name, family
 * and dtype from it, hands every other key to the family generator (model-families.c) or,
 * for a YAML with `safetensors:`, to the checkpoint import (model-import.c), and fails on
 * keys nobody consumed. A config.json gets its family from model_type and its name from
 * _name_or_path (or its folder). Every model is size-checked before it is returned, so the
 * container's figures never overflow. */
#include "models/model-load.h"

#include "base/box.h"
#include "base/data.h"
#include "models/model-config-private.h"
#include "models/model-families-private.h"
#include "models/model-import-private.h"
#include "models/model-private.h"

#include <math.h>
#include <string.h>

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
    g_autofree char *shape = rs_shape_format(t->shape, t->n_dims);
    g_autofree char *log2s = format_log2_elems(t);
    g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                "%s: %s overflows: tensor %s %s %s (%s elements)", where ? where : source,
                fields, t->name, shape, what, log2s);
}

/* Checks every tensor's element count, logical parameters and bytes, and the running
 * totals per model (and so per layer), for 64-bit overflow: a tensor over 2^62 elements or a
 * total that does not fit is bad input (RS_MODEL_ERROR_CONFIG) naming @source and, through
 * @config (may be NULL), the fields whose values make the offending dimensions. Every
 * figure function of the container (model.c) relies on a model having passed this check. */
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

/* --- options --- */

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

/* --- a config.json's family and name --- */

/* The model_type values each family reads. Families read the model_type of their own
 * name; Kimi-K2's config.json says kimi_k2 and its checkpoint is DeepseekV3ForCausalLM. */
static const struct {
    const char *model_type;
    const char *family;
} model_types[] = {
    {"llama", "llama"},           {"qwen3", "qwen3"},           {"qwen3_moe", "qwen3_moe"},
    {"mixtral", "mixtral"},       {"gpt_oss", "gpt_oss"},       {"glm4_moe", "glm4_moe"},
    {"deepseek_v3", "deepseek_v3"}, {"kimi_k2", "deepseek_v3"}, {"kimi_k3", "kimi_k3"},
    {"qwen3_next", "qwen3_next"},   {"deepseek_v32", "deepseek_v32"}, {"kimi_k25", "kimi_k25"},
    {"llama4", "llama4"},           {"qwen3_5_moe", "qwen3_5_moe"},
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

/* The name a config file gives its model: the folder of a plain config.json
 * ("…/DeepSeek-V3.2/config.json"), else the file name less ".config.json" or ".json"
 * ("GLM-4.7.config.json", "qwen.json"). */
static char *
name_from_path(const char *path)
{
    g_autofree char *abs = g_canonicalize_filename(path, NULL);
    g_autofree char *base = g_path_get_basename(abs);
    if (strcmp(base, "config.json") == 0) {
        g_autofree char *dir = g_path_get_dirname(abs);
        return g_path_get_basename(dir);
    }
    static const char *const suffixes[] = {".config.json", ".json"};
    for (guint i = 0; i < G_N_ELEMENTS(suffixes); i++)
        if (g_str_has_suffix(base, suffixes[i]) && strlen(base) > strlen(suffixes[i]))
            return g_strndup(base, strlen(base) - strlen(suffixes[i]));
    return g_steal_pointer(&base);
}

/* A config.json that states no published figure takes the one of the shipped model file
 * (models/NAME.yaml) whose `name` is the model's (compared without case), so that an
 * imported config of a known model is checked against its published total. The figures
 * keep the shipped file's location. */
static void
adopt_shipped_published(RsModelConfig *config, const char *name)
{
    if (rs_model_config_has(config, "published_params") ||
        rs_model_config_has(config, "published_params_mtp"))
        return;
    g_auto(GStrv) shipped = rs_data_list("models");
    for (guint i = 0; shipped[i] != NULL; i++) {
        g_autofree char *path = rs_data_find("models", shipped[i], NULL);
        if (path == NULL)
            continue;
        g_autoptr(RsModelConfig) yaml = rs_model_config_new(path);
        const char *shipped_name = NULL;
        if (!rs_model_config_load_yaml(yaml, path, NULL) ||
            !rs_model_config_get_string(yaml, "name", FALSE, &shipped_name, NULL) ||
            shipped_name == NULL || g_ascii_strcasecmp(shipped_name, name) != 0)
            continue;
        static const char *const keys[] = {"published_params", "published_params_mtp"};
        for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
            const char *value = NULL;
            rs_model_config_get_string(yaml, keys[k], FALSE, &value, NULL);
            if (value != NULL)
                rs_model_config_set(config, keys[k], value, path);
        }
        return;
    }
}

/* Gives a config.json its name and family: the name from _name_or_path or the file (see
 * name_from_path), the family from model_type, and the published figures of the shipped
 * model of that name. */
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
    if (name_or_path != NULL && *name_or_path != '\0')
        name = g_path_get_basename(name_or_path);
    else
        name = name_from_path(path);
    if (!rs_model_config_has(config, "name"))
        rs_model_config_set(config, "name", name, path);
    if (!rs_model_config_has(config, "family"))
        rs_model_config_set(config, "family", family, path);
    adopt_shipped_published(config, name);
    return TRUE;
}

/* --- a model from its config --- */

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
    "ignore_index", "layer_types", "decoder_start_token_id",
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
/* Whole sub-trees that never change the tensors: rotary scaling and generation
 * bookkeeping. A wrapper's text_config is merged at the top (model-config.c); only its
 * model_type stays under text_config. vision_config is the family's to read: a family that
 * generates no vision tower leaves a warning (see warn_unread_vision). */
static const char *const informational_prefixes[] = {
    "rope_scaling", "rope_parameters", "auto_map", "id2label", "label2id",
    "task_specific_params", "text_config",
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

/* Returns: (transfer full): an empty model with @options' scale, storage and layer range
 * (the scale also set on @config), or NULL for a malformed range. */
static RsModel *
model_new_for_options(RsModelConfig *config, const RsModelOptions *options, GError **error)
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
    return g_steal_pointer(&model);
}

/* Reads name, dtype (@options' override wins) and published_params into @model, and
 * consumes the informational keys. *@family_out and *@checkpoint_out borrow the family
 * (required unless the config names a checkpoint) and the `safetensors:` path, or NULL. */
static gboolean
read_identity(RsModel *model, RsModelConfig *config, const RsModelOptions *options,
              const char **family_out, const char **checkpoint_out, GError **error)
{
    const char *name = NULL, *family = NULL, *dtype_name = "bf16", *checkpoint = NULL;
    const char *published = NULL, *published_mtp = NULL, *torch_dtype = NULL, *dtype = NULL;
    if (!rs_model_config_get_string(config, "name", TRUE, &name, error) ||
        !rs_model_config_get_string(config, "safetensors", FALSE, &checkpoint, error) ||
        !rs_model_config_get_string(config, "family", checkpoint == NULL, &family, error) ||
        !rs_model_config_get_string(config, "torch_dtype", FALSE, &torch_dtype, error) ||
        !rs_model_config_get_string(config, "dtype", FALSE, &dtype, error) ||
        !rs_model_config_get_string(config, "published_params", FALSE, &published, error) ||
        !rs_model_config_get_string(config, "published_params_mtp", FALSE, &published_mtp,
                                    error))
        return FALSE;
    /* A model_type (informational, as config.json writes it) that names another family
     * than family: the file says two things (family won silently). */
    const char *model_type = NULL;
    rs_model_config_get_string(config, "model_type", FALSE, &model_type, NULL);
    const char *typed = model_type ? rs_model_family_for_model_type(model_type) : NULL;
    if (family != NULL && typed != NULL && strcmp(typed, family) != 0) {
        rs_model_config_set_error(config, "model_type", error,
                                  "%s is the %s family, but family: %s; give one of them",
                                  model_type, typed, family);
        return FALSE;
    }
    /* Stated for the reader of `reshard models`; not checked. */
    const char *ignored;
    rs_model_config_get_string(config, "published_active_params", FALSE, &ignored, NULL);
    model->name = g_strdup(name);
    /* Both keys (transformers writes torch_dtype, later versions dtype): they must agree,
     * or the file says two things (dtype won silently). */
    RsDtype torch_parsed, dtype_parsed;
    if (torch_dtype != NULL && dtype != NULL && rs_dtype_parse(torch_dtype, &torch_parsed, NULL) &&
        rs_dtype_parse(dtype, &dtype_parsed, NULL) && torch_parsed != dtype_parsed) {
        rs_model_config_set_error(config, "dtype", error,
                                  "%s contradicts torch_dtype: %s; give one of them", dtype,
                                  torch_dtype);
        return FALSE;
    }
    dtype_name = dtype ? dtype : torch_dtype ? torch_dtype : dtype_name;
    g_autoptr(GError) dtype_error = NULL;
    if (!rs_dtype_parse(dtype_name, &model->dtype, &dtype_error)) {
        rs_model_config_set_error(config, rs_model_config_has(config, "dtype") ? "dtype"
                                                                               : "torch_dtype",
                                  error, "%s", dtype_error->message);
        return FALSE;
    }
    if (options->has_dtype)
        model->dtype = options->dtype;
    /* published_params counts the model without its MTP layers, published_params_mtp with
     * them (the Hugging Face safetensors total of a checkpoint that stores them); each
     * applies to the form generated. */
    const struct {
        const char *key, *text;
        guint64 *value;
        gboolean *rounded;
    } figures[] = {
        {"published_params", published, &model->published_params, &model->published_rounded},
        {"published_params_mtp", published_mtp, &model->published_mtp_params,
         &model->published_mtp_rounded},
    };
    for (guint i = 0; i < G_N_ELEMENTS(figures); i++) {
        if (figures[i].text != NULL &&
            !parse_published(figures[i].text, figures[i].value, figures[i].rounded)) {
            rs_model_config_set_error(config, figures[i].key, error,
                                      "\"%s\": expected an integer (exact) or a number with T, "
                                      "B or M (a rounded figure, e.g. 2.8T)",
                                      figures[i].text);
            return FALSE;
        }
    }
    model->include_mtp = options->include_mtp;
    consume_informational(config);
    *family_out = family;
    *checkpoint_out = checkpoint;
    return TRUE;
}

static void take_warnings(RsModel *model, RsModelConfig *config);

/* A model YAML that points at a checkpoint: tensors from the headers, roles from its
 * `roles:` rules first. A relative @checkpoint is relative to the YAML file @path. */
static gboolean
import_checkpoint_yaml(RsModel *model, RsModelConfig *config, const char *path,
                       const char *checkpoint, const char *family,
                       const RsModelOptions *options, GError **error)
{
    g_autofree char *dir = g_path_get_dirname(path);
    g_autofree char *ckpt = g_path_is_absolute(checkpoint)
                                ? g_strdup(checkpoint)
                                : g_build_filename(dir, checkpoint, NULL);
    model->family = g_strdup(family ? family : "checkpoint");
    if (!rs_model_import_safetensors(model, ckpt, config, options, error) ||
        !rs_model_config_check_consumed(config, error) || !check_sizes(model, NULL, ckpt, error))
        return FALSE;
    take_warnings(model, config);
    return TRUE;
}

typedef struct {
    guint n_unread;
    const char *first_where;
} UnreadScan;

static void
count_unread(const char *subkey, const char *value, const char *where, gpointer data)
{
    UnreadScan *scan = data;
    if (scan->n_unread++ == 0)
        scan->first_where = where;
}

/* A vision_config the family did not read: the family generates only the language model,
 * so the vision tower's weights are not in the refit. Said as a warning (never silent),
 * and the keys are consumed. */
static void
warn_unread_vision(RsModel *model, RsModelConfig *config)
{
    if (!rs_model_config_has_unconsumed_prefix(config, "vision_config."))
        return;
    UnreadScan scan = {0};
    rs_model_config_foreach_prefix(config, "vision_config.", count_unread, &scan);
    rs_model_config_warn(config, "vision_config",
                         "family %s generates the language model only; the vision tower "
                         "(%u keys) is not in the refit",
                         model->family, scan.n_unread);
}

/* Copies the config's warnings to @model. */
static void
take_warnings(RsModel *model, RsModelConfig *config)
{
    GPtrArray *w = rs_model_config_get_warnings(config);
    for (guint i = 0; i < w->len; i++)
        g_ptr_array_add(model->warnings, g_strdup(g_ptr_array_index(w, i)));
}

/* Runs @family's generator on @config, then checks every key was read, the sizes, and that
 * the layer range lies inside the model. */
static gboolean
generate_family(RsModel *model, RsModelConfig *config, const char *path, const char *family,
                const RsModelOptions *options, GError **error)
{
    model->family = g_strdup(family);
    RsFamilyGenerator generate = rs_model_family_lookup(family);
    if (generate == NULL) {
        g_autofree char *list = rs_model_families_list();
        g_autoptr(GError) tmp = NULL;
        rs_model_config_set_error(config, "family", &tmp, "unknown family \"%s\" (supported: %s)",
                                  family, list);
        g_set_error_literal(error, RS_MODEL_ERROR, RS_MODEL_ERROR_UNKNOWN_FAMILY, tmp->message);
        return FALSE;
    }
    if (!generate(model, config, options, error))
        return FALSE;
    rs_model_note_mtp(model);
    warn_unread_vision(model, config);
    if (!rs_model_config_check_consumed(config, error) || !check_sizes(model, config, path, error))
        return FALSE;
    take_warnings(model, config);
    if (model->has_layer_range && model->last_layer >= (gint)model->n_layers) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_LAYER_RANGE,
                    "layers %d-%d: the model in %s has layers 0-%u", model->first_layer,
                    model->last_layer, path, model->n_layers - 1);
        return FALSE;
    }
    return TRUE;
}

/* Builds the model described by @config (from a YAML or JSON file at @path). */
static RsModel *
model_from_config(RsModelConfig *config, const char *path, const RsModelOptions *options,
                  GError **error)
{
    g_autoptr(RsModel) model = model_new_for_options(config, options, error);
    const char *family = NULL, *checkpoint = NULL;
    if (model == NULL || !read_identity(model, config, options, &family, &checkpoint, error))
        return NULL;
    gboolean ok = checkpoint != NULL
                      ? import_checkpoint_yaml(model, config, path, checkpoint, family, options,
                                               error)
                      : generate_family(model, config, path, family, options, error);
    return ok ? g_steal_pointer(&model) : NULL;
}

/* --- a checkpoint, and the entry point --- */

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
    take_warnings(model, config); /* (they were dropped: a checkpoint's warnings never showed) */
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
    } else if (!rs_model_config_load_yaml(config, path, error)) {
        return NULL;
    }
    return model_from_config(config, path, options, error);
}

/* model-load.h — getting a model: rs_model_load_file() and its options, and what the
 * loaders can read (the families, the config.json model_type values, the role rules).
 *
 * A model comes from one of four sources, chosen by the file name:
 *   - models/NAME.yaml: Hugging Face config.json values plus `name`, `family` and `dtype`;
 *     the family's generator turns them into every weight tensor with its canonical
 *     (Hugging Face checkpoint) name, global shape, dtype, role and layer. Nested mappings
 *     are flattened to dotted keys (quantization_config.quant_method) and sequences of
 *     scalars to comma-separated lists, so a config.json pasted as YAML loads unchanged.
 *   - PATH/config.json (or NAME.config.json, NAME.json): a Hugging Face config read with
 *     json-glib; the family is picked from `model_type` (rs_model_family_for_model_type());
 *     a vision-language wrapper's text_config is merged at the top and its vision_config
 *     read by the families that generate a vision tower (the others warn that it is not in
 *     the refit). The model is named from `_name_or_path` (its last part), else the file
 *     (the folder of a plain config.json), and takes the published figures of the shipped
 *     model of that name. Keys the family needs are an error when missing, or, where the
 *     transformers config class has a default, that default with a warning
 *     (rs_model_get_warning()); keys no generator reads are errors.
 *   - PATH/model.safetensors, PATH/model.safetensors.index.json: the exact tensor names,
 *     shapes and dtypes of a checkpoint, read from its safetensors headers, with roles
 *     assigned by the name rules of models/model-import.c (see rs_model_role_rules_describe());
 *     per-expert tensors experts.{e}.NAME are stacked into experts.NAME [E, …]. The
 *     config.json beside the checkpoint, when there is one, gives the name, family, layer,
 *     head and active-expert counts. A model YAML with `safetensors: PATH` (relative to the
 *     YAML) and `roles: {"GLOB": "ROLE [heads=N|kv_heads=N]" | skip}` overrides the rules;
 *     it reads name, family, dtype, published_params and those counts, and accepts other
 *     config keys unread.
 * Every tensor's element count and the model's parameter and byte totals are checked to fit
 * in 64 bits before a model is returned.
 *
 * Implemented by the loaders: model-load.c (loading, options, model_type values),
 * model-families.c (rs_model_families_list) and model-import.c (rs_model_role_rules_describe).
 */
#pragma once

#include <glib.h>

#include "models/model.h"

G_BEGIN_DECLS

typedef struct {
    gboolean include_mtp; /* emit multi-token-prediction layers (default FALSE) */
    RsModelStorage storage;
    gboolean has_dtype;   /* override the file's dtype for floating-point weights */
    RsDtype dtype;
    /* Scaled models, for runs that must fit a small machine: every width (hidden,
     * intermediate and expert widths, vocabulary, low-rank and per-head dims) is divided
     * by @scale (rounded down, at least 1); head, expert and layer counts are kept, so the
     * structure and the parallel layouts stay the same. Divisibility by a parallel size p
     * is kept when scale × p divides the original width. 0 or 1: full size. */
    guint scale;
    /* Only decoder layers first_layer..last_layer (inclusive); embedding, final norm, head
     * and MTP layers are left out. Layers keep their indices (and pipeline stages). */
    gboolean has_layer_range;
    gint first_layer;
    gint last_layer;
} RsModelOptions;

/**
 * rs_model_options_parse_layers:
 * @options: where the range goes (has_layer_range, first_layer, last_layer)
 * @text: "A-B" (decoder layers A to B inclusive, 0 <= A <= B) or "A" (one layer)
 * @error: RS_MODEL_ERROR_CONFIG ("layers \"7-3\": expected A-B with 0 <= A <= B")
 *
 * Whether B exists in the model is checked when the model loads. Returns: TRUE on success.
 */
gboolean rs_model_options_parse_layers(RsModelOptions *options, const char *text,
                                       GError **error);

/**
 * rs_model_load_file:
 * @path: a model YAML file (.yaml, .yml), a Hugging Face config (.json), a safetensors
 *   checkpoint (.safetensors) or its index (.safetensors.index.json, with its shard files
 *   in the same folder)
 * @options: (nullable): generation options; NULL is all defaults. For a checkpoint,
 *   @options->scale must be 0 or 1 and @options->storage is ignored (a checkpoint is what
 *   it stores); layer ranges and include_mtp apply.
 * @error: RS_YAML_ERROR for a YAML file that does not read or parse; RS_MODEL_ERROR_CONFIG
 *   naming path:line:col and the field for a missing, malformed, unknown or inconsistent
 *   value (or a JSON that does not parse); RS_MODEL_ERROR_UNKNOWN_FAMILY listing the
 *   families (and, for a config.json, the model_type values they read);
 *   RS_SAFETENSORS_ERROR for a checkpoint whose headers do not read (the message names the
 *   file and byte offset); RS_MODEL_ERROR_ROLE for a checkpoint tensor no rule gives a role
 *
 * Returns: (transfer full): the model, or NULL on error.
 */
RsModel *rs_model_load_file(const char *path, const RsModelOptions *options, GError **error);

/**
 * rs_model_families_list:
 * Returns: (transfer full): the supported families, comma-separated.
 */
char *rs_model_families_list(void);

/**
 * rs_model_family_for_model_type:
 * @model_type: the `model_type` of a Hugging Face config.json ("deepseek_v3", "kimi_k2", …)
 *
 * Returns: (transfer none) (nullable): the family whose generator reads that config, or
 * NULL when none does. Each family reads the model_type of its own name (deepseek_v32,
 * kimi_k25, llama4 and qwen3_5_moe included: the wrapper's model_type, not its
 * text_config's); kimi_k2 reads as deepseek_v3 (Kimi-K2 ships DeepseekV3ForCausalLM).
 */
const char *rs_model_family_for_model_type(const char *model_type);

/**
 * rs_model_role_rules_describe:
 * Returns: (transfer none): the documentation of the name rules that give checkpoint
 * tensors their roles, one rule per line, in the order they are tried.
 */
const char *rs_model_role_rules_describe(void);

G_END_DECLS

/* model.h — a model as the list of its weight tensors.
 *
 * A model file (models/NAME.yaml) holds Hugging Face config.json values plus `name`,
 * `family` and `dtype`; the family's generator turns them into every weight tensor with
 * its canonical (Hugging Face checkpoint) name, global shape, dtype, role and layer.
 * Parameter counts are logical parameters; quantisation scales are not counted.
 */
#pragma once

#include <glib.h>

#include "sim/box.h"
#include "sim/dtype.h"

G_BEGIN_DECLS

#define RS_MODEL_ERROR (rs_model_error_quark())
GQuark rs_model_error_quark(void);

typedef enum {
    RS_MODEL_ERROR_CONFIG,         /* a config value missing, malformed or inconsistent */
    RS_MODEL_ERROR_UNKNOWN_FAMILY, /* the family has no generator; the message lists them */
    RS_MODEL_ERROR_NOT_FOUND,      /* no model of that name */
} RsModelError;

/* What a weight is, as far as parallel layouts care. Conventions map a role to placements. */
typedef enum {
    RS_ROLE_COLUMN_PARALLEL, /* [out, in] linear split on out (dim 0) under tensor parallelism */
    RS_ROLE_ROW_PARALLEL,    /* [out, in] linear split on in (dim 1) */
    RS_ROLE_VOCAB_PARALLEL,  /* [vocab, hidden] embedding or output head split on vocab */
    RS_ROLE_REPLICATED,      /* a linear every tensor-parallel rank holds whole (MLA down-proj) */
    RS_ROLE_NORM,            /* norm weights and other vectors, replicated */
    RS_ROLE_ROUTER,          /* MoE router weight or bias, replicated */
    RS_ROLE_EXPERT_COLUMN,   /* [E, out, in] routed experts' gate/up: experts over ep, out over tp */
    RS_ROLE_EXPERT_ROW,      /* [E, out, in] routed experts' down: experts over ep, in over tp */
    RS_ROLE_N
} RsTensorRole;

typedef struct {
    char *name;
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
    RsDtype dtype;
    RsTensorRole role;
    /* -1 for tensors before the first layer (embedding); 0..n_layers-1 for decoder layers;
     * >= n_layers for tensors after them (final norm, head) and MTP layers. */
    gint layer;
    /* For column-parallel attention projections: number of attention heads along dim 0,
     * so conventions keep heads whole; 0 when not a per-head projection. */
    guint n_heads;
    /* TRUE when those heads are key/value heads, which inference engines replicate when
     * tensor parallelism exceeds their count (vLLM QKVParallelLinear). */
    gboolean kv_heads;
} RsTensorSpec;

typedef struct _RsModel RsModel;

typedef struct {
    gboolean include_mtp; /* emit multi-token-prediction layers (default FALSE) */
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
 * @path: a model YAML file
 * @options: (nullable): generation options; NULL is all defaults
 * @error: RS_YAML_ERROR for a file that does not read or parse; RS_MODEL_ERROR_CONFIG naming
 *   path:line:col and the field for a missing, malformed, unknown or inconsistent value;
 *   RS_MODEL_ERROR_UNKNOWN_FAMILY listing the families
 *
 * Returns: (transfer full): the model, or NULL on error.
 */
RsModel *rs_model_load_file(const char *path, const RsModelOptions *options, GError **error);

void rs_model_free(RsModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsModel, rs_model_free)

/** rs_model_get_name: Returns: (transfer none): the display name ("DeepSeek-V3"). */
const char *rs_model_get_name(const RsModel *model);
/** rs_model_get_family: Returns: (transfer none): the family ("deepseek_v3"). */
const char *rs_model_get_family(const RsModel *model);
/** rs_model_get_dtype: Returns: the dtype of the model's floating-point weights. */
RsDtype rs_model_get_dtype(const RsModel *model);
/** rs_model_get_scale: Returns: the width divisor the model was generated with (1: full). */
guint rs_model_get_scale(const RsModel *model);

/**
 * rs_model_format_variant:
 * Returns: (transfer full): "" for the full model, else e.g. "scale 1/16, layers 3-4".
 */
char *rs_model_format_variant(const RsModel *model);

/** rs_model_get_n_layers: Returns: the decoder layer count (num_hidden_layers), also when
 * only a range of layers was generated. */
guint rs_model_get_n_layers(const RsModel *model);
guint rs_model_get_n_tensors(const RsModel *model);
/** rs_model_get_tensor: Returns: (transfer none): tensor @index, alive as @model. */
const RsTensorSpec *rs_model_get_tensor(const RsModel *model, guint index);
/** rs_model_find_tensor: Returns: the index of the tensor named @name, or -1. O(1). */
gint rs_model_find_tensor(const RsModel *model, const char *name);
/** rs_model_get_n_params: Returns: total logical parameters (sum of tensor elements). */
guint64 rs_model_get_n_params(const RsModel *model);
/**
 * rs_model_get_n_active_params:
 * Returns: parameters used per token: all tensors, with each routed-expert tensor counted
 * for num_experts_per_tok of its experts (embedding and head included).
 */
guint64 rs_model_get_n_active_params(const RsModel *model);
/** rs_model_get_size_bytes: Returns: bytes of all tensors in their dtypes. */
guint64 rs_model_get_size_bytes(const RsModel *model);

/** rs_tensor_spec_get_n_elems: Returns: the element count of @spec. */
guint64 rs_tensor_spec_get_n_elems(const RsTensorSpec *spec);
/** rs_tensor_spec_get_size_bytes: Returns: the bytes of @spec in its dtype. */
guint64 rs_tensor_spec_get_size_bytes(const RsTensorSpec *spec);
/** rs_tensor_role_get_name: Returns: (transfer none): "column-parallel", "expert-row", … */
const char *rs_tensor_role_get_name(RsTensorRole role);

/**
 * rs_model_families_list:
 * Returns: (transfer full): the supported families, comma-separated.
 */
char *rs_model_families_list(void);

G_END_DECLS

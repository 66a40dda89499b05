/* model.h — the models/ folder, and its container: a model as the list of its weight tensors.
 *
 * models/ owns what a model is and where one comes from, in layers that point down:
 *   - the container (model.c, model.h, model-private.h): the tensors with their canonical
 *     (Hugging Face checkpoint) names, global shapes, dtypes, roles, layers, fusion groups and
 *     block scales; lookups by name and fusion group; parameter and byte totals; the
 *     published figure a model file states. It depends on base/ only, on nothing else here;
 *   - the config reader (model-config.c): Hugging Face config values from a model YAML or a
 *     config.json, each with the place it came from;
 *   - the safetensors header reader (safetensors.c, safetensors.h);
 *   - the family generators (model-families.c, model-family-*.c): a config's tensors;
 *   - the checkpoint import (model-import.c): a checkpoint's tensors, roles from name rules;
 *   - the loader (model-load.c, model-load.h): rs_model_load_file() picks the source by
 *     file name and drives the layers above the container;
 *   - the shipped model files (models/NAME.yaml).
 * Parameter counts are logical parameters: FP4 values unpacked, quantisation scales and
 * zero padding not counted. A loaded model is immutable.
 */
#pragma once

#include <glib.h>

#include "base/box.h"
#include "base/dtype.h"

G_BEGIN_DECLS

#define RS_MODEL_ERROR (rs_model_error_quark())
GQuark rs_model_error_quark(void);

typedef enum {
    RS_MODEL_ERROR_CONFIG,         /* a config value missing, malformed or inconsistent */
    RS_MODEL_ERROR_UNKNOWN_FAMILY, /* the family has no generator; the message lists them */
    RS_MODEL_ERROR_NOT_FOUND,      /* no model of that name */
    RS_MODEL_ERROR_ROLE,           /* a checkpoint tensor that no role rule matches */
    RS_MODEL_ERROR_LAYER_RANGE,    /* the asked layer range (RsModelOptions) is not the model's:
                                    * "layers A-B: the model in PATH has layers 0-N" */
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
    /* [E, …] per-expert tensor split over experts only, whole on every tensor-parallel rank
     * of its expert: the down-projection bias [E, H] of gpt-oss. */
    RS_ROLE_EXPERT_REPLICATED,
    /* [out, …] fused of n_segments parts along dim 0, each part split on its own over tensor
     * parallelism (Qwen3-Next linear_attn.conv1d [q; k; v]). The segment sizes are in the
     * tensor spec. Until layouts can split segments separately, conventions hold it whole on
     * every rank: a superset of each rank's slice, never wrong data. */
    RS_ROLE_COLUMN_SEGMENTED,
    /* [E, …] routed experts' gate and up stored fused in one tensor, two equal halves
     * [gate; up] along segment_dim (the tensor spec's n_segments = 2, segments = {I, I}):
     * Llama-4 feed_forward.experts.gate_up_proj [E, H, 2I] (segment_dim 2), Qwen3.5 MoE
     * mlp.experts.gate_up_proj [E, 2I, H] (segment_dim 1). Experts over ep; each half
     * chunked on its own over tensor parallelism where the framework fuses gate/up as
     * [gate_local; up_local] (vLLM / SGLang FusedMoE w13, Megatron linear_fc1). */
    RS_ROLE_EXPERT_GATE_UP_FUSED,
    RS_ROLE_N
} RsTensorRole;

/* Sibling projections that frameworks fuse into one local buffer. The tensors of one
 * group share fuse_group (their module prefix, "model.layers.3.self_attn") and the kind,
 * and are told apart by fuse_segment. Whether and how a group is fused is the
 * convention's business (layout/convention.h); the model only says which tensors belong
 * together. */
typedef enum {
    RS_FUSE_NONE,
    RS_FUSE_QKV,     /* segments 0 q_proj, 1 k_proj, 2 v_proj of one attention */
    RS_FUSE_GATE_UP, /* segments 0 gate_proj, 1 up_proj of one SwiGLU MLP or expert group */
    /* One tensor whose rows alternate gate (even) and up (odd): gpt-oss gate_up_proj. */
    RS_FUSE_GATE_UP_INTERLEAVED,
    /* segments 0 q_a_proj, 1 kv_a_proj_with_mqa of one MLA attention (vLLM
     * fused_qkv_a_proj, SGLang fused_qkv_a_proj_with_mqa) */
    RS_FUSE_MLA_A,
} RsFuseKind;
/* How a tensor's stored elements relate to the model's parameters. */
typedef enum {
    RS_TENSOR_FORMAT_PLAIN, /* one parameter per element */
    RS_TENSOR_FORMAT_MXFP4, /* u8 bytes packing two FP4 (e2m1) values each (OCP MX, group 32) */
    /* i32 words packing eight 4-bit integers each (compressed-tensors "pack-quantized",
     * Kimi-K2.5 routed experts); their bf16 group scales are RS_TENSOR_FORMAT_SCALE. */
    RS_TENSOR_FORMAT_INT4,
    RS_TENSOR_FORMAT_SCALE, /* quantisation scales (FP8 block scale_inv, MX e8m0): no parameters */
} RsTensorFormat;

/* Most dim-0 segments of an RS_ROLE_COLUMN_SEGMENTED tensor. */
#define RS_MAX_TENSOR_SEGMENTS 4

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
    RsFuseKind fuse;    /* RS_FUSE_NONE for a tensor never fused with others */
    guint fuse_segment; /* its place in the group (see RsFuseKind) */
    char *fuse_group;   /* the group's module prefix; NULL when fuse is RS_FUSE_NONE */
    RsTensorFormat format;
    /* Logical parameters the tensor holds: its elements for plain tensors, the unpacked FP4
     * values for MXFP4 blocks (the unpadded row length × rows), 0 for scales, the values
     * before zero padding for padded vectors (Kimi-K3 A_log [128] holding 96 heads). */
    guint64 n_params;
    /* RS_ROLE_COLUMN_SEGMENTED and RS_ROLE_EXPERT_GATE_UP_FUSED: the sizes of the parts
     * along dim segment_dim (they sum to shape[segment_dim]); segment_dim is 0 for
     * RS_ROLE_COLUMN_SEGMENTED, the fused gate/up dim (1 or 2) for the other. */
    guint n_segments;
    gint64 segments[RS_MAX_TENSOR_SEGMENTS];
    guint segment_dim;
    /* Block-quantisation scales: the index of the tensor these scales belong to (added
     * just before them) and how many of its elements one scale covers per dim (FP8:
     * [.., 128, 128]; packed MXFP4: [.., 1, 16] bytes). Conventions lay the scales out as
     * their weight's layout in block coordinates, and refuse a weight split that cuts a
     * block (as vLLM does). scale_of is -1 for every other tensor. */
    gint scale_of;
    gint64 scale_block[RS_MAX_DIMS];
} RsTensorSpec;

typedef struct _RsModel RsModel;

/* Which form of the weights a model is generated in. */
typedef enum {
    /* Every weight in the model's dtype (bf16 unless overridden), as the trainer holds it
     * and the refit moves it. The default. */
    RS_MODEL_STORAGE_TRAINING,
    /* As the published checkpoint stores it, from the config's quantization_config: FP8
     * e4m3 linears with f32 weight_scale_inv [ceil(out/128), ceil(in/128)] (DeepSeek-V3,
     * Kimi-K2), MXFP4 expert blocks [E, rows, cols/32, 16] u8 + scales [E, rows, cols/32]
     * u8 (gpt-oss), MXFP4 weight_packed [rows, cols/2] u8 + weight_scale [rows, cols/32] u8
     * (Kimi-K3), so that bytes match the files users hold. Parameter totals are unchanged. */
    RS_MODEL_STORAGE_CHECKPOINT,
} RsModelStorage;

/* Frees @model, its tensors and their names; NULL is a no-op. */
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
/** rs_model_get_storage: Returns: the form the tensors were generated in (a checkpoint read
 * from safetensors headers is RS_MODEL_STORAGE_CHECKPOINT). */
RsModelStorage rs_model_get_storage(const RsModel *model);
/** rs_model_get_n_experts_per_token: Returns: routed experts active per token (0: dense or
 * unknown). */
guint rs_model_get_n_experts_per_token(const RsModel *model);

/**
 * rs_model_get_published_params:
 * @is_rounded_out: (out) (optional): TRUE when the figure is a rounded one ("2.8T"), which
 *   the generated total must match within 1%; FALSE when it is exact
 *
 * Returns: the published total parameter count that applies to the form generated: for a
 * model generated with MTP layers (--mtp, and the config has some) the file's
 * `published_params_mtp`, else its `published_params` (the total without MTP layers); 0
 * when the file states none that applies. A
 * config.json that states none takes the figures of the shipped model of the same name.
 */
guint64 rs_model_get_published_params(const RsModel *model, gboolean *is_rounded_out);
/**
 * rs_model_get_published_mtp_params:
 * Returns: the file's `published_params_mtp` (the published total counting the MTP layers,
 * as the Hugging Face safetensors total of a checkpoint that stores them), whichever form
 * was generated; 0 when none is stated.
 */
guint64 rs_model_get_published_mtp_params(const RsModel *model, gboolean *is_rounded_out);

/**
 * rs_model_get_n_warnings:
 * Returns: how many warnings the loader left: values it assumed for keys the config does
 * not state (the transformers default, named with the key and the config class), and
 * parts of a config it does not generate. 0 for a config that states everything.
 */
guint rs_model_get_n_warnings(const RsModel *model);
/** rs_model_get_warning: Returns: (transfer none): warning @index ("path:line:col: key:
 * missing; using false, the default of transformers Glm4MoeConfig"), alive as @model. */
const char *rs_model_get_warning(const RsModel *model, guint index);

/**
 * rs_model_check_published:
 * @error: RS_MODEL_ERROR_CONFIG stating both figures and the difference
 *
 * Returns: TRUE when no figure is published, when an exact figure equals
 * rs_model_get_n_params(), or when a rounded one is within 1% of it.
 */
gboolean rs_model_check_published(const RsModel *model, GError **error);

/**
 * rs_model_format_variant:
 * Returns: (transfer full): "" for the full model, else e.g. "scale 1/16, layers 3-4".
 */
char *rs_model_format_variant(const RsModel *model);

/** rs_model_get_n_layers: Returns: the decoder layer count (num_hidden_layers), also when
 * only a range of layers was generated. */
guint rs_model_get_n_layers(const RsModel *model);
/**
 * rs_model_get_tie_embeddings:
 * Returns: TRUE when the output head is the input embedding (tie_word_embeddings): the
 * model has no lm_head tensor, and pipeline-parallel frameworks keep a copy of the
 * embedding on the last stage too.
 */
gboolean rs_model_get_tie_embeddings(const RsModel *model);

/**
 * rs_model_find_fuse_sibling:
 * @index: a tensor of a fusion group
 * @segment: the segment wanted
 *
 * Returns: the index of the tensor of the same group (fuse kind and fuse_group) with
 * fuse_segment @segment, or -1. O(1) after the first call.
 */
gint rs_model_find_fuse_sibling(const RsModel *model, guint index, guint segment);

guint rs_model_get_n_tensors(const RsModel *model);
/** rs_model_has_mtp: Returns: TRUE when the model's tensors include a multi-token-prediction
 * layer's (generated with --mtp from a config that has some, or imported). */
gboolean rs_model_has_mtp(const RsModel *model);
/** rs_model_get_tensor: Returns: (transfer none): tensor @index, alive as @model. */
const RsTensorSpec *rs_model_get_tensor(const RsModel *model, guint index);
/** rs_model_find_tensor: Returns: the index of the tensor named @name, or -1. O(1). */
gint rs_model_find_tensor(const RsModel *model, const char *name);
/** rs_model_get_n_params: Returns: total logical parameters (sum of the tensors' n_params:
 * FP4 values unpacked, scales and padding not counted). */
guint64 rs_model_get_n_params(const RsModel *model);
/**
 * rs_model_get_n_active_params:
 * Returns: parameters used per token: all tensors, with each routed-expert tensor counted
 * for num_experts_per_tok of its experts (embedding and head included).
 */
guint64 rs_model_get_n_active_params(const RsModel *model);
/**
 * rs_model_get_n_embedding_params:
 * Returns: the parameters of the input token embeddings (every tensor named
 * `…embed_tokens.weight`, including an MTP layer's copy); the output head is not an
 * embedding here. "Without embeddings" figures subtract this from the total and from the
 * active count, the convention of the gpt-oss and Kimi model cards (5.1 B and 104 B active).
 */
guint64 rs_model_get_n_embedding_params(const RsModel *model);
/** rs_model_get_size_bytes: Returns: bytes of all tensors in their dtypes. */
guint64 rs_model_get_size_bytes(const RsModel *model);
/**
 * rs_model_get_size_bytes_by_dtype:
 * @bytes_out: (out caller-allocates) (array fixed-size=RS_DTYPE_N): bytes of the tensors of
 *   each dtype, indexed by RsDtype; zero for dtypes no tensor has
 */
void rs_model_get_size_bytes_by_dtype(const RsModel *model, guint64 *bytes_out);

/** rs_tensor_spec_get_n_elems: Returns: the element count of @spec. */
guint64 rs_tensor_spec_get_n_elems(const RsTensorSpec *spec);
/** rs_tensor_spec_get_n_params: Returns: the logical parameters of @spec (spec->n_params). */
guint64 rs_tensor_spec_get_n_params(const RsTensorSpec *spec);
/** rs_tensor_role_parse: Returns: TRUE and sets *role_out when @name is a role name
 * ("column-parallel", …, as rs_tensor_role_get_name() spells them). */
gboolean rs_tensor_role_parse(const char *name, RsTensorRole *role_out);
/** rs_tensor_spec_get_size_bytes: Returns: the bytes of @spec in its dtype. */
guint64 rs_tensor_spec_get_size_bytes(const RsTensorSpec *spec);
/** rs_tensor_role_get_name: Returns: (transfer none): "column-parallel", "expert-row", … */
const char *rs_tensor_role_get_name(RsTensorRole role);
/**
 * rs_model_expert_group_name:
 * @name: a checkpoint tensor name
 * @expert: (out): the expert index E when @name has the form "P.experts.E.REST"
 *
 * A checkpoint's per-expert name ("model.layers.3.mlp.experts.5.down_proj.weight") and the
 * stacked tensor it belongs to, dim 0 the expert ("model.layers.3.mlp.experts.down_proj.
 * weight"): "experts." starts a name component, E is decimal without a leading zero
 * (checkpoints write experts.5., never experts.05.) and at most 18 digits (a gint64).
 * Used by the checkpoint import (models/model-import.c, which stacks the experts) and by
 * `reshard layout --tensor`.
 *
 * Returns: (transfer full) (nullable): "P.experts.REST", or NULL when @name has no such
 * form.
 */
char *rs_model_expert_group_name(const char *name, gint64 *expert);

/** rs_tensor_role_is_expert_weight: Returns: TRUE for the weights of routed experts
 * (expert-column, expert-row, expert-gate-up-fused), not their replicated [E, out] biases. */
gboolean rs_tensor_role_is_expert_weight(RsTensorRole role);

G_END_DECLS

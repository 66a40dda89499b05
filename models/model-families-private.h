/* model-families-private.h — the family generators (model-families.c, model-family-*.c):
 * the table model-load.c dispatches on, and the building blocks the generators share:
 * common config keys, storage formats, and the tensors every decoder has (embedding, norms,
 * linears, MLPs, grouped experts). Generators read a config and add tensors to a container;
 * they sit above both and call nothing in model-load.c. */
#pragma once

#include "models/model-config-private.h"
#include "models/model-load.h"
#include "models/model-private.h"

G_BEGIN_DECLS

/* Fills @model from @config: sets n_layers (and n_experts_per_token, tie_embeddings where
 * the family has them) and adds every weight tensor in checkpoint order. @options says
 * which form and which layers (see RsModelOptions); the width scale is already set on
 * @config. Errors: RS_MODEL_ERROR_CONFIG naming the key of a missing, malformed or
 * inconsistent value. */
typedef gboolean (*RsFamilyGenerator)(RsModel *model, RsModelConfig *config,
                                      const RsModelOptions *options, GError **error);

/* Returns: the generator of @family ("deepseek_v3"), or NULL when none is. */
RsFamilyGenerator rs_model_family_lookup(const char *family);

#define RS_FAMILY_MAX_DIM ((gint64)1 << 40)
#define RS_FAMILY_MAX_COUNT ((gint64)1 << 20)

/* How the checkpoint stores layer weights, from quantization_config; all NONE unless the
 * model is generated as stored (RS_MODEL_STORAGE_CHECKPOINT). */
typedef enum {
    RS_QUANT_NONE,
    RS_QUANT_FP8_BLOCK, /* quant_method "fp8": every quantizable linear FP8 + block scale_inv */
    RS_QUANT_MXFP4,     /* quant_method "mxfp4" or compressed-tensors mxfp4: routed experts */
    /* compressed-tensors "pack-quantized" int 4-bit, group-wise symmetric: routed experts
     * as NAME.weight_packed i32 [.., out, in/8], NAME.weight_scale bf16 [.., out, in/group]
     * and NAME.weight_shape i32 [.., 2] (Kimi-K2.5). */
    RS_QUANT_INT4_PACKED,
} RsQuantKind;

typedef struct {
    RsQuantKind kind;
    RsDtype fp8_dtype;     /* fmt: e4m3 (default) or e5m2 */
    gint64 block_rows;     /* weight_block_size[0], 128 by default */
    gint64 block_cols;     /* weight_block_size[1] */
    gint64 group;          /* MXFP4 values per e8m0 scale: 32 (OCP MX spec) */
    gboolean packed_names; /* compressed-tensors names (NAME.weight_packed, NAME.weight_scale)
                            * instead of gpt-oss names (NAME_blocks, NAME_scales) */
} RsQuant;

/**
 * rs_family_read_quant:
 * Reads quantization_config (every key under it is consumed). With @options->storage
 * TRAINING the result is RS_QUANT_NONE whatever the config says. Supported: quant_method
 * "fp8" with weight_block_size [rows, cols] and fmt (DeepSeek-V3 config.json; vLLM
 * fp8.py Fp8Config), "mxfp4" (gpt-oss config.json; transformers mxfp4 integration), and
 * "compressed-tensors" whose format (or a config group's format) names mxfp4, with
 * config_groups.*.weights.group_size (Kimi-K3), and "compressed-tensors" of format
 * pack-quantized whose weights are num_bits 4, type int (Kimi-K2.5; compressed-tensors
 * pack_quantized compressor: eight values per int32). Errors: RS_MODEL_ERROR_CONFIG naming the
 * key for another method or a malformed block size.
 */
gboolean rs_family_read_quant(RsModelConfig *c, const RsModelOptions *options, RsQuant *q,
                              GError **error);

/* The keys every decoder family shares. */
typedef struct {
    gint64 hidden;
    gint64 intermediate; /* 0 when absent */
    gint64 n_layers;
    gint64 n_heads;
    gint64 n_kv_heads;
    gint64 head_dim; /* head_dim, else hidden / heads (before scaling) / scale */
    gboolean head_dim_given;
    gint64 vocab;
    gboolean tie_embeddings;
} RsCommonConfig;

/* Reads hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads (when
 * absent: heads, with a warning), head_dim (default hidden_size / heads, scaled; the
 * families that use it warn with rs_family_warn_head_dim), vocab_size,
 * tie_word_embeddings (when absent: false, with a warning), intermediate_size (optional,
 * 0). */
gboolean rs_family_read_common(RsModelConfig *c, RsCommonConfig *cc, GError **error);

/* Warns when head_dim was not stated and the default hidden_size / heads was taken. */
void rs_family_warn_head_dim(RsModelConfig *c, const RsCommonConfig *cc);

/* Fails with "KEY: required field is missing (WHY)" when @key is absent or null. */
gboolean rs_family_require(RsModelConfig *c, const char *key, const char *why, GError **error);

/* Checks that KV heads divide the attention heads (grouped-query attention). */
gboolean rs_family_check_gqa(RsModelConfig *c, const RsCommonConfig *cc, GError **error);

/* Checks that @n_per_token (the config field @key) active experts do not exceed the
 * @n_experts experts ("routed experts" when @routed) a token is routed among. */
gboolean rs_family_check_active_experts(RsModelConfig *c, const char *key, gint64 n_per_token,
                                        gint64 n_experts, gboolean routed, GError **error);

/* @prefix is prepended to every name ("" or "language_model."). */
void rs_family_add_embedding(RsModel *m, const char *prefix, const RsCommonConfig *cc);
/* PREFIXmodel.norm.weight and, unless tied, PREFIXlm_head.weight, both at layer n_layers. */
void rs_family_add_final(RsModel *m, const char *prefix, const RsCommonConfig *cc);

/* A vector NAME of @len elements (norm weights, biases, per-head vectors). */
void rs_family_add_vector(RsModel *m, const char *name, RsTensorRole role, gint layer,
                          RsDtype dtype, guint n_heads, gboolean kv, gint64 len);

/* BASE.weight [out, in]; when @quantizable and @q is FP8, the weight is FP8 and
 * BASE.weight_scale_inv [ceil(out/rows), ceil(in/cols)] f32 follows (same role and heads).
 * DeepSeek-V3 checkpoint layout; vLLM fp8.py block-wise (weight_scale_inv). */
void rs_family_add_linear(RsModel *m, const RsQuant *q, const char *base, RsTensorRole role,
                          gint layer, guint n_heads, gboolean kv, gint64 out, gint64 in,
                          gboolean quantizable);

/* PREFIX.{gate,up}_proj [I, H] column-parallel and PREFIX.down_proj [H, I] row-parallel. */
void rs_family_add_dense_mlp(RsModel *m, const RsQuant *q, const char *prefix, gint layer,
                             gint64 hidden, gint64 intermediate, gboolean quantizable);

/* Grouped routed-expert weight: PREFIX.NAME<weight_suffix> [E, out, in] in the model dtype;
 * FP8: PREFIX.NAME.weight + PREFIX.NAME.weight_scale_inv [E, ceil(out/r), ceil(in/c)];
 * MXFP4 gpt-oss names: PREFIX.NAME_blocks [E, out, ceil(in/32), 16] u8 +
 * PREFIX.NAME_scales [E, out, ceil(in/32)] u8; MXFP4 compressed-tensors names:
 * PREFIX.NAME.weight_packed [E, out, ceil(in/2)] u8 + PREFIX.NAME.weight_scale
 * [E, out, ceil(in/group)] u8; INT4 packed: PREFIX.NAME.weight_packed [E, out, ceil(in/8)]
 * i32 + PREFIX.NAME.weight_scale [E, out, ceil(in/group)] bf16 + PREFIX.NAME.weight_shape
 * [E, 2] i32. Blocks hold E·out·in parameters; scales and shapes none. */
void rs_family_add_expert_weight(RsModel *m, const RsQuant *q, const char *prefix, const char *name,
                                 const char *weight_suffix, RsTensorRole role, gint layer,
                                 gint64 n_experts, gint64 out, gint64 in);

/* Grouped-query attention under PREFIX (e.g. "model.layers.0.self_attn"): q_proj
 * [heads·head_dim·(gate ? 2 : 1), H], k_proj and v_proj [kv·head_dim, H] (KV heads),
 * o_proj [H, heads·head_dim], with biases on q/k/v when @qkv_bias, and q_norm/k_norm
 * [head_dim] when @qk_norm. */
typedef struct {
    gboolean qkv_bias;
    gboolean o_bias;
    gboolean qk_norm;
    gboolean q_gate; /* Qwen3-Next gated attention: q_proj also yields a per-head gate */
} RsAttentionOptions;
void rs_family_add_gqa_attention(RsModel *m, const RsQuant *q, const char *prefix, gint layer,
                                 const RsCommonConfig *cc, const RsAttentionOptions *opts);

/* Vision towers (model-family-vision.c), read from the vision_config.* keys and added at
 * layer -1 with replicated roles; @text_hidden is the language model's (scaled) hidden
 * size the projector maps to. Errors: RS_MODEL_ERROR_CONFIG naming a missing or
 * unsupported vision_config key. */
gboolean rs_family_add_vision_llama4(RsModel *m, RsModelConfig *c, gint64 text_hidden,
                                     GError **error);
gboolean rs_family_add_vision_qwen3_vl(RsModel *m, RsModelConfig *c, GError **error);
gboolean rs_family_add_vision_moonvit(RsModel *m, RsModelConfig *c, gint64 text_hidden,
                                      GError **error);

/* Generators in the other family files. */
gboolean rs_family_generate_deepseek_v3(RsModel *model, RsModelConfig *config,
                                        const RsModelOptions *options, GError **error);
gboolean rs_family_generate_deepseek_v32(RsModel *model, RsModelConfig *config,
                                         const RsModelOptions *options, GError **error);
gboolean rs_family_generate_kimi_k25(RsModel *model, RsModelConfig *config,
                                     const RsModelOptions *options, GError **error);
gboolean rs_family_generate_llama4(RsModel *model, RsModelConfig *config,
                                   const RsModelOptions *options, GError **error);
gboolean rs_family_generate_qwen3_5_moe(RsModel *model, RsModelConfig *config,
                                        const RsModelOptions *options, GError **error);
gboolean rs_family_generate_glm4_moe(RsModel *model, RsModelConfig *config,
                                     const RsModelOptions *options, GError **error);
gboolean rs_family_generate_gpt_oss(RsModel *model, RsModelConfig *config,
                                    const RsModelOptions *options, GError **error);
gboolean rs_family_generate_kimi_k3(RsModel *model, RsModelConfig *config,
                                    const RsModelOptions *options, GError **error);
gboolean rs_family_generate_qwen3_next(RsModel *model, RsModelConfig *config,
                                       const RsModelOptions *options, GError **error);

G_END_DECLS

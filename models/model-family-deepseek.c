/* model-family-deepseek.c — deepseek_v3 (DeepSeek-V3, Kimi-K2), deepseek_v32
 * (DeepSeek-V3.2: V3 plus the sparse-attention indexer), kimi_k25 (Kimi-K2.5: the V3 text
 * model under language_model. plus the MoonViT tower and projector) and glm4_moe (GLM-4.5,
 * GLM-4.7): dense-first decoders whose MoE layers have a sigmoid router with a per-expert
 * score bias, routed experts and shared experts, and DeepSeek-style multi-token-prediction
 * layers.
 *
 * DeepSeek-V3.2's lightning indexer, per layer under self_attn.indexer (DeepSeek-V3.2-Exp
 * inference/model.py class Indexer; the HF checkpoint's names): wq_b [index_n_heads ·
 * index_head_dim, q_lora_rank], wk [index_head_dim, hidden], k_norm a LayerNorm (weight and
 * bias [index_head_dim]), weights_proj [index_n_heads, hidden], which the checkpoint keeps
 * out of FP8 (no scale). vLLM holds all of it whole on every rank (vllm/model_executor/
 * models/deepseek_v2.py class Indexer: ReplicatedLinear, "no tensor parallel, just
 * replicated"), so its roles are replicated.
 *
 * Sources: transformers modeling_deepseek_v3.py (DeepseekV3Attention MLA, DeepseekV3MoE,
 * DeepseekV3TopkRouter.e_score_correction_bias), modeling_glm4_moe.py (Glm4MoeAttention with
 * q/k/v bias and optional q_norm/k_norm, Glm4MoeMoE); the MTP layer layout follows
 * DeepSeek-V3's checkpoint (model.layers.61.{enorm, hnorm, eh_proj, shared_head.*,
 * embed_tokens}) and vLLM's deepseek_mtp.py / glm4_moe_mtp.py. Stored form (DeepSeek-V3
 * and Kimi-K2 config.json quantization_config: fp8, e4m3, weight_block_size [128, 128]):
 * every linear inside a layer is FP8 with an f32 weight_scale_inv of 128×128 blocks, except
 * the router and the MTP eh_proj, which vLLM loads as plain BF16 (deepseek_mtp.py builds
 * eh_proj as nn.Linear); embedding, head and norms are BF16, the score bias f32.
 */
#include "models/model-families-private.h"

#include <string.h>

typedef struct {
    RsCommonConfig cc;
    RsQuant q;
    const char *prefix; /* before "model." and "lm_head.": "" or "language_model." */
    gint64 moe_intermediate;
    gint64 n_routed, n_shared, n_per_token;
    gint64 first_dense, moe_freq;
    gint64 n_mtp;
    gboolean has_score_bias;
    /* MLA (deepseek_v3) */
    gint64 q_lora, kv_lora, nope, rope, v_dim;
    gboolean mla_bias; /* attention_bias: biases on q_a (or q), kv_a and o */
    /* DeepSeek-V3.2 indexer (0 heads: none) */
    gint64 index_heads, index_head_dim;
    /* GQA (glm4_moe) */
    gboolean attention_bias, qk_norm;
} MoeConfig;

/* The transformers defaults of a family's config class, used (with a warning) for keys the
 * config does not state. */
typedef struct {
    const char *origin; /* "transformers DeepseekV3Config" */
    gint64 n_shared;
    gint64 first_dense;
    gboolean warn_moe_freq; /* moe_layer_freq is the family's key (DeepSeek), not GLM's */
} MoeDefaults;

typedef void (*AddAttention)(RsModel *m, const MoeConfig *mc, const char *prefix, gint layer);

/* The MoE part of a layer: router, score bias, routed and shared experts under PREFIX.mlp. */
static void
add_moe_mlp(RsModel *m, const MoeConfig *mc, const char *prefix, gint layer)
{
    gint64 E = mc->n_routed, I = mc->moe_intermediate, H = mc->cc.hidden;
    char name[192];
    g_snprintf(name, sizeof name, "%s.mlp.gate", prefix);
    rs_family_add_linear(m, NULL, name, RS_ROLE_ROUTER, layer, 0, FALSE, E, H, FALSE);
    if (mc->has_score_bias) {
        g_snprintf(name, sizeof name, "%s.mlp.gate.e_score_correction_bias", prefix);
        rs_family_add_vector(m, name, RS_ROLE_ROUTER, layer, RS_DTYPE_F32, 0, FALSE, E);
    }
    g_snprintf(name, sizeof name, "%s.mlp.experts", prefix);
    rs_model_fuse_next(m, RS_FUSE_GATE_UP, 0, name);
    rs_family_add_expert_weight(m, &mc->q, name, "gate_proj", ".weight", RS_ROLE_EXPERT_COLUMN,
                                layer, E, I, H);
    rs_model_fuse_next(m, RS_FUSE_GATE_UP, 1, name);
    rs_family_add_expert_weight(m, &mc->q, name, "up_proj", ".weight", RS_ROLE_EXPERT_COLUMN, layer,
                                E, I, H);
    rs_family_add_expert_weight(m, &mc->q, name, "down_proj", ".weight", RS_ROLE_EXPERT_ROW, layer,
                                E, H, I);
    if (mc->n_shared > 0) {
        g_snprintf(name, sizeof name, "%s.mlp.shared_experts", prefix);
        rs_family_add_dense_mlp(m, &mc->q, name, layer, H, I * mc->n_shared, TRUE);
    }
}

/* One decoder layer under @prefix ("model.layers.7"). */
static void
add_layer(RsModel *m, const MoeConfig *mc, AddAttention add_attention, const char *prefix,
          gint layer, gboolean moe)
{
    char name[192];
    g_snprintf(name, sizeof name, "%s.input_layernorm.weight", prefix);
    rs_family_add_vector(m, name, RS_ROLE_NORM, layer, m->dtype, 0, FALSE, mc->cc.hidden);
    add_attention(m, mc, prefix, layer);
    g_snprintf(name, sizeof name, "%s.post_attention_layernorm.weight", prefix);
    rs_family_add_vector(m, name, RS_ROLE_NORM, layer, m->dtype, 0, FALSE, mc->cc.hidden);
    if (moe) {
        add_moe_mlp(m, mc, prefix, layer);
        return;
    }
    g_snprintf(name, sizeof name, "%s.mlp", prefix);
    rs_family_add_dense_mlp(m, &mc->q, name, layer, mc->cc.hidden, mc->cc.intermediate, TRUE);
}

/* MLA attention (DeepseekV3Attention): q through a low-rank pair when q_lora_rank is set,
 * keys and values through the shared latent kv_a_proj_with_mqa. The down-projections are
 * replicated under tensor parallelism (ReplicatedLinear in vLLM, "duplicated" in Megatron). */
static void
add_mla(RsModel *m, const MoeConfig *mc, const char *prefix, gint layer)
{
    gint64 H = mc->cc.hidden, nh = mc->cc.n_heads;
    guint heads = (guint)nh;
    char name[192];
    g_autofree char *attn = g_strdup_printf("%s.self_attn", prefix);
#define NAME(suffix) (g_snprintf(name, sizeof name, "%s.self_attn." suffix, prefix), name)
    /* attention_bias adds biases to q_a_proj (or q_proj), kv_a_proj_with_mqa and o_proj
     * (DeepseekV3Attention); a bias follows its linear's split, o_proj's is replicated. */
    if (mc->q_lora > 0) {
        /* vLLM and SGLang fuse the two down-projections (fused_qkv_a_proj). */
        rs_model_fuse_next(m, RS_FUSE_MLA_A, 0, attn);
        rs_family_add_linear(m, &mc->q, NAME("q_a_proj"), RS_ROLE_REPLICATED, layer, 0, FALSE,
                             mc->q_lora, H, TRUE);
        if (mc->mla_bias)
            rs_family_add_vector(m, NAME("q_a_proj.bias"), RS_ROLE_REPLICATED, layer, m->dtype, 0,
                                 FALSE, mc->q_lora);
        rs_family_add_vector(m, NAME("q_a_layernorm.weight"), RS_ROLE_NORM, layer, m->dtype, 0,
                             FALSE, mc->q_lora);
        rs_family_add_linear(m, &mc->q, NAME("q_b_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads,
                             FALSE, nh * (mc->nope + mc->rope), mc->q_lora, TRUE);
    } else {
        rs_family_add_linear(m, &mc->q, NAME("q_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads,
                             FALSE, nh * (mc->nope + mc->rope), H, TRUE);
        if (mc->mla_bias)
            rs_family_add_vector(m, NAME("q_proj.bias"), RS_ROLE_COLUMN_PARALLEL, layer, m->dtype,
                                 heads, FALSE, nh * (mc->nope + mc->rope));
    }
    if (mc->q_lora > 0)
        rs_model_fuse_next(m, RS_FUSE_MLA_A, 1, attn);
    rs_family_add_linear(m, &mc->q, NAME("kv_a_proj_with_mqa"), RS_ROLE_REPLICATED, layer, 0, FALSE,
                         mc->kv_lora + mc->rope, H, TRUE);
    if (mc->mla_bias)
        rs_family_add_vector(m, NAME("kv_a_proj_with_mqa.bias"), RS_ROLE_REPLICATED, layer,
                             m->dtype, 0, FALSE, mc->kv_lora + mc->rope);
    rs_family_add_vector(m, NAME("kv_a_layernorm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, FALSE,
                         mc->kv_lora);
    rs_family_add_linear(m, &mc->q, NAME("kv_b_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE,
                         nh * (mc->nope + mc->v_dim), mc->kv_lora, TRUE);
    rs_family_add_linear(m, &mc->q, NAME("o_proj"), RS_ROLE_ROW_PARALLEL, layer, 0, FALSE, H,
                         nh * mc->v_dim, TRUE);
    if (mc->mla_bias)
        rs_family_add_vector(m, NAME("o_proj.bias"), RS_ROLE_NORM, layer, m->dtype, 0, FALSE, H);
    if (mc->index_heads > 0) {
        gint64 d = mc->index_head_dim;
        rs_family_add_linear(m, &mc->q, NAME("indexer.wq_b"), RS_ROLE_REPLICATED, layer, 0, FALSE,
                             mc->index_heads * d, mc->q_lora, TRUE);
        rs_family_add_linear(m, &mc->q, NAME("indexer.wk"), RS_ROLE_REPLICATED, layer, 0, FALSE, d,
                             H, TRUE);
        rs_family_add_vector(m, NAME("indexer.k_norm.weight"), RS_ROLE_REPLICATED, layer,
                             m->dtype, 0, FALSE, d);
        rs_family_add_vector(m, NAME("indexer.k_norm.bias"), RS_ROLE_REPLICATED, layer,
                             m->dtype, 0, FALSE, d);
        rs_family_add_linear(m, &mc->q, NAME("indexer.weights_proj"), RS_ROLE_REPLICATED, layer, 0,
                             FALSE, mc->index_heads, H, FALSE);
    }
#undef NAME
}

/* GLM-4.5 attention: GQA with q/k/v bias (attention_bias), no o_proj bias, and q_norm,
 * k_norm [head_dim] when use_qk_norm (Glm4MoeAttention). */
static void
add_glm_attention(RsModel *m, const MoeConfig *mc, const char *prefix, gint layer)
{
    g_autofree char *attn = g_strdup_printf("%s.self_attn", prefix);
    RsAttentionOptions opts = {.qkv_bias = mc->attention_bias, .qk_norm = mc->qk_norm};
    rs_family_add_gqa_attention(m, &mc->q, attn, layer, &mc->cc, &opts);
}

/* Multi-token-prediction layers (ids n_layers, n_layers + 1, …): their own embedding and
 * head copies, enorm, hnorm, eh_proj [H, 2H], a full MoE layer and shared_head.norm. */
static void
add_mtp_layers(RsModel *m, const MoeConfig *mc, AddAttention add_attention)
{
    gint64 H = mc->cc.hidden;
    for (gint k = 0; k < (gint)mc->n_mtp; k++) {
        gint layer = (gint)mc->cc.n_layers + k;
        g_autofree char *prefix = g_strdup_printf("%smodel.layers.%d", mc->prefix, layer);
        char name[192];
#define NAME(suffix) (g_snprintf(name, sizeof name, "%s." suffix, prefix), name)
        rs_model_add_tensor(m, NAME("embed_tokens.weight"), RS_ROLE_VOCAB_PARALLEL, layer, m->dtype,
                            0, 2, mc->cc.vocab, H);
        rs_family_add_vector(m, NAME("enorm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, FALSE, H);
        rs_family_add_vector(m, NAME("hnorm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, FALSE, H);
        rs_family_add_linear(m, &mc->q, NAME("eh_proj"), RS_ROLE_REPLICATED, layer, 0, FALSE, H,
                             2 * H, FALSE);
        add_layer(m, mc, add_attention, prefix, layer, TRUE);
        rs_family_add_vector(m, NAME("shared_head.norm.weight"), RS_ROLE_NORM, layer, m->dtype, 0,
                             FALSE, H);
        rs_model_add_tensor(m, NAME("shared_head.head.weight"), RS_ROLE_VOCAB_PARALLEL, layer,
                            m->dtype, 0, 2, mc->cc.vocab, H);
#undef NAME
    }
}

/* Reads the keys deepseek_v3 and glm4_moe share; @d gives the transformers defaults of
 * the family's config class for the keys that have one. */
static gboolean
read_moe_config(RsModelConfig *c, const RsModelOptions *options, const MoeDefaults *d,
                MoeConfig *mc, GError **error)
{
    mc->moe_freq = 1;
    const char *topk_method = "noaux_tc";
    if (!rs_family_read_common(c, &mc->cc, error) ||
        !rs_family_read_quant(c, options, &mc->q, error) ||
        !rs_model_config_get_width(c, "moe_intermediate_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &mc->moe_intermediate, error) ||
        !rs_model_config_get_int(c, "n_routed_experts", TRUE, 1, RS_FAMILY_MAX_COUNT, &mc->n_routed,
                                 error) ||
        !rs_model_config_get_int_default(c, "n_shared_experts", 0, 1 << 10, d->n_shared, d->origin,
                                         &mc->n_shared, error) ||
        !rs_model_config_get_int(c, "num_experts_per_tok", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &mc->n_per_token, error) ||
        !rs_model_config_get_int_default(c, "first_k_dense_replace", 0, 100000, d->first_dense,
                                         d->origin, &mc->first_dense, error) ||
        !rs_model_config_get_int(c, "num_nextn_predict_layers", FALSE, 0, 64, &mc->n_mtp, error) ||
        !rs_model_config_get_string(c, "topk_method", FALSE, &topk_method, error))
        return FALSE;
    if (d->warn_moe_freq
            ? !rs_model_config_get_int_default(c, "moe_layer_freq", 1, 100000, 1,
                                               "DeepSeek's configuration_deepseek.py",
                                               &mc->moe_freq, error)
            : !rs_model_config_get_int(c, "moe_layer_freq", FALSE, 1, 100000, &mc->moe_freq,
                                       error))
        return FALSE;
    /* Routing details that do not change the tensors. */
    static const char *const routing_keys[] = {"n_group", "topk_group", "routed_scaling_factor",
                                               "scoring_func", "norm_topk_prob"};
    for (guint i = 0; i < G_N_ELEMENTS(routing_keys); i++) {
        const char *ignored;
        rs_model_config_get_string(c, routing_keys[i], FALSE, &ignored, NULL);
    }
    if (mc->first_dense > 0 && mc->cc.intermediate == 0) {
        rs_model_config_set_error(c, "intermediate_size", error,
                                  "required when first_k_dense_replace > 0");
        return FALSE;
    }
    if (!rs_family_check_active_experts(c, "num_experts_per_tok", mc->n_per_token, mc->n_routed,
                                        TRUE, error))
        return FALSE;
    /* noaux_tc routing (DeepSeek-V3, GLM-4.5) keeps a per-expert score bias; greedy (V2)
     * has none. */
    mc->has_score_bias = strcmp(topk_method, "noaux_tc") == 0;
    return TRUE;
}

static void
generate_moe_decoder(RsModel *m, const MoeConfig *mc, AddAttention add_attention,
                     const RsModelOptions *options)
{
    m->n_layers = (guint)mc->cc.n_layers;
    m->n_experts_per_token = (guint)mc->n_per_token;
    rs_family_add_embedding(m, mc->prefix, &mc->cc);
    for (gint l = 0; l < (gint)mc->cc.n_layers; l++) {
        gboolean moe = l >= mc->first_dense && l % mc->moe_freq == 0;
        g_autofree char *prefix = g_strdup_printf("%smodel.layers.%d", mc->prefix, l);
        add_layer(m, mc, add_attention, prefix, l, moe);
    }
    rs_family_add_final(m, mc->prefix, &mc->cc);
    if (options->include_mtp)
        add_mtp_layers(m, mc, add_attention);
}

/* transformers DeepseekV3Config: n_shared_experts=1, first_k_dense_replace=3. */
static const MoeDefaults deepseek_defaults = {"transformers DeepseekV3Config", 1, 3, TRUE};

/* Reads the MLA keys (DeepseekV3Config: q_lora_rank=1536, attention_bias=False; an
 * explicit null q_lora_rank is DeepSeek-V2-Lite's full-rank query). */
static gboolean
read_mla_config(RsModelConfig *c, MoeConfig *mc, GError **error)
{
    const char *origin = deepseek_defaults.origin;
    return rs_model_config_get_width_default(c, "q_lora_rank", RS_FAMILY_MAX_DIM, 1536, origin,
                                             &mc->q_lora, error) &&
           rs_model_config_get_width(c, "kv_lora_rank", TRUE, RS_FAMILY_MAX_DIM, &mc->kv_lora,
                                     error) &&
           rs_model_config_get_width(c, "qk_nope_head_dim", TRUE, 1 << 20, &mc->nope, error) &&
           rs_model_config_get_width(c, "qk_rope_head_dim", TRUE, 1 << 20, &mc->rope, error) &&
           rs_model_config_get_width(c, "v_head_dim", TRUE, 1 << 20, &mc->v_dim, error) &&
           rs_model_config_get_bool_default(c, "attention_bias", FALSE, origin, &mc->mla_bias,
                                            error);
}

/* deepseek_v3: MLA attention, dense-first layers, routed + shared experts, optional MTP
 * layers (DeepSeek-V3, Kimi-K2). */
gboolean
rs_family_generate_deepseek_v3(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                               GError **error)
{
    MoeConfig mc = {.prefix = ""};
    if (!read_moe_config(c, options, &deepseek_defaults, &mc, error) ||
        !read_mla_config(c, &mc, error))
        return FALSE;
    generate_moe_decoder(m, &mc, add_mla, options);
    return TRUE;
}

/* deepseek_v32: deepseek_v3 with the lightning indexer in every layer's attention, the MTP
 * layers' included (DeepSeek-V3.2, V3.2-Exp, V3.2-Speciale). index_topk (how many tokens
 * the indexer keeps) changes no tensor. */
gboolean
rs_family_generate_deepseek_v32(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                                GError **error)
{
    MoeConfig mc = {.prefix = ""};
    const char *ignored;
    if (!read_moe_config(c, options, &deepseek_defaults, &mc, error) ||
        !read_mla_config(c, &mc, error) ||
        !rs_model_config_get_int(c, "index_n_heads", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &mc.index_heads, error) ||
        !rs_model_config_get_width(c, "index_head_dim", TRUE, 1 << 20, &mc.index_head_dim,
                                   error) ||
        !rs_model_config_get_string(c, "index_topk", FALSE, &ignored, error))
        return FALSE;
    if (mc.q_lora == 0) {
        rs_model_config_set_error(c, "q_lora_rank", error,
                                  "required: the indexer's wq_b reads the query latent");
        return FALSE;
    }
    generate_moe_decoder(m, &mc, add_mla, options);
    return TRUE;
}

/* kimi_k25: a vision-language wrapper (KimiK25ForConditionalGeneration) whose text_config
 * is a deepseek_v3 model, stored under language_model. (language_model.model.layers.N…,
 * language_model.lm_head.weight), with the MoonViT tower and its projector before it. */
gboolean
rs_family_generate_kimi_k25(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                            GError **error)
{
    MoeConfig mc = {.prefix = "language_model."};
    const char *ignored;
    /* Wrapper keys that describe the media inputs, not tensors. */
    static const char *const wrapper_keys[] = {"use_unified_vision_chunk", "video_placeholder"};
    for (guint i = 0; i < G_N_ELEMENTS(wrapper_keys); i++)
        rs_model_config_get_string(c, wrapper_keys[i], FALSE, &ignored, NULL);
    if (!read_moe_config(c, options, &deepseek_defaults, &mc, error) ||
        !read_mla_config(c, &mc, error) ||
        !rs_model_config_get_string(c, "text_config.model_type", FALSE, &ignored, error) ||
        !rs_family_add_vision_moonvit(m, c, mc.cc.hidden, error))
        return FALSE;
    generate_moe_decoder(m, &mc, add_mla, options);
    return TRUE;
}

/* glm4_moe: GQA attention with q/k/v bias and QK norm, dense-first layers, routed + shared
 * experts, optional MTP layers (GLM-4.5, GLM-4.5-Air, GLM-4.6, GLM-4.7). Defaults are
 * transformers Glm4MoeConfig's (attention_bias=False, use_qk_norm=False,
 * n_shared_experts=1, first_k_dense_replace=1), each taken with a warning: a GLM-4.x
 * config without attention_bias and use_qk_norm builds a model without q/k/v biases and
 * QK norms, 14,592 parameters a layer fewer than the checkpoint. Glm4MoeConfig's
 * num_key_value_heads default (8) is a GLM-4.5-Air value, so that key is required. */
gboolean
rs_family_generate_glm4_moe(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                            GError **error)
{
    static const MoeDefaults glm_defaults = {"transformers Glm4MoeConfig", 1, 1, FALSE};
    MoeConfig mc = {.prefix = ""};
    if (!rs_family_require(c, "num_key_value_heads",
                           "transformers Glm4MoeConfig defaults to 8, a GLM-4.5-Air value", error) ||
        !read_moe_config(c, options, &glm_defaults, &mc, error) ||
        !rs_model_config_get_bool_default(c, "attention_bias", FALSE, glm_defaults.origin,
                                          &mc.attention_bias, error) ||
        !rs_model_config_get_bool_default(c, "use_qk_norm", FALSE, glm_defaults.origin,
                                          &mc.qk_norm, error) ||
        !rs_family_check_gqa(c, &mc.cc, error))
        return FALSE;
    rs_family_warn_head_dim(c, &mc.cc);
    generate_moe_decoder(m, &mc, add_glm_attention, options);
    return TRUE;
}

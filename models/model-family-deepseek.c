/* model-family-deepseek.c — deepseek_v3 (DeepSeek-V3, Kimi-K2) and glm4_moe (GLM-4.5):
 * dense-first decoders whose MoE layers have a sigmoid router with a per-expert score bias,
 * routed experts and shared experts, and DeepSeek-style multi-token-prediction layers.
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
    gint64 moe_intermediate;
    gint64 n_routed, n_shared, n_per_token;
    gint64 first_dense, moe_freq;
    gint64 n_mtp;
    gboolean has_score_bias;
    /* MLA (deepseek_v3) */
    gint64 q_lora, kv_lora, nope, rope, v_dim;
    gboolean mla_bias; /* attention_bias: biases on q_a (or q), kv_a and o */
    /* GQA (glm4_moe) */
    gboolean attention_bias, qk_norm;
} MoeConfig;

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
        g_autofree char *prefix = g_strdup_printf("model.layers.%d", layer);
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

/* Reads the keys deepseek_v3 and glm4_moe share. */
static gboolean
read_moe_config(RsModelConfig *c, const RsModelOptions *options, MoeConfig *mc, GError **error)
{
    mc->moe_freq = 1;
    const char *topk_method = "noaux_tc";
    if (!rs_family_read_common(c, &mc->cc, error) ||
        !rs_family_read_quant(c, options, &mc->q, error) ||
        !rs_model_config_get_width(c, "moe_intermediate_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &mc->moe_intermediate, error) ||
        !rs_model_config_get_int(c, "n_routed_experts", TRUE, 1, RS_FAMILY_MAX_COUNT, &mc->n_routed,
                                 error) ||
        !rs_model_config_get_int(c, "n_shared_experts", FALSE, 0, 1 << 10, &mc->n_shared, error) ||
        !rs_model_config_get_int(c, "num_experts_per_tok", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &mc->n_per_token, error) ||
        !rs_model_config_get_int(c, "first_k_dense_replace", FALSE, 0, 100000, &mc->first_dense,
                                 error) ||
        !rs_model_config_get_int(c, "moe_layer_freq", FALSE, 1, 100000, &mc->moe_freq, error) ||
        !rs_model_config_get_int(c, "num_nextn_predict_layers", FALSE, 0, 64, &mc->n_mtp, error) ||
        !rs_model_config_get_string(c, "topk_method", FALSE, &topk_method, error))
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
    rs_family_add_embedding(m, "", &mc->cc);
    for (gint l = 0; l < (gint)mc->cc.n_layers; l++) {
        gboolean moe = l >= mc->first_dense && l % mc->moe_freq == 0;
        g_autofree char *prefix = g_strdup_printf("model.layers.%d", l);
        add_layer(m, mc, add_attention, prefix, l, moe);
    }
    rs_family_add_final(m, "", &mc->cc);
    if (options->include_mtp)
        add_mtp_layers(m, mc, add_attention);
}

/* deepseek_v3: MLA attention, dense-first layers, routed + shared experts, optional MTP
 * layers (DeepSeek-V3, Kimi-K2). */
gboolean
rs_family_generate_deepseek_v3(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                               GError **error)
{
    MoeConfig mc = {0};
    if (!read_moe_config(c, options, &mc, error) ||
        !rs_model_config_get_width(c, "q_lora_rank", FALSE, RS_FAMILY_MAX_DIM, &mc.q_lora, error) ||
        !rs_model_config_get_width(c, "kv_lora_rank", TRUE, RS_FAMILY_MAX_DIM, &mc.kv_lora,
                                   error) ||
        !rs_model_config_get_width(c, "qk_nope_head_dim", TRUE, 1 << 20, &mc.nope, error) ||
        !rs_model_config_get_width(c, "qk_rope_head_dim", TRUE, 1 << 20, &mc.rope, error) ||
        !rs_model_config_get_width(c, "v_head_dim", TRUE, 1 << 20, &mc.v_dim, error) ||
        !rs_model_config_get_bool(c, "attention_bias", FALSE, &mc.mla_bias, error))
        return FALSE;
    generate_moe_decoder(m, &mc, add_mla, options);
    return TRUE;
}

/* glm4_moe: GQA attention with q/k/v bias and QK norm, dense-first layers, routed + shared
 * experts, optional MTP layers (GLM-4.5, GLM-4.5-Air). */
gboolean
rs_family_generate_glm4_moe(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                            GError **error)
{
    MoeConfig mc = {0};
    if (!read_moe_config(c, options, &mc, error) ||
        !rs_model_config_get_bool(c, "attention_bias", FALSE, &mc.attention_bias, error) ||
        !rs_model_config_get_bool(c, "use_qk_norm", FALSE, &mc.qk_norm, error) ||
        !rs_family_check_gqa(c, &mc.cc, error))
        return FALSE;
    generate_moe_decoder(m, &mc, add_glm_attention, options);
    return TRUE;
}

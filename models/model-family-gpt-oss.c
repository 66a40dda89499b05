/* model-family-gpt-oss.c — gpt_oss (gpt-oss-20b, gpt-oss-120b).
 *
 * Attention with biases on q, k, v and o and a learned per-head sink; a router with a
 * bias; experts fused per layer: gate_up_proj [E, 2I, H] whose rows interleave gate (even)
 * and up (odd), so a contiguous split of its rows keeps each rank's gate and up rows paired,
 * and down_proj [E, H, I], each with a bias. The checkpoint stores the experts as MXFP4
 * (quantization_config.quant_method "mxfp4"): NAME_blocks [E, rows, cols/32, 16] u8 (two
 * values per byte) and NAME_scales [E, rows, cols/32] u8 (e8m0), biases BF16; everything
 * else BF16 (modules_to_not_convert: self_attn, router, embed_tokens, lm_head).
 *
 * Sources: transformers modeling_gpt_oss.py (GptOssAttention.sinks, GptOssTopKRouter,
 * GptOssExperts with gate_up_proj[..., ::2] gate and [..., 1::2] up), the gpt-oss
 * checkpoints' config.json and safetensors index (model.layers.N.mlp.experts.
 * gate_up_proj_blocks, …_scales, …_bias; model.layers.N.self_attn.sinks).
 */
#include "models/model-families-private.h"

gboolean
rs_family_generate_gpt_oss(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                           GError **error)
{
    RsCommonConfig cc;
    RsQuant q;
    gint64 n_experts = 0, n_per_token = 0, n_per_token_alias = 0;
    gboolean attention_bias = TRUE;
    if (!rs_family_read_common(c, &cc, error) || !rs_family_read_quant(c, options, &q, error) ||
        !rs_model_config_get_int(c, "num_local_experts", TRUE, 1, RS_FAMILY_MAX_COUNT, &n_experts,
                                 error) ||
        !rs_model_config_get_int(c, "num_experts_per_tok", FALSE, 1, RS_FAMILY_MAX_COUNT,
                                 &n_per_token, error) ||
        !rs_model_config_get_int(c, "experts_per_token", FALSE, 1, RS_FAMILY_MAX_COUNT,
                                 &n_per_token_alias, error) ||
        !rs_model_config_get_bool(c, "attention_bias", FALSE, &attention_bias, error) ||
        !rs_family_check_gqa(c, &cc, error))
        return FALSE;
    /* The published config.json carries both spellings of the active-expert count. */
    if (n_per_token == 0)
        n_per_token = n_per_token_alias;
    if (n_per_token == 0) {
        rs_model_config_set_missing(c, "num_experts_per_tok", error, "or experts_per_token");
        return FALSE;
    }
    if (n_per_token_alias != 0 && n_per_token_alias != n_per_token) {
        rs_model_config_set_error(c, "experts_per_token", error,
                                  "%" G_GINT64_FORMAT
                                  " disagrees with num_experts_per_tok %" G_GINT64_FORMAT,
                                  n_per_token_alias, n_per_token);
        return FALSE;
    }
    if (cc.intermediate == 0) {
        rs_model_config_set_missing(c, "intermediate_size", error, NULL);
        return FALSE;
    }
    if (!rs_family_check_active_experts(c, "num_experts_per_tok", n_per_token, n_experts, FALSE,
                                        error))
        return FALSE;
    m->n_layers = (guint)cc.n_layers;
    m->n_experts_per_token = (guint)n_per_token;
    gint64 H = cc.hidden, I = cc.intermediate, E = n_experts;
    rs_family_add_embedding(m, "", &cc);
    RsAttentionOptions opts = {.qkv_bias = attention_bias, .o_bias = attention_bias};
    for (gint l = 0; l < (gint)cc.n_layers; l++) {
        char name[160];
        g_snprintf(name, sizeof name, "model.layers.%d.input_layernorm.weight", l);
        rs_family_add_vector(m, name, RS_ROLE_NORM, l, m->dtype, 0, FALSE, H);
        g_snprintf(name, sizeof name, "model.layers.%d.self_attn", l);
        rs_family_add_gqa_attention(m, NULL, name, l, &cc, &opts);
        /* One sink logit per attention head: it travels with its head. */
        g_snprintf(name, sizeof name, "model.layers.%d.self_attn.sinks", l);
        rs_family_add_vector(m, name, RS_ROLE_COLUMN_PARALLEL, l, m->dtype, (guint)cc.n_heads,
                             FALSE, cc.n_heads);
        g_snprintf(name, sizeof name, "model.layers.%d.post_attention_layernorm.weight", l);
        rs_family_add_vector(m, name, RS_ROLE_NORM, l, m->dtype, 0, FALSE, H);
        g_snprintf(name, sizeof name, "model.layers.%d.mlp.router", l);
        rs_family_add_linear(m, NULL, name, RS_ROLE_ROUTER, l, 0, FALSE, E, H, FALSE);
        g_snprintf(name, sizeof name, "model.layers.%d.mlp.router.bias", l);
        rs_family_add_vector(m, name, RS_ROLE_ROUTER, l, m->dtype, 0, FALSE, E);
        g_autofree char *experts = g_strdup_printf("model.layers.%d.mlp.experts", l);
        rs_model_fuse_next(m, RS_FUSE_GATE_UP_INTERLEAVED, 0, experts);
        rs_family_add_expert_weight(m, &q, experts, "gate_up_proj", "", RS_ROLE_EXPERT_COLUMN, l, E,
                                    2 * I, H);
        g_snprintf(name, sizeof name, "%s.gate_up_proj_bias", experts);
        rs_model_add_tensor(m, name, RS_ROLE_EXPERT_COLUMN, l, m->dtype, 0, 2, E, 2 * I);
        rs_family_add_expert_weight(m, &q, experts, "down_proj", "", RS_ROLE_EXPERT_ROW, l, E, H,
                                    I);
        /* The down projection's bias is added after its reduction: whole on every rank of
         * the expert. */
        g_snprintf(name, sizeof name, "%s.down_proj_bias", experts);
        rs_model_add_tensor(m, name, RS_ROLE_EXPERT_REPLICATED, l, m->dtype, 0, 2, E, H);
    }
    rs_family_add_final(m, "", &cc);
    return TRUE;
}

/* model-family-llama4.c — llama4 (Llama-4 Scout and Maverick): a vision-language wrapper
 * (Llama4ForConditionalGeneration) whose text model interleaves MoE and dense layers, each
 * MoE layer a top-k router over routed experts plus one shared expert, and the Llama-4
 * vision model with its projector (model-family-vision.c).
 *
 * Sources: transformers models/llama4/modeling_llama4.py and configuration_llama4.py.
 * Text tensors under language_model. (language_model.model.layers.N…,
 * language_model.lm_head.weight): Llama4TextAttention q/k/v/o_proj (attention_bias) — its
 * use_qk_norm is a weightless L2 norm, no tensor; Llama4TextMoe feed_forward.router [E, H],
 * Llama4TextExperts feed_forward.experts.gate_up_proj [E, H, 2I] and down_proj [E, I, H]
 * (parameters without a .weight suffix, the input dim before the output dim), and
 * feed_forward.shared_expert a Llama4TextMLP of width intermediate_size; the dense layers'
 * Llama4TextMLP feed_forward.{gate,up,down}_proj has width intermediate_size_mlp.
 * Llama4TextConfig: moe_layers, when absent, is every interleave_moe_layer_step-th layer
 * (range(step - 1, num_hidden_layers, step)).
 *
 * The experts' [E, in, out] layout: down_proj [E, I, H] splits its I (dim 1) over tensor
 * parallelism like any expert-column tensor; gate_up_proj [E, H, 2I] holds gate and up
 * side by side in its last dim (gate the first I columns, up the last I:
 * Llama4TextExperts.forward's gate_up.chunk(2, dim=-1)), RS_ROLE_EXPERT_GATE_UP_FUSED with
 * segment_dim 2, which each framework splits as two halves chunked on their own (vLLM
 * models/llama4.py load_moe_expert_weights transposes it and loads the first half as w1,
 * the second as w3, into FusedMoE's w13 [gate_local; up_local]).
 */
#include "models/model-families-private.h"

#include <string.h>

typedef struct {
    RsCommonConfig cc;
    RsQuant q;
    gint64 n_experts, n_per_token, moe_intermediate, mlp_intermediate;
    gboolean attention_bias;
    gboolean *is_moe; /* per layer */
} Llama4Config;

static void
add_llama4_moe(RsModel *m, const Llama4Config *k, const char *prefix, gint l)
{
    gint64 H = k->cc.hidden, E = k->n_experts, I = k->moe_intermediate;
    char name[192];
    g_snprintf(name, sizeof name, "%s.feed_forward.router", prefix);
    rs_family_add_linear(m, NULL, name, RS_ROLE_ROUTER, l, 0, FALSE, E, H, FALSE);
    g_snprintf(name, sizeof name, "%s.feed_forward.experts.gate_up_proj", prefix);
    rs_model_add_tensor(m, name, RS_ROLE_EXPERT_GATE_UP_FUSED, l, m->dtype, 0, 3, E, H, 2 * I);
    rs_model_set_last_gate_up_halves(m, 2); /* 2I is even */
    g_snprintf(name, sizeof name, "%s.feed_forward.experts.down_proj", prefix);
    rs_model_add_tensor(m, name, RS_ROLE_EXPERT_COLUMN, l, m->dtype, 0, 3, E, I, H);
    g_snprintf(name, sizeof name, "%s.feed_forward.shared_expert", prefix);
    rs_family_add_dense_mlp(m, &k->q, name, l, H, I, TRUE);
}

static void
add_llama4_layer(RsModel *m, const Llama4Config *k, gint l)
{
    g_autofree char *prefix = g_strdup_printf("language_model.model.layers.%d", l);
    char name[192];
    g_snprintf(name, sizeof name, "%s.input_layernorm.weight", prefix);
    rs_family_add_vector(m, name, RS_ROLE_NORM, l, m->dtype, 0, FALSE, k->cc.hidden);
    g_snprintf(name, sizeof name, "%s.self_attn", prefix);
    RsAttentionOptions opts = {.qkv_bias = k->attention_bias, .o_bias = k->attention_bias};
    rs_family_add_gqa_attention(m, &k->q, name, l, &k->cc, &opts);
    g_snprintf(name, sizeof name, "%s.post_attention_layernorm.weight", prefix);
    rs_family_add_vector(m, name, RS_ROLE_NORM, l, m->dtype, 0, FALSE, k->cc.hidden);
    if (k->is_moe[l]) {
        add_llama4_moe(m, k, prefix, l);
        return;
    }
    g_snprintf(name, sizeof name, "%s.feed_forward", prefix);
    rs_family_add_dense_mlp(m, &k->q, name, l, k->cc.hidden, k->mlp_intermediate, TRUE);
}

/* Sets k->is_moe from moe_layers, else interleave_moe_layer_step (Llama4TextConfig). */
static gboolean
read_llama4_schedule(RsModelConfig *c, Llama4Config *k, GError **error)
{
    g_autoptr(GArray) moe_layers = NULL;
    gint64 step = 1;
    gint64 n = k->cc.n_layers;
    if (!rs_model_config_get_int_list(c, "moe_layers", FALSE, 0, n - 1, &moe_layers, error))
        return FALSE;
    /* The step matters (and its default is said) only without moe_layers. */
    if (moe_layers != NULL
            ? !rs_model_config_get_int(c, "interleave_moe_layer_step", FALSE, 1, 100000, &step,
                                       error)
            : !rs_model_config_get_int_default(c, "interleave_moe_layer_step", 1, 100000, 1,
                                               "transformers Llama4TextConfig", &step, error))
        return FALSE;
    if (moe_layers == NULL) {
        for (gint64 l = step - 1; l < n; l += step)
            k->is_moe[l] = TRUE;
        return TRUE;
    }
    for (guint i = 0; i < moe_layers->len; i++) {
        gint64 l = g_array_index(moe_layers, gint64, i);
        if (k->is_moe[l]) {
            rs_model_config_set_error(c, "moe_layers", error,
                                      "layer %" G_GINT64_FORMAT " is listed twice", l);
            return FALSE;
        }
        k->is_moe[l] = TRUE;
    }
    return TRUE;
}

/* Text keys that change no tensor: rotary and attention-temperature settings, the
 * chunked-attention span, and the training-only router noise. */
static const char *const llama4_informational[] = {
    "no_rope_layers",
    "attention_chunk_size",
    "attn_scale",
    "attn_temperature_tuning",
    "floor_scale",
    "for_llm_compressor",
    "use_qk_norm",
    "boi_token_index",
    "eoi_token_index",
    "image_token_index",
    "text_config.model_type",
};

gboolean
rs_family_generate_llama4(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                          GError **error)
{
    Llama4Config k = {0};
    const char *origin = "transformers Llama4TextConfig";
    if (!rs_family_require(c, "num_key_value_heads",
                           "transformers Llama4TextConfig defaults to 8; state it", error) ||
        !rs_family_read_common(c, &k.cc, error) || !rs_family_read_quant(c, options, &k.q, error) ||
        !rs_model_config_get_int(c, "num_local_experts", TRUE, 1, RS_FAMILY_MAX_COUNT, &k.n_experts,
                                 error) ||
        !rs_model_config_get_int(c, "num_experts_per_tok", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &k.n_per_token, error) ||
        !rs_model_config_get_width(c, "intermediate_size_mlp", TRUE, RS_FAMILY_MAX_DIM,
                                   &k.mlp_intermediate, error) ||
        !rs_model_config_get_bool_default(c, "attention_bias", FALSE, origin, &k.attention_bias,
                                          error) ||
        !rs_family_check_gqa(c, &k.cc, error) ||
        !rs_family_check_active_experts(c, "num_experts_per_tok", k.n_per_token, k.n_experts, FALSE,
                                        error))
        return FALSE;
    /* Llama4TextMoe's experts and shared expert have width intermediate_size. */
    if (k.cc.intermediate == 0) {
        rs_model_config_set_missing(c, "intermediate_size", error, "the experts' width");
        return FALSE;
    }
    k.moe_intermediate = k.cc.intermediate;
    rs_family_warn_head_dim(c, &k.cc);
    for (guint i = 0; i < G_N_ELEMENTS(llama4_informational); i++)
        rs_model_config_consume_prefix(c, llama4_informational[i]);
    g_autofree gboolean *is_moe = g_new0(gboolean, k.cc.n_layers);
    k.is_moe = is_moe;
    if (!read_llama4_schedule(c, &k, error))
        return FALSE;

    m->n_layers = (guint)k.cc.n_layers;
    m->n_experts_per_token = (guint)k.n_per_token;
    if (!rs_family_add_vision_llama4(m, c, k.cc.hidden, error))
        return FALSE;
    rs_family_add_embedding(m, "language_model.", &k.cc);
    for (gint l = 0; l < (gint)k.cc.n_layers; l++)
        add_llama4_layer(m, &k, l);
    rs_family_add_final(m, "language_model.", &k.cc);
    return TRUE;
}

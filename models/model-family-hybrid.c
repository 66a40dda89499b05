/* model-family-hybrid.c — hybrid linear-attention families: kimi_k3 (Kimi Delta Attention
 * + gated MLA with a latent MoE) and qwen3_next (Gated DeltaNet + gated attention + MoE
 * with a gated shared expert; the Qwen3.5-style hybrid).
 *
 * kimi_k3. Sources: MODELS.md (93 layers, 69 KDA + 24 MLA, latent MoE, MXFP4 experts);
 * the K3 checkpoint's configuration (KimiLinearConfig keys: linear_attn_config with
 * 1-based kda_layers / full_attn_layers, num_heads, head_dim, short_conv_kernel_size,
 * use_full_rank_gate; routed_expert_hidden_size, latent_moe_use_norm, mla_use_output_gate,
 * attn_res_block_size) and its tensor names and dtypes as public loader code reads them
 * from the shard headers: every text tensor prefixed "language_model."; KDA q/k/v_proj,
 * q/k/v_conv1d [P, 1, K] f32, A_log f32 [num_heads zero-padded to 128], f_a_proj, f_b_proj,
 * dt_bias f32 [P], b_proj [heads, H], a full-rank g_proj [P, H], o_norm f32 [head_dim],
 * o_proj; MLA with g_proj [heads·v, H]; per layer the block-attention-residual
 * self_attention_res_{norm [H], proj [1, H]} and mlp_res_{norm, proj}; MoE under
 * block_sparse_moe: gate [E, H] + e_score_correction_bias f32, routed_expert_down_proj
 * [L, H], routed_expert_up_proj [H, L], routed_expert_norm [L], shared_experts (width
 * moe_intermediate_size × num_shared_experts) and experts.{e}.w1/w3 [I, L], w2 [L, I]
 * stored as compressed-tensors MXFP4 (weight_packed [rows, cols/2] u8 + weight_scale
 * [rows, cols/32] u8); model.output_attn_res_{norm, proj} after the last layer. With the
 * K3 values this reproduces the checkpoint's text bytes exactly (1,559,965,606,912 B).
 *
 * qwen3_next. Sources: transformers modeling_qwen3_next.py (Qwen3NextGatedDeltaNet:
 * in_proj_qkvz [2·Kd + 2·Vd, H] and in_proj_ba [2·Hv, H] grouped per key head, conv1d over
 * [q; k; v] (conv_dim = 2·Kd + Vd), dt_bias and A_log [Hv], norm [dv], out_proj [H, Vd];
 * Qwen3NextAttention with q_proj [heads·head_dim·2, H] carrying the output gate;
 * Qwen3NextSparseMoeBlock with shared_expert and shared_expert_gate [1, H]), vLLM
 * qwen3_next_mtp.py for the MTP block (mtp.fc, mtp.pre_fc_norm_{embedding,hidden},
 * mtp.layers.k, mtp.norm, sharing the main embedding and head).
 *
 * qwen3_5_moe (Qwen3.5 MoE, Qwen3_5MoeForConditionalGeneration): qwen3_next as Qwen3.5
 * publishes it. Sources: transformers models/qwen3_5/modular_qwen3_5.py
 * (Qwen3_5GatedDeltaNet replaces in_proj_qkvz / in_proj_ba with in_proj_qkv [2·Kd + Vd, H],
 * in_proj_z [Vd, H], in_proj_b and in_proj_a [Hv, H]) and models/qwen3_5_moe (the
 * vision-language wrapper: text under model.language_model., lm_head.weight at the top,
 * the Qwen3-VL vision tower under model.visual., model-family-vision.c). The main layers'
 * routed experts are stored fused, mlp.experts.gate_up_proj [E, 2I, H] and
 * mlp.experts.down_proj [E, H, I] (the transformers v5 layout; the checkpoint's tensor
 * count, 2 expert tensors a layer, says fused, the axis order is not verified from a
 * header), the MTP layer's per expert (mtp.layers.0.mlp.experts.{e}.*_proj.weight, grouped
 * here as for qwen3_next). in_proj_qkv is [q; k; v] of all heads, three segments
 * (RS_ROLE_COLUMN_SEGMENTED, held whole until layouts split segments), and gate_up_proj
 * holds gate and up as two halves of dim 1 (gate the first I rows, up the last I:
 * transformers Qwen3_5MoeExperts.forward, linear(x, gate_up_proj[e]).chunk(2, dim=-1)),
 * RS_ROLE_EXPERT_GATE_UP_FUSED with segment_dim 1, each half chunked on its own over
 * tensor parallelism as FusedMoE's w13 [gate_local; up_local] holds it.
 */
#include "models/model-families-private.h"

#include <string.h>

/* --- kimi_k3 --- */

typedef struct {
    RsCommonConfig cc;
    RsQuant q;
    const char *prefix; /* "language_model." */
    /* MoE */
    gint64 moe_intermediate, n_experts, n_per_token, n_shared, first_dense, moe_freq;
    gint64 latent; /* routed_expert_hidden_size; 0: experts at full width */
    gboolean latent_norm, score_bias;
    /* MLA */
    gint64 q_lora, kv_lora, nope, rope, v_dim;
    gboolean mla_gate;
    /* KDA */
    gint64 kda_heads, kda_head_dim, conv;
    gboolean full_rank_gate;
    gboolean attn_res;
    gboolean *is_kda; /* per layer */
} K3Config;

static void
add_kda(RsModel *m, const K3Config *k, const char *prefix, gint layer)
{
    gint64 H = k->cc.hidden, P = k->kda_heads * k->kda_head_dim, hd = k->kda_head_dim;
    guint heads = (guint)k->kda_heads;
    char name[224];
#define NAME(suffix) (g_snprintf(name, sizeof name, "%s.self_attn." suffix, prefix), name)
    rs_family_add_linear(m, NULL, NAME("q_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE, P,
                         H, FALSE);
    rs_family_add_linear(m, NULL, NAME("k_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE, P,
                         H, FALSE);
    rs_family_add_linear(m, NULL, NAME("v_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE, P,
                         H, FALSE);
    /* Depthwise short convolutions, one channel per projection row: they split with their
     * projection's heads. */
    static const char *const convs[] = {"q_conv1d.weight", "k_conv1d.weight", "v_conv1d.weight"};
    for (guint i = 0; i < G_N_ELEMENTS(convs); i++) {
        g_snprintf(name, sizeof name, "%s.self_attn.%s", prefix, convs[i]);
        rs_model_add_tensor(m, name, RS_ROLE_COLUMN_PARALLEL, layer, RS_DTYPE_F32, heads, 3, P,
                            (gint64)1, k->conv);
    }
    if (m->storage == RS_MODEL_STORAGE_CHECKPOINT) {
        /* The checkpoint pads A_log to a multiple of 128 entries; every rank needs the whole
         * padded vector to take its heads' values from the first num_heads, so it is held
         * whole. */
        gint64 padded = (k->kda_heads + 127) / 128 * 128;
        rs_model_add_tensor(m, NAME("A_log"), RS_ROLE_NORM, layer, RS_DTYPE_F32, 0, 1, padded);
        rs_model_set_last_format(m, RS_TENSOR_FORMAT_PLAIN, (guint64)k->kda_heads);
    } else {
        rs_family_add_vector(m, NAME("A_log"), RS_ROLE_COLUMN_PARALLEL, layer, RS_DTYPE_F32, heads,
                             FALSE, k->kda_heads);
    }
    rs_family_add_linear(m, NULL, NAME("f_a_proj"), RS_ROLE_REPLICATED, layer, 0, FALSE, hd, H,
                         FALSE);
    rs_family_add_linear(m, NULL, NAME("f_b_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE, P,
                         hd, FALSE);
    rs_family_add_vector(m, NAME("dt_bias"), RS_ROLE_COLUMN_PARALLEL, layer, RS_DTYPE_F32, heads,
                         FALSE, P);
    rs_family_add_linear(m, NULL, NAME("b_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE,
                         k->kda_heads, H, FALSE);
    if (k->full_rank_gate) {
        rs_family_add_linear(m, NULL, NAME("g_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE,
                             P, H, FALSE);
    } else {
        rs_family_add_linear(m, NULL, NAME("g_a_proj"), RS_ROLE_REPLICATED, layer, 0, FALSE, hd, H,
                             FALSE);
        rs_family_add_linear(m, NULL, NAME("g_b_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads,
                             FALSE, P, hd, FALSE);
    }
    rs_family_add_vector(m, NAME("o_norm.weight"), RS_ROLE_NORM, layer, RS_DTYPE_F32, 0, FALSE, hd);
    rs_family_add_linear(m, NULL, NAME("o_proj"), RS_ROLE_ROW_PARALLEL, layer, 0, FALSE, H, P,
                         FALSE);
#undef NAME
}

static void
add_k3_mla(RsModel *m, const K3Config *k, const char *prefix, gint layer)
{
    gint64 H = k->cc.hidden, nh = k->cc.n_heads;
    guint heads = (guint)nh;
    char name[224];
#define NAME(suffix) (g_snprintf(name, sizeof name, "%s.self_attn." suffix, prefix), name)
    if (k->q_lora > 0) {
        rs_family_add_linear(m, NULL, NAME("q_a_proj"), RS_ROLE_REPLICATED, layer, 0, FALSE,
                             k->q_lora, H, FALSE);
        rs_family_add_vector(m, NAME("q_a_layernorm.weight"), RS_ROLE_NORM, layer, m->dtype, 0,
                             FALSE, k->q_lora);
        rs_family_add_linear(m, NULL, NAME("q_b_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads,
                             FALSE, nh * (k->nope + k->rope), k->q_lora, FALSE);
    } else {
        rs_family_add_linear(m, NULL, NAME("q_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE,
                             nh * (k->nope + k->rope), H, FALSE);
    }
    rs_family_add_linear(m, NULL, NAME("kv_a_proj_with_mqa"), RS_ROLE_REPLICATED, layer, 0, FALSE,
                         k->kv_lora + k->rope, H, FALSE);
    rs_family_add_vector(m, NAME("kv_a_layernorm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, FALSE,
                         k->kv_lora);
    rs_family_add_linear(m, NULL, NAME("kv_b_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE,
                         nh * (k->nope + k->v_dim), k->kv_lora, FALSE);
    rs_family_add_linear(m, NULL, NAME("o_proj"), RS_ROLE_ROW_PARALLEL, layer, 0, FALSE, H,
                         nh * k->v_dim, FALSE);
    if (k->mla_gate)
        rs_family_add_linear(m, NULL, NAME("g_proj"), RS_ROLE_COLUMN_PARALLEL, layer, heads, FALSE,
                             nh * k->v_dim, H, FALSE);
#undef NAME
}

static void
add_k3_moe(RsModel *m, const K3Config *k, const char *prefix, gint layer)
{
    gint64 H = k->cc.hidden, E = k->n_experts, I = k->moe_intermediate;
    gint64 L = k->latent > 0 ? k->latent : H;
    char name[224];
#define NAME(suffix) (g_snprintf(name, sizeof name, "%s.block_sparse_moe." suffix, prefix), name)
    rs_family_add_linear(m, NULL, NAME("gate"), RS_ROLE_ROUTER, layer, 0, FALSE, E, H, FALSE);
    if (k->score_bias)
        rs_family_add_vector(m, NAME("gate.e_score_correction_bias"), RS_ROLE_ROUTER, layer,
                             RS_DTYPE_F32, 0, FALSE, E);
    if (k->latent > 0) {
        /* The latent projections run once per token outside the expert dispatch; every
         * rank holds them whole. */
        rs_family_add_linear(m, NULL, NAME("routed_expert_down_proj"), RS_ROLE_REPLICATED, layer, 0,
                             FALSE, L, H, FALSE);
        rs_family_add_linear(m, NULL, NAME("routed_expert_up_proj"), RS_ROLE_REPLICATED, layer, 0,
                             FALSE, H, L, FALSE);
        if (k->latent_norm)
            rs_family_add_vector(m, NAME("routed_expert_norm.weight"), RS_ROLE_NORM, layer,
                                 m->dtype, 0, FALSE, L);
    }
    if (k->n_shared > 0) {
        g_autofree char *shared = g_strdup_printf("%s.block_sparse_moe.shared_experts", prefix);
        rs_family_add_dense_mlp(m, NULL, shared, layer, H, I * k->n_shared, FALSE);
    }
    g_autofree char *experts = g_strdup_printf("%s.block_sparse_moe.experts", prefix);
    rs_model_fuse_next(m, RS_FUSE_GATE_UP, 0, experts);
    rs_family_add_expert_weight(m, &k->q, experts, "w1", ".weight", RS_ROLE_EXPERT_COLUMN, layer, E,
                                I, L);
    rs_model_fuse_next(m, RS_FUSE_GATE_UP, 1, experts);
    rs_family_add_expert_weight(m, &k->q, experts, "w3", ".weight", RS_ROLE_EXPERT_COLUMN, layer, E,
                                I, L);
    rs_family_add_expert_weight(m, &k->q, experts, "w2", ".weight", RS_ROLE_EXPERT_ROW, layer, E, L,
                                I);
#undef NAME
}

static void
add_attn_res(RsModel *m, const char *base, gint layer, gint64 H)
{
    g_autofree char *norm = g_strdup_printf("%s_norm.weight", base);
    g_autofree char *proj = g_strdup_printf("%s_proj", base);
    rs_family_add_vector(m, norm, RS_ROLE_NORM, layer, m->dtype, 0, FALSE, H);
    rs_family_add_linear(m, NULL, proj, RS_ROLE_REPLICATED, layer, 0, FALSE, 1, H, FALSE);
}

/* Reads the 1-based KDA / full-attention layer lists into a per-layer flag. */
static gboolean
read_k3_layer_kinds(RsModelConfig *c, K3Config *k, GError **error)
{
    g_autoptr(GArray) kda = NULL, full = NULL;
    gint64 n = k->cc.n_layers;
    if (!rs_model_config_get_int_list(c, "linear_attn_config.kda_layers", FALSE, 1, n, &kda,
                                      error) ||
        !rs_model_config_get_int_list(c, "linear_attn_config.full_attn_layers", FALSE, 1, n, &full,
                                      error))
        return FALSE;
    if (kda == NULL && full == NULL) {
        rs_model_config_set_missing(c, "linear_attn_config.full_attn_layers", error,
                                    "or linear_attn_config.kda_layers");
        return FALSE;
    }
    /* 0: unset, 1: KDA, 2: full attention. */
    g_autofree guint8 *kind = g_new0(guint8, n);
    const struct {
        GArray *list;
        guint8 value;
        const char *key;
    } lists[] = {{kda, 1, "linear_attn_config.kda_layers"},
                 {full, 2, "linear_attn_config.full_attn_layers"}};
    for (guint i = 0; i < G_N_ELEMENTS(lists); i++) {
        if (lists[i].list == NULL)
            continue;
        for (guint j = 0; j < lists[i].list->len; j++) {
            gint64 layer1 = g_array_index(lists[i].list, gint64, j);
            if (kind[layer1 - 1] != 0) {
                rs_model_config_set_error(c, lists[i].key, error,
                                          "layer %" G_GINT64_FORMAT " (1-based) is listed twice "
                                          "or in both lists",
                                          layer1);
                return FALSE;
            }
            kind[layer1 - 1] = lists[i].value;
        }
    }
    for (gint64 l = 0; l < n; l++) {
        if (kind[l] == 0 && kda != NULL && full != NULL) {
            rs_model_config_set_error(c, "linear_attn_config.kda_layers", error,
                                      "layer %" G_GINT64_FORMAT " (1-based) is in neither "
                                      "kda_layers nor full_attn_layers",
                                      l + 1);
            return FALSE;
        }
        /* With one list given, the other is its complement. */
        k->is_kda[l] = kind[l] == 1 || (kind[l] == 0 && kda == NULL);
    }
    return TRUE;
}

/* Reads the kimi_k3 keys into @k (defaults already set) and *@n_mtp, and checks them. */
static gboolean
read_k3_config(RsModelConfig *c, const RsModelOptions *options, K3Config *k, gint64 *n_mtp,
               GError **error)
{
    gint64 attn_res_block = 0;
    const char *topk_method = "noaux_tc";
    if (!rs_family_read_common(c, &k->cc, error) ||
        !rs_family_read_quant(c, options, &k->q, error) ||
        !rs_model_config_get_width(c, "moe_intermediate_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &k->moe_intermediate, error) ||
        !rs_model_config_get_int(c, "num_experts", TRUE, 1, RS_FAMILY_MAX_COUNT, &k->n_experts,
                                 error) ||
        !rs_model_config_get_int(c, "num_experts_per_token", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &k->n_per_token, error) ||
        !rs_model_config_get_int(c, "num_shared_experts", FALSE, 0, 1 << 10, &k->n_shared,
                                 error) ||
        !rs_model_config_get_int(c, "first_k_dense_replace", FALSE, 0, 100000, &k->first_dense,
                                 error) ||
        !rs_model_config_get_int(c, "moe_layer_freq", FALSE, 1, 100000, &k->moe_freq, error) ||
        !rs_model_config_get_width(c, "routed_expert_hidden_size", FALSE, RS_FAMILY_MAX_DIM,
                                   &k->latent, error) ||
        !rs_model_config_get_bool(c, "latent_moe_use_norm", FALSE, &k->latent_norm, error) ||
        !rs_model_config_get_string(c, "topk_method", FALSE, &topk_method, error) ||
        !rs_model_config_get_width(c, "q_lora_rank", FALSE, RS_FAMILY_MAX_DIM, &k->q_lora,
                                   error) ||
        !rs_model_config_get_width(c, "kv_lora_rank", TRUE, RS_FAMILY_MAX_DIM, &k->kv_lora,
                                   error) ||
        !rs_model_config_get_width(c, "qk_nope_head_dim", TRUE, 1 << 20, &k->nope, error) ||
        !rs_model_config_get_width(c, "qk_rope_head_dim", TRUE, 1 << 20, &k->rope, error) ||
        !rs_model_config_get_width(c, "v_head_dim", TRUE, 1 << 20, &k->v_dim, error) ||
        !rs_model_config_get_bool(c, "mla_use_output_gate", FALSE, &k->mla_gate, error) ||
        !rs_model_config_get_int(c, "linear_attn_config.num_heads", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &k->kda_heads, error) ||
        !rs_model_config_get_width(c, "linear_attn_config.head_dim", TRUE, 1 << 20,
                                   &k->kda_head_dim, error) ||
        !rs_model_config_get_int(c, "linear_attn_config.short_conv_kernel_size", FALSE, 1, 1024,
                                 &k->conv, error) ||
        !rs_model_config_get_bool(c, "linear_attn_config.use_full_rank_gate", FALSE,
                                  &k->full_rank_gate, error) ||
        !rs_model_config_get_int(c, "attn_res_block_size", FALSE, 1, 100000, &attn_res_block,
                                 error) ||
        !rs_model_config_get_int(c, "num_nextn_predict_layers", FALSE, 0, 64, n_mtp, error))
        return FALSE;
    /* Routing and activation details that do not change the tensors. */
    static const char *const details[] = {"routed_scaling_factor", "topk_group",
                                          "linear_attn_config.gate_lower_bound"};
    for (guint i = 0; i < G_N_ELEMENTS(details); i++) {
        const char *ignored;
        rs_model_config_get_string(c, details[i], FALSE, &ignored, NULL);
    }
    k->score_bias = strcmp(topk_method, "noaux_tc") == 0;
    k->attn_res = attn_res_block > 0;
    return TRUE;
}

/* Checks what the kimi_k3 generator cannot build: MTP layers, dense layers without their
 * width, more active experts than experts. */
static gboolean
check_k3_config(RsModelConfig *c, const K3Config *k, gint64 n_mtp, GError **error)
{
    if (n_mtp > 0) {
        rs_model_config_set_error(c, "num_nextn_predict_layers", error,
                                  "kimi_k3 multi-token-prediction layers are not modelled (the "
                                  "released checkpoint has none)");
        return FALSE;
    }
    if (k->first_dense > 0 && k->cc.intermediate == 0) {
        rs_model_config_set_error(c, "intermediate_size", error,
                                  "required when first_k_dense_replace > 0");
        return FALSE;
    }
    return rs_family_check_active_experts(c, "num_experts_per_token", k->n_per_token,
                                          k->n_experts, FALSE, error);
}

/* Decoder layer @l: norms, KDA or MLA attention, attention residuals, MoE or dense MLP. */
static void
add_k3_layer(RsModel *m, const K3Config *k, gint l)
{
    gint64 H = k->cc.hidden;
    g_autofree char *prefix = g_strdup_printf("%smodel.layers.%d", k->prefix, l);
    char name[224];
    g_snprintf(name, sizeof name, "%s.input_layernorm.weight", prefix);
    rs_family_add_vector(m, name, RS_ROLE_NORM, l, m->dtype, 0, FALSE, H);
    if (k->is_kda[l])
        add_kda(m, k, prefix, l);
    else
        add_k3_mla(m, k, prefix, l);
    g_snprintf(name, sizeof name, "%s.post_attention_layernorm.weight", prefix);
    rs_family_add_vector(m, name, RS_ROLE_NORM, l, m->dtype, 0, FALSE, H);
    if (k->attn_res) {
        g_snprintf(name, sizeof name, "%s.self_attention_res", prefix);
        add_attn_res(m, name, l, H);
        g_snprintf(name, sizeof name, "%s.mlp_res", prefix);
        add_attn_res(m, name, l, H);
    }
    if (l >= k->first_dense && l % k->moe_freq == 0) {
        add_k3_moe(m, k, prefix, l);
    } else {
        g_snprintf(name, sizeof name, "%s.mlp", prefix);
        rs_family_add_dense_mlp(m, NULL, name, l, H, k->cc.intermediate, FALSE);
    }
}

gboolean
rs_family_generate_kimi_k3(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                           GError **error)
{
    K3Config k = {0};
    k.prefix = "language_model.";
    k.moe_freq = 1;
    k.conv = 4;
    k.full_rank_gate = FALSE;
    gint64 n_mtp = 0;
    if (!read_k3_config(c, options, &k, &n_mtp, error) || !check_k3_config(c, &k, n_mtp, error))
        return FALSE;
    g_autofree gboolean *is_kda = g_new0(gboolean, k.cc.n_layers);
    k.is_kda = is_kda;
    if (!read_k3_layer_kinds(c, &k, error))
        return FALSE;

    m->n_layers = (guint)k.cc.n_layers;
    m->n_experts_per_token = (guint)k.n_per_token;
    rs_family_add_embedding(m, k.prefix, &k.cc);
    for (gint l = 0; l < (gint)k.cc.n_layers; l++)
        add_k3_layer(m, &k, l);
    if (k.attn_res) {
        g_autofree char *base = g_strdup_printf("%smodel.output_attn_res", k.prefix);
        add_attn_res(m, base, (gint)k.cc.n_layers, k.cc.hidden);
    }
    rs_family_add_final(m, k.prefix, &k.cc);
    return TRUE;
}

/* --- qwen3_next --- */

typedef struct {
    RsCommonConfig cc;
    RsQuant q;
    gint64 n_experts, n_per_token, moe_intermediate, shared_intermediate;
    gint64 lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim, conv;
    gboolean q_gate;
    gboolean attention_bias; /* biases on q, k, v and o of the gated-attention layers */
    /* Qwen3.5: in_proj_qkv / in_proj_z / in_proj_b / in_proj_a instead of in_proj_qkvz /
     * in_proj_ba, and the main layers' experts fused (gate_up_proj, down_proj). */
    gboolean qwen3_5;
} NextConfig;

static void
add_gated_deltanet(RsModel *m, const NextConfig *n, const char *prefix, gint layer)
{
    gint64 H = n->cc.hidden;
    gint64 Kd = n->lin_k_heads * n->lin_k_dim, Vd = n->lin_v_heads * n->lin_v_dim;
    guint hk = (guint)n->lin_k_heads, hv = (guint)n->lin_v_heads;
    char name[192];
#define NAME(suffix) (g_snprintf(name, sizeof name, "%s.linear_attn." suffix, prefix), name)
    const gint64 segments[3] = {Kd, Kd, Vd};
    if (n->qwen3_5) {
        /* [q; k; v] of all heads, then z, b and a per value head (Qwen3_5GatedDeltaNet). */
        rs_model_add_tensor(m, NAME("in_proj_qkv.weight"), RS_ROLE_COLUMN_SEGMENTED, layer,
                            m->dtype, 0, 2, 2 * Kd + Vd, H);
        rs_model_set_last_segments(m, 3, segments);
        rs_family_add_linear(m, &n->q, NAME("in_proj_z"), RS_ROLE_COLUMN_PARALLEL, layer, hv,
                             FALSE, Vd, H, TRUE);
        rs_family_add_linear(m, &n->q, NAME("in_proj_b"), RS_ROLE_COLUMN_PARALLEL, layer, hv,
                             FALSE, n->lin_v_heads, H, TRUE);
        rs_family_add_linear(m, &n->q, NAME("in_proj_a"), RS_ROLE_COLUMN_PARALLEL, layer, hv,
                             FALSE, n->lin_v_heads, H, TRUE);
    } else {
        /* Rows grouped per key head ([q, k, v, z] of each group), so whole key-head groups
         * split contiguously. */
        rs_family_add_linear(m, &n->q, NAME("in_proj_qkvz"), RS_ROLE_COLUMN_PARALLEL, layer, hk,
                             FALSE, 2 * Kd + 2 * Vd, H, TRUE);
        rs_family_add_linear(m, &n->q, NAME("in_proj_ba"), RS_ROLE_COLUMN_PARALLEL, layer, hk,
                             FALSE, 2 * n->lin_v_heads, H, TRUE);
    }
    /* The convolution runs over [q; k; v] of all heads: three segments, each split over
     * tensor parallelism on its own. */
    rs_model_add_tensor(m, NAME("conv1d.weight"), RS_ROLE_COLUMN_SEGMENTED, layer, m->dtype, 0, 3,
                        2 * Kd + Vd, (gint64)1, n->conv);
    rs_model_set_last_segments(m, 3, segments);
    rs_family_add_vector(m, NAME("dt_bias"), RS_ROLE_COLUMN_PARALLEL, layer, m->dtype, hv, FALSE,
                         n->lin_v_heads);
    rs_family_add_vector(m, NAME("A_log"), RS_ROLE_COLUMN_PARALLEL, layer, m->dtype, hv, FALSE,
                         n->lin_v_heads);
    rs_family_add_vector(m, NAME("norm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, FALSE,
                         n->lin_v_dim);
    rs_family_add_linear(m, &n->q, NAME("out_proj"), RS_ROLE_ROW_PARALLEL, layer, 0, FALSE, H, Vd,
                         TRUE);
#undef NAME
}

static void
add_next_moe(RsModel *m, const NextConfig *n, const char *prefix, gint layer, gboolean fused)
{
    gint64 H = n->cc.hidden, E = n->n_experts, I = n->moe_intermediate;
    char name[192];
    g_snprintf(name, sizeof name, "%s.mlp.gate", prefix);
    rs_family_add_linear(m, NULL, name, RS_ROLE_ROUTER, layer, 0, FALSE, E, H, FALSE);
    if (fused) {
        g_snprintf(name, sizeof name, "%s.mlp.experts.gate_up_proj", prefix);
        rs_model_add_tensor(m, name, RS_ROLE_EXPERT_GATE_UP_FUSED, layer, m->dtype, 0, 3, E, 2 * I,
                            H);
        rs_model_set_last_gate_up_halves(m, 1); /* 2I is even */
        g_snprintf(name, sizeof name, "%s.mlp.experts.down_proj", prefix);
        rs_model_add_tensor(m, name, RS_ROLE_EXPERT_ROW, layer, m->dtype, 0, 3, E, H, I);
    } else {
        g_snprintf(name, sizeof name, "%s.mlp.experts", prefix);
        rs_model_fuse_next(m, RS_FUSE_GATE_UP, 0, name);
        rs_family_add_expert_weight(m, &n->q, name, "gate_proj", ".weight", RS_ROLE_EXPERT_COLUMN,
                                    layer, E, I, H);
        rs_model_fuse_next(m, RS_FUSE_GATE_UP, 1, name);
        rs_family_add_expert_weight(m, &n->q, name, "up_proj", ".weight", RS_ROLE_EXPERT_COLUMN,
                                    layer, E, I, H);
        rs_family_add_expert_weight(m, &n->q, name, "down_proj", ".weight", RS_ROLE_EXPERT_ROW,
                                    layer, E, H, I);
    }
    if (n->shared_intermediate > 0) {
        g_snprintf(name, sizeof name, "%s.mlp.shared_expert", prefix);
        rs_family_add_dense_mlp(m, &n->q, name, layer, H, n->shared_intermediate, TRUE);
        /* A sigmoid gate [1, H] scales the shared expert's output. */
        g_snprintf(name, sizeof name, "%s.mlp.shared_expert_gate", prefix);
        rs_family_add_linear(m, NULL, name, RS_ROLE_ROUTER, layer, 0, FALSE, 1, H, FALSE);
    }
}

/* One decoder layer; @fused_experts: the routed experts as Qwen3.5 stores its main layers'. */
static void
add_next_layer(RsModel *m, const NextConfig *n, const char *prefix, gint layer, gboolean full,
               gboolean moe, gboolean fused_experts)
{
    char name[192];
    g_snprintf(name, sizeof name, "%s.input_layernorm.weight", prefix);
    rs_family_add_vector(m, name, RS_ROLE_NORM, layer, m->dtype, 0, FALSE, n->cc.hidden);
    if (full) {
        g_snprintf(name, sizeof name, "%s.self_attn", prefix);
        RsAttentionOptions opts = {.qk_norm = TRUE,
                                   .q_gate = n->q_gate,
                                   .qkv_bias = n->attention_bias,
                                   .o_bias = n->attention_bias};
        rs_family_add_gqa_attention(m, &n->q, name, layer, &n->cc, &opts);
    } else {
        add_gated_deltanet(m, n, prefix, layer);
    }
    g_snprintf(name, sizeof name, "%s.post_attention_layernorm.weight", prefix);
    rs_family_add_vector(m, name, RS_ROLE_NORM, layer, m->dtype, 0, FALSE, n->cc.hidden);
    if (moe) {
        add_next_moe(m, n, prefix, layer, fused_experts);
    } else {
        g_snprintf(name, sizeof name, "%s.mlp", prefix);
        rs_family_add_dense_mlp(m, &n->q, name, layer, n->cc.hidden, n->cc.intermediate, TRUE);
    }
}

/* Which layers are what: full attention every full_attention_interval-th layer unless
 * layer_types lists each; MoE every decoder_sparse_step-th layer except mlp_only_layers. */
typedef struct {
    gint64 interval, step, n_mtp;
    const char *layer_types; /* borrowed from the config */
    GArray *mlp_only;        /* gint64, owned; NULL when absent */
    GStrv types;             /* layer_types split, owned; NULL when absent */
} NextSchedule;

static void
next_schedule_clear(NextSchedule *s)
{
    g_clear_pointer(&s->mlp_only, g_array_unref);
    g_clear_pointer(&s->types, g_strfreev);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(NextSchedule, next_schedule_clear)

/* Reads the qwen3_next keys into @n and @sched (defaults already set) and checks them. */
static gboolean
read_next_config(RsModelConfig *c, const RsModelOptions *options, NextConfig *n,
                 NextSchedule *sched, GError **error)
{
    if (!rs_family_read_common(c, &n->cc, error) ||
        !rs_family_read_quant(c, options, &n->q, error) ||
        !rs_model_config_get_int(c, "num_experts", TRUE, 1, RS_FAMILY_MAX_COUNT, &n->n_experts,
                                 error) ||
        !rs_model_config_get_int(c, "num_experts_per_tok", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &n->n_per_token, error) ||
        !rs_model_config_get_width(c, "moe_intermediate_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &n->moe_intermediate, error) ||
        !rs_model_config_get_width(c, "shared_expert_intermediate_size", FALSE, RS_FAMILY_MAX_DIM,
                                   &n->shared_intermediate, error) ||
        !rs_model_config_get_int(c, "decoder_sparse_step", FALSE, 1, 100000, &sched->step,
                                 error) ||
        !rs_model_config_get_int_list(c, "mlp_only_layers", FALSE, 0, 100000, &sched->mlp_only,
                                      error) ||
        !rs_model_config_get_int(c, "full_attention_interval", FALSE, 1, 100000,
                                 &sched->interval, error) ||
        !rs_model_config_get_text(c, "layer_types", FALSE, &sched->layer_types, error) ||
        !rs_model_config_get_int(c, "linear_num_key_heads", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &n->lin_k_heads, error) ||
        !rs_model_config_get_int(c, "linear_num_value_heads", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &n->lin_v_heads, error) ||
        !rs_model_config_get_width(c, "linear_key_head_dim", TRUE, 1 << 20, &n->lin_k_dim,
                                   error) ||
        !rs_model_config_get_width(c, "linear_value_head_dim", TRUE, 1 << 20, &n->lin_v_dim,
                                   error) ||
        !rs_model_config_get_int_default(c, "linear_conv_kernel_dim", 1, 1024, 4,
                                         "transformers Qwen3NextConfig", &n->conv, error) ||
        !rs_model_config_get_bool_default(c, "attn_output_gate", TRUE,
                                          "transformers Qwen3NextAttention (always gated: q_proj "
                                          "carries the gate)",
                                          &n->q_gate, error) ||
        !rs_model_config_get_bool_default(c, "attention_bias", FALSE,
                                          "transformers Qwen3NextConfig", &n->attention_bias,
                                          error) ||
        !rs_model_config_get_int(c, "mtp_num_hidden_layers", FALSE, 0, 64, &sched->n_mtp,
                                 error) ||
        !rs_family_check_gqa(c, &n->cc, error))
        return FALSE;
    rs_family_warn_head_dim(c, &n->cc);
    /* MTP layers with embeddings of their own would add tensors the block does not have. */
    gboolean dedicated = FALSE;
    if (!rs_model_config_get_bool(c, "mtp_use_dedicated_embeddings", FALSE, &dedicated, error))
        return FALSE;
    if (dedicated) {
        rs_model_config_set_error(c, "mtp_use_dedicated_embeddings", error,
                                  "true: MTP layers with their own embeddings are not modelled");
        return FALSE;
    }
    if (n->lin_v_heads % n->lin_k_heads != 0) {
        rs_model_config_set_error(c, "linear_num_value_heads", error,
                                  "%" G_GINT64_FORMAT
                                  " value heads are not a multiple of the %" G_GINT64_FORMAT
                                  " key heads",
                                  n->lin_v_heads, n->lin_k_heads);
        return FALSE;
    }
    if (!rs_family_check_active_experts(c, "num_experts_per_tok", n->n_per_token, n->n_experts,
                                        FALSE, error))
        return FALSE;
    sched->types = sched->layer_types ? g_strsplit(sched->layer_types, ",", -1) : NULL;
    if (sched->types != NULL && g_strv_length(sched->types) != (guint)n->cc.n_layers) {
        rs_model_config_set_error(c, "layer_types", error,
                                  "%u entries for %" G_GINT64_FORMAT " layers",
                                  g_strv_length(sched->types), n->cc.n_layers);
        return FALSE;
    }
    return TRUE;
}

/* Sets *@full (full attention, else Gated DeltaNet) and *@moe for decoder layer @l; fails
 * for a layer_types item that names neither kind, or a dense layer without its width. */
static gboolean
next_layer_kind(RsModelConfig *c, const NextConfig *n, const NextSchedule *sched, gint l,
                gboolean *full, gboolean *moe, GError **error)
{
    *full = (l + 1) % sched->interval == 0;
    if (sched->types != NULL) {
        const char *t = g_strstrip(sched->types[l]);
        if (strcmp(t, "full_attention") != 0 && strcmp(t, "linear_attention") != 0) {
            rs_model_config_set_error(c, "layer_types", error,
                                      "item %d \"%s\": expected full_attention or "
                                      "linear_attention",
                                      l, t);
            return FALSE;
        }
        *full = strcmp(t, "full_attention") == 0;
    }
    *moe = (l + 1) % sched->step == 0;
    for (guint i = 0; sched->mlp_only != NULL && i < sched->mlp_only->len; i++)
        if (g_array_index(sched->mlp_only, gint64, i) == l)
            *moe = FALSE;
    if (!*moe && n->cc.intermediate == 0) {
        rs_model_config_set_error(c, "intermediate_size", error,
                                  "required for the dense layer %d", l);
        return FALSE;
    }
    return TRUE;
}

/* The @n_mtp multi-token-prediction layers after the decoder: fc over [embedding; hidden],
 * their norms, full-attention MoE layers, and a final norm. */
static void
add_next_mtp(RsModel *m, const NextConfig *n, gint64 n_mtp)
{
    gint64 H = n->cc.hidden;
    gint post = (gint)n->cc.n_layers;
    rs_family_add_linear(m, &n->q, "mtp.fc", RS_ROLE_REPLICATED, post, 0, FALSE, H, 2 * H, FALSE);
    rs_family_add_vector(m, "mtp.pre_fc_norm_embedding.weight", RS_ROLE_NORM, post, m->dtype, 0,
                         FALSE, H);
    rs_family_add_vector(m, "mtp.pre_fc_norm_hidden.weight", RS_ROLE_NORM, post, m->dtype, 0,
                         FALSE, H);
    for (gint k = 0; k < (gint)n_mtp; k++) {
        g_autofree char *prefix = g_strdup_printf("mtp.layers.%d", k);
        add_next_layer(m, n, prefix, post + k, TRUE, TRUE, FALSE);
    }
    rs_family_add_vector(m, "mtp.norm.weight", RS_ROLE_NORM, post + (gint)n_mtp - 1, m->dtype, 0,
                         FALSE, H);
}

gboolean
rs_family_generate_qwen3_next(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                              GError **error)
{
    NextConfig n = {0};
    n.conv = 4;
    n.q_gate = TRUE;
    g_auto(NextSchedule) sched = {.interval = 4, .step = 1};
    if (!read_next_config(c, options, &n, &sched, error))
        return FALSE;
    m->n_layers = (guint)n.cc.n_layers;
    m->n_experts_per_token = (guint)n.n_per_token;
    rs_family_add_embedding(m, "", &n.cc);
    for (gint l = 0; l < (gint)n.cc.n_layers; l++) {
        gboolean full, moe;
        if (!next_layer_kind(c, &n, &sched, l, &full, &moe, error))
            return FALSE;
        g_autofree char *prefix = g_strdup_printf("model.layers.%d", l);
        add_next_layer(m, &n, prefix, l, full, moe, FALSE);
    }
    rs_family_add_final(m, "", &n.cc);
    if (options->include_mtp && sched.n_mtp > 0)
        add_next_mtp(m, &n, sched.n_mtp);
    return TRUE;
}

/* qwen3_5_moe: the Qwen3.5 MoE vision-language model: the Qwen3-VL vision tower, then the
 * qwen3_next text model with Qwen3.5's projections under model.language_model., its head
 * lm_head.weight, and the MTP block (mtp.*) with --mtp. */
gboolean
rs_family_generate_qwen3_5_moe(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                               GError **error)
{
    NextConfig n = {0};
    n.conv = 4;
    n.q_gate = TRUE;
    n.qwen3_5 = TRUE;
    g_auto(NextSchedule) sched = {.interval = 4, .step = 1};
    /* Qwen3_5MoeTextConfig's shared-expert width default (512) is not Qwen3.5-397B's. */
    if (!rs_family_require(c, "shared_expert_intermediate_size",
                           "the width of the shared expert", error) ||
        !read_next_config(c, options, &n, &sched, error))
        return FALSE;
    /* Wrapper keys that name media tokens, not tensors. */
    static const char *const wrapper_keys[] = {"image_token_id", "video_token_id",
                                               "vision_start_token_id", "vision_end_token_id",
                                               "text_config.model_type"};
    for (guint i = 0; i < G_N_ELEMENTS(wrapper_keys); i++)
        rs_model_config_consume_prefix(c, wrapper_keys[i]);
    m->n_layers = (guint)n.cc.n_layers;
    m->n_experts_per_token = (guint)n.n_per_token;
    if (!rs_family_add_vision_qwen3_vl(m, c, error))
        return FALSE;
    rs_model_add_tensor(m, "model.language_model.embed_tokens.weight", RS_ROLE_VOCAB_PARALLEL, -1,
                        m->dtype, 0, 2, n.cc.vocab, n.cc.hidden);
    for (gint l = 0; l < (gint)n.cc.n_layers; l++) {
        gboolean full, moe;
        if (!next_layer_kind(c, &n, &sched, l, &full, &moe, error))
            return FALSE;
        g_autofree char *prefix = g_strdup_printf("model.language_model.layers.%d", l);
        add_next_layer(m, &n, prefix, l, full, moe, TRUE);
    }
    gint post = (gint)n.cc.n_layers;
    m->tie_embeddings = n.cc.tie_embeddings;
    rs_model_add_tensor(m, "model.language_model.norm.weight", RS_ROLE_NORM, post, m->dtype, 0, 1,
                        n.cc.hidden);
    if (!n.cc.tie_embeddings)
        rs_model_add_tensor(m, "lm_head.weight", RS_ROLE_VOCAB_PARALLEL, post, m->dtype, 0, 2,
                            n.cc.vocab, n.cc.hidden);
    if (options->include_mtp && sched.n_mtp > 0)
        add_next_mtp(m, &n, sched.n_mtp);
    return TRUE;
}

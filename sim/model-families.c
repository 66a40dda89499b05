/* model-families.c — tensor generators per model family.
 *
 * Each generator reads the Hugging Face config values of its family and emits the weight
 * tensors of the checkpoint with their canonical names and shapes ([out, in] for linears,
 * [dim] for norms), in checkpoint order: embedding, layers, final norm, head. Routed experts
 * of one layer are one grouped tensor [E, out, in] per projection.
 *
 * Sources: transformers' modeling_llama.py (LlamaForCausalLM) and modeling_deepseek_v3.py
 * (DeepseekV3ForCausalLM), and the config.json files of the shipped models; the MTP layer
 * layout follows DeepSeek-V3's checkpoint (model.layers.61.{enorm,hnorm,eh_proj,
 * shared_head.*,embed_tokens}) and vLLM's deepseek_mtp.py.
 */
#include "sim/model-private.h"

#include <string.h>

#define MAX_DIM ((gint64)1 << 40)

/* Reads the keys every decoder family shares. */
typedef struct {
    gint64 hidden;
    gint64 intermediate;
    gint64 n_layers;
    gint64 n_heads;
    gint64 n_kv_heads;
    gint64 vocab;
    gboolean tie_embeddings;
} CommonConfig;

static gboolean
read_common(RsModelConfig *c, CommonConfig *cc, GError **error)
{
    cc->tie_embeddings = FALSE;
    if (!rs_model_config_get_width(c, "hidden_size", TRUE, MAX_DIM, &cc->hidden, error) ||
        !rs_model_config_get_int(c, "num_hidden_layers", TRUE, 1, 100000, &cc->n_layers,
                                 error) ||
        !rs_model_config_get_int(c, "num_attention_heads", TRUE, 1, 1 << 20, &cc->n_heads,
                                 error) ||
        !rs_model_config_get_width(c, "vocab_size", TRUE, MAX_DIM, &cc->vocab, error) ||
        !rs_model_config_get_bool(c, "tie_word_embeddings", FALSE, &cc->tie_embeddings, error))
        return FALSE;
    cc->n_kv_heads = cc->n_heads;
    if (!rs_model_config_get_int(c, "num_key_value_heads", FALSE, 1, 1 << 20, &cc->n_kv_heads,
                                 error))
        return FALSE;
    cc->intermediate = 0;
    return rs_model_config_get_width(c, "intermediate_size", FALSE, MAX_DIM, &cc->intermediate,
                                   error);
}

static void
add_embedding(RsModel *m, const CommonConfig *cc)
{
    rs_model_add_tensor(m, "model.embed_tokens.weight", RS_ROLE_VOCAB_PARALLEL, -1, m->dtype, 0,
                        2, cc->vocab, cc->hidden);
}

static void
add_final(RsModel *m, const CommonConfig *cc)
{
    gint post = (gint)cc->n_layers;
    m->tie_embeddings = cc->tie_embeddings;
    rs_model_add_tensor(m, "model.norm.weight", RS_ROLE_NORM, post, m->dtype, 0, 1, cc->hidden);
    if (!cc->tie_embeddings)
        rs_model_add_tensor(m, "lm_head.weight", RS_ROLE_VOCAB_PARALLEL, post, m->dtype, 0, 2,
                            cc->vocab, cc->hidden);
}

static void
add_dense_mlp(RsModel *m, const char *prefix, gint layer, gint64 hidden, gint64 intermediate)
{
    g_autofree char *gate = g_strdup_printf("%s.gate_proj.weight", prefix);
    g_autofree char *up = g_strdup_printf("%s.up_proj.weight", prefix);
    g_autofree char *down = g_strdup_printf("%s.down_proj.weight", prefix);
    rs_model_add_tensor(m, gate, RS_ROLE_COLUMN_PARALLEL, layer, m->dtype, 0, 2, intermediate,
                        hidden);
    rs_model_mark_fused(m, RS_FUSE_GATE_UP, 0, prefix);
    rs_model_add_tensor(m, up, RS_ROLE_COLUMN_PARALLEL, layer, m->dtype, 0, 2, intermediate,
                        hidden);
    rs_model_mark_fused(m, RS_FUSE_GATE_UP, 1, prefix);
    rs_model_add_tensor(m, down, RS_ROLE_ROW_PARALLEL, layer, m->dtype, 0, 2, hidden,
                        intermediate);
}

/* llama: grouped-query attention and a SwiGLU MLP (modeling_llama.py). */
static gboolean
generate_llama(RsModel *m, RsModelConfig *c, const RsModelOptions *options, GError **error)
{
    CommonConfig cc;
    if (!read_common(c, &cc, error))
        return FALSE;
    if (cc.intermediate == 0) {
        rs_model_config_set_error(c, "intermediate_size", error, "required field is missing");
        return FALSE;
    }
    gint64 head_dim = cc.hidden / cc.n_heads;
    if (!rs_model_config_get_width(c, "head_dim", FALSE, 1 << 20, &head_dim, error))
        return FALSE;
    if (cc.n_heads % cc.n_kv_heads != 0) {
        rs_model_config_set_error(c, "num_key_value_heads", error,
                                  "%" G_GINT64_FORMAT " KV heads do not divide %" G_GINT64_FORMAT
                                  " attention heads",
                                  cc.n_kv_heads, cc.n_heads);
        return FALSE;
    }
    m->n_layers = (guint)cc.n_layers;
    add_embedding(m, &cc);
    for (gint l = 0; l < (gint)cc.n_layers; l++) {
        char name[128];
        g_autofree char *attn = g_strdup_printf("model.layers.%d.self_attn", l);
#define NAME(suffix) (g_snprintf(name, sizeof name, "model.layers.%d." suffix, l), name)
        rs_model_add_tensor(m, NAME("input_layernorm.weight"), RS_ROLE_NORM, l, m->dtype, 0, 1,
                            cc.hidden);
        rs_model_add_tensor(m, NAME("self_attn.q_proj.weight"), RS_ROLE_COLUMN_PARALLEL, l,
                            m->dtype, (guint)cc.n_heads, 2, cc.n_heads * head_dim, cc.hidden);
        rs_model_mark_fused(m, RS_FUSE_QKV, 0, attn);
        rs_model_add_tensor(m, NAME("self_attn.k_proj.weight"), RS_ROLE_COLUMN_PARALLEL, l,
                            m->dtype, (guint)cc.n_kv_heads, 2, cc.n_kv_heads * head_dim,
                            cc.hidden);
        rs_model_mark_kv_heads(m);
        rs_model_mark_fused(m, RS_FUSE_QKV, 1, attn);
        rs_model_add_tensor(m, NAME("self_attn.v_proj.weight"), RS_ROLE_COLUMN_PARALLEL, l,
                            m->dtype, (guint)cc.n_kv_heads, 2, cc.n_kv_heads * head_dim,
                            cc.hidden);
        rs_model_mark_kv_heads(m);
        rs_model_mark_fused(m, RS_FUSE_QKV, 2, attn);
        rs_model_add_tensor(m, NAME("self_attn.o_proj.weight"), RS_ROLE_ROW_PARALLEL, l,
                            m->dtype, 0, 2, cc.hidden, cc.n_heads * head_dim);
        rs_model_add_tensor(m, NAME("post_attention_layernorm.weight"), RS_ROLE_NORM, l,
                            m->dtype, 0, 1, cc.hidden);
#undef NAME
        g_autofree char *prefix = g_strdup_printf("model.layers.%d.mlp", l);
        add_dense_mlp(m, prefix, l, cc.hidden, cc.intermediate);
    }
    add_final(m, &cc);
    return TRUE;
}

typedef struct {
    CommonConfig cc;
    gint64 moe_intermediate;
    gint64 n_routed, n_shared, n_per_token;
    gint64 first_dense, moe_freq;
    gint64 q_lora, kv_lora, nope, rope, v_dim;
    gboolean has_score_bias;
} DeepseekConfig;

/* One decoder layer of DeepSeek-V3 under @prefix ("model.layers.7"). */
static void
add_deepseek_layer(RsModel *m, const DeepseekConfig *dc, const char *prefix, gint layer,
                   gboolean moe)
{
    const CommonConfig *cc = &dc->cc;
    char name[160];
#define NAME(suffix) (g_snprintf(name, sizeof name, "%s." suffix, prefix), name)
    gint64 H = cc->hidden, nh = cc->n_heads;
    guint heads = (guint)nh;
    g_autofree char *attn = g_strdup_printf("%s.self_attn", prefix);
    rs_model_add_tensor(m, NAME("input_layernorm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, 1,
                        H);
    if (dc->q_lora > 0) {
        rs_model_add_tensor(m, NAME("self_attn.q_a_proj.weight"), RS_ROLE_REPLICATED, layer,
                            m->dtype, 0, 2, dc->q_lora, H);
        rs_model_mark_fused(m, RS_FUSE_MLA_A, 0, attn);
        rs_model_add_tensor(m, NAME("self_attn.q_a_layernorm.weight"), RS_ROLE_NORM, layer,
                            m->dtype, 0, 1, dc->q_lora);
        rs_model_add_tensor(m, NAME("self_attn.q_b_proj.weight"), RS_ROLE_COLUMN_PARALLEL, layer,
                            m->dtype, heads, 2, nh * (dc->nope + dc->rope), dc->q_lora);
    } else {
        rs_model_add_tensor(m, NAME("self_attn.q_proj.weight"), RS_ROLE_COLUMN_PARALLEL, layer,
                            m->dtype, heads, 2, nh * (dc->nope + dc->rope), H);
    }
    rs_model_add_tensor(m, NAME("self_attn.kv_a_proj_with_mqa.weight"), RS_ROLE_REPLICATED, layer,
                        m->dtype, 0, 2, dc->kv_lora + dc->rope, H);
    if (dc->q_lora > 0)
        rs_model_mark_fused(m, RS_FUSE_MLA_A, 1, attn);
    rs_model_add_tensor(m, NAME("self_attn.kv_a_layernorm.weight"), RS_ROLE_NORM, layer,
                        m->dtype, 0, 1, dc->kv_lora);
    rs_model_add_tensor(m, NAME("self_attn.kv_b_proj.weight"), RS_ROLE_COLUMN_PARALLEL, layer,
                        m->dtype, heads, 2, nh * (dc->nope + dc->v_dim), dc->kv_lora);
    rs_model_add_tensor(m, NAME("self_attn.o_proj.weight"), RS_ROLE_ROW_PARALLEL, layer,
                        m->dtype, 0, 2, H, nh * dc->v_dim);
    rs_model_add_tensor(m, NAME("post_attention_layernorm.weight"), RS_ROLE_NORM, layer,
                        m->dtype, 0, 1, H);
    if (!moe) {
        g_autofree char *mlp = g_strdup_printf("%s.mlp", prefix);
        add_dense_mlp(m, mlp, layer, H, cc->intermediate);
        return;
    }
    gint64 E = dc->n_routed, I = dc->moe_intermediate;
    rs_model_add_tensor(m, NAME("mlp.gate.weight"), RS_ROLE_ROUTER, layer, m->dtype, 0, 2, E, H);
    if (dc->has_score_bias)
        rs_model_add_tensor(m, NAME("mlp.gate.e_score_correction_bias"), RS_ROLE_ROUTER, layer,
                            RS_DTYPE_F32, 0, 1, E);
    g_autofree char *experts = g_strdup_printf("%s.mlp.experts", prefix);
    rs_model_add_tensor(m, NAME("mlp.experts.gate_proj.weight"), RS_ROLE_EXPERT_COLUMN, layer,
                        m->dtype, 0, 3, E, I, H);
    rs_model_mark_fused(m, RS_FUSE_GATE_UP, 0, experts);
    rs_model_add_tensor(m, NAME("mlp.experts.up_proj.weight"), RS_ROLE_EXPERT_COLUMN, layer,
                        m->dtype, 0, 3, E, I, H);
    rs_model_mark_fused(m, RS_FUSE_GATE_UP, 1, experts);
    rs_model_add_tensor(m, NAME("mlp.experts.down_proj.weight"), RS_ROLE_EXPERT_ROW, layer,
                        m->dtype, 0, 3, E, H, I);
    if (dc->n_shared > 0) {
        g_autofree char *shared = g_strdup_printf("%s.mlp.shared_experts", prefix);
        add_dense_mlp(m, shared, layer, H, I * dc->n_shared);
    }
#undef NAME
}

/* deepseek_v3: MLA attention, dense-first layers, routed + shared experts, optional MTP
 * layers (DeepSeek-V3, Kimi-K2). */
static gboolean
generate_deepseek_v3(RsModel *m, RsModelConfig *c, const RsModelOptions *options,
                     GError **error)
{
    DeepseekConfig dc = {0};
    dc.moe_freq = 1;
    gint64 n_mtp = 0;
    const char *topk_method = "noaux_tc";
    if (!read_common(c, &dc.cc, error) ||
        !rs_model_config_get_width(c, "moe_intermediate_size", TRUE, MAX_DIM,
                                 &dc.moe_intermediate, error) ||
        !rs_model_config_get_int(c, "n_routed_experts", TRUE, 1, 1 << 20, &dc.n_routed, error) ||
        !rs_model_config_get_int(c, "n_shared_experts", FALSE, 0, 1 << 10, &dc.n_shared,
                                 error) ||
        !rs_model_config_get_int(c, "num_experts_per_tok", TRUE, 1, 1 << 20, &dc.n_per_token,
                                 error) ||
        !rs_model_config_get_int(c, "first_k_dense_replace", FALSE, 0, 100000, &dc.first_dense,
                                 error) ||
        !rs_model_config_get_int(c, "moe_layer_freq", FALSE, 1, 100000, &dc.moe_freq, error) ||
        !rs_model_config_get_width(c, "q_lora_rank", FALSE, MAX_DIM, &dc.q_lora, error) ||
        !rs_model_config_get_width(c, "kv_lora_rank", TRUE, MAX_DIM, &dc.kv_lora, error) ||
        !rs_model_config_get_width(c, "qk_nope_head_dim", TRUE, 1 << 20, &dc.nope, error) ||
        !rs_model_config_get_width(c, "qk_rope_head_dim", TRUE, 1 << 20, &dc.rope, error) ||
        !rs_model_config_get_width(c, "v_head_dim", TRUE, 1 << 20, &dc.v_dim, error) ||
        !rs_model_config_get_int(c, "num_nextn_predict_layers", FALSE, 0, 64, &n_mtp, error) ||
        !rs_model_config_get_string(c, "topk_method", FALSE, &topk_method, error))
        return FALSE;
    /* Routing details that do not change the tensors. */
    static const char *const routing_keys[] = {"n_group", "topk_group", "routed_scaling_factor",
                                               "scoring_func", "norm_topk_prob"};
    for (guint i = 0; i < G_N_ELEMENTS(routing_keys); i++) {
        const char *ignored;
        rs_model_config_get_string(c, routing_keys[i], FALSE, &ignored, NULL);
    }
    if (dc.first_dense > 0 && dc.cc.intermediate == 0) {
        rs_model_config_set_error(c, "intermediate_size", error,
                                  "required when first_k_dense_replace > 0");
        return FALSE;
    }
    if (dc.n_per_token > dc.n_routed) {
        rs_model_config_set_error(c, "num_experts_per_tok", error,
                                  "%" G_GINT64_FORMAT " active experts exceed %" G_GINT64_FORMAT
                                  " routed experts",
                                  dc.n_per_token, dc.n_routed);
        return FALSE;
    }
    /* noaux_tc routing (DeepSeek-V3) keeps a per-expert score bias; greedy (V2) has none. */
    dc.has_score_bias = strcmp(topk_method, "noaux_tc") == 0;
    m->n_layers = (guint)dc.cc.n_layers;
    m->n_experts_per_token = (guint)dc.n_per_token;

    add_embedding(m, &dc.cc);
    for (gint l = 0; l < (gint)dc.cc.n_layers; l++) {
        gboolean moe = l >= dc.first_dense && l % dc.moe_freq == 0;
        g_autofree char *prefix = g_strdup_printf("model.layers.%d", l);
        add_deepseek_layer(m, &dc, prefix, l, moe);
    }
    add_final(m, &dc.cc);
    if (options->include_mtp) {
        gint64 H = dc.cc.hidden;
        for (gint k = 0; k < (gint)n_mtp; k++) {
            gint layer = (gint)dc.cc.n_layers + k;
            g_autofree char *prefix = g_strdup_printf("model.layers.%d", layer);
            char name[160];
#define NAME(suffix) (g_snprintf(name, sizeof name, "%s." suffix, prefix), name)
            rs_model_add_tensor(m, NAME("embed_tokens.weight"), RS_ROLE_VOCAB_PARALLEL, layer,
                                m->dtype, 0, 2, dc.cc.vocab, H);
            rs_model_add_tensor(m, NAME("enorm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, 1, H);
            rs_model_add_tensor(m, NAME("hnorm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, 1, H);
            rs_model_add_tensor(m, NAME("eh_proj.weight"), RS_ROLE_REPLICATED, layer, m->dtype, 0,
                                2, H, 2 * H);
            add_deepseek_layer(m, &dc, prefix, layer, TRUE);
            rs_model_add_tensor(m, NAME("shared_head.norm.weight"), RS_ROLE_NORM, layer,
                                m->dtype, 0, 1, H);
            rs_model_add_tensor(m, NAME("shared_head.head.weight"), RS_ROLE_VOCAB_PARALLEL,
                                layer, m->dtype, 0, 2, dc.cc.vocab, H);
#undef NAME
        }
    }
    return TRUE;
}

static const struct {
    const char *family;
    RsFamilyGenerator generate;
} families[] = {
    {"llama", generate_llama},
    {"deepseek_v3", generate_deepseek_v3},
};

RsFamilyGenerator
rs_model_family_lookup(const char *family)
{
    for (guint i = 0; i < G_N_ELEMENTS(families); i++)
        if (strcmp(family, families[i].family) == 0)
            return families[i].generate;
    return NULL;
}

char *
rs_model_families_list(void)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(families); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", families[i].family);
    return g_string_free(s, FALSE);
}

/* model-families.c — the table of family generators, the building blocks they share, and
 * the dense and plain-MoE families (llama, qwen3, qwen3_moe, mixtral).
 *
 * Each generator reads the Hugging Face config values of its family and emits the weight
 * tensors of the checkpoint with their canonical names and shapes ([out, in] for linears,
 * [dim] for norms), in checkpoint order: embedding, layers, final norm, head. Routed experts
 * of one layer are one grouped tensor [E, out, in] per projection (the checkpoint's
 * experts.{e}.NAME for e = 0..E-1, stacked); a safetensors import groups them the same way.
 *
 * Sources: transformers' modeling_llama.py (LlamaForCausalLM), modeling_qwen3.py,
 * modeling_qwen3_moe.py (Qwen3MoeSparseMoeBlock, decoder_sparse_step, mlp_only_layers),
 * modeling_mixtral.py (MixtralSparseMoeBlock: block_sparse_moe.gate, experts.{e}.w1/w2/w3),
 * and the config.json files of the shipped models. The other families live in
 * model-family-deepseek.c, model-family-gpt-oss.c and model-family-hybrid.c.
 */
#include "models/model-families-private.h"

#include <string.h>

/* --- storage --- */

typedef struct {
    gboolean mxfp4;
    gint64 group_size;
    gint64 num_bits;
    gboolean int_type;
} QuantGroupScan;

static void
scan_config_groups(const char *subkey, const char *value, const char *where, gpointer data)
{
    QuantGroupScan *scan = data;
    if (value == NULL)
        return;
    if (g_str_has_suffix(subkey, ".format") && strstr(value, "mxfp4") != NULL)
        scan->mxfp4 = TRUE;
    if (g_str_has_suffix(subkey, ".weights.group_size"))
        g_ascii_string_to_signed(value, 10, 1, 1 << 20, &scan->group_size, NULL);
    if (g_str_has_suffix(subkey, ".weights.num_bits"))
        g_ascii_string_to_signed(value, 10, 1, 64, &scan->num_bits, NULL);
    if (g_str_has_suffix(subkey, ".weights.type") && strcmp(value, "int") == 0)
        scan->int_type = TRUE;
}

gboolean
rs_family_read_quant(RsModelConfig *c, const RsModelOptions *options, RsQuant *q, GError **error)
{
    memset(q, 0, sizeof *q);
    q->fp8_dtype = RS_DTYPE_FP8_E4M3;
    q->block_rows = q->block_cols = 128;
    q->group = 32;
    const char *method = NULL, *fmt = NULL, *format = NULL;
    g_autoptr(GArray) block = NULL;
    if (!rs_model_config_get_string(c, "quantization_config.quant_method", FALSE, &method, error) ||
        !rs_model_config_get_string(c, "quantization_config.fmt", FALSE, &fmt, error) ||
        !rs_model_config_get_string(c, "quantization_config.format", FALSE, &format, error) ||
        !rs_model_config_get_int_list(c, "quantization_config.weight_block_size", FALSE, 1, 1 << 20,
                                      &block, error))
        return FALSE;
    QuantGroupScan scan = {format != NULL && strstr(format, "mxfp4") != NULL, 32, 0, FALSE};
    rs_model_config_foreach_prefix(c, "quantization_config.config_groups.", scan_config_groups,
                                   &scan);
    /* Everything else under quantization_config (activation_scheme, ignore lists,
     * modules_to_not_convert, …) describes kernels, not the stored tensors. */
    rs_model_config_consume_prefix(c, "quantization_config");
    if (method == NULL || options->storage != RS_MODEL_STORAGE_CHECKPOINT)
        return TRUE;
    if (strcmp(method, "fp8") == 0) {
        q->kind = RS_QUANT_FP8_BLOCK;
        if (block != NULL) {
            if (block->len != 2) {
                rs_model_config_set_error(c, "quantization_config.weight_block_size", error,
                                          "expected [rows, cols]");
                return FALSE;
            }
            q->block_rows = g_array_index(block, gint64, 0);
            q->block_cols = g_array_index(block, gint64, 1);
        }
        /* A scaled model's blocks shrink with its widths, so a split that is block-aligned
         * at full size stays aligned (MX groups of 32 values are a format, not scaled). */
        if (options->scale > 1) {
            q->block_rows = MAX(q->block_rows / (gint64)options->scale, 1);
            q->block_cols = MAX(q->block_cols / (gint64)options->scale, 1);
        }
        if (fmt != NULL && g_ascii_strcasecmp(fmt, "e5m2") == 0)
            q->fp8_dtype = RS_DTYPE_FP8_E5M2;
        else if (fmt != NULL && g_ascii_strcasecmp(fmt, "e4m3") != 0) {
            rs_model_config_set_error(c, "quantization_config.fmt", error,
                                      "\"%s\": expected e4m3 or e5m2", fmt);
            return FALSE;
        }
        return TRUE;
    }
    if (strcmp(method, "mxfp4") == 0) {
        q->kind = RS_QUANT_MXFP4;
        return TRUE;
    }
    if (strcmp(method, "compressed-tensors") == 0 && scan.mxfp4) {
        q->kind = RS_QUANT_MXFP4;
        q->packed_names = TRUE;
        q->group = scan.group_size;
        return TRUE;
    }
    if (strcmp(method, "compressed-tensors") == 0 && format != NULL &&
        strcmp(format, "pack-quantized") == 0 && scan.int_type && scan.num_bits == 4) {
        q->kind = RS_QUANT_INT4_PACKED;
        q->packed_names = TRUE;
        q->group = scan.group_size;
        return TRUE;
    }
    rs_model_config_set_error(c, "quantization_config.quant_method", error,
                              "\"%s\"%s: the stored form is modelled for fp8 (block scales), "
                              "mxfp4, compressed-tensors mxfp4 and compressed-tensors "
                              "pack-quantized int4",
                              method,
                              strcmp(method, "compressed-tensors") == 0 ? " (not mxfp4)" : "");
    return FALSE;
}

/* --- common keys and tensors --- */

gboolean
rs_family_read_common(RsModelConfig *c, RsCommonConfig *cc, GError **error)
{
    memset(cc, 0, sizeof *cc);
    if (!rs_model_config_get_width(c, "hidden_size", TRUE, RS_FAMILY_MAX_DIM, &cc->hidden, error) ||
        !rs_model_config_get_int(c, "num_hidden_layers", TRUE, 1, 100000, &cc->n_layers, error) ||
        !rs_model_config_get_int(c, "num_attention_heads", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &cc->n_heads, error) ||
        !rs_model_config_get_width(c, "vocab_size", TRUE, RS_FAMILY_MAX_DIM, &cc->vocab, error) ||
        !rs_model_config_get_bool_default(c, "tie_word_embeddings", FALSE,
                                          "the family's transformers config class "
                                          "(tie_word_embeddings=False)",
                                          &cc->tie_embeddings, error))
        return FALSE;
    /* LlamaConfig, Qwen3Config, MixtralConfig, DeepseekV3Config, Qwen3NextConfig: "if
     * num_key_value_heads is None: num_key_value_heads = num_attention_heads". Families
     * whose config class defaults otherwise (Glm4MoeConfig, Llama4TextConfig: 8) require
     * the key before calling this. */
    g_autofree char *heads = g_strdup_printf("num_attention_heads (%" G_GINT64_FORMAT ")",
                                             cc->n_heads);
    cc->n_kv_heads = cc->n_heads;
    if (!rs_model_config_has(c, "num_key_value_heads"))
        rs_model_config_warn_default(c, "num_key_value_heads", heads,
                                     "transformers (num_key_value_heads = num_attention_heads "
                                     "when absent)");
    if (!rs_model_config_get_int(c, "num_key_value_heads", FALSE, 1, RS_FAMILY_MAX_COUNT,
                                 &cc->n_kv_heads, error))
        return FALSE;
    cc->head_dim = MAX(cc->hidden / cc->n_heads, 1);
    cc->head_dim_given = rs_model_config_has(c, "head_dim");
    if (!rs_model_config_get_width(c, "head_dim", FALSE, 1 << 20, &cc->head_dim, error))
        return FALSE;
    return rs_model_config_get_width(c, "intermediate_size", FALSE, RS_FAMILY_MAX_DIM,
                                     &cc->intermediate, error);
}

void
rs_family_warn_head_dim(RsModelConfig *c, const RsCommonConfig *cc)
{
    if (cc->head_dim_given)
        return;
    g_autofree char *value = g_strdup_printf("hidden_size / num_attention_heads = %" G_GINT64_FORMAT,
                                             cc->head_dim);
    rs_model_config_warn_default(c, "head_dim", value,
                                 "the transformers modeling files (getattr(config, \"head_dim\", "
                                 "hidden_size // num_attention_heads))");
}

gboolean
rs_family_require(RsModelConfig *c, const char *key, const char *why, GError **error)
{
    if (rs_model_config_has(c, key))
        return TRUE;
    rs_model_config_set_missing(c, key, error, why);
    return FALSE;
}

gboolean
rs_family_check_active_experts(RsModelConfig *c, const char *key, gint64 n_per_token,
                               gint64 n_experts, gboolean routed, GError **error)
{
    if (n_per_token <= n_experts)
        return TRUE;
    rs_model_config_set_error(
        c, key, error, "%" G_GINT64_FORMAT " active experts exceed %" G_GINT64_FORMAT " %sexperts",
        n_per_token, n_experts, routed ? "routed " : "");
    return FALSE;
}

gboolean
rs_family_check_gqa(RsModelConfig *c, const RsCommonConfig *cc, GError **error)
{
    if (cc->n_heads % cc->n_kv_heads != 0) {
        rs_model_config_set_error(c, "num_key_value_heads", error,
                                  "%" G_GINT64_FORMAT " KV heads do not divide %" G_GINT64_FORMAT
                                  " attention heads",
                                  cc->n_kv_heads, cc->n_heads);
        return FALSE;
    }
    return TRUE;
}

void
rs_family_add_embedding(RsModel *m, const char *prefix, const RsCommonConfig *cc)
{
    g_autofree char *name = g_strconcat(prefix, "model.embed_tokens.weight", NULL);
    rs_model_add_tensor(m, name, RS_ROLE_VOCAB_PARALLEL, -1, m->dtype, 0, 2, cc->vocab, cc->hidden);
}

void
rs_family_add_final(RsModel *m, const char *prefix, const RsCommonConfig *cc)
{
    gint post = (gint)cc->n_layers;
    g_autofree char *norm = g_strconcat(prefix, "model.norm.weight", NULL);
    g_autofree char *head = g_strconcat(prefix, "lm_head.weight", NULL);
    m->tie_embeddings = cc->tie_embeddings;
    rs_model_add_tensor(m, norm, RS_ROLE_NORM, post, m->dtype, 0, 1, cc->hidden);
    if (!cc->tie_embeddings)
        rs_model_add_tensor(m, head, RS_ROLE_VOCAB_PARALLEL, post, m->dtype, 0, 2, cc->vocab,
                            cc->hidden);
}

void
rs_family_add_vector(RsModel *m, const char *name, RsTensorRole role, gint layer, RsDtype dtype,
                     guint n_heads, gboolean kv, gint64 len)
{
    rs_model_add_tensor(m, name, role, layer, dtype, n_heads, 1, len);
    if (kv)
        rs_model_mark_kv_heads(m);
}

static gint64
ceil_div(gint64 a, gint64 b)
{
    return (a + b - 1) / b;
}

void
rs_family_add_linear(RsModel *m, const RsQuant *q, const char *base, RsTensorRole role, gint layer,
                     guint n_heads, gboolean kv, gint64 out, gint64 in, gboolean quantizable)
{
    g_autofree char *weight = g_strconcat(base, ".weight", NULL);
    gboolean fp8 = quantizable && q != NULL && q->kind == RS_QUANT_FP8_BLOCK;
    rs_model_add_tensor(m, weight, role, layer, fp8 ? q->fp8_dtype : m->dtype, n_heads, 2, out, in);
    if (kv)
        rs_model_mark_kv_heads(m);
    if (!fp8)
        return;
    g_autofree char *scale = g_strconcat(base, ".weight_scale_inv", NULL);
    rs_model_add_tensor(m, scale, role, layer, RS_DTYPE_F32, n_heads, 2,
                        ceil_div(out, q->block_rows), ceil_div(in, q->block_cols));
    if (kv)
        rs_model_mark_kv_heads(m);
    rs_model_set_last_format(m, RS_TENSOR_FORMAT_SCALE, 0);
    const gint64 block[2] = {q->block_rows, q->block_cols};
    rs_model_mark_block_scale(m, block);
}

void
rs_family_add_dense_mlp(RsModel *m, const RsQuant *q, const char *prefix, gint layer, gint64 hidden,
                        gint64 intermediate, gboolean quantizable)
{
    g_autofree char *gate = g_strdup_printf("%s.gate_proj", prefix);
    g_autofree char *up = g_strdup_printf("%s.up_proj", prefix);
    g_autofree char *down = g_strdup_printf("%s.down_proj", prefix);
    rs_model_fuse_next(m, RS_FUSE_GATE_UP, 0, prefix);
    rs_family_add_linear(m, q, gate, RS_ROLE_COLUMN_PARALLEL, layer, 0, FALSE, intermediate, hidden,
                         quantizable);
    rs_model_fuse_next(m, RS_FUSE_GATE_UP, 1, prefix);
    rs_family_add_linear(m, q, up, RS_ROLE_COLUMN_PARALLEL, layer, 0, FALSE, intermediate, hidden,
                         quantizable);
    rs_family_add_linear(m, q, down, RS_ROLE_ROW_PARALLEL, layer, 0, FALSE, hidden, intermediate,
                         quantizable);
}

void
rs_family_add_expert_weight(RsModel *m, const RsQuant *q, const char *prefix, const char *name,
                            const char *weight_suffix, RsTensorRole role, gint layer,
                            gint64 n_experts, gint64 out, gint64 in)
{
    gint64 E = n_experts;
    guint64 params = (guint64)E * (guint64)out * (guint64)in;
    if (q != NULL && q->kind == RS_QUANT_MXFP4) {
        /* Two FP4 values per byte, one e8m0 scale byte per group of 32 values along the
         * input dim (OCP Microscaling Formats v1.0, MXFP4). */
        gint64 groups = ceil_div(in, q->group);
        g_autofree char *blocks = q->packed_names
                                      ? g_strdup_printf("%s.%s.weight_packed", prefix, name)
                                      : g_strdup_printf("%s.%s_blocks", prefix, name);
        g_autofree char *scales = q->packed_names
                                      ? g_strdup_printf("%s.%s.weight_scale", prefix, name)
                                      : g_strdup_printf("%s.%s_scales", prefix, name);
        if (q->packed_names)
            rs_model_add_tensor(m, blocks, role, layer, RS_DTYPE_U8, 0, 3, E, out, ceil_div(in, 2));
        else
            rs_model_add_tensor(m, blocks, role, layer, RS_DTYPE_U8, 0, 4, E, out, groups,
                                q->group / 2);
        rs_model_set_last_format(m, RS_TENSOR_FORMAT_MXFP4, params);
        rs_model_add_tensor(m, scales, role, layer, RS_DTYPE_U8, 0, 3, E, out, groups);
        rs_model_set_last_format(m, RS_TENSOR_FORMAT_SCALE, 0);
        if (q->packed_names) {
            /* One scale per group of values = group / 2 packed bytes along the input. */
            const gint64 block[3] = {1, 1, q->group / 2};
            rs_model_mark_block_scale(m, block);
        }
        return;
    }
    if (q != NULL && q->kind == RS_QUANT_INT4_PACKED) {
        /* compressed-tensors pack_quantized: eight 4-bit values per int32 along the input
         * dim, one bf16 scale per group, and each weight's logical [out, in] shape. */
        g_autofree char *packed = g_strdup_printf("%s.%s.weight_packed", prefix, name);
        g_autofree char *scale = g_strdup_printf("%s.%s.weight_scale", prefix, name);
        g_autofree char *shape = g_strdup_printf("%s.%s.weight_shape", prefix, name);
        rs_model_add_tensor(m, packed, role, layer, RS_DTYPE_I32, 0, 3, E, out, ceil_div(in, 8));
        rs_model_set_last_format(m, RS_TENSOR_FORMAT_INT4, params);
        rs_model_add_tensor(m, scale, role, layer, RS_DTYPE_BF16, 0, 3, E, out,
                            ceil_div(in, q->group));
        rs_model_set_last_format(m, RS_TENSOR_FORMAT_SCALE, 0);
        /* One scale per group of values = group / 8 packed words along the input. */
        const gint64 block[3] = {1, 1, MAX(q->group / 8, 1)};
        rs_model_mark_block_scale(m, block);
        rs_model_add_tensor(m, shape, RS_ROLE_EXPERT_REPLICATED, layer, RS_DTYPE_I32, 0, 2, E,
                            (gint64)2);
        rs_model_set_last_format(m, RS_TENSOR_FORMAT_SCALE, 0);
        return;
    }
    if (q != NULL && q->kind == RS_QUANT_FP8_BLOCK) {
        g_autofree char *weight = g_strdup_printf("%s.%s.weight", prefix, name);
        g_autofree char *scale = g_strdup_printf("%s.%s.weight_scale_inv", prefix, name);
        rs_model_add_tensor(m, weight, role, layer, q->fp8_dtype, 0, 3, E, out, in);
        rs_model_add_tensor(m, scale, role, layer, RS_DTYPE_F32, 0, 3, E,
                            ceil_div(out, q->block_rows), ceil_div(in, q->block_cols));
        rs_model_set_last_format(m, RS_TENSOR_FORMAT_SCALE, 0);
        const gint64 block[3] = {1, q->block_rows, q->block_cols};
        rs_model_mark_block_scale(m, block);
        return;
    }
    g_autofree char *weight = g_strdup_printf("%s.%s%s", prefix, name, weight_suffix);
    rs_model_add_tensor(m, weight, role, layer, m->dtype, 0, 3, E, out, in);
}

void
rs_family_add_gqa_attention(RsModel *m, const RsQuant *q, const char *prefix, gint layer,
                            const RsCommonConfig *cc, const RsAttentionOptions *opts)
{
    guint nh = (guint)cc->n_heads, kv = (guint)cc->n_kv_heads;
    gint64 hd = cc->head_dim, H = cc->hidden;
    gint64 q_out = cc->n_heads * hd * (opts->q_gate ? 2 : 1);
    char name[192];
#define NAME(suffix) (g_snprintf(name, sizeof name, "%s." suffix, prefix), name)
    /* A gated query (q_gate) is not a plain [q; k; v] fusion. */
    if (!opts->q_gate)
        rs_model_fuse_next(m, RS_FUSE_QKV, 0, prefix);
    rs_family_add_linear(m, q, NAME("q_proj"), RS_ROLE_COLUMN_PARALLEL, layer, nh, FALSE, q_out, H,
                         TRUE);
    if (opts->qkv_bias)
        rs_family_add_vector(m, NAME("q_proj.bias"), RS_ROLE_COLUMN_PARALLEL, layer, m->dtype, nh,
                             FALSE, q_out);
    if (!opts->q_gate)
        rs_model_fuse_next(m, RS_FUSE_QKV, 1, prefix);
    rs_family_add_linear(m, q, NAME("k_proj"), RS_ROLE_COLUMN_PARALLEL, layer, kv, TRUE,
                         cc->n_kv_heads * hd, H, TRUE);
    if (opts->qkv_bias)
        rs_family_add_vector(m, NAME("k_proj.bias"), RS_ROLE_COLUMN_PARALLEL, layer, m->dtype, kv,
                             TRUE, cc->n_kv_heads * hd);
    if (!opts->q_gate)
        rs_model_fuse_next(m, RS_FUSE_QKV, 2, prefix);
    rs_family_add_linear(m, q, NAME("v_proj"), RS_ROLE_COLUMN_PARALLEL, layer, kv, TRUE,
                         cc->n_kv_heads * hd, H, TRUE);
    if (opts->qkv_bias)
        rs_family_add_vector(m, NAME("v_proj.bias"), RS_ROLE_COLUMN_PARALLEL, layer, m->dtype, kv,
                             TRUE, cc->n_kv_heads * hd);
    rs_family_add_linear(m, q, NAME("o_proj"), RS_ROLE_ROW_PARALLEL, layer, 0, FALSE, H,
                         cc->n_heads * hd, TRUE);
    /* A row-parallel layer adds its bias once, after the reduction: every rank holds it. */
    if (opts->o_bias)
        rs_family_add_vector(m, NAME("o_proj.bias"), RS_ROLE_NORM, layer, m->dtype, 0, FALSE, H);
    if (opts->qk_norm) {
        rs_family_add_vector(m, NAME("q_norm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, FALSE, hd);
        rs_family_add_vector(m, NAME("k_norm.weight"), RS_ROLE_NORM, layer, m->dtype, 0, FALSE, hd);
    }
#undef NAME
}

/* --- llama, qwen3 --- */

/* Adds the norms and attention of a pre-norm decoder layer; the MLP is the caller's. */
static void
add_attention_block(RsModel *m, const RsQuant *q, gint l, const RsCommonConfig *cc,
                    const RsAttentionOptions *opts)
{
    char name[160];
    g_snprintf(name, sizeof name, "model.layers.%d.input_layernorm.weight", l);
    rs_family_add_vector(m, name, RS_ROLE_NORM, l, m->dtype, 0, FALSE, cc->hidden);
    g_snprintf(name, sizeof name, "model.layers.%d.self_attn", l);
    rs_family_add_gqa_attention(m, q, name, l, cc, opts);
    g_snprintf(name, sizeof name, "model.layers.%d.post_attention_layernorm.weight", l);
    rs_family_add_vector(m, name, RS_ROLE_NORM, l, m->dtype, 0, FALSE, cc->hidden);
}

/* Reads attention_bias and mlp_bias (Llama: both false; Qwen2-style checkpoints set the
 * first). */
static gboolean
read_biases(RsModelConfig *c, gboolean *attention_bias, gboolean *mlp_bias, GError **error)
{
    *attention_bias = FALSE;
    *mlp_bias = FALSE;
    return rs_model_config_get_bool(c, "attention_bias", FALSE, attention_bias, error) &&
           rs_model_config_get_bool(c, "mlp_bias", FALSE, mlp_bias, error);
}

static void
add_mlp_biases(RsModel *m, gint l, gint64 hidden, gint64 intermediate)
{
    char name[160];
    g_snprintf(name, sizeof name, "model.layers.%d.mlp.gate_proj.bias", l);
    rs_family_add_vector(m, name, RS_ROLE_COLUMN_PARALLEL, l, m->dtype, 0, FALSE, intermediate);
    g_snprintf(name, sizeof name, "model.layers.%d.mlp.up_proj.bias", l);
    rs_family_add_vector(m, name, RS_ROLE_COLUMN_PARALLEL, l, m->dtype, 0, FALSE, intermediate);
    g_snprintf(name, sizeof name, "model.layers.%d.mlp.down_proj.bias", l);
    rs_family_add_vector(m, name, RS_ROLE_NORM, l, m->dtype, 0, FALSE, hidden);
}

/* llama (and qwen3 with @qk_norm): grouped-query attention and a SwiGLU MLP. */
static gboolean
generate_dense(RsModel *m, RsModelConfig *c, const RsModelOptions *options, gboolean qk_norm,
               GError **error)
{
    RsCommonConfig cc;
    RsQuant q;
    gboolean attention_bias, mlp_bias;
    if (!rs_family_read_common(c, &cc, error) ||
        !read_biases(c, &attention_bias, &mlp_bias, error) ||
        !rs_family_read_quant(c, options, &q, error))
        return FALSE;
    if (cc.intermediate == 0) {
        rs_model_config_set_missing(c, "intermediate_size", error, NULL);
        return FALSE;
    }
    if (!rs_family_check_gqa(c, &cc, error))
        return FALSE;
    rs_family_warn_head_dim(c, &cc);
    m->n_layers = (guint)cc.n_layers;
    rs_family_add_embedding(m, "", &cc);
    /* attention_bias puts a bias on q, k, v and o (LlamaAttention, Qwen3Attention). */
    RsAttentionOptions opts = {
        .qkv_bias = attention_bias, .o_bias = attention_bias, .qk_norm = qk_norm};
    for (gint l = 0; l < (gint)cc.n_layers; l++) {
        add_attention_block(m, &q, l, &cc, &opts);
        g_autofree char *prefix = g_strdup_printf("model.layers.%d.mlp", l);
        rs_family_add_dense_mlp(m, &q, prefix, l, cc.hidden, cc.intermediate, TRUE);
        if (mlp_bias)
            add_mlp_biases(m, l, cc.hidden, cc.intermediate);
    }
    rs_family_add_final(m, "", &cc);
    return TRUE;
}

/* llama: modeling_llama.py. */
static gboolean
generate_llama(RsModel *m, RsModelConfig *c, const RsModelOptions *options, GError **error)
{
    return generate_dense(m, c, options, FALSE, error);
}

/* qwen3: llama plus self_attn.q_norm and k_norm [head_dim] (modeling_qwen3.py). */
static gboolean
generate_qwen3(RsModel *m, RsModelConfig *c, const RsModelOptions *options, GError **error)
{
    return generate_dense(m, c, options, TRUE, error);
}

/* Is layer @l a MoE layer under decoder_sparse_step and mlp_only_layers
 * (Qwen3MoeDecoderLayer: not in mlp_only_layers, experts > 0, (l + 1) % step == 0)? */
static gboolean
is_sparse_layer(gint l, gint64 step, GArray *mlp_only)
{
    if (mlp_only != NULL)
        for (guint i = 0; i < mlp_only->len; i++)
            if (g_array_index(mlp_only, gint64, i) == l)
                return FALSE;
    return (l + 1) % step == 0;
}

/* qwen3_moe: qwen3 attention, routed experts without a shared expert. */
static gboolean
generate_qwen3_moe(RsModel *m, RsModelConfig *c, const RsModelOptions *options, GError **error)
{
    RsCommonConfig cc;
    RsQuant q;
    gboolean attention_bias, mlp_bias;
    gint64 n_experts = 0, n_per_token = 0, moe_intermediate = 0, step = 1;
    g_autoptr(GArray) mlp_only = NULL;
    if (!rs_family_read_common(c, &cc, error) ||
        !read_biases(c, &attention_bias, &mlp_bias, error) ||
        !rs_family_read_quant(c, options, &q, error) ||
        !rs_model_config_get_int(c, "num_experts", TRUE, 1, RS_FAMILY_MAX_COUNT, &n_experts,
                                 error) ||
        !rs_model_config_get_int(c, "num_experts_per_tok", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &n_per_token, error) ||
        !rs_model_config_get_width(c, "moe_intermediate_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &moe_intermediate, error) ||
        !rs_model_config_get_int(c, "decoder_sparse_step", FALSE, 1, 100000, &step, error) ||
        !rs_model_config_get_int_list(c, "mlp_only_layers", FALSE, 0, 100000, &mlp_only, error))
        return FALSE;
    if (!rs_family_check_gqa(c, &cc, error))
        return FALSE;
    if (!rs_family_check_active_experts(c, "num_experts_per_tok", n_per_token, n_experts, FALSE,
                                        error))
        return FALSE;
    rs_family_warn_head_dim(c, &cc);
    m->n_layers = (guint)cc.n_layers;
    m->n_experts_per_token = (guint)n_per_token;
    rs_family_add_embedding(m, "", &cc);
    RsAttentionOptions opts = {
        .qkv_bias = attention_bias, .o_bias = attention_bias, .qk_norm = TRUE};
    for (gint l = 0; l < (gint)cc.n_layers; l++) {
        add_attention_block(m, &q, l, &cc, &opts);
        g_autofree char *prefix = g_strdup_printf("model.layers.%d.mlp", l);
        if (!is_sparse_layer(l, step, mlp_only)) {
            if (cc.intermediate == 0) {
                rs_model_config_set_error(c, "intermediate_size", error,
                                          "required for the dense layer %d", l);
                return FALSE;
            }
            rs_family_add_dense_mlp(m, &q, prefix, l, cc.hidden, cc.intermediate, TRUE);
            continue;
        }
        g_autofree char *router = g_strdup_printf("%s.gate", prefix);
        rs_family_add_linear(m, NULL, router, RS_ROLE_ROUTER, l, 0, FALSE, n_experts, cc.hidden,
                             FALSE);
        g_autofree char *experts = g_strdup_printf("%s.experts", prefix);
        rs_model_fuse_next(m, RS_FUSE_GATE_UP, 0, experts);
        rs_family_add_expert_weight(m, &q, experts, "gate_proj", ".weight", RS_ROLE_EXPERT_COLUMN,
                                    l, n_experts, moe_intermediate, cc.hidden);
        rs_model_fuse_next(m, RS_FUSE_GATE_UP, 1, experts);
        rs_family_add_expert_weight(m, &q, experts, "up_proj", ".weight", RS_ROLE_EXPERT_COLUMN, l,
                                    n_experts, moe_intermediate, cc.hidden);
        rs_family_add_expert_weight(m, &q, experts, "down_proj", ".weight", RS_ROLE_EXPERT_ROW, l,
                                    n_experts, cc.hidden, moe_intermediate);
    }
    rs_family_add_final(m, "", &cc);
    return TRUE;
}

/* mixtral: llama attention, block_sparse_moe with a router and experts w1 (gate), w3 (up),
 * w2 (down) of width intermediate_size. */
static gboolean
generate_mixtral(RsModel *m, RsModelConfig *c, const RsModelOptions *options, GError **error)
{
    RsCommonConfig cc;
    RsQuant q;
    gint64 n_experts = 0, n_per_token = 0;
    if (!rs_family_read_common(c, &cc, error) || !rs_family_read_quant(c, options, &q, error) ||
        !rs_model_config_get_int(c, "num_local_experts", TRUE, 1, RS_FAMILY_MAX_COUNT, &n_experts,
                                 error) ||
        !rs_model_config_get_int(c, "num_experts_per_tok", TRUE, 1, RS_FAMILY_MAX_COUNT,
                                 &n_per_token, error))
        return FALSE;
    if (cc.intermediate == 0) {
        rs_model_config_set_missing(c, "intermediate_size", error, NULL);
        return FALSE;
    }
    if (!rs_family_check_gqa(c, &cc, error))
        return FALSE;
    if (!rs_family_check_active_experts(c, "num_experts_per_tok", n_per_token, n_experts, FALSE,
                                        error))
        return FALSE;
    rs_family_warn_head_dim(c, &cc);
    m->n_layers = (guint)cc.n_layers;
    m->n_experts_per_token = (guint)n_per_token;
    rs_family_add_embedding(m, "", &cc);
    RsAttentionOptions opts = {0};
    for (gint l = 0; l < (gint)cc.n_layers; l++) {
        add_attention_block(m, &q, l, &cc, &opts);
        g_autofree char *router = g_strdup_printf("model.layers.%d.block_sparse_moe.gate", l);
        rs_family_add_linear(m, NULL, router, RS_ROLE_ROUTER, l, 0, FALSE, n_experts, cc.hidden,
                             FALSE);
        g_autofree char *experts = g_strdup_printf("model.layers.%d.block_sparse_moe.experts", l);
        rs_model_fuse_next(m, RS_FUSE_GATE_UP, 0, experts);
        rs_family_add_expert_weight(m, &q, experts, "w1", ".weight", RS_ROLE_EXPERT_COLUMN, l,
                                    n_experts, cc.intermediate, cc.hidden);
        rs_model_fuse_next(m, RS_FUSE_GATE_UP, 1, experts);
        rs_family_add_expert_weight(m, &q, experts, "w3", ".weight", RS_ROLE_EXPERT_COLUMN, l,
                                    n_experts, cc.intermediate, cc.hidden);
        rs_family_add_expert_weight(m, &q, experts, "w2", ".weight", RS_ROLE_EXPERT_ROW, l,
                                    n_experts, cc.hidden, cc.intermediate);
    }
    rs_family_add_final(m, "", &cc);
    return TRUE;
}

static const struct {
    const char *family;
    RsFamilyGenerator generate;
} families[] = {
    {"llama", generate_llama},
    {"deepseek_v3", rs_family_generate_deepseek_v3},
    {"qwen3", generate_qwen3},
    {"qwen3_moe", generate_qwen3_moe},
    {"mixtral", generate_mixtral},
    {"gpt_oss", rs_family_generate_gpt_oss},
    {"glm4_moe", rs_family_generate_glm4_moe},
    {"kimi_k3", rs_family_generate_kimi_k3},
    {"qwen3_next", rs_family_generate_qwen3_next},
    {"deepseek_v32", rs_family_generate_deepseek_v32},
    {"kimi_k25", rs_family_generate_kimi_k25},
    {"llama4", rs_family_generate_llama4},
    {"qwen3_5_moe", rs_family_generate_qwen3_5_moe},
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

/* model-family-vision.c — the vision towers and projectors of the vision-language families:
 * the Llama-4 vision model (llama4), the Qwen3-VL vision transformer of Qwen3.5
 * (qwen3_5_moe) and MoonViT with its patch-merger projector (kimi_k25).
 *
 * RL post-training trains them with the language model, so their weights move in the
 * refit. They come before the embedding (layer -1: the first pipeline stage, where
 * Megatron and vLLM place the encoder), are left out of a layer range, and are generated
 * in the model dtype (the published checkpoints store them BF16, quantized or not
 * elsewhere). Their role is RS_ROLE_REPLICATED (the checkpoint import's rule for them
 * too): every tensor-parallel rank of every convention holds the whole tower. That
 * is vLLM's data-parallel encoder mode and a superset of what a tensor-parallel encoder
 * rank keeps, so a refit never moves wrong data; the split of a tensor-parallel encoder is
 * not modelled.
 *
 * Sources, per tower (the names and shapes are those of the checkpoints' safetensors
 * headers as research/zoo/NOTES.md lists them, and reproduce the published totals):
 *   - llama4: transformers models/llama4/modeling_llama4.py (Llama4VisionModel:
 *     class_embedding [H], positional_embedding_vlm [(image/patch)^2 + 1, H],
 *     Llama4UnfoldConvolution linear [H, C·patch²] without bias, layernorm_pre/post,
 *     Llama4VisionEncoderLayer with q/k/v/o_proj biased, mlp.fc1/fc2 biased, LayerNorms;
 *     Llama4VisionPixelShuffleMLP vision_adapter.mlp.fc1 [projector_input_dim,
 *     intermediate_size], fc2 [projector_output_dim, projector_output_dim], no biases;
 *     Llama4MultiModalProjector linear_1 [text hidden, vision_output_dim]).
 *   - Qwen3-VL (Qwen3.5): transformers models/qwen3_vl/modeling_qwen3_vl.py
 *     (Qwen3VLVisionPatchEmbed Conv3d [H, C, temporal_patch, patch, patch] with bias,
 *     pos_embed [num_position_embeddings, H], blocks with norm1/norm2 LayerNorms,
 *     attn.qkv [3H, H] and attn.proj, mlp.linear_fc1/linear_fc2, all biased;
 *     Qwen3VLVisionPatchMerger norm [H], linear_fc1 [H·m², H·m²], linear_fc2
 *     [out_hidden_size, H·m²]); deepstack mergers are not modelled (Qwen3.5 has none).
 *   - MoonViT (Kimi-K2.5): the checkpoint's tensor list (NOTES.md §3; the repository's
 *     remote code modeling_kimi_k25.py): patch_embed.proj [H, 3, patch, patch] + bias,
 *     pos_emb [init_pos_emb_height, init_pos_emb_width, H], encoder.blocks.* norm0/norm1,
 *     wqkv, wo, mlp.fc0/fc1 all biased, encoder.final_layernorm; mm_projector pre_norm
 *     [H], proj.0 [H·m, H·m], proj.2 [text hidden, H·m] with m the merge kernel's area.
 */
#include "models/model-families-private.h"

#include <string.h>

/* Adds the weight [out, in] and, when @bias, the bias [out] of a replicated linear. */
static void
add_vision_linear(RsModel *m, const char *base, gint64 out, gint64 in, gboolean bias)
{
    rs_family_add_linear(m, NULL, base, RS_ROLE_REPLICATED, -1, 0, FALSE, out, in, FALSE);
    if (bias) {
        g_autofree char *name = g_strconcat(base, ".bias", NULL);
        rs_family_add_vector(m, name, RS_ROLE_REPLICATED, -1, m->dtype, 0, FALSE, out);
    }
}

/* A LayerNorm: weight and bias [@dim]. */
static void
add_layer_norm(RsModel *m, const char *base, gint64 dim)
{
    g_autofree char *w = g_strconcat(base, ".weight", NULL);
    g_autofree char *b = g_strconcat(base, ".bias", NULL);
    rs_family_add_vector(m, w, RS_ROLE_REPLICATED, -1, m->dtype, 0, FALSE, dim);
    rs_family_add_vector(m, b, RS_ROLE_REPLICATED, -1, m->dtype, 0, FALSE, dim);
}

/* Marks the vision_config keys that do not change the tensors as read. */
static void
consume_vision_informational(RsModelConfig *c, const char *const *keys, guint n)
{
    for (guint i = 0; i < n; i++) {
        g_autofree char *key = g_strconcat("vision_config.", keys[i], NULL);
        rs_model_config_consume_prefix(c, key);
    }
}

gboolean
rs_family_add_vision_llama4(RsModel *m, RsModelConfig *c, gint64 text_hidden, GError **error)
{
    gint64 H = 0, n_layers = 0, I = 0, patch = 0, image = 0, channels = 0, proj_in = 0,
           proj_out = 0, out_dim = 0, heads = 0;
    gboolean proj_bias = FALSE;
    if (!rs_model_config_get_width(c, "vision_config.hidden_size", TRUE, RS_FAMILY_MAX_DIM, &H,
                                   error) ||
        !rs_model_config_get_int(c, "vision_config.num_hidden_layers", TRUE, 1, 10000, &n_layers,
                                 error) ||
        !rs_model_config_get_int(c, "vision_config.num_attention_heads", TRUE, 1,
                                 RS_FAMILY_MAX_COUNT, &heads, error) ||
        !rs_model_config_get_width(c, "vision_config.intermediate_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &I, error) ||
        !rs_model_config_get_int(c, "vision_config.patch_size", TRUE, 1, 1 << 16, &patch, error) ||
        !rs_model_config_get_int(c, "vision_config.image_size", TRUE, 1, 1 << 20, &image, error) ||
        !rs_model_config_get_int(c, "vision_config.num_channels", TRUE, 1, 1 << 10, &channels,
                                 error) ||
        !rs_model_config_get_width(c, "vision_config.projector_input_dim", TRUE, RS_FAMILY_MAX_DIM,
                                   &proj_in, error) ||
        !rs_model_config_get_width(c, "vision_config.projector_output_dim", TRUE, RS_FAMILY_MAX_DIM,
                                   &proj_out, error) ||
        !rs_model_config_get_width(c, "vision_config.vision_output_dim", TRUE, RS_FAMILY_MAX_DIM,
                                   &out_dim, error) ||
        !rs_model_config_get_bool(c, "vision_config.multi_modal_projector_bias", TRUE, &proj_bias,
                                  error))
        return FALSE;
    if (image % patch != 0) {
        rs_model_config_set_error(
            c, "vision_config.image_size", error,
            "%" G_GINT64_FORMAT " is not a multiple of patch_size %" G_GINT64_FORMAT, image, patch);
        return FALSE;
    }
    /* pixel_shuffle_ratio sets how many patches merge, not a shape: fc1 reads
     * intermediate_size inputs (Llama4VisionMLP2). */
    static const char *const informational[] = {
        "pixel_shuffle_ratio",  "attention_dropout",
        "hidden_act",           "initializer_range",
        "model_type",           "norm_eps",
        "projector_dropout",    "rope_theta",
        "vision_feature_layer", "vision_feature_select_strategy"};
    consume_vision_informational(c, informational, G_N_ELEMENTS(informational));

    gint64 n_positions = (image / patch) * (image / patch) + 1;
    rs_family_add_vector(m, "vision_model.class_embedding", RS_ROLE_REPLICATED, -1, m->dtype, 0,
                         FALSE, H);
    rs_model_add_tensor(m, "vision_model.positional_embedding_vlm", RS_ROLE_REPLICATED, -1,
                        m->dtype, 0, 2, n_positions, H);
    add_vision_linear(m, "vision_model.patch_embedding.linear", H, channels * patch * patch, FALSE);
    add_layer_norm(m, "vision_model.layernorm_pre", H);
    add_layer_norm(m, "vision_model.layernorm_post", H);
    static const char *const projections[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
    for (gint j = 0; j < (gint)n_layers; j++) {
        char name[160];
        for (guint p = 0; p < G_N_ELEMENTS(projections); p++) {
            g_snprintf(name, sizeof name, "vision_model.model.layers.%d.self_attn.%s", j,
                       projections[p]);
            add_vision_linear(m, name, H, H, TRUE);
        }
        g_snprintf(name, sizeof name, "vision_model.model.layers.%d.mlp.fc1", j);
        add_vision_linear(m, name, I, H, TRUE);
        g_snprintf(name, sizeof name, "vision_model.model.layers.%d.mlp.fc2", j);
        add_vision_linear(m, name, H, I, TRUE);
        g_snprintf(name, sizeof name, "vision_model.model.layers.%d.input_layernorm", j);
        add_layer_norm(m, name, H);
        g_snprintf(name, sizeof name, "vision_model.model.layers.%d.post_attention_layernorm", j);
        add_layer_norm(m, name, H);
    }
    add_vision_linear(m, "vision_model.vision_adapter.mlp.fc1", proj_in, I, FALSE);
    add_vision_linear(m, "vision_model.vision_adapter.mlp.fc2", proj_out, proj_out, FALSE);
    add_vision_linear(m, "multi_modal_projector.linear_1", text_hidden, out_dim, proj_bias);
    return TRUE;
}

gboolean
rs_family_add_vision_qwen3_vl(RsModel *m, RsModelConfig *c, GError **error)
{
    gint64 H = 0, depth = 0, I = 0, channels = 0, heads = 0, n_positions = 0, out = 0, patch = 0,
           merge = 0, temporal = 0;
    g_autoptr(GArray) deepstack = NULL;
    if (!rs_model_config_get_width(c, "vision_config.hidden_size", TRUE, RS_FAMILY_MAX_DIM, &H,
                                   error) ||
        !rs_model_config_get_int(c, "vision_config.depth", TRUE, 1, 10000, &depth, error) ||
        !rs_model_config_get_width(c, "vision_config.intermediate_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &I, error) ||
        !rs_model_config_get_int(c, "vision_config.in_channels", TRUE, 1, 1 << 10, &channels,
                                 error) ||
        !rs_model_config_get_int(c, "vision_config.num_heads", TRUE, 1, RS_FAMILY_MAX_COUNT, &heads,
                                 error) ||
        !rs_model_config_get_int(c, "vision_config.num_position_embeddings", TRUE, 1, 1 << 24,
                                 &n_positions, error) ||
        !rs_model_config_get_width(c, "vision_config.out_hidden_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &out, error) ||
        !rs_model_config_get_int(c, "vision_config.patch_size", TRUE, 1, 1 << 16, &patch, error) ||
        !rs_model_config_get_int(c, "vision_config.spatial_merge_size", TRUE, 1, 1 << 8, &merge,
                                 error) ||
        !rs_model_config_get_int(c, "vision_config.temporal_patch_size", TRUE, 1, 1 << 8, &temporal,
                                 error) ||
        !rs_model_config_get_int_list(c, "vision_config.deepstack_visual_indexes", FALSE, 0, 10000,
                                      &deepstack, error))
        return FALSE;
    if (deepstack != NULL && deepstack->len > 0) {
        rs_model_config_set_error(c, "vision_config.deepstack_visual_indexes", error,
                                  "%u deepstack mergers: not modelled (Qwen3.5 has none)",
                                  deepstack->len);
        return FALSE;
    }
    static const char *const informational[] = {"hidden_act", "model_type", "initializer_range"};
    consume_vision_informational(c, informational, G_N_ELEMENTS(informational));

    gint64 merged = H * merge * merge;
    rs_model_add_tensor(m, "model.visual.patch_embed.proj.weight", RS_ROLE_REPLICATED, -1, m->dtype,
                        0, 5, H, channels, temporal, patch, patch);
    rs_family_add_vector(m, "model.visual.patch_embed.proj.bias", RS_ROLE_REPLICATED, -1, m->dtype,
                         0, FALSE, H);
    rs_model_add_tensor(m, "model.visual.pos_embed.weight", RS_ROLE_REPLICATED, -1, m->dtype, 0, 2,
                        n_positions, H);
    for (gint j = 0; j < (gint)depth; j++) {
        char name[160];
        g_snprintf(name, sizeof name, "model.visual.blocks.%d.norm1", j);
        add_layer_norm(m, name, H);
        g_snprintf(name, sizeof name, "model.visual.blocks.%d.norm2", j);
        add_layer_norm(m, name, H);
        g_snprintf(name, sizeof name, "model.visual.blocks.%d.attn.qkv", j);
        add_vision_linear(m, name, 3 * H, H, TRUE);
        g_snprintf(name, sizeof name, "model.visual.blocks.%d.attn.proj", j);
        add_vision_linear(m, name, H, H, TRUE);
        g_snprintf(name, sizeof name, "model.visual.blocks.%d.mlp.linear_fc1", j);
        add_vision_linear(m, name, I, H, TRUE);
        g_snprintf(name, sizeof name, "model.visual.blocks.%d.mlp.linear_fc2", j);
        add_vision_linear(m, name, H, I, TRUE);
    }
    add_layer_norm(m, "model.visual.merger.norm", H);
    add_vision_linear(m, "model.visual.merger.linear_fc1", merged, merged, TRUE);
    add_vision_linear(m, "model.visual.merger.linear_fc2", out, merged, TRUE);
    return TRUE;
}

gboolean
rs_family_add_vision_moonvit(RsModel *m, RsModelConfig *c, gint64 text_hidden, GError **error)
{
    gint64 H = 0, I = 0, n_layers = 0, heads = 0, patch = 0, pos_h = 0, pos_w = 0, mm_hidden = 0,
           text = 0;
    const char *projector = NULL;
    g_autoptr(GArray) merge = NULL;
    if (!rs_model_config_get_width(c, "vision_config.vt_hidden_size", TRUE, RS_FAMILY_MAX_DIM, &H,
                                   error) ||
        !rs_model_config_get_width(c, "vision_config.vt_intermediate_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &I, error) ||
        !rs_model_config_get_int(c, "vision_config.vt_num_hidden_layers", TRUE, 1, 10000, &n_layers,
                                 error) ||
        !rs_model_config_get_int(c, "vision_config.vt_num_attention_heads", TRUE, 1,
                                 RS_FAMILY_MAX_COUNT, &heads, error) ||
        !rs_model_config_get_int(c, "vision_config.patch_size", TRUE, 1, 1 << 16, &patch, error) ||
        !rs_model_config_get_int(c, "vision_config.init_pos_emb_height", TRUE, 1, 1 << 16, &pos_h,
                                 error) ||
        !rs_model_config_get_int(c, "vision_config.init_pos_emb_width", TRUE, 1, 1 << 16, &pos_w,
                                 error) ||
        !rs_model_config_get_int_list(c, "vision_config.merge_kernel_size", TRUE, 1, 64, &merge,
                                      error) ||
        !rs_model_config_get_width(c, "vision_config.mm_hidden_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &mm_hidden, error) ||
        !rs_model_config_get_width(c, "vision_config.text_hidden_size", TRUE, RS_FAMILY_MAX_DIM,
                                   &text, error) ||
        !rs_model_config_get_string(c, "vision_config.mm_projector_type", TRUE, &projector, error))
        return FALSE;
    if (merge->len != 2) {
        rs_model_config_set_error(c, "vision_config.merge_kernel_size", error,
                                  "expected [height, width]");
        return FALSE;
    }
    if (strcmp(projector, "patchmerger") != 0) {
        rs_model_config_set_error(c, "vision_config.mm_projector_type", error,
                                  "\"%s\": only the patchmerger projector is modelled", projector);
        return FALSE;
    }
    if (mm_hidden != H || text != text_hidden) {
        rs_model_config_set_error(
            c, mm_hidden != H ? "vision_config.mm_hidden_size" : "vision_config.text_hidden_size",
            error, "%" G_GINT64_FORMAT " differs from %s (%" G_GINT64_FORMAT ")",
            mm_hidden != H ? mm_hidden : text,
            mm_hidden != H ? "vt_hidden_size" : "the text hidden_size",
            mm_hidden != H ? H : text_hidden);
        return FALSE;
    }
    /* The temporal position embedding is a fixed sinusoid (pos_emb_type divided_fixed): no
     * tensor. */
    static const char *const informational[] = {
        "init_pos_emb_time", "merge_type",      "pos_emb_type", "projector_hidden_act",
        "projector_ln_eps",  "video_attn_type", "model_type"};
    consume_vision_informational(c, informational, G_N_ELEMENTS(informational));

    gint64 merged = H * g_array_index(merge, gint64, 0) * g_array_index(merge, gint64, 1);
    /* MoonViT's patch embedding reads RGB: 3 input channels. */
    rs_model_add_tensor(m, "vision_tower.patch_embed.proj.weight", RS_ROLE_REPLICATED, -1, m->dtype,
                        0, 4, H, (gint64)3, patch, patch);
    rs_family_add_vector(m, "vision_tower.patch_embed.proj.bias", RS_ROLE_REPLICATED, -1, m->dtype,
                         0, FALSE, H);
    rs_model_add_tensor(m, "vision_tower.patch_embed.pos_emb.weight", RS_ROLE_REPLICATED, -1,
                        m->dtype, 0, 3, pos_h, pos_w, H);
    for (gint j = 0; j < (gint)n_layers; j++) {
        char name[160];
        g_snprintf(name, sizeof name, "vision_tower.encoder.blocks.%d.norm0", j);
        add_layer_norm(m, name, H);
        g_snprintf(name, sizeof name, "vision_tower.encoder.blocks.%d.norm1", j);
        add_layer_norm(m, name, H);
        g_snprintf(name, sizeof name, "vision_tower.encoder.blocks.%d.wqkv", j);
        add_vision_linear(m, name, 3 * H, H, TRUE);
        g_snprintf(name, sizeof name, "vision_tower.encoder.blocks.%d.wo", j);
        add_vision_linear(m, name, H, H, TRUE);
        g_snprintf(name, sizeof name, "vision_tower.encoder.blocks.%d.mlp.fc0", j);
        add_vision_linear(m, name, I, H, TRUE);
        g_snprintf(name, sizeof name, "vision_tower.encoder.blocks.%d.mlp.fc1", j);
        add_vision_linear(m, name, H, I, TRUE);
    }
    add_layer_norm(m, "vision_tower.encoder.final_layernorm", H);
    add_layer_norm(m, "mm_projector.pre_norm", H);
    add_vision_linear(m, "mm_projector.proj.0", merged, merged, TRUE);
    add_vision_linear(m, "mm_projector.proj.2", text_hidden, merged, TRUE);
    return TRUE;
}

/* test-model.c — generated models reproduce the published parameter totals exactly, and
 * one layer of each family has the tensors of its checkpoint. */
#include "sim/data.h"
#include "sim/model.h"
#include "sim/yaml-reader.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static RsModel *
load(const char *name, gboolean mtp)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_data_find("models", name, &error);
    g_assert_no_error(error);
    RsModelOptions options = {.include_mtp = mtp};
    RsModel *model = rs_model_load_file(path, &options, &error);
    g_assert_no_error(error);
    return model;
}

static void
test_deepseek_v3_total(void)
{
    g_autoptr(RsModel) m = load("deepseek-v3", FALSE);
    g_assert_cmpuint(rs_model_get_n_params(m), ==, G_GUINT64_CONSTANT(671026419200));
    /* 2 bytes per parameter, except the 58 f32 expert score biases of 256 entries. */
    g_assert_cmpuint(rs_model_get_size_bytes(m), ==,
                     G_GUINT64_CONSTANT(671026419200) * 2 + 58 * 256 * 2);
    g_assert_cmpuint(rs_model_get_n_layers(m), ==, 61);
    /* Active: all but 248 of 256 routed experts per MoE layer (58 layers of 3 × 2048 × 7168
     * per expert) are idle. */
    guint64 per_expert = 3ull * 2048 * 7168;
    g_assert_cmpuint(rs_model_get_n_active_params(m), ==,
                     G_GUINT64_CONSTANT(671026419200) - 58ull * 248 * per_expert);
}

static void
test_deepseek_v3_mtp(void)
{
    /* The MTP layer: a MoE layer (11,507,286,272) + its embedding and head (2 × 926,679,040)
     * + enorm, hnorm, shared_head.norm (3 × 7168) + eh_proj [7168, 14336]. */
    g_autoptr(RsModel) m = load("deepseek-v3", TRUE);
    guint64 mtp = 11507286272ull + 2 * 926679040ull + 3 * 7168 + 7168ull * 14336;
    g_assert_cmpuint(mtp, ==, 13463426304ull);
    g_assert_cmpuint(rs_model_get_n_params(m), ==, 671026419200ull + mtp);
    g_assert_cmpint(rs_model_find_tensor(m, "model.layers.61.eh_proj.weight"), >=, 0);
    g_assert_cmpint(rs_model_find_tensor(m, "model.layers.61.mlp.experts.down_proj.weight"), >=,
                    0);
}

typedef struct {
    const char *name;
    guint n_dims;
    gint64 shape[4];
    RsTensorRole role;
    RsDtype dtype;
} ExpectedTensor;

static void
assert_tensors(const RsModel *m, const char *prefix, const ExpectedTensor *expected, guint n,
               gint layer)
{
    guint found = 0;
    for (guint i = 0; i < rs_model_get_n_tensors(m); i++) {
        const RsTensorSpec *t = rs_model_get_tensor(m, i);
        if (t->layer == layer && g_str_has_prefix(t->name, prefix))
            found++;
    }
    g_assert_cmpuint(found, ==, n);
    for (guint i = 0; i < n; i++) {
        g_autofree char *name = g_strconcat(prefix, expected[i].name, NULL);
        gint idx = rs_model_find_tensor(m, name);
        if (idx < 0)
            g_error("missing tensor %s", name);
        const RsTensorSpec *t = rs_model_get_tensor(m, (guint)idx);
        g_assert_cmpuint(t->n_dims, ==, expected[i].n_dims);
        for (guint d = 0; d < t->n_dims; d++)
            g_assert_cmpint(t->shape[d], ==, expected[i].shape[d]);
        g_assert_cmpint(t->role, ==, expected[i].role);
        g_assert_cmpint(t->dtype, ==, expected[i].dtype);
        g_assert_cmpint(t->layer, ==, layer);
    }
}

/* Layer 3 of DeepSeek-V3: the first MoE layer (MODELS.md). */
static void
test_deepseek_v3_layer(void)
{
    g_autoptr(RsModel) m = load("deepseek-v3", FALSE);
    const ExpectedTensor layer3[] = {
        {"input_layernorm.weight", 1, {7168}, RS_ROLE_NORM, RS_DTYPE_BF16},
        {"self_attn.q_a_proj.weight", 2, {1536, 7168}, RS_ROLE_REPLICATED, RS_DTYPE_BF16},
        {"self_attn.q_a_layernorm.weight", 1, {1536}, RS_ROLE_NORM, RS_DTYPE_BF16},
        {"self_attn.q_b_proj.weight", 2, {24576, 1536}, RS_ROLE_COLUMN_PARALLEL, RS_DTYPE_BF16},
        {"self_attn.kv_a_proj_with_mqa.weight", 2, {576, 7168}, RS_ROLE_REPLICATED,
         RS_DTYPE_BF16},
        {"self_attn.kv_a_layernorm.weight", 1, {512}, RS_ROLE_NORM, RS_DTYPE_BF16},
        {"self_attn.kv_b_proj.weight", 2, {32768, 512}, RS_ROLE_COLUMN_PARALLEL, RS_DTYPE_BF16},
        {"self_attn.o_proj.weight", 2, {7168, 16384}, RS_ROLE_ROW_PARALLEL, RS_DTYPE_BF16},
        {"post_attention_layernorm.weight", 1, {7168}, RS_ROLE_NORM, RS_DTYPE_BF16},
        {"mlp.gate.weight", 2, {256, 7168}, RS_ROLE_ROUTER, RS_DTYPE_BF16},
        {"mlp.gate.e_score_correction_bias", 1, {256}, RS_ROLE_ROUTER, RS_DTYPE_F32},
        {"mlp.experts.gate_proj.weight", 3, {256, 2048, 7168}, RS_ROLE_EXPERT_COLUMN,
         RS_DTYPE_BF16},
        {"mlp.experts.up_proj.weight", 3, {256, 2048, 7168}, RS_ROLE_EXPERT_COLUMN,
         RS_DTYPE_BF16},
        {"mlp.experts.down_proj.weight", 3, {256, 7168, 2048}, RS_ROLE_EXPERT_ROW,
         RS_DTYPE_BF16},
        {"mlp.shared_experts.gate_proj.weight", 2, {2048, 7168}, RS_ROLE_COLUMN_PARALLEL,
         RS_DTYPE_BF16},
        {"mlp.shared_experts.up_proj.weight", 2, {2048, 7168}, RS_ROLE_COLUMN_PARALLEL,
         RS_DTYPE_BF16},
        {"mlp.shared_experts.down_proj.weight", 2, {7168, 2048}, RS_ROLE_ROW_PARALLEL,
         RS_DTYPE_BF16},
    };
    assert_tensors(m, "model.layers.3.", layer3, G_N_ELEMENTS(layer3), 3);
    const ExpectedTensor layer0_mlp[] = {
        {"gate_proj.weight", 2, {18432, 7168}, RS_ROLE_COLUMN_PARALLEL, RS_DTYPE_BF16},
        {"up_proj.weight", 2, {18432, 7168}, RS_ROLE_COLUMN_PARALLEL, RS_DTYPE_BF16},
        {"down_proj.weight", 2, {7168, 18432}, RS_ROLE_ROW_PARALLEL, RS_DTYPE_BF16},
    };
    assert_tensors(m, "model.layers.0.mlp.", layer0_mlp, G_N_ELEMENTS(layer0_mlp), 0);
}

static void
test_llama_8b(void)
{
    g_autoptr(RsModel) m = load("llama-3.1-8b", FALSE);
    g_assert_cmpuint(rs_model_get_n_params(m), ==, G_GUINT64_CONSTANT(8030261248));
    g_assert_cmpuint(rs_model_get_n_active_params(m), ==, G_GUINT64_CONSTANT(8030261248));
    g_assert_cmpuint(rs_model_get_n_tensors(m), ==, 2 + 32 * 9 + 1);
    const ExpectedTensor layer0[] = {
        {"input_layernorm.weight", 1, {4096}, RS_ROLE_NORM, RS_DTYPE_BF16},
        {"self_attn.q_proj.weight", 2, {4096, 4096}, RS_ROLE_COLUMN_PARALLEL, RS_DTYPE_BF16},
        {"self_attn.k_proj.weight", 2, {1024, 4096}, RS_ROLE_COLUMN_PARALLEL, RS_DTYPE_BF16},
        {"self_attn.v_proj.weight", 2, {1024, 4096}, RS_ROLE_COLUMN_PARALLEL, RS_DTYPE_BF16},
        {"self_attn.o_proj.weight", 2, {4096, 4096}, RS_ROLE_ROW_PARALLEL, RS_DTYPE_BF16},
        {"post_attention_layernorm.weight", 1, {4096}, RS_ROLE_NORM, RS_DTYPE_BF16},
        {"mlp.gate_proj.weight", 2, {14336, 4096}, RS_ROLE_COLUMN_PARALLEL, RS_DTYPE_BF16},
        {"mlp.up_proj.weight", 2, {14336, 4096}, RS_ROLE_COLUMN_PARALLEL, RS_DTYPE_BF16},
        {"mlp.down_proj.weight", 2, {4096, 14336}, RS_ROLE_ROW_PARALLEL, RS_DTYPE_BF16},
    };
    assert_tensors(m, "model.layers.0.", layer0, G_N_ELEMENTS(layer0), 0);
    const RsTensorSpec *k = rs_model_get_tensor(
        m, (guint)rs_model_find_tensor(m, "model.layers.0.self_attn.k_proj.weight"));
    g_assert_cmpuint(k->n_heads, ==, 8);
    g_assert_true(k->kv_heads);
    const RsTensorSpec *head =
        rs_model_get_tensor(m, (guint)rs_model_find_tensor(m, "lm_head.weight"));
    g_assert_cmpint(head->layer, ==, 32);
    g_assert_cmpint(head->role, ==, RS_ROLE_VOCAB_PARALLEL);
}

/* Writes @text to a temporary model file and loads it, expecting an error. */
static void
expect_model_error(const char *text, GQuark domain, gint code, const char *fragment)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = NULL;
    gint fd = g_file_open_tmp("rs-model-XXXXXX.yaml", &path, &error);
    g_assert_no_error(error);
    close(fd);
    g_assert_true(g_file_set_contents(path, text, -1, &error));
    g_autoptr(RsModel) m = rs_model_load_file(path, NULL, &error);
    g_assert_null(m);
    g_assert_error(error, domain, code);
    if (strstr(error->message, fragment) == NULL)
        g_error("message \"%s\" lacks \"%s\"", error->message, fragment);
    g_assert_nonnull(strstr(error->message, path));
    g_unlink(path);
}

static void
test_model_errors(void)
{
    expect_model_error("name: x\nfamily: llama\nhidden_size: [1, 2\n", RS_YAML_ERROR,
                       RS_YAML_ERROR_SYNTAX, ":4:1:");
    expect_model_error("name: x\nfamily: gpt2\n", RS_MODEL_ERROR, RS_MODEL_ERROR_UNKNOWN_FAMILY,
                       "supported: llama, deepseek_v3");
    expect_model_error("name: x\nfamily: llama\nhidden_size: 4096\nnum_hidden_layers: 2\n"
                       "num_attention_heads: 32\nvocab_size: 100\nintermediate_size: 10\n"
                       "hiden_size: 3\n",
                       RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG, "hiden_size: unknown field");
    expect_model_error("name: x\nfamily: llama\nhidden_size: 4096.5\n", RS_MODEL_ERROR,
                       RS_MODEL_ERROR_CONFIG, ":3:14: hidden_size");
    expect_model_error("name: x\nfamily: llama\nhidden_size: 4096\nnum_hidden_layers: 2\n"
                       "num_attention_heads: 32\nnum_key_value_heads: 5\nvocab_size: 100\n"
                       "intermediate_size: 10\n",
                       RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG, "num_key_value_heads");
    expect_model_error("name: x\nfamily: llama\ndtype: bf17\n", RS_MODEL_ERROR,
                       RS_MODEL_ERROR_CONFIG, "unknown dtype \"bf17\"");
}

static void
test_scaled_subset(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_data_find("models", "deepseek-v3", &error);
    RsModelOptions options = {0};
    options.scale = 16;
    options.has_layer_range = TRUE;
    options.first_layer = 3;
    options.last_layer = 4;
    g_autoptr(RsModel) m = rs_model_load_file(path, &options, &error);
    g_assert_no_error(error);
    /* Two MoE layers of 17 tensors; no embedding or head. */
    g_assert_cmpuint(rs_model_get_n_tensors(m), ==, 34);
    g_assert_cmpuint(rs_model_get_n_layers(m), ==, 61);
    g_assert_cmpint(rs_model_find_tensor(m, "model.embed_tokens.weight"), ==, -1);
    g_assert_cmpint(rs_model_find_tensor(m, "model.layers.5.input_layernorm.weight"), ==, -1);
    /* Widths divided by 16, counts kept: 128 heads × (128 + 64) / 16, q_lora 1536 / 16. */
    const RsTensorSpec *qb = rs_model_get_tensor(
        m, (guint)rs_model_find_tensor(m, "model.layers.4.self_attn.q_b_proj.weight"));
    g_assert_cmpint(qb->shape[0], ==, 128 * 12);
    g_assert_cmpint(qb->shape[1], ==, 96);
    g_assert_cmpuint(qb->n_heads, ==, 128);
    const RsTensorSpec *gate = rs_model_get_tensor(
        m, (guint)rs_model_find_tensor(m, "model.layers.3.mlp.experts.gate_proj.weight"));
    g_assert_cmpint(gate->shape[0], ==, 256);
    g_assert_cmpint(gate->shape[1], ==, 128);
    g_assert_cmpint(gate->shape[2], ==, 448);
    g_autofree char *variant = rs_model_format_variant(m);
    g_assert_cmpstr(variant, ==, "scale 1/16, layers 3-4");

    g_autofree char *llama = rs_data_find("models", "llama-3.1-8b", &error);
    RsModelOptions lopt = {0};
    lopt.scale = 4;
    lopt.has_layer_range = TRUE;
    lopt.first_layer = 0;
    lopt.last_layer = 0;
    g_autoptr(RsModel) l = rs_model_load_file(llama, &lopt, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_model_get_n_tensors(l), ==, 9);
    const RsTensorSpec *k = rs_model_get_tensor(
        l, (guint)rs_model_find_tensor(l, "model.layers.0.self_attn.k_proj.weight"));
    g_assert_cmpint(k->shape[0], ==, 8 * 32);
    g_assert_cmpint(k->shape[1], ==, 1024);
    g_assert_true(k->kv_heads);
    lopt.last_layer = 32;
    g_autoptr(RsModel) bad = rs_model_load_file(llama, &lopt, &error);
    g_assert_null(bad);
    g_assert_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/model/deepseek-v3/total", test_deepseek_v3_total);
    g_test_add_func("/model/deepseek-v3/mtp", test_deepseek_v3_mtp);
    g_test_add_func("/model/deepseek-v3/layer", test_deepseek_v3_layer);
    g_test_add_func("/model/llama-3.1-8b", test_llama_8b);
    g_test_add_func("/model/errors", test_model_errors);
    g_test_add_func("/model/scaled-subset", test_scaled_subset);
    return g_test_run();
}

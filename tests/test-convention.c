/* test-convention.c — megatron, fsdp2, vllm and sglang layouts of real models, worked out
 * by hand from the frameworks' code (see layout/convention.h), and the errors a user meets.
 *
 * The conventions table: for Llama-3.1-8B and DeepSeek-V3, megatron tp=2 pp=2 (8 GPUs,
 * dp 2), fsdp2 dp=4 and vllm tp=4, the exact boxes (global ranges, "@" local offset in
 * elements) of named tensors on named GPUs, with their fused buffer and its shape. */
#include "layout/convention.h"
#include "layout/scenario.h"
#include "base/data.h"
#include "models/model-load.h"
#include "plan/plan.h"

#include <glib/gstdio.h>
#include <string.h>

static RsModel *
load(const char *name)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_data_find("models", name, &error);
    g_assert_no_error(error);
    RsModel *model = rs_model_load_file(path, NULL, &error);
    g_assert_no_error(error);
    return model;
}

static GPtrArray *
resolve(const char *spec, const RsModel *model, guint32 first_gpu, guint n_gpus,
        RsConvention **conv_out)
{
    g_autoptr(GError) error = NULL;
    RsConvention *conv = rs_convention_parse(spec, &error);
    g_assert_no_error(error);
    g_autofree guint32 *gpus = g_new(guint32, n_gpus);
    for (guint i = 0; i < n_gpus; i++)
        gpus[i] = first_gpu + i;
    GPtrArray *layouts = NULL;
    g_assert_true(rs_convention_resolve(conv, model, gpus, n_gpus, &layouts, NULL, &error));
    g_assert_no_error(error);
    if (conv_out)
        *conv_out = conv;
    else
        rs_convention_free(conv);
    return layouts;
}

static const RsLayout *
layout_of(GPtrArray *layouts, const RsModel *model, const char *tensor)
{
    gint idx = rs_model_find_tensor(model, tensor);
    if (idx < 0)
        g_error("no tensor %s", tensor);
    return g_ptr_array_index(layouts, idx);
}

/* Asserts that @gpu holds exactly one box with bounds lo..hi per dim. */
static void
assert_box(const RsLayout *layout, guint32 gpu, const gint64 *lo, const gint64 *hi)
{
    gint idx = rs_layout_find_rank(layout, gpu);
    if (idx < 0)
        g_error("GPU %u does not hold the tensor", gpu);
    guint n;
    const RsLocalBox *b = rs_layout_get_boxes(layout, (guint)idx, &n);
    g_assert_cmpuint(n, ==, 1);
    for (guint d = 0; d < b[0].box.n_dims; d++) {
        g_assert_cmpint(b[0].box.lo[d], ==, lo[d]);
        g_assert_cmpint(b[0].box.hi[d], ==, hi[d]);
    }
}

/* A failed resolve names the parameter at fault, and where a file gave it; setting the
 * value again (a merge, a sweep's point) forgets where. */
static void
test_error_key_and_where(void)
{
    g_autoptr(RsModel) m = load("llama-3.1-8b");
    g_autoptr(GError) error = NULL;
    RsConvention *conv = rs_convention_parse("vllm:tp=3", &error);
    g_assert_no_error(error);
    rs_convention_set_where(conv, "tp", "s.yaml:8:7: infer.tp");
    g_assert_cmpstr(rs_convention_get_where(conv, "tp"), ==, "s.yaml:8:7: infer.tp");
    g_assert_null(rs_convention_get_where(conv, "pp")); /* unset */
    g_assert_null(rs_convention_get_where(conv, NULL));
    const guint32 gpus[6] = {0, 1, 2, 3, 4, 5};
    GPtrArray *layouts = NULL;
    g_assert_false(rs_convention_resolve(conv, m, gpus, 6, &layouts, NULL, &error));
    g_assert_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_MODEL);
    g_assert_cmpstr(rs_convention_get_error_key(conv), ==, "tp");
    g_clear_error(&error);
    RsConvention *copy = rs_convention_dup(conv);
    g_assert_cmpstr(rs_convention_get_where(copy, "tp"), ==, "s.yaml:8:7: infer.tp");
    g_assert_true(rs_convention_set(copy, "tp", 2, &error));
    g_assert_null(rs_convention_get_where(copy, "tp"));
    /* (The failed resolve derived replicas=2: 4 GPUs at tp=2.) */
    g_assert_true(rs_convention_resolve(copy, m, gpus, 4, &layouts, NULL, &error));
    g_assert_no_error(error);
    g_assert_null(rs_convention_get_error_key(copy));
    g_ptr_array_unref(layouts);
    g_autoptr(RsConvention) flag = rs_convention_parse("vllm:tp=4", &error);
    rs_convention_merge(&conv, flag);
    g_assert_null(rs_convention_get_where(conv, "tp"));
    rs_convention_free(copy);
    rs_convention_free(conv);
}

static void
test_megatron_deepseek(void)
{
    g_autoptr(RsModel) m = load("deepseek-v3");
    RsConvention *conv;
    g_autoptr(GPtrArray) l = resolve("megatron:tp=1,pp=16,ep=16", m, 0, 256, &conv);
    g_assert_cmpint(rs_convention_get(conv, "dp"), ==, 16);
    g_assert_cmpint(rs_convention_get(conv, "etp"), ==, 1);
    rs_convention_free(conv);
    /* Embedding on stage 0 (GPUs 0-15), replicated over dp; head on stage 15. */
    const RsLayout *embed = layout_of(l, m, "model.embed_tokens.weight");
    g_assert_cmpuint(rs_layout_get_n_ranks(embed), ==, 16);
    g_assert_cmpuint(rs_layout_get_rank(embed, 0), ==, 0);
    g_assert_cmpuint(rs_layout_get_rank(embed, 15), ==, 15);
    const RsLayout *head = layout_of(l, m, "lm_head.weight");
    g_assert_cmpuint(rs_layout_get_rank(head, 0), ==, 240);
    /* Layers by floor(s·61/16): stage 1 holds layers 3..6, stage 5 holds 19..21. */
    g_assert_cmpuint(
        rs_layout_get_rank(layout_of(l, m, "model.layers.3.self_attn.o_proj.weight"), 0), ==, 16);
    g_assert_cmpuint(
        rs_layout_get_rank(layout_of(l, m, "model.layers.6.self_attn.o_proj.weight"), 0), ==, 16);
    g_assert_cmpuint(
        rs_layout_get_rank(layout_of(l, m, "model.layers.7.self_attn.o_proj.weight"), 0), ==, 32);
    g_assert_cmpuint(
        rs_layout_get_rank(layout_of(l, m, "model.layers.21.self_attn.o_proj.weight"), 0), ==,
        80);
    /* C09-style: ep rank e of stage 1 (GPU 16 + e) holds global experts [16e, 16e + 16). */
    const RsLayout *experts = layout_of(l, m, "model.layers.3.mlp.experts.gate_proj.weight");
    for (guint e = 0; e < 16; e++) {
        const gint64 lo[] = {16 * e, 0, 0}, hi[] = {16 * e + 16, 2048, 7168};
        assert_box(experts, 16 + e, lo, hi);
    }
}

static void
test_vllm_deepseek(void)
{
    g_autoptr(RsModel) m = load("deepseek-v3");
    g_autoptr(GPtrArray) l = resolve("vllm:tp=32,replicas=8", m, 256, 256, NULL);
    const RsLayout *qb = layout_of(l, m, "model.layers.10.self_attn.q_b_proj.weight");
    for (guint r = 0; r < 32; r += 7) {
        const gint64 lo[] = {768 * r, 0}, hi[] = {768 * r + 768, 1536};
        assert_box(qb, 256 + r, lo, hi);
        assert_box(qb, 288 + r, lo, hi); /* the next replica */
    }
    const RsLayout *down = layout_of(l, m, "model.layers.10.mlp.experts.down_proj.weight");
    const gint64 d_lo[] = {0, 0, 64 * 5}, d_hi[] = {256, 7168, 64 * 6};
    assert_box(down, 256 + 5, d_lo, d_hi);
    const RsLayout *qa = layout_of(l, m, "model.layers.10.self_attn.q_a_proj.weight");
    const gint64 a_lo[] = {0, 0}, a_hi[] = {1536, 7168};
    assert_box(qa, 511, a_lo, a_hi);
}

/* gpt-oss-20b (I = 2880 = 90 MXFP4 blocks of 32) served by vLLM in MXFP4 is loaded in
 * whole blocks (models/gpt_oss.py, _load_weights_mxfp4): per rank cdiv(90, tp) blocks,
 * the last rank shorter or empty, over the flattened dp x tp. tp=8: 12 blocks = 384
 * columns of down_proj [E, H, I] a rank, rank 7 the 192 left in a 384-column buffer; the
 * interleaved gate_up_proj [E, 2I, H] and its bias [E, 2I] take rows 2x those. In BF16
 * (_load_weights_other) the torch.chunk split: 360 a rank. tp=4 x dp=2 is the same 8-way
 * split; tp=16 leaves rank 15 empty (15 x 192 = 2880). */
static void
test_vllm_gpt_oss_mxfp4(void)
{
    g_autoptr(RsModel) m = load("gpt-oss-20b");
    const struct {
        const char *spec;
        gboolean mxfp4;
        guint n_gpus;
        guint32 gpu;
        gint64 lo, hi, buffer; /* down_proj's I columns of @gpu, and its buffer's */
    } cases[] = {
        {"vllm:tp=8", TRUE, 8, 0, 0, 384, 384},
        {"vllm:tp=8", TRUE, 8, 3, 1152, 1536, 384},
        {"vllm:tp=8", TRUE, 8, 7, 2688, 2880, 384},
        {"vllm:tp=8", FALSE, 8, 7, 2520, 2880, 360},
        {"vllm:tp=4,dp=2", TRUE, 8, 7, 2688, 2880, 384},
        {"vllm:tp=4", TRUE, 4, 3, 2208, 2880, 736},
        {"vllm:tp=4,replicas=2", TRUE, 8, 7, 2208, 2880, 736},
        {"vllm:tp=16", TRUE, 16, 14, 2688, 2880, 192},
        {"vllm:tp=16", TRUE, 16, 15, 2880, 2880, 192},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(RsConvention) conv = rs_convention_parse(cases[c].spec, &error);
        g_assert_no_error(error);
        const RsDtype mxfp4 = RS_DTYPE_MXFP4;
        rs_convention_set_weight_dtype(conv, cases[c].mxfp4 ? &mxfp4 : NULL);
        g_autofree guint32 *gpus = g_new(guint32, cases[c].n_gpus);
        for (guint i = 0; i < cases[c].n_gpus; i++)
            gpus[i] = i;
        g_autoptr(GPtrArray) l = NULL;
        g_assert_true(rs_convention_resolve(conv, m, gpus, cases[c].n_gpus, &l, NULL, &error));
        g_assert_no_error(error);
        const char *names[] = {"model.layers.0.mlp.experts.down_proj",
                               "model.layers.0.mlp.experts.gate_up_proj",
                               "model.layers.0.mlp.experts.gate_up_proj_bias"};
        for (guint t = 0; t < G_N_ELEMENTS(names); t++) {
            const RsLayout *layout = layout_of(l, m, names[t]);
            guint dim = t == 0 ? 2 : 1, scale = t == 0 ? 1 : 2;
            gint idx = rs_layout_find_rank(layout, cases[c].gpu);
            g_assert_cmpint(idx, >=, 0);
            g_assert_cmpint(rs_layout_get_buffer_shape(layout, (guint)idx)[dim], ==,
                            scale * cases[c].buffer);
            guint n;
            const RsLocalBox *b = rs_layout_get_boxes(layout, (guint)idx, &n);
            if (cases[c].lo == cases[c].hi) {
                g_assert_cmpuint(n, ==, 0);
                continue;
            }
            g_assert_cmpuint(n, ==, 1);
            g_assert_cmpint(b[0].box.lo[dim], ==, scale * cases[c].lo);
            g_assert_cmpint(b[0].box.hi[dim], ==, scale * cases[c].hi);
            g_assert_cmpint(b[0].box.lo[0], ==, 0);
            g_assert_cmpint(b[0].box.hi[0], ==, 32);
        }
    }
}

/* gpt-oss as its checkpoint stores it (--stored: experts as MXFP4 *_blocks and *_scales,
 * no --infer-dtype): vLLM loads it by the same block rule. At tp=8 rank 7 holds rows
 * 5376:5760 of gate_up_proj_blocks, _scales and _bias (768-row buffers; the torch.chunk
 * split gave 5040:5760 of 720), and blocks 84:90 of down_proj_blocks' 90 in a buffer of
 * cdiv(90, 8) = 12 blocks, as vLLM allocates every rank's partition (torch.chunk gave the
 * same blocks in a buffer of 6). */
static void
test_vllm_gpt_oss_stored_blocks(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_data_find("models", "gpt-oss-20b", &error);
    RsModelOptions options = {.storage = RS_MODEL_STORAGE_CHECKPOINT};
    g_autoptr(RsModel) m = rs_model_load_file(path, &options, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) l = resolve("vllm:tp=8", m, 0, 8, NULL);
    const struct {
        const char *name;
        guint dim;
        gint64 lo, hi, buffer;
    } cases[] = {
        {"model.layers.0.mlp.experts.gate_up_proj_blocks", 1, 5376, 5760, 768},
        {"model.layers.0.mlp.experts.gate_up_proj_scales", 1, 5376, 5760, 768},
        {"model.layers.0.mlp.experts.gate_up_proj_bias", 1, 5376, 5760, 768},
        {"model.layers.0.mlp.experts.down_proj_blocks", 2, 84, 90, 12},
        {"model.layers.0.mlp.experts.down_proj_scales", 2, 84, 90, 12},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        const RsLayout *layout = layout_of(l, m, cases[c].name);
        gint idx = rs_layout_find_rank(layout, 7);
        g_assert_cmpint(idx, >=, 0);
        g_assert_cmpint(rs_layout_get_buffer_shape(layout, (guint)idx)[cases[c].dim], ==,
                        cases[c].buffer);
        guint n;
        const RsLocalBox *b = rs_layout_get_boxes(layout, (guint)idx, &n);
        g_assert_cmpuint(n, ==, 1);
        g_assert_cmpint(b[0].box.lo[cases[c].dim], ==, cases[c].lo);
        g_assert_cmpint(b[0].box.hi[cases[c].dim], ==, cases[c].hi);
    }
}

/* vLLM with tp=16 > 8 KV heads: each KV head on 2 consecutive ranks. */
static void
test_vllm_kv_replication(void)
{
    g_autoptr(RsModel) m = load("llama-3.1-8b");
    g_autoptr(GPtrArray) l = resolve("vllm:tp=16", m, 0, 16, NULL);
    const RsLayout *k = layout_of(l, m, "model.layers.0.self_attn.k_proj.weight");
    for (guint r = 0; r < 16; r++) {
        const gint64 lo[] = {128 * (r / 2), 0}, hi[] = {128 * (r / 2) + 128, 4096};
        assert_box(k, r, lo, hi);
    }
    const RsLayout *q = layout_of(l, m, "model.layers.0.self_attn.q_proj.weight");
    const gint64 lo[] = {256 * 3, 0}, hi[] = {256 * 4, 4096};
    assert_box(q, 3, lo, hi);
}

typedef struct {
    const char *spec;
    const char *model;
    guint n_gpus;
    gint code;
    const char *fragment;
} ErrorCase;

static const ErrorCase error_cases[] = {
    {"megatron:tp=1,pp=16,dp=8", "deepseek-v3", 256, RS_CONVENTION_ERROR_WORLD_SIZE,
     "tp x cp x dp x pp = 128 ranks, but 256 GPUs are given"},
    {"megatron:tp=3", "deepseek-v3", 256, RS_CONVENTION_ERROR_WORLD_SIZE,
     "does not divide the 256 GPUs"},
    {"vllm:tp=3", "deepseek-v3", 3, RS_CONVENTION_ERROR_MODEL, "tp=3 and the 128 attention heads"},
    {"vllm:tp=16", "llama-3.1-8b", 48, RS_CONVENTION_ERROR_WORLD_SIZE,
     "tp x replicas = 32 ranks, but 48 GPUs"},
    {"megatron:ep=3", "deepseek-v3", 3, RS_CONVENTION_ERROR_MODEL, "ep=3 does not divide"},
    {"megatron:pp=64", "llama-3.1-8b", 64, RS_CONVENTION_ERROR_MODEL,
     "pp=64 exceeds the 32 layers"},
    {"megatron:ep=16,etp=2", "deepseek-v3", 16, RS_CONVENTION_ERROR_PARAM,
     "ep x etp = 32 must divide"},
};

static void
test_error_case(gconstpointer data)
{
    const ErrorCase *c = data;
    g_autoptr(RsModel) m = load(c->model);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsConvention) conv = rs_convention_parse(c->spec, &error);
    g_assert_no_error(error);
    g_autofree guint32 *gpus = g_new(guint32, c->n_gpus);
    for (guint i = 0; i < c->n_gpus; i++)
        gpus[i] = i;
    GPtrArray *layouts = NULL;
    if (c->spec[0] == 'v' && c->n_gpus == 48) {
        /* An explicit replica count that does not match. */
        g_assert_true(rs_convention_set(conv, "replicas", 2, &error));
    }
    g_assert_false(rs_convention_resolve(conv, m, gpus, c->n_gpus, &layouts, NULL, &error));
    g_assert_error(error, RS_CONVENTION_ERROR, c->code);
    if (strstr(error->message, c->fragment) == NULL)
        g_error("message \"%s\" lacks \"%s\"", error->message, c->fragment);
}

static void
test_parse_errors(void)
{
    g_autoptr(GError) error = NULL;
    g_assert_null(rs_convention_parse("megatron:tq=2", &error));
    g_assert_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM);
    g_assert_nonnull(strstr(error->message, "known: tp, cp, pp, dp, ep, etp"));
    g_clear_error(&error);
    g_assert_null(rs_convention_parse("megatron:tp=0", &error));
    g_assert_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM);
    g_clear_error(&error);
    g_assert_null(rs_convention_parse("deepspeed:tp=2", &error));
    g_assert_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_UNKNOWN);
    g_clear_error(&error);
    g_assert_null(rs_convention_parse("vllm:tp", &error));
    g_assert_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM);
}

/* --- the conventions table --- */

/* "[lo:hi, …]@offset;…" for the boxes @gpu holds, in buffer order. */
static char *
format_boxes(const RsLayout *layout, guint32 gpu)
{
    gint idx = rs_layout_find_rank(layout, gpu);
    if (idx < 0)
        return g_strdup("not held");
    guint n;
    const RsLocalBox *b = rs_layout_get_boxes(layout, (guint)idx, &n);
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < n; i++) {
        g_autofree char *box = rs_box_format(&b[i].box);
        g_string_append_printf(s, "%s%s@%" G_GUINT64_FORMAT, i ? ";" : "", box,
                               b[i].offset_elems);
    }
    return g_string_free(s, FALSE);
}

static char *
format_buffer(const RsLayout *layout, guint32 gpu, const char *name)
{
    gint idx = rs_layout_find_rank(layout, gpu);
    if (idx < 0)
        return g_strdup("-");
    const gint64 *shape = rs_layout_get_buffer_shape(layout, (guint)idx);
    GString *s = g_string_new(name ? name : "own");
    g_string_append(s, " [");
    for (guint d = 0; d < rs_layout_get_n_dims(layout); d++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? "," : "", shape[d]);
    g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
}

typedef struct {
    const char *name;   /* test path */
    const char *model;
    const char *spec;
    guint32 first_gpu;
    guint n_gpus;
    const char *tensor;
    guint32 gpu;
    const char *boxes;  /* format_boxes() */
    const char *buffer; /* format_buffer() */
} TableRow;

/* Worked out by hand (see each framework's rule in layout/convention.h):
 * Llama-3.1-8B: hidden 4096, 32 heads / 8 KV heads of 128, FFN 14336, vocab 128256.
 *  megatron tp=2 pp=2 on GPUs 0-7: GPU = tp + 2·dp + 4·pp; stage 0 layers 0-15. tp rank 1
 *  holds query groups 4-7, each [4 q heads; k; v] = 768 rows: q rows 512g.. at buffer row
 *  768(g−4), k rows 128g.. at 768(g−4)+512, v at +640. linear_fc1 [gate 7168; up 7168].
 *  Vocabulary padded to 256: 128256 = 501·256, so 64128 rows per tp rank.
 *  fsdp2 dp=4: Shard(0) in torch.chunk pieces of 1024 (q), 256 (k), 32064 (embed).
 *  vllm tp=4 on GPUs 8-11: qkv_proj [8 q heads; 2 k; 2 v] = 1536 rows; gate_up [3584; 3584].
 * DeepSeek-V3: hidden 7168, 128 heads, q_lora 1536, kv_lora 512, nope 128, rope 64, v 128,
 *  FFN 18432, 256 experts of 2048, vocab 129280 (= 505·256 = 2020·64, no padding).
 *  megatron tp=2 pp=2 on GPUs 0-7: 61 layers, stage 0 layers 0-29; experts mesh [edp=2,
 *  ep=1, etp=2]; etp rank 1 holds rows 1024-2047 of gate and up of every expert, per
 *  expert [gate; up] (2048 rows of 7168: up at 1024·7168).
 *  vllm tp=4: q_b_proj 24576 rows → 6144 per rank; w13 per expert [gate 512; up 512];
 *  fused_qkv_a_proj [q_a 1536; kv_a 576] whole on every rank. */
static const TableRow table[] = {
    {"llama/megatron/q-proj", "llama-3.1-8b", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.0.self_attn.q_proj.weight", 1,
     "[2048:2560, 0:4096]@0;[2560:3072, 0:4096]@3145728;[3072:3584, 0:4096]@6291456;"
     "[3584:4096, 0:4096]@9437184",
     "model.layers.0.self_attn.linear_qkv.weight [3072,4096]"},
    {"llama/megatron/k-proj", "llama-3.1-8b", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.0.self_attn.k_proj.weight", 3,
     "[512:640, 0:4096]@2097152;[640:768, 0:4096]@5242880;[768:896, 0:4096]@8388608;"
     "[896:1024, 0:4096]@11534336",
     "model.layers.0.self_attn.linear_qkv.weight [3072,4096]"},
    {"llama/megatron/v-proj", "llama-3.1-8b", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.0.self_attn.v_proj.weight", 0,
     "[0:128, 0:4096]@2621440;[128:256, 0:4096]@5767168;[256:384, 0:4096]@8912896;"
     "[384:512, 0:4096]@12058624",
     "model.layers.0.self_attn.linear_qkv.weight [3072,4096]"},
    {"llama/megatron/not-on-stage-1", "llama-3.1-8b", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.0.self_attn.q_proj.weight", 4, "not held", "-"},
    {"llama/megatron/up-proj", "llama-3.1-8b", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.16.mlp.up_proj.weight", 6, "[0:7168, 0:4096]@29360128",
     "model.layers.16.mlp.linear_fc1.weight [14336,4096]"},
    {"llama/megatron/o-proj", "llama-3.1-8b", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.16.self_attn.o_proj.weight", 5, "[0:4096, 2048:4096]@0", "own [4096,2048]"},
    {"llama/megatron/lm-head", "llama-3.1-8b", "megatron:tp=2,pp=2", 0, 8, "lm_head.weight", 7,
     "[64128:128256, 0:4096]@0", "own [64128,4096]"},
    {"llama/megatron/embed", "llama-3.1-8b", "megatron:tp=2,pp=2", 0, 8,
     "model.embed_tokens.weight", 2, "[0:64128, 0:4096]@0", "own [64128,4096]"},
    {"llama/fsdp2/q-proj", "llama-3.1-8b", "fsdp2:dp=4", 0, 4,
     "model.layers.0.self_attn.q_proj.weight", 2, "[2048:3072, 0:4096]@0", "own [1024,4096]"},
    {"llama/fsdp2/k-proj", "llama-3.1-8b", "fsdp2:dp=4", 0, 4,
     "model.layers.0.self_attn.k_proj.weight", 3, "[768:1024, 0:4096]@0", "own [256,4096]"},
    {"llama/fsdp2/embed", "llama-3.1-8b", "fsdp2:dp=4", 0, 4, "model.embed_tokens.weight", 3,
     "[96192:128256, 0:4096]@0", "own [32064,4096]"},
    {"llama/fsdp2/down-proj", "llama-3.1-8b", "fsdp2:dp=4", 0, 4,
     "model.layers.5.mlp.down_proj.weight", 1, "[1024:2048, 0:14336]@0", "own [1024,14336]"},
    {"llama/fsdp2/norm", "llama-3.1-8b", "fsdp2:dp=4", 0, 4, "model.norm.weight", 1,
     "[1024:2048]@0", "own [1024]"},
    {"llama/fsdp2-tp/q-proj", "llama-3.1-8b", "fsdp2:dp=2,tp=2", 0, 4,
     "model.layers.0.self_attn.q_proj.weight", 1, "[2048:3072, 0:4096]@0", "own [1024,4096]"},
    {"llama/fsdp2-tp/q-proj-dp1", "llama-3.1-8b", "fsdp2:dp=2,tp=2", 0, 4,
     "model.layers.0.self_attn.q_proj.weight", 2, "[1024:2048, 0:4096]@0", "own [1024,4096]"},
    {"llama/fsdp2-tp/o-proj", "llama-3.1-8b", "fsdp2:dp=2,tp=2", 0, 4,
     "model.layers.0.self_attn.o_proj.weight", 3, "[2048:4096, 2048:4096]@0", "own [2048,2048]"},
    /* HSDP: replicate 2 × shard 2; the replica holds the same shard. */
    {"llama/hsdp/q-proj-replica-0", "llama-3.1-8b", "fsdp2:replicate=2,dp=2", 0, 4,
     "model.layers.0.self_attn.q_proj.weight", 1, "[2048:4096, 0:4096]@0", "own [2048,4096]"},
    {"llama/hsdp/q-proj-replica-1", "llama-3.1-8b", "fsdp2:replicate=2,dp=2", 0, 4,
     "model.layers.0.self_attn.q_proj.weight", 3, "[2048:4096, 0:4096]@0", "own [2048,4096]"},
    {"llama/vllm/q-proj", "llama-3.1-8b", "vllm:tp=4", 8, 4,
     "model.layers.0.self_attn.q_proj.weight", 9, "[1024:2048, 0:4096]@0",
     "model.layers.0.self_attn.qkv_proj.weight [1536,4096]"},
    {"llama/vllm/k-proj", "llama-3.1-8b", "vllm:tp=4", 8, 4,
     "model.layers.0.self_attn.k_proj.weight", 9, "[256:512, 0:4096]@4194304",
     "model.layers.0.self_attn.qkv_proj.weight [1536,4096]"},
    {"llama/vllm/v-proj", "llama-3.1-8b", "vllm:tp=4", 8, 4,
     "model.layers.0.self_attn.v_proj.weight", 9, "[256:512, 0:4096]@5242880",
     "model.layers.0.self_attn.qkv_proj.weight [1536,4096]"},
    {"llama/vllm/up-proj", "llama-3.1-8b", "vllm:tp=4", 8, 4, "model.layers.0.mlp.up_proj.weight",
     11, "[10752:14336, 0:4096]@14680064", "model.layers.0.mlp.gate_up_proj.weight [7168,4096]"},
    {"llama/vllm/down-proj", "llama-3.1-8b", "vllm:tp=4", 8, 4,
     "model.layers.0.mlp.down_proj.weight", 10, "[0:4096, 7168:10752]@0", "own [4096,3584]"},
    {"llama/vllm/embed", "llama-3.1-8b", "vllm:tp=4", 8, 4, "model.embed_tokens.weight", 11,
     "[96192:128256, 0:4096]@0", "own [32064,4096]"},
    {"deepseek/megatron/q-b-proj", "deepseek-v3", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.0.self_attn.q_b_proj.weight", 1, "[12288:24576, 0:1536]@0", "own [12288,1536]"},
    {"deepseek/megatron/q-a-proj", "deepseek-v3", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.0.self_attn.q_a_proj.weight", 3, "[0:1536, 0:7168]@0", "own [1536,7168]"},
    {"deepseek/megatron/expert-gate", "deepseek-v3", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.3.mlp.experts.gate_proj.weight", 1, "[0:256, 1024:2048, 0:7168]@0",
     "model.layers.3.mlp.experts.linear_fc1.weight [256,2048,7168]"},
    {"deepseek/megatron/expert-up", "deepseek-v3", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.3.mlp.experts.up_proj.weight", 3, "[0:256, 1024:2048, 0:7168]@7340032",
     "model.layers.3.mlp.experts.linear_fc1.weight [256,2048,7168]"},
    {"deepseek/megatron/expert-down", "deepseek-v3", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.3.mlp.experts.down_proj.weight", 0, "[0:256, 0:7168, 0:1024]@0",
     "own [256,7168,1024]"},
    {"deepseek/megatron/o-proj-stage-1", "deepseek-v3", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.30.self_attn.o_proj.weight", 4, "[0:7168, 0:8192]@0", "own [7168,8192]"},
    {"deepseek/megatron/layer-29-stage-0", "deepseek-v3", "megatron:tp=2,pp=2", 0, 8,
     "model.layers.29.self_attn.o_proj.weight", 4, "not held", "-"},
    {"deepseek/megatron/lm-head", "deepseek-v3", "megatron:tp=2,pp=2", 0, 8, "lm_head.weight", 5,
     "[64640:129280, 0:7168]@0", "own [64640,7168]"},
    {"deepseek/fsdp2/q-b-proj", "deepseek-v3", "fsdp2:dp=4", 0, 4,
     "model.layers.0.self_attn.q_b_proj.weight", 1, "[6144:12288, 0:1536]@0", "own [6144,1536]"},
    {"deepseek/fsdp2/expert-gate", "deepseek-v3", "fsdp2:dp=4", 0, 4,
     "model.layers.3.mlp.experts.gate_proj.weight", 2, "[128:192, 0:2048, 0:7168]@0",
     "own [64,2048,7168]"},
    {"deepseek/fsdp2/score-bias", "deepseek-v3", "fsdp2:dp=4", 0, 4,
     "model.layers.3.mlp.gate.e_score_correction_bias", 3, "[192:256]@0", "own [64]"},
    {"deepseek/vllm/q-a-proj", "deepseek-v3", "vllm:tp=4", 8, 4,
     "model.layers.0.self_attn.q_a_proj.weight", 10, "[0:1536, 0:7168]@0",
     "model.layers.0.self_attn.fused_qkv_a_proj.weight [2112,7168]"},
    {"deepseek/vllm/kv-a-proj", "deepseek-v3", "vllm:tp=4", 8, 4,
     "model.layers.0.self_attn.kv_a_proj_with_mqa.weight", 8, "[0:576, 0:7168]@11010048",
     "model.layers.0.self_attn.fused_qkv_a_proj.weight [2112,7168]"},
    {"deepseek/vllm/q-b-proj", "deepseek-v3", "vllm:tp=4", 8, 4,
     "model.layers.0.self_attn.q_b_proj.weight", 10, "[12288:18432, 0:1536]@0", "own [6144,1536]"},
    {"deepseek/vllm/kv-b-proj", "deepseek-v3", "vllm:tp=4", 8, 4,
     "model.layers.0.self_attn.kv_b_proj.weight", 9, "[8192:16384, 0:512]@0", "own [8192,512]"},
    {"deepseek/vllm/expert-gate", "deepseek-v3", "vllm:tp=4", 8, 4,
     "model.layers.3.mlp.experts.gate_proj.weight", 11, "[0:256, 1536:2048, 0:7168]@0",
     "model.layers.3.mlp.experts.w13_weight [256,1024,7168]"},
    {"deepseek/vllm/expert-up", "deepseek-v3", "vllm:tp=4", 8, 4,
     "model.layers.3.mlp.experts.up_proj.weight", 11, "[0:256, 1536:2048, 0:7168]@3670016",
     "model.layers.3.mlp.experts.w13_weight [256,1024,7168]"},
    {"deepseek/vllm/shared-up", "deepseek-v3", "vllm:tp=4", 8, 4,
     "model.layers.3.mlp.shared_experts.up_proj.weight", 8, "[0:512, 0:7168]@3670016",
     "model.layers.3.mlp.shared_experts.gate_up_proj.weight [1024,7168]"},
    {"deepseek/vllm/lm-head", "deepseek-v3", "vllm:tp=4", 8, 4, "lm_head.weight", 11,
     "[96960:129280, 0:7168]@0", "own [32320,7168]"},
    {"deepseek/vllm-ep/expert-up", "deepseek-v3", "vllm:tp=4,ep", 8, 4,
     "model.layers.3.mlp.experts.up_proj.weight", 9, "[64:128, 0:2048, 0:7168]@14680064",
     "model.layers.3.mlp.experts.w13_weight [64,4096,7168]"},
    {"deepseek/vllm-ep/expert-down", "deepseek-v3", "vllm:tp=4,ep=on", 8, 4,
     "model.layers.3.mlp.experts.down_proj.weight", 11, "[192:256, 0:7168, 0:2048]@0",
     "own [64,7168,2048]"},
    /* vLLM's dp (--data-parallel-size) flattens the MoE tensor parallelism over dp x tp
     * (FusedMoEParallelConfig.make, flatten_tp_across_dp): GPU 13 is dp rank 1, tp rank 1,
     * moe_tp rank 5 of 8, I/8 = 256 rows; the dense weights stay split over tp. */
    {"deepseek/vllm-dp/expert-up", "deepseek-v3", "vllm:tp=4,dp=2", 8, 8,
     "model.layers.3.mlp.experts.up_proj.weight", 13, "[0:256, 1280:1536, 0:7168]@1835008",
     "model.layers.3.mlp.experts.w13_weight [256,512,7168]"},
    {"deepseek/vllm-dp/expert-down", "deepseek-v3", "vllm:tp=4,dp=2", 8, 8,
     "model.layers.3.mlp.experts.down_proj.weight", 13, "[0:256, 0:7168, 1280:1536]@0",
     "own [256,7168,256]"},
    {"deepseek/vllm-dp/q-b", "deepseek-v3", "vllm:tp=4,dp=2", 8, 8,
     "model.layers.3.self_attn.q_b_proj.weight", 13, "[6144:12288, 0:1536]@0", "own [6144,1536]"},
    {"deepseek/vllm-dp-ep/expert-down", "deepseek-v3", "vllm:tp=4,dp=2,ep", 8, 8,
     "model.layers.3.mlp.experts.down_proj.weight", 13, "[160:192, 0:7168, 0:2048]@0",
     "own [32,7168,2048]"},
    /* Engine replicas (what the GPU count derives): each engine holds the whole model, its
     * experts over its own tp (or ep = tp) ranks. GPU 13 is replica 1, tp rank 1. */
    {"deepseek/vllm-replicas/expert-down", "deepseek-v3", "vllm:tp=4", 8, 8,
     "model.layers.3.mlp.experts.down_proj.weight", 13, "[0:256, 0:7168, 512:1024]@0",
     "own [256,7168,512]"},
    {"deepseek/vllm-replicas-ep/expert-down", "deepseek-v3", "vllm:tp=4,replicas=2,ep", 8, 8,
     "model.layers.3.mlp.experts.down_proj.weight", 13, "[64:128, 0:7168, 0:2048]@0",
     "own [64,7168,2048]"},
};

static void
test_table_row(gconstpointer data)
{
    const TableRow *row = data;
    g_autoptr(RsModel) m = load(row->model);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsConvention) conv = rs_convention_parse(row->spec, &error);
    g_assert_no_error(error);
    g_autofree guint32 *gpus = g_new(guint32, row->n_gpus);
    for (guint i = 0; i < row->n_gpus; i++)
        gpus[i] = row->first_gpu + i;
    RsConventionResult res;
    g_assert_true(rs_convention_resolve_full(conv, m, gpus, row->n_gpus, &res, &error));
    gint idx = rs_model_find_tensor(m, row->tensor);
    if (idx < 0)
        g_error("no tensor %s", row->tensor);
    const RsLayout *layout = g_ptr_array_index(res.layouts, idx);
    g_autofree char *boxes = format_boxes(layout, row->gpu);
    g_autofree char *buffer = format_buffer(layout, row->gpu, g_ptr_array_index(res.buffers, idx));
    g_assert_cmpstr(boxes, ==, row->boxes);
    g_assert_cmpstr(buffer, ==, row->buffer);
    rs_convention_result_clear(&res);
}

/* Whole refits between the table's conventions: fused buffers fit together and the
 * direct plan passes the invariant checker. */
typedef struct {
    const char *name;
    const char *model;
    const char *train;
    guint n_train;
    const char *infer;
    guint n_infer;
} RefitCase;

static const RefitCase refit_cases[] = {
    {"llama/megatron-to-vllm", "llama-3.1-8b", "megatron:tp=2,pp=2", 8, "vllm:tp=4", 4},
    {"llama/fsdp2-to-vllm", "llama-3.1-8b", "fsdp2:dp=4", 4, "vllm:tp=4", 4},
    {"llama/fsdp2-tp-to-sglang", "llama-3.1-8b", "fsdp2:dp=2,tp=2", 4,
     "sglang:tp=4,dp=2,dp-attention", 4},
    {"deepseek/megatron-to-vllm", "deepseek-v3", "megatron:tp=2,pp=2", 8, "vllm:tp=4", 4},
    {"deepseek/fsdp2-to-vllm-ep", "deepseek-v3", "fsdp2:dp=4", 4, "vllm:tp=4,ep", 4},
};

static void
test_refit_case(gconstpointer data)
{
    const RefitCase *c = data;
    RsModelOptions opts = {.has_layer_range = TRUE, .first_layer = 2, .last_layer = 3,
                           .scale = 16};
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_data_find("models", c->model, &error);
    g_autoptr(RsModel) m = rs_model_load_file(path, &opts, &error);
    g_assert_no_error(error);
    g_autoptr(RsConvention) train = rs_convention_parse(c->train, &error);
    g_autoptr(RsConvention) infer = rs_convention_parse(c->infer, &error);
    g_autofree guint32 *gpus = g_new(guint32, c->n_train + c->n_infer);
    for (guint i = 0; i < c->n_train + c->n_infer; i++)
        gpus[i] = i;
    RsConventionResult src, dst;
    g_assert_true(rs_convention_resolve_full(train, m, gpus, c->n_train, &src, &error));
    g_assert_true(
        rs_convention_resolve_full(infer, m, gpus + c->n_train, c->n_infer, &dst, &error));
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = rs_refit_new_from_model_full(m, src.layouts, src.buffers,
                                                            dst.layouts, dst.buffers, NULL, &error);
    g_assert_no_error(error);
    if (!rs_refit_check_buffers(refit, &error))
        g_error("%s", error->message);
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    if (!rs_plan_check(plan, refit, &error))
        g_error("%s", error->message);
    /* Disjoint GPU sets: every destination element arrives exactly once. */
    guint64 dst_bytes = 0;
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        for (guint e = 0; e < rs_layout_get_n_ranks(t->dst); e++)
            dst_bytes += rs_refit_tensor_get_n_bytes(t, rs_layout_get_held_n_elems(t->dst, e));
    }
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, dst_bytes);
    rs_convention_result_clear(&src);
    rs_convention_result_clear(&dst);
}

/* Pipeline stages: explicit per-stage counts, virtual stages, vLLM's remainder rule, MTP
 * layers on the last stage, a tied embedding on the first and last stage. */
static guint32
first_rank_of(GPtrArray *layouts, const RsModel *m, const char *tensor)
{
    return rs_layout_get_rank(layout_of(layouts, m, tensor), 0);
}

static void
test_pipeline_stages(void)
{
    g_autoptr(RsModel) m = load("deepseek-v3");
    /* pp-layers: stage 0 layers 0-2, stage 1 layers 3-30, stage 2 31-45, stage 3 46-60. */
    g_autoptr(GPtrArray) l = resolve("megatron:pp=4,pp-layers=3,28,15,15", m, 0, 4, NULL);
    g_assert_cmpuint(first_rank_of(l, m, "model.layers.2.input_layernorm.weight"), ==, 0);
    g_assert_cmpuint(first_rank_of(l, m, "model.layers.3.input_layernorm.weight"), ==, 1);
    g_assert_cmpuint(first_rank_of(l, m, "model.layers.30.input_layernorm.weight"), ==, 1);
    g_assert_cmpuint(first_rank_of(l, m, "model.layers.31.input_layernorm.weight"), ==, 2);
    g_assert_cmpuint(first_rank_of(l, m, "model.layers.60.input_layernorm.weight"), ==, 3);
    /* Virtual stages: 60 layers? DeepSeek has 61; give 8 virtual stages explicitly: chunk v
     * on stage v mod 4. */
    g_autoptr(GPtrArray) v = resolve("megatron:pp=4,vpp=2,pp-layers=8,8,8,8,8,7,7,7", m, 0, 4,
                                     NULL);
    g_assert_cmpuint(first_rank_of(v, m, "model.layers.7.input_layernorm.weight"), ==, 0);
    g_assert_cmpuint(first_rank_of(v, m, "model.layers.8.input_layernorm.weight"), ==, 1);
    g_assert_cmpuint(first_rank_of(v, m, "model.layers.32.input_layernorm.weight"), ==, 0);
    g_assert_cmpuint(first_rank_of(v, m, "model.layers.40.input_layernorm.weight"), ==, 1);
    g_assert_cmpuint(first_rank_of(v, m, "model.layers.60.input_layernorm.weight"), ==, 3);
    /* vLLM get_pp_indices: 61 layers over 4 stages are 15, 15, 16, 15. */
    g_autoptr(GPtrArray) p = resolve("vllm:pp=4", m, 0, 4, NULL);
    g_assert_cmpuint(first_rank_of(p, m, "model.layers.29.input_layernorm.weight"), ==, 1);
    g_assert_cmpuint(first_rank_of(p, m, "model.layers.30.input_layernorm.weight"), ==, 2);
    g_assert_cmpuint(first_rank_of(p, m, "model.layers.45.input_layernorm.weight"), ==, 2);
    g_assert_cmpuint(first_rank_of(p, m, "model.layers.46.input_layernorm.weight"), ==, 3);
    g_assert_cmpuint(first_rank_of(p, m, "lm_head.weight"), ==, 3);
    /* vLLM replicas: replica 1 stage 0 starts at rank tp·pp = 8. */
    g_autoptr(GPtrArray) vp = resolve("vllm:tp=2,pp=4,dp=2", m, 0, 16, NULL);
    const RsLayout *emb = layout_of(vp, m, "model.embed_tokens.weight");
    g_assert_cmpuint(rs_layout_get_n_ranks(emb), ==, 4);
    g_assert_cmpuint(rs_layout_get_rank(emb, 2), ==, 8);

    /* MTP layers go to the last stage. */
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_data_find("models", "deepseek-v3", &error);
    RsModelOptions opts = {.include_mtp = TRUE};
    g_autoptr(RsModel) mtp = rs_model_load_file(path, &opts, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) ml = resolve("megatron:pp=4", mtp, 0, 4, NULL);
    g_assert_cmpuint(first_rank_of(ml, mtp, "model.layers.61.eh_proj.weight"), ==, 3);
    g_assert_cmpuint(first_rank_of(ml, mtp, "model.layers.61.embed_tokens.weight"), ==, 3);

    /* Errors: counts that do not add up, virtual stages that do not divide. */
    const char *const bad[] = {"megatron:pp=4,pp-layers=3,28,15",
                               "megatron:pp=4,pp-layers=3,28,15,14", "megatron:pp=4,vpp=2",
                               "vllm:pp=2,pp-layers=30,30"};
    const char *const fragment[] = {"pp-layers has 3 entries",
                                    "add up to 60 layers but DeepSeek-V3 has 61",
                                    "61 layers do not split into pp x vpp = 8",
                                    "pp-layers must give 2 stages"};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(RsConvention) c = rs_convention_parse(bad[i], &error);
        g_assert_no_error(error);
        g_autofree guint32 *gpus = g_new(guint32, rs_convention_get_world_size(c));
        for (guint k = 0; k < rs_convention_get_world_size(c); k++)
            gpus[k] = k;
        GPtrArray *out = NULL;
        g_assert_false(rs_convention_resolve(c, m, gpus, (guint)rs_convention_get_world_size(c),
                                             &out, NULL, &error));
        g_assert_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_MODEL);
        if (strstr(error->message, fragment[i]) == NULL)
            g_error("\"%s\" lacks \"%s\"", error->message, fragment[i]);
        g_clear_error(&error);
    }
}

/* A tied embedding (a small Llama with tie_word_embeddings) is held by the first and the
 * last stage: legitimate replicas. */
static void
test_tied_embedding(void)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "name: tiny\nfamily: llama\nhidden_size: 64\nintermediate_size: 128\n"
                       "num_hidden_layers: 4\nnum_attention_heads: 4\nnum_key_value_heads: 2\n"
                       "vocab_size: 1000\ntie_word_embeddings: true\n";
    g_autofree char *dir = g_dir_make_tmp("rs-conv-XXXXXX", &error);
    g_autofree char *path = g_build_filename(dir, "tiny.yaml", NULL);
    g_assert_true(g_file_set_contents(path, yaml, -1, &error));
    g_autoptr(RsModel) m = rs_model_load_file(path, NULL, &error);
    g_assert_no_error(error);
    g_assert_true(rs_model_get_tie_embeddings(m));
    g_assert_cmpint(rs_model_find_tensor(m, "lm_head.weight"), ==, -1);
    g_autoptr(GPtrArray) l = resolve("megatron:tp=2,pp=2", m, 0, 4, NULL);
    const RsLayout *emb = layout_of(l, m, "model.embed_tokens.weight");
    g_assert_cmpuint(rs_layout_get_n_ranks(emb), ==, 4); /* stage 0: 0,1; stage 1: 2,3 */
    /* Vocabulary padded to 128·2 = 256: 1024 rows, 512 per tp rank; rank 3 holds the real
     * rows 512..999 and 24 padding rows. */
    const gint64 lo[] = {512, 0}, hi[] = {1000, 64};
    assert_box(emb, 3, lo, hi);
    assert_box(emb, 1, lo, hi);
    g_assert_cmpuint(rs_layout_get_local_n_elems(emb, 3), ==, 512 * 64);
    g_autoptr(GPtrArray) v = resolve("vllm:pp=2", m, 0, 2, NULL);
    g_assert_cmpuint(rs_layout_get_n_ranks(layout_of(v, m, "model.embed_tokens.weight")), ==, 2);
    g_unlink(path);
    g_rmdir(dir);
}

/* SGLang: dp-attention splits attention over attn_tp and replicates the embedding;
 * experts over ep × moe_tp. */
static void
test_sglang(void)
{
    g_autoptr(RsModel) m = load("deepseek-v3");
    g_autoptr(GPtrArray) l = resolve("sglang:tp=8,dp=2,dp-attention,ep=4", m, 0, 8, NULL);
    /* attn_tp = 4: GPU 5 is attn_dp 1, attn_tp 1: q_b_proj rows 6144..12287. */
    const RsLayout *qb = layout_of(l, m, "model.layers.0.self_attn.q_b_proj.weight");
    const gint64 lo[] = {6144, 0}, hi[] = {12288, 1536};
    assert_box(qb, 5, lo, hi);
    assert_box(qb, 1, lo, hi);
    const RsLayout *emb = layout_of(l, m, "model.embed_tokens.weight");
    const gint64 elo[] = {0, 0}, ehi[] = {129280, 7168};
    assert_box(emb, 6, elo, ehi);
    /* Dense MLP over all 8 tp ranks: 18432 / 8 = 2304 rows. */
    const RsLayout *up = layout_of(l, m, "model.layers.0.mlp.up_proj.weight");
    const gint64 ulo[] = {2304 * 7, 0}, uhi[] = {2304 * 8, 7168};
    assert_box(up, 7, ulo, uhi);
    /* Experts: ep=4, moe_tp=2: GPU 5 is ep 2, moe_tp 1: experts 128..191, rows 1024..2047. */
    const RsLayout *down = layout_of(l, m, "model.layers.3.mlp.experts.down_proj.weight");
    const gint64 dlo[] = {128, 0, 1024}, dhi[] = {192, 7168, 2048};
    assert_box(down, 5, dlo, dhi);
    g_autoptr(GPtrArray) plain = resolve("sglang:tp=4", m, 0, 8, NULL);
    g_assert_cmpuint(rs_layout_get_n_ranks(layout_of(plain, m, "lm_head.weight")), ==, 8);
}

/* Parameter syntax: switches, lists, merging and formatting. */
static void
test_params(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsConvention) c = rs_convention_parse("megatron:tp=2,pp-layers=3,4,4,5,vpp=2",
                                                    &error);
    g_assert_no_error(error);
    guint n;
    const gint64 *list = rs_convention_get_list(c, "pp-layers", &n);
    g_assert_cmpuint(n, ==, 4);
    g_assert_cmpint(list[3], ==, 5);
    g_assert_cmpint(rs_convention_get(c, "vpp"), ==, 2);
    g_autofree char *text = rs_convention_format(c);
    g_assert_cmpstr(text, ==, "megatron tp=2 vpp=2 pp-layers=3,4,4,5");
    g_autoptr(RsConvention) v = rs_convention_parse("vllm:tp=8,ep", &error);
    g_assert_cmpint(rs_convention_get(v, "ep"), ==, 1);
    g_autoptr(RsConvention) off = rs_convention_parse("vllm:ep=off,tp=8", &error);
    g_assert_cmpint(rs_convention_get(off, "ep"), ==, 0);
    g_assert_null(rs_convention_parse("vllm:ep=maybe", &error));
    g_assert_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM);
    g_clear_error(&error);
    g_assert_null(rs_convention_parse("megatron:pp-layers=3,x", &error));
    g_assert_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM);
    g_clear_error(&error);
    g_assert_null(rs_convention_parse("fsdp2:ep=2", &error));
    g_assert_nonnull(strstr(error->message, "known: dp, replicate, tp"));
    g_clear_error(&error);
    g_assert_cmpuint(rs_convention_get_world_size(c), ==, 2);
    RsConvention *merged = rs_convention_parse("megatron:tp=4", &error);
    rs_convention_merge(&merged, c);
    g_assert_cmpint(rs_convention_get(merged, "tp"), ==, 2);
    rs_convention_get_list(merged, "pp-layers", &n);
    g_assert_cmpuint(n, ==, 4);
    rs_convention_free(merged);
}

/* Stored FP8 block scales follow their weight in block coordinates (DeepSeek-V3, vLLM tp=8:
 * the experts' intermediate dim 2048 = 16 blocks of 128, 2 blocks per rank). */
static void
test_block_scales_follow_weights(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_data_find("models", "deepseek-v3", &error);
    RsModelOptions options = {.storage = RS_MODEL_STORAGE_CHECKPOINT};
    g_autoptr(RsModel) m = rs_model_load_file(path, &options, &error);
    g_assert_no_error(error);
    g_autoptr(RsConvention) conv = rs_convention_parse("vllm:tp=8", &error);
    guint32 gpus[8];
    for (guint i = 0; i < 8; i++)
        gpus[i] = i;
    g_autoptr(GPtrArray) layouts = NULL;
    g_assert_true(rs_convention_resolve(conv, m, gpus, 8, &layouts, NULL, &error));
    g_assert_no_error(error);
    gint w = rs_model_find_tensor(m, "model.layers.3.mlp.experts.down_proj.weight");
    gint s = rs_model_find_tensor(m, "model.layers.3.mlp.experts.down_proj.weight_scale_inv");
    g_assert_cmpint(w, >=, 0);
    g_assert_cmpint(rs_model_get_tensor(m, (guint)s)->scale_of, ==, w);
    /* down_proj [256, 7168, 2048] is split on its input dim: rank 5 holds columns
     * 1280..1535, so scales [256, 56, 16] columns 10..11. */
    const RsLayout *scales = g_ptr_array_index(layouts, s);
    gint idx = rs_layout_find_rank(scales, 5);
    guint n;
    const RsLocalBox *b = rs_layout_get_boxes(scales, (guint)idx, &n);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpint(b[0].box.lo[0], ==, 0);
    g_assert_cmpint(b[0].box.hi[0], ==, 256);
    g_assert_cmpint(b[0].box.lo[1], ==, 0);
    g_assert_cmpint(b[0].box.hi[1], ==, 56);
    g_assert_cmpint(b[0].box.lo[2], ==, 10);
    g_assert_cmpint(b[0].box.hi[2], ==, 12);
    /* tp=32 cuts the blocks (2048 / 32 = 64 rows): refused, as vLLM refuses it. */
    g_autoptr(RsConvention) tp32 = rs_convention_parse("vllm:tp=32", &error);
    guint32 many[32];
    for (guint i = 0; i < 32; i++)
        many[i] = i;
    g_autoptr(GPtrArray) bad = NULL;
    g_assert_false(rs_convention_resolve(tp32, m, many, 32, &bad, NULL, &error));
    g_assert_nonnull(strstr(error->message, "not aligned to blocks"));
}

/* One path to layouts: rs_scenario_build_side() (reshard layout) resolves a side exactly as
 * rs_scenario_build() (simulate, plan, run) does. Llama-3.1-8B, megatron tp=2 on GPUs 4-5:
 * the down_proj [4096, 14336] is row-parallel, so GPU 5 holds columns 7168..14335 at local
 * offset 0; both paths give the same boxes for every tensor and rank. */
static void
test_scenario_one_path(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsScenario) s = rs_scenario_new();
    s->model = g_strdup("llama-3.1-8b");
    s->topology = g_strdup("dgx-h100");
    s->has_layer_range = TRUE;
    s->first_layer = s->last_layer = 0;
    s->train = rs_convention_parse("megatron:tp=2", &error);
    s->infer = rs_convention_parse("vllm:tp=2", &error);
    g_assert_no_error(error);
    const guint32 train_gpus[] = {4, 5}, infer_gpus[] = {8, 9};
    s->train_gpus = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_array_append_vals(s->train_gpus, train_gpus, 2);
    s->infer_gpus = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_array_append_vals(s->infer_gpus, infer_gpus, 2);

    RsScenarioSideBuild side;
    g_assert_true(rs_scenario_build_side(s, RS_SCENARIO_SIDE_TRAIN, &side, &error));
    g_assert_no_error(error);
    RsScenarioBuild whole;
    g_assert_true(rs_scenario_build(s, &whole, &error));
    g_assert_no_error(error);
    g_assert_nonnull(side.topology);

    gint down = rs_model_find_tensor(side.model, "model.layers.0.mlp.down_proj.weight");
    g_assert_cmpint(down, >=, 0);
    const RsLayout *l = g_ptr_array_index(side.layouts.layouts, down);
    g_assert_cmpuint(rs_layout_get_n_ranks(l), ==, 2);
    g_assert_cmpuint(rs_layout_get_rank(l, 1), ==, 5);
    guint n_boxes;
    const RsLocalBox *b = rs_layout_get_boxes(l, 1, &n_boxes);
    g_assert_cmpuint(n_boxes, ==, 1);
    g_assert_cmpint(b[0].box.lo[0], ==, 0);
    g_assert_cmpint(b[0].box.hi[0], ==, 4096);
    g_assert_cmpint(b[0].box.lo[1], ==, 7168);
    g_assert_cmpint(b[0].box.hi[1], ==, 14336);
    g_assert_cmpuint(b[0].offset_elems, ==, 0);

    g_assert_cmpuint(side.layouts.layouts->len, ==, rs_refit_get_n_tensors(whole.refit));
    for (guint t = 0; t < side.layouts.layouts->len; t++) {
        const RsLayout *a = g_ptr_array_index(side.layouts.layouts, t);
        const RsLayout *w = rs_refit_get_tensor(whole.refit, t)->src;
        g_assert_cmpuint(rs_layout_get_n_ranks(a), ==, rs_layout_get_n_ranks(w));
        for (guint r = 0; r < rs_layout_get_n_ranks(a); r++) {
            guint na, nw;
            const RsLocalBox *ba = rs_layout_get_boxes(a, r, &na);
            const RsLocalBox *bw = rs_layout_get_boxes(w, r, &nw);
            g_assert_cmpuint(na, ==, nw);
            for (guint k = 0; k < na; k++) {
                g_assert_true(rs_box_is_equal(&ba[k].box, &bw[k].box));
                g_assert_cmpuint(ba[k].offset_elems, ==, bw[k].offset_elems);
            }
        }
    }
    rs_scenario_side_build_clear(&side);
    rs_scenario_build_clear(&whole);

    /* Without a topology any GPU ids serve; a GPU listed twice is refused as by simulate. */
    g_free(s->topology);
    s->topology = NULL;
    g_array_index(s->train_gpus, guint32, 1) = 4;
    rs_scenario_set_where(&s->train_gpus_where, "--gpus");
    g_assert_false(rs_scenario_build_side(s, RS_SCENARIO_SIDE_TRAIN, &side, &error));
    g_assert_error(error, RS_SCENARIO_ERROR, RS_SCENARIO_ERROR_INVALID);
    g_assert_cmpstr(error->message, ==, "--gpus: train.gpus: GPU 4 is listed twice");
}


/* Vision towers move in the refit too, each convention holding them as the frameworks do:
 * the encoder and projector sit with the embedding on the first pipeline stage and are
 * whole on every tensor-parallel rank (Megatron, vLLM, SGLang: replicated roles, see
 * models/model-family-vision.c); FSDP2 shards them on dim 0 like every parameter. Kimi-K2.5
 * at width 1/64: MoonViT width 18, projector [112, 72]. */
static void
test_vision_tower(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_data_find("models", "kimi-k2.5", &error);
    g_assert_no_error(error);
    RsModelOptions options = {.scale = 64};
    g_autoptr(RsModel) m = rs_model_load_file(path, &options, &error);
    g_assert_no_error(error);
    const char *const tensors[] = {"vision_tower.encoder.blocks.0.wqkv.weight",
                                   "vision_tower.patch_embed.pos_emb.weight",
                                   "mm_projector.proj.2.weight"};
    const struct {
        const char *spec;
        guint n_gpus;
        guint n_holding; /* GPUs 0 .. n_holding-1 hold it whole, the others nothing */
    } cases[] = {
        {"megatron:tp=2,pp=2", 8, 4},
        {"vllm:tp=4", 4, 4},
        {"sglang:tp=4", 4, 4},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autoptr(GPtrArray) l = resolve(cases[c].spec, m, 0, cases[c].n_gpus, NULL);
        for (guint t = 0; t < G_N_ELEMENTS(tensors); t++) {
            const RsLayout *layout = layout_of(l, m, tensors[t]);
            const RsTensorSpec *spec =
                rs_model_get_tensor(m, (guint)rs_model_find_tensor(m, tensors[t]));
            g_assert_cmpint(spec->layer, ==, -1);
            gint64 lo[RS_MAX_DIMS] = {0};
            for (guint32 gpu = 0; gpu < cases[c].n_gpus; gpu++) {
                if (gpu < cases[c].n_holding) {
                    assert_box(layout, gpu, lo, spec->shape);
                    continue;
                }
                gint idx = rs_layout_find_rank(layout, gpu);
                guint n = 0;
                if (idx >= 0)
                    rs_layout_get_boxes(layout, (guint)idx, &n);
                g_assert_cmpuint(n, ==, 0);
            }
        }
    }
    /* FSDP2 dp=4: the projector's 112 rows in chunks of 28. */
    g_autoptr(GPtrArray) f = resolve("fsdp2:dp=4", m, 0, 4, NULL);
    const RsLayout *proj = layout_of(f, m, "mm_projector.proj.2.weight");
    for (guint32 gpu = 0; gpu < 4; gpu++) {
        const gint64 lo[2] = {28 * gpu, 0}, hi[2] = {28 * (gpu + 1), 72};
        assert_box(proj, gpu, lo, hi);
    }
}

/* --- fused gate_up_proj (RS_ROLE_EXPERT_GATE_UP_FUSED) --- */

/* @name of the @scale-scaled model @model, decoder layer 0 only. */
static RsModel *
load_layer0(const char *model, guint scale)
{
    RsModelOptions opts = {
        .has_layer_range = TRUE, .first_layer = 0, .last_layer = 0, .scale = scale};
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_data_find("models", model, &error);
    g_assert_no_error(error);
    RsModel *m = rs_model_load_file(path, &opts, &error);
    g_assert_no_error(error);
    return m;
}

/* Asserts that @gpu holds exactly @n boxes of 3-D @layout, box i [lo[i], hi[i]) per dim at
 * local offset @offset[i] elements. */
static void
assert_boxes3(const RsLayout *layout, guint32 gpu, guint n, const gint64 (*lo)[3],
              const gint64 (*hi)[3], const guint64 *offset)
{
    gint idx = rs_layout_find_rank(layout, gpu);
    if (idx < 0)
        g_error("GPU %u does not hold the tensor", gpu);
    guint n_boxes;
    const RsLocalBox *b = rs_layout_get_boxes(layout, (guint)idx, &n_boxes);
    g_assert_cmpuint(n_boxes, ==, n);
    for (guint i = 0; i < n; i++) {
        for (guint d = 0; d < 3; d++) {
            g_assert_cmpint(b[i].box.lo[d], ==, lo[i][d]);
            g_assert_cmpint(b[i].box.hi[d], ==, hi[i][d]);
        }
        g_assert_cmpuint(b[i].offset_elems, ==, offset[i]);
    }
}

/* Llama-4-Scout at scale 1024: E = 16, H = 5, I = 8, gate_up_proj [16, 5, 16] with gate
 * columns 0-7 and up columns 8-15 of dim 2. Under vllm tp=2 (FusedMoE w13 [gate_local;
 * up_local], fused_moe/layer.py _load_w13), megatron tp=2 (etp 2, linear_fc1) and sglang
 * tp=2 (moe_tp 2), GPU r holds every expert's gate columns [4r, 4r+4) at local column 0
 * and up columns [8+4r, 12+4r) at local column 4 of a [16, 5, 8] buffer; with experts
 * over ep (vllm ep, megatron ep=2, sglang ep=2) and under fsdp2 dp=2, GPU r holds experts
 * [8r, 8r+8) whole. */
static void
test_gate_up_fused_llama4(void)
{
    g_autoptr(RsModel) m = load_layer0("llama-4-scout-17b-16e", 1024);
    const char *name = "language_model.model.layers.0.feed_forward.experts.gate_up_proj";
    const RsTensorSpec *t = rs_model_get_tensor(m, (guint)rs_model_find_tensor(m, name));
    g_assert_cmpint(t->shape[0], ==, 16);
    g_assert_cmpint(t->shape[1], ==, 5);
    g_assert_cmpint(t->shape[2], ==, 16);
    g_assert_cmpint(t->role, ==, RS_ROLE_EXPERT_GATE_UP_FUSED);
    const char *const halves[] = {"vllm:tp=2", "megatron:tp=2", "sglang:tp=2"};
    for (guint k = 0; k < G_N_ELEMENTS(halves); k++) {
        g_autoptr(GPtrArray) l = resolve(halves[k], m, 0, 2, NULL);
        const RsLayout *gu = layout_of(l, m, name);
        for (guint32 r = 0; r < 2; r++) {
            const gint64 lo[2][3] = {{0, 0, 4 * r}, {0, 0, 8 + 4 * r}};
            const gint64 hi[2][3] = {{16, 5, 4 * r + 4}, {16, 5, 12 + 4 * r}};
            const guint64 offset[2] = {0, 4};
            assert_boxes3(gu, r, 2, lo, hi, offset);
            const gint64 *shape = rs_layout_get_buffer_shape(gu, (guint)rs_layout_find_rank(gu, r));
            g_assert_cmpint(shape[0], ==, 16);
            g_assert_cmpint(shape[1], ==, 5);
            g_assert_cmpint(shape[2], ==, 8);
            g_assert_cmpuint(rs_layout_get_held_n_elems(gu, (guint)rs_layout_find_rank(gu, r)), ==,
                             16 * 5 * 8);
        }
    }
    const char *const experts[] = {"vllm:tp=2,ep", "megatron:tp=2,ep=2,etp=1", "sglang:tp=2,ep=2",
                                   "fsdp2:dp=2"};
    for (guint k = 0; k < G_N_ELEMENTS(experts); k++) {
        g_autoptr(GPtrArray) l = resolve(experts[k], m, 0, 2, NULL);
        const RsLayout *gu = layout_of(l, m, name);
        for (guint32 r = 0; r < 2; r++) {
            const gint64 lo[3] = {8 * r, 0, 0}, hi[3] = {8 * r + 8, 5, 16};
            assert_box(gu, r, lo, hi);
        }
    }
}

/* Qwen3.5 MoE at scale 128: E = 512, I = 8, H = 32, mlp.experts.gate_up_proj [512, 16, 32]
 * with gate rows 0-7 and up rows 8-15 of dim 1. Under vllm tp=2, megatron tp=2 and sglang
 * tp=2 GPU r holds gate rows [4r, 4r+4) at local offset 0 and up rows [8+4r, 12+4r) at
 * local offset 4 · 32 = 128 elements of a [512, 8, 32] buffer. */
static void
test_gate_up_fused_qwen3_5(void)
{
    g_autoptr(RsModel) m = load_layer0("qwen3.5-397b-a17b", 128);
    const char *name = "model.language_model.layers.0.mlp.experts.gate_up_proj";
    const RsTensorSpec *t = rs_model_get_tensor(m, (guint)rs_model_find_tensor(m, name));
    g_assert_cmpint(t->shape[0], ==, 512);
    g_assert_cmpint(t->shape[1], ==, 16);
    g_assert_cmpint(t->shape[2], ==, 32);
    const char *const halves[] = {"vllm:tp=2", "megatron:tp=2", "sglang:tp=2"};
    for (guint k = 0; k < G_N_ELEMENTS(halves); k++) {
        g_autoptr(GPtrArray) l = resolve(halves[k], m, 0, 2, NULL);
        const RsLayout *gu = layout_of(l, m, name);
        for (guint32 r = 0; r < 2; r++) {
            const gint64 lo[2][3] = {{0, 4 * r, 0}, {0, 8 + 4 * r, 0}};
            const gint64 hi[2][3] = {{512, 4 * r + 4, 32}, {512, 12 + 4 * r, 32}};
            const guint64 offset[2] = {0, 4 * 32};
            assert_boxes3(gu, r, 2, lo, hi, offset);
        }
    }
}

/* A colocated refit of Llama-4-Scout layer 0's gate_up_proj at scale 64 (E = 16, H = 80,
 * I = 128, [16, 80, 256] bf16) from megatron tp=2 ep=4 (GPU g = 2·ep_rank + etp_rank:
 * experts [4·(g/2), 4·(g/2) + 4), gate and up columns chunk g mod 2 of 2) to vllm tp=8 on
 * the same GPUs 0-7 (GPU g: every expert, gate and up columns chunk g of 8). GPU g needs
 * E·H·2I/8 elements; chunk g of 8 lies in chunk g/4 of 2, so GPUs with g/4 = g mod 2
 * (0, 2, 5, 7) already hold a quarter of them (their 4 of 16 experts). Bytes moved =
 * 2 · E·H·2I · (8 − 4/4) / 8 = 2 · 16·80·256 · 7/8 = 573440. Held whole on every rank
 * (the role it had before, expert-replicated), each vLLM rank needed the whole tensor and
 * held a quarter: 8 · 2·E·H·2I · 3/4 = 3932160 bytes. */
static void
test_gate_up_fused_refit_bytes(void)
{
    g_autoptr(RsModel) m = load_layer0("llama-4-scout-17b-16e", 64);
    const char *name = "language_model.model.layers.0.feed_forward.experts.gate_up_proj";
    gint idx = rs_model_find_tensor(m, name);
    const RsTensorSpec *t = rs_model_get_tensor(m, (guint)idx);
    g_assert_cmpint(t->shape[0], ==, 16);
    g_assert_cmpint(t->shape[1], ==, 80);
    g_assert_cmpint(t->shape[2], ==, 256);
    g_autoptr(GPtrArray) src = resolve("megatron:tp=2,ep=4", m, 0, 8, NULL);
    g_autoptr(GPtrArray) dst = resolve("vllm:tp=8", m, 0, 8, NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, name, RS_DTYPE_BF16, g_ptr_array_index(src, idx),
                                      g_ptr_array_index(dst, idx), &error));
    g_assert_no_error(error);
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    if (!rs_plan_check(plan, refit, &error))
        g_error("%s", error->message);
    const guint64 E = 16, H = 80, I = 128;
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, 2 * E * H * 2 * I * 7 / 8);
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, 573440);
    /* megatron tp=8 (etp 8) to vllm tp=8: the same [gate_local; up_local] chunks, so on the
     * same GPUs nothing moves and on GPUs 8-15 each element moves once, 2·E·H·2I bytes
     * (held whole, each of the 8 ranks would take the whole tensor: 8 times that). */
    g_autoptr(GPtrArray) mg8 = resolve("megatron:tp=8", m, 0, 8, NULL);
    g_autoptr(GPtrArray) colocated = resolve("vllm:tp=8", m, 0, 8, NULL);
    g_autoptr(GPtrArray) apart = resolve("vllm:tp=8", m, 8, 8, NULL);
    GPtrArray *const dsts[2] = {colocated, apart};
    const guint64 expected[2] = {0, 2 * E * H * 2 * I};
    for (guint k = 0; k < 2; k++) {
        g_autoptr(RsRefit) r8 = rs_refit_new();
        g_assert_true(rs_refit_add_tensor(r8, name, RS_DTYPE_BF16, g_ptr_array_index(mg8, idx),
                                          g_ptr_array_index(dsts[k], idx), &error));
        g_autoptr(RsPlan) p8 = rs_plan_build(r8, RS_STRATEGY_DIRECT, &error);
        g_assert_no_error(error);
        g_assert_true(rs_plan_check(p8, r8, &error));
        g_assert_cmpuint(rs_plan_get_bytes_moved(p8), ==, expected[k]);
    }
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/convention/error-key-and-where", test_error_key_and_where);
    g_test_add_func("/convention/megatron/deepseek-v3", test_megatron_deepseek);
    g_test_add_func("/convention/vllm/deepseek-v3", test_vllm_deepseek);
    g_test_add_func("/convention/vllm/kv-replication", test_vllm_kv_replication);
    g_test_add_func("/convention/vllm/gpt-oss-mxfp4-blocks", test_vllm_gpt_oss_mxfp4);
    g_test_add_func("/convention/vllm/gpt-oss-stored-blocks", test_vllm_gpt_oss_stored_blocks);
    for (guint i = 0; i < G_N_ELEMENTS(error_cases); i++) {
        g_autofree char *path = g_strdup_printf("/convention/errors/%u", i);
        g_test_add_data_func(path, &error_cases[i], test_error_case);
    }
    g_test_add_func("/convention/parse-errors", test_parse_errors);
    for (guint i = 0; i < G_N_ELEMENTS(table); i++) {
        g_autofree char *path = g_strdup_printf("/convention/table/%s", table[i].name);
        g_test_add_data_func(path, &table[i], test_table_row);
    }
    for (guint i = 0; i < G_N_ELEMENTS(refit_cases); i++) {
        g_autofree char *path = g_strdup_printf("/convention/refit/%s", refit_cases[i].name);
        g_test_add_data_func(path, &refit_cases[i], test_refit_case);
    }
    g_test_add_func("/convention/pipeline-stages", test_pipeline_stages);
    g_test_add_func("/convention/tied-embedding", test_tied_embedding);
    g_test_add_func("/convention/sglang", test_sglang);
    g_test_add_func("/convention/scenario/one-path", test_scenario_one_path);
    g_test_add_func("/convention/params", test_params);
    g_test_add_func("/convention/block-scales-follow-weights", test_block_scales_follow_weights);
    g_test_add_func("/convention/vision-tower", test_vision_tower);
    g_test_add_func("/convention/gate-up-fused/llama4", test_gate_up_fused_llama4);
    g_test_add_func("/convention/gate-up-fused/qwen3.5", test_gate_up_fused_qwen3_5);
    g_test_add_func("/convention/gate-up-fused/refit-bytes", test_gate_up_fused_refit_bytes);
    return g_test_run();
}

/* test-convention.c — megatron and vllm layouts of real models, worked out by hand from
 * the frameworks' rules (see sim/convention.h), and the errors a user meets. */
#include "sim/convention.h"
#include "sim/data.h"

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

/* Llama-3.1-8B, megatron tp=2 pp=2 on 8 GPUs (dp=2). */
static void
test_megatron_llama(void)
{
    g_autoptr(RsModel) m = load("llama-3.1-8b");
    g_autoptr(GPtrArray) l = resolve("megatron:tp=2,pp=2", m, 0, 8, NULL);
    /* Rank order tp-dp-pp: GPU = tp + 2·dp + 4·pp. */
    const RsLayout *q = layout_of(l, m, "model.layers.0.self_attn.q_proj.weight");
    const gint64 q_lo1[] = {2048, 0}, q_hi1[] = {4096, 4096};
    assert_box(q, 1, q_lo1, q_hi1);
    assert_box(q, 3, q_lo1, q_hi1);
    g_assert_cmpint(rs_layout_find_rank(q, 4), ==, -1);
    const RsLayout *o = layout_of(l, m, "model.layers.16.self_attn.o_proj.weight");
    const gint64 o_lo[] = {0, 0}, o_hi[] = {4096, 2048};
    assert_box(o, 4, o_lo, o_hi);
    assert_box(o, 6, o_lo, o_hi);
    const RsLayout *head = layout_of(l, m, "lm_head.weight");
    const gint64 h_lo[] = {64128, 0}, h_hi[] = {128256, 4096};
    assert_box(head, 7, h_lo, h_hi);
}

static void
test_vllm_deepseek(void)
{
    g_autoptr(RsModel) m = load("deepseek-v3");
    g_autoptr(GPtrArray) l = resolve("vllm:tp=32,dp=8", m, 256, 256, NULL);
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
    {"vllm:tp=3", "deepseek-v3", 3, RS_CONVENTION_ERROR_MODEL,
     "tp=3 and the 128 attention heads"},
    {"vllm:tp=16", "llama-3.1-8b", 48, RS_CONVENTION_ERROR_WORLD_SIZE,
     "tp x dp = 32 ranks, but 48 GPUs"},
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
        /* An explicit dp that does not match. */
        g_assert_true(rs_convention_set(conv, "dp", 2, &error));
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

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/convention/megatron/deepseek-v3", test_megatron_deepseek);
    g_test_add_func("/convention/megatron/llama-tp2-pp2", test_megatron_llama);
    g_test_add_func("/convention/vllm/deepseek-v3", test_vllm_deepseek);
    g_test_add_func("/convention/vllm/kv-replication", test_vllm_kv_replication);
    for (guint i = 0; i < G_N_ELEMENTS(error_cases); i++) {
        g_autofree char *path = g_strdup_printf("/convention/errors/%u", i);
        g_test_add_data_func(path, &error_cases[i], test_error_case);
    }
    g_test_add_func("/convention/parse-errors", test_parse_errors);
    return g_test_run();
}

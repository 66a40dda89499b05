/* convention-vllm.c — vLLM inference (convention.h states the rules): ranks
 * (dp_rank·pp + pp_rank)·tp + tp_rank, layers over pp stages by get_pp_indices or
 * pp-layers, a [dp, tp] mesh per stage with qkv_proj, gate_up_proj and w13 fused, KV heads
 * replicated when tp exceeds them, the vocabulary padded to 64, and with ep whole experts
 * over the dp·tp ranks of a stage by determine_expert_map's "linear" rule.
 *
 * Sources: vllm/distributed/parallel_state.py (initialize_model_parallel),
 * vllm/distributed/utils.py (get_pp_indices), model_executor/layers/linear.py,
 * layers/vocab_parallel_embedding.py, layers/fused_moe/layer.py, models/deepseek_v2.py,
 * models/gpt_oss.py. */
#include "layout/convention-private.h"

#include <string.h>

typedef struct {
    gint64 tp, dp, pp;
    gboolean ep;
    RsPipeline pipe;
    guint32 **stage_ranks; /* per stage: dp·tp ranks, ordered (dp_rank, tp_rank) */
} Vllm;

/* vLLM get_pp_indices: L // pp each, the remainder added one each to partitions[-2],
 * partitions[-3], … (vllm/distributed/utils.py); or pp-layers
 * (VLLM_PP_LAYER_PARTITION). */
static gboolean
vllm_pipeline(RsResolver *r, guint pp, RsPipeline *p, GError **error)
{
    guint n_layers = rs_model_get_n_layers(r->model);
    p->pp = pp;
    p->n_layers = n_layers;
    guint n_list;
    const gint64 *list = rs_convention_get_list(r->conv, "pp-layers", &n_list);
    g_autofree gint64 *counts = g_new0(gint64, pp);
    if (list != NULL) {
        gint64 sum = 0;
        for (guint i = 0; i < n_list; i++)
            sum += list[i];
        if (n_list != pp || sum != n_layers)
            return rs_resolver_fail_model(
                r, error, "pp-layers must give %u stages adding up to the %u layers of %s", pp,
                n_layers, rs_model_get_name(r->model));
        memcpy(counts, list, pp * sizeof *counts);
    } else {
        for (guint s = 0; s < pp; s++)
            counts[s] = n_layers / pp;
        guint rem = n_layers % pp;
        for (guint i = 2; i < rem + 2; i++)
            counts[pp - i]++;
    }
    rs_pipeline_from_counts(p, counts, pp);
    return TRUE;
}

/* Per-head projections that vLLM keeps unfused: q_b_proj, kv_b_proj (MLA) or a q/k/v
 * whose siblings are missing. */
static gboolean
vllm_unfused_heads(RsResolver *r, const RsTensorSpec *t, RsMeshChoice *c, guint tp_dim, gint64 tp,
                   const guint32 *ranks, gint64 outer, GError **error)
{
    if (t->n_heads == 0 || t->n_heads % tp == 0) {
        rs_mesh_choice_shard(c, tp_dim, 0);
        return TRUE;
    }
    if (t->kv_heads && tp % t->n_heads == 0) {
        /* Each KV head on tp / n_kv consecutive ranks: split tp into [n_kv, tp / n_kv]
         * and shard only over the first. */
        const guint sizes[3] = {(guint)outer, t->n_heads, (guint)(tp / t->n_heads)};
        const char *const names[3] = {"dp", "tp_kv", "tp_replica"};
        rs_mesh_choice_init(c, ranks, 3, sizes, names);
        rs_mesh_choice_shard(c, 1, 0);
        return TRUE;
    }
    return rs_resolver_fail_model(
        r, error, "tp=%" G_GINT64_FORMAT " and the %u %sheads of %s: %s", tp, t->n_heads,
        t->kv_heads ? "key/value " : "attention ", t->name,
        t->kv_heads ? "neither divides the other" : "tp must divide the head count");
}

/* Routed experts (layers/fused_moe/layer.py), @c already on the stage's [dp, tp] mesh
 * over @ranks: with ep, whole experts over the dp·tp ranks split by determine_expert_map's
 * "linear" rule (w13 fused whole, [E, out] biases following their experts); without it
 * every rank holds every expert, w13 as [gate_local; up_local] and w2 Shard on I. A
 * checkpoint's fused gate_up_proj (RS_ROLE_EXPERT_GATE_UP_FUSED) is that same w13:
 * FusedMoE.weight_loader / _load_w13 narrow gate and up each to shard_size =
 * intermediate_size_per_partition at tp_rank · shard_size (models/llama4.py
 * load_moe_expert_weights transposes Llama-4's [E, H, 2I] and loads its halves as w1 and
 * w3), so the fused dim is a CONCAT of its two halves over tp. */
static void
vllm_choose_experts(RsResolver *r, guint index, const guint32 *ranks, RsMeshChoice *c)
{
    const Vllm *v = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    gboolean complete = rs_fuse_group_is_complete(r->model, index);
    if (v->ep) {
        const guint ep_size[1] = {(guint)(v->dp * v->tp)};
        const char *const ep_name[1] = {"ep"};
        rs_mesh_choice_init(c, ranks, 1, ep_size, ep_name);
        rs_mesh_choice_balanced(c, 0, 0);
        if (t->role == RS_ROLE_EXPERT_COLUMN && t->fuse == RS_FUSE_GATE_UP && complete)
            rs_mesh_choice_fuse(c, r->model, index, 1, G_MAXUINT, RS_FUSION_CONCAT, 1,
                                ".w13_weight");
    } else if (t->role == RS_ROLE_EXPERT_REPLICATED) {
        return; /* [E, out] biases: replicated, as the experts are */
    } else if (t->role == RS_ROLE_EXPERT_GATE_UP_FUSED) {
        rs_mesh_choice_segments(c, t, 1);
    } else if (t->role == RS_ROLE_EXPERT_ROW) {
        rs_mesh_choice_shard(c, 1, 2);
    } else if (t->fuse == RS_FUSE_GATE_UP && complete) {
        rs_mesh_choice_fuse(c, r->model, index, 1, 1, RS_FUSION_CONCAT, 1, ".w13_weight");
    } else {
        /* Including gpt-oss's interleaved gate_up_proj: vLLM slices it whole
         * (models/gpt_oss.py: narrow 2·tp_rank_start … 2·tp_rank_end). */
        rs_mesh_choice_shard(c, 1, 1);
    }
}

static gboolean
vllm_choose(RsResolver *r, guint index, RsMeshChoice *c, GError **error)
{
    const Vllm *v = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    guint stage = rs_pipeline_get_stage(&v->pipe, t->layer);
    const guint32 *ranks = v->stage_ranks[stage];
    const guint sizes[2] = {(guint)v->dp, (guint)v->tp};
    const char *const names[2] = {"dp", "tp"};
    gboolean complete = rs_fuse_group_is_complete(r->model, index);
    rs_mesh_choice_init(c, ranks, 2, sizes, names);
    switch (t->role) {
    case RS_ROLE_COLUMN_PARALLEL:
        if (t->fuse == RS_FUSE_QKV && complete) {
            const RsTensorSpec *q = rs_model_get_tensor(
                r->model, (guint)rs_model_find_fuse_sibling(r->model, index, 0));
            rs_mesh_choice_fuse(c, r->model, index, 0, 1, RS_FUSION_QKV,
                                q->n_heads ? q->shape[0] / q->n_heads : 1, ".qkv_proj.weight");
        } else if (t->fuse == RS_FUSE_GATE_UP && complete) {
            rs_mesh_choice_fuse(c, r->model, index, 0, 1, RS_FUSION_CONCAT, 1,
                                ".gate_up_proj.weight");
        } else {
            return vllm_unfused_heads(r, t, c, 1, v->tp, ranks, v->dp, error);
        }
        break;
    case RS_ROLE_VOCAB_PARALLEL:
        rs_mesh_choice_padded(c, 1, 0, 64);
        if (rs_convention_is_embedding(t) && rs_model_get_tie_embeddings(r->model) && v->pp > 1)
            c->copy_ranks = v->stage_ranks[v->pp - 1];
        break;
    case RS_ROLE_ROW_PARALLEL:
        rs_mesh_choice_shard(c, 1, 1);
        break;
    case RS_ROLE_REPLICATED:
        if (t->fuse == RS_FUSE_MLA_A && complete)
            rs_mesh_choice_fuse(c, r->model, index, 0, G_MAXUINT, RS_FUSION_CONCAT, 1,
                                ".fused_qkv_a_proj.weight");
        break;
    case RS_ROLE_NORM:
    case RS_ROLE_ROUTER:
    case RS_ROLE_COLUMN_SEGMENTED:
        break;
    case RS_ROLE_EXPERT_REPLICATED:
    case RS_ROLE_EXPERT_COLUMN:
    case RS_ROLE_EXPERT_ROW:
    case RS_ROLE_EXPERT_GATE_UP_FUSED:
        vllm_choose_experts(r, index, ranks, c);
        break;
    case RS_ROLE_N:
        g_assert_not_reached();
    }
    return TRUE;
}

static gboolean
vllm_resolve(RsConvention *conv, RsResolver *r, GError **error)
{
    Vllm v = {0};
    v.tp = rs_convention_get_or(conv, "tp", 1);
    v.pp = rs_convention_get_or(conv, "pp", 1);
    v.ep = rs_convention_get(conv, "ep") != 0;
    rs_convention_set_resolved(conv, "tp", v.tp);
    if (v.pp > 1)
        rs_convention_set_resolved(conv, "pp", v.pp);
    if (!rs_convention_derive_dp(conv, v.tp * v.pp, v.pp > 1 ? "tp x pp" : "tp", r->n_gpus, error))
        return FALSE;
    v.dp = rs_convention_get(conv, "dp");
    if (!rs_convention_check_world(conv, v.pp > 1 ? "tp x dp x pp" : "tp x dp", v.tp * v.dp * v.pp,
                                   r->n_gpus, error))
        return FALSE;
    r->desc = rs_convention_format(conv);
    if (!rs_resolver_check_all_heads(r, v.tp, TRUE, FALSE, error))
        return FALSE;
    if (!rs_resolver_check_pp(r, v.pp, error) || !vllm_pipeline(r, (guint)v.pp, &v.pipe, error)) {
        rs_pipeline_clear(&v.pipe);
        return FALSE;
    }
    /* Stage p of replica d is ranks (d·pp + p)·tp … + tp − 1. */
    v.stage_ranks = g_new0(guint32 *, v.pp);
    for (gint64 p = 0; p < v.pp; p++) {
        v.stage_ranks[p] = g_new(guint32, v.dp * v.tp);
        for (gint64 d = 0; d < v.dp; d++)
            for (gint64 k = 0; k < v.tp; k++)
                v.stage_ranks[p][d * v.tp + k] = r->gpus[(d * v.pp + p) * v.tp + k];
    }
    r->data = &v;
    gboolean ok = rs_resolver_lay_out_all(r, vllm_choose, error);
    for (gint64 d = 0; ok && d < v.dp; d++) {
        for (gint64 p = 0; p < v.pp; p++) {
            g_autofree char *ranks = rs_ranks_format(r->gpus + (d * v.pp + p) * v.tp, (guint)v.tp);
            g_autofree char *held = rs_pipeline_format_stage(&v.pipe, r->model, (guint)p, FALSE);
            g_string_append_printf(r->summary,
                                   "replica %" G_GINT64_FORMAT ", stage %" G_GINT64_FORMAT
                                   ": GPUs %s, tp=%" G_GINT64_FORMAT ", %s%s\n",
                                   d, p, ranks, v.tp, held,
                                   v.ep ? ", experts over ep = dp x tp" : "");
        }
    }
    for (gint64 p = 0; p < v.pp; p++)
        g_free(v.stage_ranks[p]);
    g_free(v.stage_ranks);
    rs_pipeline_clear(&v.pipe);
    r->data = NULL;
    return ok;
}

/* World = dp·pp·tp. */
static guint64
vllm_world_size(const RsConvention *conv)
{
    gint64 tp = rs_convention_get_or(conv, "tp", 1), dp = rs_convention_get_or(conv, "dp", 1);
    return (guint64)(tp * dp * rs_convention_get_or(conv, "pp", 1));
}

const RsConventionClass rs_convention_class_vllm = {
    "vllm",
    {{"tp", RS_PARAM_INT},
     {"dp", RS_PARAM_INT},
     {"pp", RS_PARAM_INT},
     {"ep", RS_PARAM_BOOL},
     {"pp-layers", RS_PARAM_LIST},
     {NULL, 0}},
    vllm_resolve,
    vllm_world_size,
};

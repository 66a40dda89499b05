/* convention-vllm.c — vLLM inference (convention.h states the rules): independent engine
 * replicas, each of dp·pp·tp ranks (replica·dp + dp_rank)·pp·tp + pp_rank·tp + tp_rank,
 * layers over pp stages by get_pp_indices or pp-layers, a [replicas·dp, tp] mesh per stage
 * with qkv_proj, gate_up_proj and w13 fused, KV heads replicated when tp exceeds them, the
 * vocabulary padded to 64, and routed experts over the dp·tp ranks of an engine's stage:
 * tensor-parallel by default, whole experts by determine_expert_map's "linear" rule with
 * ep.
 *
 * Sources: vllm/distributed/parallel_state.py (initialize_model_parallel),
 * vllm/distributed/utils.py (get_pp_indices), model_executor/layers/linear.py,
 * layers/vocab_parallel_embedding.py, layers/fused_moe/layer.py and config.py
 * (FusedMoEParallelConfig.make, flatten_tp_across_dp), models/deepseek_v2.py,
 * models/gpt_oss.py; docs/serving/data_parallel_deployment.md ("By default, expert layers
 * form a tensor parallel group of size DP × TP"). */
#include "layout/convention-private.h"

#include <string.h>

typedef struct {
    gint64 tp, dp, pp, replicas;
    gboolean ep;
    gboolean mxfp4_blocks; /* gpt-oss served in MXFP4: experts split in whole blocks */
    RsPipeline pipe;
    guint32 **stage_ranks; /* per stage: replicas·dp·tp ranks, ordered (replica, dp_rank,
                            * tp_rank) */
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
                r, "pp-layers", error,
                "pp-layers must give %u stages adding up to the %u layers of %s", pp, n_layers,
                rs_model_get_name(r->model));
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
        const char *const names[3] = {"replica", "tp_kv", "tp_replica"};
        rs_mesh_choice_init(c, ranks, 3, sizes, names);
        rs_mesh_choice_shard(c, 1, 0);
        return TRUE;
    }
    return rs_resolver_fail_model(
        r, "tp", error, "tp=%" G_GINT64_FORMAT " and the %u %sheads of %s: %s", tp, t->n_heads,
        t->kv_heads ? "key/value " : "attention ", t->name,
        t->kv_heads ? "neither divides the other" : "tp must divide the head count");
}

/* Is @t one of a checkpoint's MXFP4 block tensors (gpt-oss *_blocks, *_scales), as the
 * model records them (RsTensorSpec.format, models/model-families.c)? */
static gboolean
vllm_is_mxfp4_block_tensor(const RsTensorSpec *t)
{
    return t->format == RS_TENSOR_FORMAT_MXFP4 || t->format == RS_TENSOR_FORMAT_SCALE;
}

/* Routed experts (layers/fused_moe/layer.py), on the mesh [replicas, dp·tp] of the stage's
 * @ranks: FusedMoEParallelConfig.make (layers/fused_moe/config.py) flattens the tensor
 * parallelism of MoE layers across data parallelism, moe_tp_rank = dp_rank·tp + tp_rank
 * over dp·tp ranks (flatten_tp_across_dp), so the dp ranks of one engine never hold the
 * same expert slice. With ep, whole experts over those dp·tp ranks split by
 * determine_expert_map's "linear" rule (w13 fused whole, [E, out] biases following their
 * experts); without it every rank holds every expert, w13 as [gate_local; up_local] and w2
 * Shard on I, over dp·tp. A checkpoint's fused gate_up_proj
 * (RS_ROLE_EXPERT_GATE_UP_FUSED) is that same w13: FusedMoE.weight_loader / _load_w13
 * narrow gate and up each to shard_size = intermediate_size_per_partition at
 * tp_rank · shard_size (models/llama4.py load_moe_expert_weights transposes Llama-4's
 * [E, H, 2I] and loads its halves as w1 and w3), so the fused dim is a CONCAT of its two
 * halves. Engine replicas hold the same experts.
 *
 * gpt-oss served in MXFP4 (v->mxfp4_blocks) is loaded in whole 32-value blocks of I:
 * models/gpt_oss.py, _load_weights_mxfp4, takes per_rank_intermediate_size =
 * cdiv(I / 32, tp_size) · 32 with tp_size the flattened dp·tp, rank c the rows
 * [c · per_rank, min((c + 1) · per_rank, I)) of down_proj's I (the last rank shorter or
 * empty) and rows 2· those of the interleaved gate_up_proj and its bias. That is
 * RS_SPLIT_PADDED with the multiple 32 · dp·tp (64 · dp·tp along 2I): the dim padded to
 * per_rank · dp·tp and split evenly, each buffer per_rank rows long (vLLM's Mxfp4MoEMethod
 * pads a partition further for its kernels, a backend choice not modelled). A --stored
 * gpt-oss, whose experts are the checkpoint's *_blocks and *_scales, is loaded the same
 * way. In BF16 the torch.chunk split of _load_weights_other (cdiv(I, tp_size)) applies. */
static void
vllm_choose_experts(RsResolver *r, guint index, const guint32 *ranks, RsMeshChoice *c)
{
    const Vllm *v = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    gboolean complete = rs_fuse_group_is_complete(r->model, index);
    if (t->role == RS_ROLE_EXPERT_REPLICATED && !v->ep)
        return; /* [E, out] biases: replicated, as the experts are */
    const guint sizes[2] = {(guint)v->replicas, (guint)(v->dp * v->tp)};
    const char *const names[2] = {"replica", v->ep ? "ep" : "moe_tp"};
    rs_mesh_choice_init(c, ranks, 2, sizes, names);
    if (v->ep) {
        rs_mesh_choice_balanced(c, 1, 0);
        if (t->role == RS_ROLE_EXPERT_COLUMN && t->fuse == RS_FUSE_GATE_UP && complete)
            rs_mesh_choice_fuse(c, r->model, index, 1, G_MAXUINT, RS_FUSION_CONCAT, 1,
                                ".w13_weight");
    } else if (t->role == RS_ROLE_EXPERT_GATE_UP_FUSED) {
        rs_mesh_choice_segments(c, t, 1);
    } else if (t->role == RS_ROLE_EXPERT_ROW) {
        /* A checkpoint's down_proj_blocks [E, H, I/32, 16] and _scales [E, H, I/32] count
         * dim 2 in blocks already. */
        if (v->mxfp4_blocks)
            rs_mesh_choice_padded(c, 1, 2,
                                  (vllm_is_mxfp4_block_tensor(t) ? 1 : RS_MXFP4_BLOCK_ELEMS) *
                                      v->dp * v->tp);
        else
            rs_mesh_choice_shard(c, 1, 2);
    } else if (t->fuse == RS_FUSE_GATE_UP && complete) {
        rs_mesh_choice_fuse(c, r->model, index, 1, 1, RS_FUSION_CONCAT, 1, ".w13_weight");
    } else if (v->mxfp4_blocks) {
        /* gpt-oss's interleaved gate_up_proj [E, 2I, H] and its bias [E, 2I]: rows
         * 2·tp_rank_start … 2·tp_rank_end, two rows per intermediate row (below). */
        rs_mesh_choice_padded(c, 1, 1, 2 * RS_MXFP4_BLOCK_ELEMS * v->dp * v->tp);
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
    /* The dense weights' copies: every engine replica and every vLLM dp rank holds one
     * (it was labelled dp, which read wrong for replicas=2: [dp=2, tp=4]). */
    const guint sizes[2] = {(guint)(v->replicas * v->dp), (guint)v->tp};
    const char *const names[2] = {"replica", "tp"};
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
            return vllm_unfused_heads(r, t, c, 1, v->tp, ranks, v->replicas * v->dp, error);
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

/* Does @model have routed experts? */
static gboolean
vllm_has_experts(const RsModel *model)
{
    for (guint i = 0; i < rs_model_get_n_tensors(model); i++)
        if (rs_tensor_role_is_expert_weight(rs_model_get_tensor(model, i)->role))
            return TRUE;
    return FALSE;
}

/* Does @model hold experts as a checkpoint's MXFP4 blocks (gpt-oss --stored)? */
static gboolean
vllm_stores_mxfp4_blocks(const RsModel *model)
{
    for (guint i = 0; i < rs_model_get_n_tensors(model); i++) {
        const RsTensorSpec *t = rs_model_get_tensor(model, i);
        if (t->role == RS_ROLE_EXPERT_COLUMN && vllm_is_mxfp4_block_tensor(t))
            return TRUE;
    }
    return FALSE;
}

static gboolean
vllm_resolve(RsConvention *conv, RsResolver *r, GError **error)
{
    Vllm v = {0};
    v.tp = rs_convention_get_or(conv, "tp", 1);
    v.pp = rs_convention_get_or(conv, "pp", 1);
    v.dp = rs_convention_get_or(conv, "dp", 1);
    v.ep = rs_convention_get(conv, "ep") != 0;
    RsDtype dtype;
    v.mxfp4_blocks = strcmp(rs_model_get_family(r->model), "gpt_oss") == 0 &&
                     ((rs_convention_get_weight_dtype(conv, &dtype) && dtype == RS_DTYPE_MXFP4) ||
                      vllm_stores_mxfp4_blocks(r->model));
    rs_convention_set_resolved(conv, "tp", v.tp);
    if (v.pp > 1)
        rs_convention_set_resolved(conv, "pp", v.pp);
    g_autofree char *engine_text =
        g_strconcat("tp", v.pp > 1 ? " x pp" : "", v.dp > 1 ? " x dp" : "", NULL);
    if (!rs_convention_derive_size(conv, RS_CONVENTION_PRODUCT(v.tp, v.pp, v.dp), engine_text,
                                   r->n_gpus, error))
        return FALSE;
    v.replicas = rs_convention_get(conv, "replicas");
    g_autofree char *world_text = g_strconcat(engine_text, " x replicas", NULL);
    if (!rs_convention_check_world(conv, world_text,
                                   RS_CONVENTION_PRODUCT(v.tp, v.pp, v.dp, v.replicas), r->n_gpus,
                                   error))
        return FALSE;
    r->desc = rs_convention_format(conv);
    if (!rs_resolver_check_all_heads(r, v.tp, TRUE, FALSE, error))
        return FALSE;
    if (!rs_resolver_check_pp(r, v.pp, error) || !vllm_pipeline(r, (guint)v.pp, &v.pipe, error)) {
        rs_pipeline_clear(&v.pipe);
        return FALSE;
    }
    /* Stage p of dp rank e = replica·dp + dp_rank is ranks (e·pp + p)·tp … + tp − 1
     * (parallel_state.py: all_ranks reshaped [dp, pp, tp] within an engine; engines one
     * after another). */
    gint64 n_dp = v.replicas * v.dp;
    v.stage_ranks = g_new0(guint32 *, v.pp);
    for (gint64 p = 0; p < v.pp; p++) {
        v.stage_ranks[p] = g_new(guint32, n_dp * v.tp);
        for (gint64 e = 0; e < n_dp; e++)
            for (gint64 k = 0; k < v.tp; k++)
                v.stage_ranks[p][e * v.tp + k] = r->gpus[(e * v.pp + p) * v.tp + k];
    }
    r->data = &v;
    gboolean ok = rs_resolver_lay_out_all(r, vllm_choose, error);
    /* Where the experts go, when that is not simply tensor-parallel over tp. */
    g_autofree char *experts =
        !vllm_has_experts(r->model) || (!v.ep && v.dp == 1)
            ? g_strdup("")
            : g_strconcat(v.ep ? ", experts over ep = " : ", experts tensor-parallel over ",
                          v.dp > 1 ? "dp x tp" : "tp", NULL);
    for (gint64 e = 0; ok && e < n_dp; e++) {
        for (gint64 p = 0; p < v.pp; p++) {
            g_autofree char *ranks = rs_ranks_format(r->gpus + (e * v.pp + p) * v.tp, (guint)v.tp);
            g_autofree char *held = rs_pipeline_format_stage(&v.pipe, r->model, (guint)p, FALSE);
            g_autofree char *dp_rank =
                v.dp > 1 ? g_strdup_printf(", dp rank %" G_GINT64_FORMAT, e % v.dp) : g_strdup("");
            g_string_append_printf(r->summary,
                                   "replica %" G_GINT64_FORMAT "%s, stage %" G_GINT64_FORMAT
                                   ": GPUs %s, tp=%" G_GINT64_FORMAT ", %s%s\n",
                                   e / v.dp, dp_rank, p, ranks, v.tp, held, experts);
        }
    }
    for (gint64 p = 0; p < v.pp; p++)
        g_free(v.stage_ranks[p]);
    g_free(v.stage_ranks);
    rs_pipeline_clear(&v.pipe);
    r->data = NULL;
    return ok;
}

/* World = replicas·dp·pp·tp. */
static guint64
vllm_world_size(const RsConvention *conv)
{
    return (guint64)RS_CONVENTION_PRODUCT(
        rs_convention_get_or(conv, "tp", 1), rs_convention_get_or(conv, "dp", 1),
        rs_convention_get_or(conv, "pp", 1), rs_convention_get_or(conv, "replicas", 1));
}

const RsConventionClass rs_convention_class_vllm = {
    "vllm",
    {{"tp", RS_PARAM_INT},
     {"dp", RS_PARAM_INT},
     {"pp", RS_PARAM_INT},
     {"ep", RS_PARAM_BOOL},
     {"replicas", RS_PARAM_INT},
     {"pp-layers", RS_PARAM_LIST},
     {NULL, 0}},
    vllm_resolve,
    vllm_world_size,
    "replicas",
};

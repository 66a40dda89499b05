/* convention-sglang.c — SGLang inference (convention.h states the rules): tp ranks per
 * replica, or with dp-attention one tp group whose attention weights are split over
 * attn_tp = tp/dp and replicated over attn_dp = dp (the embedding replicated); experts
 * Shard(0) over ep and their intermediate dim over moe_tp = tp/ep; otherwise fused and
 * padded as vLLM.
 *
 * Sources: python/sglang/srt/layers/dp_attention.py (compute_dp_attention_world_info),
 * srt/distributed/parallel_state.py (initialize_model_parallel), srt/models/deepseek_v2.py
 * (VocabParallelEmbedding(enable_tp=not is_dp_attention_enabled())). */
#include "layout/convention-private.h"

#include <string.h>

typedef struct {
    gint64 tp, dp, ep, replicas, attn_dp, attn_tp;
    gboolean dp_attention;
} Sglang;

static gboolean
is_attention(const RsTensorSpec *t)
{
    return strstr(t->name, ".self_attn.") != NULL;
}

/* Routed experts: mesh [dp, ep, moe_tp] with moe_tp = tp/ep, experts Shard(0) over ep
 * and their intermediate dim over moe_tp (distributed/parallel_state.py,
 * initialize_model_parallel); w13 fused [gate_local; up_local]. A checkpoint's fused
 * gate_up_proj (RS_ROLE_EXPERT_GATE_UP_FUSED) is loaded into that w13 with gate and up
 * each narrowed to intermediate_size_per_partition at moe_tp_rank (srt/layers/moe/
 * fused_moe_triton/layer.py, FusedMoE._load_w13; srt/models/llama4.py loads Llama-4's
 * transposed halves as w1 and w3): a CONCAT of its two halves over moe_tp. */
static gboolean
sglang_choose_experts(RsResolver *r, guint index, RsMeshChoice *c, GError **error)
{
    const Sglang *s = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    gboolean complete = rs_fuse_group_is_complete(r->model, index);
    if (t->shape[0] % s->ep != 0)
        return rs_resolver_fail_model(r, "ep", error,
                                      "ep=%" G_GINT64_FORMAT
                                      " does not divide the %" G_GINT64_FORMAT " experts of %s",
                                      s->ep, t->shape[0], t->name);
    const guint moe_sizes[3] = {(guint)s->replicas, (guint)s->ep, (guint)(s->tp / s->ep)};
    const char *const moe_names[3] = {"dp", "ep", "moe_tp"};
    rs_mesh_choice_init(c, r->gpus, 3, moe_sizes, moe_names);
    rs_mesh_choice_shard(c, 1, 0);
    if (t->role == RS_ROLE_EXPERT_REPLICATED)
        return TRUE;
    if (t->role == RS_ROLE_EXPERT_ROW)
        rs_mesh_choice_shard(c, 2, 2);
    else if (t->role == RS_ROLE_EXPERT_GATE_UP_FUSED)
        rs_mesh_choice_segments(c, t, 2);
    else if (t->fuse == RS_FUSE_GATE_UP && complete)
        rs_mesh_choice_fuse(c, r->model, index, 1, 2, RS_FUSION_CONCAT, 1, ".w13_weight");
    else
        rs_mesh_choice_shard(c, 2, 1);
    return TRUE;
}

static gboolean
sglang_choose(RsResolver *r, guint index, RsMeshChoice *c, GError **error)
{
    const Sglang *s = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    const guint sizes[2] = {(guint)s->replicas, (guint)s->tp};
    const char *const names[2] = {"dp", "tp"};
    const guint attn_sizes[3] = {(guint)s->replicas, (guint)s->attn_dp, (guint)s->attn_tp};
    const char *const attn_names[3] = {"dp", "attn_dp", "attn_tp"};
    gboolean attention = is_attention(t);
    gboolean complete = rs_fuse_group_is_complete(r->model, index);
    /* The tp mesh dim of this tensor: attention weights split over attn_tp. */
    guint tp_dim = attention ? 2 : 1;
    gint64 tp = attention ? s->attn_tp : s->tp;
    if (attention)
        rs_mesh_choice_init(c, r->gpus, 3, attn_sizes, attn_names);
    else
        rs_mesh_choice_init(c, r->gpus, 2, sizes, names);
    switch (t->role) {
    case RS_ROLE_COLUMN_PARALLEL:
        if (t->fuse == RS_FUSE_QKV && complete) {
            const RsTensorSpec *q = rs_model_get_tensor(
                r->model, (guint)rs_model_find_fuse_sibling(r->model, index, 0));
            rs_mesh_choice_fuse(c, r->model, index, 0, tp_dim, RS_FUSION_QKV,
                                q->n_heads ? q->shape[0] / q->n_heads : 1, ".qkv_proj.weight");
        } else if (t->fuse == RS_FUSE_GATE_UP && complete) {
            rs_mesh_choice_fuse(c, r->model, index, 0, tp_dim, RS_FUSION_CONCAT, 1,
                                ".gate_up_proj.weight");
        } else if (t->n_heads == 0 || t->n_heads % tp == 0) {
            rs_mesh_choice_shard(c, tp_dim, 0);
        } else {
            return rs_resolver_fail_model(
                r, "tp", error, "tp=%" G_GINT64_FORMAT " does not divide the %u heads of %s", tp,
                t->n_heads, t->name);
        }
        break;
    case RS_ROLE_VOCAB_PARALLEL:
        if (rs_convention_is_embedding(t) && s->dp_attention) {
            /* Replicated, still padded to 64 rows (one partition). */
            const guint rep_sizes[3] = {(guint)s->replicas, (guint)s->tp, 1};
            const char *const rep_names[3] = {"dp", "tp", "vocab"};
            rs_mesh_choice_init(c, r->gpus, 3, rep_sizes, rep_names);
            rs_mesh_choice_padded(c, 2, 0, 64);
        } else {
            rs_mesh_choice_padded(c, 1, 0, 64);
        }
        break;
    case RS_ROLE_ROW_PARALLEL:
        rs_mesh_choice_shard(c, tp_dim, 1);
        break;
    case RS_ROLE_REPLICATED:
        if (t->fuse == RS_FUSE_MLA_A && complete)
            rs_mesh_choice_fuse(c, r->model, index, 0, G_MAXUINT, RS_FUSION_CONCAT, 1,
                                ".fused_qkv_a_proj_with_mqa.weight");
        break;
    case RS_ROLE_NORM:
    case RS_ROLE_ROUTER:
    case RS_ROLE_COLUMN_SEGMENTED:
        break;
    case RS_ROLE_EXPERT_COLUMN:
    case RS_ROLE_EXPERT_ROW:
    case RS_ROLE_EXPERT_REPLICATED:
    case RS_ROLE_EXPERT_GATE_UP_FUSED:
        return sglang_choose_experts(r, index, c, error);
    case RS_ROLE_N:
        g_assert_not_reached();
    }
    return TRUE;
}

static gboolean
sglang_resolve(RsConvention *conv, RsResolver *r, GError **error)
{
    Sglang s = {0};
    s.tp = rs_convention_get_or(conv, "tp", 1);
    s.ep = rs_convention_get_or(conv, "ep", 1);
    gboolean dp_attention = rs_convention_get(conv, "dp-attention") != 0;
    rs_convention_set_resolved(conv, "tp", s.tp);
    if (dp_attention) {
        s.dp = rs_convention_get_or(conv, "dp", 1);
        rs_convention_set_resolved(conv, "dp", s.dp);
        if (!rs_convention_check_world(conv, "tp (dp-attention shares its ranks)", s.tp, r->n_gpus,
                                       error))
            return FALSE;
    } else {
        if (!rs_convention_derive_size(conv, s.tp, "tp", r->n_gpus, error))
            return FALSE;
        s.dp = rs_convention_get(conv, "dp");
        if (!rs_convention_check_world(conv, "tp x dp", RS_CONVENTION_PRODUCT(s.tp, s.dp),
                                       r->n_gpus, error))
            return FALSE;
    }
    r->desc = rs_convention_format(conv);
    if (s.tp % s.ep != 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s: ep=%" G_GINT64_FORMAT " must divide tp=%" G_GINT64_FORMAT, r->desc, s.ep,
                    s.tp);
        return FALSE;
    }
    if (dp_attention && s.tp % s.dp != 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s: dp-attention needs dp=%" G_GINT64_FORMAT " to divide tp=%" G_GINT64_FORMAT,
                    r->desc, s.dp, s.tp);
        return FALSE;
    }
    s.dp_attention = dp_attention;
    s.replicas = dp_attention ? 1 : s.dp;
    s.attn_dp = dp_attention ? s.dp : 1;
    s.attn_tp = s.tp / s.attn_dp;
    if (!rs_resolver_check_all_heads(r, s.attn_tp, TRUE, FALSE, error))
        return FALSE;
    r->data = &s;
    gboolean ok = rs_resolver_lay_out_all(r, sglang_choose, error);
    for (gint64 d = 0; ok && d < s.replicas; d++) {
        g_autofree char *ranks = rs_ranks_format(r->gpus + d * s.tp, (guint)s.tp);
        g_string_append_printf(r->summary,
                               "replica %" G_GINT64_FORMAT ": GPUs %s, tp=%" G_GINT64_FORMAT
                               ", attention tp=%" G_GINT64_FORMAT " x dp=%" G_GINT64_FORMAT
                               ", experts ep=%" G_GINT64_FORMAT " x tp=%" G_GINT64_FORMAT "\n",
                               d, ranks, s.tp, s.attn_tp, s.attn_dp, s.ep, s.tp / s.ep);
    }
    r->data = NULL;
    return ok;
}

/* World = tp·dp, or tp with dp-attention (its dp shares the tp ranks). */
static guint64
sglang_world_size(const RsConvention *conv)
{
    gint64 tp = rs_convention_get_or(conv, "tp", 1), dp = rs_convention_get_or(conv, "dp", 1);
    return (guint64)(rs_convention_get(conv, "dp-attention") ? tp : RS_CONVENTION_PRODUCT(tp, dp));
}

const RsConventionClass rs_convention_class_sglang = {
    "sglang",
    {{"tp", RS_PARAM_INT},
     {"dp", RS_PARAM_INT},
     {"ep", RS_PARAM_INT},
     {"dp-attention", RS_PARAM_BOOL},
     {NULL, 0}},
    sglang_resolve,
    sglang_world_size,
    "dp",
};

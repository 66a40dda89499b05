/* convention-megatron.c — Megatron-LM / Megatron-Core training (convention.h states the
 * rules): ranks ordered tp-cp-ep-dp-pp, dense weights on a [dp, cp, tp] mesh per pipeline
 * stage, routed experts on [edp, ep, etp] over the same ranks, q/k/v fused per query group
 * in linear_qkv, gate/up in linear_fc1, the vocabulary padded to a multiple of 128·tp, and
 * layers over (virtual) pipeline stages.
 *
 * Sources: megatron/core/parallel_state.py (RankGenerator), tensor_parallel/layers.py,
 * transformer/attention.py, transformer/mlp.py, transformer/multi_latent_attention.py,
 * transformer/moe/experts.py, transformer/transformer_layer.py
 * (get_transformer_layer_offset), megatron/training/tokenizer/tokenizer.py
 * (_vocab_size_with_padding). */
#include "layout/convention-private.h"

#include <string.h>

typedef struct {
    gint64 tp, cp, pp, dp, ep, etp, edp, stage_size;
    RsPipeline pipe;
} Megatron;

/* Megatron: explicit pp-layers (pp or pp·vpp entries), else floor(s·L/pp) with vpp 1, else
 * L / (pp·vpp) per virtual stage. */
static gboolean
megatron_pipeline(RsResolver *r, guint pp, guint vpp, RsPipeline *p, GError **error)
{
    guint n_layers = rs_model_get_n_layers(r->model);
    p->pp = pp;
    p->n_layers = n_layers;
    guint n_list;
    const gint64 *list = rs_convention_get_list(r->conv, "pp-layers", &n_list);
    guint n_virtual = pp * vpp;
    g_autofree gint64 *counts = g_new0(gint64, n_virtual);
    if (list != NULL) {
        if (n_list != pp && n_list != n_virtual) {
            return rs_resolver_fail_model(
                r, "pp-layers", error, "pp-layers has %u entries; give one per stage (%u)%s",
                n_list, pp, vpp > 1 ? " or one per virtual stage (pp x vpp)" : "");
        }
        gint64 sum = 0;
        for (guint i = 0; i < n_list; i++)
            sum += list[i];
        if (sum != n_layers)
            return rs_resolver_fail_model(r, "pp-layers", error,
                                          "pp-layers add up to %" G_GINT64_FORMAT
                                          " layers but %s has %u",
                                          sum, rs_model_get_name(r->model), n_layers);
        if (n_list == n_virtual) {
            memcpy(counts, list, n_virtual * sizeof *counts);
        } else {
            /* Per-stage counts with virtual stages: each stage's layers split evenly over
             * its vpp chunks. */
            for (guint s = 0; s < pp; s++) {
                if (list[s] % vpp != 0)
                    return rs_resolver_fail_model(r, "pp-layers", error,
                                                  "pp-layers: stage %u has %" G_GINT64_FORMAT
                                                  " layers, not a multiple of vpp=%u",
                                                  s, list[s], vpp);
                for (guint v = 0; v < vpp; v++)
                    counts[v * pp + s] = list[s] / vpp;
            }
        }
    } else if (vpp > 1) {
        if (n_layers % n_virtual != 0)
            return rs_resolver_fail_model(
                r, "pp", error,
                "%u layers do not split into pp x vpp = %u virtual stages; give "
                "pp-layers",
                n_layers, n_virtual);
        for (guint v = 0; v < n_virtual; v++)
            counts[v] = n_layers / n_virtual;
    } else {
        for (guint s = 0; s < pp; s++)
            counts[s] =
                (gint64)((guint64)(s + 1) * n_layers / pp) - (gint64)((guint64)s * n_layers / pp);
    }
    rs_pipeline_from_counts(p, counts, n_virtual);
    return TRUE;
}

/* Routed experts of the stage whose ranks start at @slice: mesh [edp, ep, etp], experts
 * Shard(0) over ep (moe/experts.py, local_expert_indices); per expert linear_fc1
 * [gate_local; up_local] (or gpt-oss's interleaved gate/up as two strided runs) and
 * linear_fc2 Shard on its input dim over etp. Each etp rank's gated linear_fc1 holds its
 * chunk of gate then its chunk of up (transformer/mlp.py, apply_swiglu_sharded_factory,
 * which moe/experts.py's TEGroupedMLP and SequentialMLP use for linear_fc1), so a
 * checkpoint's fused gate_up_proj (RS_ROLE_EXPERT_GATE_UP_FUSED) is a CONCAT of its two
 * halves over etp. */
static gboolean
megatron_choose_experts(RsResolver *r, guint index, const guint32 *slice, RsMeshChoice *c,
                        GError **error)
{
    const Megatron *mg = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    const guint expert_sizes[3] = {(guint)mg->edp, (guint)mg->ep, (guint)mg->etp};
    const char *const expert_names[3] = {"edp", "ep", "etp"};
    gboolean complete = rs_fuse_group_is_complete(r->model, index);
    if (t->shape[0] % mg->ep != 0)
        return rs_resolver_fail_model(r, "ep", error,
                                      "ep=%" G_GINT64_FORMAT
                                      " does not divide the %" G_GINT64_FORMAT " experts of %s",
                                      mg->ep, t->shape[0], t->name);
    rs_mesh_choice_init(c, slice, 3, expert_sizes, expert_names);
    rs_mesh_choice_shard(c, 1, 0);
    if (t->role == RS_ROLE_EXPERT_REPLICATED)
        return TRUE; /* [E, out] biases: whole on each etp rank */
    if (t->role == RS_ROLE_EXPERT_ROW)
        rs_mesh_choice_shard(c, 2, 2);
    else if (t->role == RS_ROLE_EXPERT_GATE_UP_FUSED)
        rs_mesh_choice_segments(c, t, 2); /* the same [gate_local; up_local] of one tensor */
    else if (t->fuse == RS_FUSE_GATE_UP && complete)
        rs_mesh_choice_fuse(c, r->model, index, 1, 2, RS_FUSION_CONCAT, 1, ".linear_fc1.weight");
    else if (t->fuse == RS_FUSE_GATE_UP_INTERLEAVED)
        rs_mesh_choice_fuse(c, r->model, index, 1, 2, RS_FUSION_INTERLEAVED, 2,
                            ".linear_fc1.weight");
    else
        rs_mesh_choice_shard(c, 2, 1);
    return TRUE;
}

static gboolean
megatron_choose(RsResolver *r, guint index, RsMeshChoice *c, GError **error)
{
    const Megatron *mg = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    guint stage = rs_pipeline_get_stage(&mg->pipe, t->layer);
    const guint32 *slice = r->gpus + (gsize)stage * (gsize)mg->stage_size;
    const guint dense_sizes[3] = {(guint)mg->dp, (guint)mg->cp, (guint)mg->tp};
    const char *const dense_names[3] = {"dp", "cp", "tp"};
    gboolean complete = rs_fuse_group_is_complete(r->model, index);
    rs_mesh_choice_init(c, slice, 3, dense_sizes, dense_names);
    switch (t->role) {
    case RS_ROLE_COLUMN_PARALLEL:
        if (t->fuse == RS_FUSE_QKV && complete) {
            const RsTensorSpec *q = rs_model_get_tensor(
                r->model, (guint)rs_model_find_fuse_sibling(r->model, index, 0));
            rs_mesh_choice_fuse(c, r->model, index, 0, 2, RS_FUSION_QKV_GROUPED,
                                q->n_heads ? q->shape[0] / q->n_heads : 1, ".linear_qkv.weight");
        } else if (t->fuse == RS_FUSE_GATE_UP && complete) {
            rs_mesh_choice_fuse(c, r->model, index, 0, 2, RS_FUSION_CONCAT, 1,
                                ".linear_fc1.weight");
        } else if (t->fuse == RS_FUSE_GATE_UP_INTERLEAVED) {
            rs_mesh_choice_fuse(c, r->model, index, 0, 2, RS_FUSION_INTERLEAVED, 2,
                                ".linear_fc1.weight");
        } else {
            if (!rs_resolver_check_heads(r, t, mg->tp, error))
                return FALSE;
            rs_mesh_choice_shard(c, 2, 0);
        }
        break;
    case RS_ROLE_VOCAB_PARALLEL:
        rs_mesh_choice_padded(c, 2, 0, 128 * mg->tp);
        if (rs_convention_is_embedding(t) && rs_model_get_tie_embeddings(r->model) && mg->pp > 1)
            c->copy_ranks = r->gpus + (gsize)(mg->pp - 1) * (gsize)mg->stage_size;
        break;
    case RS_ROLE_ROW_PARALLEL:
        rs_mesh_choice_shard(c, 2, 1);
        break;
    case RS_ROLE_REPLICATED:
    case RS_ROLE_NORM:
    case RS_ROLE_ROUTER:
    case RS_ROLE_COLUMN_SEGMENTED: /* held whole: segments are not split separately yet */
        break;
    case RS_ROLE_EXPERT_COLUMN:
    case RS_ROLE_EXPERT_ROW:
    case RS_ROLE_EXPERT_REPLICATED:
    case RS_ROLE_EXPERT_GATE_UP_FUSED:
        return megatron_choose_experts(r, index, slice, c, error);
    case RS_ROLE_N:
        g_assert_not_reached();
    }
    return TRUE;
}

static gboolean
megatron_resolve(RsConvention *conv, RsResolver *r, GError **error)
{
    Megatron mg = {0};
    mg.tp = rs_convention_get_or(conv, "tp", 1);
    mg.cp = rs_convention_get_or(conv, "cp", 1);
    mg.pp = rs_convention_get_or(conv, "pp", 1);
    gint64 vpp = rs_convention_get_or(conv, "vpp", 1);
    mg.ep = rs_convention_get_or(conv, "ep", 1);
    mg.etp = rs_convention_get_or(conv, "etp", mg.tp);
    rs_convention_set_resolved(conv, "tp", mg.tp);
    rs_convention_set_resolved(conv, "cp", mg.cp);
    rs_convention_set_resolved(conv, "pp", mg.pp);
    rs_convention_set_resolved(conv, "ep", mg.ep);
    rs_convention_set_resolved(conv, "etp", mg.etp);
    if (!rs_convention_derive_size(conv, RS_CONVENTION_PRODUCT(mg.tp, mg.cp, mg.pp), "tp x cp x pp",
                                   r->n_gpus, error))
        return FALSE;
    mg.dp = rs_convention_get(conv, "dp");
    if (!rs_convention_check_world(conv, "tp x cp x dp x pp",
                                   RS_CONVENTION_PRODUCT(mg.tp, mg.cp, mg.dp, mg.pp), r->n_gpus,
                                   error))
        return FALSE;
    mg.stage_size = mg.tp * mg.cp * mg.dp;
    r->desc = rs_convention_format(conv);
    if (mg.stage_size % (mg.ep * mg.etp) != 0) {
        g_set_error(error, RS_CONVENTION_ERROR, RS_CONVENTION_ERROR_PARAM,
                    "%s: ep x etp = %" G_GINT64_FORMAT
                    " must divide tp x cp x dp = %" G_GINT64_FORMAT,
                    r->desc, mg.ep * mg.etp, mg.stage_size);
        return FALSE;
    }
    mg.edp = mg.stage_size / (mg.ep * mg.etp);
    if (!rs_resolver_check_all_heads(r, mg.tp, FALSE, FALSE, error))
        return FALSE;
    if (!rs_resolver_check_pp(r, mg.pp, error) ||
        !megatron_pipeline(r, (guint)mg.pp, (guint)vpp, &mg.pipe, error)) {
        rs_pipeline_clear(&mg.pipe);
        return FALSE;
    }
    r->data = &mg;
    gboolean ok = rs_resolver_lay_out_all(r, megatron_choose, error);
    for (guint s = 0; ok && s < (guint)mg.pp; s++) {
        g_autofree char *ranks =
            rs_ranks_format(r->gpus + (gsize)s * mg.stage_size, (guint)mg.stage_size);
        g_autofree char *held = rs_pipeline_format_stage(&mg.pipe, r->model, s, TRUE);
        g_string_append_printf(r->summary, "stage %u: GPUs %s, %s\n", s, ranks, held);
    }
    if (ok)
        g_string_append_printf(r->summary,
                               "dense weights: mesh [dp=%" G_GINT64_FORMAT ", cp=%" G_GINT64_FORMAT
                               ", tp=%" G_GINT64_FORMAT
                               "] per stage; experts: mesh [edp=%" G_GINT64_FORMAT
                               ", ep=%" G_GINT64_FORMAT ", etp=%" G_GINT64_FORMAT "] per stage\n",
                               mg.dp, mg.cp, mg.tp, mg.edp, mg.ep, mg.etp);
    rs_pipeline_clear(&mg.pipe);
    r->data = NULL;
    return ok;
}

/* World = tp·cp·pp·dp. */
static guint64
megatron_world_size(const RsConvention *conv)
{
    gint64 tp = rs_convention_get_or(conv, "tp", 1), dp = rs_convention_get_or(conv, "dp", 1);
    return (guint64)RS_CONVENTION_PRODUCT(tp, rs_convention_get_or(conv, "cp", 1),
                                          rs_convention_get_or(conv, "pp", 1), dp);
}

const RsConventionClass rs_convention_class_megatron = {
    "megatron",
    {{"tp", RS_PARAM_INT},
     {"cp", RS_PARAM_INT},
     {"pp", RS_PARAM_INT},
     {"dp", RS_PARAM_INT},
     {"ep", RS_PARAM_INT},
     {"etp", RS_PARAM_INT},
     {"vpp", RS_PARAM_INT},
     {"pp-layers", RS_PARAM_LIST},
     {NULL, 0}},
    megatron_resolve,
    megatron_world_size,
    "dp",
};

/* convention-fsdp2.c — PyTorch FSDP2 (fully_shard) with tensor parallelism as torchtitan
 * applies it (convention.h states the rules): mesh [replicate, dp, tp] row-major, the TP
 * plan's Shard(0) / Shard(1), then FSDP's Shard(0) over dp (StridedShard when tp already
 * split dim 0) and Replicate over the HSDP dim. No fusion: FSDP2 keeps the model's own
 * parameters.
 *
 * Sources: torchtitan distributed/parallel_dims.py (ParallelDims), models/llama3/infra/
 * parallelize.py (apply_tp), torch/distributed/fsdp/_fully_shard/_fsdp_param.py
 * (FSDPParam._init_sharded_param). */
#include "layout/convention-private.h"

typedef struct {
    gint64 dp, replicate, tp;
} Fsdp2;

static gboolean
fsdp2_choose(RsResolver *r, guint index, RsMeshChoice *c, GError **error)
{
    const Fsdp2 *f = r->data;
    const RsTensorSpec *t = rs_model_get_tensor(r->model, index);
    const guint sizes[3] = {(guint)f->replicate, (guint)f->dp, (guint)f->tp};
    const char *const names[3] = {"dp_replicate", "dp_shard", "tp"};
    rs_mesh_choice_init(c, r->gpus, 3, sizes, names);
    gint tp_dim = -1; /* the tensor dim tp shards, -1: replicated over tp */
    switch (t->role) {
    case RS_ROLE_COLUMN_PARALLEL:
        if (!rs_resolver_check_heads(r, t, f->tp, error))
            return FALSE;
        tp_dim = 0;
        break;
    case RS_ROLE_VOCAB_PARALLEL:
        tp_dim = 0;
        break;
    case RS_ROLE_ROW_PARALLEL:
        tp_dim = 1;
        break;
    case RS_ROLE_REPLICATED:
    case RS_ROLE_NORM:
    case RS_ROLE_ROUTER:
    case RS_ROLE_COLUMN_SEGMENTED:
    case RS_ROLE_EXPERT_REPLICATED:
        break;
    case RS_ROLE_EXPERT_GATE_UP_FUSED:
        /* No TP plan splits a fused [gate; up] parameter (a contiguous Shard of its fused
         * dim would mix gate and up): replicated over tp, FSDP's Shard(0) over dp as for
         * every parameter (_fsdp_param.py, FSDPParam._init_sharded_param). */
        break;
    case RS_ROLE_EXPERT_COLUMN:
        tp_dim = 1;
        break;
    case RS_ROLE_EXPERT_ROW:
        tp_dim = 2;
        break;
    case RS_ROLE_N:
        g_assert_not_reached();
    }
    if (t->n_dims == 0)
        return TRUE;
    if (tp_dim >= (gint)t->n_dims)
        tp_dim = -1;
    if (tp_dim >= 0 && f->tp > 1)
        rs_mesh_choice_shard(c, 2, tp_dim);
    /* FSDP's Shard(0), strided when tp already split dim 0. */
    if (tp_dim == 0 && f->tp > 1)
        c->splits[1] =
            rs_split_placement((RsPlacement){RS_PLACEMENT_STRIDED_SHARD, 0, (gint)f->tp});
    else
        rs_mesh_choice_shard(c, 1, 0);
    return TRUE;
}

static gboolean
fsdp2_resolve(RsConvention *conv, RsResolver *r, GError **error)
{
    Fsdp2 f = {0};
    f.tp = rs_convention_get_or(conv, "tp", 1);
    f.replicate = rs_convention_get_or(conv, "replicate", 1);
    rs_convention_set_resolved(conv, "tp", f.tp);
    if (f.replicate > 1)
        rs_convention_set_resolved(conv, "replicate", f.replicate);
    if (!rs_convention_derive_size(conv, RS_CONVENTION_PRODUCT(f.tp, f.replicate), "replicate x tp",
                                   r->n_gpus, error))
        return FALSE;
    f.dp = rs_convention_get(conv, "dp");
    if (!rs_convention_check_world(conv, "replicate x dp x tp",
                                   RS_CONVENTION_PRODUCT(f.replicate, f.dp, f.tp), r->n_gpus,
                                   error))
        return FALSE;
    r->desc = rs_convention_format(conv);
    if (!rs_resolver_check_all_heads(r, f.tp, FALSE, FALSE, error))
        return FALSE;
    r->data = &f;
    gboolean ok = rs_resolver_lay_out_all(r, fsdp2_choose, error);
    for (gint64 k = 0; ok && k < f.replicate; k++) {
        g_autofree char *ranks = rs_ranks_format(r->gpus + k * f.dp * f.tp, (guint)(f.dp * f.tp));
        g_string_append_printf(r->summary,
                               "replica %" G_GINT64_FORMAT
                               ": GPUs %s, mesh [dp_shard=%" G_GINT64_FORMAT
                               ", tp=%" G_GINT64_FORMAT "]\n",
                               k, ranks, f.dp, f.tp);
    }
    r->data = NULL;
    return ok;
}

/* World = replicate·dp·tp. */
static guint64
fsdp2_world_size(const RsConvention *conv)
{
    gint64 tp = rs_convention_get_or(conv, "tp", 1), dp = rs_convention_get_or(conv, "dp", 1);
    return (guint64)RS_CONVENTION_PRODUCT(tp, dp, rs_convention_get_or(conv, "replicate", 1));
}

const RsConventionClass rs_convention_class_fsdp2 = {
    "fsdp2",
    {{"dp", RS_PARAM_INT}, {"replicate", RS_PARAM_INT}, {"tp", RS_PARAM_INT}, {NULL, 0}},
    fsdp2_resolve,
    fsdp2_world_size,
    "dp",
};

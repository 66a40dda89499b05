/* build.c — the builder: rs_plan_build_full refuses a staging bound that would need too
 * many transfers, runs the strategy asked for (gather-broadcast.c, direct.c, node-aware.c,
 * hierarchical.c) to emit the transfers, and hands them to rounds.c, which makes the plan's
 * messages and rounds. Without a topology the topology-aware strategies plan on a uniform
 * fabric made here. */
#include "plan/plan-private.h"

#include <unistd.h>

RsPlan *
rs_plan_build(const RsRefit *refit, RsStrategy strategy, GError **error)
{
    return rs_plan_build_full(refit, strategy, NULL, error);
}

/* A fabric of one GPU per node and per NVLink domain, all links alike, covering every rank
 * of @refit. */
static RsTopology *
uniform_topology(const RsRefit *refit, GError **error)
{
    guint32 max_rank = 0;
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        const RsLayout *sides[2] = {t->src, t->dst};
        for (guint s = 0; s < 2; s++) {
            guint n = rs_layout_get_n_ranks(sides[s]);
            if (n > 0)
                max_rank = MAX(max_rank, rs_layout_get_rank(sides[s], n - 1));
        }
    }
    g_autofree char *text =
        g_strdup_printf("name: uniform\nnodes: %u\ngpus_per_node: 1\n"
                        "nvlink:\n  bandwidth: 1 GB/s\nnic:\n  bandwidth: 1 GB/s\n",
                        max_rank + 1);
    return rs_topology_load_string(text, "uniform fabric", NULL, error);
}

/* "26.84 GB" from 1 GB up, else "819200 B". */
static char *
bytes_text(guint64 bytes)
{
    if (bytes >= 1000000000u)
        return g_strdup_printf("%.2f GB", bytes / 1e9);
    return g_strdup_printf("%" G_GUINT64_FORMAT " B", bytes);
}

static guint64
physical_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (guint64)pages * (guint64)page : G_MAXUINT64;
}

/* A lower bound on the network transfers of the plan: every destination box (the whole
 * tensor, once per destination rank and once more into the root, for the broadcasts, per
 * channel slice for nccl-broadcast; every source shard to every destination rank for
 * checkpoint-engine)
 * arrives in pieces of at most @staging bytes. Refuses, before anything is allocated, a
 * staging bound that would need more than RS_PLAN_MAX_TRANSFERS, and a plan whose memory
 * estimate (that bound × RS_PLAN_BUILD_BYTES_PER_TRANSFER) exceeds @memory_limit_bytes
 * (0: the machine's). */
static gboolean
check_transfer_count(const RsRefit *refit, RsStrategy strategy, guint64 staging, guint n_channels,
                     guint64 memory_limit_bytes, GError **error)
{
    guint64 pieces = 0;
    guint64 shard_pieces = 0; /* checkpoint-engine: what no staging bound reduces */
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        guint n_ranks = rs_layout_get_n_ranks(t->dst);
        if (strategy == RS_STRATEGY_CHECKPOINT_ENGINE) {
            /* Every source shard goes to every destination rank: a hop and a keep each,
             * per channel slice (nccl-broadcast.c). */
            RsSourceGroups sg;
            rs_source_groups_build(&sg, t->src);
            for (guint g = 0; g < sg.groups->len; g++) {
                const RsBox *box = &g_array_index(sg.groups, RsSourceGroup, g).box;
                guint64 bytes = rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(box));
                guint64 slices = MIN((guint64)n_channels, rs_box_get_n_elems(box));
                pieces += ((bytes + staging - 1) / staging + slices - 1) * 2 * (guint64)n_ranks;
                shard_pieces += slices * 2 * (guint64)n_ranks;
            }
            rs_source_groups_clear(&sg);
            /* The broadcast of every shard, whatever the staging bound. */
            if (shard_pieces > RS_PLAN_MAX_TRANSFERS) {
                g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_TOO_LARGE,
                            "checkpoint-engine broadcasts every source shard to each of the %u "
                            "inference ranks: more than %u transfers (by tensor %s)",
                            n_ranks, RS_PLAN_MAX_TRANSFERS, t->name);
                return FALSE;
            }
        } else if (strategy == RS_STRATEGY_GATHER_BROADCAST ||
                   strategy == RS_STRATEGY_NCCL_BROADCAST) {
            guint64 bytes = rs_refit_tensor_get_n_bytes(t, rs_layout_get_n_elems(t->src));
            guint64 slices = strategy == RS_STRATEGY_NCCL_BROADCAST ? n_channels : 1;
            pieces += ((bytes + staging - 1) / staging + slices - 1) * ((guint64)n_ranks + 1);
        } else {
            for (guint r = 0; r < n_ranks; r++) {
                guint n_boxes;
                const RsLocalBox *boxes = rs_layout_get_boxes(t->dst, r, &n_boxes);
                for (guint k = 0; k < n_boxes; k++) {
                    guint64 bytes =
                        rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(&boxes[k].box));
                    pieces += (bytes + staging - 1) / staging;
                }
            }
        }
        if (pieces > RS_PLAN_MAX_TRANSFERS) {
            g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_TOO_LARGE,
                        "a staging bound of %" G_GUINT64_FORMAT
                        " B cuts the weights into more than %u transfers (by tensor %s); "
                        "use a larger --staging-bytes",
                        staging, RS_PLAN_MAX_TRANSFERS, t->name);
            return FALSE;
        }
    }
    guint64 limit = memory_limit_bytes ? memory_limit_bytes : physical_memory_bytes();
    guint64 need = pieces * RS_PLAN_BUILD_BYTES_PER_TRANSFER;
    if (need > limit) {
        g_autofree char *need_text = bytes_text(need);
        g_autofree char *limit_text = bytes_text(limit);
        /* checkpoint-engine's broadcasts of the shards alone over the limit: no bucket size
         * helps. */
        g_autofree char *hint =
            strategy == RS_STRATEGY_CHECKPOINT_ENGINE &&
                    shard_pieces * RS_PLAN_BUILD_BYTES_PER_TRANSFER > limit
                ? g_strdup_printf("larger buckets cannot help (it broadcasts every source "
                                  "shard to each inference rank, %" G_GUINT64_FORMAT
                                  " transfers whatever the bucket size): use fewer layers "
                                  "(--layers)",
                                  shard_pieces)
                : g_strdup("use larger buckets (--staging-bytes) or fewer layers (--layers)");
        g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_TOO_LARGE,
                    "the %s plan needs at least %" G_GUINT64_FORMAT " transfers, an estimated "
                    "%s to build (%u B each), more than the %s of memory %s; %s",
                    rs_strategy_get_name(strategy), pieces, need_text,
                    RS_PLAN_BUILD_BYTES_PER_TRANSFER, limit_text,
                    memory_limit_bytes ? "allowed" : "this machine has", hint);
        return FALSE;
    }
    return TRUE;
}

/* RS_PLAN_ERROR_NOT_A_GPU, as balance.c words it, when a rank of @refit is not a GPU of
 * @topo. */
static gboolean
check_ranks_on_fabric(const RsRefit *refit, const RsTopology *topo, GError **error)
{
    guint n_gpus = rs_topology_get_n_gpus(topo);
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        const RsLayout *sides[2] = {t->src, t->dst};
        for (guint s = 0; s < 2; s++)
            for (guint r = 0; r < rs_layout_get_n_ranks(sides[s]); r++) {
                guint32 rank = rs_layout_get_rank(sides[s], r);
                if (rank >= n_gpus) {
                    g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_NOT_A_GPU,
                                "%s: rank %u is not a GPU of topology %s (%u GPUs)", t->name,
                                rank, rs_topology_get_name(topo), n_gpus);
                    return FALSE;
                }
            }
    }
    return TRUE;
}

/* The strategies that read the fabric: node-aware, hierarchical, nccl-broadcast, m2n,
 * m2n-direct, checkpoint-engine. Without a cluster every rank is its own NVLink domain
 * behind one NIC of the same capacity, so node-aware and hierarchical balance bytes over
 * ranks and the broadcasts run one ring; that uniform fabric and the options naming it
 * live only while the strategy runs. */
static gboolean
build_on_fabric(RsPlanBuilder *b, const RsRefit *refit, RsStrategy strategy,
                const RsPlanOptions *options, GError **error)
{
    RsPlanOptions uniform;
    g_autoptr(RsTopology) flat = NULL;
    if (options == NULL || options->topology == NULL) {
        flat = uniform_topology(refit, error);
        if (flat == NULL)
            return FALSE;
        if (options != NULL)
            uniform = *options;
        else
            rs_plan_options_init(&uniform, NULL);
        uniform.topology = flat;
        options = &uniform;
    }
    if (strategy != RS_STRATEGY_NODE_AWARE && strategy != RS_STRATEGY_HIERARCHICAL &&
        !check_ranks_on_fabric(refit, options->topology, error))
        return FALSE;
    switch (strategy) {
    case RS_STRATEGY_NODE_AWARE:
        return rs_plan_node_aware_build(b, refit, options, error);
    case RS_STRATEGY_HIERARCHICAL:
        return rs_plan_hierarchical_build(b, refit, options, error);
    case RS_STRATEGY_M2N:
    case RS_STRATEGY_M2N_DIRECT:
        return rs_plan_m2n_build(b, refit, options->topology, strategy == RS_STRATEGY_M2N, error);
    case RS_STRATEGY_CHECKPOINT_ENGINE:
        return rs_plan_checkpoint_engine_build(b, refit, flat ? NULL : options->topology, error);
    case RS_STRATEGY_NCCL_BROADCAST:
        for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++)
            if (!rs_plan_nccl_broadcast_tensor(b, rs_refit_get_tensor(refit, i), i,
                                               options->topology, error))
                return FALSE;
        return TRUE;
    default:
        g_assert_not_reached();
    }
}

/* Emits the transfers of @strategy into @b. */
static gboolean
build_transfers(RsPlanBuilder *b, const RsRefit *refit, RsStrategy strategy,
                const RsPlanOptions *options, GError **error)
{
    if (strategy == RS_STRATEGY_RDMA_P2P)
        return rs_plan_rdma_p2p_build(b, refit, error);
    if (strategy != RS_STRATEGY_DIRECT && strategy != RS_STRATEGY_GATHER_BROADCAST)
        return build_on_fabric(b, refit, strategy, options, error);
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        gboolean ok = strategy == RS_STRATEGY_DIRECT
                          ? rs_plan_direct_tensor(b, t, i, error)
                          : rs_plan_gather_broadcast_tensor(b, t, i, error);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

RsPlan *
rs_plan_build_full(const RsRefit *refit, RsStrategy strategy, const RsPlanOptions *options,
                   GError **error)
{
    g_return_val_if_fail(strategy < RS_STRATEGY_N, NULL);
    guint64 staging = rs_plan_options_get_staging_bytes(options);
    guint n_channels = options != NULL && options->topology != NULL
                           ? MAX(rs_topology_get_n_rails(options->topology), 1)
                           : 1;
    if (!check_transfer_count(refit, strategy, staging, n_channels,
                              options ? options->memory_limit_bytes : 0, error))
        return NULL;
    RsPlanBuilder b = {g_array_new(FALSE, FALSE, sizeof(RsTransfer)),
                       staging,
                       RS_PACK_KERNEL,
                       RS_ROUND_SYNC_GROUP,
                       0,
                       options != NULL ? options->topology : NULL,
                       rs_plan_box_table_new()};
    if (!build_transfers(&b, refit, strategy, options, error)) {
        g_array_unref(b.transfers);
        g_hash_table_unref(b.boxes);
        return NULL;
    }
    /* The caller's options, not a uniform fabric's: rounds use the same staging bound the
     * strategy split its buckets to. */
    RsPlan *plan = g_new0(RsPlan, 1);
    plan->strategy = strategy;
    plan->pack_method = b.pack_method;
    plan->round_sync = b.round_sync;
    plan->relay_chunk_bytes = b.relay_chunk_bytes;
    plan->boxes = b.boxes; /* the plan owns the boxes its transfers point at */
    rs_plan_finish(plan, b.transfers, options);
    g_array_unref(b.transfers);
    return plan;
}

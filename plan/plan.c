/* plan.c — the plan object: its accessors, the planner options with their defaults, the
 * strategy names, and which memory holds a transfer's bytes. The plan is filled by the
 * builder (build.c) through rounds.c; nothing here calls another file of the planner. */
#include "plan/plan-private.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-plan-error-quark, rs_plan_error)
/* clang-format on */

#define DEFAULT_MAX_OPS_PER_GROUP 256
#define DEFAULT_STRIPE_BYTES (G_GUINT64_CONSTANT(64) << 20)
#define DEFAULT_STAGING_BYTES_NO_TOPOLOGY (G_GUINT64_CONSTANT(1) << 30)

void
rs_plan_options_init(RsPlanOptions *options, const RsTopology *topology)
{
    memset(options, 0, sizeof *options);
    options->topology = topology;
}

guint64
rs_plan_options_get_staging_bytes(const RsPlanOptions *options)
{
    if (options != NULL && options->staging_bytes != 0)
        return options->staging_bytes;
    /* 1/16 of GPU memory: a bucket the size NeMo-RL and veRL use for weight sync (a few GB)
     * on 80 GB parts, leaving the rest to the inference engine. */
    if (options != NULL && options->topology != NULL &&
        rs_topology_get_gpu_memory_bytes(options->topology) > 0)
        return rs_topology_get_gpu_memory_bytes(options->topology) / 16;
    return DEFAULT_STAGING_BYTES_NO_TOPOLOGY;
}

guint
rs_plan_options_get_max_ops_per_group(const RsPlanOptions *options)
{
    return options && options->max_ops_per_group ? options->max_ops_per_group
                                                 : DEFAULT_MAX_OPS_PER_GROUP;
}

guint64
rs_plan_options_get_stripe_bytes(const RsPlanOptions *options)
{
    return options && options->stripe_bytes ? options->stripe_bytes : DEFAULT_STRIPE_BYTES;
}

void
rs_plan_free(RsPlan *plan)
{
    if (plan == NULL)
        return;
    g_array_unref(plan->transfers);
    g_array_unref(plan->messages);
    g_array_unref(plan->message_deps);
    if (plan->boxes != NULL)
        g_hash_table_unref(plan->boxes);
    g_free(plan);
}

guint
rs_plan_get_n_boxes(const RsPlan *plan)
{
    return plan->boxes != NULL ? g_hash_table_size(plan->boxes) : 0;
}

RsStrategy
rs_plan_get_strategy(const RsPlan *plan)
{
    return plan->strategy;
}

RsPackMethod
rs_plan_get_pack_method(const RsPlan *plan)
{
    return plan->pack_method;
}

RsRoundSync
rs_plan_get_round_sync(const RsPlan *plan)
{
    return plan->round_sync;
}

guint64
rs_plan_get_relay_chunk_bytes(const RsPlan *plan)
{
    return plan->relay_chunk_bytes;
}

void
rs_plan_set_pack_method(RsPlan *plan, RsPackMethod method)
{
    g_return_if_fail(method < RS_PACK_N);
    plan->pack_method = method;
}

void
rs_plan_set_round_sync(RsPlan *plan, RsRoundSync sync)
{
    g_return_if_fail(sync < RS_ROUND_SYNC_N);
    plan->round_sync = sync;
}

const char *
rs_pack_method_get_name(RsPackMethod method)
{
    static const char *const names[] = {"none", "kernel", "copy-engine", "host-h2d"};
    g_return_val_if_fail(method < RS_PACK_N, NULL);
    return names[method];
}

const char *
rs_round_sync_get_name(RsRoundSync sync)
{
    static const char *const names[] = {"group", "world-barrier"};
    g_return_val_if_fail(sync < RS_ROUND_SYNC_N, NULL);
    return names[sync];
}

guint
rs_plan_get_n_transfers(const RsPlan *plan)
{
    return plan->transfers->len;
}

const RsTransfer *
rs_plan_get_transfer(const RsPlan *plan, guint index)
{
    g_return_val_if_fail(index < plan->transfers->len, NULL);
    return &g_array_index(plan->transfers, RsTransfer, index);
}

guint
rs_plan_get_n_messages(const RsPlan *plan)
{
    return plan->messages->len;
}

guint
rs_plan_get_n_network_messages(const RsPlan *plan)
{
    return plan->n_network_messages;
}

const RsMessage *
rs_plan_get_message(const RsPlan *plan, guint index)
{
    g_return_val_if_fail(index < plan->messages->len, NULL);
    return &g_array_index(plan->messages, RsMessage, index);
}

const guint *
rs_plan_get_message_deps(const RsPlan *plan, const RsMessage *message)
{
    if (message->n_deps == 0)
        return NULL;
    return &g_array_index(plan->message_deps, guint, message->first_dep);
}

guint
rs_plan_get_n_rounds(const RsPlan *plan)
{
    return plan->n_rounds;
}

guint64
rs_plan_get_max_round_staging_bytes(const RsPlan *plan)
{
    return plan->max_round_staging_bytes;
}

guint
rs_plan_get_n_phases(const RsPlan *plan)
{
    return plan->n_phases;
}

guint64
rs_plan_get_bytes_moved(const RsPlan *plan)
{
    return plan->bytes_moved;
}

guint64
rs_plan_get_local_bytes(const RsPlan *plan)
{
    return plan->local_bytes;
}

const char *
rs_strategy_get_name(RsStrategy strategy)
{
    static const char *const names[RS_STRATEGY_N] = {
        [RS_STRATEGY_GATHER_BROADCAST] = "gather-broadcast",
        [RS_STRATEGY_DIRECT] = "direct",
        [RS_STRATEGY_NODE_AWARE] = "node-aware",
        [RS_STRATEGY_HIERARCHICAL] = "hierarchical",
        [RS_STRATEGY_NCCL_BROADCAST] = "nccl-broadcast",
        [RS_STRATEGY_M2N] = "m2n",
        [RS_STRATEGY_M2N_DIRECT] = "m2n-direct",
        [RS_STRATEGY_CHECKPOINT_ENGINE] = "checkpoint-engine",
        [RS_STRATEGY_RDMA_P2P] = "rdma-p2p",
    };
    g_return_val_if_fail(strategy < RS_STRATEGY_N, "invalid");
    return names[strategy];
}

typedef struct {
    RsStrategyKind kind;
    const char *description;
    const char *source;
} StrategyInfo;

static const StrategyInfo strategy_info[RS_STRATEGY_N] = {
    [RS_STRATEGY_GATHER_BROADCAST] = {RS_STRATEGY_KIND_STRAWMAN,
                                      "gather each tensor on one rank, then one chain through "
                                      "every inference rank (one NIC at a time)",
                                      "reshard plan/gather-broadcast.c (a strawman)"},
    [RS_STRATEGY_DIRECT] = {RS_STRATEGY_KIND_OURS,
                            "every destination pulls exactly its boxes from one source replica, "
                            "replicas round-robin",
                            "reshard plan/direct.c"},
    [RS_STRATEGY_NODE_AWARE] = {RS_STRATEGY_KIND_OURS,
                                "as direct, each piece from the replica whose route is least "
                                "loaded (NVLink domain, rail, NIC), striped",
                                "reshard plan/node-aware.c, plan/balance.c"},
    [RS_STRATEGY_HIERARCHICAL] = {RS_STRATEGY_KIND_OURS,
                                  "each unique byte crosses the fabric once per destination "
                                  "NVLink domain, then fans out over NVLink",
                                  "reshard plan/hierarchical.c, plan/balance.c"},
    [RS_STRATEGY_NCCL_BROADCAST] = {RS_STRATEGY_KIND_BASELINE,
                                    "per stage, all-gather each tensor in its TP/EP group, then "
                                    "an NCCL ring broadcast (a channel per rail) to every "
                                    "inference rank",
                                    "NVIDIA/nccl src/graph/tuning.cc, src/device/broadcast.h; "
                                    "verl, NeMo-RL, slime weight sync"},
    [RS_STRATEGY_M2N] = {RS_STRATEGY_KIND_PEER,
                         "NCCL M2N hierarchical (NODE_AWARE): a leader per NVLink domain, a "
                         "linear chain of domains, one call per tensor",
                         "NVIDIA/nccl-extensions nccl_m2n/src/reshard_loadbalance.cc, "
                         "reshard_prepare.cc"},
    [RS_STRATEGY_M2N_DIRECT] = {RS_STRATEGY_KIND_PEER,
                                "NCCL M2N direct (UNIFORM): one source replica per destination "
                                "replica, point to point, one call per tensor",
                                "NVIDIA/nccl-extensions nccl_m2n/src/reshard_loadbalance.cc, "
                                "reshard_prepare.cc"},
    [RS_STRATEGY_CHECKPOINT_ENGINE] = {RS_STRATEGY_KIND_PEER,
                                       "checkpoint-engine broadcast: per owner bucket, H2D copy "
                                       "then an NCCL broadcast to every inference rank",
                                       "MoonshotAI/checkpoint-engine checkpoint_engine/ps.py "
                                       "_update_per_bucket, _detect_bucket_size"},
    [RS_STRATEGY_RDMA_P2P] = {RS_STRATEGY_KIND_PEER,
                              "static schedule: one training GPU per tensor rebuilds it whole, "
                              "then RDMA-writes each inference GPU its slice",
                              "Perplexity research, \"Weight Transfer for RL Post-Training in "
                              "under 2 seconds\" (2025)"},
};

RsStrategyKind
rs_strategy_get_kind(RsStrategy strategy)
{
    g_return_val_if_fail(strategy < RS_STRATEGY_N, RS_STRATEGY_KIND_STRAWMAN);
    return strategy_info[strategy].kind;
}

gboolean
rs_strategy_runs_in_executor(RsStrategy strategy)
{
    RsStrategyKind kind = rs_strategy_get_kind(strategy);
    return kind == RS_STRATEGY_KIND_OURS || kind == RS_STRATEGY_KIND_STRAWMAN;
}

const char *
rs_strategy_get_description(RsStrategy strategy)
{
    g_return_val_if_fail(strategy < RS_STRATEGY_N, "invalid");
    return strategy_info[strategy].description;
}

const char *
rs_strategy_get_source(RsStrategy strategy)
{
    g_return_val_if_fail(strategy < RS_STRATEGY_N, "invalid");
    return strategy_info[strategy].source;
}

gboolean
rs_strategy_is_default(RsStrategy strategy)
{
    RsStrategyKind k = rs_strategy_get_kind(strategy);
    return k == RS_STRATEGY_KIND_OURS || k == RS_STRATEGY_KIND_BASELINE;
}

gboolean
rs_strategy_parse(const char *name, RsStrategy *strategy_out, GError **error)
{
    for (guint s = 0; s < RS_STRATEGY_N; s++) {
        if (strcmp(name, rs_strategy_get_name((RsStrategy)s)) == 0) {
            *strategy_out = (RsStrategy)s;
            return TRUE;
        }
    }
    g_autoptr(GString) list = g_string_new(NULL);
    for (guint s = 0; s < RS_STRATEGY_N; s++)
        g_string_append_printf(list, "%s%s", s ? ", " : "", rs_strategy_get_name((RsStrategy)s));
    g_set_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_UNKNOWN_STRATEGY,
                "unknown strategy \"%s\" (known: %s)", name, list->str);
    return FALSE;
}

const RsLocalBox *
rs_transfer_get_side_boxes(const RsRefit *refit, const RsTransfer *tr, gboolean src_side,
                           const RsLocalBox *staging, guint *n_out)
{
    const RsRefitTensor *t = rs_refit_get_tensor(refit, tr->tensor_idx);
    if (tr->flags & (src_side ? RS_TRANSFER_FROM_STAGING : RS_TRANSFER_TO_STAGING)) {
        *n_out = 1;
        return staging;
    }
    gboolean from_dst = src_side && (tr->flags & RS_TRANSFER_FROM_DESTINATION);
    const RsLayout *layout = src_side && !from_dst ? t->src : t->dst;
    gint idx = rs_layout_find_rank(layout, src_side ? tr->src : tr->dst);
    if (idx < 0) {
        *n_out = 0;
        return NULL;
    }
    return rs_layout_get_boxes(layout, (guint)idx, n_out);
}

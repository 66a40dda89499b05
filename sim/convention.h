/* convention.h — parallel conventions of training and inference frameworks: how a
 * framework with given parallel sizes lays out each weight of a model over its GPUs.
 *
 * A convention is a name plus integer parameters ("megatron:tp=2,pp=4,ep=8"). Resolving it
 * against a model and an ordered list of GPUs gives one layout per model tensor; world rank
 * i of the framework runs on gpus[i].
 *
 * megatron (Megatron-LM / Megatron-Core training):
 *   tp, cp, pp, dp, ep, etp. World = tp·cp·dp·pp; ranks ordered tp-cp-ep-dp-pp (tp varies
 *   fastest), as RankGenerator in megatron/core/parallel_state.py with its default order.
 *   Dense weights of a stage: mesh [dp, cp, tp]; column-parallel Shard(0), row-parallel
 *   Shard(1), vocab-parallel embedding/output Shard(0), the rest replicated
 *   (tensor_parallel/layers.py ColumnParallelLinear, RowParallelLinear,
 *   VocabParallelEmbedding; MLA down-projections are "duplicated" in
 *   transformer/multi_latent_attention.py). Routed experts: mesh [edp, ep, etp] over the
 *   same ranks with edp = tp·cp·dp / (ep·etp) (the expert RankGenerator, order
 *   tp-cp-ep-dp-pp with tp=etp, cp=1), experts Shard(0) over ep, so ep rank e holds global
 *   experts [e·E/ep, (e+1)·E/ep) (moe/experts.py), the intermediate dim over etp; etp
 *   defaults to tp (expert_tensor_parallel_size). Decoder layers are spread over pp stages
 *   as evenly as possible: stage s holds layers [floor(s·L/pp), floor((s+1)·L/pp)); the
 *   first stage holds the embedding, the last the final norm, the output layer and the MTP
 *   layers. Requirements: heads % tp == 0, experts % ep == 0, ep·etp divides tp·cp·dp,
 *   pp <= layers.
 *
 * vllm (vLLM inference):
 *   tp, dp. World = tp·dp, rank = dp_rank·tp + tp_rank; each dp replica holds the whole
 *   model sharded over its tp ranks (mesh [dp, tp]). Column-parallel Shard(0), row-parallel
 *   Shard(1), VocabParallelEmbedding and ParallelLMHead Shard(0), ReplicatedLinear, norms
 *   and the router replicated (vllm/model_executor/layers/linear.py, vocab_parallel_embedding.py).
 *   Routed experts without expert parallelism: every rank holds all experts, split on the
 *   intermediate dim (w13 Shard(1), w2 Shard(2) of [E, out, in]; layers/fused_moe/layer.py).
 *   KV-head projections with fewer heads than tp: each KV head is held by tp / n_kv
 *   consecutive ranks (QKVParallelLinear num_kv_head_replicas). Requirements: query heads
 *   % tp == 0; KV heads divide tp or are divided by it.
 */
#pragma once

#include <glib.h>

#include "sim/layout.h"
#include "sim/model.h"

G_BEGIN_DECLS

#define RS_CONVENTION_ERROR (rs_convention_error_quark())
GQuark rs_convention_error_quark(void);

typedef enum {
    RS_CONVENTION_ERROR_UNKNOWN,    /* no convention of that name; the message lists them */
    RS_CONVENTION_ERROR_PARAM,      /* an unknown, malformed or out-of-range parameter */
    RS_CONVENTION_ERROR_WORLD_SIZE, /* parallel sizes that do not multiply to the GPU count */
    RS_CONVENTION_ERROR_MODEL,      /* the model cannot be laid out so (heads, experts, layers) */
} RsConventionError;

typedef struct _RsConvention RsConvention;

/**
 * rs_convention_new:
 * @name: "megatron" or "vllm"
 * @error: RS_CONVENTION_ERROR_UNKNOWN listing the conventions
 *
 * Returns: (transfer full): a convention with every parameter unset, or NULL.
 */
RsConvention *rs_convention_new(const char *name, GError **error);

/**
 * rs_convention_parse:
 * @spec: "NAME" or "NAME:key=value,key=value" (values positive integers)
 * @error: RS_CONVENTION_ERROR_UNKNOWN or RS_CONVENTION_ERROR_PARAM naming the parameter
 *
 * Returns: (transfer full): the convention, or NULL.
 */
RsConvention *rs_convention_parse(const char *spec, GError **error);

void rs_convention_free(RsConvention *conv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsConvention, rs_convention_free)

/**
 * rs_convention_set:
 * @key: a parameter of the convention ("tp", "pp", …)
 * @value: >= 1
 * @error: RS_CONVENTION_ERROR_PARAM for an unknown key (the message lists the known ones)
 *   or a value < 1
 *
 * Returns: TRUE on success.
 */
gboolean rs_convention_set(RsConvention *conv, const char *key, gint64 value, GError **error);

/**
 * rs_convention_merge:
 * @conv: the convention to update
 * @overrides: parameters set here replace those of @conv; it must have the same name
 *   (otherwise @conv is replaced wholesale by a copy of @overrides)
 */
void rs_convention_merge(RsConvention **conv, const RsConvention *overrides);

/** rs_convention_get_name: Returns: (transfer none): "megatron" or "vllm". */
const char *rs_convention_get_name(const RsConvention *conv);

/**
 * rs_convention_get:
 * Returns: the value of @key, or 0 when unset (before resolution, derived sizes are unset).
 */
gint64 rs_convention_get(const RsConvention *conv, const char *key);

/** rs_convention_format: Returns: (transfer full): "megatron tp=1 pp=16 ep=16 dp=16". */
char *rs_convention_format(const RsConvention *conv);

/**
 * rs_convention_resolve:
 * @conv: the convention; unset sizes are filled in (dp from the GPU count, etp = tp)
 * @model: the model
 * @gpus: (array length=n_gpus): the GPU of each framework world rank, no GPU twice
 * @layouts_out: (out) (transfer full) (element-type RsLayout): one layout per model
 *   tensor, in model order; tensors of equal shape, role and stage share one layout
 * @summary_out: (out) (transfer full) (optional): one line per pipeline stage or group,
 *   e.g. "stage 0: GPUs 0-15, layers 0-3 + embedding"
 * @error: RS_CONVENTION_ERROR_WORLD_SIZE ("megatron tp=1 × cp=1 × pp=16 × dp=16 = 256
 *   ranks, but 128 GPUs are given"), RS_CONVENTION_ERROR_MODEL ("tp=3 does not divide
 *   128 attention heads of model.layers.0.self_attn.q_b_proj.weight"),
 *   RS_CONVENTION_ERROR_PARAM
 *
 * O(n_tensors + n_gpus · distinct layouts).
 *
 * Returns: TRUE on success.
 */
gboolean rs_convention_resolve(RsConvention *conv, const RsModel *model, const guint32 *gpus,
                               guint n_gpus, GPtrArray **layouts_out, char **summary_out,
                               GError **error);

/** rs_conventions_list: Returns: (transfer full): "megatron, vllm". */
char *rs_conventions_list(void);

G_END_DECLS

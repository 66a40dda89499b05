/* convention.h — parallel conventions of training and inference frameworks: how a
 * framework with given parallel sizes lays out each weight of a model over its GPUs.
 *
 * A convention is a name plus parameters ("megatron:tp=2,pp=4,ep=8"): integers, switches
 * ("vllm:tp=8,dp=4,ep" or ep=on/off) and integer lists ("megatron:pp=4,pp-layers=15,16,
 * 15,15"). Resolving it against a model and an ordered list of GPUs gives one layout per
 * model tensor and, for tensors the framework fuses with siblings, the name of the fused
 * local buffer; world rank i of the framework runs on gpus[i]. Expert ids are global in
 * every layout: dim 0 of a grouped [E, …] tensor is the global expert index.
 *
 * megatron (Megatron-LM / Megatron-Core training): tp, cp, pp, vpp, dp, ep, etp,
 *   pp-layers. World = tp·cp·dp·pp; ranks ordered tp-cp-ep-dp-pp (tp varies fastest), as
 *   RankGenerator in megatron/core/parallel_state.py with its default order. Dense weights
 *   of a stage: mesh [dp, cp, tp]; ColumnParallelLinear Shard(0), RowParallelLinear
 *   Shard(1) (megatron/core/tensor_parallel/layers.py); VocabParallelEmbedding and the
 *   output layer over tp with the vocabulary padded to a multiple of 128·tp
 *   (megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding); q, k, v fused
 *   per query group in linear_qkv (transformer/attention.py,
 *   SelfAttention.get_query_key_value_tensors; tp must divide the groups); gate and up
 *   fused in linear_fc1 as [gate_local; up_local] (transformer/mlp.py, gated linear unit);
 *   MLA down-projections duplicated on every tp rank (transformer/multi_latent_attention.py);
 *   norms and routers replicated. Routed experts: mesh [edp, ep, etp] over the same ranks
 *   with edp = tp·cp·dp / (ep·etp) (the expert RankGenerator, order tp-cp-ep-dp-pp with
 *   tp = etp, cp = 1), experts Shard(0) over ep, so ep rank e holds global experts
 *   [e·E/ep, (e+1)·E/ep) (moe/experts.py, local_expert_indices); per expert linear_fc1
 *   [gate_local; up_local] over etp and linear_fc2 Shard on its input dim; an interleaved
 *   gate/up checkpoint tensor (gpt-oss) is seen as two strided runs, a fused [gate; up]
 *   checkpoint tensor (RS_ROLE_EXPERT_GATE_UP_FUSED: Llama-4, Qwen3.5) as its two halves
 *   each chunked over etp (transformer/mlp.py, apply_swiglu_sharded_factory). etp
 *   defaults to tp.
 *   Layers over pp stages: pp-layers lists the layers of each stage (pp entries), or of
 *   each virtual stage in order (pp·vpp entries, virtual stage v on stage v mod pp, the
 *   interleaved schedule of megatron/core/transformer/transformer_layer.py,
 *   get_transformer_layer_offset); without it stage s holds layers [floor(s·L/pp),
 *   floor((s+1)·L/pp)) (vpp = 1) or pp·vpp equal virtual stages (L must divide). The first
 *   stage holds the embedding, the last the final norm, the output layer and the MTP
 *   layers; a tied embedding is held by both (legitimate replicas). Requirements: heads
 *   and query groups divisible by tp, experts by ep, ep·etp divides tp·cp·dp.
 *
 * fsdp2 (PyTorch FSDP2, torch.distributed.fsdp.fully_shard, with tensor parallelism as
 *   torchtitan applies it): dp (shard size), replicate (HSDP replicas, default 1), tp.
 *   World = replicate·dp·tp, mesh [replicate, dp, tp] row-major (torchtitan
 *   distributed/parallel_dims.py, ParallelDims mesh dims dp_replicate, dp_shard, tp; tp
 *   fastest). TP plan (torchtitan models/llama3/infra/parallelize.py, apply_tp):
 *   ColwiseParallel Shard(0) for q, k, v, gate, up and the output head, RowwiseParallel
 *   Shard(1) for o and down, Shard(0) for the embedding, norms and routers replicated,
 *   experts over tp on their intermediate dim (a fused [gate; up] checkpoint tensor,
 *   RS_ROLE_EXPERT_GATE_UP_FUSED, replicated over tp: a contiguous Shard would mix gate
 *   and up); tp must divide the query and KV heads.
 *   FSDP then shards dim 0 over dp: Shard(0), or StridedShard(0, tp) when tp already
 *   sharded dim 0, with Replicate over the HSDP dim (torch/distributed/fsdp/_fully_shard/
 *   _fsdp_param.py, FSDPParam._init_sharded_param). No fusion: FSDP2 keeps the model's
 *   own (Hugging Face) parameters. Uneven sizes follow torch.chunk and the current
 *   _StridedShard rule (rs_layout_new_dtensor); PyTorch releases before 2.7 refused uneven
 *   FSDP + TP sharding in that function.
 *
 * vllm (vLLM inference): tp, dp, pp, ep (switch: --enable-expert-parallel), replicas,
 *   pp-layers. replicas independent engines (derived from the GPU count; RL frameworks
 *   launch one engine per rollout replica), each of dp·pp·tp ranks with dp vLLM's
 *   --data-parallel-size; World = replicas·dp·pp·tp, rank = (e·pp + pp_rank)·tp + tp_rank
 *   with e = replica·dp + dp_rank (vllm/distributed/parallel_state.py,
 *   initialize_model_parallel: all_ranks reshaped [dp, pp, tp]; engines one after
 *   another). Layers over pp stages by get_pp_indices (vllm/distributed/utils.py:
 *   L // pp each, the remainder one each to the stages before the last, from the
 *   second-to-last backwards) or pp-layers (VLLM_PP_LAYER_PARTITION); embedding on the
 *   first stage, final norm, head and MTP layers on the last, a tied embedding on both.
 *   Per stage mesh [replicas·dp, tp]: QKVParallelLinear qkv_proj [q_local; k_local;
 *   v_local] with KV heads replicated when tp exceeds them (layers/linear.py);
 *   MergedColumnParallelLinear gate_up_proj [gate_local; up_local]; RowParallelLinear
 *   Shard(1); other column-parallel weights Shard(0); VocabParallelEmbedding and
 *   ParallelLMHead padded to a multiple of 64 and split evenly
 *   (layers/vocab_parallel_embedding.py); fused_qkv_a_proj [q_a; kv_a] and the other
 *   ReplicatedLinear, norms and routers replicated (models/deepseek_v2.py).
 *   Routed experts (layers/fused_moe/layer.py) on the mesh [replicas, dp·tp] of a stage:
 *   FusedMoEParallelConfig.make flattens the MoE tensor parallelism across dp
 *   (layers/fused_moe/config.py, flatten_tp_across_dp: moe_tp_rank = dp_rank·tp +
 *   tp_rank; docs/serving/data_parallel_deployment.md). Without ep every rank holds
 *   every expert, w13 [E, 2·I/(dp·tp), H] as [gate_local; up_local] per expert and w2
 *   Shard on I over dp·tp; with ep the dp·tp ranks of an engine's stage (ep_rank =
 *   dp_rank·tp + tp_rank) hold whole experts, split by determine_expert_map's "linear"
 *   rule (the first E mod ep ranks one more). Engine replicas hold the same experts. A
 *   fused [gate; up] checkpoint tensor (RS_ROLE_EXPERT_GATE_UP_FUSED: Llama-4 [E, H, 2I],
 *   Qwen3.5 [E, 2I, H]) is that w13: each half chunked over dp·tp (FusedMoE._load_w13;
 *   models/llama4.py load_moe_expert_weights), whole with ep. gpt-oss served in MXFP4
 *   (rs_convention_set_weight_dtype()) is split in whole 32-value blocks of I as vLLM
 *   loads it (models/gpt_oss.py, _load_weights_mxfp4: cdiv(I / 32, dp·tp) blocks a rank,
 *   the last rank shorter or empty; rows 2· those of the interleaved gate_up_proj and its
 *   bias), each buffer that long: RS_SPLIT_PADDED with the multiple 32·dp·tp.
 *   Requirements: query heads % tp == 0; KV heads divide tp or are divided by it.
 *
 * sglang (SGLang inference): tp, dp, ep, dp-attention (switch). World = tp·dp without
 *   dp-attention (dp independent replicas of tp ranks), tp with it. With dp-attention the
 *   attention weights (self_attn.*) of the tp ranks are split over attn_tp = tp/dp and
 *   replicated over attn_dp = dp, rank = attn_dp_rank·attn_tp + attn_tp_rank
 *   (python/sglang/srt/layers/dp_attention.py, compute_dp_attention_world_info), and the
 *   embedding is replicated (models/deepseek_v2.py: VocabParallelEmbedding(enable_tp=not
 *   is_dp_attention_enabled())). MoE: ep divides tp; experts Shard(0) over ep and their
 *   intermediate dim over moe_tp = tp/ep, tp rank t in ep group t / moe_tp
 *   (distributed/parallel_state.py, initialize_model_parallel). Otherwise as vllm: fused
 *   qkv_proj, gate_up_proj, w13 (a fused [gate; up] checkpoint tensor's halves each over
 *   moe_tp), fused_qkv_a_proj_with_mqa, vocabulary padded to 64.
 */
#pragma once

#include <glib.h>

#include "layout/layout.h"
#include "models/model.h"

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
 * @name: "megatron", "fsdp2", "vllm" or "sglang"
 * @error: RS_CONVENTION_ERROR_UNKNOWN listing the conventions
 *
 * Returns: (transfer full): a convention with every parameter unset, or NULL.
 */
RsConvention *rs_convention_new(const char *name, GError **error);

/**
 * rs_convention_parse:
 * @spec: "NAME" or "NAME:key=value,key=value": integers >= 1, switches as a bare key or
 *   key=on|off|true|false|1|0, lists as key=a,b,c (the values after a list key that have
 *   no '=' belong to it; list values >= 0)
 * @error: RS_CONVENTION_ERROR_UNKNOWN or RS_CONVENTION_ERROR_PARAM naming the parameter
 *
 * Returns: (transfer full): the convention, or NULL.
 */
RsConvention *rs_convention_parse(const char *spec, GError **error);

void rs_convention_free(RsConvention *conv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsConvention, rs_convention_free)

/** rs_convention_dup: Returns: (transfer full): a copy of @conv. */
RsConvention *rs_convention_dup(const RsConvention *conv);

/**
 * rs_convention_set:
 * @key: a parameter of the convention ("tp", "pp", "ep", …)
 * @value: >= 1 for sizes; 0 or 1 for switches
 * @error: RS_CONVENTION_ERROR_PARAM for an unknown key (the message lists the known ones),
 *   a list key, or a value out of range
 *
 * Returns: TRUE on success.
 */
gboolean rs_convention_set(RsConvention *conv, const char *key, gint64 value, GError **error);

/**
 * rs_convention_set_list:
 * @key: a list parameter ("pp-layers")
 * @values: (array length=n_values): each >= 0
 * @error: RS_CONVENTION_ERROR_PARAM for a key that is not a list or a negative value
 *
 * Returns: TRUE on success.
 */
gboolean rs_convention_set_list(RsConvention *conv, const char *key, const gint64 *values,
                                guint n_values, GError **error);

/**
 * rs_convention_set_text:
 * @key: a parameter of any kind
 * @text: its value as written in a spec or a scenario file ("4", "on", "3,4,4"); NULL
 *   turns a switch on
 * @error: RS_CONVENTION_ERROR_PARAM naming the key
 *
 * Returns: TRUE on success.
 */
gboolean rs_convention_set_text(RsConvention *conv, const char *key, const char *text,
                                GError **error);

/** rs_convention_has_param: Returns: TRUE when @key is a parameter of @conv's convention. */
gboolean rs_convention_has_param(const RsConvention *conv, const char *key);

/** rs_convention_param_is_list: Returns: TRUE when @key is a list parameter. */
gboolean rs_convention_param_is_list(const RsConvention *conv, const char *key);

/** rs_convention_param_is_switch: Returns: TRUE when @key is a switch (on or off: vllm's
 * ep), FALSE for a size (megatron's ep) or a key the convention does not have. */
gboolean rs_convention_param_is_switch(const RsConvention *conv, const char *key);

/**
 * rs_convention_merge:
 * @conv: the convention to update
 * @overrides: parameters set here replace those of @conv; it must have the same name
 *   (otherwise @conv is replaced wholesale by a copy of @overrides)
 */
void rs_convention_merge(RsConvention **conv, const RsConvention *overrides);

/** rs_convention_get_name: Returns: (transfer none): "megatron", "vllm", … */
const char *rs_convention_get_name(const RsConvention *conv);

/**
 * rs_convention_get:
 * Returns: the value of @key, or 0 when unset (before resolution, derived sizes are
 * unset); a switch is 1 when on.
 */
gint64 rs_convention_get(const RsConvention *conv, const char *key);

/**
 * rs_convention_get_list:
 * @n_out: (out): number of values (0 when unset)
 * Returns: (transfer none) (nullable): the values of list parameter @key, alive until
 * the parameter is set again.
 */
const gint64 *rs_convention_get_list(const RsConvention *conv, const char *key, guint *n_out);

/**
 * rs_convention_get_world_size:
 * Returns: the number of ranks the sizes imply, with unset sizes (dp, replicas) taken as 1.
 */
guint64 rs_convention_get_world_size(const RsConvention *conv);

/**
 * rs_convention_set_weight_dtype:
 * @dtype: (nullable): the dtype the side holds its weights in (an inference side's
 *   --infer-dtype), copied; NULL unsets it, and the model's dtype applies
 *
 * Read by the next rs_convention_resolve_full() (set it before, it stays until set again;
 * rs_scenario_build() sets it from the scenario's infer_dtype each time). Where a framework
 * lays a dtype out its own way: vllm splits gpt-oss's MXFP4 experts in whole 32-value
 * blocks (RS_MXFP4_BLOCK_ELEMS; convention-vllm.c); the other conventions ignore it.
 */
void rs_convention_set_weight_dtype(RsConvention *conv, const RsDtype *dtype);

/**
 * rs_convention_get_weight_dtype:
 * @dtype_out: (out): the dtype rs_convention_set_weight_dtype() set, when set
 * Returns: TRUE when one was set.
 */
gboolean rs_convention_get_weight_dtype(const RsConvention *conv, RsDtype *dtype_out);

/**
 * rs_convention_set_where:
 * @key: a parameter of @conv's class
 * @where: (nullable): where its value was given, for errors: "s.yaml:21:7: infer.tp"
 *   (copied)
 *
 * Setting the value again (rs_convention_set(), a merge, a sweep's point) forgets it.
 */
void rs_convention_set_where(RsConvention *conv, const char *key, const char *where);

/**
 * rs_convention_get_where:
 * @key: (nullable): a parameter name
 * Returns: (transfer none) (nullable): what rs_convention_set_where() recorded for @key's
 * current value, or NULL (none, an unset value, or an unknown or NULL @key).
 */
const char *rs_convention_get_where(const RsConvention *conv, const char *key);

/**
 * rs_convention_get_error_key:
 * Returns: (transfer none) (nullable): the parameter the last failed resolve of @conv
 * blamed ("tp" for a tp the heads refuse, "ep" for one the experts refuse, "pp",
 * "pp-layers"), or NULL (it succeeded, or no one parameter is at fault: sizes that do not
 * multiply to the GPU count, a model shape).
 */
const char *rs_convention_get_error_key(const RsConvention *conv);

/**
 * rs_convention_get_derived_key:
 * Returns: (transfer none): the size an unset value of which the resolver derives from
 * the GPU count, the number of copies of the model: "dp" (megatron, fsdp2, sglang),
 * "replicas" (vllm, whose dp is vLLM's --data-parallel-size inside one engine).
 */
const char *rs_convention_get_derived_key(const RsConvention *conv);

/** rs_convention_format: Returns: (transfer full): "megatron tp=1 pp=16 ep=16 dp=16". */
char *rs_convention_format(const RsConvention *conv);

/* What a convention resolves to. */
typedef struct {
    GPtrArray *layouts; /* (element-type RsLayout): one layout per model tensor */
    GPtrArray *buffers; /* (element-type utf8): each tensor's fused buffer name, or NULL */
    char *summary;      /* one line per pipeline stage or replica */
} RsConventionResult;

/**
 * rs_convention_resolve_full:
 * @conv: the convention; unset sizes are filled in (rs_convention_get_derived_key()'s
 *   from the GPU count, etp = tp, …)
 * @model: the model
 * @gpus: (array length=n_gpus): the GPU of each framework world rank, no GPU twice
 * @out: (out caller-allocates): layouts, fused buffer names and the summary, in model
 *   order; tensors of equal shape, split and ranks share one layout; clear with
 *   rs_convention_result_clear()
 * @error: RS_CONVENTION_ERROR_WORLD_SIZE ("megatron tp=1 × cp=1 × pp=16 × dp=16 = 256
 *   ranks, but 128 GPUs are given"), RS_CONVENTION_ERROR_MODEL naming the tensor ("tp=3
 *   does not divide the 128 attention heads of model.layers.0.self_attn.q_b_proj.weight",
 *   a KV head count that neither divides nor is divided by tp, layers that do not fit
 *   pp-layers), RS_CONVENTION_ERROR_PARAM
 *
 * O(n_tensors + n_gpus · distinct layouts).
 *
 * Returns: TRUE on success; on failure @out holds nothing.
 */
gboolean rs_convention_resolve_full(RsConvention *conv, const RsModel *model, const guint32 *gpus,
                                    guint n_gpus, RsConventionResult *out, GError **error);

void rs_convention_result_clear(RsConventionResult *result);

/**
 * rs_convention_resolve:
 * As rs_convention_resolve_full(), returning only the layouts (transfer full) and the
 * summary (transfer full, optional).
 */
gboolean rs_convention_resolve(RsConvention *conv, const RsModel *model, const guint32 *gpus,
                               guint n_gpus, GPtrArray **layouts_out, char **summary_out,
                               GError **error);

/** rs_conventions_list: Returns: (transfer full): "megatron, fsdp2, vllm, sglang". */
char *rs_conventions_list(void);

G_END_DECLS

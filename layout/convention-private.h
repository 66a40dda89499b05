/* convention-private.h — what the framework conventions (convention-megatron.c,
 * convention-fsdp2.c, convention-vllm.c, convention-sglang.c) share with the registry and
 * the shared resolver in convention.c: the class record a framework fills in (its name, its
 * parameters, its resolve function, its world size), the resolver state one resolution
 * passes around, the mesh choice a framework makes for each tensor, and pipeline stages.
 *
 * A framework's resolve function reads and completes its parameters (unset sizes derived
 * from the GPU count), checks them against the GPUs and the model, then lays out every
 * tensor with rs_resolver_lay_out_all() and its choose function, and appends its summary
 * lines. The layouts themselves are built and cached by convention.c. */
#pragma once

#include "layout/convention.h"

G_BEGIN_DECLS

/* Most parameters of one convention (megatron has 8). */
#define RS_CONVENTION_MAX_PARAMS 10

typedef enum {
    RS_PARAM_INT,  /* a size, >= 1 */
    RS_PARAM_BOOL, /* a switch */
    RS_PARAM_LIST, /* integers >= 0 */
} RsParamKind;

typedef struct {
    const char *name;
    RsParamKind kind;
} RsParamSpec;

/* The state one resolution shares between convention.c and a framework. */
typedef struct _RsResolver RsResolver;

typedef gboolean (*RsConventionResolveFunc)(RsConvention *conv, RsResolver *r, GError **error);

/* One framework: a registry entry (convention.c lists them in the order
 * rs_conventions_list() prints). */
typedef struct {
    const char *name;
    RsParamSpec params[RS_CONVENTION_MAX_PARAMS + 1]; /* terminated by a NULL name */
    RsConventionResolveFunc resolve;
    /* The number of ranks the sizes of @conv imply, unset sizes taken as 1 (or as the
     * framework defaults them); rs_convention_get_world_size(). */
    guint64 (*world_size)(const RsConvention *conv);
    /* The size the resolver derives from the GPU count when it is unset: the number of
     * copies of the model (rs_convention_get_derived_key()). */
    const char *derived_key;
} RsConventionClass;

extern const RsConventionClass rs_convention_class_megatron;
extern const RsConventionClass rs_convention_class_fsdp2;
extern const RsConventionClass rs_convention_class_vllm;
extern const RsConventionClass rs_convention_class_sglang;

struct _RsResolver {
    RsConvention *conv;
    const RsModel *model;
    const guint32 *gpus;
    guint n_gpus;
    char *desc;         /* rs_convention_format() after sizes are derived */
    GHashTable *cache;  /* key → GPtrArray of RsLayout */
    GPtrArray *layouts; /* per model tensor, NULL until resolved */
    GPtrArray *buffers; /* per model tensor, char* or NULL */
    GString *summary;
    gpointer data; /* the convention's own state */
};

/* --- parameters --- */

/* rs_convention_get_or: Returns: the value of @key, or @fallback when it is unset. */
gint64 rs_convention_get_or(const RsConvention *conv, const char *key, gint64 fallback);

/* rs_convention_set_resolved: records the value a resolution settled on for @key (a
 * parameter of @conv's class; no range check), so that rs_convention_format() shows it. */
void rs_convention_set_resolved(RsConvention *conv, const char *key, gint64 value);

/**
 * rs_convention_check_world:
 * @product_text: how the framework multiplies its sizes ("tp x cp x dp x pp")
 * @product: that product
 *
 * Returns: TRUE when @product equals @n_gpus; otherwise FALSE with
 * RS_CONVENTION_ERROR_WORLD_SIZE ("megatron tp=1 …: tp x cp x dp x pp = 256 ranks, but 128
 * GPUs are given").
 */
gboolean rs_convention_check_world(RsConvention *conv, const char *product_text, gint64 product,
                                   guint n_gpus, GError **error);

/**
 * rs_convention_product:
 * @n: the number of sizes
 * @sizes: (array length=n): parallel sizes, each 1 .. 2^24: two of them always fit in 63
 *   bits, three or more may not
 * Returns: their product, or G_MAXINT64 when it does not fit: a product never wraps (a
 * wrapped one was 0, and n_gpus % 0 killed the process). The check and derivation below
 * say "more than 2^63" for it.
 */
gint64 rs_convention_product(guint n, const gint64 *sizes);

/* rs_convention_product() of its arguments, counted: RS_CONVENTION_PRODUCT(tp, pp, dp). */
#define RS_CONVENTION_PRODUCT(...)                                                                 \
    rs_convention_product(G_N_ELEMENTS(((gint64[]){__VA_ARGS__})), (gint64[]){__VA_ARGS__})

/**
 * rs_convention_derive_size:
 * @model_parallel: the product of the sizes other than the class's derived_key (its
 *   "dp", vllm's "replicas"); @product_text spells it
 *
 * Sets the derived key, when unset, to @n_gpus / @model_parallel. Returns: FALSE with
 * RS_CONVENTION_ERROR_WORLD_SIZE when @model_parallel does not divide @n_gpus.
 */
gboolean rs_convention_derive_size(RsConvention *conv, gint64 model_parallel,
                                   const char *product_text, guint n_gpus, GError **error);

/* --- mesh choices --- */

/* Where and how one tensor (or its fusion group) is laid out. */
typedef struct {
    const guint32 *ranks; /* the mesh's ranks, row-major */
    guint n_dims;
    guint sizes[RS_MAX_MESH_DIMS];
    const char *names[RS_MAX_MESH_DIMS];
    RsSplit splits[RS_MAX_MESH_DIMS];
    /* A second copy of the tensor on other ranks (a tied embedding on the last stage):
     * the same mesh shape and splits over these ranks; NULL when none. */
    const guint32 *copy_ranks;
    /* Lay out the tensor's fusion group as one buffer along fuse_dim, named
     * fuse_group + buffer_suffix; a tensor with no siblings may also get a buffer name. */
    gboolean fused;
    guint fuse_dim;
    const char *buffer_suffix;
} RsMeshChoice;

/* rs_mesh_choice_init: resets @c to the mesh @sizes / @names (@n_dims each) over @ranks
 * (borrowed; alive while @c is used), replicated over every mesh dim, not fused. */
void rs_mesh_choice_init(RsMeshChoice *c, const guint32 *ranks, guint n_dims, const guint *sizes,
                         const char *const *names);

/* rs_mesh_choice_shard: Shard(@tensor_dim) over mesh dim @mesh_dim. */
void rs_mesh_choice_shard(RsMeshChoice *c, guint mesh_dim, gint tensor_dim);

/* rs_mesh_choice_padded: @tensor_dim padded to a multiple of @multiple, then split evenly
 * over mesh dim @mesh_dim (vocabulary-parallel embeddings and heads). */
void rs_mesh_choice_padded(RsMeshChoice *c, guint mesh_dim, gint tensor_dim, gint64 multiple);

/* rs_mesh_choice_balanced: @tensor_dim over mesh dim @mesh_dim, the first (n mod size)
 * ranks one more (vLLM's "linear" expert map). */
void rs_mesh_choice_balanced(RsMeshChoice *c, guint mesh_dim, gint tensor_dim);

/**
 * rs_mesh_choice_fuse:
 * @index: a model tensor of a fusion group (q/k/v, gate/up, q_a/kv_a)
 * @fuse_dim: the tensor dim the group is concatenated along
 * @mesh_dim: the mesh dim of the FUSED split of @kind, or G_MAXUINT for none (the group
 *   concatenated whole)
 * @unit: rows per head (QKV kinds), 2 (interleaved) or 1
 * @suffix: appended to the group name for the fused buffer's name (static string)
 *
 * Makes @c lay out @index's group fused; the segment lengths are the group's extents
 * along @fuse_dim.
 */
void rs_mesh_choice_fuse(RsMeshChoice *c, const RsModel *model, guint index, guint fuse_dim,
                         guint mesh_dim, RsFusionKind kind, gint64 unit, const char *suffix);

/**
 * rs_mesh_choice_segments:
 * @t: a tensor with segments (RS_ROLE_EXPERT_GATE_UP_FUSED: [gate; up] along
 *   t->segment_dim, t->n_segments >= 1)
 * @mesh_dim: the mesh dim that splits them
 *
 * A FUSED split RS_FUSION_CONCAT of @t's own segments along t->segment_dim over mesh dim
 * @mesh_dim: position c holds [seg0_local; seg1_local; …], each segment chunked on its own
 * (layout.h: a FUSED split of one tensor). The tensor stays its own buffer (not fused with
 * siblings).
 */
void rs_mesh_choice_segments(RsMeshChoice *c, const RsTensorSpec *t, guint mesh_dim);

/* rs_fuse_group_is_complete: Returns: TRUE when @index has fusion siblings and every one
 * is in @model (a layer range keeps whole layers, so they normally are). */
gboolean rs_fuse_group_is_complete(const RsModel *model, guint index);

/* rs_convention_is_embedding: Returns: TRUE for the input embedding (vocabulary-parallel,
 * before the first layer), which a tied model also holds on the last stage. */
gboolean rs_convention_is_embedding(const RsTensorSpec *t);

/* --- the resolver --- */

/* How a framework lays out tensor @index: fills @c (rs_mesh_choice_init first), or fails
 * with RS_CONVENTION_ERROR_MODEL. */
typedef gboolean (*RsConventionChooseFunc)(RsResolver *r, guint index, RsMeshChoice *c,
                                           GError **error);

/**
 * rs_resolver_lay_out_all:
 * Lays out every model tensor not yet laid out (a fused sibling is laid out with its
 * group), in model order, as @choose says; layouts of equal key are shared.
 *
 * Returns: FALSE at the first tensor that fails: RS_CONVENTION_ERROR_MODEL (a layout the
 * tensor's shape refuses) or RS_CONVENTION_ERROR_PARAM, prefixed with r->desc and the
 * tensor (and fused buffer) name.
 */
gboolean rs_resolver_lay_out_all(RsResolver *r, RsConventionChooseFunc choose, GError **error);

/* rs_resolver_fail_model: sets RS_CONVENTION_ERROR_MODEL "DESC: TEXT" and records @key
 * (nullable; a static string: the parameter at fault, rs_convention_get_error_key()).
 * Returns: FALSE. */
gboolean rs_resolver_fail_model(RsResolver *r, const char *key, GError **error, const char *format,
                                ...) G_GNUC_PRINTF(4, 5);

/* rs_resolver_check_heads: Returns: FALSE (RS_CONVENTION_ERROR_MODEL) when @tp does not
 * divide the heads of per-head projection @t. */
gboolean rs_resolver_check_heads(RsResolver *r, const RsTensorSpec *t, gint64 tp, GError **error);

/**
 * rs_resolver_check_all_heads:
 * Checks every per-head projection against @tp before any layout is built, so that the
 * heads, the root of most incompatibilities, are what the user is told about. With
 * @kv_replicas a KV head count that tp is a multiple of is fine (inference engines
 * replicate KV heads); with @only_attention only self_attn tensors are checked.
 * Returns: FALSE with RS_CONVENTION_ERROR_MODEL naming the first tensor that fails.
 */
gboolean rs_resolver_check_all_heads(RsResolver *r, gint64 tp, gboolean kv_replicas,
                                     gboolean only_attention, GError **error);

/* rs_resolver_check_pp: Returns: FALSE (RS_CONVENTION_ERROR_MODEL) when @pp exceeds the
 * model's layers. */
gboolean rs_resolver_check_pp(RsResolver *r, gint64 pp, GError **error);

/* --- pipeline stages --- */

/* Stage of every decoder layer; embedding-side tensors (layer < 0) are on stage 0, the
 * final norm, head and MTP layers (layer >= n_layers) on the last. */
typedef struct {
    guint pp;
    guint n_layers;
    guint *stage_of;      /* n_layers entries */
    GString **layer_text; /* per stage "0-3, 16-19" */
} RsPipeline;

/* rs_pipeline_clear: frees what @p holds (a zeroed @p is fine). */
void rs_pipeline_clear(RsPipeline *p);

/* rs_pipeline_get_stage: Returns: the stage holding @layer (see RsPipeline). */
guint rs_pipeline_get_stage(const RsPipeline *p, gint layer);

/* rs_pipeline_from_counts: with p->pp and p->n_layers set, assigns @counts[v] consecutive
 * layers to virtual stage v (@n_virtual of them), which runs on stage v mod pp. */
void rs_pipeline_from_counts(RsPipeline *p, const gint64 *counts, guint n_virtual);

/* What stage @stage of @p holds of @model, for a layout's summary: "layers 3-4" (the
 * decoder layers @model has tensors of: a model cut to --layers A-B lists those only),
 * "layers none", then with @extras " + embedding" on the first stage and " + final norm,
 * head" (", MTP" with MTP layers) on the last when @model has those tensors. Returns:
 * (transfer full). */
char *rs_pipeline_format_stage(const RsPipeline *p, const RsModel *model, guint stage,
                               gboolean extras);

G_END_DECLS

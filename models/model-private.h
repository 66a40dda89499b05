/* model-private.h — the container's inside, for the loaders of this folder (the family
 * generators, the checkpoint import, model-load.c): the struct of a model and the calls
 * that build its tensor list one tensor at a time. Like model.h it depends on base/ only. */
#pragma once

#include "models/model.h"

G_BEGIN_DECLS

struct _RsModel {
    char *name;
    char *family;
    RsDtype dtype;
    RsModelStorage storage;
    guint n_layers;
    guint n_experts_per_token; /* 0 for dense models */
    guint scale;               /* width divisor, >= 1 */
    gboolean has_layer_range;  /* only layers first_layer..last_layer are kept */
    gint first_layer, last_layer;
    gboolean last_dropped;     /* the last rs_model_add_tensor call added nothing */
    gboolean tie_embeddings;   /* the head is the embedding (no lm_head tensor) */
    guint64 published_params;  /* 0: none stated */
    gboolean published_rounded;
    guint64 published_mtp_params; /* published_params_mtp: the figure with MTP layers */
    gboolean published_mtp_rounded;
    gboolean include_mtp;         /* generated with its MTP layers */
    gboolean has_mtp;             /* and it has some (set by rs_model_note_mtp) */
    GPtrArray *warnings;       /* char*, owned: what the loader assumed (see model.h) */
    GPtrArray *tensors;        /* RsTensorSpec*, owned */
    GHashTable *by_name;       /* name → index + 1 */
    GHashTable *fuse_index;    /* "kind/group/segment" → index + 1, built on first use */
    RsFuseKind next_fuse;      /* see rs_model_fuse_next() */
    guint next_fuse_segment;
    char *next_fuse_group;
};

/* Returns: (transfer full): an empty model (storage TRAINING, scale 1). */
RsModel *rs_model_new(void);

/* Sets has_mtp when a tensor is an MTP layer's: named "mtp.…" (Qwen3-Next, Qwen3.5) or
 * "…layers.N.…" with N >= n_layers (DeepSeek, GLM). Call once the tensors are added. */
void rs_model_note_mtp(RsModel *model);

/* Returns: FALSE when @layer falls outside the model's layer range (tensors there are
 * dropped). */
gboolean rs_model_is_layer_kept(const RsModel *model, gint layer);

/* Appends a tensor (format PLAIN, n_params = its elements); shape given as n_dims gint64
 * varargs. With a layer range, tensors outside it are not added (later rs_model_mark_* and
 * rs_model_set_last_* calls are then no-ops). */
void rs_model_add_tensor(RsModel *model, const char *name, RsTensorRole role, gint layer,
                         RsDtype dtype, guint n_heads, guint n_dims, ...);
/* The same with the shape as an array. */
void rs_model_add_tensor_shape(RsModel *model, const char *name, RsTensorRole role, gint layer,
                               RsDtype dtype, guint n_heads, guint n_dims, const gint64 *shape);

/* Marks the tensor added last as a key/value-head projection. */
void rs_model_mark_kv_heads(RsModel *model);
/* Sets the format and logical parameter count of the tensor added last. */
void rs_model_set_last_format(RsModel *model, RsTensorFormat format, guint64 n_params);
/* Marks the tensor added last as the block scales of the one added before it, one scale
 * per @block elements (array of n_dims) of that weight. */
void rs_model_mark_block_scale(RsModel *model, const gint64 *block);

/* Sets the dim-0 segments of the tensor added last (n <= RS_MAX_TENSOR_SEGMENTS). */
void rs_model_set_last_segments(RsModel *model, guint n, const gint64 *sizes);

/* Marks the tensor added last (role RS_ROLE_EXPERT_GATE_UP_FUSED, [E, …]) as [gate; up],
 * two equal halves of its dim @dim: n_segments 2, segments {shape[dim]/2, shape[dim]/2},
 * segment_dim @dim. A no-op returning TRUE when that tensor was dropped by a layer range.
 * Returns: FALSE (nothing set) when @dim is 0 or out of range or its extent is odd. */
gboolean rs_model_set_last_gate_up_halves(RsModel *model, guint dim);

/* Marks the tensor added last as segment @segment of the fusion group @group (copied) of
 * @kind. A no-op when that tensor was dropped by a layer range. */
void rs_model_mark_fused(RsModel *model, RsFuseKind kind, guint segment, const char *group);

/* Marks the next tensor added (the weight, before any scale tensor that follows it) as
 * segment @segment of fused group @group (see RsFuseKind). */
void rs_model_fuse_next(RsModel *model, RsFuseKind kind, guint segment, const char *group);

G_END_DECLS

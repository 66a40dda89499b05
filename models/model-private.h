/* model-private.h — what family generators and importers see: the config reader and the
 * tensor adder. */
#pragma once

#include "models/model.h"

G_BEGIN_DECLS

/* Config values by key, each remembered with where it came from ("path:line:col") so
 * that a generator's complaint points at the value, and with a flag set when a generator
 * reads it: a key nobody read is reported as unknown (a typo guard). Nested mappings are
 * stored under dotted keys ("quantization_config.quant_method"); sequences of scalars as
 * their items joined by "," ("4,8,12"). */
typedef struct _RsModelConfig RsModelConfig;

RsModelConfig *rs_model_config_new(const char *source);
void rs_model_config_free(RsModelConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsModelConfig, rs_model_config_free)

/* Adds a value; @where is "path:line:col". A later value for the same key replaces it. */
void rs_model_config_set(RsModelConfig *config, const char *key, const char *value,
                         const char *where);
/* Adds a list given in the file (a YAML/JSON sequence of scalars), @items joined by ','.
 * Only the list readers (get_int_list, get_text) accept it; the scalar readers fail with
 * "expected a single value, got a list" naming where. */
void rs_model_config_set_list(RsModelConfig *config, const char *key, const char *items,
                              const char *where);

/* Sets the width divisor rs_model_config_get_width() applies (>= 1). */
void rs_model_config_set_scale(RsModelConfig *config, guint scale);

/* Returns: the source name given at creation (a path). */
const char *rs_model_config_get_source(const RsModelConfig *config);

/* Returns: TRUE when @key holds a non-null value. Does not count as reading it. */
gboolean rs_model_config_has(RsModelConfig *config, const char *key);

/* Reads an integer in [min, max]; absent and !required leaves *out unchanged. A YAML/JSON
 * null counts as absent. */
gboolean rs_model_config_get_int(RsModelConfig *config, const char *key, gboolean required,
                                 gint64 min, gint64 max, gint64 *out, GError **error);
/* Reads a width (an integer in [1, max]) and divides it by the model's scale, rounding
 * down, at least 1. Generators read every dimension that scaling shrinks through this. */
gboolean rs_model_config_get_width(RsModelConfig *config, const char *key, gboolean required,
                                   gint64 max, gint64 *out, GError **error);
gboolean rs_model_config_get_bool(RsModelConfig *config, const char *key, gboolean required,
                                  gboolean *out, GError **error);
/* Reads one value as text (a list is an error). */
gboolean rs_model_config_get_string(RsModelConfig *config, const char *key, gboolean required,
                                    const char **out, GError **error);
/* Reads a value or a list as text (a list's items joined by ','). */
gboolean rs_model_config_get_text(RsModelConfig *config, const char *key, gboolean required,
                                  const char **out, GError **error);
/* Reads a list of integers in [min, max] ("4,8,12", from a YAML/JSON sequence; a single
 * integer is a list of one); *out (transfer full, element-type gint64) is left unchanged
 * when the key is absent and !required. */
gboolean rs_model_config_get_int_list(RsModelConfig *config, const char *key, gboolean required,
                                      gint64 min, gint64 max, GArray **out, GError **error);
/* Marks every key equal to @prefix or starting with "@prefix." as read: for informational
 * sub-trees (rope_scaling, quantization_config details). */
void rs_model_config_consume_prefix(RsModelConfig *config, const char *prefix);
/* Calls @func for every key starting with @prefix (in insertion order), marking it read;
 * @func gets the key with the prefix removed, the value and its location. */
void rs_model_config_foreach_prefix(RsModelConfig *config, const char *prefix,
                                    void (*func)(const char *subkey, const char *value,
                                                 const char *where, gpointer data),
                                    gpointer data);
/* Sets an error "where: key: message" (the source name when the key is absent). */
void rs_model_config_set_error(RsModelConfig *config, const char *key, GError **error,
                               const char *format, ...) G_GNUC_PRINTF(4, 5);
/* Returns: (transfer full) (nullable): the consumed integer keys whose value (or scaled
 * width) equals @value, joined by "/", or NULL when none does; *@where_out (when not NULL)
 * borrows the location of the first such key, valid while @config lives. For messages that
 * name the fields behind a computed dimension. */
char *rs_model_config_dup_keys_for_value(RsModelConfig *config, gint64 value,
                                         const char **where_out);
/* Fails naming the first key no reader consumed. */
gboolean rs_model_config_check_consumed(RsModelConfig *config, GError **error);

/* Reads a Hugging Face config.json into @config: members become keys, nested objects dotted
 * keys, arrays of scalars comma-separated lists, arrays of objects "key.N.member". A VLM
 * wrapper's "text_config" object is merged at the top level (its keys win), and the
 * wrapper's other sub-configs (vision_config, …) are kept under their own prefix. Each
 * value's location is "path:line:col" of its key. RS_MODEL_ERROR_CONFIG for a file that
 * does not read or parse ("path:line:col: …") or whose root is not an object. */
gboolean rs_model_config_load_json(RsModelConfig *config, const char *path, GError **error);

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
    GPtrArray *tensors;        /* RsTensorSpec*, owned */
    GHashTable *by_name;       /* name → index + 1 */
    GHashTable *fuse_index;    /* "kind/group/segment" → index + 1, built on first use */
    RsFuseKind next_fuse;      /* see rs_model_fuse_next() */
    guint next_fuse_segment;
    char *next_fuse_group;
};

/* Returns: (transfer full): an empty model (storage TRAINING, scale 1). */
RsModel *rs_model_new(void);

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

/* Marks the tensor added last as segment @segment of the fusion group @group (copied) of
 * @kind. A no-op when that tensor was dropped by a layer range. */
void rs_model_mark_fused(RsModel *model, RsFuseKind kind, guint segment, const char *group);

/* Marks the next tensor added (the weight, before any scale tensor that follows it) as
 * segment @segment of fused group @group (see RsFuseKind). */
void rs_model_fuse_next(RsModel *model, RsFuseKind kind, guint segment, const char *group);

typedef gboolean (*RsFamilyGenerator)(RsModel *model, RsModelConfig *config,
                                      const RsModelOptions *options, GError **error);

/* Returns the generator of @family, or NULL. */
RsFamilyGenerator rs_model_family_lookup(const char *family);

/* Fills @model (name, family, dtype, n_layers already set from @config's keys as far as
 * known) with the tensors of the checkpoint at @path (.safetensors or .safetensors.index.json),
 * roles from the user rules under "roles." in @config, then the built-in rules; reads
 * num_hidden_layers, num_attention_heads, num_key_value_heads and the experts-per-token
 * key from @config when present. Errors: RS_SAFETENSORS_ERROR, RS_MODEL_ERROR_ROLE,
 * RS_MODEL_ERROR_CONFIG. Implemented in model-import.c. */
gboolean rs_model_import_safetensors(RsModel *model, const char *path, RsModelConfig *config,
                                     const RsModelOptions *options, GError **error);

G_END_DECLS

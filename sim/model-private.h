/* model-private.h — what family generators see: the config reader and the tensor adder. */
#pragma once

#include "sim/model.h"

G_BEGIN_DECLS

/* Config values by key, each remembered with where it came from ("path:line:col") so
 * that a generator's complaint points at the value, and with a flag set when a generator
 * reads it: a key nobody read is reported as unknown (a typo guard). */
typedef struct _RsModelConfig RsModelConfig;

RsModelConfig *rs_model_config_new(const char *source);
void rs_model_config_free(RsModelConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsModelConfig, rs_model_config_free)

/* Adds a value; @where is "path:line:col". A later value for the same key replaces it. */
void rs_model_config_set(RsModelConfig *config, const char *key, const char *value,
                         const char *where);

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
gboolean rs_model_config_get_string(RsModelConfig *config, const char *key, gboolean required,
                                    const char **out, GError **error);
/* Sets an error "where: key: message" (the source name when the key is absent). */
void rs_model_config_set_error(RsModelConfig *config, const char *key, GError **error,
                               const char *format, ...) G_GNUC_PRINTF(4, 5);
/* Fails naming the first key no reader consumed. */
gboolean rs_model_config_check_consumed(RsModelConfig *config, GError **error);

struct _RsModel {
    char *name;
    char *family;
    RsDtype dtype;
    guint n_layers;
    guint n_experts_per_token; /* 0 for dense models */
    guint scale;               /* width divisor, >= 1 */
    gboolean has_layer_range;  /* only layers first_layer..last_layer are kept */
    gint first_layer, last_layer;
    gboolean last_dropped;     /* the last rs_model_add_tensor call added nothing */
    gboolean tie_embeddings;   /* the head is the embedding (no lm_head tensor) */
    GPtrArray *tensors;        /* RsTensorSpec*, owned */
    GHashTable *by_name;       /* name → index + 1 */
    GHashTable *fuse_index;    /* "kind/group/segment" → index + 1, built on first use */
};

/* Appends a tensor; shape given as n_dims gint64 varargs. With a layer range, tensors
 * outside it are not added (a later rs_model_mark_kv_heads is then a no-op). */
void rs_model_add_tensor(RsModel *model, const char *name, RsTensorRole role, gint layer,
                         RsDtype dtype, guint n_heads, guint n_dims, ...);

/* Marks the tensor added last as a key/value-head projection. */
void rs_model_mark_kv_heads(RsModel *model);

/* Marks the tensor added last as segment @segment of the fusion group @group (copied) of
 * @kind. A no-op when that tensor was dropped by a layer range. */
void rs_model_mark_fused(RsModel *model, RsFuseKind kind, guint segment, const char *group);

typedef gboolean (*RsFamilyGenerator)(RsModel *model, RsModelConfig *config,
                                      const RsModelOptions *options, GError **error);

/* Returns the generator of @family, or NULL. */
RsFamilyGenerator rs_model_family_lookup(const char *family);

G_END_DECLS

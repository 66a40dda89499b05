/* model-config-private.h — the key/value config a family generator or the checkpoint
 * import reads (model-config.c): values by key from a model YAML or a config.json, each with
 * the place it came from, and a record of which keys were read. It knows nothing of models
 * beyond the error domain (models/model.h). */
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

/* Sets the error of a required @key the file lacks: "source: key: required field is
 * missing (@detail)" (@detail nullable), or, when the file has a key no reader took within
 * 2 edits (Levenshtein) of it, that key at its place: "m.yaml:8:13: hidden_size: required
 * field is missing; is hiden_size here a typo for it?". */
void rs_model_config_set_missing(RsModelConfig *config, const char *key, GError **error,
                                 const char *detail);
/* Returns: (transfer full) (nullable): the consumed integer keys whose value (or scaled
 * width) equals @value, joined by "/", or NULL when none does; *@where_out (when not NULL)
 * borrows the location of the first such key, valid while @config lives. For messages that
 * name the fields behind a computed dimension. */
char *rs_model_config_dup_keys_for_value(RsModelConfig *config, gint64 value,
                                         const char **where_out);
/* Records a warning "where: key: message" (the source when the key is absent), for a value
 * the reader had to assume; the loader hands the warnings on with the model. */
void rs_model_config_warn(RsModelConfig *config, const char *key, const char *format, ...)
    G_GNUC_PRINTF(3, 4);
/* Records "where: key: missing; using VALUE, the default of ORIGIN" — ORIGIN names the
 * transformers config class whose default applies ("transformers Glm4MoeConfig"). */
void rs_model_config_warn_default(RsModelConfig *config, const char *key, const char *value,
                                  const char *origin);
/* Returns: (transfer none): the warnings recorded so far (char*), in order. */
GPtrArray *rs_model_config_get_warnings(RsModelConfig *config);
/* Readers for keys the family needs whose transformers default is known: the value when
 * given, else @value with a warning naming the key, the value and @origin (see
 * rs_model_config_warn_default). An explicit null states "none": *out is left unchanged and
 * nothing is warned. A malformed value is an error as for the plain readers.
 * The width reader scales @value like a given width. */
gboolean rs_model_config_get_bool_default(RsModelConfig *config, const char *key, gboolean value,
                                          const char *origin, gboolean *out, GError **error);
gboolean rs_model_config_get_int_default(RsModelConfig *config, const char *key, gint64 min,
                                         gint64 max, gint64 value, const char *origin, gint64 *out,
                                         GError **error);
gboolean rs_model_config_get_width_default(RsModelConfig *config, const char *key, gint64 max,
                                           gint64 value, const char *origin, gint64 *out,
                                           GError **error);
/* Returns: TRUE when a key starting with @prefix has not been read. */
gboolean rs_model_config_has_unconsumed_prefix(RsModelConfig *config, const char *prefix);
/* Fails naming the first key no reader consumed. */
gboolean rs_model_config_check_consumed(RsModelConfig *config, GError **error);

/* Reads a Hugging Face config.json into @config: members become keys, nested objects dotted
 * keys, arrays of scalars comma-separated lists, arrays of objects "key.N.member". A VLM
 * wrapper's "text_config" object is merged at the top level (its keys win), and the
 * wrapper's other sub-configs (vision_config, …) are kept under their own prefix. Each
 * value's location is "path:line:col" of its key. RS_MODEL_ERROR_CONFIG for a file that
 * does not read or parse ("path:line:col: …") or whose root is not an object. */
gboolean rs_model_config_load_json(RsModelConfig *config, const char *path, GError **error);

/* Reads a model YAML into @config: the root mapping's keys, nested mappings as dotted keys,
 * sequences of scalars as lists (rs_model_config_set_list), sequences of anything else as
 * "key.N[.member]"; a plain null, ~ or empty scalar is a null value. Each value's location
 * is "path:line:col" of the value. Errors: RS_YAML_ERROR for a file that does not read or
 * parse, whose root is not a mapping, that repeats a key, or whose key is not a scalar. */
gboolean rs_model_config_load_yaml(RsModelConfig *config, const char *path, GError **error);

G_END_DECLS

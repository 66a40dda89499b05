/* yaml-reader.h — reading the project's YAML inputs (models, topologies, scenarios) with libyaml,
 * so that every error names the file, line, column and field.
 *
 * A file is loaded whole into a libyaml document; readers look fields up in mappings and
 * convert scalars, reporting "path:line:col: field: message" on failure. Lines and columns
 * are 1-based in messages.
 */
#pragma once

#include <glib.h>
#include <yaml.h>

G_BEGIN_DECLS

#define RS_YAML_ERROR (rs_yaml_error_quark())
GQuark rs_yaml_error_quark(void);

typedef enum {
    RS_YAML_ERROR_IO,          /* the file could not be read */
    RS_YAML_ERROR_SYNTAX,      /* not well-formed YAML */
    RS_YAML_ERROR_MISSING,     /* a required field is absent */
    RS_YAML_ERROR_TYPE,        /* a field has the wrong kind (mapping, sequence, scalar) */
    RS_YAML_ERROR_VALUE,       /* a scalar that does not convert or is out of range */
    RS_YAML_ERROR_UNKNOWN_KEY, /* a key the reader does not know (typo guard) */
} RsYamlError;

typedef struct _RsYaml RsYaml;

/**
 * rs_yaml_load_file:
 * @path: file to read
 * @error: RS_YAML_ERROR_IO or RS_YAML_ERROR_SYNTAX ("path:line:col: problem"); an empty
 *   file is RS_YAML_ERROR_SYNTAX
 *
 * Returns: (transfer full): the document, or NULL on error.
 */
RsYaml *rs_yaml_load_file(const char *path, GError **error);

/**
 * rs_yaml_load_string:
 * @text: YAML text (NUL-terminated)
 * @name: the name used in messages in place of a path
 * @error: as rs_yaml_load_file()
 *
 * Returns: (transfer full): the document, or NULL on error.
 */
RsYaml *rs_yaml_load_string(const char *text, const char *name, GError **error);

void rs_yaml_free(RsYaml *yaml);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsYaml, rs_yaml_free)

/** rs_yaml_get_path: Returns: (transfer none): the path given at load, alive as @yaml. */
const char *rs_yaml_get_path(const RsYaml *yaml);

/**
 * rs_yaml_get_root_mapping:
 * @error: RS_YAML_ERROR_TYPE when the document's root is not a mapping
 *
 * Returns: (transfer none): the root node, alive as @yaml; NULL on error.
 */
yaml_node_t *rs_yaml_get_root_mapping(RsYaml *yaml, GError **error);

/**
 * rs_yaml_lookup:
 * @map: a mapping node of @yaml
 * @key: the key
 *
 * Returns: (transfer none) (nullable): the value node, NULL when @key is absent or @map is
 * not a mapping.
 */
yaml_node_t *rs_yaml_lookup(RsYaml *yaml, yaml_node_t *map, const char *key);

/**
 * rs_yaml_node_at:
 * Returns: (transfer none): the node with index @index (an item of a sequence or a pair
 * member), NULL when out of range.
 */
yaml_node_t *rs_yaml_node_at(RsYaml *yaml, int index);

/**
 * rs_yaml_check_keys:
 * @map: a mapping node
 * @section: (nullable): the dotted name of @map in messages ("links.nic"), NULL at the root
 * @known: NULL-terminated list of accepted keys
 * @error: RS_YAML_ERROR_UNKNOWN_KEY naming the first unknown key and the accepted ones;
 *   RS_YAML_ERROR_TYPE when @map is not a mapping or a key is not a scalar
 *
 * Returns: TRUE when every key of @map is in @known.
 */
gboolean rs_yaml_check_keys(RsYaml *yaml, yaml_node_t *map, const char *section,
                            const char *const *known, GError **error);

/**
 * rs_yaml_check_unique_keys:
 * @map: a mapping node
 * @section: (nullable): the dotted name of @map in messages, NULL at the root
 * @error: RS_YAML_ERROR_UNKNOWN_KEY "path:line:col: section.key: field given twice" for the
 *   second occurrence of a key (libyaml keeps both; readers would take one silently)
 *
 * Returns: TRUE when no key of @map is given twice.
 */
gboolean rs_yaml_check_unique_keys(RsYaml *yaml, yaml_node_t *map, const char *section,
                                   GError **error);

/**
 * rs_yaml_set_error:
 * @node: (nullable): the node the message is about; its start line and column are named
 * @section: (nullable): dotted section of the field
 * @field: (nullable): the field name
 *
 * Sets @error to RS_YAML_ERROR/@code with "path:line:col: section.field: message".
 */
void rs_yaml_set_error(RsYaml *yaml, yaml_node_t *node, const char *section, const char *field,
                       GError **error, RsYamlError code, const char *format, ...)
    G_GNUC_PRINTF(7, 8);

/* Scalar readers. Each looks @key up in @map; when absent it fails with
 * RS_YAML_ERROR_MISSING if @required, else leaves *out untouched and returns TRUE.
 * Failures name path:line:col and "section.key". */

/** rs_yaml_read_string: *out is (transfer none), alive as @yaml; a @required string given
 * empty fails with RS_YAML_ERROR_VALUE ("must not be empty"). */
gboolean rs_yaml_read_string(RsYaml *yaml, yaml_node_t *map, const char *section,
                             const char *key, gboolean required, const char **out,
                             GError **error);

/* Numbers and booleans are plain scalars: a quoted one ('4', "true") is a string in YAML
 * (YAML 1.2 core schema, §10.3.2: only plain scalars resolve to int, float or bool), and
 * the readers below fail with RS_YAML_ERROR_TYPE ("\"4\" is quoted, a string: expected an
 * integer, written without quotes"; rs_yaml_check_plain()). */

/** rs_yaml_read_int64: a decimal integer in [@min, @max]. */
gboolean rs_yaml_read_int64(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
                            gboolean required, gint64 min, gint64 max, gint64 *out,
                            GError **error);

/** rs_yaml_read_double: a finite number in [@min, @max]. */
gboolean rs_yaml_read_double(RsYaml *yaml, yaml_node_t *map, const char *section,
                             const char *key, gboolean required, double min, double max,
                             double *out, GError **error);

/** rs_yaml_read_bool: true/false/yes/no. */
gboolean rs_yaml_read_bool(RsYaml *yaml, yaml_node_t *map, const char *section, const char *key,
                           gboolean required, gboolean *out, GError **error);

/** rs_yaml_read_bandwidth: see rs_units_parse_bandwidth(); *out in bytes per second. */
gboolean rs_yaml_read_bandwidth(RsYaml *yaml, yaml_node_t *map, const char *section,
                                const char *key, gboolean required, double *out,
                                GError **error);

/** rs_yaml_read_duration: see rs_units_parse_duration(); *out in seconds. */
gboolean rs_yaml_read_duration(RsYaml *yaml, yaml_node_t *map, const char *section,
                               const char *key, gboolean required, double *out, GError **error);

/** rs_yaml_read_size: see rs_units_parse_size(); *out in bytes. */
gboolean rs_yaml_read_size(RsYaml *yaml, yaml_node_t *map, const char *section,
                           const char *key, gboolean required, guint64 *out, GError **error);

/**
 * rs_yaml_check_plain:
 * @yaml: the document @node is in (for the file name, line and column of the error)
 * @node: (nullable): the value of @section.@field; NULL or a node that is not a scalar
 *   passes (the caller checks its type)
 * @section: (nullable): the enclosing section named in the error, NULL for the top level
 * @field: the key named in the error
 * @what: what the value should be ("an integer", "true or false")
 * @error: RS_YAML_ERROR_TYPE for a single- or double-quoted scalar: "FILE:LINE:COL:
 *   SECTION.FIELD: \"4\" is quoted, a string: expected WHAT, written without quotes"
 *
 * Returns: TRUE when @node is not a quoted scalar.
 */
gboolean rs_yaml_check_plain(RsYaml *yaml, yaml_node_t *node, const char *section,
                             const char *field, const char *what, GError **error);

/**
 * rs_yaml_scalar_value:
 * Returns: (transfer none) (nullable): the text of a scalar node, NULL for other kinds.
 */
const char *rs_yaml_scalar_value(const yaml_node_t *node);

G_END_DECLS

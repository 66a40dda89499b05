/* data.h — finding shipped data files (models/, topologies/, scenarios/) by name.
 *
 * A name without a slash and without a .yaml, .yml, .json (config.json,
 * .safetensors.index.json) or .safetensors suffix is looked up as KIND/NAME.yaml in, in
 * order: $RESHARD_DATA_DIR, the source tree the binary was built from, and the installed
 * data directory (PREFIX/share/reshard). Anything else is taken as a path.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define RS_DATA_ERROR (rs_data_error_quark())
GQuark rs_data_error_quark(void);

typedef enum {
    RS_DATA_ERROR_NOT_FOUND, /* no such file or name; the message lists the known names */
} RsDataError;

/**
 * rs_data_find:
 * @kind: "models", "topologies" or "scenarios"
 * @name_or_path: a shipped name ("deepseek-v3") or a path
 * @error: RS_DATA_ERROR_NOT_FOUND ("unknown model \"x\" (known: deepseek-v3, …)")
 *
 * Returns: (transfer full): the path of an existing file, or NULL.
 */
char *rs_data_find(const char *kind, const char *name_or_path, GError **error);

/**
 * rs_data_is_path:
 * @name_or_path: a value naming a shipped file or a file
 *
 * Returns: TRUE when rs_data_find() takes @name_or_path as a path (it holds a '/' or ends
 * in .yaml, .yml, .json or .safetensors), FALSE for a shipped name.
 */
gboolean rs_data_is_path(const char *name_or_path);

/**
 * rs_data_resolve_beside:
 * @name_or_path: a file's value for another file: a shipped name or a path
 * @beside_file: (nullable): the file that holds the value (a scenario YAML)
 *
 * A relative path in a file is relative to that file's folder, as a model YAML's
 * `safetensors:` key is (models/model-load.c): a scenario in sub/ whose `model: m.yaml`
 * means sub/m.yaml, whatever the current folder. Shipped names, absolute paths and a NULL
 * @beside_file are returned as they are.
 *
 * Returns: (transfer full): the path to look up with rs_data_find().
 */
char *rs_data_resolve_beside(const char *name_or_path, const char *beside_file);

/**
 * rs_data_list:
 * @kind: as rs_data_find()
 *
 * Returns: (transfer full): the sorted names of the shipped files of @kind (first data
 * directory that has the folder), NULL-terminated; empty when none.
 */
GStrv rs_data_list(const char *kind);

G_END_DECLS

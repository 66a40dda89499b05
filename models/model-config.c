/* model-config.c — the key/value config a family generator reads, from YAML or JSON.
 *
 * Both sources are flattened the same way, so that a config.json and the same values
 * written as YAML read identically: nested mappings become dotted keys, sequences of
 * scalars comma-separated lists, sequences of mappings "key.N.member". Every value keeps
 * "path:line:col" of its key; json-glib keeps no positions, so a small scanner walks the
 * JSON text once and records where each key path starts. */
#include "models/model-config-private.h"

#include "base/text.h"
#include "base/yaml-reader.h"

#include <json-glib/json-glib.h>
#include <stdarg.h>
#include <string.h>

typedef struct {
    char *value; /* NULL for an explicit null */
    char *where;
    gboolean consumed;
    gboolean is_list; /* given as a list (value: its items joined by ',') */
    /* What the file gave when it is not a plain number or word: "a string" (JSON "4096", a
     * quoted YAML scalar) or "a floating-point number" (JSON 4096.0); NULL otherwise. An
     * integer field refuses both (json-glib's text of 4096.0 is "4096"). */
    const char *typed_as;
} ConfigEntry;

struct _RsModelConfig {
    char *source;
    GHashTable *asked_scalar; /* keys a scalar reader asked for (owned strings) */
    guint scale;         /* width divisor, >= 1 */
    GHashTable *entries; /* key → ConfigEntry* */
    GPtrArray *order;    /* keys in insertion order, for stable messages */
    GPtrArray *warnings; /* char*, owned: defaults taken for missing keys, in order */
};

static void
config_entry_free(gpointer p)
{
    ConfigEntry *e = p;
    g_free(e->value);
    g_free(e->where);
    g_free(e);
}

RsModelConfig *
rs_model_config_new(const char *source)
{
    RsModelConfig *c = g_new0(RsModelConfig, 1);
    c->source = g_strdup(source);
    c->scale = 1;
    c->entries = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, config_entry_free);
    c->asked_scalar = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    c->order = g_ptr_array_new_with_free_func(g_free);
    c->warnings = g_ptr_array_new_with_free_func(g_free);
    return c;
}

void
rs_model_config_free(RsModelConfig *config)
{
    if (config == NULL)
        return;
    g_hash_table_unref(config->entries);
    g_hash_table_unref(config->asked_scalar);
    g_ptr_array_unref(config->order);
    g_ptr_array_unref(config->warnings);
    g_free(config->source);
    g_free(config);
}

void
rs_model_config_set_scale(RsModelConfig *config, guint scale)
{
    config->scale = MAX(scale, 1);
}

const char *
rs_model_config_get_source(const RsModelConfig *config)
{
    return config->source;
}

static ConfigEntry *
config_set(RsModelConfig *config, const char *key, const char *value, const char *where)
{
    ConfigEntry *e = g_new0(ConfigEntry, 1);
    e->value = g_strdup(value);
    e->where = g_strdup(where);
    if (!g_hash_table_contains(config->entries, key))
        g_ptr_array_add(config->order, g_strdup(key));
    g_hash_table_replace(config->entries, g_strdup(key), e);
    return e;
}

void
rs_model_config_set_list(RsModelConfig *config, const char *key, const char *items,
                         const char *where)
{
    config_set(config, key, items, where)->is_list = TRUE;
}

void
rs_model_config_set(RsModelConfig *config, const char *key, const char *value, const char *where)
{
    config_set(config, key, value, where);
}

gboolean
rs_model_config_has(RsModelConfig *config, const char *key)
{
    ConfigEntry *e = g_hash_table_lookup(config->entries, key);
    return e != NULL && e->value != NULL;
}

/* A key of the file that no reader has taken and that is @key misspelt (at most 2 edits),
 * or NULL: the file's first such key. */
static ConfigEntry *
find_misspelling(RsModelConfig *config, const char *key, const char **key_out)
{
    for (guint i = 0; i < config->order->len; i++) {
        const char *other = g_ptr_array_index(config->order, i);
        ConfigEntry *e = g_hash_table_lookup(config->entries, other);
        if (!e->consumed && strcmp(other, key) != 0 && rs_text_edit_distance(key, other, 2) <= 2) {
            *key_out = other;
            return e;
        }
    }
    return NULL;
}

void
rs_model_config_set_error(RsModelConfig *config, const char *key, GError **error,
                          const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    ConfigEntry *e = key ? g_hash_table_lookup(config->entries, key) : NULL;
    g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG, "%s: %s%s%s",
                e ? e->where : config->source, key ? key : "", key ? ": " : "", message);
}

void
rs_model_config_set_missing(RsModelConfig *config, const char *key, GError **error,
                            const char *detail)
{
    g_autofree char *message = g_strdup_printf("required field is missing%s%s%s",
                                               detail ? " (" : "", detail ? detail : "",
                                               detail ? ")" : "");
    /* The key may stand in the file misspelt: name it where it stands (the check for
     * unknown keys comes after the family's reads, too late to name it first). */
    const char *near_key = NULL;
    ConfigEntry *near = find_misspelling(config, key, &near_key);
    if (near != NULL)
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: %s: %s; is %s here a typo for it?", near->where, key, message, near_key);
    else
        rs_model_config_set_error(config, key, error, "%s", message);
}

void
rs_model_config_warn(RsModelConfig *config, const char *key, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    ConfigEntry *e = key ? g_hash_table_lookup(config->entries, key) : NULL;
    g_ptr_array_add(config->warnings, g_strdup_printf("%s: %s%s%s", e ? e->where : config->source,
                                                      key ? key : "", key ? ": " : "", message));
}

void
rs_model_config_warn_default(RsModelConfig *config, const char *key, const char *value,
                             const char *origin)
{
    rs_model_config_warn(config, key, "missing; using %s, the default of %s", value, origin);
}

GPtrArray *
rs_model_config_get_warnings(RsModelConfig *config)
{
    return config->warnings;
}

gboolean
rs_model_config_get_bool_default(RsModelConfig *config, const char *key, gboolean value,
                                 const char *origin, gboolean *out, GError **error)
{
    if (!rs_model_config_has(config, key)) {
        /* An explicit null is a stated "none": *out stays, no warning. */
        ConfigEntry *e = g_hash_table_lookup(config->entries, key);
        if (e != NULL) {
            e->consumed = TRUE;
            return TRUE;
        }
        *out = value;
        rs_model_config_warn_default(config, key, value ? "true" : "false", origin);
        return TRUE;
    }
    return rs_model_config_get_bool(config, key, TRUE, out, error);
}

gboolean
rs_model_config_get_int_default(RsModelConfig *config, const char *key, gint64 min, gint64 max,
                                gint64 value, const char *origin, gint64 *out, GError **error)
{
    if (!rs_model_config_has(config, key)) {
        ConfigEntry *e = g_hash_table_lookup(config->entries, key);
        if (e != NULL) {
            e->consumed = TRUE;
            return TRUE;
        }
        *out = value;
        g_autofree char *text = g_strdup_printf("%" G_GINT64_FORMAT, value);
        rs_model_config_warn_default(config, key, text, origin);
        return TRUE;
    }
    return rs_model_config_get_int(config, key, TRUE, min, max, out, error);
}

gboolean
rs_model_config_get_width_default(RsModelConfig *config, const char *key, gint64 max,
                                  gint64 value, const char *origin, gint64 *out, GError **error)
{
    if (!rs_model_config_has(config, key)) {
        ConfigEntry *e = g_hash_table_lookup(config->entries, key);
        if (e != NULL) {
            e->consumed = TRUE;
            return TRUE;
        }
        *out = MAX(value / (gint64)config->scale, 1);
        g_autofree char *text = g_strdup_printf("%" G_GINT64_FORMAT, value);
        rs_model_config_warn_default(config, key, text, origin);
        return TRUE;
    }
    return rs_model_config_get_width(config, key, TRUE, max, out, error);
}

/* Looks @key up; *entry_out is NULL when absent or null. */
static gboolean
config_find(RsModelConfig *config, const char *key, gboolean required, ConfigEntry **entry_out,
            GError **error)
{
    ConfigEntry *e = g_hash_table_lookup(config->entries, key);
    if (e != NULL)
        e->consumed = TRUE;
    if (e == NULL || e->value == NULL) {
        *entry_out = NULL;
        if (required) {
            /* Present without a value ("name:", null) is not missing: say which. */
            if (e == NULL)
                rs_model_config_set_missing(config, key, error, NULL);
            else
                rs_model_config_set_error(config, key, error,
                                          "required field has no value (empty or null)");
            return FALSE;
        }
        return TRUE;
    }
    *entry_out = e;
    return TRUE;
}

/* As config_find, for fields that take one value: a list is an error naming where. */
static gboolean
config_find_scalar(RsModelConfig *config, const char *key, gboolean required,
                   ConfigEntry **entry_out, GError **error)
{
    if (!g_hash_table_contains(config->asked_scalar, key))
        g_hash_table_add(config->asked_scalar, g_strdup(key));
    if (!config_find(config, key, required, entry_out, error))
        return FALSE;
    if (*entry_out != NULL && (*entry_out)->is_list) {
        rs_model_config_set_error(config, key, error, "expected a single value, got a list");
        *entry_out = NULL;
        return FALSE;
    }
    return TRUE;
}

gboolean
rs_model_config_get_int(RsModelConfig *config, const char *key, gboolean required, gint64 min,
                        gint64 max, gint64 *out, GError **error)
{
    ConfigEntry *e;
    if (!config_find_scalar(config, key, required, &e, error))
        return FALSE;
    if (e == NULL)
        return TRUE;
    if (e->typed_as != NULL) {
        rs_model_config_set_error(config, key, error, "expected an integer, got %s (%s)",
                                  e->typed_as, e->value);
        return FALSE;
    }
    gint64 v;
    if (!g_ascii_string_to_signed(e->value, 10, min, max, &v, NULL)) {
        rs_model_config_set_error(config, key, error,
                                  "\"%s\": expected an integer in [%" G_GINT64_FORMAT
                                  ", %" G_GINT64_FORMAT "]",
                                  e->value, min, max);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

gboolean
rs_model_config_get_width(RsModelConfig *config, const char *key, gboolean required, gint64 max,
                          gint64 *out, GError **error)
{
    gint64 v = 0;
    gboolean had = rs_model_config_has(config, key);
    if (!rs_model_config_get_int(config, key, required, 1, max, &v, error))
        return FALSE;
    if (had)
        *out = MAX(v / (gint64)config->scale, 1);
    return TRUE;
}

gboolean
rs_model_config_get_bool(RsModelConfig *config, const char *key, gboolean required, gboolean *out,
                         GError **error)
{
    ConfigEntry *e;
    if (!config_find_scalar(config, key, required, &e, error))
        return FALSE;
    if (e == NULL)
        return TRUE;
    if (g_ascii_strcasecmp(e->value, "true") == 0) {
        *out = TRUE;
    } else if (g_ascii_strcasecmp(e->value, "false") == 0) {
        *out = FALSE;
    } else {
        rs_model_config_set_error(config, key, error, "\"%s\": expected true or false", e->value);
        return FALSE;
    }
    return TRUE;
}

gboolean
rs_model_config_get_string(RsModelConfig *config, const char *key, gboolean required,
                           const char **out, GError **error)
{
    ConfigEntry *e;
    if (!config_find_scalar(config, key, required, &e, error))
        return FALSE;
    if (e == NULL)
        return TRUE;
    /* A required string given empty ("name:") is as missing as one not given. */
    if (required && (e->value == NULL || *e->value == '\0')) {
        rs_model_config_set_error(config, key, error, "must not be empty");
        return FALSE;
    }
    *out = e->value;
    return TRUE;
}

gboolean
rs_model_config_get_text(RsModelConfig *config, const char *key, gboolean required,
                         const char **out, GError **error)
{
    ConfigEntry *e;
    if (!config_find(config, key, required, &e, error))
        return FALSE;
    if (e != NULL)
        *out = e->value;
    return TRUE;
}

gboolean
rs_model_config_get_int_list(RsModelConfig *config, const char *key, gboolean required, gint64 min,
                             gint64 max, GArray **out, GError **error)
{
    ConfigEntry *e;
    if (!config_find(config, key, required, &e, error))
        return FALSE;
    if (e == NULL)
        return TRUE;
    g_autoptr(GArray) list = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_auto(GStrv) items = g_strsplit(e->value, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        char *item = g_strstrip(items[i]);
        if (*item == '\0' && items[1] == NULL && i == 0)
            break; /* an empty list */
        gint64 v;
        if (!g_ascii_string_to_signed(item, 10, min, max, &v, NULL)) {
            rs_model_config_set_error(config, key, error,
                                      "item %u \"%s\": expected an integer in [%" G_GINT64_FORMAT
                                      ", %" G_GINT64_FORMAT "]",
                                      i, item, min, max);
            return FALSE;
        }
        g_array_append_val(list, v);
    }
    if (*out != NULL)
        g_array_unref(*out);
    *out = g_steal_pointer(&list);
    return TRUE;
}

static gboolean
key_has_prefix(const char *key, const char *prefix)
{
    gsize n = strlen(prefix);
    if (n == 0)
        return TRUE;
    return strncmp(key, prefix, n) == 0 && (key[n] == '\0' || key[n] == '.');
}

void
rs_model_config_consume_prefix(RsModelConfig *config, const char *prefix)
{
    for (guint i = 0; i < config->order->len; i++) {
        const char *key = g_ptr_array_index(config->order, i);
        if (key_has_prefix(key, prefix)) {
            ConfigEntry *e = g_hash_table_lookup(config->entries, key);
            e->consumed = TRUE;
        }
    }
}

void
rs_model_config_foreach_prefix(RsModelConfig *config, const char *prefix,
                               void (*func)(const char *subkey, const char *value,
                                            const char *where, gpointer data),
                               gpointer data)
{
    gsize n = strlen(prefix);
    for (guint i = 0; i < config->order->len; i++) {
        const char *key = g_ptr_array_index(config->order, i);
        if (strncmp(key, prefix, n) != 0)
            continue;
        ConfigEntry *e = g_hash_table_lookup(config->entries, key);
        e->consumed = TRUE;
        func(key + n, e->value, e->where, data);
    }
}

gboolean
rs_model_config_has_unconsumed_prefix(RsModelConfig *config, const char *prefix)
{
    gsize n = strlen(prefix);
    for (guint i = 0; i < config->order->len; i++) {
        const char *key = g_ptr_array_index(config->order, i);
        ConfigEntry *e = g_hash_table_lookup(config->entries, key);
        if (strncmp(key, prefix, n) == 0 && !e->consumed)
            return TRUE;
    }
    return FALSE;
}

gboolean
rs_model_config_check_consumed(RsModelConfig *config, GError **error)
{
    for (guint i = 0; i < config->order->len; i++) {
        const char *key = g_ptr_array_index(config->order, i);
        ConfigEntry *e = g_hash_table_lookup(config->entries, key);
        if (!e->consumed) {
            /* "dtype.x" left over where the family reads "dtype" as one value: the file
             * gave a mapping in its place. */
            const char *dot = strchr(key, '.');
            g_autofree char *parent = dot ? g_strndup(key, (gsize)(dot - key)) : NULL;
            if (parent != NULL && g_hash_table_contains(config->asked_scalar, parent)) {
                g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                            "%s: %s: expected a single value, got a mapping", e->where, parent);
                return FALSE;
            }
            rs_model_config_set_error(config, key, error,
                                      "unknown field for this family (a typo?)");
            return FALSE;
        }
    }
    return TRUE;
}

/* --- a model YAML --- */

/* The most values (mappings, lists and scalars, aliases counted each time they are used) a
 * model YAML may hold: the shipped ones hold at most a few hundred. */
#define MODEL_YAML_MAX_VALUES 100000

static gboolean
yaml_flatten(RsYaml *yaml, RsModelConfig *config, const char *path, const char *key,
             yaml_node_t *v, guint *budget, GError **error)
{
    g_autofree char *where =
        g_strdup_printf("%s:%zu:%zu", path, v->start_mark.line + 1, v->start_mark.column + 1);
    if (*budget == 0) {
        /* Aliases of aliases expand 10 times per level (a 1 KB file took 5 GB and a minute
         * before its first key was checked). */
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s: %s: the file expands to more than %u values (aliases of aliases?)",
                    where, key, MODEL_YAML_MAX_VALUES);
        return FALSE;
    }
    (*budget)--;
    if (v->type == YAML_MAPPING_NODE) {
        if (!rs_yaml_check_unique_keys(yaml, v, key, error))
            return FALSE;
        for (yaml_node_pair_t *pair = v->data.mapping.pairs.start;
             pair < v->data.mapping.pairs.top; pair++) {
            const char *sub = rs_yaml_scalar_value(rs_yaml_node_at(yaml, pair->key));
            g_autofree char *full = g_strdup_printf("%s.%s", key, sub ? sub : "?");
            if (!yaml_flatten(yaml, config, path, full, rs_yaml_node_at(yaml, pair->value),
                              budget, error))
                return FALSE;
        }
        return TRUE;
    }
    if (v->type == YAML_SEQUENCE_NODE) {
        gboolean scalars = TRUE;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++)
            if (rs_yaml_node_at(yaml, *it)->type != YAML_SCALAR_NODE)
                scalars = FALSE;
        guint i = 0;
        if (scalars) {
            GString *s = g_string_new(NULL);
            for (yaml_node_item_t *it = v->data.sequence.items.start;
                 it < v->data.sequence.items.top; it++, i++)
                g_string_append_printf(s, "%s%s", i ? "," : "",
                                       rs_yaml_scalar_value(rs_yaml_node_at(yaml, *it)));
            rs_model_config_set_list(config, key, s->str, where);
            g_string_free(s, TRUE);
            return TRUE;
        }
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++, i++) {
            g_autofree char *full = g_strdup_printf("%s.%u", key, i);
            if (!yaml_flatten(yaml, config, path, full, rs_yaml_node_at(yaml, *it), budget,
                              error))
                return FALSE;
        }
        return TRUE;
    }
    const char *value = rs_yaml_scalar_value(v);
    gboolean is_null = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                       (strcmp(value, "null") == 0 || strcmp(value, "~") == 0 || *value == 0);
    ConfigEntry *e = config_set(config, key, is_null ? NULL : value, where);
    if (v->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
        v->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
        e->typed_as = "a string";
    return TRUE;
}

gboolean
rs_model_config_load_yaml(RsModelConfig *config, const char *path, GError **error)
{
    g_autoptr(RsYaml) yaml = rs_yaml_load_file(path, error);
    if (yaml == NULL)
        return FALSE;
    yaml_node_t *root = rs_yaml_get_root_mapping(yaml, error);
    if (root == NULL || !rs_yaml_check_unique_keys(yaml, root, NULL, error))
        return FALSE;
    guint budget = MODEL_YAML_MAX_VALUES;
    for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
         pair < root->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = rs_yaml_node_at(yaml, pair->key);
        const char *key = rs_yaml_scalar_value(k);
        if (key == NULL) {
            rs_yaml_set_error(yaml, k, NULL, NULL, error, RS_YAML_ERROR_TYPE,
                              "expected a plain key");
            return FALSE;
        }
        if (!yaml_flatten(yaml, config, path, key, rs_yaml_node_at(yaml, pair->value), &budget,
                          error))
            return FALSE;
    }
    return TRUE;
}

/* --- config.json --- */

/* rs_json_scan()'s key callback: records "line:col" of every key path ("a", "a.b",
 * "a.2.c") in the GHashTable @user_data. */
static void
record_key_position(const char *path, guint line, guint column, gsize offset, gpointer user_data)
{
    (void)offset;
    g_hash_table_replace(user_data, g_strdup(path), g_strdup_printf("%u:%u", line, column));
}

typedef struct {
    RsModelConfig *config;
    const char *path;
    GHashTable *positions;
} JsonFlatten;

static char *
json_scalar_text(JsonNode *node)
{
    if (JSON_NODE_HOLDS_NULL(node))
        return NULL;
    GType type = json_node_get_value_type(node);
    if (type == G_TYPE_STRING)
        return g_strdup(json_node_get_string(node));
    if (type == G_TYPE_BOOLEAN)
        return g_strdup(json_node_get_boolean(node) ? "true" : "false");
    if (type == G_TYPE_INT64)
        return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup(g_ascii_dtostr(buf, sizeof buf, json_node_get_double(node)));
}

static void
json_flatten(JsonFlatten *f, const char *key, const char *json_path, JsonNode *node)
{
    const char *pos = g_hash_table_lookup(f->positions, json_path);
    g_autofree char *where = pos ? g_strdup_printf("%s:%s", f->path, pos) : g_strdup(f->path);
    if (JSON_NODE_HOLDS_OBJECT(node)) {
        JsonObject *obj = json_node_get_object(node);
        g_autoptr(GList) members = json_object_get_members(obj);
        for (GList *l = members; l != NULL; l = l->next) {
            g_autofree char *sub = g_strdup_printf("%s.%s", key, (const char *)l->data);
            g_autofree char *sub_path = g_strdup_printf("%s.%s", json_path, (const char *)l->data);
            json_flatten(f, sub, sub_path, json_object_get_member(obj, l->data));
        }
        return;
    }
    if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *array = json_node_get_array(node);
        guint n = json_array_get_length(array);
        gboolean scalars = TRUE;
        for (guint i = 0; i < n; i++)
            if (!JSON_NODE_HOLDS_VALUE(json_array_get_element(array, i)))
                scalars = FALSE;
        if (scalars) {
            GString *s = g_string_new(NULL);
            for (guint i = 0; i < n; i++) {
                g_autofree char *item = json_scalar_text(json_array_get_element(array, i));
                g_string_append_printf(s, "%s%s", i ? "," : "", item);
            }
            rs_model_config_set_list(f->config, key, s->str, where);
            g_string_free(s, TRUE);
            return;
        }
        for (guint i = 0; i < n; i++) {
            g_autofree char *sub = g_strdup_printf("%s.%u", key, i);
            g_autofree char *sub_path = g_strdup_printf("%s.%u", json_path, i);
            json_flatten(f, sub, sub_path, json_array_get_element(array, i));
        }
        return;
    }
    g_autofree char *text = json_scalar_text(node);
    ConfigEntry *e = config_set(f->config, key, text, where);
    if (JSON_NODE_HOLDS_VALUE(node)) {
        GType type = json_node_get_value_type(node);
        e->typed_as = type == G_TYPE_STRING   ? "a string"
                      : type == G_TYPE_DOUBLE ? "a floating-point number"
                                              : NULL;
    }
}

gboolean
rs_model_config_load_json(RsModelConfig *config, const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    g_autoptr(GError) local = NULL;
    if (!g_file_get_contents(path, &text, &len, &local)) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG, "%s", local->message);
        return FALSE;
    }
    if (!rs_text_check(text, len, path, "config.json", RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                       error))
        return FALSE;
    /* Nesting, numbers past 64 bits and keys given twice, which json-glib would crash on,
     * wrap or keep the last of; and every key's position, which json-glib keeps none of. */
    g_autoptr(GHashTable) positions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    RsJsonScanResult scan;
    if (!rs_json_scan(text, len, record_key_position, positions, &scan)) {
        g_autofree char *what = rs_json_scan_describe(&scan, "config.json");
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG, "%s:%u:%u: %s", path,
                    scan.line, scan.column, what);
        rs_json_scan_result_clear(&scan);
        return FALSE;
    }
    rs_json_scan_result_clear(&scan);
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_data(parser, text, (gssize)len, &local)) {
        /* "<data>:LINE:COL: Parse error: …" → "path:LINE:COL: …" */
        const char *msg = local->message;
        if (g_str_has_prefix(msg, "<data>:"))
            msg += strlen("<data>:");
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG, "%s:%s", path, msg);
        return FALSE;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG,
                    "%s:1:1: a config.json must be an object of fields", path);
        return FALSE;
    }
    JsonFlatten f = {config, path, positions};
    JsonObject *obj = json_node_get_object(root);
    g_autoptr(GList) members = json_object_get_members(obj);
    for (GList *l = members; l != NULL; l = l->next) {
        const char *name = l->data;
        if (strcmp(name, "text_config") == 0)
            continue;
        json_flatten(&f, name, name, json_object_get_member(obj, name));
    }
    /* A vision-language wrapper (Kimi-K3, Qwen3.5) nests the language model's config under
     * text_config: merge it at the top, keeping the wrapper's model_type, which is the one
     * that names the architecture. */
    JsonNode *text_node = json_object_get_member(obj, "text_config");
    if (text_node != NULL && JSON_NODE_HOLDS_OBJECT(text_node)) {
        JsonObject *tc = json_node_get_object(text_node);
        g_autoptr(GList) tc_members = json_object_get_members(tc);
        for (GList *l = tc_members; l != NULL; l = l->next) {
            const char *name = l->data;
            g_autofree char *json_path = g_strdup_printf("text_config.%s", name);
            if (strcmp(name, "model_type") == 0 && json_object_has_member(obj, "model_type")) {
                g_autofree char *sub = g_strdup_printf("text_config.%s", name);
                json_flatten(&f, sub, json_path, json_object_get_member(tc, name));
                continue;
            }
            json_flatten(&f, name, json_path, json_object_get_member(tc, name));
        }
    }
    return TRUE;
}

char *
rs_model_config_dup_keys_for_value(RsModelConfig *config, gint64 value, const char **where_out)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < config->order->len; i++) {
        const char *key = g_ptr_array_index(config->order, i);
        ConfigEntry *e = g_hash_table_lookup(config->entries, key);
        gint64 v;
        if (e == NULL || !e->consumed || e->value == NULL ||
            !g_ascii_string_to_signed(e->value, 10, 1, G_MAXINT64, &v, NULL))
            continue;
        if (v != value && MAX(v / (gint64)config->scale, 1) != value)
            continue;
        if (s->len == 0 && where_out != NULL)
            *where_out = e->where;
        g_string_append_printf(s, "%s%s", s->len ? "/" : "", key);
    }
    return g_string_free(s, s->len == 0);
}

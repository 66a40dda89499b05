/* data.c — search path for shipped data. */
#include "base/data.h"

#include "rs-config.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-data-error-quark, rs_data_error)
/* clang-format on */

static GPtrArray *
data_dirs(void)
{
    GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
    const char *env = g_getenv("RESHARD_DATA_DIR");
    if (env != NULL && *env != '\0')
        g_ptr_array_add(dirs, g_strdup(env));
    g_ptr_array_add(dirs, g_strdup(RS_SOURCE_DATA_DIR));
    g_ptr_array_add(dirs, g_strdup(RS_INSTALL_DATA_DIR));
    return dirs;
}

static const char *
kind_singular(const char *kind)
{
    if (strcmp(kind, "models") == 0)
        return "model";
    if (strcmp(kind, "topologies") == 0)
        return "topology";
    if (strcmp(kind, "scenarios") == 0)
        return "scenario";
    return kind;
}

gboolean
rs_data_is_path(const char *name_or_path)
{
    return strchr(name_or_path, '/') != NULL || g_str_has_suffix(name_or_path, ".yaml") ||
           g_str_has_suffix(name_or_path, ".yml") || g_str_has_suffix(name_or_path, ".json") ||
           g_str_has_suffix(name_or_path, ".safetensors");
}

char *
rs_data_resolve_beside(const char *name_or_path, const char *beside_file)
{
    if (beside_file == NULL || !rs_data_is_path(name_or_path) ||
        g_path_is_absolute(name_or_path))
        return g_strdup(name_or_path);
    g_autofree char *dir = g_path_get_dirname(beside_file);
    if (strcmp(dir, ".") == 0)
        return g_strdup(name_or_path);
    return g_build_filename(dir, name_or_path, NULL);
}

char *
rs_data_find(const char *kind, const char *name_or_path, GError **error)
{
    gboolean is_path = rs_data_is_path(name_or_path);
    if (is_path) {
        if (g_file_test(name_or_path, G_FILE_TEST_IS_REGULAR))
            return g_strdup(name_or_path);
        g_set_error(error, RS_DATA_ERROR, RS_DATA_ERROR_NOT_FOUND, "%s file \"%s\": %s",
                    kind_singular(kind), name_or_path,
                    g_file_test(name_or_path, G_FILE_TEST_IS_DIR) ? "is a folder, not a file"
                    : g_file_test(name_or_path, G_FILE_TEST_EXISTS) ? "is not a regular file"
                                                                     : "not found");
        return NULL;
    }
    g_autoptr(GPtrArray) dirs = data_dirs();
    for (guint i = 0; i < dirs->len; i++) {
        g_autofree char *file = g_strconcat(name_or_path, ".yaml", NULL);
        g_autofree char *path = g_build_filename(g_ptr_array_index(dirs, i), kind, file, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
            return g_steal_pointer(&path);
    }
    g_auto(GStrv) names = rs_data_list(kind);
    g_autofree char *list = g_strjoinv(", ", names);
    g_set_error(error, RS_DATA_ERROR, RS_DATA_ERROR_NOT_FOUND, "unknown %s \"%s\" (known: %s)",
                kind_singular(kind), name_or_path, *list ? list : "none found");
    return NULL;
}

static gint
compare_strings(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

GStrv
rs_data_list(const char *kind)
{
    g_autoptr(GPtrArray) dirs = data_dirs();
    GPtrArray *names = g_ptr_array_new();
    for (guint i = 0; i < dirs->len && names->len == 0; i++) {
        g_autofree char *path = g_build_filename(g_ptr_array_index(dirs, i), kind, NULL);
        g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
        if (dir == NULL)
            continue;
        const char *entry;
        while ((entry = g_dir_read_name(dir)) != NULL)
            if (g_str_has_suffix(entry, ".yaml"))
                g_ptr_array_add(names, g_strndup(entry, strlen(entry) - 5));
    }
    g_ptr_array_sort(names, compare_strings);
    g_ptr_array_add(names, NULL);
    return (GStrv)g_ptr_array_free(names, FALSE);
}

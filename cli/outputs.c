/* outputs.c — output files of a subcommand.
 *
 * A command checks every output path before it works (a wrong folder is a usage error
 * found in a second, not after minutes of simulation), writes each file atomically
 * (g_file_set_contents: a temporary file renamed over the path), and on failure removes
 * the files it created, so that an error never leaves part of a command's output. */
#include "cli/outputs.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static GPtrArray *created; /* char*, owned: files this process created */

gboolean
rs_cli_check_output(const char *option, const char *path, GError **error)
{
    if (path == NULL)
        return TRUE;
    g_autofree char *dir = g_path_get_dirname(path);
    const char *problem = NULL;
    if (!g_file_test(dir, G_FILE_TEST_EXISTS))
        problem = "does not exist";
    else if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
        problem = "is not a folder";
    else if (g_access(dir, W_OK | X_OK) != 0)
        problem = "is not writable";
    if (*path == '\0') {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: empty path", option);
        return FALSE;
    }
    if (problem != NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: folder %s %s",
                    option, path, dir, problem);
        return FALSE;
    }
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: is a folder", option,
                    path);
        return FALSE;
    }
    return TRUE;
}

gboolean
rs_cli_check_distinct_outputs(const char *option_a, const char *path_a, const char *option_b,
                              const char *path_b, GError **error)
{
    if (path_a == NULL || path_b == NULL)
        return TRUE;
    g_autofree char *a = g_canonicalize_filename(path_a, NULL);
    g_autofree char *b = g_canonicalize_filename(path_b, NULL);
    if (strcmp(a, b) != 0)
        return TRUE;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s %s: the same file as %s %s; give each output its own path", option_b, path_b,
                option_a, path_a);
    return FALSE;
}

void
rs_cli_note_output(const char *path)
{
    if (path == NULL || g_file_test(path, G_FILE_TEST_EXISTS))
        return;
    if (created == NULL)
        created = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(created, g_strdup(path));
}

void
rs_cli_remove_created_outputs(void)
{
    if (created == NULL)
        return;
    for (guint i = 0; i < created->len; i++)
        g_unlink(g_ptr_array_index(created, i));
    g_ptr_array_set_size(created, 0);
}

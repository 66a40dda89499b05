/* output.c — output files: temporary file and rename for regular files, plain writes into
 * devices, FIFOs and sockets, symbolic links followed (output.h). */
#include "base/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean
fail_errno(GError **error, const char *path, const char *what, int err)
{
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s: %s", path, what,
                g_strerror(err));
    return FALSE;
}

/* Writes all of @data into the open @fd (a device, FIFO or socket), retrying short writes
 * and interrupted calls. */
static gboolean
write_all(int fd, const char *path, const char *data, gsize len, GError **error)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail_errno(error, path, "write failed", n < 0 ? errno : ENOSPC);
        data += n;
        len -= (gsize)n;
    }
    return TRUE;
}

/* rs_output_write_file() of @target, the file the symbolic link @link names; an error
 * names both, as "LINK (-> TARGET): ...", so the user sees the path they gave. */
static gboolean
write_target(const char *link, const char *target, const char *data, gssize len, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (rs_output_write_file(target, data, len, &local))
        return TRUE;
    const char *msg = local->message;
    gsize n = strlen(target);
    if (strncmp(msg, target, n) == 0 && msg[n] == ':')
        g_set_error(error, local->domain, local->code, "%s (-> %s)%s", link, target, msg + n);
    else
        g_set_error(error, local->domain, local->code, "%s (-> %s): %s", link, target, msg);
    return FALSE;
}

gboolean
rs_output_write_file(const char *path, const char *data, gssize len, GError **error)
{
    g_return_val_if_fail(path != NULL && data != NULL, FALSE);
    gsize n = len < 0 ? strlen(data) : (gsize)len;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        /* Follow the link (all of its chain) and write the file it names. */
        char resolved[PATH_MAX];
        if (realpath(path, resolved) != NULL)
            return write_target(path, resolved, data, len, error);
        if (errno != ENOENT)
            return fail_errno(error, path, "cannot follow the symbolic link", errno);
        /* A dangling link: create the file it points at, relative to the link's folder. */
        g_autoptr(GError) local = NULL;
        g_autofree char *target = g_file_read_link(path, &local);
        if (target == NULL)
            return fail_errno(error, path, "cannot read the symbolic link", ENOENT);
        g_autofree char *dir = g_path_get_dirname(path);
        g_autofree char *full =
            g_path_is_absolute(target) ? g_strdup(target) : g_build_filename(dir, target, NULL);
        if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode))
            return fail_errno(error, path, "cannot follow the symbolic link", ELOOP);
        return write_target(path, full, data, len, error);
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return fail_errno(error, path, "cannot open", errno);
        gboolean ok = write_all(fd, path, data, n, error);
        if (close(fd) != 0 && ok)
            return fail_errno(error, path, "write failed", errno);
        return ok;
    }
    return g_file_set_contents(path, data, (gssize)n, error);
}

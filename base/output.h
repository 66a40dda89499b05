/* output.h — writing a command's output file without harming what the path names.
 *
 * A regular file (or a new one) is written to a temporary file in its folder and renamed
 * over the path, so a reader never sees it half-written and a failed write leaves the old
 * file. A path that names something else is written into, never replaced: a character or
 * block device (/dev/null, /dev/full), a FIFO or a socket gets the bytes through write(2)
 * and keeps its kind; a symbolic link is followed and its target is written (the link
 * stays a link). Replacing /dev/null by a regular file, as a plain rename does, breaks the
 * machine for every other program.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * rs_output_write_file:
 * @path: the output path
 * @data: (array length=len): the bytes to write
 * @len: their number, or -1 when @data is a NUL-terminated string
 * @error: G_FILE_ERROR naming @path (through a symbolic link, "PATH (-> TARGET): …") and
 *   the system's reason (no space, a broken pipe, a folder that does not exist, a symbolic
 *   link loop)
 *
 * Writes @data to @path as described above. On failure a regular file at @path is left as
 * it was; a device or FIFO may have received part of the bytes.
 *
 * Returns: TRUE on success.
 */
gboolean rs_output_write_file(const char *path, const char *data, gssize len, GError **error);

G_END_DECLS

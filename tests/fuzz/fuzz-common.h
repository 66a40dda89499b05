/* fuzz-common.h — helpers of the libFuzzer targets (tests/fuzz/README.md). */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* The input as a NUL-terminated string (an embedded NUL ends it, as it would a file read
 * by the tools that take text). Free with g_free(). */
static inline char *
fuzz_text(const uint8_t *data, size_t size)
{
    return g_strndup((const char *)data, size);
}

static char *fuzz_dir;

/* Removes the folder of this process's files when it exits (libFuzzer's fork mode starts
 * a process per job; each left an empty folder behind). */
static inline void
fuzz_remove_dir(void)
{
    if (fuzz_dir != NULL)
        g_rmdir(fuzz_dir);
}

/* Writes the input to a fresh file named @name in a folder of this process (the loaders that
 * take a path: models, scenarios, safetensors); returns its path. Remove with
 * fuzz_remove(). */
static inline char *
fuzz_write_file(const char *name, const uint8_t *data, size_t size)
{
    char *dir = fuzz_dir;
    if (dir == NULL) {
        /* g_dir_make_tmp() replaces the XXXXXX of its template with a unique name. */
        dir = fuzz_dir = g_dir_make_tmp("rs-fuzz-XXXXXX", NULL);
        atexit(fuzz_remove_dir);
    }
    char *path = g_build_filename(dir, name, NULL);
    if (!g_file_set_contents(path, (const char *)data, (gssize)size, NULL))
        g_error("cannot write %s", path);
    return path;
}

static inline void
fuzz_remove(char *path)
{
    g_unlink(path);
    g_free(path);
}

/* Silences the libraries' warnings (a fuzzer's input is bad on purpose). */
static inline void
fuzz_quiet(void)
{
    static gboolean done;
    if (!done) {
        g_log_set_writer_func(g_log_writer_default, NULL, NULL);
        g_setenv("G_MESSAGES_DEBUG", "", TRUE);
        done = TRUE;
    }
}

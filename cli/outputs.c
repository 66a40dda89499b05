/* outputs.c — output files of a subcommand.
 *
 * A command checks every output path before it works (a wrong folder is a usage error
 * found in a second, not after minutes of simulation), writes each file atomically
 * (g_file_set_contents: a temporary file renamed over the path), and on failure removes
 * the files it created and puts back the ones it replaced, so that an error never leaves
 * part of a command's output nor a mix of two runs' files: a file already there is moved
 * aside (".NAME.reshard-old-PID" in its folder) just before it is first written, put back
 * on failure or interruption, and removed once the command succeeded.
 *
 * An output never replaces an input: every file a command reads (scenario, model and the
 * config.json beside a checkpoint, topology, messages) is noted with its device and inode,
 * and an output path naming one of them, by any name, is refused as a usage error, both
 * when outputs are checked up front and again just before each file is written. */
#include "cli/outputs.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static GPtrArray *created; /* char*, owned: files this process created */
static GPtrArray *replaced; /* char*, owned: files moved aside, then their backups, paired */

/* The same paths for the signal handler, which may only read memory and call unlink() and
 * rename(): fixed arrays filled before their counts grow. */
#define MAX_SIGNAL_PATHS 256
static char *signal_paths[MAX_SIGNAL_PATHS];
static volatile sig_atomic_t n_signal_paths;
static char *signal_backups[2 * MAX_SIGNAL_PATHS]; /* path, backup, path, backup, ... */
static volatile sig_atomic_t n_signal_backups;

static const char *volatile signal_temp_dir; /* removed by the handler when empty */

static void
on_fatal_signal(int sig)
{
    for (sig_atomic_t i = 0; i < n_signal_paths; i++)
        unlink(signal_paths[i]);
    for (sig_atomic_t i = 0; i < n_signal_backups; i++)
        rename(signal_backups[2 * i + 1], signal_backups[2 * i]);
    if (signal_temp_dir != NULL)
        rmdir(signal_temp_dir); /* (async-signal-safe; fails harmlessly when not empty) */
    signal(sig, SIG_DFL);
    raise(sig);
}

static gboolean
listed(const GPtrArray *list, guint step, const char *path)
{
    for (guint i = 0; list != NULL && i < list->len; i += step)
        if (strcmp(g_ptr_array_index(list, i), path) == 0)
            return TRUE;
    return FALSE;
}

void
rs_cli_remove_outputs_on_signal(void)
{
    /* SIGPIPE (a reader of standard output that went away: `| head`), SIGABRT (a failed
     * assertion) and SIGXFSZ end the command as the others do: without this, files moved
     * aside by rs_cli_begin_output() would stay hidden. (Not SIGSEGV: the sanitizers'
     * handlers report it.) */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGABRT, SIGXFSZ};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (guint i = 0; i < G_N_ELEMENTS(sigs); i++) {
        struct sigaction old;
        /* A signal the caller ignores (nohup) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

void
rs_cli_remove_temp_dir_on_signal(const char *dir)
{
    signal_temp_dir = dir;
}

void
rs_cli_forget_temp_dir(void)
{
    signal_temp_dir = NULL;
}

void
rs_cli_keep_outputs(void)
{
    n_signal_paths = 0; /* (the new files stay, whatever comes now) */
    for (guint i = 0; replaced != NULL && i < replaced->len; i += 2)
        g_unlink(g_ptr_array_index(replaced, i + 1));
    /* After the loop: a signal within it puts back a backup not yet removed (over the new
     * file); one already removed fails harmlessly. */
    n_signal_backups = 0;
    if (replaced != NULL)
        g_ptr_array_set_size(replaced, 0);
}

/* A file the command read: its path as given and, when it could be stat'ed, its device and
 * inode, so that a second name of the file (a hard link, a symbolic link, "./x") is found
 * too. */
typedef struct {
    char *path;
    gboolean has_inode;
    dev_t dev;
    ino_t ino;
} Input;

static GArray *inputs; /* Input, owned; guarded by the lock below: a sweep's points note
                        * their inputs from its worker threads */
G_LOCK_DEFINE_STATIC(inputs);

static void
input_clear(gpointer p)
{
    g_free(((Input *)p)->path);
}

void
rs_cli_note_input(const char *path)
{
    if (path == NULL)
        return;
    Input in = {g_canonicalize_filename(path, NULL), FALSE, 0, 0};
    GStatBuf st;
    if (g_stat(path, &st) == 0) {
        in.has_inode = TRUE;
        in.dev = st.st_dev;
        in.ino = st.st_ino;
    }
    G_LOCK(inputs);
    if (inputs == NULL) {
        inputs = g_array_new(FALSE, TRUE, sizeof(Input));
        g_array_set_clear_func(inputs, input_clear);
    }
    g_array_append_val(inputs, in);
    G_UNLOCK(inputs);
}

/* The input @path would replace: the same file (device and inode) or, for a file not
 * there, the same absolute path; NULL when none. */
static const char *
input_at(const char *path)
{
    if (path == NULL)
        return NULL;
    GStatBuf st;
    gboolean exists = g_stat(path, &st) == 0;
    g_autofree char *abs = g_canonicalize_filename(path, NULL);
    const char *found = NULL; /* (an Input's path lives as long as the process) */
    G_LOCK(inputs);
    for (guint i = 0; inputs != NULL && found == NULL && i < inputs->len; i++) {
        const Input *in = &g_array_index(inputs, Input, i);
        if ((exists && in->has_inode && in->dev == st.st_dev && in->ino == st.st_ino) ||
            strcmp(in->path, abs) == 0)
            found = in->path;
    }
    G_UNLOCK(inputs);
    return found;
}

gboolean
rs_cli_check_not_input(const char *option, const char *path, GError **error)
{
    const char *input = input_at(path);
    if (input == NULL)
        return TRUE;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s %s: is an input of this command (%s); an output never replaces an input, "
                "give another path",
                option, path, input);
    return FALSE;
}

static char *output_target(const char *path);

/* Folder @dir, where output @path is written, must exist, be a folder and, when @probe,
 * take a new file: a file is written as a temporary one in its folder and renamed over the
 * path. Permissions do not say whether it can be (root may write anywhere by them, and
 * /proc takes no file): a probe file, created and removed, does, before any work
 * ("--trace /proc/x" failed at the end, exit 1, naming the temporary "/proc/x.6PLUZ3"). */
static gboolean
check_folder(const char *option, const char *path, const char *dir, gboolean probe, GError **error)
{
    const char *problem = NULL;
    if (!g_file_test(dir, G_FILE_TEST_EXISTS))
        problem = "does not exist";
    else if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
        problem = "is not a folder";
    else if (g_access(dir, W_OK | X_OK) != 0)
        problem = "is not writable";
    if (problem != NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: folder %s %s", option,
                    path, dir, problem);
        return FALSE;
    }
    if (!probe)
        return TRUE;
    /* (g_mkstemp() replaces the six X's by a name no file has.) */
    g_autofree char *name = g_build_filename(dir, ".reshard-probe-XXXXXX", NULL);
    int fd = g_mkstemp(name);
    if (fd < 0) {
        int saved = errno;
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s %s: folder %s takes no new file (%s)", option, path, dir,
                    g_strerror(saved));
        return FALSE;
    }
    close(fd);
    g_unlink(name);
    return TRUE;
}

/* Does @path name a file to be created or replaced (not a device, FIFO or socket, which
 * are written in place)? */
static gboolean
is_file_output(const char *path)
{
    GStatBuf st;
    return g_stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

gboolean
rs_cli_check_output(const char *option, const char *path, GError **error)
{
    if (path == NULL)
        return TRUE;
    if (*path == '\0') {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: empty path", option);
        return FALSE;
    }
    /* "-" reads as standard output, which only report -o takes: it made a file named "-". */
    if (strcmp(path, "-") == 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s -: this output is a file, not standard output; give a file name "
                    "(./- for a file named -)",
                    option);
        return FALSE;
    }
    /* The path's own folder (a trace's .meta sidecar goes there), then, for a symbolic
     * link, its target's, where the file is written (rs_output_write_file(): a link to
     * /proc/x.csv passed the first and failed late, exit 1). */
    g_autofree char *dir = g_path_get_dirname(path);
    if (!check_folder(option, path, dir, is_file_output(path), error))
        return FALSE;
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: is a folder", option,
                    path);
        return FALSE;
    }
    g_autofree char *target = output_target(path);
    if (target != NULL) {
        GStatBuf ts;
        if (g_lstat(target, &ts) == 0 && S_ISLNK(ts.st_mode)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s %s: a symbolic link that resolves to no file (a loop, or a chain "
                        "that dangles)",
                        option, path);
            return FALSE;
        }
        g_autofree char *target_dir = g_path_get_dirname(target);
        if (!check_folder(option, path, target_dir, is_file_output(target), error))
            return FALSE;
    }
    return rs_cli_check_not_input(option, path, error);
}

/* The file @path names, as a string two names of one file share: the resolved path of an
 * existing file (symbolic links followed), else the resolved path of its folder and its
 * name; the absolute path when the folder cannot be resolved either. */
static char *
output_identity(const char *path)
{
    char *real = realpath(path, NULL);
    if (real != NULL) {
        char *out = g_strdup(real);
        free(real);
        return out;
    }
    g_autofree char *abs = g_canonicalize_filename(path, NULL);
    g_autofree char *dir = g_path_get_dirname(abs);
    g_autofree char *base = g_path_get_basename(abs);
    char *real_dir = realpath(dir, NULL);
    if (real_dir == NULL)
        return g_steal_pointer(&abs);
    char *out = g_build_filename(real_dir, base, NULL);
    free(real_dir);
    return out;
}

/* Do @a and @b name one file: the same identity, or an existing file by two hard links? */
static gboolean
same_output(const char *a, const char *id_a, const char *b, const char *id_b)
{
    if (strcmp(id_a, id_b) == 0)
        return TRUE;
    GStatBuf sa, sb;
    return g_stat(a, &sa) == 0 && g_stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

gboolean
rs_cli_check_distinct_outputs(const char *option_a, const char *path_a, const char *option_b,
                              const char *path_b, GError **error)
{
    if (path_a == NULL || path_b == NULL)
        return TRUE;
    g_autofree char *a = output_identity(path_a);
    g_autofree char *b = output_identity(path_b);
    if (!same_output(path_a, a, path_b, b))
        return TRUE;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s %s: the same file as %s %s; give each output its own path", option_b, path_b,
                option_a, path_a);
    return FALSE;
}

gboolean
rs_cli_check_output_set(const char *const *options, const char *const *paths, guint n,
                        GError **error)
{
    g_autoptr(GPtrArray) canonical = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < n; i++) {
        if (paths[i] != NULL && !rs_cli_check_not_input(options[i], paths[i], error))
            return FALSE;
        if (paths[i] != NULL && g_file_test(paths[i], G_FILE_TEST_IS_DIR)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s %s: is a folder",
                        options[i], paths[i]);
            return FALSE;
        }
        g_ptr_array_add(canonical, paths[i] ? output_identity(paths[i]) : NULL);
    }
    for (guint i = 0; i < n; i++)
        for (guint j = i + 1; paths[i] != NULL && j < n; j++)
            if (paths[j] != NULL && same_output(paths[i], g_ptr_array_index(canonical, i),
                                                paths[j], g_ptr_array_index(canonical, j))) {
                g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                            "%s %s: the same file as %s %s; give each output its own path",
                            options[j], paths[j], options[i], paths[i]);
                return FALSE;
            }
    return TRUE;
}

/* The file a symbolic link @path names, at the end of its chain (it may not exist yet:
 * a dangling link's target, relative to the link's folder); NULL when @path is no link. */
static char *
output_target(const char *path)
{
    GStatBuf st;
    if (g_lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return NULL;
    char resolved[PATH_MAX];
    if (realpath(path, resolved) != NULL)
        return g_strdup(resolved);
    g_autofree char *link = g_file_read_link(path, NULL);
    if (link == NULL)
        return NULL;
    if (g_path_is_absolute(link))
        return g_steal_pointer(&link);
    g_autofree char *dir = g_path_get_dirname(path);
    return g_build_filename(dir, link, NULL);
}

gboolean
rs_cli_begin_output(const char *option, const char *path, GError **error)
{
    if (path == NULL)
        return TRUE;
    if (!rs_cli_check_not_input(option, path, error))
        return FALSE;
    /* A symbolic link is written through (rs_output_write_file()): what is created or
     * replaced is the file it names. */
    g_autofree char *target = output_target(path);
    if (target != NULL)
        path = target;
    if (listed(created, 1, path) || listed(replaced, 2, path))
        return TRUE; /* this command's own file, written again */
    GStatBuf st;
    if (g_lstat(path, &st) == 0) {
        /* A regular file of an earlier run: moved aside, so that a failure puts it back (a
         * device or pipe is written in place: left as it is). */
        if (!S_ISREG(st.st_mode))
            return TRUE;
        g_autofree char *dir = g_path_get_dirname(path);
        g_autofree char *base = g_path_get_basename(path);
        g_autofree char *name = g_strdup_printf(".%s.reshard-old-%d", base, (int)getpid());
        g_autofree char *backup = g_build_filename(dir, name, NULL);
        /* Known to the signal handler before the move: a signal between the two then
         * fails to put back what is not there yet, harmlessly, instead of hiding it. */
        sig_atomic_t nb = n_signal_backups;
        if (nb < MAX_SIGNAL_PATHS) {
            g_free(signal_backups[2 * nb]);
            g_free(signal_backups[2 * nb + 1]);
            signal_backups[2 * nb] = g_strdup(path);
            signal_backups[2 * nb + 1] = g_strdup(backup);
            n_signal_backups = nb + 1;
        }
        if (g_rename(path, backup) != 0) {
            n_signal_backups = nb; /* cannot move it: it is replaced as before */
            return TRUE;
        }
        if (replaced == NULL)
            replaced = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(replaced, g_strdup(path));
        g_ptr_array_add(replaced, g_strdup(backup));
        return TRUE;
    }
    if (created == NULL)
        created = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(created, g_strdup(path));
    sig_atomic_t n = n_signal_paths;
    if (n < MAX_SIGNAL_PATHS) {
        g_free(signal_paths[n]);
        signal_paths[n] = g_strdup(path);
        n_signal_paths = n + 1;
    }
    return TRUE;
}

void
rs_cli_remove_created_outputs(void)
{
    /* The counts drop after each loop: a signal within one redoes what is left (an unlink
     * or rename already done fails harmlessly). */
    for (guint i = 0; created != NULL && i < created->len; i++)
        g_unlink(g_ptr_array_index(created, i));
    n_signal_paths = 0;
    if (created != NULL)
        g_ptr_array_set_size(created, 0);
    /* The files of the earlier run come back, over whatever this one wrote there. */
    for (guint i = 0; replaced != NULL && i < replaced->len; i += 2)
        g_rename(g_ptr_array_index(replaced, i + 1), g_ptr_array_index(replaced, i));
    n_signal_backups = 0;
    if (replaced != NULL)
        g_ptr_array_set_size(replaced, 0);
}

const char *const rs_cli_plot_exts[RS_CLI_N_PLOT_FILES] = {".dat", ".gp", ".png", ".svg"};

gboolean
rs_cli_check_plot_outputs(const char *option, const char *prefix, GError **error)
{
    g_autofree char *base = g_path_get_basename(prefix);
    if (*prefix == '\0' || g_str_has_suffix(prefix, G_DIR_SEPARATOR_S) ||
        strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        /* The files would be hidden ones: .dat, .gp, .png, .svg in that folder. */
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s \"%s\": empty prefix (the files would be %s.png, %s.svg, ...)", option,
                    prefix, prefix, prefix);
        return FALSE;
    }
    char *paths[RS_CLI_N_PLOT_FILES];
    const char *options[RS_CLI_N_PLOT_FILES];
    for (guint i = 0; i < RS_CLI_N_PLOT_FILES; i++) {
        paths[i] = g_strconcat(prefix, rs_cli_plot_exts[i], NULL);
        options[i] = option;
    }
    gboolean ok = rs_cli_check_output(option, paths[2], error) &&
                  rs_cli_check_output_set(options, (const char *const *)paths,
                                          RS_CLI_N_PLOT_FILES, error);
    for (guint i = 0; i < RS_CLI_N_PLOT_FILES; i++)
        g_free(paths[i]);
    return ok;
}

gboolean
rs_cli_begin_plot_outputs(const char *option, const char *prefix, GError **error)
{
    for (guint i = 0; i < RS_CLI_N_PLOT_FILES; i++) {
        g_autofree char *path = g_strconcat(prefix, rs_cli_plot_exts[i], NULL);
        if (!rs_cli_begin_output(option, path, error))
            return FALSE;
    }
    return TRUE;
}

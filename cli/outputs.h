/* outputs.h — output files of a subcommand: checked before any work, removed on failure. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Checks that @path can be written before a command does its work: the folder it names
 * (the current one for a bare name) exists, is a folder and is writable, and @path is not
 * itself a folder. NULL @path passes. Error: G_OPTION_ERROR_BAD_VALUE
 * "OPTION PATH: folder DIR does not exist" (or "is not a folder", "is not writable",
 * "is a folder") — a usage error (exit 2). It also fails, as rs_cli_check_not_input(), when
 * @path names an input noted so far. */
gboolean rs_cli_check_output(const char *option, const char *path, GError **error);

/* Fails when two outputs (either may be NULL) name one file, so that one would overwrite
 * the other: "OPTION_B PATH_B: the same file as OPTION_A PATH_A; …" — a usage error. Paths
 * are compared resolved (absolute, ".", ".." and symbolic links: an existing file's own
 * path, else its folder's and its name), and existing files also by device and inode. */
gboolean rs_cli_check_distinct_outputs(const char *option_a, const char *path_a,
                                       const char *option_b, const char *path_b, GError **error);

/* Checks every file a command will write at once, the files derived from an option's path
 * included (a trace's PATH.meta sidecar, a plot's PREFIX-NAME.dat/.gp/.png/.svg, one file
 * per strategy): fails when two of them name one file (as rs_cli_check_distinct_outputs(),
 * for every pair), one names an input (rs_cli_check_not_input()) or one is a folder
 * ("OPTION PATH: is a folder"). @options[i] names
 * where output i comes from ("--trace", "--plot"), @paths[i] is its path (NULL entries are
 * skipped); both arrays hold @n entries and stay the caller's. O(n²) path comparisons. */
gboolean rs_cli_check_output_set(const char *const *options, const char *const *paths, guint n,
                                 GError **error);

/* The four files of one plot, PREFIX.dat, .gp, .png and .svg (rs_plot_render()): their
 * folder exists and is writable (rs_cli_check_output()), none is a folder, two of them or
 * one and an input noted so far are not one file (rs_cli_check_output_set()), and @prefix
 * names files, not hidden ones in a folder (not "" nor ending in '/'). @option names the
 * flag in messages ("--plot"). */
gboolean rs_cli_check_plot_outputs(const char *option, const char *prefix, GError **error);

/* The endings of one plot's files after its prefix, as rs_plot_render() writes them. */
#define RS_CLI_N_PLOT_FILES 4
extern const char *const rs_cli_plot_exts[RS_CLI_N_PLOT_FILES];

/* rs_cli_begin_output() for each of the four files of the plot @prefix, just before it is
 * drawn: none may be an input, and those not there yet are removed if the command fails or
 * is interrupted. */
gboolean rs_cli_begin_plot_outputs(const char *option, const char *prefix, GError **error);

/* Notes that the command reads @path (NULL is ignored): an output may not name it. The
 * file is identified by device and inode (when it exists) and by its absolute path. One
 * command runs per process, so the list is the process's. */
void rs_cli_note_input(const char *path);

/* Fails when @path (NULL passes) is a file noted by rs_cli_note_input() under any name
 * (the same device and inode, or the same absolute path): G_OPTION_ERROR_BAD_VALUE
 * "OPTION PATH: is an input of this command (INPUT); …" — a usage error (exit 2). */
gboolean rs_cli_check_not_input(const char *option, const char *path, GError **error);

/* Called just before the command writes @path (NULL passes): checks @path against the
 * inputs (rs_cli_check_not_input()), then, when no file is there yet, adds @path to the
 * list rs_cli_remove_created_outputs() removes; a regular file already there (not one this
 * command wrote) is moved aside to ".NAME.reshard-old-PID" in its folder, which
 * rs_cli_remove_created_outputs() (and an interrupting signal) puts back and
 * rs_cli_keep_outputs() removes. */
gboolean rs_cli_begin_output(const char *option, const char *path, GError **error);

/* From now on SIGINT, SIGTERM and SIGHUP (unless ignored) remove the files noted by
 * rs_cli_begin_output() that the command created and put back those it replaced, then end
 * the process by the signal (exit status 128 + its number): an interrupted command leaves
 * none of its outputs, as a failed one. */
void rs_cli_remove_outputs_on_signal(void);

/* @dir (owned by the caller, alive until rs_cli_forget_temp_dir()) is a temporary folder
 * of the command: an interrupting signal (as above) removes the files in it that
 * rs_cli_begin_output() noted, then the folder itself when that left it empty. One folder
 * at a time. */
void rs_cli_remove_temp_dir_on_signal(const char *dir);
/* The temporary folder was removed: a signal no longer touches it. */
void rs_cli_forget_temp_dir(void);

/* The command succeeded: a signal from now on leaves its outputs, and the earlier files its
 * outputs replaced (moved aside by rs_cli_begin_output()) are removed. */
void rs_cli_keep_outputs(void);

/* Removes every file noted by rs_cli_begin_output() that the command created and puts back
 * those it replaced (on failure, so that a failed command leaves none of its outputs
 * behind and the earlier ones as they were), and empties the lists. */
void rs_cli_remove_created_outputs(void);

G_END_DECLS

/* test-util.h — helpers the command-line tests share (test-cli.c, test-cli-run.c): running
 * the reshard binary ($RESHARD_BIN) and capturing its stdout, stderr and exit status,
 * temporary folders and files, the test data folder, and JSON output. Every helper fails
 * the running test on an error it cannot report to its caller. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* What a run of reshard left: its exit status and its whole stdout and stderr. */
typedef struct {
    gint exit_code;
    char *out;
    char *err;
} RunResult;

/**
 * run_result_clear:
 * @r: a result of run_reshard*(); its strings are freed (the struct is not)
 */
void run_result_clear(RunResult *r);

/**
 * run_reshard_full:
 * @args: (array zero-terminated=1): the arguments after the program name
 * @env: (array zero-terminated=1) (nullable): "NAME=VALUE" entries that change this process's
 *   environment for the child; NULL: the child inherits it unchanged
 * @mpi_np: > 0: run under $MPIRUN (--oversubscribe --allow-run-as-root -np @mpi_np)
 *
 * Runs $RESHARD_BIN and waits for it; fails the test when it cannot be spawned or does not
 * exit normally (a signal).
 *
 * Returns: the exit status and the captured output (clear with run_result_clear()).
 */
RunResult run_reshard_full(const char *const *args, const char *const *env, guint mpi_np);

/** run_reshard: run_reshard_full(@args, NULL, 0). */
RunResult run_reshard(const char *const *args);

/** run_reshard_env: run_reshard_full(@args, @env, 0). */
RunResult run_reshard_env(const char *const *args, const char *const *env);

/** run_reshard_mpi: run_reshard_full(@args, NULL, @mpi_np). */
RunResult run_reshard_mpi(const char *const *args, guint mpi_np);

/**
 * assert_exit_code:
 * @r: a result of run_reshard*()
 * @expected: the exit status the command must end with
 *
 * Fails the test when it ended otherwise, printing the command's stderr (a bare status
 * mismatch left nothing to study when an intermittent failure came back).
 */
void assert_exit_code(const RunResult *r, gint expected);

/**
 * assert_contains:
 * Fails the test, printing both strings, when @haystack does not contain @needle.
 */
void assert_contains(const char *haystack, const char *needle);

/**
 * count_occurrences:
 * Returns: how many times @needle (not empty) occurs in @haystack, overlaps counted.
 */
guint count_occurrences(const char *haystack, const char *needle);

/**
 * remove_tree:
 * @path: a file or folder; a folder is removed with everything under it (a symbolic link
 *   is removed, not followed). Missing or unremovable entries are left without an error.
 */
void remove_tree(const char *path);

/**
 * make_temp_dir:
 * Returns: (transfer full): a new empty folder under the temporary directory (g_get_tmp_dir():
 *   $TMPDIR or /tmp), named rs-cli- and six random characters; removed with what it holds
 *   (remove_tree()) when the running test case ends (g_test_queue_destroy()), so call it
 *   only inside one. The caller may remove it earlier.
 */
char *make_temp_dir(void);

/**
 * write_temp:
 * @name: a file name
 * @text: the file's contents
 * Returns: (transfer full): the path of @name, holding @text, in a new make_temp_dir().
 */
char *write_temp(const char *name, const char *text);

/**
 * read_file:
 * Returns: (transfer full): the contents of @path; fails the test when it cannot be read.
 */
char *read_file(const char *path);

/**
 * data_path:
 * Returns: (transfer full): $G_TEST_SRCDIR/data/@name, a file of tests/data.
 */
char *data_path(const char *name);

/**
 * parse_json:
 * @parser: the parser that owns the result
 * @text: JSON text whose root is an object
 * Returns: (transfer none): the root object, valid while @parser lives; fails the test,
 *   printing @text, when it does not parse.
 */
JsonObject *parse_json(JsonParser *parser, const char *text);

G_END_DECLS

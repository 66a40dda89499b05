/* cli/ — the one `reshard` command. It parses options, calls into the libraries and prints
 * what analysis/ renders; policy (which strategy, which relay mode, what auto picks) lives
 * in plan/ and sim/, never here. One file per subcommand (cmd-NAME.c), the option groups
 * several commands share (*-args.c), and output-path checks (outputs.c).
 *
 * cli.h — shared pieces of the reshard subcommands. */
#pragma once

#include <glib.h>

#include "analysis/report.h"

G_BEGIN_DECLS

/* Exit codes of every subcommand (STYLE.md). */
enum {
    RS_EXIT_OK = 0,
    RS_EXIT_RUNTIME = 1, /* a failure while running */
    RS_EXIT_USAGE = 2,   /* bad usage or bad input */
    RS_EXIT_CHECK = 3,   /* a check failed: validation or threshold */
};

/* The most measured runs `reshard run --runs` and `reshard calibrate --runs` take: a median
 * of 10,000 runs is as good as it gets; 10^9 runs of even a tiny reshard ran for days with
 * no output. */
#define RS_CLI_MAX_RUNS 10000

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    /* Fills @context with the command's options (for `reshard help CMD`). */
    GOptionContext *(*make_context)(void);
} RsCommand;

extern const RsCommand rs_command_simulate;
extern const RsCommand rs_command_models;
extern const RsCommand rs_command_layout;
extern const RsCommand rs_command_plan;
extern const RsCommand rs_command_run;
extern const RsCommand rs_command_calibrate;
extern const RsCommand rs_command_topology;
extern const RsCommand rs_command_sweep;
extern const RsCommand rs_command_compare;
extern const RsCommand rs_command_report;

/* `reshard report` is `reshard simulate` writing a document: the simulate options (its
 * context under report's own usage line, to which report adds --output) and, once they are parsed,
 * the run that writes the document to @output (--format html or md; NULL: report.html or report.md)
 * instead of printing. */
GOptionContext *rs_cli_simulate_make_context(const char *parameter_string);
int rs_cli_simulate_report(const char *output);

/* Global switches shared by every subcommand. */
extern gboolean rs_cli_verbose;
extern gboolean rs_cli_quiet;
/* This process is a rank other than 0 of a multi-process transport (mpirun): it prints no
 * progress and no warnings (rs_cli_warn()), which rank 0 prints once for the job. */
extern gboolean rs_cli_secondary_rank;

/* Adds -v/--verbose and -q/--quiet to @context. */
void rs_cli_add_common_options(GOptionContext *context);

/* Prints "reshard CMD: message" on stderr and returns @code. */
int rs_cli_fail(const char *command, const GError *error, int code);

/**
 * rs_cli_append_hint:
 * @error: an error to extend in place
 * @hint: what the user can do, appended after "; "
 */
void rs_cli_append_hint(GError *error, const char *hint);

/* Progress on stderr unless --quiet. */
void rs_cli_progress(const char *format, ...) G_GNUC_PRINTF(1, 2);

/* A warning on stderr, "reshard @command: warning: " (@command NULL: the program name
 * g_get_prgname() holds, "reshard CMD") and the formatted text (escaped as by
 * rs_cli_printerr()) and a newline; nothing on a secondary rank (rs_cli_secondary_rank).
 * -q does not mute warnings: they are not progress. */
void rs_cli_warn(const char *command, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* g_printerr() for messages that quote input (names, arguments, file contents): the text is
 * written through rs_text_escape(), so no byte of it acts on the terminal. */
void rs_cli_printerr(const char *format, ...) G_GNUC_PRINTF(1, 2);

/* Refuses an option given twice in @argv[1 .. @argc - 1] (GOption would keep the last value
 * silently, and no option of reshard takes several): a long option by its name (before
 * any "="), a short one by its letter; the words after "--" are not options. The two
 * spellings of one option (-f and --format) are not matched. @error:
 * G_OPTION_ERROR_BAD_VALUE naming the option. */
gboolean rs_cli_check_repeated_options(int argc, char **argv, GError **error);

/* Parses @argv with the options of @make_context (a command's context, freed before
 * returning); refuses positional arguments; on failure prints the error and the usage
 * line and sets *@exit_code to RS_EXIT_USAGE; an option given twice is refused
 * (rs_cli_check_repeated_options()). Returns TRUE when the command should go on. */
gboolean rs_cli_parse(const char *command, GOptionContext *(*make_context)(void), int *argc,
                      char ***argv, int *exit_code);

/* Parses @text, the value of the integer option @flag, into *@value when it lies in
 * [@min, @max]. Integer options are taken as text so that "not given" (@text NULL: *@value
 * is left as is, TRUE) differs from every value, 0 included. @error: G_OPTION_ERROR_BAD_VALUE
 * naming @flag. */
gboolean rs_cli_parse_int(const char *flag, const char *text, gint64 min, gint64 max,
                          gint64 *value, GError **error);

/* Parses the value of --format (@text NULL: table) into *@format. @error: the parse error
 * of rs_format_parse, prefixed with "--format: ". */
gboolean rs_cli_parse_format(const char *text, RsFormat *format, GError **error);

/* The strategies a --strategy option accepts, for its help and its errors, derived from
 * rs_strategy_get_name() so no list goes stale: "gather-broadcast, direct, node-aware, …
 * or rdma-p2p", followed by ", auto, all or list" when @with_auto_all (reshard simulate).
 * @last_sep joins the last item (" or ", ", "). Returns: (transfer full). */
char *rs_cli_strategy_names(gboolean with_auto_all, const char *last_sep);

/* Prints every strategy on stdout: its name, whose it is (ours, baseline, peer,
 * strawman), what it does in one line and where its rules come from (`--strategy list`),
 * in @format (RS_FORMAT_CSV, RS_FORMAT_JSON: one row per strategy, auto's source null). */
void rs_cli_print_strategies(RsFormat format);

/* Sets the description of the "strategy" entry of @entries (NULL-terminated) to the
 * strategy names and @default_text, built once per process (the text lives as long as the
 * entries). */
void rs_cli_set_strategy_help(GOptionEntry *entries, gboolean with_auto_all,
                              const char *default_text);

G_END_DECLS

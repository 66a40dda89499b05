/* main.c — the reshard command: dispatches to subcommands. */
#include "cli/cli.h"
#include "cli/outputs.h"
#include "analysis/table.h"

#include "rs-config.h"
#include "plan/plan.h"
#include "base/text.h"

#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

gboolean rs_cli_verbose = FALSE;
gboolean rs_cli_quiet = FALSE;
gboolean rs_cli_secondary_rank = FALSE;

static const RsCommand *const commands[] = {
    &rs_command_simulate,
    &rs_command_models,
    &rs_command_layout,
    &rs_command_plan,
    &rs_command_run,
    &rs_command_calibrate,
    &rs_command_topology,
    &rs_command_sweep,
    &rs_command_compare,
    &rs_command_report,
};

static GOptionEntry common_entries[] = {
    {"verbose", 'v', 0, G_OPTION_ARG_NONE, &rs_cli_verbose, "Print debug messages", NULL},
    {"quiet", 'q', 0, G_OPTION_ARG_NONE, &rs_cli_quiet, "Print no progress on stderr", NULL},
    {NULL},
};

void
rs_cli_add_common_options(GOptionContext *context)
{
    GOptionGroup *group =
        g_option_group_new("common", "Common options:", "Show common options", NULL, NULL);
    g_option_group_add_entries(group, common_entries);
    g_option_context_add_group(context, group);
}

int
rs_cli_fail(const char *command, const GError *error, int code)
{
    /* Names from input are in the message: nothing of it may act on the terminal. */
    rs_cli_printerr("reshard %s: %s\n", command,
                    error != NULL ? error->message : "internal error (no message; a bug)");
    return code;
}

void
rs_cli_append_hint(GError *error, const char *hint)
{
    char *message = g_strdup_printf("%s; %s", error->message, hint);
    g_free(error->message);
    error->message = message;
}

gboolean
rs_cli_parse_format(const char *text, RsFormat *format, GError **error)
{
    *format = RS_FORMAT_TABLE;
    if (text != NULL && !rs_format_parse(text, format, error)) {
        g_prefix_error(error, "--format: ");
        return FALSE;
    }
    return TRUE;
}

gboolean
rs_cli_parse_int(const char *flag, const char *text, gint64 min, gint64 max, gint64 *value,
                 GError **error)
{
    if (text == NULL)
        return TRUE;
    gint64 v;
    if (!g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &v, NULL)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s \"%s\": expected an integer", flag, text);
        return FALSE;
    }
    if (v < min || v > max) {
        /* Below the least value of an open-ended option: "at least"; otherwise the range
         * (an oversized value said "at least 1" before). */
        if (v < min && max >= G_MAXINT32)
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s %" G_GINT64_FORMAT ": must be at least %" G_GINT64_FORMAT, flag, v,
                        min);
        else
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s %" G_GINT64_FORMAT ": must be an integer from %" G_GINT64_FORMAT
                        " to %" G_GINT64_FORMAT,
                        flag, v, min, max);
        return FALSE;
    }
    *value = v;
    return TRUE;
}

char *
rs_cli_strategy_names(gboolean with_auto_all, const char *last_sep)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (guint s = 0; s < RS_STRATEGY_N; s++)
        g_ptr_array_add(names, (gpointer)rs_strategy_get_name((RsStrategy)s));
    if (with_auto_all) {
        g_ptr_array_add(names, "auto");
        g_ptr_array_add(names, "all");
        g_ptr_array_add(names, "list");
    }
    GString *text = g_string_new(NULL);
    for (guint i = 0; i < names->len; i++)
        g_string_append_printf(text, "%s%s", i == 0 ? "" : i + 1 == names->len ? last_sep : ", ",
                               (const char *)names->pdata[i]);
    return g_string_free(text, FALSE);
}

/* One strategy row in both forms: @text the listing, @table the CSV/JSON rows (@source
 * NULL: none). */
static void
add_strategy_row(GString *text, RsTable *table, const char *name, const char *kind,
                 const char *description, const char *source)
{
    g_string_append_printf(text, "%-18s %-9s %s\n", name, kind, description);
    if (source != NULL)
        g_string_append_printf(text, "%-28s source: %s\n", "", source);
    rs_table_add_row(table);
    rs_table_set_text(table, 0, name);
    rs_table_set_text(table, 1, kind);
    rs_table_set_text(table, 2, description);
    if (source != NULL)
        rs_table_set_text(table, 3, source);
    else
        rs_table_set_null(table, 3);
}

void
rs_cli_print_strategies(RsFormat format)
{
    static const char *const kinds[] = {
        [RS_STRATEGY_KIND_OURS] = "ours",
        [RS_STRATEGY_KIND_BASELINE] = "baseline",
        [RS_STRATEGY_KIND_PEER] = "peer",
        [RS_STRATEGY_KIND_STRAWMAN] = "strawman",
    };
    static const RsStrategyKind order[] = {RS_STRATEGY_KIND_OURS, RS_STRATEGY_KIND_BASELINE,
                                           RS_STRATEGY_KIND_PEER, RS_STRATEGY_KIND_STRAWMAN};
    static const RsColumn columns[] = {
        {"strategy", NULL, RS_COLUMN_TEXT, 0, 0},
        {"kind", NULL, RS_COLUMN_TEXT, 0, 0},
        {"description", NULL, RS_COLUMN_TEXT, 0, 0},
        {"source", NULL, RS_COLUMN_TEXT, 0, 0},
    };
    g_autoptr(RsTable) table = rs_table_new("strategies", columns, G_N_ELEMENTS(columns));
    g_autoptr(GString) text = g_string_new(NULL);
    for (guint k = 0; k < G_N_ELEMENTS(order); k++)
        for (guint s = 0; s < RS_STRATEGY_N; s++)
            if (rs_strategy_get_kind((RsStrategy)s) == order[k])
                add_strategy_row(text, table, rs_strategy_get_name((RsStrategy)s),
                                 kinds[order[k]], rs_strategy_get_description((RsStrategy)s),
                                 rs_strategy_get_source((RsStrategy)s));
    add_strategy_row(text, table, "auto", "ours",
                     "plans every one of ours and nccl-broadcast, keeps the fastest and says why",
                     NULL);
    if (format != RS_FORMAT_TABLE) {
        g_string_truncate(text, 0);
        rs_table_append(table, format, text);
    }
    fputs(text->str, stdout);
}

void
rs_cli_set_strategy_help(GOptionEntry *entries, gboolean with_auto_all, const char *default_text)
{
    /* One command runs per process; the text lives as long as its option entries. */
    static char *help[2];
    if (help[with_auto_all ? 1 : 0] == NULL) {
        g_autofree char *names = rs_cli_strategy_names(with_auto_all, " or ");
        help[with_auto_all ? 1 : 0] = g_strdup_printf("%s (%s)", names, default_text);
    }
    for (GOptionEntry *e = entries; e->long_name != NULL; e++)
        if (strcmp(e->long_name, "strategy") == 0)
            e->description = help[with_auto_all ? 1 : 0];
}

/* Writes @prefix (trusted, not escaped), the formatted text escaped (rs_text_escape()) and
 * @suffix on stderr. */
static void
printerr_escaped(const char *prefix, const char *suffix, const char *format, va_list args)
{
    g_autofree char *text = g_strdup_vprintf(format, args);
    g_autofree char *safe = rs_text_escape(text);
    g_printerr("%s%s%s", prefix, safe, suffix);
}

void
rs_cli_progress(const char *format, ...)
{
    if (rs_cli_quiet)
        return;
    va_list args;
    va_start(args, format);
    printerr_escaped("", "\n", format, args);
    va_end(args);
}

void
rs_cli_warn(const char *command, const char *format, ...)
{
    if (rs_cli_secondary_rank)
        return;
    const char *prgname = g_get_prgname() ? g_get_prgname() : "reshard";
    g_autofree char *prefix = command ? g_strdup_printf("reshard %s: warning: ", command)
                                      : g_strdup_printf("%s: warning: ", prgname);
    g_autofree char *safe_prefix = rs_text_escape(prefix);
    va_list args;
    va_start(args, format);
    printerr_escaped(safe_prefix, "\n", format, args);
    va_end(args);
}

void
rs_cli_printerr(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    printerr_escaped("", "", format, args);
    va_end(args);
}

gboolean
rs_cli_check_repeated_options(int argc, char **argv, GError **error)
{
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            break;
        g_autofree char *name = NULL;
        if (g_str_has_prefix(a, "--") && a[2] != '\0') {
            const char *eq = strchr(a, '=');
            name = eq != NULL ? g_strndup(a, (gsize)(eq - a)) : g_strdup(a);
        } else if (a[0] == '-' && g_ascii_isalpha(a[1])) {
            name = g_strndup(a, 2);
        } else {
            continue;
        }
        if (g_hash_table_contains(seen, name)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s given twice: give it once (a repeated option would keep only its "
                        "last value)",
                        name);
            return FALSE;
        }
        g_hash_table_add(seen, g_steal_pointer(&name));
    }
    return TRUE;
}

gboolean
rs_cli_parse(const char *command, GOptionContext *(*make_context)(void), int *argc,
             char ***argv, int *exit_code)
{
    g_autoptr(GError) error = NULL;
    if (!rs_cli_check_repeated_options(*argc, *argv, &error)) {
        rs_cli_printerr("reshard %s: %s\nTry 'reshard help %s'.\n", command, error->message,
                        command);
        *exit_code = RS_EXIT_USAGE;
        return FALSE;
    }
    GOptionContext *context = make_context();
    gboolean parsed = g_option_context_parse(context, argc, argv, &error);
    g_option_context_free(context);
    if (!parsed) {
        rs_cli_printerr("reshard %s: %s\nTry 'reshard help %s'.\n", command, error->message,
                        command);
        *exit_code = RS_EXIT_USAGE;
        return FALSE;
    }
    if (*argc > 1) {
        rs_cli_printerr("reshard %s: unexpected argument \"%s\"\nTry 'reshard help %s'.\n", command,
                        (*argv)[1], command);
        *exit_code = RS_EXIT_USAGE;
        return FALSE;
    }
    if (rs_cli_verbose)
        g_setenv("G_MESSAGES_DEBUG", "all", TRUE);
    return TRUE;
}

static void
print_usage(FILE *stream)
{
    fprintf(stream, "Usage: reshard COMMAND [OPTIONS]\n\n"
                    "Plan, simulate and execute the weight refit of RL post-training as a\n"
                    "DTensor-to-DTensor reshard.\n\nCommands:\n");
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        fprintf(stream, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(stream, "  %-10s %s\n", "help", "Show help for a command: reshard help COMMAND");
    fprintf(stream, "  %-10s %s\n", "version", "Print the version");
    fprintf(stream, "\nExit codes: 0 ok, 1 runtime failure, 2 usage or input error, "
                    "3 a check failed.\n");
}

static const RsCommand *
find_command(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

/* Results go to standard output: a write that failed there (a full disk, a closed pipe,
 * /dev/full) is a runtime failure, reported on stderr, never an exit 0. */
static int
finish_stdout(int code)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return code;
    int err = errno;
    rs_cli_printerr("reshard: writing the results to standard output failed: %s\n",
                    g_strerror(err ? err : EIO));
    return code == RS_EXIT_OK ? RS_EXIT_RUNTIME : code;
}

/* reshard version's help (reshard help version, reshard version --help). */
static int
print_version_usage(void)
{
    printf("Usage:\n  reshard version\n\nPrints the version of reshard.\n");
    return RS_EXIT_OK;
}

static int
run_command(int argc, char **argv);

int
main(int argc, char **argv)
{
    rs_cli_remove_outputs_on_signal();
    int code = finish_stdout(run_command(argc, argv));
    /* Success, or a check that failed (its outputs, a trace or a plot, show why): the
     * outputs stay. Any other failure (standard output's too) leaves none and the earlier
     * files as they were. */
    if (code == RS_EXIT_OK || code == RS_EXIT_CHECK)
        rs_cli_keep_outputs();
    else
        rs_cli_remove_created_outputs();
    return code;
}

static int
run_command(int argc, char **argv)
{
    /* The user's locale for messages and their character set (GLib prints its “quotes” as
     * '?' in the C locale), but numbers stay in the C locale: tables, CSV and JSON print
     * with printf and must keep '.' as the decimal separator whatever LC_NUMERIC says. */
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    /* -v's debug and info lines go to stderr with the progress: GLib's default writer puts
     * them on stdout, inside the tables, CSV and JSON. */
    g_log_writer_default_set_use_stderr(TRUE);
    /* Every JSON document names the command line that made it (its provenance). */
    rs_report_set_command_line(argc, argv);
    if (argc < 2) {
        print_usage(stderr);
        return RS_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        if (argc < 3) {
            print_usage(stdout);
            return RS_EXIT_OK;
        }
        /* help takes one command name; anything after it is an error, as in every command. */
        if (argc > 3) {
            rs_cli_printerr("reshard help: unexpected argument \"%s\"\nTry 'reshard help help'.\n",
                            argv[3]);
            return RS_EXIT_USAGE;
        }
        /* help and version are listed under Commands too, so they have help of their own
         * (and --help, as every command: reshard help --help). */
        if (strcmp(argv[2], "help") == 0 || strcmp(argv[2], "--help") == 0 ||
            strcmp(argv[2], "-h") == 0) {
            print_usage(stdout);
            return RS_EXIT_OK;
        }
        if (strcmp(argv[2], "version") == 0)
            return print_version_usage();
        const RsCommand *cmd = find_command(argv[2]);
        if (cmd == NULL) {
            rs_cli_printerr("reshard help: unknown command \"%s\"\n", argv[2]);
            print_usage(stderr);
            return RS_EXIT_USAGE;
        }
        g_autofree char *prgname = g_strdup_printf("reshard %s", cmd->name);
        g_set_prgname(prgname);
        GOptionContext *context = cmd->make_context();
        g_autofree char *help = g_option_context_get_help(context, FALSE, NULL);
        g_option_context_free(context);
        fputs(help, stdout);
        return RS_EXIT_OK;
    }
    if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0) {
        if (argc == 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0))
            return print_version_usage();
        if (argc > 2) {
            rs_cli_printerr("reshard version: unexpected argument \"%s\"\nTry 'reshard help "
                            "version'.\n",
                            argv[2]);
            return RS_EXIT_USAGE;
        }
        printf("reshard %s\n", RS_VERSION);
        return RS_EXIT_OK;
    }
    const RsCommand *cmd = find_command(name);
    if (cmd == NULL) {
        rs_cli_printerr("reshard: unknown command \"%s\"\n\n", name);
        print_usage(stderr);
        return RS_EXIT_USAGE;
    }
    g_autofree char *prgname = g_strdup_printf("reshard %s", cmd->name);
    g_set_prgname(prgname);
    return cmd->run(argc - 1, argv + 1);
}

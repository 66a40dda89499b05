/* cmd-models.c — `reshard models`: the shipped models with their parameter totals. */
#include "cli/cli.h"

#include "analysis/report.h"
#include "sim/data.h"
#include "sim/model.h"

#include <stdio.h>

static char *opt_format;
static gboolean opt_mtp;

static GOptionEntry entries[] = {
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table, csv or json (default table)",
     "FORMAT"},
    {"mtp", 0, 0, G_OPTION_ARG_NONE, &opt_mtp, "Count multi-token-prediction layers too", NULL},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    GOptionContext *context = g_option_context_new("- list the shipped models");
    g_option_context_set_summary(context,
                                 "Generates every model in models/ and prints its family, layer\n"
                                 "count, tensors, total and active parameters and size.");
    g_option_context_add_main_entries(context, entries, NULL);
    rs_cli_add_common_options(context);
    return context;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "models";
    int code = RS_EXIT_OK;
    GOptionContext *context = make_context();
    gboolean go_on = rs_cli_parse(cmd, context, &argc, &argv, &code);
    g_option_context_free(context);
    if (!go_on)
        return code;
    g_autoptr(GError) error = NULL;
    RsFormat format = RS_FORMAT_TABLE;
    if (opt_format != NULL && !rs_format_parse(opt_format, &format, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);

    g_auto(GStrv) names = rs_data_list("models");
    g_autoptr(GPtrArray) models = g_ptr_array_new_with_free_func((GDestroyNotify)rs_model_free);
    RsModelOptions options = {.include_mtp = opt_mtp};
    for (guint i = 0; names[i] != NULL; i++) {
        g_autofree char *path = rs_data_find("models", names[i], &error);
        RsModel *model = path ? rs_model_load_file(path, &options, &error) : NULL;
        if (model == NULL)
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        g_ptr_array_add(models, model);
    }
    g_autoptr(GString) out = g_string_new(NULL);
    rs_report_models(models, (const char *const *)names, format, out);
    fputs(out->str, stdout);
    return RS_EXIT_OK;
}

const RsCommand rs_command_models = {
    "models",
    "List the shipped models with parameter totals",
    run,
    make_context,
};

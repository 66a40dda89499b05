/* cmd-models.c — `reshard models`: the shipped models (or one model file) with their
 * parameter totals, active parameters, published figures and bytes as stored; `--tensors`
 * lists one model's tensors. */
#include "cli/cli.h"
#include "cli/model-args.h"

#include "analysis/report.h"
#include "base/data.h"
#include "layout/scenario.h"
#include "models/model-load.h"

#include <stdio.h>

static char *opt_format;
static gboolean opt_mtp;
static char *opt_model;
static gboolean opt_tensors;
static gboolean opt_stored;
static char *opt_layer;
static gboolean opt_rules;

static GOptionEntry entries[] = {
    {"format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, "table, csv or json (default table)",
     "FORMAT"},
    {"mtp", 0, 0, G_OPTION_ARG_NONE, &opt_mtp, "Count multi-token-prediction layers too", NULL},
    {"model", 'm', 0, G_OPTION_ARG_STRING, &opt_model,
     "Only this model: a shipped name, a model YAML, a Hugging Face config.json, a "
     ".safetensors file or a .safetensors.index.json",
     "NAME|FILE"},
    {"tensors", 0, 0, G_OPTION_ARG_NONE, &opt_tensors,
     "List the tensors of the --model (name, shape, dtype, role, layer, parameters, bytes)", NULL},
    {"stored", 0, 0, G_OPTION_ARG_NONE, &opt_stored,
     "With --tensors: list the tensors as the checkpoint stores them (FP8 + scales, MXFP4)", NULL},
    {"layer", 0, 0, G_OPTION_ARG_STRING, &opt_layer,
     "With --tensors: only this layer (-1: the embedding)", "N"},
    {"rules", 0, 0, G_OPTION_ARG_NONE, &opt_rules,
     "Print the name rules that give checkpoint tensors their roles", NULL},
    {NULL},
};

static GOptionContext *
make_context(void)
{
    GOptionContext *context = g_option_context_new("- list the models and their figures");
    g_option_context_set_summary(
        context,
        "Generates every model in models/ (or the one given with --model) and prints its\n"
        "family, layers, total and active parameters with and without the input\n"
        "embeddings, the published total and whether it matches (exact, or within 1% of a\n"
        "rounded figure), the bytes a refit moves and the bytes per dtype as the published\n"
        "checkpoint stores them. Exit code 3 when a total misses its published figure.");
    g_option_context_set_description(
        context, "Examples:\n"
                 "  reshard models\n"
                 "  reshard models --model deepseek-v3 --tensors --layer 3 --stored\n"
                 "  reshard models --model path/to/config.json\n"
                 "  reshard models --model path/to/model.safetensors.index.json --format json\n");
    g_option_context_add_main_entries(context, entries, NULL);
    rs_cli_add_common_options(context);
    return context;
}

/* Loads @name (shipped name or path) in the training form and as stored. */
static gboolean
load_pair(const char *name, RsModel **model_out, RsModel **stored_out, GError **error)
{
    g_autofree char *path = rs_data_find("models", name, error);
    if (path == NULL)
        return FALSE;
    RsModelOptions options = {.include_mtp = opt_mtp};
    g_autoptr(RsModel) model = rs_model_load_file(path, &options, error);
    /* --mtp on the listing counts MTP layers where a model has them; on one model that
     * has none it asks for nothing. */
    if (model == NULL)
        return FALSE;
    if (opt_model != NULL && !rs_scenario_check_mtp(model, opt_mtp, FALSE, error)) {
        g_prefix_error(error, "--mtp: ");
        return FALSE;
    }
    options.storage = RS_MODEL_STORAGE_CHECKPOINT;
    /* A checkpoint is what it stores: no second load. */
    RsModel *stored = rs_model_get_storage(model) == RS_MODEL_STORAGE_CHECKPOINT
                          ? NULL
                          : rs_model_load_file(path, &options, error);
    if (stored == NULL && rs_model_get_storage(model) != RS_MODEL_STORAGE_CHECKPOINT)
        return FALSE;
    /* What the loader assumed is said, never silent. */
    rs_cli_print_model_warnings("models", model);
    *model_out = g_steal_pointer(&model);
    *stored_out = stored;
    return TRUE;
}

static int
run(int argc, char **argv)
{
    const char *cmd = "models";
    int code = RS_EXIT_OK;
    if (!rs_cli_parse(cmd, make_context, &argc, &argv, &code))
        return code;
    g_autoptr(GError) error = NULL;
    RsFormat format;
    if (!rs_cli_parse_format(opt_format, &format, &error))
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    if (opt_rules) {
        if (format != RS_FORMAT_TABLE) {
            /* The rules are prose (patterns and the roles they give, with their sources). */
            g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--rules prints text: --format %s does not apply to it", opt_format);
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        }
        fputs(rs_model_role_rules_describe(), stdout);
        return RS_EXIT_OK;
    }
    if ((opt_tensors || opt_stored || opt_layer) && opt_model == NULL) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--tensors, --stored and --layer need --model");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    if ((opt_stored || opt_layer) && !opt_tensors) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--stored and --layer apply to --tensors");
        return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
    }
    gint layer = G_MININT;
    if (opt_layer != NULL) {
        gint64 v;
        if (!g_ascii_string_to_signed(opt_layer, 10, -1, G_MAXINT, &v, NULL)) {
            g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--layer: \"%s\" is not a layer number (-1 or more)", opt_layer);
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        }
        layer = (gint)v;
    }

    g_auto(GStrv) names = NULL;
    if (opt_model != NULL) {
        names = g_new0(char *, 2);
        names[0] = g_strdup(opt_model);
    } else {
        names = rs_data_list("models");
    }
    g_autoptr(GPtrArray) models = g_ptr_array_new_with_free_func((GDestroyNotify)rs_model_free);
    g_autoptr(GPtrArray) stored = g_ptr_array_new_with_free_func((GDestroyNotify)rs_model_free);
    for (guint i = 0; names[i] != NULL; i++) {
        RsModel *model = NULL, *as_stored = NULL;
        if (!load_pair(names[i], &model, &as_stored, &error))
            return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
        g_ptr_array_add(models, model);
        g_ptr_array_add(stored, as_stored);
    }
    g_autoptr(GString) out = g_string_new(NULL);
    if (opt_tensors) {
        const RsModel *m = g_ptr_array_index(models, 0);
        if (opt_stored && g_ptr_array_index(stored, 0) != NULL)
            m = g_ptr_array_index(stored, 0);
        if (layer != G_MININT) {
            /* Tensors carry layer -1 before the decoder layers and n_layers (or more, for
             * multi-token-prediction layers) after them. */
            gint last = -1;
            for (guint t = 0; t < rs_model_get_n_tensors(m); t++)
                last = MAX(last, rs_model_get_tensor(m, t)->layer);
            if (layer > last) {
                guint n_layers = rs_model_get_n_layers(m);
                g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                            "--layer %d: the model has layers 0-%u (-1: the tensors before "
                            "them, %d: the last tensors after them)",
                            layer, n_layers - 1, last);
                return rs_cli_fail(cmd, error, RS_EXIT_USAGE);
            }
        }
        rs_report_model_tensors(m, layer, format, out);
        fputs(out->str, stdout);
        return RS_EXIT_OK;
    }
    /* Rows whose stored form is the model itself (checkpoints) report it twice. */
    g_autoptr(GPtrArray) stored_view = g_ptr_array_new();
    for (guint i = 0; i < models->len; i++)
        g_ptr_array_add(stored_view, g_ptr_array_index(stored, i) ? g_ptr_array_index(stored, i)
                                                                  : g_ptr_array_index(models, i));
    rs_report_models(models, stored_view, (const char *const *)names, format, out);
    for (guint i = 0; i < models->len && format == RS_FORMAT_TABLE; i++) {
        const RsModel *m = g_ptr_array_index(models, i);
        guint64 with_mtp = rs_model_get_published_mtp_params(m, NULL);
        if (!opt_mtp && with_mtp != 0 && rs_model_get_published_params(m, NULL) == 0)
            g_string_append_printf(out,
                                   "%s: published %" G_GUINT64_FORMAT " counts the MTP layers; "
                                   "compare with --mtp.\n",
                                   rs_model_get_name(m), with_mtp);
    }
    fputs(out->str, stdout);
    for (guint i = 0; i < models->len; i++) {
        g_autoptr(GError) mismatch = NULL;
        if (!rs_model_check_published(g_ptr_array_index(models, i), &mismatch)) {
            rs_cli_printerr("reshard models: %s\n", mismatch->message);
            code = RS_EXIT_CHECK;
        }
    }
    return code;
}

const RsCommand rs_command_models = {
    "models",
    "List the models with parameter totals, published figures and stored bytes",
    run,
    make_context,
};

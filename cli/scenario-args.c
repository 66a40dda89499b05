/* scenario-args.c — scenario flags: find the scenario, load it, apply the overrides. */
#include "cli/scenario-args.h"
#include "cli/outputs.h"

#include "cli/cli.h"
#include "cli/topology-args.h"
#include "base/data.h"
#include "base/units.h"
#include "base/mesh.h"
#include "base/yaml-reader.h"
#include "models/model-load.h"
#include "models/safetensors.h"

#include <string.h>

GOptionGroup *
rs_scenario_args_make_group(RsScenarioArgs *args)
{
    GOptionEntry entries[] = {
        {"scenario", 's', 0, G_OPTION_ARG_STRING, &args->scenario, "Scenario name or file",
         "NAME|FILE"},
        {"model", 'm', 0, G_OPTION_ARG_STRING, &args->model, "Model name or file", "NAME|FILE"},
        {"mtp", 0, 0, G_OPTION_ARG_NONE, &args->mtp, "Include multi-token-prediction layers", NULL},
        {"stored", 0, 0, G_OPTION_ARG_NONE, &args->stored,
         "Move the weights as the checkpoint stores them (FP8 + block scales, MXFP4)", NULL},
        {"infer-dtype", 0, 0, G_OPTION_ARG_STRING, &args->infer_dtype,
         "dtype of the inference weights (fp8-e4m3, mxfp4: converted at the source, with "
         "block scales)",
         "DTYPE"},
        {"topology", 't', 0, G_OPTION_ARG_STRING, &args->topology,
         "Topology name or file (the prediction uses it; its own node count unless --nodes)",
         "NAME|FILE"},
        {"train", 0, 0, G_OPTION_ARG_STRING, &args->train,
         "Training layout, e.g. megatron:tp=1,pp=2,ep=2", "SPEC"},
        {"train-gpus", 0, 0, G_OPTION_ARG_STRING, &args->train_gpus,
         "GPUs (ranks) of the training layout", "RANGES"},
        {"infer", 0, 0, G_OPTION_ARG_STRING, &args->infer, "Inference layout, e.g. vllm:tp=4",
         "SPEC"},
        {"infer-gpus", 0, 0, G_OPTION_ARG_STRING, &args->infer_gpus,
         "GPUs (ranks) of the inference layout", "RANGES"},
        {"scale", 0, 0, G_OPTION_ARG_STRING, &args->scale,
         "Divide hidden, intermediate, vocabulary and expert widths by F", "F"},
        {"layers", 0, 0, G_OPTION_ARG_STRING, &args->layers,
         "Only decoder layers A to B (no embedding or head)", "A-B"},
        {"gpus-per-domain", 0, 0, G_OPTION_ARG_STRING, &args->gpus_per_domain,
         "The job holds the first N GPUs of each NVLink domain; GPU lists count those only "
         "(gpus 0-127 with 64 on NVL72 racks: GPUs 0-63 and 72-135)",
         "N"},
        {"use-idle-gpus", 0, 0, G_OPTION_ARG_NONE, &args->use_idle_gpus,
         "Let GPUs in neither layout relay and carry PXN traffic (default: they carry none)",
         NULL},
        {"infer-memory-reserve", 0, 0, G_OPTION_ARG_STRING, &args->infer_memory_reserve,
         "Memory kept free on each inference GPU (KV cache, activations) when checking that "
         "the weights fit, with a unit (default 0 B)",
         "SIZE"},
        {"train-memory-reserve", 0, 0, G_OPTION_ARG_STRING, &args->train_memory_reserve,
         "Memory kept free on each training GPU (optimizer state, gradients, activations), "
         "with a unit (default 0 B)",
         "SIZE"},
        {NULL},
    };
    GOptionGroup *group =
        g_option_group_new("scenario", "Scenario options:", "Show scenario options", NULL, NULL);
    g_option_group_add_entries(group, entries);
    return group;
}

gboolean
rs_scenario_args_is_set(const RsScenarioArgs *args)
{
    return args->scenario || args->model || args->mtp || args->stored || args->infer_dtype ||
           args->train || args->train_gpus || args->infer || args->infer_gpus || args->scale ||
           args->layers || args->gpus_per_domain || args->use_idle_gpus;
}

gboolean
rs_scenario_apply_variant(RsScenario *scenario, gint scale, const char *layers, GError **error)
{
    if (scale < 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--scale: must be a positive integer, not %d", scale);
        return FALSE;
    }
    if (scale > 0)
        scenario->scale = (guint)scale;
    if (layers != NULL) {
        RsModelOptions range = {0};
        if (!rs_model_options_parse_layers(&range, layers, error)) {
            g_prefix_error(error, "--layers: ");
            return FALSE;
        }
        scenario->has_layer_range = TRUE;
        scenario->first_layer = range.first_layer;
        scenario->last_layer = range.last_layer;
        rs_scenario_set_where(&scenario->layers_where, "--layers");
    }
    return TRUE;
}

static gboolean
replace_convention(RsConvention **slot, const char *spec, const char *flag, GError **error)
{
    RsConvention *conv = rs_convention_parse(spec, error);
    if (conv == NULL) {
        g_prefix_error(error, "%s: ", flag);
        return FALSE;
    }
    rs_convention_free(*slot);
    *slot = conv;
    return TRUE;
}

static gboolean
replace_gpus(GArray **slot, const char *text, const char *flag, GError **error)
{
    GArray *gpus;
    if (!rs_ranks_parse(text, &gpus, error)) {
        g_prefix_error(error, "%s: ", flag);
        return FALSE;
    }
    if (*slot)
        g_array_unref(*slot);
    *slot = gpus;
    return TRUE;
}

/* Applies the flags of @args (and the topology flags) to @s. */
static gboolean
apply_flags(RsScenario *s, const RsScenarioArgs *args, const char *dtype, GError **error)
{
    if (args->model != NULL) {
        g_free(s->model);
        s->model = g_strdup(args->model);
        rs_scenario_set_where(&s->model_where, "--model");
    }
    if (dtype != NULL) {
        if (!rs_dtype_parse(dtype, &s->dtype, error)) {
            g_prefix_error(error, "--dtype: ");
            return FALSE;
        }
        s->has_dtype = TRUE;
    }
    if (args->mtp) {
        s->include_mtp = TRUE;
        rs_scenario_set_where(&s->mtp_where, "--mtp");
    }
    if (args->stored)
        s->stored = TRUE;
    if (args->infer_dtype != NULL) {
        rs_scenario_set_where(&s->infer_dtype_where, "--infer-dtype");
        if (!rs_dtype_parse(args->infer_dtype, &s->infer_dtype, error)) {
            g_prefix_error(error, "--infer-dtype: ");
            return FALSE;
        }
        s->has_infer_dtype = TRUE;
    }
    if (args->topology != NULL) {
        g_free(s->topology);
        s->topology = g_strdup(args->topology);
        rs_scenario_set_where(&s->topology_where, "--topology");
        /* The scenario's node count sized its own topology: a topology given here keeps the
         * node count of its file unless --nodes says otherwise. */
        s->n_nodes = 0;
    }
    RsTopologyOverrides ov;
    gint64 scale = 0;
    if (!rs_topology_args_get(&ov, error))
        return FALSE;
    if (ov.n_nodes != 0)
        s->n_nodes = ov.n_nodes;
    ov.n_nodes = 0;
    s->topology_overrides = ov;
    if (args->train)
        rs_scenario_set_where(&s->train_where, "--train");
    if (args->infer)
        rs_scenario_set_where(&s->infer_where, "--infer");
    if (args->train_gpus)
        rs_scenario_set_where(&s->train_gpus_where, "--train-gpus");
    if (args->infer_gpus)
        rs_scenario_set_where(&s->infer_gpus_where, "--infer-gpus");
    if ((args->train && !replace_convention(&s->train, args->train, "--train", error)) ||
        (args->infer && !replace_convention(&s->infer, args->infer, "--infer", error)) ||
        (args->train_gpus &&
         !replace_gpus(&s->train_gpus, args->train_gpus, "--train-gpus", error)) ||
        (args->infer_gpus &&
         !replace_gpus(&s->infer_gpus, args->infer_gpus, "--infer-gpus", error)) ||
        !rs_cli_parse_int("--scale", args->scale, 1, G_MAXINT32, &scale, error) ||
        !rs_scenario_apply_variant(s, (gint)scale, args->layers, error))
        return FALSE;
    gint64 per_domain = 0;
    if (!rs_cli_parse_int("--gpus-per-domain", args->gpus_per_domain, 1, 1 << 20, &per_domain,
                          error))
        return FALSE;
    if (per_domain > 0) {
        s->gpus_per_domain = (guint)per_domain;
        rs_scenario_set_where(&s->gpus_per_domain_where, "--gpus-per-domain");
    }
    if (args->use_idle_gpus)
        s->use_idle_gpus = TRUE;
    return TRUE;
}

/* Notes a checkpoint (.safetensors, or an index and every shard it names) and the
 * config.json beside it as inputs. */
static void
note_checkpoint_inputs(const char *model)
{
    rs_cli_note_input(model);
    if (model != NULL && !g_str_has_suffix(model, ".yaml") && !g_str_has_suffix(model, ".yml")) {
        g_autofree char *dir = g_path_get_dirname(model);
        g_autofree char *config = g_build_filename(dir, "config.json", NULL);
        if (g_file_test(config, G_FILE_TEST_IS_REGULAR))
            rs_cli_note_input(config);
    }
    /* Every shard of a sharded checkpoint is read too. */
    if (model != NULL && g_str_has_suffix(model, ".json")) {
        g_auto(GStrv) shards = rs_safetensors_index_list_shards(model, NULL);
        for (guint i = 0; shards != NULL && shards[i] != NULL; i++)
            rs_cli_note_input(shards[i]);
    }
}

/* Notes the files the scenario reads (its model; a model YAML's `safetensors:` checkpoint;
 * a checkpoint's shards and the config.json beside it; its topology) as the command's
 * inputs, so that no output replaces them. A name not found is left to the build to
 * report. */
static void
note_scenario_inputs(const RsScenario *s)
{
    g_autofree char *model = s->model ? rs_data_find("models", s->model, NULL) : NULL;
    g_autofree char *topology = s->topology ? rs_data_find("topologies", s->topology, NULL) : NULL;
    rs_cli_note_input(topology);
    if (model == NULL || !(g_str_has_suffix(model, ".yaml") || g_str_has_suffix(model, ".yml"))) {
        note_checkpoint_inputs(model);
        return;
    }
    rs_cli_note_input(model);
    g_autoptr(RsYaml) yaml = rs_yaml_load_file(model, NULL);
    yaml_node_t *root = yaml ? rs_yaml_get_root_mapping(yaml, NULL) : NULL;
    const char *checkpoint =
        root ? rs_yaml_scalar_value(rs_yaml_lookup(yaml, root, "safetensors")) : NULL;
    if (checkpoint != NULL) {
        g_autofree char *dir = g_path_get_dirname(model);
        g_autofree char *path = g_path_is_absolute(checkpoint)
                                    ? g_strdup(checkpoint)
                                    : g_build_filename(dir, checkpoint, NULL);
        note_checkpoint_inputs(path);
    }
}

RsScenario *
rs_scenario_args_load(const RsScenarioArgs *args, const char *default_name, const char *dtype,
                      GError **error)
{
    g_autofree char *path =
        rs_data_find("scenarios", args->scenario ? args->scenario : default_name, error);
    if (path == NULL)
        return NULL;
    rs_cli_note_input(path);
    g_autoptr(RsScenario) s = rs_scenario_load_file(path, error);
    if (s == NULL || !apply_flags(s, args, dtype, error))
        return NULL;
    note_scenario_inputs(s);
    return g_steal_pointer(&s);
}

/* GPUs first .. first + the convention's ranks - 1; NULL (an error naming @flag) past
 * RS_MAX_RANKS GPUs, checked before the list is allocated. */
static GArray *
default_gpus(const RsConvention *conv, guint32 first, const char *flag, GError **error)
{
    guint64 world = rs_convention_get_world_size(conv);
    if (world > RS_MAX_RANKS || first + world > RS_MAX_RANKS) {
        g_autofree char *desc = rs_convention_format(conv);
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s: %s: %" G_GUINT64_FORMAT " ranks from GPU %u, above the limit of %u GPUs",
                    flag, desc, world, first, RS_MAX_RANKS);
        return NULL;
    }
    GArray *gpus = g_array_sized_new(FALSE, FALSE, sizeof(guint32), (guint)world);
    for (guint64 i = 0; i < world; i++) {
        guint32 g = first + (guint32)i;
        g_array_append_val(gpus, g);
    }
    return gpus;
}

RsScenario *
rs_scenario_args_load_model(const RsScenarioArgs *args, const char *default_topology,
                            const char *dtype, GError **error)
{
    if (args->scenario != NULL)
        return rs_scenario_args_load(args, NULL, dtype, error);
    if (args->model == NULL || args->train == NULL || args->infer == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--model needs --train and --infer (or give --scenario)");
        return NULL;
    }
    g_autoptr(RsScenario) s = rs_scenario_new();
    s->name = g_strdup("command line");
    s->topology = g_strdup(default_topology);
    if (!apply_flags(s, args, dtype, error))
        return NULL;
    if (s->train_gpus == NULL &&
        (s->train_gpus = default_gpus(s->train, 0, "--train", error)) == NULL)
        return NULL;
    if (s->infer_gpus == NULL) {
        guint32 next = 0;
        for (guint i = 0; i < s->train_gpus->len; i++)
            next = MAX(next, g_array_index(s->train_gpus, guint32, i) + 1);
        if ((s->infer_gpus = default_gpus(s->infer, next, "--infer", error)) == NULL)
            return NULL;
    }
    note_scenario_inputs(s);
    return g_steal_pointer(&s);
}

char *
rs_scenario_args_format_overrides(const RsScenarioArgs *args)
{
    /* The topology's own figures, when given (the scenario line and a report's title named
     * neither, so a run on --nodes 2 read as the scenario's own topology). A bad value
     * failed the command before anything was printed. */
    RsTopologyOverrides ov;
    if (!rs_topology_args_get(&ov, NULL))
        memset(&ov, 0, sizeof ov);
    const struct {
        const char *flag;
        gboolean given;
    } parts[] = {
        {"--model", args->model != NULL},
        {"--stored", args->stored},
        {"--mtp", args->mtp},
        {"--infer-dtype", args->infer_dtype != NULL},
        {"--topology", args->topology != NULL},
        {"--nodes", ov.n_nodes > 0},
        {"--nic-bw", ov.nic_bw_bytes_per_s > 0},
        {"--oversubscription", ov.oversubscription > 0},
        {"--pxn", ov.pxn == RS_TOPOLOGY_PXN_ON},
        {"--no-pxn", ov.pxn == RS_TOPOLOGY_PXN_OFF},
        {"--train", args->train != NULL},
        {"--train-gpus", args->train_gpus != NULL},
        {"--infer", args->infer != NULL},
        {"--infer-gpus", args->infer_gpus != NULL},
        {"--scale", args->scale != NULL},
        {"--layers", args->layers != NULL},
        {"--gpus-per-domain", args->gpus_per_domain != NULL},
        {"--use-idle-gpus", args->use_idle_gpus},
    };
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(parts); i++)
        if (parts[i].given)
            g_string_append_printf(out, "%s%s", out->len ? ", " : "", parts[i].flag);
    if (out->len == 0) {
        g_string_free(out, TRUE);
        return NULL;
    }
    return g_string_free(out, FALSE);
}

gboolean
rs_scenario_args_get_memory_options(const RsScenarioArgs *args, guint64 staging_bytes,
                                    RsMemoryOptions *out, GError **error)
{
    memset(out, 0, sizeof *out);
    out->staging_bytes = staging_bytes;
    const struct {
        const char *flag;
        const char *text;
        RsMemorySide side;
    } flags[] = {
        {"--train-memory-reserve", args->train_memory_reserve, RS_MEMORY_TRAIN},
        {"--infer-memory-reserve", args->infer_memory_reserve, RS_MEMORY_INFER},
    };
    for (guint i = 0; i < G_N_ELEMENTS(flags); i++) {
        if (flags[i].text == NULL)
            continue;
        g_autoptr(GError) local = NULL;
        if (strcmp(flags[i].text, "0") != 0 &&
            !rs_units_parse_size(flags[i].text, &out->reserve_bytes[flags[i].side], &local)) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: %s", flags[i].flag,
                        local->message);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
rs_scenario_args_check_no_memory(const RsScenarioArgs *args, GError **error)
{
    const char *flag = args->infer_memory_reserve   ? "--infer-memory-reserve"
                       : args->train_memory_reserve ? "--train-memory-reserve"
                                                    : NULL;
    if (flag == NULL)
        return TRUE;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s applies to simulate, sweep and report (the memory check), not here", flag);
    return FALSE;
}

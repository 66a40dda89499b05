/* scenario.c — loading a scenario file and resolving it into a refit. */
#include "layout/scenario.h"

#include "base/data.h"
#include "base/yaml-reader.h"
#include "models/model-load.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-scenario-error-quark, rs_scenario_error)
/* clang-format on */

RsScenario *
rs_scenario_new(void)
{
    return g_new0(RsScenario, 1);
}

void
rs_scenario_free(RsScenario *scenario)
{
    if (scenario == NULL)
        return;
    g_free(scenario->path);
    g_free(scenario->name);
    g_free(scenario->model);
    g_free(scenario->topology);
    g_free(scenario->model_where);
    g_free(scenario->topology_where);
    g_free(scenario->nodes_where);
    g_free(scenario->train_where);
    g_free(scenario->infer_where);
    g_free(scenario->train_gpus_where);
    g_free(scenario->infer_gpus_where);
    g_free(scenario->layers_where);
    g_free(scenario->mtp_where);
    g_free(scenario->gpus_per_domain_where);
    g_free(scenario->infer_dtype_where);
    rs_convention_free(scenario->train);
    rs_convention_free(scenario->infer);
    if (scenario->train_gpus)
        g_array_unref(scenario->train_gpus);
    if (scenario->infer_gpus)
        g_array_unref(scenario->infer_gpus);
    g_free(scenario);
}

void
rs_scenario_set_where(char **where, const char *text)
{
    g_free(*where);
    *where = g_strdup(text);
}

/* Sets *@where to "path:line:col" of @node (nothing when @node is NULL), followed by
 * ": @key" when @key is given: for messages that do not name the field themselves. */
static void
set_where_node(char **where, const char *path, const yaml_node_t *node, const char *key)
{
    if (node == NULL)
        return;
    g_free(*where);
    *where = g_strdup_printf("%s:%zu:%zu%s%s", path, node->start_mark.line + 1,
                             node->start_mark.column + 1, key ? ": " : "", key ? key : "");
}

/* Reads a train/infer section: convention, gpus and integer parameters. */
static gboolean
read_side(RsYaml *yaml, yaml_node_t *root, const char *section, RsConvention **conv_out,
          GArray **gpus_out, GError **error)
{
    yaml_node_t *map = rs_yaml_lookup(yaml, root, section);
    if (map == NULL)
        return TRUE;
    if (map->type != YAML_MAPPING_NODE) {
        rs_yaml_set_error(yaml, map, NULL, section, error, RS_YAML_ERROR_TYPE,
                          "expected a mapping with convention, gpus and parallel sizes");
        return FALSE;
    }
    /* A key given twice is refused, as at the top level. */
    if (!rs_yaml_check_unique_keys(yaml, map, section, error))
        return FALSE;
    const char *name = NULL, *gpus = NULL;
    if (!rs_yaml_read_string(yaml, map, section, "convention", TRUE, &name, error) ||
        !rs_yaml_read_string(yaml, map, section, "gpus", FALSE, &gpus, error))
        return FALSE;
    g_autoptr(GError) local = NULL;
    g_autoptr(RsConvention) conv = rs_convention_new(name, &local);
    if (conv == NULL) {
        rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, map, "convention"), section, "convention",
                          error, RS_YAML_ERROR_VALUE, "%s", local->message);
        return FALSE;
    }
    for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
         pair < map->data.mapping.pairs.top; pair++) {
        const char *key = rs_yaml_scalar_value(rs_yaml_node_at(yaml, pair->key));
        if (key == NULL || strcmp(key, "convention") == 0 || strcmp(key, "gpus") == 0)
            continue;
        if (!rs_convention_has_param(conv, key)) {
            rs_convention_set_text(conv, key, "1", &local);
            rs_yaml_set_error(yaml, rs_yaml_node_at(yaml, pair->key), section, key, error,
                              RS_YAML_ERROR_UNKNOWN_KEY, "%s", local->message);
            return FALSE;
        }
        /* Integers and switches are scalars; a list is a sequence or "a,b,c". */
        yaml_node_t *value = rs_yaml_node_at(yaml, pair->value);
        g_autoptr(GString) text = g_string_new(NULL);
        if (value->type == YAML_SEQUENCE_NODE && !rs_convention_param_is_list(conv, key)) {
            rs_yaml_set_error(yaml, value, section, key, error, RS_YAML_ERROR_TYPE,
                              "expected a single value, not a list");
            return FALSE;
        }
        if (value->type == YAML_SEQUENCE_NODE) {
            for (yaml_node_item_t *item = value->data.sequence.items.start;
                 item < value->data.sequence.items.top; item++) {
                const char *v = rs_yaml_scalar_value(rs_yaml_node_at(yaml, *item));
                g_string_append_printf(text, "%s%s", text->len ? "," : "", v ? v : "?");
            }
        } else if (rs_yaml_scalar_value(value) != NULL) {
            /* (A list may be the string "a,b,c"; a size or a switch is plain.) */
            if (!rs_convention_param_is_list(conv, key) &&
                !rs_yaml_check_plain(yaml, value, section, key,
                                     rs_convention_param_is_switch(conv, key) ? "true or false"
                                                                              : "an integer",
                                     error))
                return FALSE;
            g_string_append(text, rs_yaml_scalar_value(value));
        }
        if (!rs_convention_set_text(conv, key, text->str, &local)) {
            rs_yaml_set_error(yaml, value, section, key, error, RS_YAML_ERROR_VALUE, "%s",
                              local->message);
            return FALSE;
        }
        /* A layout error that one parameter causes names its line (resolve_side()). */
        g_autofree char *field = g_strdup_printf("%s.%s", section, key);
        g_autofree char *where = NULL;
        set_where_node(&where, rs_yaml_get_path(yaml), value, field);
        rs_convention_set_where(conv, key, where);
    }
    if (gpus != NULL) {
        GArray *list = NULL;
        if (!rs_ranks_parse(gpus, &list, &local)) {
            rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, map, "gpus"), section, "gpus", error,
                              RS_YAML_ERROR_VALUE, "%s", local->message);
            return FALSE;
        }
        *gpus_out = list;
    }
    *conv_out = g_steal_pointer(&conv);
    return TRUE;
}

RsScenario *
rs_scenario_load_file(const char *path, GError **error)
{
    static const char *const keys[] = {"name",   "description", "model",  "dtype",
                                       "mtp",    "stored",      "scale",  "layers",
                                       "topology", "nodes",     "train",  "infer",
                                       "infer_dtype", "gpus_per_domain", "use_idle_gpus", NULL};
    g_autoptr(RsYaml) yaml = rs_yaml_load_file(path, error);
    if (yaml == NULL)
        return NULL;
    yaml_node_t *root = rs_yaml_get_root_mapping(yaml, error);
    if (root == NULL || !rs_yaml_check_keys(yaml, root, NULL, keys, error))
        return NULL;
    g_autoptr(RsScenario) s = rs_scenario_new();
    s->path = g_strdup(path);
    const char *name = NULL, *model = NULL, *dtype = NULL, *topology = NULL, *infer_dtype = NULL;
    const char *layers = NULL;
    gint64 nodes = 0, scale = 0, gpus_per_domain = 0;
    const char *description = NULL; /* read to check it is text: it is not kept */
    if (!rs_yaml_read_string(yaml, root, NULL, "name", FALSE, &name, error) ||
        !rs_yaml_read_string(yaml, root, NULL, "description", FALSE, &description, error) ||
        !rs_yaml_read_string(yaml, root, NULL, "model", TRUE, &model, error) ||
        !rs_yaml_read_string(yaml, root, NULL, "dtype", FALSE, &dtype, error) ||
        !rs_yaml_read_string(yaml, root, NULL, "infer_dtype", FALSE, &infer_dtype, error) ||
        !rs_yaml_read_bool(yaml, root, NULL, "mtp", FALSE, &s->include_mtp, error) ||
        !rs_yaml_read_bool(yaml, root, NULL, "stored", FALSE, &s->stored, error) ||
        !rs_yaml_read_string(yaml, root, NULL, "topology", TRUE, &topology, error) ||
        !rs_yaml_read_int64(yaml, root, NULL, "nodes", FALSE, 1, 1 << 20, &nodes, error) ||
        !rs_yaml_read_int64(yaml, root, NULL, "scale", FALSE, 1, 1 << 20, &scale, error) ||
        !rs_yaml_read_string(yaml, root, NULL, "layers", FALSE, &layers, error) ||
        !rs_yaml_read_int64(yaml, root, NULL, "gpus_per_domain", FALSE, 1, 1 << 20,
                            &gpus_per_domain, error) ||
        !rs_yaml_read_bool(yaml, root, NULL, "use_idle_gpus", FALSE, &s->use_idle_gpus, error))
        return NULL;
    s->scale = (guint)scale;
    s->gpus_per_domain = (guint)gpus_per_domain;
    if (layers != NULL) {
        g_autoptr(GError) local = NULL;
        RsModelOptions range = {0};
        if (!rs_model_options_parse_layers(&range, layers, &local)) {
            rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, root, "layers"), NULL, "layers", error,
                              RS_YAML_ERROR_VALUE, "%s", local->message);
            return NULL;
        }
        s->has_layer_range = TRUE;
        s->first_layer = range.first_layer;
        s->last_layer = range.last_layer;
    }
    s->name = g_strdup(name ? name : path);
    /* Paths in the file are relative to its folder (rs_data_resolve_beside()). */
    s->model = model ? rs_data_resolve_beside(model, path) : NULL;
    s->topology = topology ? rs_data_resolve_beside(topology, path) : NULL;
    s->n_nodes = (guint)nodes;
    if (dtype != NULL) {
        g_autoptr(GError) local = NULL;
        if (!rs_dtype_parse(dtype, &s->dtype, &local)) {
            rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, root, "dtype"), NULL, "dtype", error,
                              RS_YAML_ERROR_VALUE, "%s", local->message);
            return NULL;
        }
        s->has_dtype = TRUE;
    }
    if (infer_dtype != NULL) {
        g_autoptr(GError) local = NULL;
        if (!rs_dtype_parse(infer_dtype, &s->infer_dtype, &local)) {
            rs_yaml_set_error(yaml, rs_yaml_lookup(yaml, root, "infer_dtype"), NULL,
                              "infer_dtype", error, RS_YAML_ERROR_VALUE, "%s", local->message);
            return NULL;
        }
        s->has_infer_dtype = TRUE;
    }
    if (!read_side(yaml, root, "train", &s->train, &s->train_gpus, error) ||
        !read_side(yaml, root, "infer", &s->infer, &s->infer_gpus, error))
        return NULL;
    set_where_node(&s->model_where, path, rs_yaml_lookup(yaml, root, "model"), NULL);
    set_where_node(&s->topology_where, path, rs_yaml_lookup(yaml, root, "topology"), NULL);
    set_where_node(&s->nodes_where, path, rs_yaml_lookup(yaml, root, "nodes"), NULL);
    set_where_node(&s->layers_where, path, rs_yaml_lookup(yaml, root, "layers"), NULL);
    set_where_node(&s->infer_dtype_where, path, rs_yaml_lookup(yaml, root, "infer_dtype"),
                   "infer_dtype");
    set_where_node(&s->gpus_per_domain_where, path, rs_yaml_lookup(yaml, root, "gpus_per_domain"),
                   NULL);
    set_where_node(&s->mtp_where, path, rs_yaml_lookup(yaml, root, "mtp"), "mtp");
    yaml_node_t *train = rs_yaml_lookup(yaml, root, "train");
    yaml_node_t *infer = rs_yaml_lookup(yaml, root, "infer");
    set_where_node(&s->train_where, path, train, NULL);
    set_where_node(&s->infer_where, path, infer, NULL);
    if (train != NULL && train->type == YAML_MAPPING_NODE)
        set_where_node(&s->train_gpus_where, path, rs_yaml_lookup(yaml, train, "gpus"), NULL);
    if (infer != NULL && infer->type == YAML_MAPPING_NODE)
        set_where_node(&s->infer_gpus_where, path, rs_yaml_lookup(yaml, infer, "gpus"), NULL);
    return g_steal_pointer(&s);
}

/* The GPUs of @side: at least one, none twice, and each a GPU of @topo (when given). */
static gboolean
check_gpus(const char *side, GArray *gpus, const RsTopology *topo, GError **error)
{
    if (gpus == NULL || gpus->len == 0) {
        g_set_error(error, RS_SCENARIO_ERROR, RS_SCENARIO_ERROR_INVALID,
                    "%s: no GPUs given (set %s.gpus or --%s-gpus)", side, side, side);
        return FALSE;
    }
    g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    guint n_gpus = topo != NULL ? rs_topology_get_n_gpus(topo) : G_MAXUINT;
    for (guint i = 0; i < gpus->len; i++) {
        guint32 g = g_array_index(gpus, guint32, i);
        if (g >= n_gpus) {
            g_set_error(error, RS_SCENARIO_ERROR, RS_SCENARIO_ERROR_INVALID,
                        "%s.gpus: GPU %u is not in topology %s with %u nodes (%u GPUs); use "
                        "--nodes",
                        side, g, rs_topology_get_name(topo), rs_topology_get_n_nodes(topo),
                        n_gpus);
            return FALSE;
        }
        if (!g_hash_table_add(seen, GUINT_TO_POINTER(g + 1))) {
            g_set_error(error, RS_SCENARIO_ERROR, RS_SCENARIO_ERROR_INVALID,
                        "%s.gpus: GPU %u is listed twice", side, g);
            return FALSE;
        }
    }
    return TRUE;
}

/* With gpus_per_domain N, the GPUs the user numbers are the job's: N of each NVLink
 * domain, numbered 0 .. domains × N − 1. One past them must be named as the user wrote it
 * (map_gpus() made GPU 8 of 4 per domain on two 8-GPU domains GPU 16, which
 * check_gpus() then called "not in topology"). */
static gboolean
check_held(const RsScenario *s, const char *side, GArray *gpus, const RsTopology *topo,
           GError **error)
{
    if (s->gpus_per_domain == 0 || topo == NULL || gpus == NULL)
        return TRUE;
    guint n_domains = rs_topology_get_n_nvlink_domains(topo);
    guint64 held = (guint64)n_domains * s->gpus_per_domain;
    for (guint i = 0; i < gpus->len; i++) {
        guint32 g = g_array_index(gpus, guint32, i);
        if (g >= held) {
            g_set_error(error, RS_SCENARIO_ERROR, RS_SCENARIO_ERROR_INVALID,
                        "%s.gpus: GPU %u is beyond the %" G_GUINT64_FORMAT
                        " GPUs the job holds (gpus_per_domain %u of each of the %u NVLink "
                        "domains of %s with %u nodes); use --nodes",
                        side, g, held, s->gpus_per_domain, n_domains, rs_topology_get_name(topo),
                        rs_topology_get_n_nodes(topo));
            return FALSE;
        }
    }
    return TRUE;
}

/* Prefixes @error's message with "@where: " when known. Returns: FALSE. */
static gboolean
prefix_where(GError **error, const char *where)
{
    if (where != NULL)
        g_prefix_error(error, "%s: ", where);
    return FALSE;
}

/* Prefixes @error's message with "@side: " unless @where is the flag that gave the side
 * (--train, --infer), which names it already ("--train: train: ..." read it twice). */
static void
prefix_side(GError **error, const char *side, const char *where)
{
    if (where == NULL || !g_str_has_prefix(where, "--"))
        g_prefix_error(error, "%s: ", side);
}

gboolean
rs_scenario_check_mtp(const RsModel *model, gboolean include_mtp, gboolean has_layer_range,
                      GError **error)
{
    if (!include_mtp || has_layer_range || rs_model_has_mtp(model))
        return TRUE;
    g_set_error(error, RS_SCENARIO_ERROR, RS_SCENARIO_ERROR_INVALID,
                "%s has no multi-token-prediction layers to include", rs_model_get_name(model));
    return FALSE;
}

/* Stage: the model, in the form the scenario asks for (dtype, MTP, storage, scale, layers). */
static RsModel *
load_model(const RsScenario *s, GError **error)
{
    g_autofree char *model_path = rs_data_find("models", s->model, error);
    if (model_path == NULL) {
        prefix_where(error, s->model_where);
        return NULL;
    }
    RsModelOptions mopts = {.include_mtp = s->include_mtp, .has_dtype = s->has_dtype,
                            .dtype = s->dtype, .scale = s->scale,
                            .has_layer_range = s->has_layer_range,
                            .first_layer = s->first_layer, .last_layer = s->last_layer};
    if (s->stored)
        mopts.storage = RS_MODEL_STORAGE_CHECKPOINT;
    RsModel *model = rs_model_load_file(model_path, &mopts, error);
    if (model != NULL && !rs_scenario_check_mtp(model, s->include_mtp, s->has_layer_range, error)) {
        prefix_where(error, s->mtp_where ? s->mtp_where : "mtp");
        g_clear_pointer(&model, rs_model_free);
    }
    /* A layer range the model does not have is the range's fault, not the model file's. */
    if (model == NULL && s->has_layer_range && error != NULL && *error != NULL &&
        g_error_matches(*error, RS_MODEL_ERROR, RS_MODEL_ERROR_LAYER_RANGE)) {
        if (s->layers_where != NULL && g_str_has_prefix(s->layers_where, "--")) {
            /* "--layers 100-200: the model in ... has layers 0-60" */
            g_autofree char *msg = g_strdup_printf("--%s", (*error)->message);
            g_free((*error)->message);
            (*error)->message = g_steal_pointer(&msg);
        } else {
            prefix_where(error, s->layers_where);
        }
    }
    return model;
}

/* Stage: the topology with the scenario's overrides (node count, NIC bandwidth, ...). */
static RsTopology *
load_topology(const RsScenario *s, GError **error)
{
    g_autofree char *topo_path = rs_data_find("topologies", s->topology, error);
    if (topo_path == NULL) {
        prefix_where(error, s->topology_where);
        return NULL;
    }
    RsTopologyOverrides tov = s->topology_overrides;
    if (s->n_nodes != 0)
        tov.n_nodes = s->n_nodes;
    return rs_topology_load_file(topo_path, &tov, error);
}

/* @gpus as GPUs of @topo: with gpus_per_domain N, GPU g is (g / N) × domain size +
 * g mod N. Returns: (transfer full) (nullable): NULL when @gpus is NULL or N exceeds the
 * domain size (@error set then). */
static GArray *
map_gpus(const RsScenario *s, GArray *gpus, const RsTopology *topo, GError **error)
{
    if (gpus == NULL)
        return NULL;
    GArray *out = g_array_copy(gpus);
    if (s->gpus_per_domain == 0 || topo == NULL)
        return out;
    guint size = rs_topology_get_gpus_per_nvlink_domain(topo);
    if (s->gpus_per_domain > size) {
        g_set_error(error, RS_SCENARIO_ERROR, RS_SCENARIO_ERROR_INVALID,
                    "%u is more than the %u GPUs of an NVLink domain of %s",
                    s->gpus_per_domain, size, rs_topology_get_name(topo));
        if (s->gpus_per_domain_where == NULL ||
            !g_str_has_prefix(s->gpus_per_domain_where, "--"))
            g_prefix_error(error, "gpus_per_domain: ");
        prefix_where(error, s->gpus_per_domain_where);
        g_array_unref(out);
        return NULL;
    }
    for (guint i = 0; i < out->len; i++) {
        guint32 *g = &g_array_index(out, guint32, i);
        guint64 mapped = (guint64)(*g / s->gpus_per_domain) * size + *g % s->gpus_per_domain;
        *g = (guint32)MIN(mapped, (guint64)G_MAXUINT32);
    }
    return out;
}

/* Stage: one side's GPUs checked (against @topo when given) and its convention resolved on
 * @model. Errors start with where the side or its GPUs were given. */
static gboolean
resolve_side(const RsScenario *s, RsScenarioSide side, const RsModel *model,
             const RsTopology *topo, RsConventionResult *out, GError **error)
{
    gboolean train = side == RS_SCENARIO_SIDE_TRAIN;
    const char *name = train ? "train" : "infer";
    RsConvention *conv = train ? s->train : s->infer;
    g_autoptr(GError) map_error = NULL;
    g_autoptr(GArray) gpus = map_gpus(s, train ? s->train_gpus : s->infer_gpus, topo, &map_error);
    if (map_error != NULL) {
        g_propagate_error(error, g_steal_pointer(&map_error));
        return FALSE;
    }
    const char *where = train ? s->train_where : s->infer_where;
    const char *gpus_where = train ? s->train_gpus_where : s->infer_gpus_where;
    if (!check_held(s, name, train ? s->train_gpus : s->infer_gpus, topo, error) ||
        !check_gpus(name, gpus, topo, error))
        return prefix_where(error, gpus_where ? gpus_where : where);
    if (!train) /* (a sweep builds one scenario with several dtypes) */
        rs_convention_set_weight_dtype(conv, s->has_infer_dtype ? &s->infer_dtype : NULL);
    if (!rs_convention_resolve_full(conv, model, (const guint32 *)gpus->data, gpus->len, out,
                                    error)) {
        /* The parameter at fault, where the file gave it ("s.yaml:21:7: infer.tp"). */
        const char *key_where = rs_convention_get_where(conv, rs_convention_get_error_key(conv));
        if (key_where != NULL)
            return prefix_where(error, key_where);
        prefix_side(error, name, where);
        return prefix_where(error, where);
    }
    return TRUE;
}

gboolean
rs_scenario_build(RsScenario *s, RsScenarioBuild *out, GError **error)
{
    memset(out, 0, sizeof *out);
    if (s->model == NULL || s->topology == NULL || s->train == NULL || s->infer == NULL) {
        /* Name what is missing, and the file that lacks it. */
        g_autoptr(GString) missing = g_string_new(NULL);
        const struct {
            gboolean absent;
            const char *key;
        } parts[] = {{s->model == NULL, "model"},
                     {s->topology == NULL, "topology"},
                     {s->train == NULL, "train"},
                     {s->infer == NULL, "infer"}};
        for (guint i = 0; i < G_N_ELEMENTS(parts); i++)
            if (parts[i].absent)
                g_string_append_printf(missing, "%s%s", missing->len ? ", " : "", parts[i].key);
        g_set_error(error, RS_SCENARIO_ERROR, RS_SCENARIO_ERROR_INVALID,
                    "%s%sa scenario needs a model, a topology, a training and an inference "
                    "layout; missing: %s (keys of the file, or --model, --topology, --train, "
                    "--infer)",
                    s->path ? s->path : "", s->path ? ": " : "", missing->str);
        return FALSE;
    }
    g_autoptr(RsModel) model = load_model(s, error);
    if (model == NULL)
        return FALSE;
    g_autoptr(RsTopology) topo = load_topology(s, error);
    if (topo == NULL)
        return FALSE;
    /* Both sides' GPUs are checked before either is resolved, so that a wrong GPU list is
     * reported before a layout error of the other side. */
    g_autoptr(GArray) train_gpus = map_gpus(s, s->train_gpus, topo, error);
    if (s->train_gpus != NULL && train_gpus == NULL)
        return FALSE;
    g_autoptr(GArray) infer_gpus = map_gpus(s, s->infer_gpus, topo, error);
    if (s->infer_gpus != NULL && infer_gpus == NULL)
        return FALSE;
    if (!check_held(s, "train", s->train_gpus, topo, error) ||
        !check_gpus("train", train_gpus, topo, error))
        return prefix_where(error, s->train_gpus_where ? s->train_gpus_where : s->train_where);
    if (!check_held(s, "infer", s->infer_gpus, topo, error) ||
        !check_gpus("infer", infer_gpus, topo, error))
        return prefix_where(error, s->infer_gpus_where ? s->infer_gpus_where : s->infer_where);
    if (!s->use_idle_gpus) {
        /* Only the job's GPUs carry traffic. */
        g_autoptr(GArray) job = g_array_copy(train_gpus);
        g_array_append_vals(job, infer_gpus->data, infer_gpus->len);
        rs_topology_set_job_gpus(topo, (const guint32 *)job->data, job->len);
    } else if (s->gpus_per_domain > 0) {
        /* Idle GPUs lent, but only those the job holds: the first N of each domain (the
         * others belong to no layout and to no job of ours: a rack's spares, another job). */
        guint size = rs_topology_get_gpus_per_nvlink_domain(topo);
        g_autoptr(GArray) job = g_array_new(FALSE, FALSE, sizeof(guint32));
        for (guint32 g = 0; g < rs_topology_get_n_gpus(topo); g++)
            if (g % size < s->gpus_per_domain)
                g_array_append_val(job, g);
        rs_topology_set_job_gpus(topo, (const guint32 *)job->data, job->len);
    }
    RsConventionResult src, dst;
    if (!resolve_side(s, RS_SCENARIO_SIDE_TRAIN, model, topo, &src, error))
        return FALSE;
    if (!resolve_side(s, RS_SCENARIO_SIDE_INFER, model, topo, &dst, error)) {
        rs_convention_result_clear(&src);
        return FALSE;
    }
    RsRefitDtypes dtypes = {s->has_infer_dtype, s->infer_dtype};
    RsRefit *refit = rs_refit_new_from_model_full(model, src.layouts, src.buffers, dst.layouts,
                                                  dst.buffers, &dtypes, error);
    g_autofree char *train_summary = g_steal_pointer(&src.summary);
    g_autofree char *infer_summary = g_steal_pointer(&dst.summary);
    rs_convention_result_clear(&src);
    rs_convention_result_clear(&dst);
    if (refit == NULL) {
        /* A dtype that converts nothing is the dtype's fault: name where it was given. */
        if (error != NULL && *error != NULL &&
            g_error_matches(*error, RS_REFIT_ERROR, RS_REFIT_ERROR_CONVERT))
            prefix_where(error, s->infer_dtype_where);
        return FALSE;
    }
    out->model = g_steal_pointer(&model);
    out->topology = g_steal_pointer(&topo);
    out->refit = refit;
    out->train_summary = g_steal_pointer(&train_summary);
    out->infer_summary = g_steal_pointer(&infer_summary);
    return TRUE;
}

gboolean
rs_scenario_build_side(RsScenario *s, RsScenarioSide side, RsScenarioSideBuild *out,
                       GError **error)
{
    memset(out, 0, sizeof *out);
    RsConvention *conv = side == RS_SCENARIO_SIDE_TRAIN ? s->train : s->infer;
    if (s->model == NULL || conv == NULL) {
        g_set_error(error, RS_SCENARIO_ERROR, RS_SCENARIO_ERROR_INVALID,
                    "one side of a scenario needs a model and that side's layout");
        return FALSE;
    }
    g_autoptr(RsModel) model = load_model(s, error);
    if (model == NULL)
        return FALSE;
    g_autoptr(RsTopology) topo = NULL;
    if (s->topology != NULL && (topo = load_topology(s, error)) == NULL)
        return FALSE;
    /* The inference dtype must convert some tensor, as rs_scenario_build()'s refit
     * requires (a side alone builds no refit). */
    RsRefitDtypes dtypes = {s->has_infer_dtype, s->infer_dtype};
    if (side == RS_SCENARIO_SIDE_INFER && !rs_refit_check_dtypes(model, &dtypes, error))
        return prefix_where(error, s->infer_dtype_where);
    if (!resolve_side(s, side, model, topo, &out->layouts, error))
        return FALSE;
    out->model = g_steal_pointer(&model);
    out->topology = g_steal_pointer(&topo);
    return TRUE;
}

void
rs_scenario_side_build_clear(RsScenarioSideBuild *build)
{
    rs_model_free(build->model);
    rs_topology_free(build->topology);
    rs_convention_result_clear(&build->layouts);
    memset(build, 0, sizeof *build);
}

void
rs_scenario_build_clear(RsScenarioBuild *build)
{
    rs_model_free(build->model);
    rs_topology_free(build->topology);
    rs_refit_free(build->refit);
    g_free(build->train_summary);
    g_free(build->infer_summary);
    memset(build, 0, sizeof *build);
}

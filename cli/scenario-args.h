/* scenario-args.h — the flags that pick and override a scenario (model and its form,
 * topology, both layouts and their GPUs, and the scaled-model variant), shared by
 * `reshard simulate` and `reshard run`. The topology's own figures (--nodes, --nic-bw,
 * --oversubscription, --pxn) come from the topology flags (topology-args.h), which those
 * commands add too. `--dtype` is left to the caller: `reshard run` shares it with its
 * single-tensor group (tensor-args.h). */
#pragma once

#include <glib.h>

#include "analysis/memory.h"
#include "layout/scenario.h"

G_BEGIN_DECLS

typedef struct {
    char *scenario;
    char *model;
    gboolean mtp;
    gboolean stored;
    char *infer_dtype;
    char *topology;
    char *train;
    char *train_gpus;
    char *infer;
    char *infer_gpus;
    char *scale; /* an integer >= 1, as text so that 0 is an error (rs_cli_parse_int) */
    char *layers;
    char *gpus_per_domain; /* an integer >= 1, as text (rs_cli_parse_int) */
    gboolean use_idle_gpus;
    char *infer_memory_reserve; /* sizes with a unit, as text */
    char *train_memory_reserve;
} RsScenarioArgs;

/**
 * rs_scenario_args_make_group:
 * @args: where the parsed values go; must outlive the option context
 *
 * Returns: (transfer full): an option group with --scenario, --model, --mtp, --stored,
 * --infer-dtype, --topology, --train, --train-gpus, --infer, --infer-gpus, --scale,
 * --layers.
 */
GOptionGroup *rs_scenario_args_make_group(RsScenarioArgs *args);

/** rs_scenario_args_is_set: Returns: TRUE when a flag that selects a scenario's work (not
 * --topology or --nodes, which also serve single tensors) was given. */
gboolean rs_scenario_args_is_set(const RsScenarioArgs *args);

/**
 * rs_scenario_apply_variant:
 * @scale: 0 keeps the scenario's; else >= 1
 * @layers: (nullable): "A-B" or "A"; NULL keeps the scenario's
 * @error: G_OPTION_ERROR_BAD_VALUE naming --scale or --layers
 *
 * Sets the scaled-model variant of @scenario (RsModelOptions.scale and layer range), so the
 * simulator and the executor cover the same work. Returns: TRUE on success.
 */
gboolean rs_scenario_apply_variant(RsScenario *scenario, gint scale, const char *layers,
                                   GError **error);

/**
 * rs_scenario_args_load:
 * @default_name: the shipped scenario used when --scenario is not given
 * @dtype: (nullable): a dtype override ("bf16")
 * @error: RS_DATA_ERROR, RS_YAML_ERROR (the file), G_OPTION_ERROR_BAD_VALUE or a parse
 *   error prefixed with the flag
 *
 * Applies the flags of this group and the topology flags (rs_topology_args_get).
 *
 * Returns: (transfer full): the scenario with every flag applied, or NULL.
 */
RsScenario *rs_scenario_args_load(const RsScenarioArgs *args, const char *default_name,
                                  const char *dtype, GError **error);

/**
 * rs_scenario_args_load_model:
 * @default_topology: the topology when neither the scenario nor --topology names one
 * @dtype: (nullable): a dtype override ("bf16")
 * @error: as rs_scenario_args_load(); G_OPTION_ERROR_BAD_VALUE when there is no --scenario
 *   and one of --model, --train, --infer is missing
 *
 * With --scenario, rs_scenario_args_load(). Without, a scenario made of the flags alone:
 * --model, --train and --infer; the training GPUs --train-gpus or 0..N-1 (N the
 * convention's ranks, unset dp taken as 1), the inference GPUs --infer-gpus or right after
 * the training GPUs; the topology --topology or @default_topology. `reshard plan` builds its
 * refit this way, through rs_scenario_build().
 *
 * Returns: (transfer full): the scenario, or NULL.
 */
RsScenario *rs_scenario_args_load_model(const RsScenarioArgs *args, const char *default_topology,
                                        const char *dtype, GError **error);

/**
 * rs_scenario_args_format_overrides:
 * Returns: (transfer full) (nullable): the flags of this group and the topology flags
 * (topology-args.h: --nodes, --nic-bw, --oversubscription, --pxn, --no-pxn) that replace a
 * part of the scenario ("--model, --nodes, --train, --train-gpus"), or NULL when none
 * does; for headers that name the scenario.
 */
char *rs_scenario_args_format_overrides(const RsScenarioArgs *args);

/**
 * rs_scenario_args_get_memory_options:
 * @staging_bytes: the planner's staging per rank per round, bytes
 * @out: (out caller-allocates): the staging and the reserves of --train-memory-reserve and
 *   --infer-memory-reserve (0 when not given)
 * @error: G_OPTION_ERROR_BAD_VALUE naming the flag
 * Returns: TRUE on success.
 */
gboolean rs_scenario_args_get_memory_options(const RsScenarioArgs *args, guint64 staging_bytes,
                                             RsMemoryOptions *out, GError **error);

/**
 * rs_scenario_args_check_no_memory:
 * @error: G_OPTION_ERROR_BAD_VALUE naming a memory reserve flag given to a command that
 *   does not check memory (plan, run), so that it is not silently ignored
 * Returns: TRUE when neither reserve was given.
 */
gboolean rs_scenario_args_check_no_memory(const RsScenarioArgs *args, GError **error);

G_END_DECLS

/* scenario.h — a complete, reproducible refit case: model, dtype, topology and node count,
 * the training layout and its GPUs, the inference layout and its GPUs.
 *
 * A scenario file (scenarios/NAME.yaml):
 *   name: deepseek-v3-h100
 *   model: deepseek-v3          # shipped name or path
 *   dtype: bf16                 # optional: override the model's dtype
 *   infer_dtype: fp8-e4m3       # optional: the inference side's dtype (converted at the
 *                               # source; FP8 and MXFP4 add block scales, see refit.h)
 *   mtp: false                  # optional: include MTP layers
 *   stored: false               # optional: move the weights as the checkpoint stores them
 *   topology: dgx-h100          # shipped name or path
 *   nodes: 64                   # optional: override the topology's node count
 *   scale: 16                   # optional: divide every width by 16 (RsModelOptions.scale)
 *   layers: 3-5                 # optional: only decoder layers 3 to 5
 *   train: {convention: megatron, gpus: 0-255, tp: 1, pp: 16, ep: 16, dp: 16}
 *   infer: {convention: vllm, gpus: 256-511, tp: 32, dp: 8}
 *   gpus_per_domain: 64         # optional: the job holds the first 64 GPUs of each NVLink
 *                               # domain; GPU lists count those only (gpus: 0-127 is GPUs
 *                               # 0-63 and 72-135 on NVL72 racks)
 *   use_idle_gpus: false        # optional: GPUs in neither layout may relay and carry PXN
 *                               # traffic (default: they carry none); with
 *                               # gpus_per_domain, only the job's N per domain
 * Convention parameters take integers, switches (ep: true) and lists (pp-layers: [15, 16]).
 * Every field can be overridden after loading (the command-line flags do).
 */
#pragma once

#include <glib.h>

#include "layout/convention.h"
#include "models/model.h"
#include "layout/refit.h"
#include "topologies/topology.h"

G_BEGIN_DECLS

#define RS_SCENARIO_ERROR (rs_scenario_error_quark())
GQuark rs_scenario_error_quark(void);

typedef enum {
    RS_SCENARIO_ERROR_INVALID, /* GPUs outside the topology or listed twice, a part missing */
} RsScenarioError;

typedef struct {
    char *path;  /* file it was loaded from, or NULL */
    char *name;
    char *model; /* shipped name or path */
    gboolean has_dtype;
    RsDtype dtype;
    gboolean include_mtp;
    gboolean stored; /* generate the model as stored (RS_MODEL_STORAGE_CHECKPOINT) */
    guint scale;                /* 0 or 1: full size; else the model's widths divided by it */
    gboolean has_layer_range;   /* only decoder layers first_layer..last_layer */
    gint first_layer, last_layer;
    char *topology; /* shipped name or path */
    guint n_nodes;  /* 0 keeps the topology's */
    /* NIC bandwidth, oversubscription, PXN (zero keeps the file's); n_nodes above wins over
     * topology_overrides.n_nodes. */
    RsTopologyOverrides topology_overrides;
    RsConvention *train;
    GArray *train_gpus; /* guint32 */
    RsConvention *infer;
    GArray *infer_gpus; /* guint32 */
    gboolean has_infer_dtype;
    RsDtype infer_dtype; /* the inference side's dtype for quantisable weights */
    guint gpus_per_domain;  /* 0: every GPU of a domain; else the job's first N of each, and
                             * the GPU lists count those only */
    gboolean use_idle_gpus; /* GPUs in neither layout may carry traffic */
    /* Where each part was given, for errors found when the scenario is built: "path:line:col"
     * of its field in the file, or the flag that overrode it ("--train"); NULL: unknown. */
    char *model_where, *topology_where, *nodes_where;
    char *train_where, *infer_where, *train_gpus_where, *infer_gpus_where;
    char *layers_where, *gpus_per_domain_where, *infer_dtype_where;
    char *mtp_where; /* "--mtp", or "s.yaml:4:6: mtp" */
} RsScenario;

/* Sets *@where (one of the RsScenario *_where fields) to a copy of @text. */
void rs_scenario_set_where(char **where, const char *text);

/** rs_scenario_new: Returns: (transfer full): an empty scenario to fill in. */
RsScenario *rs_scenario_new(void);

/**
 * rs_scenario_load_file:
 * @error: RS_YAML_ERROR naming path:line:col and the field (unknown key, bad GPU list,
 *   bad parallel size, unknown dtype or convention)
 *
 * Returns: (transfer full): the scenario, or NULL.
 */
RsScenario *rs_scenario_load_file(const char *path, GError **error);

void rs_scenario_free(RsScenario *scenario);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsScenario, rs_scenario_free)

/* Everything a scenario resolves to. */
typedef struct {
    RsModel *model;
    RsTopology *topology;
    RsRefit *refit;
    char *train_summary; /* one line per stage / replica */
    char *infer_summary;
} RsScenarioBuild;

/**
 * rs_scenario_build:
 * @scenario: a complete scenario (conventions resolved in place: derived sizes filled in)
 * @out: (out caller-allocates): the loaded model, topology and refit; clear with
 *   rs_scenario_build_clear()
 * Errors about a part given in a file or by a flag start with where it was given (the
 * part's *_where field): "s.yaml:12:10: infer: vllm tp=3: tp = 3 does not divide ...".
 * @error: RS_DATA_ERROR (unknown model or topology), RS_YAML_ERROR / RS_MODEL_ERROR /
 *   RS_SAFETENSORS_ERROR (bad files; the model may be a shipped name, a model YAML, a
 *   config.json, a .safetensors file or a .safetensors.index.json), RS_CONVENTION_ERROR (sizes that
 * do not fit the GPUs or the model), RS_SCENARIO_ERROR_INVALID (a GPU outside the topology, twice
 * in a list, or a part missing; gpus_per_domain above the topology's domain size; mtp on a model
 * without MTP layers, rs_scenario_check_mtp())
 *
 * With gpus_per_domain N, GPU g of a list is GPU (g / N) × domain size + g mod N of the
 * topology. Unless use_idle_gpus, the topology's job is set to both sides' GPUs
 * (rs_topology_set_job_gpus): GPUs in neither layout carry no traffic. With use_idle_gpus
 * and gpus_per_domain N, the job is the first N GPUs of every domain: idle GPUs among them
 * are lent, the others never.
 *
 * Returns: TRUE on success; on failure @out holds nothing.
 */
gboolean rs_scenario_build(RsScenario *scenario, RsScenarioBuild *out, GError **error);

/**
 * rs_scenario_check_mtp:
 * @model: the model as loaded with @include_mtp
 * @has_layer_range: a layer range was asked (it may leave the MTP layers out on purpose)
 * @error: RS_SCENARIO_ERROR_INVALID ("Llama-3.1-8B has no multi-token-prediction layers
 *   to include"; callers prefix where MTP was asked: "--mtp: ")
 *
 * MTP layers asked of a model that has none (the model library includes them only where
 * the config has some) would be a silent no-op: the user is told instead.
 *
 * Returns: FALSE with @error when MTP was asked, no layer range given, and the model has
 * no MTP layer.
 */
gboolean rs_scenario_check_mtp(const RsModel *model, gboolean include_mtp, gboolean has_layer_range,
                               GError **error);

void rs_scenario_build_clear(RsScenarioBuild *build);

typedef enum {
    RS_SCENARIO_SIDE_TRAIN,
    RS_SCENARIO_SIDE_INFER,
} RsScenarioSide;

/* One side of a scenario resolved: what `reshard layout` shows. */
typedef struct {
    RsModel *model;
    RsTopology *topology;       /* NULL when the scenario names none */
    RsConventionResult layouts; /* the side's layouts, fused buffer names and summary */
} RsScenarioSideBuild;

/**
 * rs_scenario_build_side:
 * @scenario: a scenario with a model and the convention of @side (and its GPUs, which may
 *   be any ranks when the scenario names no topology); the other side may be missing.
 *   The convention is resolved in place (derived sizes filled in).
 * @side: which side to resolve
 * @out: (out caller-allocates): the model (in the scenario's form: dtype, MTP, storage,
 *   scale, layers), the topology when the scenario names one, and the side's layouts;
 *   clear with rs_scenario_side_build_clear()
 * @error: as rs_scenario_build(), from the same code: the model is loaded, the side's
 *   GPUs checked (against the topology when given) and resolved exactly as
 *   rs_scenario_build() does for that side; for the inference side an inference dtype
 *   that converts none of the model's tensors is refused as the refit refuses it
 *   (rs_refit_check_dtypes(), prefixed with where the dtype was given)
 *
 * Returns: TRUE on success; on failure @out holds nothing.
 */
gboolean rs_scenario_build_side(RsScenario *scenario, RsScenarioSide side,
                                RsScenarioSideBuild *out, GError **error);

void rs_scenario_side_build_clear(RsScenarioSideBuild *build);

G_END_DECLS

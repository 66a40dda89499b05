/* model-args.h — the model-mode helpers shared by `reshard layout` and `reshard plan`: find a
 * model tensor or a fused buffer by name. The model and its layouts come from
 * rs_scenario_build() or rs_scenario_build_side() (layout/scenario.h). */
#pragma once

#include <glib.h>

#include "layout/convention.h"
#include "models/model.h"

G_BEGIN_DECLS

/**
 * rs_cli_print_model_warnings:
 * @cmd: the command's name, for the message prefix
 * @model: a loaded model
 *
 * Prints the model's load warnings (defaults taken for keys its config does not state) on
 * stderr, "reshard CMD: warning: …", one a line; nothing on a secondary rank (rs_cli_warn()).
 */
void rs_cli_print_model_warnings(const char *cmd, const RsModel *model);

/**
 * rs_cli_find_tensors:
 * @name: a model tensor name or a fused buffer name (--tensor), or a checkpoint's name of
 *   one routed expert's weight (DeepSeek-V3, Qwen3, Kimi: "….experts.5.down_proj.weight"),
 *   which names expert 5 of the model's stacked tensor "….experts.down_proj.weight"
 *   (dim 0 the expert, models/model.h)
 * @buffers: (element-type utf8): each tensor's fused buffer name or NULL
 * @expert_out: (out) (optional): the expert @name picks (an index along dim 0 of the one
 *   tensor returned), or -1 when it names a whole tensor or buffer
 * @error: G_OPTION_ERROR_BAD_VALUE "--tensor: no tensor or fused buffer named …" (with
 *   similar names), or naming the expert count when the expert is past it
 *
 * Returns: (transfer full) (element-type guint): the indices of the tensor, or of every
 * tensor in that buffer, in model order; NULL on error.
 */
GArray *rs_cli_find_tensors(const RsModel *model, GPtrArray *buffers, const char *name,
                            gint64 *expert_out, GError **error);

G_END_DECLS

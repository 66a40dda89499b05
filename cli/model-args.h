/* model-args.h — the model-mode flags shared by `reshard layout` and `reshard plan`: a
 * model, a convention with its GPUs, resolved to layouts and fused buffer names. */
#pragma once

#include <glib.h>

#include "layout/convention.h"
#include "models/model.h"

G_BEGIN_DECLS

/**
 * rs_cli_load_model:
 * @name: a shipped model name or a path (--model)
 * @include_mtp: generate the multi-token-prediction layers
 * @error: RS_DATA_ERROR, RS_YAML_ERROR or RS_MODEL_ERROR, prefixed with "--model: "
 *
 * Returns: (transfer full): the model, or NULL.
 */
RsModel *rs_cli_load_model(const char *name, gboolean include_mtp, GError **error);

/* Prints the model's load warnings (defaults taken for keys its config does not state) on
 * stderr, "reshard CMD: warning: …", one a line. */
void rs_cli_print_model_warnings(const char *cmd, const RsModel *model);

/**
 * rs_cli_resolve_side:
 * @flag: "--train", "--infer", … (used in messages)
 * @spec: the convention spec given with @flag
 * @gpus_flag: the flag that gives the GPUs (for messages)
 * @gpus_text: (nullable): the GPU list; NULL: @first_gpu onwards, as many as the
 *   convention's sizes imply (unset dp taken as 1)
 * @first_gpu: the first GPU when @gpus_text is NULL
 * @conv_out: (out) (transfer full): the convention, sizes filled in
 * @gpus_out: (out) (transfer full): the GPUs (guint32)
 * @out: (out caller-allocates): layouts, buffers and summary
 * @error: the convention's errors, prefixed with "FLAG: "; a bad GPU list prefixed with
 *   "GPUS_FLAG: "
 *
 * Returns: TRUE on success.
 */
gboolean rs_cli_resolve_side(const char *flag, const char *spec, const char *gpus_flag,
                             const char *gpus_text, guint32 first_gpu, const RsModel *model,
                             RsConvention **conv_out, GArray **gpus_out, RsConventionResult *out,
                             GError **error);

/**
 * rs_cli_find_tensors:
 * @name: a model tensor name or a fused buffer name (--tensor)
 * @buffers: (element-type utf8): each tensor's fused buffer name or NULL
 * @error: G_OPTION_ERROR_BAD_VALUE "--tensor: no tensor or fused buffer named …"
 *
 * Returns: (transfer full) (element-type guint): the indices of the tensor, or of every
 * tensor in that buffer, in model order; NULL on error.
 */
GArray *rs_cli_find_tensors(const RsModel *model, GPtrArray *buffers, const char *name,
                            GError **error);

G_END_DECLS

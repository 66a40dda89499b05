/* refit.h — the work of one refit: every tensor with its source (training) layout and its
 * destination (inference) layout. The planner needs nothing else.
 */
#pragma once

#include <glib.h>

#include "sim/dtype.h"
#include "sim/layout.h"
#include "sim/model.h"

G_BEGIN_DECLS

#define RS_REFIT_ERROR (rs_refit_error_quark())
GQuark rs_refit_error_quark(void);

typedef enum {
    RS_REFIT_ERROR_MISMATCH, /* source and destination disagree on a tensor's shape */
} RsRefitError;

typedef struct {
    char *name;
    guint n_dims;
    gint64 shape[RS_MAX_DIMS]; /* global shape, elements */
    RsDtype dtype;             /* dtype on the wire and at the destination */
    RsLayout *src;             /* owned reference */
    RsLayout *dst;             /* owned reference */
} RsRefitTensor;

typedef struct _RsRefit RsRefit;

/** rs_refit_new: Returns: (transfer full): an empty refit. */
RsRefit *rs_refit_new(void);
void rs_refit_free(RsRefit *refit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsRefit, rs_refit_free)

/**
 * rs_refit_add_tensor:
 * @name: the tensor's name (copied)
 * @dtype: dtype of the bytes moved
 * @src: (transfer none): source layout (a reference is taken)
 * @dst: (transfer none): destination layout (a reference is taken)
 * @error: RS_REFIT_ERROR_MISMATCH when @src and @dst have different global shapes
 *
 * Returns: TRUE on success.
 */
gboolean rs_refit_add_tensor(RsRefit *refit, const char *name, RsDtype dtype, RsLayout *src,
                             RsLayout *dst, GError **error);

/**
 * rs_refit_new_from_model:
 * @model: the model (its tensor names and dtypes are copied)
 * @src_layouts: (element-type RsLayout): one layout per model tensor, in model order
 * @dst_layouts: (element-type RsLayout): likewise
 *
 * Returns: (transfer full): the refit, or NULL with RS_REFIT_ERROR_MISMATCH.
 */
RsRefit *rs_refit_new_from_model(const RsModel *model, GPtrArray *src_layouts,
                                 GPtrArray *dst_layouts, GError **error);

guint rs_refit_get_n_tensors(const RsRefit *refit);
/** rs_refit_get_tensor: Returns: (transfer none): tensor @index, alive as @refit. */
const RsRefitTensor *rs_refit_get_tensor(const RsRefit *refit, guint index);
/** rs_refit_get_size_bytes: Returns: bytes of all global tensors in their wire dtypes. */
guint64 rs_refit_get_size_bytes(const RsRefit *refit);
/** rs_refit_tensor_get_elem_bytes: Returns: bytes of one element of @tensor. */
guint rs_refit_tensor_get_elem_bytes(const RsRefitTensor *tensor);

G_END_DECLS

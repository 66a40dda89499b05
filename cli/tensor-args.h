/* tensor-args.h — the single-tensor flags shared by `reshard plan`, `reshard run` and
 * `reshard layout`: a global shape and dtype, and a mesh, placements and ranks for the
 * source and the destination. */
#pragma once

#include <glib.h>

#include "sim/layout.h"
#include "sim/refit.h"

G_BEGIN_DECLS

typedef struct {
    char *shape;          /* "200x200" */
    char *dtype;          /* "bf16" (default f32) */
    char *src_mesh;       /* "2x2" */
    char *src_placements; /* "S(0),R" */
    char *src_ranks;      /* "0-3" (default 0..N-1) */
    char *dst_mesh;
    char *dst_placements;
    char *dst_ranks;
} RsTensorArgs;

/**
 * rs_tensor_args_make_group:
 * @args: where the parsed strings go; must outlive the option context
 *
 * Returns: (transfer full): an option group with --shape, --dtype, --src-mesh,
 * --src-placements, --src-ranks, --dst-mesh, --dst-placements, --dst-ranks.
 */
GOptionGroup *rs_tensor_args_make_group(RsTensorArgs *args);

/** rs_tensor_args_is_set: Returns: TRUE when any single-tensor flag was given. */
gboolean rs_tensor_args_is_set(const RsTensorArgs *args);

/**
 * rs_tensor_args_parse_shape:
 * @text: "200x200", "200,200" or "7"
 * @shape: (out caller-allocates) (array fixed-size=6): extents, each >= 0
 * @n_dims_out: (out): number of dims
 * @error: G_OPTION_ERROR_BAD_VALUE naming --shape
 *
 * Returns: TRUE on success.
 */
gboolean rs_tensor_args_parse_shape(const char *text, gint64 *shape, guint *n_dims_out,
                                    GError **error);

/**
 * rs_tensor_args_build_layout:
 * @flag_prefix: "--src-", "--dst-" or "--", used in messages
 * @mesh, @placements: required; @ranks: (nullable) default 0..N-1
 * @error: G_OPTION_ERROR_BAD_VALUE or the mesh/layout error, prefixed with the flag
 *
 * Returns: (transfer full): the layout, or NULL.
 */
RsLayout *rs_tensor_args_build_layout(const char *flag_prefix, guint n_dims, const gint64 *shape,
                                      const char *mesh, const char *placements,
                                      const char *ranks, GError **error);

/**
 * rs_tensor_args_build_refit:
 * @args: parsed flags; --shape, --src-mesh, --src-placements, --dst-mesh and
 *   --dst-placements are required
 * @error: G_OPTION_ERROR_BAD_VALUE naming the missing or bad flag, or a layout error
 *
 * Returns: (transfer full): a refit of one tensor named "tensor", or NULL.
 */
RsRefit *rs_tensor_args_build_refit(const RsTensorArgs *args, GError **error);

G_END_DECLS

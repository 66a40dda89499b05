/* tensor-args.h — the single-tensor flags shared by `reshard plan`, `reshard run` and
 * `reshard layout`: a global shape and dtype, and a mesh, placements and ranks for the
 * source and the destination (`reshard layout` takes one side, without prefix).
 *
 * Placements are DTensor's: R, S(d), SS(d,f) (also PyTorch's spellings, see
 * rs_placements_parse). Framework splits that are not placements are extra flags that
 * replace the one Shard placement of the side:
 *   --fused qkv:Q,KV          vLLM/SGLang qkv_proj: the tensor is [Q;K;V] with Q query heads
 *                             and KV key/value heads (head_dim = rows / (Q + 2·KV))
 *   --fused qkv-grouped:Q,KV  Megatron linear_qkv per query group
 *   --fused gate-up           [gate; up] halves, per rank [gate_local; up_local]
 *   --fused concat:A,B,…      segments of A, B, … rows, each split on its own
 *   --fused interleaved[:P]   rows alternating between P parts (gpt-oss gate/up, P = 2)
 *   --pad M                   vocabulary padding to a multiple of M (vLLM 64, Megatron 128·tp)
 */
#pragma once

#include <glib.h>

#include "layout/layout.h"
#include "layout/refit.h"

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
    char *dst_dtype;  /* destination (wire) dtype; default --dtype */
    char *src_fused;  /* see the header comment */
    char *dst_fused;
    char *src_pad;    /* an integer >= 1 as text; NULL: none */
    char *dst_pad;
    char *mesh;       /* `reshard layout`: the one side, without prefix */
    char *placements;
    char *ranks;
    char *fused;
    char *pad;
} RsTensorArgs;

/**
 * rs_tensor_args_make_group:
 * @args: where the parsed strings go; must outlive the option context
 *
 * Returns: (transfer full): an option group with --shape, --dtype, --dst-dtype, --src-mesh,
 * --src-placements, --src-ranks, --src-fused, --src-pad, --dst-mesh, --dst-placements,
 * --dst-ranks, --dst-fused, --dst-pad.
 */
GOptionGroup *rs_tensor_args_make_group(RsTensorArgs *args);

/**
 * rs_tensor_args_make_layout_group:
 * @args: where the parsed strings go; must outlive the option context
 *
 * Returns: (transfer full): an option group with --shape, --dtype, --mesh, --placements,
 * --ranks, --fused, --pad (one side, for `reshard layout`).
 */
GOptionGroup *rs_tensor_args_make_layout_group(RsTensorArgs *args);

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
 * rs_tensor_args_build_layout_full:
 * @fused: (nullable): a --fused value (see the header comment)
 * @pad: (nullable): a --pad value as given (an integer >= 1), NULL for none
 * @error: as rs_tensor_args_build_layout(), and G_OPTION_ERROR_BAD_VALUE naming
 *   FLAG_PREFIXfused or FLAG_PREFIXpad when the value does not parse, when the
 *   placements do not have exactly one Shard for it to replace, or when the fusion does
 *   not fit the tensor (heads that tp cannot keep whole: "tp=3 does not divide the 32
 *   query heads")
 *
 * Returns: (transfer full): the layout, or NULL.
 */
RsLayout *rs_tensor_args_build_layout_full(const char *flag_prefix, guint n_dims,
                                           const gint64 *shape, const char *mesh,
                                           const char *placements, const char *ranks,
                                           const char *fused, const char *pad, GError **error);

/**
 * rs_tensor_args_build_refit:
 * @args: parsed flags; --shape, --src-mesh, --src-placements, --dst-mesh and
 *   --dst-placements are required
 * @error: G_OPTION_ERROR_BAD_VALUE naming the missing or bad flag, or a layout or
 *   conversion error
 *
 * Returns: (transfer full): a refit of one tensor named "tensor", held as --dtype by the
 * sources and moved as --dst-dtype (converted at the source); a block-scaled
 * --dst-dtype (fp8-e4m3, mxfp4) adds its scales as a second tensor ("tensor_scale_inv",
 * "tensor_scales"). NULL on error.
 */
RsRefit *rs_tensor_args_build_refit(const RsTensorArgs *args, GError **error);

G_END_DECLS

/* refit.h — the work of one refit: every tensor with its source (training) layout and its
 * destination (inference) layout. The planner needs nothing else.
 *
 * dtype on the wire. A tensor may be held in one dtype by its sources and another by its
 * destinations (FP32 or BF16 training weights served in BF16, FP8 or MXFP4). The
 * conversion happens once, at the source, before sending: bytes on the wire and at the
 * destination are in the destination dtype, so a plan's byte counts use it. Block-scaled
 * destination formats add their scales as extra tensors of the refit (see
 * rs_refit_add_converted).
 *
 * Fused buffers. A tensor whose boxes live in a buffer it shares with other tensors (vLLM
 * qkv_proj, Megatron linear_fc1, …) names that buffer per side; tensors naming the same
 * buffer on a rank share one allocation of the layouts' buffer shape there.
 */
#pragma once

#include <glib.h>

#include "base/dtype.h"
#include "layout/layout.h"
#include "models/model.h"

G_BEGIN_DECLS

#define RS_REFIT_ERROR (rs_refit_error_quark())
GQuark rs_refit_error_quark(void);

typedef enum {
    RS_REFIT_ERROR_MISMATCH, /* source and destination disagree on a tensor's shape */
    RS_REFIT_ERROR_BUFFER,   /* tensors of one fused buffer that do not fit together */
    RS_REFIT_ERROR_CONVERT,  /* a conversion the destination format cannot take */
} RsRefitError;

typedef struct {
    char *name;
    guint n_dims;
    gint64 shape[RS_MAX_DIMS]; /* global shape, elements */
    RsDtype dtype;             /* dtype on the wire and at the destination */
    RsLayout *src;             /* owned reference */
    RsLayout *dst;             /* owned reference */
    RsDtype src_dtype;         /* dtype the sources hold; converted once at the source */
    RsDtype load_dtype;        /* dtype the destination serves it in: dtype, or the
                                * quantised dtype it asked for when no source rank holds a
                                * block whole, so it crosses as dtype and the destination
                                * quantises it on load (rs_refit_add_converted()) */
    char *src_buffer;          /* the sources' local buffer name; NULL: the tensor's own */
    char *dst_buffer;          /* the destinations' local buffer name; NULL: its own */
    gint scale_of;             /* for block scales: index of their weight; -1 otherwise */
} RsRefitTensor;

typedef struct _RsRefit RsRefit;

/** rs_refit_new: Returns: (transfer full): an empty refit. */
RsRefit *rs_refit_new(void);
void rs_refit_free(RsRefit *refit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsRefit, rs_refit_free)

/**
 * rs_refit_add_tensor:
 * @name: the tensor's name (copied)
 * @dtype: dtype of the bytes moved, on both sides
 * @src: (transfer none): source layout (a reference is taken)
 * @dst: (transfer none): destination layout (a reference is taken)
 * @error: RS_REFIT_ERROR_MISMATCH when @src and @dst have different global shapes
 *
 * Returns: TRUE on success.
 */
gboolean rs_refit_add_tensor(RsRefit *refit, const char *name, RsDtype dtype, RsLayout *src,
                             RsLayout *dst, GError **error);

/* One tensor to add with its dtypes and buffers. */
typedef struct {
    const char *name;
    RsDtype src_dtype;
    RsDtype dst_dtype;
    const char *src_buffer; /* nullable */
    const char *dst_buffer; /* nullable */
} RsRefitEntry;

/**
 * rs_refit_check_served_layout:
 * @name: the tensor's name, for the message
 * @stored_dtype: its dtype where the source holds it
 * @served_dtype: the dtype the destination serves it in
 * @dst: (transfer none): the destination layout
 * @error: RS_REFIT_ERROR_CONVERT, with rs_refit_add_converted()'s message, when
 *   @served_dtype is block-scaled (FP8 e4m3, MXFP4) unlike @stored_dtype and @dst has too
 *   few dims or a box off the blocks
 *
 * The destination's part of rs_refit_add_converted()'s checks, for a tool that shows one
 * side's layout (`reshard layout --infer-dtype`) and must refuse what a refit refuses.
 *
 * Returns: TRUE when @dst can hold the tensor in @served_dtype.
 */
gboolean rs_refit_check_served_layout(const char *name, RsDtype stored_dtype, RsDtype served_dtype,
                                      const RsLayout *dst, GError **error);

/**
 * rs_refit_add_converted:
 * @entry: the name, both dtypes and both buffer names (copied)
 * @src, @dst: (transfer none): the layouts, of one global shape
 * @error: RS_REFIT_ERROR_MISMATCH (shapes differ), RS_REFIT_ERROR_CONVERT (FP8 block
 *   scales for a tensor of fewer than 2 dims; a destination box not aligned to the
 *   blocks, naming the rank and the box; a conversion that is not between floating-point
 *   formats (MXFP4 and FP8 included) or between complex ones: complex to real, float to
 *   integer, or any integer dtype to another)
 *
 * Adds the tensor, converted at the source from src_dtype to dst_dtype. When the
 * destination format is block-scaled and the source is not already in it, a second
 * tensor holding the scales is added right after (its scale_of is the weight's index):
 * - FP8 e4m3: one f32 scale per 128×128 block of the last two dims (DeepSeek-V3's
 *   weight_scale_inv, [.., ceil(out/128), ceil(in/128)]), named NAME_scale_inv, or
 *   BASE.weight_scale_inv when NAME is BASE.weight;
 * - MXFP4: one u8 (E8M0) scale per 32 elements of the last dim (OCP Microscaling
 *   Formats spec v1.0, block size 32; gpt-oss *_scales), named NAME_scales, or
 *   BASE.weight_scale when NAME is BASE.weight.
 * A block is quantised where all of it is, so the weight's source layout is reduced to
 * the whole blocks each source holds (rs_layout_new_blocked, whole_blocks). When some
 * block is held whole by no single source (FSDP2 rows finer than the block: dp=16 over
 * 512 rows leaves 32 rows a rank against blocks of 128), no source can quantise it: the
 * weight is moved in src_dtype from its whole source layout and no scale tensor is added
 * (the destination quantises on load, as vLLM's Fp8LinearMethod does for weights that
 * arrive unquantised, process_weights_after_loading). The destination's scales mirror
 * its weight buffer (a fused weight gets a fused scale buffer, named after the weight's
 * buffer the same way).
 *
 * Returns: TRUE on success.
 */
gboolean rs_refit_add_converted(RsRefit *refit, const RsRefitEntry *entry, RsLayout *src,
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

/* How the destination's dtypes differ from the model's. */
typedef struct {
    gboolean has_dst_dtype;
    /* Applied to layer weights as inference engines quantise them: FP8 to every linear
     * (column, row, replicated roles and experts) of 2 or more dims (3 for stacked experts:
     * their [E, out] biases stay), as DeepSeek-V3's
     * checkpoint does; MXFP4 to routed experts' weights only, stacked [E, out, in]
     * (gpt-oss, Kimi-K3; their biases stay, as gpt-oss's checkpoint keeps them in BF16);
     * any other dtype to every tensor of its kind of values (a float dtype to the
     * floating-point tensors; integer tensors keep theirs). Embeddings, heads, norms and
     * routers keep the model's dtype under the quantised formats. */
    RsDtype dst_dtype;
} RsRefitDtypes;

/**
 * rs_refit_check_dtypes:
 * @model: the model
 * @dtypes: (nullable): destination dtypes; NULL or no dst_dtype: nothing to check
 * @error: RS_REFIT_ERROR_CONVERT when @dtypes' dtype converts none of @model's tensors: a
 *   format that applies to none of them (MXFP4 on a model without routed experts: the
 *   model would be served as stored under the format's name), or another kind of values
 *   (an integer dtype, or a complex one for real weights)
 *
 * The check rs_refit_new_from_model_full() makes before it plans a tensor; `reshard
 * layout --infer-dtype`, which builds no refit, makes it too. O(tensors).
 *
 * Returns: TRUE when the dtype converts at least one tensor (or there is none to check).
 */
gboolean rs_refit_check_dtypes(const RsModel *model, const RsRefitDtypes *dtypes, GError **error);

/**
 * rs_refit_get_served_dtype:
 * @dtypes: (nullable): destination dtypes; NULL or no dst_dtype: the model's own
 * @spec: a tensor of the model
 *
 * The dtype the destination holds @spec in: @dtypes' dst_dtype when it applies to @spec
 * (the rules of RsRefitDtypes), else the tensor's own. O(1).
 */
RsDtype rs_refit_get_served_dtype(const RsRefitDtypes *dtypes, const RsTensorSpec *spec);

/**
 * rs_refit_new_from_model_full:
 * @model: the model
 * @src_layouts, @dst_layouts: (element-type RsLayout): one layout per model tensor
 * @src_buffers, @dst_buffers: (element-type utf8) (nullable): each tensor's local buffer
 *   name on that side (NULL entries or arrays: its own)
 * @dtypes: (nullable): destination dtypes; NULL keeps the model's
 * @error: as rs_refit_add_converted(); also RS_REFIT_ERROR_CONVERT when @dtypes names a
 *   format that applies to none of @model's tensors (MXFP4 on a model without routed
 *   experts)
 *
 * Returns: (transfer full): the refit, or NULL.
 */
RsRefit *rs_refit_new_from_model_full(const RsModel *model, GPtrArray *src_layouts,
                                      GPtrArray *src_buffers, GPtrArray *dst_layouts,
                                      GPtrArray *dst_buffers, const RsRefitDtypes *dtypes,
                                      GError **error);

guint rs_refit_get_n_tensors(const RsRefit *refit);
/** rs_refit_get_tensor: Returns: (transfer none): tensor @index, alive as @refit. */
const RsRefitTensor *rs_refit_get_tensor(const RsRefit *refit, guint index);
/** rs_refit_find_tensor: Returns: the index of the tensor named @name, or -1. O(n). */
gint rs_refit_find_tensor(const RsRefit *refit, const char *name);
/** rs_refit_get_size_bytes: Returns: bytes of all global tensors in their wire dtypes. */
guint64 rs_refit_get_size_bytes(const RsRefit *refit);

/**
 * rs_refit_format_wire_dtypes:
 * The dtypes the refit moves: the dtype name when every tensor has one wire dtype
 * ("bf16"), else each dtype with its share of rs_refit_get_size_bytes, largest first, in GB
 * of 10^9 bytes ("fp8-e4m3 1023.89 GB + bf16 5.03 GB + f32 0.25 GB": FP8 weights with
 * their block scales), a share under 0.01 GB in MB of 10^6 bytes and one under 0.01 MB in
 * bytes ("bf16 1342.05 GB + f32 0.06 MB": DeepSeek-V3's router biases), so that no share
 * reads 0.00. An empty refit gives "no tensors".
 * Returns: (transfer full): a string to g_free.
 */
char *rs_refit_format_wire_dtypes(const RsRefit *refit);
/**
 * rs_refit_tensor_get_elem_bytes:
 * Returns: bytes of one element of @tensor on the wire (0 for MXFP4's half-byte
 * elements: use rs_refit_tensor_get_n_bytes for counts).
 */
guint rs_refit_tensor_get_elem_bytes(const RsRefitTensor *tensor);
/** rs_refit_tensor_get_n_bytes: Returns: bytes of @n_elems elements on the wire. */
guint64 rs_refit_tensor_get_n_bytes(const RsRefitTensor *tensor, guint64 n_elems);
/** rs_refit_tensor_get_src_buffer: Returns: (transfer none): src_buffer or the name. */
const char *rs_refit_tensor_get_src_buffer(const RsRefitTensor *tensor);
/** rs_refit_tensor_get_dst_buffer: Returns: (transfer none): dst_buffer or the name. */
const char *rs_refit_tensor_get_dst_buffer(const RsRefitTensor *tensor);

/**
 * rs_refit_check_buffers:
 * @error: RS_REFIT_ERROR_BUFFER naming the buffer, the rank and the two tensors: tensors
 *   sharing a buffer on a rank whose buffer shapes or dims differ, or whose boxes overlap
 *   in it
 *
 * Verifies that the tensors of every fused buffer fit together on every rank of both
 * sides, so that packing and unpacking through RsLocalBox offsets never mixes two
 * tensors' elements. O(Σ per (rank, buffer) boxes²).
 *
 * Returns: TRUE when they do.
 */
gboolean rs_refit_check_buffers(const RsRefit *refit, GError **error);

G_END_DECLS

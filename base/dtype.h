/* dtype.h — element types of model tensors and their sizes on the wire.
 *
 * Sizes are in bytes per element as the tensor is stored. MXFP4 values are 4 bits, so
 * sizes are expressed as a fraction: bits per element (see rs_dtype_get_bits).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    RS_DTYPE_F64,
    RS_DTYPE_F32,
    RS_DTYPE_BF16,
    RS_DTYPE_F16,
    RS_DTYPE_FP8_E4M3,
    RS_DTYPE_FP8_E5M2,
    RS_DTYPE_I64,
    RS_DTYPE_I32,
    RS_DTYPE_I8,
    RS_DTYPE_U8,
    RS_DTYPE_MXFP4, /* OCP microscaling FP4 (E2M1) values, 4 bits, two per byte; scales apart */
    RS_DTYPE_U32,   /* torch.uint32, safetensors U32 */
    RS_DTYPE_U64,   /* torch.uint64, safetensors U64 */
    RS_DTYPE_C64,   /* torch.complex64 (cfloat): two f32, 8 bytes; safetensors C64 */
    RS_DTYPE_C128,  /* torch.complex128 (cdouble): two f64, 16 bytes */
    RS_DTYPE_N
} RsDtype;

/* Elements of an MXFP4 block, which share one E8M0 scale (OCP Microscaling Formats (MX)
 * Specification v1.0, §5: block size k = 32), in elements of its last dim. */
#define RS_MXFP4_BLOCK_ELEMS 32

#define RS_DTYPE_ERROR (rs_dtype_error_quark())
GQuark rs_dtype_error_quark(void);

typedef enum {
    RS_DTYPE_ERROR_UNKNOWN, /* the name is not a known dtype */
} RsDtypeError;

/* The kind of values a dtype holds; a conversion between dtypes keeps it (layout/refit.h). */
typedef enum {
    RS_DTYPE_KIND_FLOAT,   /* f64, f32, bf16, f16, fp8, mxfp4 */
    RS_DTYPE_KIND_COMPLEX, /* c64, c128 */
    RS_DTYPE_KIND_INTEGER, /* signed and unsigned integers */
} RsDtypeKind;

/**
 * rs_dtype_get_kind:
 * @dtype: a valid dtype
 *
 * Returns: whether @dtype holds floating-point, complex or integer values.
 */
RsDtypeKind rs_dtype_get_kind(RsDtype dtype);

/**
 * rs_dtype_get_kind_name:
 * Returns: (transfer none): "floating-point", "complex" or "integer", a static string.
 */
const char *rs_dtype_get_kind_name(RsDtypeKind kind);

/**
 * rs_dtype_get_bits:
 * @dtype: a valid dtype
 *
 * Returns: the storage size of one element in bits (64, 32, 16, 8, 4).
 */
guint rs_dtype_get_bits(RsDtype dtype);

/**
 * rs_dtype_get_size_bytes:
 * @dtype: a valid dtype
 *
 * Returns: the storage size of one element in bytes (8, 4, 2 or 1); 0 for MXFP4, whose
 * elements are half a byte: use rs_dtype_get_n_bytes() for counts of elements.
 */
guint rs_dtype_get_size_bytes(RsDtype dtype);

/**
 * rs_dtype_get_elems_per_byte:
 * @dtype: a valid dtype
 *
 * Returns: how many elements share one byte: 2 for MXFP4 (two 4-bit E2M1 values per
 * byte, packed along the last dim as gpt-oss's *_blocks and compressed-tensors'
 * weight_packed store them), 1 for every whole-byte dtype. A shard of a packed dtype
 * must start and end on a multiple of this in the last dim (rs_layout_check_packed()).
 */
guint rs_dtype_get_elems_per_byte(RsDtype dtype);

/**
 * rs_dtype_get_n_bytes:
 * @dtype: a valid dtype
 * @n_elems: a number of elements
 *
 * Returns: the bytes of @n_elems elements packed densely: ceil(n_elems × bits / 8).
 */
guint64 rs_dtype_get_n_bytes(RsDtype dtype, guint64 n_elems);

/**
 * rs_dtype_get_name:
 * @dtype: a valid dtype
 *
 * Returns: (transfer none): the canonical short name ("bf16", "f32", "fp8-e4m3", …),
 * a static string.
 */
const char *rs_dtype_get_name(RsDtype dtype);

/**
 * rs_dtype_parse:
 * @name: a dtype name, case-insensitive: the canonical short names plus the PyTorch and
 *   safetensors spellings ("bfloat16", "float32", "BF16", "F8_E4M3", "float8_e4m3fn", …)
 * @dtype_out: (out): the parsed dtype
 * @error: RS_DTYPE_ERROR_UNKNOWN when @name is not a dtype; the message lists valid names
 *
 * Returns: TRUE on success.
 */
gboolean rs_dtype_parse(const char *name, RsDtype *dtype_out, GError **error);

G_END_DECLS

/* dtype.c — element types. A table of names and sizes; the aliases cover the spellings
 * that appear in Hugging Face config.json (torch_dtype), safetensors headers and PyTorch. */
#include "base/dtype.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-dtype-error-quark, rs_dtype_error)
/* clang-format on */

typedef struct {
    const char *name;
    guint bits;
    RsDtypeKind kind;
} DtypeInfo;

#define F RS_DTYPE_KIND_FLOAT
#define C RS_DTYPE_KIND_COMPLEX
#define I RS_DTYPE_KIND_INTEGER
static const DtypeInfo dtype_info[RS_DTYPE_N] = {
    [RS_DTYPE_F64] = {"f64", 64, F},     [RS_DTYPE_F32] = {"f32", 32, F},
    [RS_DTYPE_BF16] = {"bf16", 16, F},   [RS_DTYPE_F16] = {"f16", 16, F},
    [RS_DTYPE_FP8_E4M3] = {"fp8-e4m3", 8, F}, [RS_DTYPE_FP8_E5M2] = {"fp8-e5m2", 8, F},
    [RS_DTYPE_I64] = {"i64", 64, I},     [RS_DTYPE_I32] = {"i32", 32, I},
    [RS_DTYPE_I8] = {"i8", 8, I},        [RS_DTYPE_U8] = {"u8", 8, I},
    [RS_DTYPE_MXFP4] = {"mxfp4", 4, F},
    [RS_DTYPE_U32] = {"u32", 32, I},     [RS_DTYPE_U64] = {"u64", 64, I},
    [RS_DTYPE_C64] = {"c64", 64, C},     [RS_DTYPE_C128] = {"c128", 128, C},
};
#undef F
#undef C
#undef I

typedef struct {
    const char *alias;
    RsDtype dtype;
} DtypeAlias;

static const DtypeAlias dtype_aliases[] = {
    {"float64", RS_DTYPE_F64},       {"double", RS_DTYPE_F64},
    {"float32", RS_DTYPE_F32},       {"float", RS_DTYPE_F32},
    {"fp32", RS_DTYPE_F32},          {"bfloat16", RS_DTYPE_BF16},
    {"float16", RS_DTYPE_F16},       {"half", RS_DTYPE_F16},
    {"fp16", RS_DTYPE_F16},          {"f8_e4m3", RS_DTYPE_FP8_E4M3},
    {"float8_e4m3fn", RS_DTYPE_FP8_E4M3}, {"fp8", RS_DTYPE_FP8_E4M3},
    {"e4m3", RS_DTYPE_FP8_E4M3},     {"f8_e5m2", RS_DTYPE_FP8_E5M2},
    {"float8_e5m2", RS_DTYPE_FP8_E5M2}, {"e5m2", RS_DTYPE_FP8_E5M2},
    {"int64", RS_DTYPE_I64},         {"int32", RS_DTYPE_I32},
    {"int8", RS_DTYPE_I8},           {"uint8", RS_DTYPE_U8},
    {"fp4", RS_DTYPE_MXFP4},         {"mxfp4_e2m1", RS_DTYPE_MXFP4},
    /* PyTorch's names (torch/_C/_VariableFunctions dtype list): torch.uint32, uint64,
     * complex64 = cfloat, complex128 = cdouble. */
    {"uint32", RS_DTYPE_U32},        {"uint64", RS_DTYPE_U64},
    {"complex64", RS_DTYPE_C64},     {"cfloat", RS_DTYPE_C64},
    {"complex128", RS_DTYPE_C128},   {"cdouble", RS_DTYPE_C128},
};

RsDtypeKind
rs_dtype_get_kind(RsDtype dtype)
{
    g_return_val_if_fail(dtype < RS_DTYPE_N, RS_DTYPE_KIND_INTEGER);
    return dtype_info[dtype].kind;
}

const char *
rs_dtype_get_kind_name(RsDtypeKind kind)
{
    static const char *const names[] = {
        [RS_DTYPE_KIND_FLOAT] = "floating-point",
        [RS_DTYPE_KIND_COMPLEX] = "complex",
        [RS_DTYPE_KIND_INTEGER] = "integer",
    };
    g_return_val_if_fail(kind <= RS_DTYPE_KIND_INTEGER, "?");
    return names[kind];
}

guint
rs_dtype_get_bits(RsDtype dtype)
{
    g_return_val_if_fail(dtype < RS_DTYPE_N, 0);
    return dtype_info[dtype].bits;
}

guint
rs_dtype_get_size_bytes(RsDtype dtype)
{
    g_return_val_if_fail(dtype < RS_DTYPE_N, 0);
    return dtype_info[dtype].bits / 8;
}

guint
rs_dtype_get_elems_per_byte(RsDtype dtype)
{
    g_return_val_if_fail(dtype < RS_DTYPE_N, 1);
    guint bits = dtype_info[dtype].bits;
    return bits < 8 ? 8 / bits : 1;
}

guint64
rs_dtype_get_n_bytes(RsDtype dtype, guint64 n_elems)
{
    g_return_val_if_fail(dtype < RS_DTYPE_N, 0);
    guint bits = dtype_info[dtype].bits;
    return bits % 8 == 0 ? n_elems * (bits / 8) : (n_elems * bits + 7) / 8;
}

const char *
rs_dtype_get_name(RsDtype dtype)
{
    g_return_val_if_fail(dtype < RS_DTYPE_N, "invalid");
    return dtype_info[dtype].name;
}

gboolean
rs_dtype_parse(const char *name, RsDtype *dtype_out, GError **error)
{
    g_return_val_if_fail(name != NULL && dtype_out != NULL, FALSE);
    g_autofree char *lower = g_ascii_strdown(name, -1);
    for (guint i = 0; i < RS_DTYPE_N; i++) {
        if (strcmp(lower, dtype_info[i].name) == 0) {
            *dtype_out = (RsDtype)i;
            return TRUE;
        }
    }
    for (guint i = 0; i < G_N_ELEMENTS(dtype_aliases); i++) {
        if (strcmp(lower, dtype_aliases[i].alias) == 0) {
            *dtype_out = dtype_aliases[i].dtype;
            return TRUE;
        }
    }
    g_autoptr(GString) names = g_string_new(NULL);
    for (guint i = 0; i < RS_DTYPE_N; i++)
        g_string_append_printf(names, "%s%s", i ? ", " : "", dtype_info[i].name);
    g_set_error(error, RS_DTYPE_ERROR, RS_DTYPE_ERROR_UNKNOWN, "unknown dtype \"%s\" (valid: %s)",
                name, names->str);
    return FALSE;
}

/* region-index.h — the index arithmetic of pack, unpack, local copies and the validation
 * pattern, in one header that both gcc (exec/region.c, exec/pattern.c, the CPU tests) and
 * nvcc (exec/cuda-kernels.cu) compile, so the CPU tests cover the code the kernels run.
 *
 * Nothing here depends on GLib or CUDA: plain C99 types, every function `static inline`
 * and, under nvcc, `__host__ __device__`.
 *
 * Regions (RsRegion, see region.h): the element at row-major position i of a region lies at
 * byte base + Σ_d pos_d(i) · strides_bytes[d]; wire byte b of the region (its elements
 * back to back in row-major order) lies at rs_region_index_wire_offset(b). A kernel moves
 * wire bytes [from, to) in units of u bytes (16, 8, 4, 2 or 1): unit k covers wire bytes
 * from + k·u … from + (k+1)·u − 1, which rs_region_index_unit_bytes() guarantees to be
 * consecutive in memory and u-aligned on both sides, so a unit is one 16-byte (uint4) load
 * and store where the rows allow.
 *
 * Boxes (RsBoxIndex): the elements of one RsLocalBox in row-major order of the box; element
 * k has a global row-major index in the tensor (the pattern's key) and a local element
 * offset in the rank's buffer (where its bytes lie). The pattern (pattern.h) is splitmix64's
 * output function over a per-tensor keystream (Steele, Lea, Flood, OOPSLA 2014).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define RS_INDEX_FN __host__ __device__ static inline
#else
#define RS_INDEX_FN static inline
#endif

/* Loops over dims run over all RS_INDEX_MAX_DIMS with the inactive ones skipped, so nvcc
 * unrolls them and indexes the per-dim arrays with constants: the kernels then read a
 * region's counts and strides from the launch parameters instead of copying the struct to
 * local memory (a stack frame per thread) to index it at run time. */
#ifdef __CUDACC__
#define RS_INDEX_UNROLL _Pragma("unroll")
#else
#define RS_INDEX_UNROLL
#endif

/* Must equal RS_MAX_DIMS of base/box.h (region.c checks it at compile time). */
#define RS_INDEX_MAX_DIMS 6

/* Largest unit a kernel moves at once: one 16-byte vector load and store. */
#define RS_INDEX_MAX_UNIT_BYTES 16

/* The memory image of one piece of a box in a rank's buffer (region.h documents it). */
typedef struct {
    uint8_t *base;                            /* the piece's first element */
    uint32_t n_dims;                          /* after merging, >= 1 */
    int64_t counts[RS_INDEX_MAX_DIMS];        /* elements per dim, row-major */
    int64_t strides_bytes[RS_INDEX_MAX_DIMS]; /* distance between neighbours per dim, bytes */
    uint32_t elem_bytes;                      /* 1, 2, 4 or 8 */
    uint64_t n_bytes;                         /* wire size: elements × elem_bytes */
} RsRegion;

/* @a / @b with the remainder in *@rem; 32-bit division when both fit (a GPU divides 32-bit
 * integers several times faster than 64-bit ones, and pieces under 4 GiB always fit). */
RS_INDEX_FN uint64_t
rs_index_divmod(uint64_t a, uint64_t b, uint64_t *rem)
{
    if (a <= 0xFFFFFFFFull && b <= 0xFFFFFFFFull) {
        uint32_t q = (uint32_t)a / (uint32_t)b;
        *rem = (uint32_t)a - q * (uint32_t)b;
        return q;
    }
    uint64_t q = a / b;
    *rem = a - q * b;
    return q;
}

/* @a[@i] by selects over constant indices (see RS_INDEX_UNROLL), for a dim known only at
 * run time. */
RS_INDEX_FN int64_t
rs_index_at(const int64_t *a, uint32_t i)
{
    int64_t v = a[0];
    RS_INDEX_UNROLL
    for (uint32_t d = 1; d < RS_INDEX_MAX_DIMS; d++)
        if (d == i)
            v = a[d];
    return v;
}

/* Σ_d pos_d · strides_bytes[d] over dims 0 .. @n_dims − 1 of @r, where pos is the row-major
 * position @q in those dims. */
RS_INDEX_FN int64_t
rs_region_index_unravel(const RsRegion *r, uint32_t n_dims, uint64_t q)
{
    int64_t off = 0;
    RS_INDEX_UNROLL
    for (int i = 0; i < RS_INDEX_MAX_DIMS; i++) {
        int d = RS_INDEX_MAX_DIMS - 1 - i; /* innermost active dim first */
        if (d >= (int)n_dims)
            continue;
        uint64_t pos;
        q = rs_index_divmod(q, (uint64_t)r->counts[d], &pos);
        off += (int64_t)pos * r->strides_bytes[d];
    }
    return off;
}

/* Byte offset (from base) of the element at row-major position @index of @r. */
RS_INDEX_FN int64_t
rs_region_index_elem_offset(const RsRegion *r, uint64_t index)
{
    return rs_region_index_unravel(r, r->n_dims, index);
}

/* Byte offset (from base) of wire byte @byte of @r. When the last dim's elements are
 * adjacent a row is one run: one division finds the row, the outer dims give its start. */
RS_INDEX_FN int64_t
rs_region_index_wire_offset(const RsRegion *r, uint64_t byte)
{
    uint32_t last = r->n_dims - 1;
    uint64_t e = r->elem_bytes, in;
    if (rs_index_at(r->strides_bytes, last) == (int64_t)e) {
        uint64_t row = rs_index_divmod(byte, (uint64_t)rs_index_at(r->counts, last) * e, &in);
        return rs_region_index_unravel(r, last, row) + (int64_t)in;
    }
    uint64_t i = rs_index_divmod(byte, e, &in);
    return rs_region_index_unravel(r, r->n_dims, i) + (int64_t)in;
}

/* Bytes that are consecutive in memory in one run of @r: a whole row when the last dim's
 * elements are adjacent, else one element. */
RS_INDEX_FN uint64_t
rs_region_index_run_bytes(const RsRegion *r)
{
    uint32_t last = r->n_dims - 1;
    if (rs_index_at(r->strides_bytes, last) == (int64_t)r->elem_bytes)
        return (uint64_t)rs_index_at(r->counts, last) * r->elem_bytes;
    return r->elem_bytes;
}

/* TRUE (1) when @v is a multiple of @u (a power of two). */
RS_INDEX_FN int
rs_index_is_multiple(uint64_t v, uint64_t u)
{
    return (v & (u - 1)) == 0;
}

/* The largest unit (16, 8, 4, 2, 1 bytes) in which wire bytes [@from, @to) of @r can be
 * moved to or from a buffer whose first byte (wire byte @from) is at address @wire_addr:
 * u divides the run length, every stride, @from, @to − @from, and both start addresses. */
RS_INDEX_FN uint32_t
rs_region_index_unit_bytes(const RsRegion *r, uint64_t from, uint64_t to, uintptr_t wire_addr)
{
    uint64_t run = rs_region_index_run_bytes(r);
    uint32_t u = RS_INDEX_MAX_UNIT_BYTES;
    for (; u > 1; u >>= 1) {
        int ok = rs_index_is_multiple(run, u) && rs_index_is_multiple(from, u) &&
                 rs_index_is_multiple(to - from, u) &&
                 rs_index_is_multiple((uint64_t)(uintptr_t)r->base, u) &&
                 rs_index_is_multiple((uint64_t)wire_addr, u);
        for (uint32_t d = 0; ok && d < r->n_dims; d++)
            ok = r->n_dims == 1 || d == r->n_dims - 1
                     ? (r->strides_bytes[d] == (int64_t)r->elem_bytes ||
                        rs_index_is_multiple((uint64_t)r->strides_bytes[d], u))
                     : rs_index_is_multiple((uint64_t)r->strides_bytes[d], u);
        if (ok)
            return u;
    }
    return 1;
}

/* The unit for a local copy between two regions of the same elements: one that suits both
 * (unit k is wire bytes k·u … of both). */
RS_INDEX_FN uint32_t
rs_region_index_copy_unit_bytes(const RsRegion *dst, const RsRegion *src)
{
    uint32_t a = rs_region_index_unit_bytes(dst, 0, dst->n_bytes, 0);
    uint32_t b = rs_region_index_unit_bytes(src, 0, src->n_bytes, 0);
    return a < b ? a : b;
}

/* The elements of one local box in row-major order of the box. */
typedef struct {
    uint32_t n_dims;                     /* 0: a scalar (one element) */
    int64_t count[RS_INDEX_MAX_DIMS];    /* indices per dim */
    int64_t lo[RS_INDEX_MAX_DIMS];       /* first global index per dim */
    int64_t step[RS_INDEX_MAX_DIMS];     /* global distance between indices per dim */
    int64_t gstride[RS_INDEX_MAX_DIMS];  /* global row-major stride per dim, elements */
    int64_t lstride[RS_INDEX_MAX_DIMS];  /* local stride per dim, elements */
    uint64_t offset_elems;               /* local element of the box's first element */
    uint64_t n_elems;                    /* Π count */
} RsBoxIndex;

/* Element @k of @b (row-major in the box): its global row-major index and local element. */
RS_INDEX_FN void
rs_box_index_elem(const RsBoxIndex *b, uint64_t k, uint64_t *global_out, uint64_t *local_out)
{
    uint64_t g = 0;
    int64_t l = (int64_t)b->offset_elems;
    RS_INDEX_UNROLL
    for (int i = 0; i < RS_INDEX_MAX_DIMS; i++) {
        int d = RS_INDEX_MAX_DIMS - 1 - i;
        if (d >= (int)b->n_dims)
            continue;
        uint64_t j;
        k = rs_index_divmod(k, (uint64_t)b->count[d], &j);
        g += (uint64_t)((b->lo[d] + (int64_t)j * b->step[d]) * b->gstride[d]);
        l += (int64_t)j * b->lstride[d];
    }
    *global_out = g;
    *local_out = (uint64_t)l;
}

/* The global index per dim of element @k of @b, for reports. */
RS_INDEX_FN void
rs_box_index_position(const RsBoxIndex *b, uint64_t k, int64_t *global_index)
{
    RS_INDEX_UNROLL
    for (int i = 0; i < RS_INDEX_MAX_DIMS; i++) {
        int d = RS_INDEX_MAX_DIMS - 1 - i;
        if (d >= (int)b->n_dims)
            continue;
        uint64_t j;
        k = rs_index_divmod(k, (uint64_t)b->count[d], &j);
        global_index[d] = b->lo[d] + (int64_t)j * b->step[d];
    }
}

#define RS_PATTERN_GOLDEN 0x9E3779B97F4A7C15ull

/* splitmix64's output function (Steele, Lea, Flood 2014). */
RS_INDEX_FN uint64_t
rs_pattern_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Word @j of the keystream of @seed. */
RS_INDEX_FN uint64_t
rs_pattern_word(uint64_t seed, uint64_t j)
{
    return rs_pattern_mix64(seed + j * RS_PATTERN_GOLDEN);
}

/* The bytes of the element with global index @index: bytes index·e … of the keystream,
 * little-endian within a word, as a little-endian number of @elem_bytes bytes. */
RS_INDEX_FN uint64_t
rs_pattern_elem_value(uint64_t seed, uint64_t index, uint32_t elem_bytes)
{
    uint64_t byte = index * elem_bytes;
    uint64_t w = rs_pattern_word(seed, byte / 8);
    uint32_t shift = (uint32_t)(byte % 8) * 8;
    uint64_t v = w >> shift;
    return elem_bytes == 8 ? v : v & ((1ull << (8 * elem_bytes)) - 1);
}

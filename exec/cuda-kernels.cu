/* cuda-kernels.cu — pack, unpack, local copies, the validation pattern and the checks as
 * CUDA kernels (see cuda-kernels.h).
 *
 * Every kernel is grid-stride: thread t of G handles items t, t + G, t + 2G, …, so one
 * launch covers any size with a bounded grid. Addresses come from region-index.h, the code
 * exec/region.c and exec/pattern.c use on the host and the CPU tests exercise. Pack and
 * unpack move units of 16, 8, 4, 2 or 1 bytes (rs_region_index_unit_bytes): a row of at
 * least 16 bytes whose length, start and strides are multiples of 16 is moved as uint4
 * loads and stores (one 128-bit transaction per thread), the way cudaMemcpy's own copy
 * kernels do; shorter or odd rows fall back to narrower units. Nothing here allocates or
 * synchronises: the caller (cuda-device.c) owns streams and memory. */
#include "exec/cuda-kernels.h"

#include <cuda_runtime.h>

namespace {

template <int U> struct Unit;
template <> struct Unit<16> { typedef uint4 T; };
template <> struct Unit<8> { typedef unsigned long long T; };
template <> struct Unit<4> { typedef unsigned int T; };
template <> struct Unit<2> { typedef unsigned short T; };
template <> struct Unit<1> { typedef unsigned char T; };

template <int U>
__global__ void
move_kernel(RsRegion r, uint64_t from, uint64_t n_units, uint8_t *wire, int pack)
{
    typedef typename Unit<U>::T T;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n_units; k += stride) {
        T *mem = (T *)(r.base + rs_region_index_wire_offset(&r, from + k * U));
        T *w = (T *)(wire + k * U);
        if (pack)
            *w = *mem;
        else
            *mem = *w;
    }
}

template <int U>
__global__ void
copy_kernel(RsRegion dst, RsRegion src, uint64_t n_units)
{
    typedef typename Unit<U>::T T;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n_units; k += stride) {
        const T *s = (const T *)(src.base + rs_region_index_wire_offset(&src, k * U));
        T *d = (T *)(dst.base + rs_region_index_wire_offset(&dst, k * U));
        *d = *s;
    }
}

__device__ inline void
store_elem(uint8_t *p, uint64_t v, uint32_t e)
{
    switch (e) {
    case 8: *(unsigned long long *)p = v; break;
    case 4: *(unsigned int *)p = (unsigned int)v; break;
    case 2: *(unsigned short *)p = (unsigned short)v; break;
    default: *p = (uint8_t)v; break;
    }
}

__device__ inline uint64_t
load_elem(const uint8_t *p, uint32_t e)
{
    switch (e) {
    case 8: return *(const unsigned long long *)p;
    case 4: return *(const unsigned int *)p;
    case 2: return *(const unsigned short *)p;
    default: return *p;
    }
}

__global__ void
fill_kernel(RsBoxIndex b, uint64_t seed, uint32_t e, uint8_t *buffer)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < b.n_elems; k += stride) {
        uint64_t g, l;
        rs_box_index_elem(&b, k, &g, &l);
        store_elem(buffer + l * e, rs_pattern_elem_value(seed, g, e), e);
    }
}

__global__ void
check_kernel(RsBoxIndex b, uint64_t seed, uint32_t e, const uint8_t *buffer,
             unsigned long long *result)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned long long bad = 0, first = ~0ull;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < b.n_elems; k += stride) {
        uint64_t g, l;
        rs_box_index_elem(&b, k, &g, &l);
        if (load_elem(buffer + l * e, e) != rs_pattern_elem_value(seed, g, e)) {
            bad++;
            first = first < k ? first : k;
        }
    }
    if (bad > 0) {
        atomicAdd(&result[0], bad);
        atomicMin(&result[1], first);
    }
}

__global__ void
mark_kernel(RsBoxIndex b, uint8_t *covered)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < b.n_elems; k += stride) {
        uint64_t g, l;
        rs_box_index_elem(&b, k, &g, &l);
        covered[l] = 1;
    }
}

__global__ void
check_zero_kernel(const uint8_t *buffer, const uint8_t *covered, uint64_t n, uint32_t e,
                  unsigned long long *result)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned long long bad = 0, first = ~0ull;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (!covered[i] && load_elem(buffer + i * e, e) != 0) {
            bad++;
            first = first < i ? first : i;
        }
    }
    if (bad > 0) {
        atomicAdd(&result[0], bad);
        atomicMin(&result[1], first);
    }
}

__global__ void
xor_byte_kernel(uint8_t *p)
{
    *p ^= 0xff;
}

template <int U>
int
launch_move(const RsRegion *r, uint64_t from, uint64_t to, uint8_t *wire, int pack,
            cudaStream_t s)
{
    uint64_t n = (to - from) / U;
    move_kernel<U><<<rs_cuda_grid_blocks(n), RS_CUDA_BLOCK_THREADS, 0, s>>>(*r, from, n, wire,
                                                                            pack);
    return (int)cudaGetLastError();
}

template <int U>
int
launch_copy(const RsRegion *dst, const RsRegion *src, cudaStream_t s)
{
    uint64_t n = dst->n_bytes / U;
    copy_kernel<U><<<rs_cuda_grid_blocks(n), RS_CUDA_BLOCK_THREADS, 0, s>>>(*dst, *src, n);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int
rs_cuda_launch_move(const RsRegion *region, uint64_t from, uint64_t to, uint8_t *wire, int pack,
                    void *stream)
{
    if (from >= to)
        return (int)cudaSuccess;
    cudaStream_t s = (cudaStream_t)stream;
    switch (rs_region_index_unit_bytes(region, from, to, (uintptr_t)wire)) {
    case 16: return launch_move<16>(region, from, to, wire, pack, s);
    case 8: return launch_move<8>(region, from, to, wire, pack, s);
    case 4: return launch_move<4>(region, from, to, wire, pack, s);
    case 2: return launch_move<2>(region, from, to, wire, pack, s);
    default: return launch_move<1>(region, from, to, wire, pack, s);
    }
}

extern "C" int
rs_cuda_launch_copy(const RsRegion *dst, const RsRegion *src, void *stream)
{
    if (dst->n_bytes == 0)
        return (int)cudaSuccess;
    cudaStream_t s = (cudaStream_t)stream;
    switch (rs_region_index_copy_unit_bytes(dst, src)) {
    case 16: return launch_copy<16>(dst, src, s);
    case 8: return launch_copy<8>(dst, src, s);
    case 4: return launch_copy<4>(dst, src, s);
    case 2: return launch_copy<2>(dst, src, s);
    default: return launch_copy<1>(dst, src, s);
    }
}

extern "C" int
rs_cuda_launch_fill(const RsBoxIndex *box, uint64_t seed, uint32_t elem_bytes, uint8_t *buffer,
                    void *stream)
{
    if (box->n_elems == 0)
        return (int)cudaSuccess;
    fill_kernel<<<rs_cuda_grid_blocks(box->n_elems), RS_CUDA_BLOCK_THREADS, 0,
                  (cudaStream_t)stream>>>(*box, seed, elem_bytes, buffer);
    return (int)cudaGetLastError();
}

extern "C" int
rs_cuda_launch_check(const RsBoxIndex *box, uint64_t seed, uint32_t elem_bytes,
                     const uint8_t *buffer, unsigned long long *result, void *stream)
{
    if (box->n_elems == 0)
        return (int)cudaSuccess;
    check_kernel<<<rs_cuda_grid_blocks(box->n_elems), RS_CUDA_BLOCK_THREADS, 0,
                   (cudaStream_t)stream>>>(*box, seed, elem_bytes, buffer, result);
    return (int)cudaGetLastError();
}

extern "C" int
rs_cuda_launch_mark(const RsBoxIndex *box, uint8_t *covered, void *stream)
{
    if (box->n_elems == 0)
        return (int)cudaSuccess;
    mark_kernel<<<rs_cuda_grid_blocks(box->n_elems), RS_CUDA_BLOCK_THREADS, 0,
                  (cudaStream_t)stream>>>(*box, covered);
    return (int)cudaGetLastError();
}

extern "C" int
rs_cuda_launch_check_zero(const uint8_t *buffer, const uint8_t *covered, uint64_t n_elems,
                          uint32_t elem_bytes, unsigned long long *result, void *stream)
{
    if (n_elems == 0)
        return (int)cudaSuccess;
    check_zero_kernel<<<rs_cuda_grid_blocks(n_elems), RS_CUDA_BLOCK_THREADS, 0,
                        (cudaStream_t)stream>>>(buffer, covered, n_elems, elem_bytes, result);
    return (int)cudaGetLastError();
}

extern "C" int
rs_cuda_launch_xor_byte(uint8_t *ptr, void *stream)
{
    xor_byte_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(ptr);
    return (int)cudaGetLastError();
}

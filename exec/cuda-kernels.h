/* cuda-kernels.h — the C entry points of the CUDA kernels (cuda-kernels.cu): pack, unpack,
 * local copies, the validation pattern and the checks, each queued on a stream.
 *
 * The kernels compute every address with region-index.h, which exec/region.c, exec/pattern.c
 * and the CPU tests compile too. Pointers are device pointers; @stream is a cudaStream_t
 * (NULL: the legacy default stream). Each function returns the cudaError_t of the launch
 * (cudaGetLastError after it; 0 is cudaSuccess); errors of the kernel itself appear when the
 * stream is waited for. Nothing here includes a CUDA header, so C files of any build can
 * include it; only builds with CUDA link it.
 */
#pragma once

#include "exec/region-index.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of every kernel. */
#define RS_CUDA_BLOCK_THREADS 256

/**
 * rs_cuda_launch_move:
 * @region: the piece in device memory (copied into the launch)
 * @from, @to: a byte range of its wire image, 0 <= from <= to <= n_bytes
 * @wire: (array length=to-from): device buffer holding wire bytes [from, to)
 * @pack: non-zero: region → wire (pack); zero: wire → region (unpack)
 *
 * One thread per unit of rs_region_index_unit_bytes() bytes (16-byte loads and stores where
 * rows, strides and both addresses allow), grid-stride. Returns: a cudaError_t.
 */
int rs_cuda_launch_move(const RsRegion *region, uint64_t from, uint64_t to, uint8_t *wire,
                        int pack, void *stream);

/**
 * rs_cuda_launch_copy:
 * @dst, @src: regions of the same elements (equal n_bytes and elem_bytes) on one device,
 *   or @src on a peer device with peer access enabled
 *
 * Copies every element of @src to the same wire position of @dst, in units of
 * rs_region_index_copy_unit_bytes(). Returns: a cudaError_t.
 */
int rs_cuda_launch_copy(const RsRegion *dst, const RsRegion *src, void *stream);

/**
 * rs_cuda_launch_fill:
 * @box: the element walk of one local box (rs_box_index_init)
 * @seed: rs_pattern_seed() of the tensor
 * @elem_bytes: 1, 2, 4 or 8
 * @buffer: the rank's local buffer (element 0)
 *
 * Writes rs_pattern_elem_value(seed, global index, elem_bytes) at every element's local
 * offset: the values rs_pattern_fill_box() writes. Returns: a cudaError_t.
 */
int rs_cuda_launch_fill(const RsBoxIndex *box, uint64_t seed, uint32_t elem_bytes,
                        uint8_t *buffer, void *stream);

/**
 * rs_cuda_launch_check:
 * @result: (array fixed-size=2): device words; result[0] is increased by the elements of
 *   @box that differ from their pattern value, result[1] lowered (atomicMin) to the lowest
 *   k among them (set them to 0 and UINT64_MAX first)
 *
 * Returns: a cudaError_t.
 */
int rs_cuda_launch_check(const RsBoxIndex *box, uint64_t seed, uint32_t elem_bytes,
                         const uint8_t *buffer, unsigned long long *result, void *stream);

/**
 * rs_cuda_launch_mark:
 * @covered: (array length=buffer elements): one byte per local element; set to 1 for every
 *   element of @box
 *
 * Returns: a cudaError_t.
 */
int rs_cuda_launch_mark(const RsBoxIndex *box, uint8_t *covered, void *stream);

/**
 * rs_cuda_launch_check_zero:
 * @buffer: (array length=n_elems*elem_bytes): a local buffer
 * @covered: (array length=n_elems): from rs_cuda_launch_mark
 * @result: as rs_cuda_launch_check: the count and the lowest element not covered and not
 *   zero
 *
 * Returns: a cudaError_t.
 */
int rs_cuda_launch_check_zero(const uint8_t *buffer, const uint8_t *covered, uint64_t n_elems,
                              uint32_t elem_bytes, unsigned long long *result, void *stream);

/** rs_cuda_launch_xor_byte: Flips the bits of the byte at @ptr. Returns: a cudaError_t. */
int rs_cuda_launch_xor_byte(uint8_t *ptr, void *stream);

/**
 * rs_cuda_grid_blocks:
 * @n_items: work items (units, elements)
 *
 * Returns: the blocks of RS_CUDA_BLOCK_THREADS a grid-stride kernel is launched with:
 * ceil(n / threads), at least 1, at most 8192 (enough to fill 132 SMs of an H100/H200 or
 * 148 of a B200 many times over; each thread then loops).
 */
static inline unsigned int
rs_cuda_grid_blocks(uint64_t n_items)
{
    uint64_t blocks = (n_items + RS_CUDA_BLOCK_THREADS - 1) / RS_CUDA_BLOCK_THREADS;
    return blocks == 0 ? 1u : blocks > 8192 ? 8192u : (unsigned int)blocks;
}

#ifdef __cplusplus
}
#endif

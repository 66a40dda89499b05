/* transport-cuda-unavailable.c — the cuda-local and nccl transports when this binary was
 * built without CUDA.
 *
 * Meson compiles this file instead of transport-cuda-local.c and transport-nccl.c when it
 * does not find the CUDA toolkit (or -Dcuda=disabled), so that `--transport cuda-local` and
 * `--transport nccl` name the cause and the fix rather than being unknown names; reshard
 * then exits 2 (a usage error: this binary cannot do it). */
#include "exec/transport-private.h"

static RsTransport *
cuda_unavailable_open(const RsTransportConfig *config, GError **error)
{
    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNAVAILABLE,
                "this reshard was built without CUDA: the cuda-local and nccl transports need "
                "the CUDA toolkit (nvcc, cudart; NCCL for nccl) at build time; reconfigure with "
                "meson configure -Dcuda=enabled -Dcudatoolkit_dir=/usr/local/cuda");
    return NULL;
}

const RsTransportClass rs_transport_cuda_local_class = {
    .name = "cuda-local",
    .description = "logical ranks on the GPUs of one process (not built: built without CUDA)",
    .available = FALSE,
    .open = cuda_unavailable_open,
};

const RsTransportClass rs_transport_nccl_class = {
    .name = "nccl",
    .description = "NCCL point-to-point on GPUs (not built: built without CUDA)",
    .available = FALSE,
    .open = cuda_unavailable_open,
};

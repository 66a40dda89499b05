/* transport-nccl-unavailable.c — the nccl transport when this binary was built with CUDA
 * but without NCCL (cuda-local is built).
 *
 * Meson compiles this file instead of transport-nccl.c when it finds no nccl.h and
 * libnccl (or -Dnccl=disabled). */
#include "exec/transport-private.h"

static RsTransport *
nccl_unavailable_open(const RsTransportConfig *config, GError **error)
{
    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNAVAILABLE,
                "this reshard was built without NCCL: install NCCL (nccl.h, libnccl.so) under "
                "the CUDA tree or a prefix and reconfigure with meson configure -Dnccl=enabled "
                "-Dnccl_dir=PREFIX; the cuda-local transport runs without it");
    return NULL;
}

const RsTransportClass rs_transport_nccl_class = {
    .name = "nccl",
    .description = "NCCL point-to-point on GPUs (not built: NCCL was not found)",
    .available = FALSE,
    .open = nccl_unavailable_open,
};

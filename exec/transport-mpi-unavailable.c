/* transport-mpi-unavailable.c — the mpi transport when this binary was built without MPI.
 *
 * Meson compiles this file instead of transport-mpi.c when it does not find an MPI
 * library (or -Dmpi=disabled), so that `--transport mpi` names the cause and the fix
 * rather than being an unknown name. */
#include "exec/transport-private.h"

static RsTransport *
mpi_unavailable_open(const RsTransportConfig *config, GError **error)
{
    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNAVAILABLE,
                "the mpi transport is not built into this reshard: install an MPI library "
                "(Debian: openmpi-bin libopenmpi-dev) and reconfigure with "
                "meson configure -Dmpi=enabled");
    return NULL;
}

const RsTransportClass rs_transport_mpi_class = {
    .name = "mpi",
    .description = "one process per rank (not built: MPI was not found)",
    .available = FALSE,
    .open = mpi_unavailable_open,
};

/* sweep-mpi-unavailable.c — the build without MPI: a sweep runs in one process; started by
 * mpirun it refuses, since every process would run the whole grid. */
#include "analysis/sweep-mpi.h"

gboolean
rs_sweep_mpi_start(guint *rank, guint *n_ranks, GError **error)
{
    *rank = 0;
    *n_ranks = 1;
    if (!rs_sweep_mpi_is_launched())
        return TRUE;
    g_set_error(error, RS_SWEEP_ERROR, RS_SWEEP_ERROR_FAILED,
                "started by mpirun, but this reshard was built without MPI (install "
                "libopenmpi-dev, e.g. with scripts/install-deps.sh, and rebuild with "
                "-Dmpi=enabled)");
    return FALSE;
}

gboolean
rs_sweep_mpi_gather(RsSweepResult *results, guint n, guint rank, guint n_ranks,
                    const GError *failure, guint failure_code, guint *code_out, GError **error)
{
    if (code_out != NULL)
        *code_out = failure ? failure_code : 0;
    if (failure != NULL) {
        g_propagate_error(error, g_error_copy(failure));
        return FALSE;
    }
    return TRUE;
}

void
rs_sweep_mpi_finish(void)
{
}

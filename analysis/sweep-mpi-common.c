/* sweep-mpi-common.c — what both MPI builds share: telling whether mpirun started us. */
#include "analysis/sweep-mpi.h"

gboolean
rs_sweep_mpi_is_launched(void)
{
    return g_getenv("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv("PMI_SIZE") != NULL ||
           g_getenv("PMIX_RANK") != NULL;
}

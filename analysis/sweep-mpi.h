/* sweep-mpi.h — a sweep over MPI ranks: `mpirun -np N reshard sweep …` deals the points
 * round-robin over the ranks (point i on rank i mod N), each rank runs its share on its
 * own thread pool, and rank 0 gathers every result (as GVariants: rs_sweep_result_to_variant)
 * and prints. Built from sweep-mpi.c when Meson finds MPI, else sweep-mpi-unavailable.c,
 * whose start fails under mpirun with how to get MPI. */
#pragma once

#include <glib.h>

#include "analysis/sweep.h"

G_BEGIN_DECLS

/**
 * rs_sweep_mpi_is_launched:
 * Returns: TRUE when this process was started by mpirun (Open MPI's OMPI_COMM_WORLD_SIZE,
 *   or PMI_SIZE / PMIX_RANK of other launchers, in the environment).
 */
gboolean rs_sweep_mpi_is_launched(void);

/**
 * rs_sweep_mpi_start:
 * @rank, @n_ranks: (out): this process's rank and the world size (0 and 1 when not
 *   launched by mpirun)
 * @error: RS_SWEEP_ERROR_FAILED when launched by mpirun and MPI is not built in, or
 *   MPI_Init fails
 * Returns: TRUE on success.
 */
gboolean rs_sweep_mpi_start(guint *rank, guint *n_ranks, GError **error);

/**
 * rs_sweep_mpi_gather:
 * @results: (array length=n): every rank's own results in their slots; on rank 0 the
 *   other ranks' results are filled in
 * @failure: (nullable): this rank's own failure (its results are then not sent), or NULL
 * @failure_code: a number the caller gives with @failure (reshard's exit code), sent along
 * @code_out: (out) (optional): rank 0: the failure_code of the failure it reports, 0 for
 *   an MPI error
 * @error: rank 0: a copy of @failure, else "rank R: MESSAGE" for the lowest rank that
 *   failed (a failing rank reports to rank 0 instead of leaving it waiting), or
 *   RS_SWEEP_ERROR_FAILED with the MPI error; other ranks: a copy of @failure
 * Collective: every rank calls it, failed or not, so that no rank waits for one that gave
 * up. Returns: TRUE when no rank failed.
 */
gboolean rs_sweep_mpi_gather(RsSweepResult *results, guint n, guint rank, guint n_ranks,
                             const GError *failure, guint failure_code, guint *code_out,
                             GError **error);

/** rs_sweep_mpi_finish: MPI_Finalize when rs_sweep_mpi_start() initialised MPI. */
void rs_sweep_mpi_finish(void);

G_END_DECLS

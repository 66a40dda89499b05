/* supervise.h — a watcher for a rank process started by mpirun, so that a rank that dies
 * by a signal ends the job with reshard's runtime exit code and a message naming it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * rs_cli_supervise_rank:
 * @cmd: the command, for the message ("run")
 *
 * Under mpirun (OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK in the environment), forks
 * before MPI starts: the child returns and becomes the MPI rank (as a rank started by a
 * wrapper script does; it dies with its parent, PR_SET_PDEATHSIG), the parent waits for it
 * and never returns. The parent forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and
 * SIGUSR2 to the child and then leaves by the same signal; it exits with the child's exit
 * status; for a child killed by a signal it did not forward (SIGKILL from the OOM killer
 * or --fault kill:R, SIGSEGV, …) it prints "reshard CMD: rank R (process P) was killed by
 * signal N (NAME)" and exits 1, which mpirun turns into the job's exit status (mpirun
 * itself would report 128 + N). Without mpirun, or when fork fails, returns at once.
 * Call before any thread is started.
 */
void rs_cli_supervise_rank(const char *cmd);

G_END_DECLS

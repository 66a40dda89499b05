/* supervise.c — see supervise.h. */
#include "cli/supervise.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t forwarded_signal;

static void
forward(int sig)
{
    forwarded_signal = sig;
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static const char *
rank_text(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (guint i = 0; i < G_N_ELEMENTS(vars); i++) {
        const char *v = g_getenv(vars[i]);
        if (v != NULL && *v != '\0')
            return v;
    }
    return NULL;
}

void
rs_cli_supervise_rank(const char *cmd)
{
    const char *rank = rank_text();
    if (rank == NULL)
        return;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return; /* run unsupervised */
    if (pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        if (getppid() != parent)
            _exit(1); /* the parent died before the line above */
        return;
    }
    child_pid = pid;
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    for (guint i = 0; i < G_N_ELEMENTS(sigs); i++)
        sigaction(sigs[i], &sa, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            _exit(1);
    }
    if (WIFEXITED(status))
        _exit(WEXITSTATUS(status));
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (forwarded_signal != 0 && sig == forwarded_signal) {
        /* The launcher ended the job: leave as it asked. */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    fprintf(stderr, "reshard %s: rank %s (process %ld) was killed by signal %d (%s)\n", cmd, rank,
            (long)pid, sig, strsignal(sig));
    _exit(1);
}

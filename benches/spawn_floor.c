/* The floor of starting tasks on this machine: N processes of PROGRAM, at
 * most P at a time, each started with posix_spawnp and reaped with waitpid,
 * and nothing else (no pipes, no process group, no bookkeeping).
 * Usage: spawn_floor N P PROGRAM [ARG...]   Built by benches/runtime.sh. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s N P PROGRAM [ARG...]\n", argv[0]); return 2; }
    long n = atol(argv[1]), p = atol(argv[2]), started = 0, running = 0, failed = 0;
    int status;
    pid_t pid;
    while (started < n || running > 0) {
        while (started < n && running < p) {
            if (posix_spawnp(&pid, argv[3], NULL, NULL, argv + 3, environ) != 0) { perror(argv[3]); return 1; }
            started++, running++;
        }
        if (wait(&status) < 0) { perror("wait"); return 1; }
        running--;
        failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    return failed > 0;
}

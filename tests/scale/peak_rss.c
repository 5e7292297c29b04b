/* peak_rss OUT CMD ARGS...: runs CMD and writes its peak resident set size (KB, ru_maxrss) to the file OUT;
 * exits with CMD's status.  The tests of the per-rank iteration measure with it: a process forked from the
 * test's Python inherits Python's peak (Linux keeps the larger of the peaks across exec), this small one
 * passes on only its own few hundred KB. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: peak_rss OUT CMD [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) return perror("fork"), 2;
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return perror("wait4"), 2;
    FILE *f = fopen(argv[1], "w");
    if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f)) return perror(argv[1]), 2;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

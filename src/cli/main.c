/* `hta`: installs the signal dispositions every command relies on, then dispatches to the command
 * named by the first argument. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "hta/outfile.h"

#ifndef HTA_VERSION
#define HTA_VERSION "0.1.0"
#endif

#define MAX_COMMANDS 64
static const cli_command *commands[MAX_COMMANDS];
static size_t ncommands;

void cli_register(const cli_command *c) {
    if (ncommands < MAX_COMMANDS) commands[ncommands++] = c;
}

const cli_command *const *cli_commands(size_t *n) {
    *n = ncommands;
    return commands;
}

const cli_command *cli_command_named(const char *name) {
    for (size_t i = 0; i < ncommands; i++)
        if (!strcmp(commands[i]->name, name)) return commands[i];
    return NULL;
}

static int by_order(const void *a, const void *b) {
    const cli_command *x = *(const cli_command *const *)a, *y = *(const cli_command *const *)b;
    return x->order - y->order;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: hta COMMAND PATH [options]\n\n"
            "Holistic Trace Analysis of PyTorch profiler (Kineto) traces.\n"
            "PATH is a trace file (.json, .json.gz) or a folder with one file per rank.\n\n"
            "commands:\n");
    for (size_t i = 0; i < ncommands; i++) fprintf(f, "  %-14s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "\nRun 'hta COMMAND --help' for a command's options and output tables.\n"
               "Every command prints tables: --format table (default), csv or json.\n"
               "Every command analyses part of a trace with --window: START:END from each rank's first\n"
               "event (10ms:25ms, 1500:, :2s) or annot:NAME[#K], the instances of an annotation such as\n"
               "annot:ProfilerStep#3 or annot:forward#0 (docs/windows.md).  A trace without ProfilerStep\n"
               "(inference) is analysed whole.\n");
}

/* A signal that ends the program removes the temporary files of the outputs being written
 * (hta_outfile_remove_temps: unlink only, async-signal-safe), then ends it as the signal would have:
 * SA_RESETHAND put the default action back, and the raised signal is delivered when this returns. */
static void on_fatal_signal(int sig) {
    hta_outfile_remove_temps();
    raise(sig);
}

static void install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) {
        struct sigaction old;
        /* a signal ignored by whoever started us (nohup's SIGHUP) stays ignored */
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(fatal[i], &sa, NULL);
    }
    /* A write past the file-size limit (ulimit -f) or into a pipe nobody reads any more fails with
     * EFBIG / EPIPE, which the writer reports with the output's path, instead of killing the program
     * silently (and, for SIGXFSZ, leaving the temporary file behind). */
    signal(SIGXFSZ, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv) {
    install_signals();
    qsort(commands, ncommands, sizeof *commands, by_order);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("hta %s\n", HTA_VERSION);
        return 0;
    }
    const cli_command *c = cli_command_named(cmd);
    if (c) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "hta: unknown command '%s'\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
}

/* `hta`: dispatches to the command named by the first argument. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

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

int main(int argc, char **argv) {
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

/*
 * A shell command run as a child process with a pipe each way, like popen(3)
 * but for both directions: we write lines to its standard input and read
 * what it prints on standard output and standard error (one stream), so a
 * peer can be driven one configuration at a time, side by side with attn.
 */
#ifndef ATTN_BENCH_COPROCESS_H
#define ATTN_BENCH_COPROCESS_H

#include <stdio.h>
#include <sys/types.h>

typedef struct bench_coprocess {
    pid_t pid;
    void (*previous_sigpipe)(int); /* restored by bench_coprocess_finish */
    FILE *to_child;   /* its standard input */
    FILE *from_child; /* its standard output and standard error */
} bench_coprocess;

/* Starts `/bin/sh -c command`. Returns 0, or -1 (errno set). Until
 * bench_coprocess_finish, SIGPIPE is ignored, so a child that died cannot
 * kill us: writes to it fail instead. One coprocess at a time. */
int bench_coprocess_start(bench_coprocess *coprocess, const char *command);

/* Writes one line and flushes; returns 0, or -1 when the child is gone. */
int bench_coprocess_send_line(bench_coprocess *coprocess, const char *line);

/* Reads one line without its newline (a longer one is cut, its rest
 * skipped); returns 0, or -1 at the end of the child's output. */
int bench_coprocess_read_line(bench_coprocess *coprocess, char *line, size_t size);

/* Closes the child's standard input (its cue to exit), discards what it
 * still prints, waits for it. Returns its wait status, or -1. */
int bench_coprocess_finish(bench_coprocess *coprocess);

#endif /* ATTN_BENCH_COPROCESS_H */

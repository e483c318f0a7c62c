/*
 * The frame both sweep commands (run, sdpa) measure their configurations
 * in: the CSV opened, the record started (run_record.h), the machine
 * measured and printed (run_machine.h) and the command's own header lines;
 * then the configurations group by group -- the command measures a group
 * (its sessions in rounds, its peers) and hands each row to
 * bench_sweep_frame_report, which prints it, writes its CSV row, says a
 * failure on stderr and moves the progress -- then the footer, the JSON and
 * the exit status. What the commands do differently is their kind: the
 * data and functions of bench_sweep_kind, each given the kind's context.
 */
#ifndef ATTN_BENCH_SWEEP_FRAME_H
#define ATTN_BENCH_SWEEP_FRAME_H

#include <stddef.h>
#include <stdio.h>

#include "machine/bandwidth.h"
#include "pipeline/run_machine.h"
#include "pipeline/run_record.h"
#include "util/progress.h"

typedef struct bench_sweep_frame bench_sweep_frame;

/* What the frame needs of a command's sweep besides the record. */
typedef struct bench_sweep_plan {
    size_t count; /* configurations */
    bench_progress_mode progress;
    const char *json_path; /* NULL: no JSON */
} bench_sweep_plan;

typedef struct bench_sweep_kind {
    const char *who;      /* the messages' prefix: "attn-bench", "attn-bench sdpa" */
    const char *included; /* what the footer's wall time includes */

    /* The CSV, its header written (or, resuming, opened to append); NULL
     * with errno set when it cannot be. */
    FILE *(*open_csv)(void *context);
    /* Fills the plan, the record's command members (mode, command line, CSV
     * path, settings writer; bench_run_record_start with the peers' names)
     * and what the machine measurement needs; first of all. */
    void (*describe)(void *context, bench_sweep_plan *plan, bench_run_record *record,
                     bench_run_machine_request *machine);
    /* After the machine's lines: the command's own, its peers started, the
     * table's header. */
    void (*begin)(void *context, bench_sweep_frame *frame);
    /* The end (exclusive) of the group that starts at configuration first. */
    size_t (*group_end)(void *context, size_t first);
    /* Measures configurations [first, last) and reports each, in order
     * (bench_sweep_frame_report, or bench_sweep_frame_skip). */
    void (*run_group)(void *context, bench_sweep_frame *frame, size_t first, size_t last);
    /* The predicted seconds of configuration i, and its label (progress,
     * failures). */
    double (*cost)(void *context, size_t i);
    void (*label)(void *context, size_t i, char *label, size_t size);
    /* After the last group: the peers stopped, asked[k] whether peer k was
     * asked for (the record's "not needed" / "not asked for"). */
    void (*end)(void *context, bench_sweep_frame *frame, int *asked);
    /* Footer lines before the common ones (NULL: none). */
    void (*footer)(void *context, const bench_sweep_frame *frame);
    /* After the JSON (NULL: nothing): 0, or 1 when an output failed. */
    int (*outputs)(void *context, const bench_sweep_frame *frame);
} bench_sweep_kind;

struct bench_sweep_frame {
    const bench_sweep_kind *kind;
    void *context;
    bench_sweep_plan plan;
    bench_run_record record;
    bench_bandwidth_buffer buffer; /* kept for cold caches (request.keep_buffer) */
    bench_progress progress;
    FILE *csv;
    size_t measured, resumed, failures;
    int csv_failed;
};

/* Configuration i's row: print_row prints it on stdout (the progress line
 * hidden first), write_row writes its CSV row (0, or -1 on a write error);
 * failed: error is said on stderr with the configuration's label. */
typedef struct bench_sweep_row {
    void (*print_row)(void *context, const void *point);
    int (*write_row)(FILE *csv, const void *point);
    const void *point;
    int failed;
    const char *error;
} bench_sweep_row;
void bench_sweep_frame_report(bench_sweep_frame *frame, size_t i, const bench_sweep_row *row);

/* Configuration i kept from the CSV (--resume): counted, not measured. */
void bench_sweep_frame_skip(bench_sweep_frame *frame, size_t i);

/* Runs the sweep of the kind's functions on context; returns the exit
 * status: 0, or 1 when a configuration failed, an output could not be
 * written or the machine could not be measured (the bandwidth buffer). */
int bench_sweep_frame_run(const bench_sweep_kind *kind, void *context);

#endif /* ATTN_BENCH_SWEEP_FRAME_H */

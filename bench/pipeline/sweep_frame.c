#include "pipeline/sweep_frame.h"

#include <stdlib.h>
#include <string.h>

enum { LABEL_SIZE = 512 };

void bench_sweep_frame_report(bench_sweep_frame *frame, size_t i, const bench_sweep_row *row)
{
    const bench_sweep_kind *kind = frame->kind;
    char label[LABEL_SIZE];
    kind->label(frame->context, i, label, sizeof label);
    bench_progress_hide(&frame->progress);
    row->print_row(frame->context, row->point);
    if (row->failed) {
        fprintf(stderr, "%s: %s: %s\n", kind->who, label, row->error);
        frame->failures++;
    }
    if (!frame->csv_failed && row->write_row(frame->csv, row->point) != 0) {
        perror(frame->record.csv_path);
        frame->csv_failed = 1;
    }
    frame->measured++;
    bench_progress_step(&frame->progress, kind->cost(frame->context, i), label);
}

void bench_sweep_frame_skip(bench_sweep_frame *frame, size_t i)
{
    const bench_sweep_kind *kind = frame->kind;
    char label[LABEL_SIZE];
    kind->label(frame->context, i, label, sizeof label);
    frame->resumed++;
    bench_progress_step(&frame->progress, 0.0, label);
    frame->progress.total_cost -= kind->cost(frame->context, i);
}

static void run_groups(bench_sweep_frame *frame)
{
    const bench_sweep_kind *kind = frame->kind;
    double total_cost = 0.0;
    for (size_t i = 0; i < frame->plan.count; ++i)
        total_cost += kind->cost(frame->context, i);
    bench_progress_start(&frame->progress, frame->plan.progress, stderr, frame->plan.count,
                         total_cost);
    for (size_t first = 0, last; first < frame->plan.count; first = last) {
        last = kind->group_end(frame->context, first);
        kind->run_group(frame->context, frame, first, last);
    }
    bench_progress_finish(&frame->progress);
}

/* The footer, the JSON and the kind's outputs; whether one failed. */
static int finish(bench_sweep_frame *frame)
{
    const bench_sweep_kind *kind = frame->kind;
    int asked[BENCH_RUN_PEER_MAX] = {0};
    kind->end(frame->context, frame, asked);
    if (fclose(frame->csv) != 0 && !frame->csv_failed) {
        perror(frame->record.csv_path);
        frame->csv_failed = 1;
    }
    bench_run_record_stop(&frame->record, asked);
    if (kind->footer)
        kind->footer(frame->context, frame);
    bench_run_record_print_footer(stdout, &frame->record, frame->measured, frame->resumed,
                                  kind->included);
    int failed = frame->csv_failed;
    if (frame->plan.json_path) {
        char error[512];
        if (bench_run_record_write_json(frame->plan.json_path, &frame->record, error,
                                        sizeof error) != 0) {
            fprintf(stderr, "%s: JSON: %s\n", kind->who, error);
            failed = 1;
        } else {
            printf("# JSON: %s\n", frame->plan.json_path);
        }
    }
    if (kind->outputs)
        failed |= kind->outputs(frame->context, frame);
    return failed;
}

int bench_sweep_frame_run(const bench_sweep_kind *kind, void *context)
{
    bench_sweep_frame *frame = calloc(1, sizeof *frame);
    if (!frame) {
        fprintf(stderr, "%s: out of memory\n", kind->who);
        return 1;
    }
    frame->kind = kind;
    frame->context = context;
    bench_run_machine_request machine;
    memset(&machine, 0, sizeof machine);
    machine.who = kind->who;
    kind->describe(context, &frame->plan, &frame->record, &machine);
    frame->csv = kind->open_csv(context);
    if (!frame->csv) {
        perror(frame->record.csv_path);
        free(frame);
        return 1;
    }
    if (bench_run_machine_measure(&frame->record, &machine, &frame->buffer) != 0) {
        fclose(frame->csv);
        free(frame);
        return 1;
    }
    bench_run_machine_print(stdout, &frame->record);
    kind->begin(context, frame);
    fflush(stdout);
    run_groups(frame);
    const int failed = finish(frame);
    if (frame->failures)
        fprintf(stderr, "%s: %zu of %zu configurations failed\n", kind->who, frame->failures,
                frame->measured);
    const int status = failed || frame->failures ? 1 : 0;
    bench_bandwidth_buffer_destroy(&frame->buffer);
    bench_phase_profile_log_free(&frame->record.profiles);
    free(frame);
    return status;
}

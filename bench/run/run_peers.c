#include "run/run_peers.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/option_values.h"
#include "peers/peer_naive.h"

/* A group's shapes: one and its dropout twins, at most one per --dropout value. */
_Static_assert(BENCH_RUN_PEER_ENTRIES >= BENCH_MAX_DROPOUTS,
               "every shape of a group has its own peers' entry");

const unsigned bench_run_peer_bits[BENCH_PEER_KINDS] = {
    BENCH_PEER_NAIVE,  BENCH_PEER_NUMPY, BENCH_PEER_NUMPY32, BENCH_PEER_TORCH,
    BENCH_PEER_PYTHON, BENCH_PEER_ORT,   BENCH_PEER_OPENVINO, BENCH_PEER_GGML};

static void announce_process(const bench_peer_process *process, size_t kind, int started)
{
    if (!started) {
        printf("# %s peer skipped: %s\n#   (%s)\n", process->name, process->note,
               bench_peer_kind_scripts[kind].missing);
        return;
    }
    printf("# %s peer: %s; %s (threads %zu)\n", process->name, process->info, process->python,
           process->threads);
    printf("#   BLAS: %s\n#   computes: %s\n", process->blas, process->impl);
}

void bench_run_peers_stop(bench_run_peers *peers)
{
    for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS; ++k)
        bench_peer_summary_stop(&peers->record->peers[k], &peers->processes[k]);
    peers->threads = 0;
}

void bench_run_peers_start(bench_run_peers *peers, size_t threads)
{
    const bench_options *o = peers->options;
    bench_run_peers_stop(peers);
    peers->threads = threads;
    for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS; ++k) {
        if (!(o->peers & bench_run_peer_bits[k]))
            continue;
        const int torch = k == BENCH_PEER_KIND_TORCH, python = k == BENCH_PEER_KIND_PYTHON;
        const int numpy = k == BENCH_PEER_KIND_NUMPY || k == BENCH_PEER_KIND_NUMPY32;
        const char *override = torch ? o->common.torch_script : numpy ? o->numpy_script : NULL;
        char in_dir[4096];
        if (!override && o->common.peer_dir) {
            snprintf(in_dir, sizeof in_dir, "%s/%s", o->common.peer_dir,
                     bench_peer_kind_scripts[k].run);
            override = access(in_dir, R_OK) == 0 ? in_dir : NULL;
        }
        const bench_peer_process_setup setup = {
            .name = bench_peer_kind_names[k],
            .script_name = bench_peer_kind_scripts[k].run,
            .script_options = bench_peer_kind_scripts[k].run_options,
            .script_override = override,
            /* the engines are installed beside PyTorch (./attn.sh peers) */
            .pythons = numpy ? o->python : python ? o->common.attn_python : o->common.torch_python,
            .threads = threads,
            .policy = &o->common.repeat,
            .seed = o->common.seed,
        };
        bench_peer_summary *summary = &peers->record->peers[k];
        const int ran_before = summary->status && strcmp(summary->status, "ran") == 0;
        const int started = bench_peer_process_start(&peers->processes[k], &setup) == 0;
        if (started || ran_before || !summary->status) /* a repeated failure is said once */
            announce_process(&peers->processes[k], k, started);
        bench_peer_summary_take(summary, &peers->processes[k], started);
    }
}

void bench_run_peers_new_group(bench_run_peers *peers)
{
    peers->entry_count = 0;
}

/* Whether the python peer k times this shape (dropout: only torch drops). */
static int times_shape(const bench_run_peers *peers, size_t k, const bench_shape *shape)
{
    return (peers->options->peers & bench_run_peer_bits[k]) &&
           (!(shape->dropout > 0.0) || k == BENCH_PEER_KIND_TORCH);
}

size_t bench_run_peers_begin(bench_run_peers *peers, const bench_shape *shape, int *fresh)
{
    for (size_t e = 0; e < peers->entry_count; ++e)
        if (bench_shape_equal(&peers->entries[e].shape, shape)) {
            *fresh = 0;
            return e;
        }
    if (peers->entry_count == BENCH_RUN_PEER_ENTRIES)
        peers->entry_count = 0; /* not reached: a group has at most that many shapes */
    const size_t e = peers->entry_count++;
    bench_run_peer_entry *entry = &peers->entries[e];
    memset(entry, 0, sizeof *entry);
    entry->shape = *shape;
    entry->measuring = 1;
    for (size_t k = 0; k < BENCH_PEER_KINDS; ++k)
        entry->timings[k].check_error = -1.0;
    if (peers->threads != shape->threads)
        bench_run_peers_start(peers, shape->threads);
    for (size_t k = 0; k < BENCH_PEER_KINDS && shape->dropout > 0.0; ++k)
        if (k != BENCH_PEER_KIND_TORCH)
            snprintf(entry->timings[k].note, sizeof entry->timings[k].note,
                     "no attention dropout here (--dropout above 0)");
    *fresh = 1;
    return e;
}

void bench_run_peers_round(bench_run_peers *peers, size_t e, size_t round, size_t rounds)
{
    bench_run_peer_entry *entry = &peers->entries[e];
    for (size_t k = BENCH_PEER_KIND_NUMPY; entry->measuring && k < BENCH_PEER_KINDS; ++k) {
        if (entry->done[k] || !times_shape(peers, k, &entry->shape))
            continue;
        bench_peer_process_time(&peers->processes[k], &entry->shape, round, rounds,
                                &entry->timings[k]);
        /* numbers (a peer that times a shape whole answers at once), a
         * note, or a peer that does not run: no more rounds */
        entry->done[k] = !entry->timings[k].pending;
    }
}

void bench_run_peers_end(bench_run_peers *peers, size_t e, const bench_problem *problem,
                         bench_point *point)
{
    const bench_options *o = peers->options;
    bench_run_peer_entry *entry = &peers->entries[e];
    if (entry->measuring) {
        for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS; ++k)
            entry->timings[k].pending = 0; /* a round never answered: no numbers */
        if ((o->peers & BENCH_PEER_NAIVE) && problem->X && !(entry->shape.dropout > 0.0)) {
            bench_naive_peer_time(problem, &o->naive_repeat, o->naive_max_T,
                                  &entry->timings[BENCH_PEER_KIND_NAIVE]);
            peers->record->peers[BENCH_PEER_KIND_NAIVE].measured +=
                (size_t)entry->timings[BENCH_PEER_KIND_NAIVE].measured;
        }
        entry->measuring = 0;
    }
    memcpy(point->peers, entry->timings, sizeof point->peers);
}

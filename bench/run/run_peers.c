#include "run/run_peers.h"

#include <stdio.h>
#include <string.h>

#include "peers/peer_naive.h"

const unsigned bench_run_peer_bits[BENCH_PEER_KINDS] = {BENCH_PEER_NAIVE, BENCH_PEER_NUMPY,
                                                        BENCH_PEER_NUMPY32, BENCH_PEER_TORCH,
                                                        BENCH_PEER_PYTHON};

static void announce_process(const bench_peer_process *process, int started)
{
    if (!started) {
        printf("# %s peer skipped: %s\n", process->name, process->note);
        if (strcmp(process->name, "torch") == 0)
            printf("#   (optional: ./attn.sh peers sets up PyTorch 2.x from PyPI where "
                   "attn-bench looks first)\n");
        else if (strcmp(process->name, "python") == 0)
            printf("#   (./attn.sh python installs attn's Python package into .venv-python, "
                   "where attn-bench looks first)\n");
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
    /* numpy32 is numpy_peer.py --float32: the lesson's code kept in float32 */
    static const char *const scripts[BENCH_PEER_KINDS] = {
        NULL, "numpy_peer.py", "numpy_peer.py", "torch_peer.py", "attn_python_peer.py"};
    const bench_options *o = peers->options;
    bench_run_peers_stop(peers);
    peers->threads = threads;
    for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS; ++k) {
        if (!(o->peers & bench_run_peer_bits[k]))
            continue;
        const int torch = k == BENCH_PEER_KIND_TORCH, python = k == BENCH_PEER_KIND_PYTHON;
        const bench_peer_process_setup setup = {
            .name = bench_peer_kind_names[k],
            .script_name = scripts[k],
            .script_options = k == BENCH_PEER_KIND_NUMPY32 ? "--float32" : NULL,
            .script_override = torch ? o->torch_script : python ? NULL : o->numpy_script,
            .pythons = torch ? o->torch_python : python ? o->attn_python : o->python,
            .threads = threads,
            .policy = &o->repeat,
            .seed = o->seed,
        };
        bench_peer_summary *summary = &peers->record->peers[k];
        const int ran_before = summary->status && strcmp(summary->status, "ran") == 0;
        const int started = bench_peer_process_start(&peers->processes[k], &setup) == 0;
        if (started || ran_before || !summary->status) /* a repeated failure is said once */
            announce_process(&peers->processes[k], started);
        bench_peer_summary_take(summary, &peers->processes[k], started);
    }
}

void bench_run_peers_time(bench_run_peers *peers, const bench_problem *problem, bench_point *point)
{
    const bench_options *o = peers->options;
    const bench_shape *shape = &point->config.shape;
    if (!peers->have_shape || !bench_shape_equal(&peers->shape, shape)) {
        memset(peers->timings, 0, sizeof peers->timings);
        if (peers->threads != shape->threads)
            bench_run_peers_start(peers, shape->threads);
        if (shape->dropout > 0.0) { /* only the torch peer drops */
            for (size_t k = 0; k < BENCH_PEER_KINDS; ++k)
                snprintf(peers->timings[k].note, sizeof peers->timings[k].note,
                         "no attention dropout here (--dropout above 0)");
            bench_peer_process_time(&peers->processes[BENCH_PEER_KIND_TORCH], shape,
                                    &peers->timings[BENCH_PEER_KIND_TORCH]);
        } else if ((o->peers & BENCH_PEER_NAIVE) && problem->X) {
            bench_naive_peer_time(problem, &o->naive_repeat, o->naive_max_T,
                                  &peers->timings[BENCH_PEER_KIND_NAIVE]);
            peers->record->peers[BENCH_PEER_KIND_NAIVE].measured +=
                (size_t)peers->timings[BENCH_PEER_KIND_NAIVE].measured;
        }
        for (size_t k = BENCH_PEER_KIND_NUMPY; k < BENCH_PEER_KINDS && !(shape->dropout > 0.0);
             ++k)
            bench_peer_process_time(&peers->processes[k], shape, &peers->timings[k]);
        peers->shape = *shape;
        peers->have_shape = 1;
    }
    memcpy(point->peers, peers->timings, sizeof point->peers);
}

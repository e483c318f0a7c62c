#include "run/sdpa_peer_set.h"

#include <stdio.h>
#include <string.h>

#include "machine/blas_info.h"
#include "util/text.h"

void bench_sdpa_peers_stop(bench_sdpa_peer_set *set)
{
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k)
        bench_peer_summary_stop(&set->summaries[k], &set->processes[k]);
    set->threads = 0;
}

void bench_sdpa_peers_start(bench_sdpa_peer_set *set, size_t threads)
{
    const bench_sdpa_options *o = set->options;
    bench_sdpa_peers_stop(set);
    set->threads = threads;
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k) {
        if (!o->peers[k])
            continue;
        const int python = k == BENCH_SDPA_PEER_PYTHON;
        const bench_sdpa_peer_setup setup = {
            .kind = k,
            .script_override = o->common.torch_script,
            .script_dir = o->common.peer_dir,
            .pythons = python ? o->common.attn_python : o->common.torch_python,
            .threads = threads,
            .policy = &o->common.repeat,
            .seed = (unsigned long long)o->common.seed,
            .flush_mib = set->flush_mib,
        };
        bench_peer_process *peer = &set->processes[k];
        bench_peer_summary *summary = &set->summaries[k];
        const int tried_before = summary->status != NULL;
        const int started = bench_sdpa_peer_start(peer, &setup) == 0;
        if (started)
            printf("# %s peer: %s; %s (threads %zu)\n#   build: %s\n#   computes: %s\n",
                   bench_sdpa_peer_names[k], peer->info, peer->python, threads, peer->blas,
                   peer->impl);
        else if (!tried_before) /* a repeated failure is said once */
            printf("# %s peer skipped: %s\n#   (%s)\n", bench_sdpa_peer_names[k], peer->note,
                   bench_peer_kind_scripts[BENCH_SDPA_PEER_FIRST + k].missing);
        fflush(stdout);
        bench_peer_summary_take(summary, peer, started);
    }
}

/* The peers' blocks of a round of an entry (bench_sdpa_between's function). */
static void peer_block(void *context, size_t round, size_t rounds)
{
    bench_sdpa_peer_entry *entry = context;
    bench_sdpa_peer_set *set = entry->set;
    const int settle = bench_size_list_max(&set->options->common.threads) > 1;
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k) {
        bench_peer_timing *timing = &entry->timings[k];
        if (!set->options->peers[k] || !set->processes[k].running ||
            (round > 0 && !timing->pending))
            continue; /* not asked for, not running, or done (a note) */
        if (entry->shape.dropout > 0.0 && k >= BENCH_SDPA_PEER_ORT) {
            bench_copy_text(timing->note, sizeof timing->note,
                            "an inference engine: no attention dropout (--dropout above 0)");
            continue;
        }
        if (settle)
            bench_settle_blas_threads(); /* the threads of what ran before stop polling */
        bench_sdpa_peer_time(&set->processes[k], &entry->shape, round, rounds, timing);
    }
    if (settle)
        bench_settle_blas_threads();
}

void bench_sdpa_peers_new_group(bench_sdpa_peer_set *set)
{
    set->entry_count = 0;
}

size_t bench_sdpa_peers_begin(bench_sdpa_peer_set *set, const bench_sdpa_shape *shape,
                              bench_sdpa_between *between)
{
    between->block = NULL;
    between->context = NULL;
    for (size_t i = 0; i < set->entry_count; ++i)
        if (bench_sdpa_shape_equal(&set->entries[i].shape, shape))
            return i; /* measured by the blocks of an earlier configuration */
    const size_t i = set->entry_count < BENCH_SDPA_GROUP_MAX ? set->entry_count++
                                                             : BENCH_SDPA_GROUP_MAX - 1;
    bench_sdpa_peer_entry *entry = &set->entries[i];
    memset(entry, 0, sizeof *entry);
    entry->set = set;
    entry->shape = *shape;
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k)
        entry->timings[k].check_error = -1.0;
    int any = 0;
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k)
        any |= set->options->peers[k];
    if (!any)
        return i;
    if (set->threads != shape->threads)
        bench_sdpa_peers_start(set, shape->threads);
    between->block = peer_block;
    between->context = entry;
    return i;
}

void bench_sdpa_peers_end(const bench_sdpa_peer_set *set, size_t entry, bench_sdpa_point *point)
{
    for (size_t k = 0; k < BENCH_SDPA_PEER_COUNT; ++k) {
        point->peers[k] = set->entries[entry].timings[k];
        point->peers[k].pending = 0;
        if (!set->options->peers[k]) {
            memset(&point->peers[k], 0, sizeof point->peers[k]);
            point->peers[k].check_error = -1.0;
        }
    }
}

#include "peers/sdpa_peer.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/text.h"

#ifndef ATTN_BENCH_SOURCE_PYTHON_DIR
#error "define ATTN_BENCH_SOURCE_PYTHON_DIR: the source tree's python/src"
#endif


/* The path of the libattn this process runs on (from /proc/self/maps), or "". */
static void running_library(char *path, size_t size)
{
    path[0] = '\0';
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4608];
    while (maps && !path[0] && fgets(line, sizeof line, maps))
        if (strstr(line, "/libattn.so")) { /* "... /dir/libattn.so.0.1.0\n" */
            line[strcspn(line, "\n")] = '\0';
            bench_copy_text(path, size, strchr(line, '/'));
        }
    if (maps)
        fclose(maps);
}

/* The script's own options: the cold-cache read; for the torch script the
 * function, and for the python peer the library and where the package's
 * source is. */
static int script_options(const bench_sdpa_peer_setup *setup, char *options, size_t size)
{
    snprintf(options, size, "--flush-mib %zu", setup->flush_mib);
    if (setup->kind == BENCH_SDPA_PEER_TORCH)
        return bench_append_text(options, size, " --function torch");
    if (setup->kind != BENCH_SDPA_PEER_PYTHON)
        return 0;
    int failed = bench_append_text(options, size, " --function attn");
    char library[4096];
    running_library(library, sizeof library);
    if (library[0])
        failed |= bench_append_text(options, size, " --attn-library ") ||
                  bench_append_shell_quoted(options, size, library);
    if (access(ATTN_BENCH_SOURCE_PYTHON_DIR, R_OK) == 0)
        failed |= bench_append_text(options, size, " --attn-source ") ||
                  bench_append_shell_quoted(options, size, ATTN_BENCH_SOURCE_PYTHON_DIR);
    return failed ? -1 : 0;
}

int bench_sdpa_peer_start(bench_peer_process *peer, const bench_sdpa_peer_setup *setup)
{
    char options[9000], in_dir[4096];
    if (script_options(setup, options, sizeof options) != 0) {
        memset(peer, 0, sizeof *peer);
        snprintf(peer->note, sizeof peer->note, "the peer's options do not fit a line");
        return -1;
    }
    const char *script = bench_peer_kind_scripts[BENCH_SDPA_PEER_FIRST + setup->kind].sdpa;
    const int uses_torch_script =
        setup->kind == BENCH_SDPA_PEER_TORCH || setup->kind == BENCH_SDPA_PEER_PYTHON;
    const char *override = uses_torch_script ? setup->script_override : NULL;
    if (!override && setup->script_dir) {
        snprintf(in_dir, sizeof in_dir, "%s/%s", setup->script_dir, script);
        override = access(in_dir, R_OK) == 0 ? in_dir : NULL;
    }
    const bench_peer_process_setup process = {
        .name = bench_sdpa_peer_names[setup->kind],
        .script_name = script,
        .script_options = options,
        .script_override = override,
        .pythons = setup->pythons,
        .threads = setup->threads,
        .policy = setup->policy,
        .seed = (uint64_t)setup->seed,
    };
    return bench_peer_process_start(peer, &process);
}

/* "DTYPE OP B NH NH_KV TQ TK HS HS_V CAUSAL WINDOW MASK LENGTHS CACHE LAYOUT
 *  SCENARIO STEPS ROUND/ROUNDS" (ROUND 1-based), then " dropout=P" when the
 *  row has dropout (sdpa_peer_protocol.py) */
static int format_line(const bench_sdpa_shape *s, size_t round, size_t rounds, char *text,
                       size_t size)
{
    char lengths[4096];
    if (bench_sdpa_format_lengths(s, lengths, sizeof lengths) != 0)
        return -1;
    const int written = snprintf(
        text, size, "%s %s %zu %zu %zu %zu %zu %zu %zu %d %zu %s %s %s %s %s %zu %zu/%zu",
        bench_dtype_name(s->dtype), bench_op_names[s->op], s->B, s->NH, s->NH_kv, s->Tq, s->Tk,
        s->hs, s->hs_v, s->causal, s->window, bench_sdpa_mask_names[s->mask], lengths,
        bench_sdpa_cache_names[s->cache], bench_sdpa_layout_names[s->layout],
        bench_sdpa_scenario_names[s->scenario], s->steps, round + 1, rounds);
    if (written <= 0 || (size_t)written >= size)
        return -1;
    if (s->dropout > 0.0) {
        char dropout[48];
        snprintf(dropout, sizeof dropout, " dropout=%.17g", s->dropout);
        return bench_append_text(text, size, dropout);
    }
    return 0;
}

void bench_sdpa_peer_time(bench_peer_process *peer, const bench_sdpa_shape *shape, size_t round,
                          size_t rounds, bench_peer_timing *result)
{
    char text[8192];
    if (format_line(shape, round, rounds, text, sizeof text) != 0) {
        memset(result, 0, sizeof *result);
        result->check_error = -1.0;
        bench_copy_text(result->note, sizeof result->note, "the lengths do not fit a line");
        return;
    }
    bench_peer_process_ask(peer, text, result);
}

#include "sdpa/sdpa_peer.h"

#include <stdio.h>
#include <string.h>

#include "util/text.h"

int bench_sdpa_peer_start(bench_peer_process *peer, const bench_sdpa_peer_setup *setup)
{
    char options[64];
    snprintf(options, sizeof options, "--flush-mib %zu", setup->flush_mib);
    const bench_peer_process_setup process = {
        .name = "torch",
        .script_name = "torch_sdpa_peer.py",
        .script_options = options,
        .script_override = setup->script_override,
        .pythons = setup->pythons,
        .threads = setup->threads,
        .policy = setup->policy,
        .seed = (uint64_t)setup->seed,
    };
    return bench_peer_process_start(peer, &process);
}

/* "DTYPE OP B NH NH_KV TQ TK HS HS_V CAUSAL WINDOW MASK LENGTHS CACHE" */
static int format_line(const bench_sdpa_shape *s, char *text, size_t size)
{
    char lengths[4096];
    if (bench_sdpa_format_lengths(s, lengths, sizeof lengths) != 0)
        return -1;
    const int written =
        snprintf(text, size, "%s %s %zu %zu %zu %zu %zu %zu %zu %d %zu %s %s %s",
                 bench_dtype_name(s->dtype), bench_op_names[s->op], s->B, s->NH, s->NH_kv,
                 s->Tq, s->Tk, s->hs, s->hs_v, s->causal, s->window,
                 bench_sdpa_mask_names[s->mask], lengths, bench_sdpa_cache_names[s->cache]);
    return written > 0 && (size_t)written < size ? 0 : -1;
}

/* The rest of a line after "KEYWORD LINE ", or NULL. */
static const char *after(const char *line, const char *keyword, const char *text)
{
    const size_t k = strlen(keyword), n = strlen(text);
    if (strncmp(line, keyword, k) != 0 || line[k] != ' ' || strncmp(line + k + 1, text, n) != 0)
        return NULL;
    const char *rest = line + k + 1 + n;
    return *rest == ' ' ? rest + 1 : *rest == '\0' ? rest : NULL;
}

static void stopped(bench_peer_process *peer, bench_sdpa_peer_timing *result)
{
    bench_peer_process_stop(peer);
    snprintf(peer->ended, sizeof peer->ended, "%.200s ended early%s%.400s", peer->python,
             peer->last_other_line[0] ? ": " : "", peer->last_other_line);
    bench_copy_text(result->note, sizeof result->note, peer->ended);
    if (!peer->note[0])
        bench_copy_text(peer->note, sizeof peer->note, peer->ended);
}

void bench_sdpa_peer_time(bench_peer_process *peer, const bench_sdpa_shape *shape,
                          bench_sdpa_peer_timing *result)
{
    memset(result, 0, sizeof *result);
    result->check_error = -1.0;
    if (!peer->running)
        return;
    char text[8192], line[8192];
    if (format_line(shape, text, sizeof text) != 0) {
        bench_copy_text(result->note, sizeof result->note, "the lengths do not fit a line");
        return;
    }
    if (bench_coprocess_send_line(&peer->process, text) != 0) {
        stopped(peer, result);
        return;
    }
    while (bench_coprocess_read_line(&peer->process, line, sizeof line) == 0) {
        const char *rest = after(line, "result", text);
        if (rest) {
            if (sscanf(rest, "%lf %lf %zu %15s %lf %95s", &result->timing.median_s,
                       &result->timing.min_s, &result->timing.repeats, result->out_dtype,
                       &result->check_error, result->mask) == 6) {
                result->measured = 1;
                peer->measured++;
            } else {
                snprintf(result->note, sizeof result->note, "unreadable result: %.120s", rest);
            }
            return;
        }
        const char *unsupported = after(line, "unsupported", text);
        const char *error = after(line, "error", text);
        if (unsupported || error) {
            bench_copy_text(result->note, sizeof result->note, unsupported ? unsupported : error);
            if (error && !peer->note[0])
                snprintf(peer->note, sizeof peer->note, "%.300s: %.600s", text, error);
            return;
        }
        if (line[0])
            bench_copy_text(peer->last_other_line, sizeof peer->last_other_line, line);
    }
    stopped(peer, result);
}

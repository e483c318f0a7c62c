/*
 * Timing in rounds (util/timing.h: bench_round_policy, bench_time_round,
 * bench_round_samples_finish) on stand-in calls that record the order they
 * ran in: two calls' blocks alternating round by round as a caller runs
 * them, the warmups in the first round and one untimed call in the later
 * ones, the sample counts each block's policy asks for, the cap, a failing
 * call's result, and the median and min over every round. Exits 1 on the
 * first assertion that does not hold.
 */
#include <stdio.h>
#include <string.h>

#include "util/timing.h"

enum { MAX_LOG = 256 };

static char order[MAX_LOG + 1];
static size_t logged;
static int fail_on_call; /* the call (1-based, over both) that returns 7; 0: none */

typedef struct stand_in {
    char name;
} stand_in;

static int record(void *context)
{
    const stand_in *s = context;
    if (logged < MAX_LOG)
        order[logged] = s->name;
    logged++;
    return fail_on_call != 0 && (int)logged == fail_on_call ? 7 : 0;
}

static int failures;

#define EXPECT(condition)                                                                  \
    do {                                                                                   \
        if (!(condition)) {                                                                \
            fprintf(stderr, "timing_test: %s:%d: %s\n", __FILE__, __LINE__, #condition);   \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

/* Calls a and b timed in `rounds` rounds, a's block then b's; the first
 * nonzero result of a block, or 0. */
static int run(const bench_repeat_policy *policy, size_t rounds, bench_timing *timings)
{
    static stand_in a = {'a'}, b = {'b'};
    stand_in *calls[2] = {&a, &b};
    bench_round_samples samples[2] = {{0}, {0}};
    memset(order, 0, sizeof order);
    logged = 0;
    int result = 0;
    for (size_t round = 0; round < rounds && result == 0; ++round)
        for (size_t k = 0; k < 2 && result == 0; ++k)
            result = bench_time_round(&samples[k], policy, round, rounds, NULL, record, calls[k]);
    for (size_t k = 0; k < 2; ++k)
        if (bench_round_samples_finish(&samples[k], &timings[k]) != 0)
            timings[k].repeats = 0;
    return result;
}

int main(void)
{
    bench_timing t[2];

    /* three rounds of one timed call: the warmup first, then (untimed, timed) */
    const bench_repeat_policy three = {1, 3, 100, 0.0};
    fail_on_call = 0;
    EXPECT(run(&three, 3, t) == 0);
    EXPECT(strcmp(order, "aabb" "aabb" "aabb") == 0);
    EXPECT(t[0].repeats == 3 && t[1].repeats == 3);
    EXPECT(t[0].min_s <= t[0].median_s && t[1].min_s <= t[1].median_s);

    /* one round is the policy itself: warmup 2, then min_repeats calls */
    const bench_repeat_policy two_warm = {2, 4, 100, 0.0};
    EXPECT(run(&two_warm, 1, t) == 0);
    EXPECT(strcmp(order, "aaaaaabbbbbb") == 0);

    /* a time floor no call reaches: each round's ceil(max / R) caps it */
    const bench_repeat_policy capped = {0, 1, 5, 1e9};
    EXPECT(run(&capped, 2, t) == 0);
    EXPECT(t[0].repeats == 6 && t[1].repeats == 6); /* 2 rounds x ceil(5 / 2) */
    EXPECT(logged == 2 * (3 + 1 + 3));               /* round 1 starts with an untimed call */

    /* the block policy: the split, its floors and the later rounds' warmup */
    const bench_repeat_policy p = {5, 9, 20, 0.4};
    const bench_repeat_policy r0 = bench_round_policy(&p, 0, 4), r3 = bench_round_policy(&p, 3, 4);
    EXPECT(r0.warmup == 5 && r3.warmup == 1);
    EXPECT(r0.min_repeats == 3 && r0.max_repeats == 5 && r0.min_time_s == 0.1);
    const bench_repeat_policy tiny = {0, 1, 1, 0.0}, split = bench_round_policy(&tiny, 0, 8);
    EXPECT(split.min_repeats == 1 && split.max_repeats == 1);

    /* a failing call stops the timing with its result */
    fail_on_call = 5;
    EXPECT(run(&three, 3, t) == 7);
    EXPECT(logged == 5);
    fail_on_call = 0;

    /* nothing timed: finish says so and leaves the timing as it was */
    bench_round_samples none = {0};
    bench_timing kept = {1.0, 2.0, 3};
    EXPECT(bench_round_samples_finish(&none, &kept) == -1 && kept.repeats == 3);

    if (failures == 0)
        printf("timing_test: rounds alternate, warm up, count, cap and stop as documented\n");
    return failures != 0;
}

/*
 * bench_time_interleaved (util/timing.h) on stand-in calls that record the
 * order they ran in: the warmups, then alternating blocks (an untimed call,
 * then timed ones), the sample counts the policy asks for, the cap, and a
 * failing call's result. Exits 1 on the first assertion that does not hold.
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

static int run(const bench_repeat_policy *policy, double block_s, bench_timing *timings)
{
    static stand_in a = {'a'}, b = {'b'};
    const bench_call_fn calls[2] = {record, record};
    void *const contexts[2] = {&a, &b};
    memset(order, 0, sizeof order);
    logged = 0;
    return bench_time_interleaved(policy, block_s, 2, calls, contexts, timings);
}

int main(void)
{
    bench_timing t[2];

    /* blocks of one timed call: warmups, then (untimed, timed) pairs in turn */
    const bench_repeat_policy three = {1, 3, 100, 0.0};
    fail_on_call = 0;
    EXPECT(run(&three, 0.0, t) == 0);
    EXPECT(strcmp(order, "ab" "aabb" "aabb" "aabb") == 0);
    EXPECT(t[0].repeats == 3 && t[1].repeats == 3);
    EXPECT(t[0].min_s <= t[0].median_s && t[1].min_s <= t[1].median_s);

    /* a time floor no call reaches: max_repeats caps each call's samples */
    const bench_repeat_policy capped = {0, 1, 5, 1e9};
    EXPECT(run(&capped, 0.0, t) == 0);
    EXPECT(t[0].repeats == 5 && t[1].repeats == 5);
    EXPECT(logged == 2 * (5 + 5)); /* one untimed call per block of one */

    /* a long block: all of a call's samples in its first block */
    EXPECT(run(&capped, 1e9, t) == 0);
    EXPECT(strcmp(order, "aaaaaabbbbbb") == 0);

    /* a failing call stops the timing with its result */
    fail_on_call = 5;
    EXPECT(run(&three, 0.0, t) == 7);
    EXPECT(logged == 5);
    fail_on_call = 0;

    /* nothing to time */
    EXPECT(bench_time_interleaved(&three, 0.0, 0, NULL, NULL, NULL) == 0);

    if (failures == 0)
        printf("timing_test: bench_time_interleaved alternates, counts, caps and stops as "
               "documented\n");
    return failures != 0;
}

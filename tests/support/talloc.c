/* Tracked test allocations (see talloc.h). */
#include "support/talloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/check.h"

typedef struct block {
    struct block *next;
    max_align_t payload[];
} block;

static block *blocks;

void *talloc(size_t bytes)
{
    if (bytes > SIZE_MAX - sizeof(block)) {
        print_error("talloc: %zu bytes\n", bytes);
        fail();
    }
    block *b = malloc(sizeof(block) + (bytes == 0 ? 1 : bytes));
    if (b == NULL) {
        print_error("talloc: out of memory for %zu bytes\n", bytes);
        fail();
    }
    b->next = blocks;
    blocks = b;
    return b->payload;
}

double *talloc_doubles(size_t n)
{
    double *x = talloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        x[i] = 0.0;
    return x;
}

void talloc_free_all(void)
{
    while (blocks != NULL) {
        block *next = blocks->next;
        free(blocks);
        blocks = next;
    }
}

int talloc_teardown(void **state)
{
    (void)state;
    talloc_free_all();
    check_worst_reset();
    return 0;
}

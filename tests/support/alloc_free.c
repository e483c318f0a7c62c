/*
 * The free wrapper of the allocation accounting (alloc_fail.h): linked, with
 * -Wl,--wrap=free, into the executables that check that failing calls leave
 * nothing allocated.
 */
#include <stddef.h>

#include "support/alloc_fail.h"

void __real_free(void *p);
void __wrap_free(void *p);

void __wrap_free(void *p)
{
    if (p != NULL)
        alloc_fail_note_free();
    __real_free(p);
}

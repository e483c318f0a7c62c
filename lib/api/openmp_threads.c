/* attn_use_openmp_threads (attn_openmp.h): the shared engine on a host's
 * OpenMP runtime. */
#include <attn/attn_openmp.h>

#include "engine/shared_threads.h"

attn_status attn_use_openmp_threads(attn_openmp_parallel_fn parallel,
                                    attn_openmp_thread_num_fn thread_num)
{
    if ((parallel == NULL) != (thread_num == NULL))
        return ATTN_ERR_NULL_POINTER;
    attn_shared_threads_host(parallel, thread_num);
    return ATTN_OK;
}

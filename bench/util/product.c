#include "util/product.h"

#include <string.h>

int bench_product_init(bench_product *product, const size_t *counts, size_t axes, size_t most)
{
    memset(product, 0, sizeof *product);
    if (axes > BENCH_PRODUCT_MAX_AXES)
        return -1;
    size_t total = 1;
    for (size_t k = 0; k < axes; ++k) {
        if (counts[k] == 0 || counts[k] > most / total)
            return -1;
        total *= counts[k];
        product->counts[k] = counts[k];
    }
    product->axes = axes;
    product->total = total;
    return 0;
}

void bench_product_at(const bench_product *product, size_t n, size_t *index)
{
    for (size_t k = product->axes; k-- > 0;) {
        index[k] = n % product->counts[k];
        n /= product->counts[k];
    }
}

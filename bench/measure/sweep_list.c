#include "measure/sweep_list.h"

void bench_sweep_list_print(FILE *out, const char *csv_header, int key_columns,
                            const void *configs, size_t count, bench_sweep_key_fn key,
                            const bench_omissions *omitted)
{
    const char *end = csv_header;
    for (int commas = 0; *end && (*end != ',' || ++commas < key_columns); ++end)
        ;
    fprintf(out, "%.*s\n", (int)(end - csv_header), csv_header);
    for (size_t i = 0; i < count; ++i) {
        char text[512];
        key(configs, i, text, sizeof text);
        fprintf(out, "%s\n", text);
    }
    bench_omissions_print(out, omitted);
    fprintf(out, "# %zu configurations\n", count);
}

#include "util/text.h"

#include <string.h>

void bench_copy_text(char *destination, size_t size, const char *text)
{
    size_t length = strlen(text);
    if (length >= size)
        length = size - 1;
    memcpy(destination, text, length);
    destination[length] = '\0';
}

int bench_append_text(char *buffer, size_t size, const char *text)
{
    size_t used = strlen(buffer), length = strlen(text);
    if (used + length + 1 > size)
        return -1;
    memcpy(buffer + used, text, length + 1);
    return 0;
}

int bench_append_shell_quoted(char *buffer, size_t size, const char *text)
{
    const size_t start = strlen(buffer);
    size_t used = start;
    if (used + 3 > size)
        return -1;
    buffer[used++] = '\'';
    for (const char *c = text; *c; ++c) {
        const char *piece = *c == '\'' ? "'\\''" : NULL;
        size_t piece_length = piece ? 4 : 1;
        if (used + piece_length + 2 > size) {
            buffer[start] = '\0';
            return -1;
        }
        if (piece)
            memcpy(buffer + used, piece, piece_length);
        else
            buffer[used] = *c;
        used += piece_length;
    }
    buffer[used++] = '\'';
    buffer[used] = '\0';
    return 0;
}

void bench_json_write_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", out);
        else if (*c == '\t')
            fputs("\\t", out);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

void bench_csv_write_field(FILE *out, const char *text)
{
    if (!strpbrk(text, ",\"\n\r")) {
        fputs(text, out);
        return;
    }
    fputc('"', out);
    for (const char *c = text; *c; ++c) {
        if (*c == '"')
            fputc('"', out);
        fputc(*c, out);
    }
    fputc('"', out);
}

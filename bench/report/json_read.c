#include "report/json_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { MAX_DEPTH = 64 };

typedef struct parser {
    const char *at;
    char *error;
    size_t error_size;
} parser;

static int fail(parser *p, const char *what)
{
    snprintf(p->error, p->error_size, "JSON: %s near '%.20s'", what, p->at);
    return -1;
}

static void skip_blanks(parser *p)
{
    while (*p->at == ' ' || *p->at == '\t' || *p->at == '\n' || *p->at == '\r')
        p->at++;
}

static int parse_value(parser *p, bench_json *value, int depth);

static int hex4(const char *text, unsigned *code)
{
    *code = 0;
    for (int i = 0; i < 4; ++i) {
        char c = text[i];
        unsigned digit = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                         : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                         : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                                : 16u;
        if (digit == 16u)
            return -1;
        *code = *code * 16u + digit;
    }
    return 0;
}

static size_t put_utf8(unsigned code, char *out)
{
    if (code < 0x80u) {
        out[0] = (char)code;
        return 1;
    }
    if (code < 0x800u) {
        out[0] = (char)(0xC0u | (code >> 6));
        out[1] = (char)(0x80u | (code & 0x3Fu));
        return 2;
    }
    if (code < 0x10000u) {
        out[0] = (char)(0xE0u | (code >> 12));
        out[1] = (char)(0x80u | ((code >> 6) & 0x3Fu));
        out[2] = (char)(0x80u | (code & 0x3Fu));
        return 3;
    }
    out[0] = (char)(0xF0u | (code >> 18));
    out[1] = (char)(0x80u | ((code >> 12) & 0x3Fu));
    out[2] = (char)(0x80u | ((code >> 6) & 0x3Fu));
    out[3] = (char)(0x80u | (code & 0x3Fu));
    return 4;
}

/* One \u escape at p->at (after the backslash and 'u'), a surrogate pair
 * taken whole. */
static int parse_unicode_escape(parser *p, char *out, size_t *length)
{
    unsigned code, low;
    if (hex4(p->at, &code) != 0)
        return fail(p, "bad \\u escape");
    p->at += 4;
    if (code >= 0xD800u && code < 0xDC00u && p->at[0] == '\\' && p->at[1] == 'u' &&
        hex4(p->at + 2, &low) == 0 && low >= 0xDC00u && low < 0xE000u) {
        code = 0x10000u + ((code - 0xD800u) << 10) + (low - 0xDC00u);
        p->at += 6;
    }
    *length += put_utf8(code, out + *length);
    return 0;
}

static int parse_string(parser *p, char **string)
{
    p->at++; /* the opening quote */
    char *out = malloc(strlen(p->at) + 1);
    size_t length = 0;
    if (!out)
        return fail(p, "out of memory");
    static const char escapes[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
    while (*p->at != '"') {
        char c = *p->at++;
        if (c == '\0' || (unsigned char)c < 0x20) {
            free(out);
            return fail(p, "unterminated string");
        }
        if (c != '\\') {
            out[length++] = c;
            continue;
        }
        c = *p->at++;
        const char *escape = c ? strchr(escapes, c) : NULL;
        if (c == 'u') {
            if (parse_unicode_escape(p, out, &length) != 0) {
                free(out);
                return -1;
            }
        } else if (escape && (escape - escapes) % 2 == 0) {
            out[length++] = escape[1];
        } else {
            free(out);
            return fail(p, "bad escape");
        }
    }
    p->at++;
    out[length] = '\0';
    *string = out;
    return 0;
}

/* Appends one parsed item (and its key) to a container. */
static int parse_item(parser *p, bench_json *container, char *key, int depth)
{
    bench_json *items = realloc(container->items, (container->count + 1) * sizeof *items);
    if (!items) {
        free(key);
        return fail(p, "out of memory");
    }
    container->items = items;
    if (container->kind == BENCH_JSON_OBJECT) {
        char **keys = realloc(container->keys, (container->count + 1) * sizeof *keys);
        if (!keys) {
            free(key);
            return fail(p, "out of memory");
        }
        container->keys = keys;
        keys[container->count] = key;
    }
    memset(&items[container->count], 0, sizeof *items);
    container->count++;
    return parse_value(p, &items[container->count - 1], depth + 1);
}

static int parse_container(parser *p, bench_json *value, int depth)
{
    const char close = *p->at == '{' ? '}' : ']';
    value->kind = close == '}' ? BENCH_JSON_OBJECT : BENCH_JSON_ARRAY;
    p->at++;
    skip_blanks(p);
    if (*p->at == close) {
        p->at++;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_blanks(p);
        if (value->kind == BENCH_JSON_OBJECT) {
            if (*p->at != '"' || parse_string(p, &key) != 0)
                return *p->error ? -1 : fail(p, "expected a key");
            skip_blanks(p);
            if (*p->at++ != ':') {
                free(key);
                return fail(p, "expected ':'");
            }
        }
        if (parse_item(p, value, key, depth) != 0)
            return -1;
        skip_blanks(p);
        if (*p->at == ',') {
            p->at++;
            continue;
        }
        if (*p->at++ == close)
            return 0;
        return fail(p, "expected ',' or a closing bracket");
    }
}

static int parse_literal(parser *p, bench_json *value)
{
    static const struct {
        const char *text;
        bench_json_kind kind;
        double number;
    } literals[] = {{"null", BENCH_JSON_NULL, 0.0},
                    {"true", BENCH_JSON_BOOL, 1.0},
                    {"false", BENCH_JSON_BOOL, 0.0}};
    for (size_t i = 0; i < 3; ++i)
        if (strncmp(p->at, literals[i].text, strlen(literals[i].text)) == 0) {
            value->kind = literals[i].kind;
            value->number = literals[i].number;
            p->at += strlen(literals[i].text);
            return 0;
        }
    char *end = NULL;
    errno = 0;
    value->number = strtod(p->at, &end);
    if (end == p->at || errno == ERANGE || !(*p->at == '-' || (*p->at >= '0' && *p->at <= '9')))
        return fail(p, "expected a value");
    value->kind = BENCH_JSON_NUMBER;
    p->at = end;
    return 0;
}

static int parse_value(parser *p, bench_json *value, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(p, "nested too deeply");
    skip_blanks(p);
    if (*p->at == '{' || *p->at == '[')
        return parse_container(p, value, depth);
    if (*p->at == '"') {
        value->kind = BENCH_JSON_STRING;
        return parse_string(p, &value->string);
    }
    return parse_literal(p, value);
}

int bench_json_parse(const char *text, bench_json *value, char *error, size_t error_size)
{
    memset(value, 0, sizeof *value);
    error[0] = '\0';
    parser p = {text, error, error_size};
    if (parse_value(&p, value, 0) == 0) {
        skip_blanks(&p);
        if (*p.at == '\0')
            return 0;
        fail(&p, "text after the value");
    }
    bench_json_free(value);
    return -1;
}

int bench_json_read_file(const char *path, bench_json *value, char *error, size_t error_size)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t length = 0, capacity = 0;
    for (;;) {
        if (length + 4096 + 1 > capacity) {
            char *grown = realloc(text, capacity = 2 * capacity + 8192);
            if (!grown)
                break;
            text = grown;
        }
        size_t got = fread(text + length, 1, capacity - length - 1, file);
        length += got;
        if (got == 0)
            break;
    }
    fclose(file);
    if (!text) {
        snprintf(error, error_size, "%s: out of memory", path);
        return -1;
    }
    text[length] = '\0';
    int result = bench_json_parse(text, value, error, error_size);
    free(text);
    return result;
}

void bench_json_free(bench_json *value)
{
    for (size_t i = 0; i < value->count; ++i) {
        if (value->items)
            bench_json_free(&value->items[i]);
        if (value->keys)
            free(value->keys[i]);
    }
    free(value->items);
    free(value->keys);
    free(value->string);
    memset(value, 0, sizeof *value);
}

const bench_json *bench_json_member(const bench_json *object, const char *key)
{
    if (!object || object->kind != BENCH_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < object->count; ++i)
        if (strcmp(object->keys[i], key) == 0)
            return &object->items[i];
    return NULL;
}

const char *bench_json_string(const bench_json *object, const char *key, const char *fallback)
{
    const bench_json *member = bench_json_member(object, key);
    return member && member->kind == BENCH_JSON_STRING ? member->string : fallback;
}

double bench_json_number(const bench_json *object, const char *key, double fallback)
{
    const bench_json *member = bench_json_member(object, key);
    return member && member->kind == BENCH_JSON_NUMBER ? member->number : fallback;
}

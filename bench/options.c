#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum option_id {
    OPTION_T,
    OPTION_C,
    OPTION_HS,
    OPTION_B,
    OPTION_DTYPE,
    OPTION_CAUSAL,
    OPTION_WEIGHTS,
    OPTION_WARMUP,
    OPTION_REPEATS,
    OPTION_MIN_TIME,
    OPTION_MAX_REPEATS,
    OPTION_CHECK_ROWS,
    OPTION_SEED,
    OPTION_PEERS,
    OPTION_NUMPY_SCRIPT,
    OPTION_PYTHON,
    OPTION_CSV,
    OPTION_QUICK,
    OPTION_HELP,
    OPTION_COUNT
} option_id;

typedef struct option_spec {
    const char *name;          /* used as --name VALUE or --name=VALUE */
    const char *argument;      /* what VALUE is; NULL for a flag */
    const char *default_value; /* NULL: none (see help) */
    const char *quick_value;   /* under --quick; NULL: the default */
    const char *help;
} option_spec;

static const option_spec option_specs[OPTION_COUNT] = {
    [OPTION_T] = {"T", "LIST", "64:2048:x2", "16,48", "sequence lengths"},
    [OPTION_C] = {"C", "LIST", "768", "32", "model widths"},
    [OPTION_HS] = {"hs", "LIST", "64", "8", "head sizes (may exceed C)"},
    [OPTION_B] = {"B", "LIST", "1", "2", "batch sizes"},
    [OPTION_DTYPE] = {"dtype", "LIST", "f32,f64", NULL, "element types: f32, f64"},
    [OPTION_CAUSAL] = {"causal", "LIST", "0,1", NULL,
                       "0 = every position sees every position, 1 = causal mask"},
    [OPTION_WEIGHTS] = {"weights", NULL, NULL, NULL,
                        "the measured call also writes the (B,T,T) weights\n"
                        "(default: weights = NULL); they are then checked too"},
    [OPTION_WARMUP] = {"warmup", "N", "2", "1", "untimed calls before timing"},
    [OPTION_REPEATS] = {"repeats", "N", "9", "3", "at least N timed calls per point (N >= 1)"},
    [OPTION_MIN_TIME] = {"min-time", "SECONDS", "0.2", "0.002",
                         "keep timing until the timed calls add up to this"},
    [OPTION_MAX_REPEATS] = {"max-repeats", "N", "10000", "200",
                            "at most N timed calls per point (never below --repeats)"},
    [OPTION_CHECK_ROWS] = {"check-rows", "N", "64", "0",
                           "query rows per checked batch compared with the\n"
                           "reference; 0 = all T rows"},
    [OPTION_SEED] = {"seed", "N", "1", NULL, "seed of the inputs"},
    [OPTION_PEERS] = {"peers", "LIST", "numpy", NULL, "peers timed on the same shapes: numpy, none"},
    [OPTION_NUMPY_SCRIPT] = {"numpy-script", "PATH", NULL, NULL,
                             "the NumPy peer script (default: the installed\n"
                             "<executable's directory>/" ATTN_BENCH_PEER_DIR_FROM_BINDIR "/\n"
                             "numpy_peer.py, else the source tree's copy\n"
                             ATTN_BENCH_SOURCE_PEER_DIR "/numpy_peer.py)"},
    [OPTION_PYTHON] = {"python", "PROGRAM", "python3", NULL,
                      "python interpreter (a name on PATH or a path) for\nthe NumPy peer"},
    [OPTION_CSV] = {"csv", "PATH", "attn-bench.csv", NULL,
                    "CSV output, one row per configuration"},
    [OPTION_QUICK] = {"quick", NULL, NULL, NULL,
                      "tiny sweep for tests: the --quick values below\n"
                      "replace the defaults (explicit options still win)"},
    [OPTION_HELP] = {"help", NULL, NULL, NULL, "this text (also -h)"},
};

void bench_options_print_list(FILE *out)
{
    for (size_t i = 0; i < OPTION_COUNT; ++i) {
        const option_spec *spec = &option_specs[i];
        char usage[64];
        snprintf(usage, sizeof usage, "--%s%s%s", spec->name, spec->argument ? " " : "",
                 spec->argument ? spec->argument : "");
        fprintf(out, "  %-24s", usage);
        for (const char *line = spec->help; line;) {
            const char *newline = strchr(line, '\n');
            int length = newline ? (int)(newline - line) : (int)strlen(line);
            fprintf(out, "%.*s\n", length, line);
            line = newline ? newline + 1 : NULL;
            if (line)
                fprintf(out, "  %-24s", "");
        }
        if (spec->default_value || spec->quick_value) {
            fprintf(out, "  %-24s", "");
            if (spec->default_value)
                fprintf(out, "default: %s", spec->default_value);
            if (spec->quick_value)
                fprintf(out, "%s--quick: %s", spec->default_value ? "; " : "",
                        spec->quick_value);
            fputc('\n', out);
        }
    }
}

static int find_option(const char *name, size_t name_length)
{
    for (int i = 0; i < OPTION_COUNT; ++i)
        if (strlen(option_specs[i].name) == name_length &&
            strncmp(option_specs[i].name, name, name_length) == 0)
            return i;
    return -1;
}

/* First pass: which options were given and with which text. */
static bench_options_outcome collect_arguments(int argc, char **argv,
                                               const char *given[OPTION_COUNT], char *error,
                                               size_t error_size)
{
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0)
            arg = "--help";
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(error, error_size, "unexpected argument '%s' (options start with --)", arg);
            return BENCH_OPTIONS_BAD;
        }
        const char *name = arg + 2;
        const char *equals = strchr(name, '=');
        size_t name_length = equals ? (size_t)(equals - name) : strlen(name);
        int id = find_option(name, name_length);
        if (id < 0) {
            snprintf(error, error_size, "unknown option '%.*s'", (int)(name_length + 2), arg);
            return BENCH_OPTIONS_BAD;
        }
        const option_spec *spec = &option_specs[id];
        if (!spec->argument) {
            if (equals) {
                snprintf(error, error_size, "option --%s takes no value", spec->name);
                return BENCH_OPTIONS_BAD;
            }
            given[id] = "1";
        } else if (equals) {
            given[id] = equals + 1;
        } else if (i + 1 < argc) {
            given[id] = argv[++i];
        } else {
            snprintf(error, error_size, "option --%s needs a value (%s)", spec->name,
                     spec->argument);
            return BENCH_OPTIONS_BAD;
        }
        if (given[id][0] == '\0') {
            snprintf(error, error_size, "option --%s has an empty value", spec->name);
            return BENCH_OPTIONS_BAD;
        }
    }
    return given[OPTION_HELP] ? BENCH_OPTIONS_HELP : BENCH_OPTIONS_RUN;
}

/* Calls handle(item) for each comma-separated item of text; stops at the first
 * nonzero return and returns it. */
static int for_each_item(const char *text, int (*handle)(const char *item, void *context),
                         void *context)
{
    char item[64];
    for (const char *cursor = text;;) {
        const char *comma = strchr(cursor, ',');
        size_t length = comma ? (size_t)(comma - cursor) : strlen(cursor);
        if (length >= sizeof item)
            return -1;
        memcpy(item, cursor, length);
        item[length] = '\0';
        int result = handle(item, context);
        if (result != 0 || !comma)
            return result;
        cursor = comma + 1;
    }
}

static int add_dtype(const char *item, void *context)
{
    bench_options *o = context;
    bench_dtype dtype;
    if (bench_dtype_parse(item, &dtype) != 0)
        return -1;
    for (size_t i = 0; i < o->dtype_count; ++i)
        if (o->dtypes[i] == dtype)
            return 0;
    o->dtypes[o->dtype_count++] = dtype;
    return 0;
}

static int add_causal(const char *item, void *context)
{
    bench_options *o = context;
    if (strcmp(item, "0") != 0 && strcmp(item, "1") != 0)
        return -1;
    int causal = item[0] == '1';
    for (size_t i = 0; i < o->causal_count; ++i)
        if (o->causal[i] == causal)
            return 0;
    o->causal[o->causal_count++] = causal;
    return 0;
}

static int add_peer(const char *item, void *context)
{
    unsigned *peers = context;
    if (strcmp(item, "numpy") == 0)
        *peers |= BENCH_PEER_NUMPY;
    else if (strcmp(item, "none") != 0)
        return -1;
    return 0;
}

static int parse_seconds(const char *text, double *seconds)
{
    errno = 0;
    char *end = NULL;
    double value = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !isfinite(value) || value < 0.0)
        return -1;
    *seconds = value;
    return 0;
}

static int parse_seed(const char *text, uint64_t *seed)
{
    size_t value = 0;
    if (bench_parse_size(text, &value) != 0)
        return -1;
    *seed = (uint64_t)value;
    return 0;
}

/* The text an option resolves to: given, else its --quick value under
 * --quick, else its default (NULL when it has none). */
static const char *resolved_text(const char *given[OPTION_COUNT], option_id id, int quick)
{
    if (given[id])
        return given[id];
    if (quick && option_specs[id].quick_value)
        return option_specs[id].quick_value;
    return option_specs[id].default_value;
}

static int resolve_size_list(const char *given[OPTION_COUNT], option_id id, int quick,
                             bench_size_list *list, char *error, size_t error_size)
{
    char reason[160];
    if (bench_size_list_parse(resolved_text(given, id, quick), list, reason, sizeof reason) ==
        0)
        return 0;
    snprintf(error, error_size, "--%s: %s", option_specs[id].name, reason);
    return -1;
}

static int resolve_count(const char *given[OPTION_COUNT], option_id id, int quick,
                         size_t minimum, size_t *count, char *error, size_t error_size)
{
    const char *text = resolved_text(given, id, quick);
    if (bench_parse_size(text, count) == 0 && *count >= minimum)
        return 0;
    snprintf(error, error_size, "--%s: '%s' is not a whole number >= %zu", option_specs[id].name,
             text, minimum);
    return -1;
}

static int resolve_values(const char *given[OPTION_COUNT], bench_options *o, char *error,
                          size_t error_size)
{
    int quick = o->quick;
    if (resolve_size_list(given, OPTION_T, quick, &o->T, error, error_size) != 0 ||
        resolve_size_list(given, OPTION_C, quick, &o->C, error, error_size) != 0 ||
        resolve_size_list(given, OPTION_HS, quick, &o->hs, error, error_size) != 0 ||
        resolve_size_list(given, OPTION_B, quick, &o->B, error, error_size) != 0)
        return -1;

    const char *text = resolved_text(given, OPTION_DTYPE, quick);
    if (for_each_item(text, add_dtype, o) != 0) {
        snprintf(error, error_size, "--dtype: '%s' is not a list of f32, f64", text);
        return -1;
    }
    text = resolved_text(given, OPTION_CAUSAL, quick);
    if (for_each_item(text, add_causal, o) != 0) {
        snprintf(error, error_size, "--causal: '%s' is not a list of 0, 1", text);
        return -1;
    }
    text = resolved_text(given, OPTION_PEERS, quick);
    if (for_each_item(text, add_peer, &o->peers) != 0) {
        snprintf(error, error_size, "--peers: '%s' is not a list of numpy, none", text);
        return -1;
    }

    bench_repeat_policy *r = &o->repeat;
    if (resolve_count(given, OPTION_WARMUP, quick, 0, &r->warmup, error, error_size) != 0 ||
        resolve_count(given, OPTION_REPEATS, quick, 1, &r->min_repeats, error, error_size) !=
            0 ||
        resolve_count(given, OPTION_MAX_REPEATS, quick, 1, &r->max_repeats, error,
                      error_size) != 0 ||
        resolve_count(given, OPTION_CHECK_ROWS, quick, 0, &o->check_rows, error,
                      error_size) != 0)
        return -1;
    if (r->max_repeats < r->min_repeats)
        r->max_repeats = r->min_repeats;
    text = resolved_text(given, OPTION_MIN_TIME, quick);
    if (parse_seconds(text, &r->min_time_s) != 0) {
        snprintf(error, error_size, "--min-time: '%s' is not a number of seconds >= 0", text);
        return -1;
    }
    text = resolved_text(given, OPTION_SEED, quick);
    if (parse_seed(text, &o->seed) != 0) {
        snprintf(error, error_size, "--seed: '%s' is not a whole number", text);
        return -1;
    }

    o->with_weights = given[OPTION_WEIGHTS] != NULL;
    o->numpy_script = given[OPTION_NUMPY_SCRIPT];
    o->python = resolved_text(given, OPTION_PYTHON, quick);
    o->csv_path = resolved_text(given, OPTION_CSV, quick);
    return 0;
}

bench_options_outcome bench_options_parse(int argc, char **argv, bench_options *options,
                                          char *error, size_t error_size)
{
    memset(options, 0, sizeof *options);
    const char *given[OPTION_COUNT] = {0};
    bench_options_outcome outcome = collect_arguments(argc, argv, given, error, error_size);
    if (outcome != BENCH_OPTIONS_RUN)
        return outcome;
    options->quick = given[OPTION_QUICK] != NULL;
    if (resolve_values(given, options, error, error_size) != 0) {
        bench_options_free(options);
        return BENCH_OPTIONS_BAD;
    }
    return BENCH_OPTIONS_RUN;
}

void bench_options_free(bench_options *options)
{
    bench_size_list_free(&options->T);
    bench_size_list_free(&options->C);
    bench_size_list_free(&options->hs);
    bench_size_list_free(&options->B);
}

#include "output/report_tool.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/flops.h"

#ifndef ATTN_BENCH_SOURCE_REPORT_DIR
#error "define ATTN_BENCH_SOURCE_REPORT_DIR: the absolute path of bench/report"
#endif
#ifndef ATTN_BENCH_REPORT_DIR_FROM_BINDIR
#error "define ATTN_BENCH_REPORT_DIR_FROM_BINDIR: the installed report folder relative to bindir"
#endif

extern char **environ;

/* <folder of this executable>/ATTN_BENCH_REPORT_DIR_FROM_BINDIR/script when
 * it is readable, else ATTN_BENCH_SOURCE_REPORT_DIR/script; 0, or -1 with
 * where it looked in error. */
static int find_script(const char *script, char *path, size_t size, char *error,
                       size_t error_size)
{
    char executable[4096], installed[4096] = "<executable path unknown>";
    const ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
    if (length > 0) {
        executable[length] = '\0';
        char *last_slash = strrchr(executable, '/');
        if (last_slash) {
            *last_slash = '\0';
            const int written = snprintf(installed, sizeof installed, "%s/%s/%s", executable,
                                         ATTN_BENCH_REPORT_DIR_FROM_BINDIR, script);
            if (written > 0 && (size_t)written < sizeof installed && (size_t)written < size &&
                access(installed, R_OK) == 0) {
                memcpy(path, installed, (size_t)written + 1);
                return 0;
            }
        }
    }
    if ((size_t)snprintf(path, size, "%s/%s", ATTN_BENCH_SOURCE_REPORT_DIR, script) < size &&
        access(path, R_OK) == 0)
        return 0;
    snprintf(error, error_size, "%s not found (looked at %.1000s and %s/%s)", script, installed,
             ATTN_BENCH_SOURCE_REPORT_DIR, script);
    return -1;
}

/* The child's descriptors: stdin from the pipe's read end, or stdout and
 * stderr to /dev/null. */
static int set_up_files(posix_spawn_file_actions_t *files, const int *pipe_ends, int quiet)
{
    int failed = posix_spawn_file_actions_init(files);
    if (pipe_ends) {
        failed |= posix_spawn_file_actions_adddup2(files, pipe_ends[0], STDIN_FILENO);
        failed |= posix_spawn_file_actions_addclose(files, pipe_ends[0]);
        failed |= posix_spawn_file_actions_addclose(files, pipe_ends[1]);
    }
    if (quiet) {
        failed |=
            posix_spawn_file_actions_addopen(files, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        failed |= posix_spawn_file_actions_adddup2(files, STDOUT_FILENO, STDERR_FILENO);
    }
    return failed ? -1 : 0;
}

int bench_report_tool_start(bench_report_tool *tool, const char *script,
                            const char *const *args, size_t count, int with_input, int quiet,
                            char *error, size_t error_size)
{
    char path[4096];
    memset(tool, 0, sizeof *tool);
    if (find_script(script, path, sizeof path, error, error_size) != 0)
        return -1;
    const char **argv = calloc(count + 3, sizeof *argv);
    int pipe_ends[2] = {-1, -1};
    posix_spawn_file_actions_t files;
    if (!argv || (with_input && pipe(pipe_ends) != 0) ||
        set_up_files(&files, with_input ? pipe_ends : NULL, quiet) != 0) {
        snprintf(error, error_size, "cannot start python3 %s: %s", path, strerror(errno));
        free(argv);
        if (with_input && pipe_ends[0] >= 0) {
            close(pipe_ends[0]);
            close(pipe_ends[1]);
        }
        return -1;
    }
    argv[0] = "python3";
    argv[1] = path;
    memcpy(argv + 2, args, count * sizeof *args);
    setenv("ATTN_BENCH_FLOPS_FORMULA", bench_flops_formula, 1);
    fflush(NULL);
    const int spawned = posix_spawnp(&tool->pid, "python3", &files, NULL, (char *const *)argv,
                                     environ);
    posix_spawn_file_actions_destroy(&files);
    free(argv);
    if (with_input)
        close(pipe_ends[0]);
    if (spawned != 0) {
        snprintf(error, error_size, "cannot run python3 %s: %s", path, strerror(spawned));
        if (with_input)
            close(pipe_ends[1]);
        return -1;
    }
    if (with_input) {
        fcntl(pipe_ends[1], F_SETFD, FD_CLOEXEC);
        tool->input = fdopen(pipe_ends[1], "w");
        if (!tool->input) {
            snprintf(error, error_size, "cannot write to python3 %s: %s", path, strerror(errno));
            close(pipe_ends[1]);
            bench_report_tool_wait(tool);
            return -1;
        }
        struct sigaction ignore;
        memset(&ignore, 0, sizeof ignore);
        ignore.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &ignore, &tool->pipe_was);
    }
    return 0;
}

int bench_report_tool_wait(bench_report_tool *tool)
{
    int input_failed = 0;
    if (tool->input) {
        input_failed = ferror(tool->input);
        input_failed |= fclose(tool->input) != 0;
        tool->input = NULL;
        sigaction(SIGPIPE, &tool->pipe_was, NULL);
    }
    int status;
    while (waitpid(tool->pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (!WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status) == 0 && input_failed ? 1 : WEXITSTATUS(status);
}

int bench_report_tool_run(const char *const *args, size_t count)
{
    bench_report_tool tool;
    char error[1536];
    if (bench_report_tool_start(&tool, "report.py", args, count, 0, 0, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench report: %s\n", error);
        return 1;
    }
    const int status = bench_report_tool_wait(&tool);
    return status < 0 ? 1 : status;
}

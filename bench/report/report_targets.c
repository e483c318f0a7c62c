#include "report/report_targets.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "util/files.h"

#ifndef ATTN_BENCH_TARGETS_RUNNER
#error "define ATTN_BENCH_TARGETS_RUNNER: the absolute path of bench/targets/run_targets.sh"
#endif

extern char **environ;

int bench_report_targets(const char *run_dir, const char *out_dir)
{
    char markdown[4096], error[512] = "";
    if (bench_make_directories(out_dir, error, sizeof error) != 0) {
        fprintf(stderr, "attn-bench report: %s\n", error);
        return -1;
    }
    snprintf(markdown, sizeof markdown, "%s/targets.md", out_dir);
    char *argv[] = {"sh",           (char *)ATTN_BENCH_TARGETS_RUNNER,
                    "--out",        (char *)run_dir,
                    "--check-only", "--",
                    "--markdown",   markdown,
                    NULL};
    pid_t pid;
    const int spawned = posix_spawnp(&pid, "sh", NULL, NULL, argv, environ);
    if (spawned != 0) {
        fprintf(stderr, "attn-bench report: cannot run %s: %s\n", ATTN_BENCH_TARGETS_RUNNER,
                strerror(spawned));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "attn-bench report: the target check failed (%s)\n",
                ATTN_BENCH_TARGETS_RUNNER);
        return -1;
    }
    printf("# targets: %s\n", markdown);
    return 0;
}

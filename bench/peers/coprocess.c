#include "peers/coprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_pair(int fds[2])
{
    close(fds[0]);
    close(fds[1]);
}

int bench_coprocess_start(bench_coprocess *coprocess, const char *command)
{
    memset(coprocess, 0, sizeof *coprocess);
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0)
        return -1;
    if (pipe(from_child) != 0) {
        close_pair(to_child);
        return -1;
    }
    fflush(NULL); /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close_pair(to_child);
        close_pair(from_child);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        dup2(to_child[0], STDIN_FILENO);
        dup2(from_child[1], STDOUT_FILENO);
        dup2(from_child[1], STDERR_FILENO);
        int leftovers[4] = {to_child[0], to_child[1], from_child[0], from_child[1]};
        for (int i = 0; i < 4; ++i)
            if (leftovers[i] > STDERR_FILENO) /* a pipe end may have become 0, 1 or 2 */
                close(leftovers[i]);
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    coprocess->previous_sigpipe = signal(SIGPIPE, SIG_IGN);
    fcntl(to_child[1], F_SETFD, FD_CLOEXEC);
    fcntl(from_child[0], F_SETFD, FD_CLOEXEC);
    coprocess->pid = pid;
    coprocess->to_child = fdopen(to_child[1], "w");
    coprocess->from_child = fdopen(from_child[0], "r");
    if (!coprocess->to_child || !coprocess->from_child) {
        if (coprocess->to_child)
            fclose(coprocess->to_child);
        else
            close(to_child[1]);
        if (coprocess->from_child)
            fclose(coprocess->from_child);
        else
            close(from_child[0]);
        waitpid(pid, NULL, 0);
        signal(SIGPIPE, coprocess->previous_sigpipe);
        memset(coprocess, 0, sizeof *coprocess);
        return -1;
    }
    return 0;
}

int bench_coprocess_send_line(bench_coprocess *coprocess, const char *line)
{
    if (fputs(line, coprocess->to_child) == EOF || fputc('\n', coprocess->to_child) == EOF ||
        fflush(coprocess->to_child) != 0)
        return -1;
    return 0;
}

int bench_coprocess_read_line(bench_coprocess *coprocess, char *line, size_t size)
{
    if (!fgets(line, (int)size, coprocess->from_child))
        return -1;
    size_t length = strlen(line);
    if (length > 0 && line[length - 1] == '\n') {
        line[length - 1] = '\0';
        return 0;
    }
    int c;
    while ((c = fgetc(coprocess->from_child)) != EOF && c != '\n')
        ;
    return 0;
}

int bench_coprocess_finish(bench_coprocess *coprocess)
{
    if (!coprocess->pid)
        return -1;
    fclose(coprocess->to_child);
    char discard[512];
    while (fgets(discard, sizeof discard, coprocess->from_child))
        ;
    fclose(coprocess->from_child);
    int status = -1;
    while (waitpid(coprocess->pid, &status, 0) < 0 && errno == EINTR)
        ;
    signal(SIGPIPE, coprocess->previous_sigpipe);
    memset(coprocess, 0, sizeof *coprocess);
    return status;
}

#include "util/files.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int make_one(const char *path)
{
    struct stat status;
    if (stat(path, &status) == 0)
        return S_ISDIR(status.st_mode) ? 0 : (errno = ENOTDIR, -1);
    return mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

int bench_make_directories(const char *path, char *error, size_t error_size)
{
    char partial[4096];
    if (strlen(path) >= sizeof partial) {
        snprintf(error, error_size, "%s: path too long", path);
        return -1;
    }
    strcpy(partial, path);
    for (char *slash = strchr(partial + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (make_one(partial) != 0) {
            snprintf(error, error_size, "%s: %s", partial, strerror(errno));
            return -1;
        }
        *slash = '/';
    }
    if (make_one(partial) != 0) {
        snprintf(error, error_size, "%s: %s", partial, strerror(errno));
        return -1;
    }
    return 0;
}

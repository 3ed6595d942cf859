/* The call log of the fixtures whose calls tests count: with $KBENCH_FIXTURE_LOG set, each
 * logged call appends one line "WHAT ID PID" to that file (appends are whole lines, so the
 * workers of one run can share it). */
#ifndef KBENCH_FIXTURE_LOG_H
#define KBENCH_FIXTURE_LOG_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void log_line(const char *what, const char *id)
{
    const char *path = getenv("KBENCH_FIXTURE_LOG");
    char line[512];
    int fd, n;
    if (!path)
        return;
    n = snprintf(line, sizeof line, "%s %s %ld\n", what, id, (long)getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) != n)
        n = 0;
    close(fd);
}

#endif

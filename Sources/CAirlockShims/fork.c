#define _GNU_SOURCE
#include "airlock_fork.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

pid_t airlock_fork_sibling(int *pidfd) {
    int fd = -1;
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_PARENT | CLONE_PIDFD;
    args.pidfd = (uint64_t)(uintptr_t)&fd;
    // With CLONE_PARENT the child's exit signal is this process's own (SIGCHLD to
    // the supervisor); clone3 refuses any other value than 0 with that flag.
    args.exit_signal = 0;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0 && errno == ENOSYS) {
        // Where clone3 is refused: clone(flags with no exit signal, no new stack, pidfd
        // through the parent-tid argument, no child tid, no TLS). The last two are
        // both 0, so the architectures that swap them see the same call.
        pid = syscall(SYS_clone, (unsigned long)(CLONE_PARENT | CLONE_PIDFD), 0L, &fd, 0L, 0L);
    }
    if (pid > 0) *pidfd = fd;
    return (pid_t)pid;
}

int airlock_thread_count(void) {
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buffer[1024];
    ssize_t n;
    do {
        n = read(fd, buffer, sizeof buffer - 1);
    } while (n < 0 && errno == EINTR);
    int saved = errno;
    close(fd);
    if (n <= 0) {
        errno = n < 0 ? saved : EIO;
        return -1;
    }
    buffer[n] = '\0';
    // The name (field 2) may hold spaces and parentheses: count from the last ')'.
    char *field = strrchr(buffer, ')');
    if (field == NULL) {
        errno = EIO;
        return -1;
    }
    // After ") " come the state (field 3) ... num_threads (field 20): 17 more spaces.
    for (int spaces = 0; spaces < 18; field++) {
        if (*field == '\0') {
            errno = EIO;
            return -1;
        }
        if (*field == ' ') spaces++;
    }
    return atoi(field);
}

int airlock_trim_heap(void) {
    return malloc_trim(0);
}

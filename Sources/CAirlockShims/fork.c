#define _GNU_SOURCE
#include "airlock_fork.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

void *airlock_read_file_anonymous(const char *path, size_t *length) {
    const size_t huge = 2u << 20;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return NULL;
    }
    if (st.st_size <= 0) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    size_t span = (size + huge - 1) / huge * huge;
    char *raw = mmap(NULL, span + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        int saved = errno;
        close(fd);
        errno = saved;
        return NULL;
    }
    char *start = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
    if (start > raw) munmap(raw, (size_t)(start - raw));
    munmap(start + span, (size_t)(raw + span + huge - (start + span)));
    (void)madvise(start, span, MADV_HUGEPAGE);
    size_t done = 0;
    while (done < size) {
        ssize_t n = read(fd, start + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int saved = n < 0 ? errno : EIO;
            close(fd);
            munmap(start, span);
            errno = saved;
            return NULL;
        }
        done += (size_t)n;
    }
    close(fd);
    *length = size;
    return start;
}

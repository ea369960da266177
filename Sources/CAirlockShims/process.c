#define _GNU_SOURCE
#include "airlock_process.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

int airlock_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int airlock_pidfd_send_signal(int pidfd, int sig) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int airlock_pidfd_wait(int pidfd, int *exited, int *code, long *max_rss_kib) {
    siginfo_t info;
    struct rusage usage;
    memset(&info, 0, sizeof info);
    memset(&usage, 0, sizeof usage);
    if (syscall(SYS_waitid, P_PIDFD, pidfd, &info, WEXITED, &usage) != 0) {
        return -1;
    }
    *exited = info.si_code == CLD_EXITED;
    *code = info.si_status;
    *max_rss_kib = usage.ru_maxrss;
    return 0;
}

int airlock_spawn(pid_t *pid, const char *path, const int *actions, int action_count,
                  char *const argv[], char *const envp[]) {
    posix_spawn_file_actions_t files;
    posix_spawnattr_t attributes;
    int rc = posix_spawn_file_actions_init(&files);
    if (rc != 0) return rc;
    rc = posix_spawnattr_init(&attributes);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&files);
        return rc;
    }
    int highest = STDERR_FILENO;
    for (int i = 0; rc == 0 && i + 1 < action_count; i += 2) {
        int source = actions[i], target = actions[i + 1];
        if (target > highest) highest = target;
        if (source == -1) {
            rc = posix_spawn_file_actions_addopen(&files, target, "/dev/null", O_RDONLY, 0);
        } else if (source == -2) {
            rc = posix_spawn_file_actions_addopen(&files, target, "/dev/null", O_WRONLY, 0);
        } else {
            rc = posix_spawn_file_actions_adddup2(&files, source, target);
        }
    }
    // Whatever the descriptors not set up above are, none reaches the child: a
    // library's descriptor opened without O_CLOEXEC (Foundation's file writes
    // are) would otherwise live on in it, holding a file open for writing.
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&files, highest + 1);
    sigset_t empty, all;
    sigemptyset(&empty);
    sigfillset(&all);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attributes, &empty);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attributes, &all);
    if (rc == 0) rc = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = posix_spawn(pid, path, &files, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&files);
    return rc;
}

int airlock_kill_unreaped(pid_t pid, int sig) {
    return kill(pid, sig);
}

int airlock_reap(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return 0;
}

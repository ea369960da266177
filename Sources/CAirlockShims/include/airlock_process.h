#ifndef AIRLOCK_PROCESS_H
#define AIRLOCK_PROCESS_H
// A child is held by a pidfd so that no signal can reach a process that reused
// the pid of one already reaped. glibc declares pidfd_open and pidfd_send_signal
// only in <sys/pidfd.h>, which Swift's Glibc module does not include, and its
// waitid wrapper drops the rusage argument the kernel's waitid takes.
#include <sys/types.h>

/// pidfd_open(2) with close-on-exec (pidfds always are): a descriptor for `pid`,
/// or -1 and errno.
int airlock_pidfd_open(pid_t pid);

/// pidfd_send_signal(2) with no siginfo: 0, or -1 and errno (ESRCH once the
/// child has exited, whether or not it was reaped).
int airlock_pidfd_send_signal(int pidfd, int sig);

/// waitid(P_PIDFD, pidfd, WEXITED) through the raw system call, which also fills
/// `max_rss_kib` (the child's peak resident set). `*exited` is 1 with the exit
/// status in `*code`, or 0 with the terminating signal in `*code`. 0, or -1 and errno.
int airlock_pidfd_wait(int pidfd, int *exited, int *code, long *max_rss_kib);

/// posix_spawn(3) of `path` with descriptors set up by `actions` (pairs of
/// source and target: `source` -1 opens /dev/null read-only at `target`, -2 opens
/// it write-only, anything else is dup2'd onto `target`) and every descriptor
/// above the highest target closed, every signal's
/// disposition reset to its default and an empty signal mask. The new pid in
/// `*pid`; 0, or the error number (posix_spawn leaves errno alone).
int airlock_spawn(pid_t *pid, const char *path, const int *actions, int action_count,
                  char *const argv[], char *const envp[]);

/// kill(2) of a child that has not been waited for yet (its pid cannot have been
/// reused): only for one whose pidfd could not be opened. 0, or -1 and errno.
int airlock_kill_unreaped(pid_t pid, int sig);

/// waitpid(2) for that same child, retrying EINTR; 0, or -1 and errno.
int airlock_reap(pid_t pid);

#endif

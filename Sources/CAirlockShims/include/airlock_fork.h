#ifndef AIRLOCK_FORK_H
#define AIRLOCK_FORK_H
// A decoder template forks each drop's child as a sibling of itself, a child of
// the supervisor (CLONE_PARENT), and hands the supervisor a pidfd for it
// (CLONE_PIDFD): glibc 2.36 has no clone3 wrapper and its fork() takes no flags,
// so the system call is made here.
#include <sys/types.h>

/// clone3(2) with CLONE_PARENT | CLONE_PIDFD and no new stack (a copy of this
/// address space, as fork gives), or, where clone3 is ENOSYS (systemd's
/// RestrictNamespaces= answers it so, since it cannot look into its arguments),
/// clone(2) with the same flags. In the caller: the child's pid, with its pidfd
/// (close-on-exec) in `*pidfd`; in the child: 0; -1 and errno on failure.
///
/// The child starts as a copy of a single-threaded caller; glibc's fork handlers
/// do not run (the caller has no other threads whose locks they would repair).
pid_t airlock_fork_sibling(int *pidfd);

/// malloc_trim(3) with no padding: the heap's free pages go back to the kernel,
/// so that children forked afterwards neither copy them on write nor unmap them
/// at exit. 1 when memory was released, 0 when there was none to release.
int airlock_trim_heap(void);

/// The whole file at `path` read into anonymous memory aligned to 2 MiB and
/// advised for transparent huge pages (MADV_HUGEPAGE; ignored where the kernel
/// has none): a fork copies a few page-table entries for it, and the children
/// read it without a page fault, where a file mapping is faulted in again by
/// every child. Never unmapped. Its length in `*length`; NULL and errno on failure.
void *airlock_read_file_anonymous(const char *path, size_t *length);

/// This process's number of threads, from /proc/self/stat; -1 and errno when it
/// cannot be read.
int airlock_thread_count(void);

#endif

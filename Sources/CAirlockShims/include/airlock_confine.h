// Landlock's structures change size with its ABI and Debian 12's headers stop at
// ABI 2, and libseccomp is a C API built around variadic macros: the decoder
// child's confinement is set up here, in C, and driven from Swift.
#ifndef AIRLOCK_CONFINE_H
#define AIRLOCK_CONFINE_H

/// The highest Landlock ABI the kernel offers; 0 when it has none (or it is
/// disabled), with errno set.
int airlock_landlock_abi(void);

/// Restricts this process with Landlock at `abi` (at most 7): read, write,
/// make-file, make-dir and remove rights beneath `staging_fd` (none when it is -1), no other
/// filesystem access; from ABI 4 no TCP bind or connect; from ABI 6 no signals
/// or abstract UNIX sockets outside the domain. Returns 0, or -1 with errno.
int airlock_landlock_restrict(int staging_fd, int abi);

/// Restricts this process (the supervisor) so it can write, create, rename or
/// remove only beneath `root_fd` and, if not -1, beneath `extra_fd`, and write to
/// the open file `devnull_fd`'s path; reading and executing stay unrestricted.
/// Returns 0, or -1 with errno.
int airlock_landlock_restrict_writes(int root_fd, int extra_fd, int devnull_fd, int abi);

/// prctl(PR_GET_SECCOMP): this process's seccomp mode (0 none, 2 filters in
/// force), or -1 with errno (EINVAL: the kernel was built without seccomp).
int airlock_seccomp_mode(void);

/// seccomp(SECCOMP_GET_ACTION_AVAIL) for the kill-process action, the call
/// libseccomp needs before it will load our filter: 0, or -1 with errno (ENOSYS
/// from the kernel, or whatever a system-call filter above us answers).
int airlock_seccomp_syscall_probe(void);

/// Installs the seccomp filter (libseccomp): everything allowed except the
/// calls a decoder never needs (sockets, exec, ptrace, mounts, bpf, keys, …),
/// which kill the process (SIGSYS). Returns 0, or a negative errno.
int airlock_seccomp_apply(void);

struct sock_filter;

/// Parts of the decoder's filter: the calls a decoder never needs, each of which
/// kills the process (a template loads this part for every child it forks), and
/// the rules on starting a new process (each child adds them itself: its
/// template has to fork). Both filters in force are exactly the whole filter:
/// the kernel takes the strictest answer of every filter for every call.
#define AIRLOCK_FILTER_DENIED_CALLS 1
#define AIRLOCK_FILTER_NEW_PROCESSES 2
#define AIRLOCK_FILTER_WHOLE 3

/// The `parts` of that filter as libseccomp generates them for seccomp_load,
/// into `*program` (`*count` instructions, malloc'd, the caller's) for
/// `airlock_seccomp_load`: a process that forks decoders compiles them once,
/// and each child loads its part without libseccomp's work. Returns 0, or a
/// negative errno.
int airlock_seccomp_compile(int parts, struct sock_filter **program, unsigned short *count);

/// seccomp(SECCOMP_SET_MODE_FILTER) of `count` instructions from
/// `airlock_seccomp_compile`, with no flags, as libseccomp loads a filter (it
/// needs no_new_privs set first). Returns 0, or a negative errno.
int airlock_seccomp_load(const struct sock_filter *program, unsigned short count);

#endif

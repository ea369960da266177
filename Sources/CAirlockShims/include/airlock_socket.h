#ifndef AIRLOCK_SOCKET_H
#define AIRLOCK_SOCKET_H
// A local (AF_UNIX) stream socket for talking to a scanner daemon: building a
// sockaddr_un and passing a descriptor (SCM_RIGHTS) need C structures and the
// CMSG_* macros, which Swift cannot import.
#include <stddef.h>
#include <sys/types.h>

/// socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC) connected to `path`; -1 and errno
/// on failure (ENAMETOOLONG when the path does not fit a sockaddr_un). An
/// interrupted connect is waited for rather than retried.
int airlock_connect_local(const char *path);

/// sendmsg(2) of `length` bytes carrying `passed_fd` as SCM_RIGHTS, with
/// MSG_NOSIGNAL; the bytes sent, or -1 and errno.
ssize_t airlock_send_descriptor(int socket_fd, int passed_fd, const void *bytes, size_t length);

/// send(2) with MSG_NOSIGNAL: a peer that went away is EPIPE, never SIGPIPE.
ssize_t airlock_send(int socket_fd, const void *bytes, size_t length);

#endif

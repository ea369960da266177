#ifndef AIRLOCK_HANDOVER_H
#define AIRLOCK_HANDOVER_H
// A decoder template receives a drop's descriptors (drop, staging directory, result
// pipe, the child's go-ahead socket) over a socket pair (SCM_RIGHTS) together with
// the child's arguments in one message, and sends back the child's pidfd:
// the control-message structures and CMSG_* macros this needs are not importable
// into Swift.
#include <stddef.h>
#include <sys/types.h>

/// The most descriptors one hand-over message carries.
#define AIRLOCK_HANDOVER_MAX_DESCRIPTORS 4

/// socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC): one message per send, kept
/// whole. 0, or -1 and errno.
int airlock_handover_pair(int fds[2]);

/// sendmsg(2) of `length` bytes carrying `count` descriptors as SCM_RIGHTS, with
/// MSG_NOSIGNAL (a peer that went away is EPIPE). The bytes sent, or -1 and errno.
ssize_t airlock_handover_send(int socket_fd, const int *fds, int count, const void *bytes, size_t length);

/// recvmsg(2) of one message with MSG_CMSG_CLOEXEC: its bytes into `bytes`, its
/// descriptors into `fds` (at most `max_fds`, their number in `*count`). A message
/// or descriptor list that did not fit is EMSGSIZE, with every descriptor that did
/// arrive closed. The bytes received (0: the peer closed), or -1 and errno.
ssize_t airlock_handover_receive(int socket_fd, int *fds, int max_fds, int *count, void *bytes, size_t length);

#endif

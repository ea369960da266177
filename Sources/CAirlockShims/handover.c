#define _GNU_SOURCE
#include "airlock_handover.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int airlock_handover_pair(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds);
}

typedef union {
    char buffer[CMSG_SPACE(sizeof(int) * AIRLOCK_HANDOVER_MAX_DESCRIPTORS)];
    struct cmsghdr align;
} handover_control;

ssize_t airlock_handover_send(int socket_fd, const int *fds, int count, const void *bytes, size_t length) {
    if (count < 0 || count > AIRLOCK_HANDOVER_MAX_DESCRIPTORS) {
        errno = EINVAL;
        return -1;
    }
    struct iovec vector = {.iov_base = (void *)bytes, .iov_len = length};
    handover_control control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1};
    if (count > 0) {
        message.msg_control = control.buffer;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)count);
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
        memcpy(CMSG_DATA(header), fds, sizeof(int) * (size_t)count);
    }
    return sendmsg(socket_fd, &message, MSG_NOSIGNAL);
}

ssize_t airlock_handover_receive(int socket_fd, int *fds, int max_fds, int *count, void *bytes, size_t length) {
    struct iovec vector = {.iov_base = bytes, .iov_len = length};
    handover_control control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer,
    };
    *count = 0;
    ssize_t received = recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC);
    if (received < 0) return -1;
    int arrived[AIRLOCK_HANDOVER_MAX_DESCRIPTORS];
    int total = 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int n = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < n && total < AIRLOCK_HANDOVER_MAX_DESCRIPTORS; i++) {
            memcpy(&arrived[total++], CMSG_DATA(header) + sizeof(int) * (size_t)i, sizeof(int));
        }
    }
    if ((message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || total > max_fds) {
        for (int i = 0; i < total; i++) close(arrived[i]);
        errno = EMSGSIZE;
        return -1;
    }
    memcpy(fds, arrived, sizeof(int) * (size_t)total);
    *count = total;
    return received;
}

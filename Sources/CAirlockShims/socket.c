#define _GNU_SOURCE
#include "airlock_socket.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int airlock_connect_local(const char *path) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    if (length >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(address.sun_path, path, length);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) == 0) return fd;
    if (errno == EINTR) {
        // The connection goes on in the background; retrying connect would say EALREADY.
        struct pollfd entry = {.fd = fd, .events = POLLOUT};
        int ready;
        do { ready = poll(&entry, 1, -1); } while (ready < 0 && errno == EINTR);
        int failure = 0;
        socklen_t size = sizeof failure;
        if (ready > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &size) == 0 && failure == 0) return fd;
        if (ready > 0 && failure != 0) errno = failure;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

ssize_t airlock_send_descriptor(int socket_fd, int passed_fd, const void *bytes, size_t length) {
    struct iovec vector = {.iov_base = (void *)bytes, .iov_len = length};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer,
    };
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &passed_fd, sizeof(int));
    return sendmsg(socket_fd, &message, MSG_NOSIGNAL);
}

ssize_t airlock_send(int socket_fd, const void *bytes, size_t length) {
    return send(socket_fd, bytes, length, MSG_NOSIGNAL);
}

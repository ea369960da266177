#define _GNU_SOURCE
#include "airlock_shims.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

const int airlock_open_path_flag = O_PATH;
const int airlock_open_no_access_time_flag = O_NOATIME;

int airlock_set_posix_acl(int fd, int is_default, const void *value, size_t size) {
    return fsetxattr(fd, is_default ? "system.posix_acl_default" : "system.posix_acl_access", value, size, 0);
}

int airlock_renameat_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}

int airlock_open_beneath(int dirfd, const char *path, int flags, unsigned int mode) {
    struct open_how how = {
        .flags = (uint64_t)(unsigned int)flags,
        .mode = (flags & O_CREAT) ? mode : 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
    };
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

int airlock_open_path(int dirfd, const char *name) {
    return openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

ssize_t airlock_read_link(int fd, char *buffer, size_t size) {
    return readlinkat(fd, "", buffer, size);
}

int airlock_syncfs(int fd) {
    return syncfs(fd);
}

int airlock_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

int airlock_reserve_space(int fd, long long bytes) {
    return fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)bytes);
}

int airlock_close_from(unsigned int first) {
    if (close_range(first, ~0U, 0) == 0) {
        return 0;
    }
    if (errno != ENOSYS && errno != EINVAL) {
        return -1;
    }
    struct rlimit limit;
    long max = 1024;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        max = (long)limit.rlim_cur;
    }
    for (long fd = first; fd < max; fd++) {
        (void)close((int)fd);
    }
    return 0;
}

int airlock_set_no_new_privs(void) {
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

int airlock_set_parent_death_signal(int sig) {
    return prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0);
}

int airlock_set_not_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int airlock_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int airlock_take_read_lease(int fd) {
    return fcntl(fd, F_SETLEASE, F_RDLCK);
}

int airlock_release_lease(int fd) {
    return fcntl(fd, F_SETLEASE, F_UNLCK);
}

int airlock_holds_read_lease(int fd) {
    int type = fcntl(fd, F_GETLEASE);
    if (type < 0) return -1;
    return type == F_RDLCK ? 1 : 0;
}

int airlock_filesystem_type(int fd, long long *type) {
    struct statfs st;
    if (fstatfs(fd, &st) != 0) return -1;
    *type = (long long)st.f_type;
    return 0;
}

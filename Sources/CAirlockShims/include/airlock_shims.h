// Swift's Glibc module is built without _GNU_SOURCE, so the Linux-specific calls
// airlock relies on (renameat2, syncfs, close_range) are not visible to Swift, and
// variadic ones (prctl) cannot be called from Swift at all. Each wrapper here is a
// plain call with the errno of the call left intact.
#ifndef AIRLOCK_SHIMS_H
#define AIRLOCK_SHIMS_H

#include <sys/types.h>
#include "airlock_confine.h"
#include "airlock_socket.h"
#include "airlock_handover.h"
#include "airlock_capabilities.h"

/// renameat2(2) with RENAME_NOREPLACE: fails with EEXIST instead of replacing.
int airlock_renameat_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// openat(2) of one name with O_PATH | O_NOFOLLOW | O_CLOEXEC: a handle on the name
/// itself, a symbolic link included, that can be examined (fstat) and walked from
/// (as the directory of an *at call) but not read.
int airlock_open_path(int dirfd, const char *name);

/// openat2(2) of a relative path beneath dirfd with RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV: the whole path
/// resolved in one call, never above dirfd, through no link of any kind and on
/// no other mount. -1 with ENOSYS where the kernel (before 5.6) lacks the call.
int airlock_open_beneath(int dirfd, const char *path, int flags, unsigned int mode);

/// readlinkat(2) of the link an O_PATH descriptor holds (empty path).
ssize_t airlock_read_link(int fd, char *buffer, size_t size);

/// O_PATH, which Swift's Glibc module does not define: a descriptor that only
/// names a directory, usable with openat(2) where the caller may search it but
/// not read it.
extern const int airlock_open_path_flag;

/// O_NOATIME, which Swift's Glibc module does not define: a read through the
/// descriptor leaves the file's access time alone. Only the file's owner (or a
/// holder of CAP_FOWNER) may ask for it; anyone else gets EPERM.
extern const int airlock_open_no_access_time_flag;

/// fsetxattr(2) of a POSIX ACL in the kernel's xattr form: the directory's or
/// file's access ACL ("system.posix_acl_access"), or with is_default a
/// directory's default ACL ("system.posix_acl_default"). <sys/xattr.h> is not in
/// Swift's Glibc module.
int airlock_set_posix_acl(int fd, int is_default, const void *value, size_t size);

/// syncfs(2): flush the filesystem holding fd.
int airlock_syncfs(int fd);

/// sync_file_range(2) over the whole file with SYNC_FILE_RANGE_WRITE: starts
/// writeback of its dirty pages without waiting for it.
int airlock_start_writeback(int fd);

/// fallocate(2) with FALLOC_FL_KEEP_SIZE over the first `bytes` bytes: their
/// blocks reserved now, the file's size unchanged. 0, or -1 with errno.
int airlock_reserve_space(int fd, long long bytes);

/// close_range(2) from first to the highest descriptor; falls back to a close loop
/// on kernels without it.
int airlock_close_from(unsigned int first);

/// prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0).
int airlock_set_no_new_privs(void);

/// prctl(PR_SET_PDEATHSIG, sig): the child dies with its supervisor.
int airlock_set_parent_death_signal(int sig);

/// prctl(PR_SET_DUMPABLE, 0): no core dumps, no ptrace attach by same uid.
int airlock_set_not_dumpable(void);

/// pipe2(2) with O_CLOEXEC on both ends.
int airlock_pipe_cloexec(int fds[2]);

/// fcntl(fd, F_SETLEASE, F_RDLCK): succeeds only while nobody holds the file
/// open for writing (EAGAIN otherwise).
int airlock_take_read_lease(int fd);

/// fcntl(fd, F_SETLEASE, F_UNLCK).
int airlock_release_lease(int fd);

/// fcntl(fd, F_GETLEASE): 1 while fd's read lease stands, 0 once it is gone or
/// being broken (someone opened the file for writing or truncated it), -1 on error.
int airlock_holds_read_lease(int fd);

/// fstatfs(2)'s f_type (sys/vfs.h, which Swift's Glibc module leaves out) in
/// *type; 0 on success, -1 with errno set.
int airlock_filesystem_type(int fd, long long *type);

#endif

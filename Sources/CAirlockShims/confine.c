#define _GNU_SOURCE
#include "airlock_confine.h"
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* Landlock's UAPI, spelled out for ABIs past what the installed headers know. */
struct ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define RULE_PATH_BENEATH 1
#define CREATE_RULESET_VERSION (1U << 0)

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_REMOVE_DIR (1ULL << 4)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_CHAR (1ULL << 6)
#define FS_MAKE_DIR (1ULL << 7)
#define FS_MAKE_REG (1ULL << 8)
#define FS_MAKE_SOCK (1ULL << 9)
#define FS_MAKE_FIFO (1ULL << 10)
#define FS_MAKE_BLOCK (1ULL << 11)
#define FS_MAKE_SYM (1ULL << 12)
#define FS_REFER (1ULL << 13)      /* ABI 2 */
#define FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#define NET_BIND_TCP (1ULL << 0)   /* ABI 4 */
#define NET_CONNECT_TCP (1ULL << 1)
#define SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define SCOPE_SIGNAL (1ULL << 1)

/* Adds each rule whose parent_fd is not -1 to `ruleset`, restricts this process
   with it, and closes it; 0, or -1 with errno. */
static int restrict_with(int ruleset, struct path_beneath_attr *rules, int count) {
    long result = 0;
    for (int i = 0; i < count && result == 0; i++) {
        if (rules[i].parent_fd < 0) continue;
        result = syscall(SYS_landlock_add_rule, ruleset, RULE_PATH_BENEATH, &rules[i], 0);
    }
    if (result == 0) result = syscall(SYS_landlock_restrict_self, ruleset, 0);
    int saved = errno;
    close(ruleset);
    errno = saved;
    return result == 0 ? 0 : -1;
}

int airlock_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

int airlock_landlock_restrict(int staging_fd, int abi) {
    if (abi <= 0) {
        errno = EOPNOTSUPP;
        return -1;
    }
    struct ruleset_attr attr = {0};
    size_t size = sizeof(attr.handled_access_fs);
    attr.handled_access_fs = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR |
                             FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK |
                             FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM;
    /* READ_FILE beneath staging only: a decoder may read back what it wrote. */
    uint64_t allowed = FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG;
    if (abi >= 2) attr.handled_access_fs |= FS_REFER;
    if (abi >= 3) {
        attr.handled_access_fs |= FS_TRUNCATE;
        allowed |= FS_TRUNCATE;
    }
    if (abi >= 5) attr.handled_access_fs |= FS_IOCTL_DEV;
    if (abi >= 4) {
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
        size = offsetof(struct ruleset_attr, scoped);
    }
    if (abi >= 6) {
        attr.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
        size = sizeof(attr);
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) return -1;
    struct path_beneath_attr rule = {.allowed_access = allowed, .parent_fd = staging_fd};
    return restrict_with(ruleset, &rule, 1);
}

int airlock_landlock_restrict_writes(int root_fd, int extra_fd, int devnull_fd, int abi) {
    if (abi <= 0) {
        errno = EOPNOTSUPP;
        return -1;
    }
    uint64_t writes = FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG |
                      FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK | FS_MAKE_SYM;
    if (abi >= 2) writes |= FS_REFER;
    if (abi >= 3) writes |= FS_TRUNCATE;
    struct ruleset_attr attr = {.handled_access_fs = writes};
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr.handled_access_fs), 0);
    if (ruleset < 0) return -1;
    /* Every right beneath the root, device and link kinds included: a symlink,
       FIFO, socket or device dropped into the inbox is moved, as it is, into the
       claim and the quarantine, and Landlock counts such a rename as making one. */
    struct path_beneath_attr rules[3] = {
        {.allowed_access = writes, .parent_fd = root_fd},
        {.allowed_access = writes, .parent_fd = extra_fd},
        {.allowed_access = FS_WRITE_FILE, .parent_fd = devnull_fd},
    };
    return restrict_with(ruleset, rules, 3);
}

/* Calls a decoder never makes; any of them means it has been subverted. */
static const char *const denied[] = {
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "execve", "execveat", "fork", "vfork",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "pidfd_open",
    "mount", "umount2", "mount_setattr", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
    "pivot_root", "chroot", "unshare", "setns",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key", "personality",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
    "open_by_handle_at", "name_to_handle_at", "fanotify_init",
    "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups", "capset",
};

int airlock_seccomp_mode(void) {
    return prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
}

int airlock_seccomp_syscall_probe(void) {
    uint32_t action = SECCOMP_RET_KILL_PROCESS;
    return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0 ? 0 : -1;
}

/* The parts of the decoder's filter named by `parts` (AIRLOCK_FILTER_…), built in
   `ctx`: 0, or a negative errno. */
static int build_decoder_filter(scmp_filter_ctx ctx, int parts) {
    int rc = 0;
    for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]) && rc == 0 && (parts & AIRLOCK_FILTER_DENIED_CALLS); i++) {
        int number = seccomp_syscall_resolve_name(denied[i]);
        if (number == __NR_SCMP_ERROR) continue; /* unknown to this libseccomp: not on this arch */
        rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, number, 0);
    }
    if (!(parts & AIRLOCK_FILTER_NEW_PROCESSES)) return rc;
    /* A new process (not a thread) through clone: killed. clone3 passes its flags in
       memory seccomp cannot read: it fails with ENOSYS, so libc falls back to clone. */
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(clone), 1,
                                       SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    return rc;
}

int airlock_seccomp_apply(void) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == NULL) return -ENOMEM;
    int rc = build_decoder_filter(ctx, AIRLOCK_FILTER_WHOLE);
    if (rc == 0) rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc;
}

int airlock_seccomp_compile(int parts, struct sock_filter **program, unsigned short *count) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == NULL) return -ENOMEM;
    int rc = build_decoder_filter(ctx, parts);
    /* libseccomp 2.5 exports a program only to a descriptor. */
    int fd = rc == 0 ? memfd_create("airlock-seccomp", MFD_CLOEXEC) : -1;
    if (rc == 0 && fd < 0) rc = -errno;
    if (rc == 0) rc = seccomp_export_bpf(ctx, fd);
    seccomp_release(ctx);
    off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (rc == 0 && size < 0) rc = -errno;
    if (rc == 0 && (size == 0 || size % sizeof(struct sock_filter) != 0 ||
                    size / sizeof(struct sock_filter) > BPF_MAXINSNS)) rc = -EINVAL;
    struct sock_filter *bytes = rc == 0 ? malloc((size_t)size) : NULL;
    if (rc == 0 && bytes == NULL) rc = -ENOMEM;
    size_t done = 0;
    while (rc == 0 && done < (size_t)size) {
        ssize_t n = pread(fd, (char *)bytes + done, (size_t)size - done, (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) rc = n < 0 ? -errno : -EIO;
        else done += (size_t)n;
    }
    if (fd >= 0) close(fd);
    if (rc != 0) {
        free(bytes);
        return rc;
    }
    *program = bytes;
    *count = (unsigned short)(size / sizeof(struct sock_filter));
    return 0;
}

int airlock_seccomp_load(const struct sock_filter *program, unsigned short count) {
    struct sock_fprog filter = {.len = count, .filter = (struct sock_filter *)program};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter) == 0) return 0;
    return -errno;
}

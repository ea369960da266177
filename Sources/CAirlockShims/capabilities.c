#include "airlock_capabilities.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

// The kernel's capabilities fit in 64 bits; prctl answers EINVAL past the last.
#define AIRLOCK_MAX_CAP 63

static int get_sets(struct __user_cap_data_struct data[2]) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    return (int)syscall(SYS_capget, &header, data);
}

static int set_sets(struct __user_cap_data_struct data[2]) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    return (int)syscall(SYS_capset, &header, data);
}

static uint64_t join(uint32_t low, uint32_t high) { return (uint64_t)low | ((uint64_t)high << 32); }

int airlock_capability_sets(uint64_t *effective, uint64_t *permitted, uint64_t *inheritable) {
    struct __user_cap_data_struct data[2] = {{0}};
    if (get_sets(data) != 0) return -1;
    *effective = join(data[0].effective, data[1].effective);
    *permitted = join(data[0].permitted, data[1].permitted);
    *inheritable = join(data[0].inheritable, data[1].inheritable);
    return 0;
}

int airlock_capabilities(uint64_t *effective, uint64_t *permitted, uint64_t *inheritable,
                         uint64_t *ambient, uint64_t *bounding) {
    if (airlock_capability_sets(effective, permitted, inheritable) != 0) return -1;
    *ambient = 0;
    *bounding = 0;
    for (int cap = 0; cap <= AIRLOCK_MAX_CAP; cap++) {
        int in_bounding = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (in_bounding < 0) break;  // EINVAL: past the kernel's last capability
        if (in_bounding == 1) *bounding |= (uint64_t)1 << cap;
        int in_ambient = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
        if (in_ambient == 1) *ambient |= (uint64_t)1 << cap;
    }
    return 0;
}

int airlock_clear_inherited_capabilities(void) {
    // EINVAL: a kernel older than 4.3, which has no ambient set to clear.
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
    struct __user_cap_data_struct data[2] = {{0}};
    if (get_sets(data) != 0) return -1;
    if ((data[0].inheritable | data[1].inheritable) == 0) return 0;
    data[0].inheritable = 0;
    data[1].inheritable = 0;
    return set_sets(data);
}

int airlock_drop_all_capabilities(int *bounding_left) {
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -1;
    *bounding_left = 0;
    for (int cap = 0; cap <= AIRLOCK_MAX_CAP; cap++) {
        int in_bounding = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (in_bounding < 0) break;
        // EPERM without CAP_SETPCAP: the capability stays in the bounding set, where
        // with no_new_privs and empty permitted and inheritable sets it can never
        // be raised again.
        if (in_bounding == 1 && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) (*bounding_left)++;
    }
    struct __user_cap_data_struct data[2] = {{0}};
    struct __user_cap_data_struct now[2] = {{0}};
    if (get_sets(now) != 0) return -1;
    if ((now[0].effective | now[0].permitted | now[0].inheritable | now[1].effective | now[1].permitted | now[1].inheritable) == 0) return 0;
    return set_sets(data);
}

int airlock_keep_capabilities(int keep) {
    return prctl(PR_SET_KEEPCAPS, keep ? 1 : 0, 0, 0, 0);
}

int airlock_limit_capabilities(uint64_t mask) {
    struct __user_cap_data_struct data[2] = {{0}};
    if (get_sets(data) != 0) return -1;
    uint64_t permitted = join(data[0].permitted, data[1].permitted) & mask;
    data[0].effective = data[0].permitted = (uint32_t)permitted;
    data[1].effective = data[1].permitted = (uint32_t)(permitted >> 32);
    data[0].inheritable = data[1].inheritable = 0;
    return set_sets(data);
}

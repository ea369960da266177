#ifndef AIRLOCK_CAPABILITIES_H
#define AIRLOCK_CAPABILITIES_H
// glibc has no wrapper for capget(2) and capset(2), and libcap would be a library
// linked into every program for four system calls: the kernel's interface
// (<linux/capability.h>, version 3) is used here directly.
#include <stdint.h>

/// This thread's capability sets as capget(2) reports them, each as a 64-bit
/// mask; `*ambient` from prctl(PR_CAP_AMBIENT_IS_SET), `*bounding` from
/// prctl(PR_CAPBSET_READ), for every capability up to the kernel's last.
/// 0, or -1 and errno.
int airlock_capabilities(uint64_t *effective, uint64_t *permitted, uint64_t *inheritable,
                         uint64_t *ambient, uint64_t *bounding);

/// This thread's effective, permitted and inheritable sets (one capget(2)),
/// each as a 64-bit mask. 0, or -1 and errno.
int airlock_capability_sets(uint64_t *effective, uint64_t *permitted, uint64_t *inheritable);

/// Clears the ambient set (prctl PR_CAP_AMBIENT_CLEAR_ALL) and the inheritable
/// set (capset, keeping effective and permitted), so that no program this
/// process executes from now on starts with a capability. 0, or -1 and errno.
int airlock_clear_inherited_capabilities(void);

/// Gives up every capability for good: the ambient set, each capability of the
/// bounding set this process may drop (PR_CAPBSET_DROP needs CAP_SETPCAP; the
/// number left is put in `*bounding_left`), then effective, permitted and
/// inheritable (capset to nothing). 0, or -1 and errno.
int airlock_drop_all_capabilities(int *bounding_left);

/// prctl(PR_SET_KEEPCAPS, `keep`): whether the permitted set survives a change
/// from uid 0 to another uid. 0, or -1 and errno.
int airlock_keep_capabilities(int keep);

/// capset: effective and permitted become `mask` (within what is permitted now),
/// inheritable nothing. 0, or -1 and errno.
int airlock_limit_capabilities(uint64_t mask);

#endif

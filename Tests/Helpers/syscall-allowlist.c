/* Runs a command under a seccomp allow-list, the way systemd applies a unit's
   SystemCallFilter= with SystemCallErrorNumber=: every system call not named in
   ALLOWFILE (one name per line) fails with ERRNO; the filter is inherited by
   everything the command starts.

   usage: syscall-allowlist ERRNO ALLOWFILE COMMAND [ARG...] */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: syscall-allowlist ERRNO ALLOWFILE COMMAND [ARG...]\n");
        return 64;
    }
    int error = atoi(argv[1]);
    FILE *list = fopen(argv[2], "r");
    if (list == NULL || error <= 0) {
        perror(argv[2]);
        return 66;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(error));
    if (ctx == NULL) return 70;
    char line[256];
    int allowed = 0;
    while (fgets(line, sizeof line, list) != NULL) {
        line[strcspn(line, " \t\r\n")] = 0;
        if (line[0] == 0 || line[0] == '#') continue;
        int number = seccomp_syscall_resolve_name(line);
        if (number == __NR_SCMP_ERROR) continue; /* not a call of this architecture */
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, number, 0);
        if (rc != 0) {
            fprintf(stderr, "syscall-allowlist: %s: %s\n", line, strerror(-rc));
            return 70;
        }
        allowed++;
    }
    fclose(list);
    int rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        fprintf(stderr, "syscall-allowlist: seccomp_load: %s\n", strerror(-rc));
        return 70;
    }
    execv(argv[3], argv + 3);
    perror(argv[3]);
    return 71;
}

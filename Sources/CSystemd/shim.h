// libsystemd's sd_notify for Type=notify services: READY=1, STATUS=, STOPPING=1,
// WATCHDOG=1. A well-kept implementation of the protocol rather than our own.
#include <systemd/sd-daemon.h>

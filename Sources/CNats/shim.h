// The NATS C client (Debian's libnats-dev), with JetStream: the publisher's only
// network library, linked into airlock-publisher alone so the intake binary has none.
#include <nats/nats.h>

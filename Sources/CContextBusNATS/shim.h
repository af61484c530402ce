#ifndef CONTEXTBUS_CNATS_SHIM_H
#define CONTEXTBUS_CNATS_SHIM_H

// The NATS C client (Debian's libnats-dev), for fleetsvc's JetStream bridge (Sources/fleetsvc/NATS).
#include <nats/nats.h>

#endif

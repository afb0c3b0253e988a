#include "fencegate/client/fencing.h"

namespace fencegate::client {

Fencing FencingOf(const Lease& lease) {
  return Fencing{lease.resource(), lease.token(), lease.signature(), lease.mode()};
}

}  // namespace fencegate::client

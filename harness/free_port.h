// PickFreePort: a TCP port for a server that cannot listen on port 0 and
// say which port it got (etcd, PostgreSQL), or that must come back on the
// same port after a restart (the torture suite's servers): a port below the
// kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), where
// no port-0 listener or outgoing connection lands, drawn at random and
// checked free on `host` now, and not one of the last 4,096 this process
// was given (those may be free only because their servers have not bound
// them yet). Another process may still take it before the server binds it:
// a caller retries with a new port if the start fails.
//
// Thread safety: thread-safe.
#ifndef FENCEGATE_HARNESS_FREE_PORT_H_
#define FENCEGATE_HARNESS_FREE_PORT_H_

#include <string>

#include "absl/status/statusor.h"

namespace fencegate::testing {

absl::StatusOr<int> PickFreePort(const std::string& host = "127.0.0.1");

}  // namespace fencegate::testing

#endif  // FENCEGATE_HARNESS_FREE_PORT_H_

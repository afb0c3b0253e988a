// The line protocol between the demo (or a test) and a demo client process
// (demo_client_main.cc). The driver writes one command per line on the
// client's stdin; the client answers each with one "reply" line on stdout,
// in order, and may print "event" lines at any time (its Lease's on_lost
// callback). A line is a word followed by tab-separated key=value fields:
//
//   acquire<TAB>ttl_ms=2000
//   reply<TAB>status=ok<TAB>token=7<TAB>ttl_ms=2000
//   event<TAB>what=lease_lost<TAB>token=7<TAB>msg=lease on 'r' ... lapsed
//
// Commands and their replies' status values:
//   acquire ttl_ms=N   ok (token, ttl_ms) | not_acquired (holder_token)
//   check              ok (remaining_ms)  | lost (msg): Lease::Check()
//   read               ok (value, text, version, max_token) | stale (max_token)
//   write              writes the last value read + 1, with the lease's token:
//                      ok (value, text, version, max_token) | stale (max_token)
//   renew              a Renew RPC with the lease's token: ok (ttl_ms) |
//                      lease_lost (holder_token)
//   release            releases the live lease, or sends a Release RPC with
//                      a lost one's token: ok (holds_left) | lease_lost
//   reconnect timeout_ms=N   waits until the lock service channel is up: ok
//   quit               ok, then the client exits (releasing a live lease)
// Any command may answer status=error (msg) for what the scenario did not
// expect (a server unreachable, a bad command).
//
// Values never contain tabs or newlines (they are replaced by spaces).
// Thread safety: free functions and a value type.
#ifndef FENCEGATE_HARNESS_CLIENT_PROTOCOL_H_
#define FENCEGATE_HARNESS_CLIENT_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace fencegate::demo {

struct Message {
  std::string word;  // the command, or "reply" / "event"
  std::vector<std::pair<std::string, std::string>> fields;

  Message& Set(absl::string_view key, absl::string_view value);
  Message& Set(absl::string_view key, uint64_t value);
  Message& Set(absl::string_view key, int64_t value);
  Message& Set(absl::string_view key, int value) { return Set(key, int64_t{value}); }
  // "" / 0 when absent or not a number.
  std::string Get(absl::string_view key) const;
  uint64_t GetUint(absl::string_view key) const;
  int64_t GetInt(absl::string_view key) const;
  bool Has(absl::string_view key) const;

  // The status field of a reply.
  std::string status() const { return Get("status"); }
  bool ok() const { return status() == "ok"; }
};

// One line, without the newline.
std::string FormatMessage(const Message& message);
Message ParseMessage(absl::string_view line);

}  // namespace fencegate::demo

#endif  // FENCEGATE_HARNESS_CLIENT_PROTOCOL_H_

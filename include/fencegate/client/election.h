// Elections from C++ (docs/semantics.md, "Elections"): "exactly one of my
// replicas does this job", with the leader's term fenced at the storage.
//
//   auto leading = client->Campaign("scheduler", "replica-2", "10.0.0.2:8080",
//                                   {.ttl = absl::Seconds(10),
//                                    .wait = absl::InfiniteDuration()});
//   if (!leading.ok()) ...;       // not elected within the wait, or an error
//   Leadership& me = **leading;   // renews itself, like a Lease
//   gateway->Write("scheduler", me.term(), "heartbeat", "...",
//                  me.lease().signature());  // a deposed leader's write is refused
//   me.lease().WaitLost(...);     // pushed by the service, or by this clock
//
// A Leadership is the Lease of the election's exclusive lease (lease.h): the
// term is its token, it renews itself, and it is lost exactly as a Lease is
// (refused renewal, pushed end, or no confirmed renewal for a TTL by the
// client's clock). Observers see who leads as LockClient::Observe reports.
//
// Thread safety: thread-safe, as Lease. Ownership: the LockClient must
// outlive the Leadership; destroying it resigns (releases the lease) unless
// it was lost or resigned already.
#ifndef FENCEGATE_CLIENT_ELECTION_H_
#define FENCEGATE_CLIENT_ELECTION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fencegate/client/lease.h"

namespace fencegate::client {

class LockClient;

struct CampaignOptions {
  // The term's lease length: a leader that stops renewing is deposed this
  // long after its last confirmed renewal.
  absl::Duration ttl = absl::Seconds(10);
  // How long to wait in line to lead: zero answers at once; the default
  // waits for good (in steps of the server's --max_wait).
  absl::Duration wait = absl::InfiniteDuration();
  // Empty: a fresh random id, kept by the retries of this call.
  std::string request_id;
};

// An election's state: who leads (LockClient::Leader), or how it changed
// (LockClient::Observe).
struct ElectionState {
  std::string election;
  // True: `candidate` leads in `term` saying `value`, its seq-th value
  // (0: the Campaign's own). False: nobody leads; `term` is the term that
  // ended last (0: not known) and `seq` its end's sequence number.
  bool leader = false;
  uint64_t term = 0;
  uint64_t seq = 0;
  std::string value;
  std::string candidate;
  absl::Duration remaining;  // with a leader: its lease's, when decided
  absl::Time changed_at;     // the server's wall clock when decided
};

class Leadership {
 public:
  Leadership(LockClient* client, std::string election, std::unique_ptr<Lease> lease);
  ~Leadership() = default;  // the Lease's destructor releases it
  Leadership(const Leadership&) = delete;
  Leadership& operator=(const Leadership&) = delete;

  const std::string& election() const { return election_; }
  // The term: the fencing token of every write made as this leader.
  uint64_t term() const { return lease_->token(); }
  // The term's lease: lost(), WaitLost(), Check(), signature().
  Lease& lease() { return *lease_; }

  // Says `value` from now on; returns its sequence number within the term.
  // ABORTED (IsLeaseLost) once deposed. Retried on UNAVAILABLE within the
  // client's call_timeout (ClientOptions::retry), with no request id yet:
  // when an attempt was applied but its answer lost, the retry applies it
  // again (one more seq) or, if the term ended meanwhile, is refused
  // ABORTED although the value was said. Make one attempt
  // (retry.max_attempts = 1) to tell the two apart.
  absl::StatusOr<uint64_t> Proclaim(const std::string& value);
  // Ends the term now (the next candidate in line leads), whatever its
  // holds, and stops renewing. ABORTED (IsLeaseLost) if it was deposed
  // already (it is over either way).
  absl::Status Resign();

 private:
  LockClient* const client_;
  const std::string election_;
  const std::unique_ptr<Lease> lease_;
};

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_ELECTION_H_

// Worker: the loop of one torture worker process (fencegate-torture-worker),
// a lock holder built on the client library (LockClient, the self-renewing
// Lease, GatewayClient). Round after round, on a hot resource picked at
// random:
//
//   acquire a lease (TTL in [min_ttl, max_ttl], renewed at TTL/3, a FIFO
//   wait) -> fenced read of "counter" -> think -> check the lease is still
//   valid -> [the worst moment: stop here if asked] -> MultiWrite of
//   counter = read + 1 and log/<id> = read + 1 with the lease's token ->
//   release.
//
// A profile that mixes the kinds of lock (WorkerOptions::shared_rounds and
// the like) makes some rounds of another kind instead:
//
//   reader  a shared lease -> fenced read -> think -> check -> [stop here
//           if asked] -> a second fenced read (a paused reader's: it must
//           be refused once a writer came in) -> release;
//   permit  one of the semaphore's `permits` -> think -> check -> [stop
//           here if asked] -> release (no gateway call: a permit fences
//           nothing);
//   multi   two distinct hot resources in one Acquire (a try-lock half the
//           time) -> the increment above on each -> release both;
//   elect   a Campaign for the election (WorkerOptions::election) with a
//           value naming the round -> Proclaim -> the increment above on
//           the election's counter with the term -> Proclaim again (a
//           leader paused at its worst moment proclaims late, with its old
//           term: it must be refused) -> Resign or Release.
//
// A worker with election rounds also observes the election from start to
// quit (LockClient::Observe, resuming after the last change it was told)
// and records every change it is told (ObservedChange).
//
// A SQL worker (WorkerOptions::postgres set) does the same with the same
// lease, but its fenced read and its MultiWrite are PostgreSQL transactions
// of its own on the gateways' rows, fenced with fencegate_fence
// (sql_counter.h); its history names the path kSqlPath instead of a gateway.
//
// Every call is recorded in the history file before it is sent and when it
// returns (history_log.h), with its outcome: ok, refused (the server said
// no: ABORTED, not acquired) or unknown (anything else: it may or may not
// have happened). The gateway client makes one attempt per call, so an
// outcome is never a retry's answer to an earlier attempt's effect.
//
// The harness steers it through WorkerControl (worker_control.h).
//
// Thread safety: Run() from one thread.
#ifndef FENCEGATE_TESTS_TORTURE_WORKER_H_
#define FENCEGATE_TESTS_TORTURE_WORKER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/time/time.h"
#include "fencegate/client/election.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "tests/torture/history_log.h"
#include "tests/torture/sql_counter.h"
#include "tests/torture/worker_control.h"

namespace fencegate::torture {

struct WorkerOptions {
  std::string name;  // also prefixes its holders and log ids
  std::string lockservice;
  std::string gateway;  // unused by a SQL worker
  // Non-empty: a SQL worker, on this database (a libpq URI of the
  // gateways' database and schema).
  std::string postgres;
  // A SQL worker's planted bug (planted_bugs.h), "" for none.
  std::string planted_bug;
  std::vector<std::string> resources;
  uint64_t seed = 1;
  absl::Duration min_ttl = absl::Seconds(1);
  absl::Duration max_ttl = absl::Seconds(3);
  // Of a queued Acquire (or Campaign). Short, so that rounds stay many; a
  // Lease counts a waited grant from the grant (client/lease.h), so any
  // wait would do.
  absl::Duration max_wait = absl::Milliseconds(500);
  absl::Duration max_think = absl::Milliseconds(50);  // between read and write
  // A gateway call may wait out a stalled commit this long.
  absl::Duration gateway_timeout = absl::Seconds(15);
  // Lock-service and gateway calls on the servers' Session streams instead
  // of one unary call each (client::Transport).
  bool streams = false;
  // The share of rounds of each other kind (the rest are writer rounds).
  double shared_rounds = 0;
  double permit_rounds = 0;
  double multi_rounds = 0;
  // The semaphore the permit rounds use, and its size.
  std::string semaphore = "semaphore";
  uint32_t permits = 2;
  // The share of election rounds (after the kinds above), on `election`;
  // with any, the worker also observes the election all along, on a thread
  // of its own (worker_election.cc).
  double elect_rounds = 0;
  std::string election = "election";
};

class Worker {
 public:
  Worker(WorkerOptions options, std::unique_ptr<HistoryWriter> history,
         std::unique_ptr<SharedWorkerControl> control);

  // Runs rounds until the harness asks it to quit.
  void Run();

 private:
  void Round();
  void WriterRound(const std::string& holder);
  void ReaderRound(const std::string& holder);
  void PermitRound(const std::string& holder);
  void MultiRound(const std::string& holder);
  void ElectRound(const std::string& holder);
  // Records and makes a Proclaim of `value` in the term `leading` holds.
  void Proclaim(client::Leadership& leading, const std::string& value);
  // The observer thread's loop (worker_election.cc): until quit.
  void Observe();
  client::AcquireOptions DrawAcquireOptions();
  size_t DrawResource();
  Fields AcquireFields(const std::string& resource, const std::string& holder,
                       const client::AcquireOptions& acquire) const;
  // Records and makes an Acquire of hot resource `index` (the semaphore when
  // index == resources.size()); null when it was not granted.
  std::unique_ptr<client::Lease> Acquire(size_t index, const std::string& holder,
                                         const client::AcquireOptions& acquire);
  // Completes `ops` (one Acquire) as refused or unknown by `status`.
  void RecordNotAcquired(const std::vector<uint64_t>& ops, const absl::Status& status);
  // Tells the harness what this worker holds (worker_control.h).
  void Holding(const client::Lease& lease, size_t index, absl::Duration ttl);
  // Fenced read, think, check, [stop if asked], write the read + 1.
  void Increment(client::Lease& lease);
  void Think();
  // The fenced read; the counter's value, or nullopt when the round ends.
  std::optional<uint64_t> ReadCounter(client::Lease& lease);
  void WriteIncrement(client::Lease& lease, uint64_t value);
  void Release(std::unique_ptr<client::Lease> lease);
  void StopIfAsked();
  void SetPhase(WorkerPhase phase);
  // A pause after an unknown outcome (a server may be down): until both
  // channels are connected again, at most 0.1-0.5 s (client::PauseForChannels).
  void Backoff();
  WorkerControl& control() { return **control_; }

  const WorkerOptions options_;
  std::unique_ptr<HistoryWriter> history_;
  std::unique_ptr<SharedWorkerControl> control_;
  std::shared_ptr<grpc::Channel> lock_channel_;
  std::shared_ptr<grpc::Channel> gateway_channel_;
  std::unique_ptr<client::LockClient> lock_;
  std::unique_ptr<client::LockClient> proclaims_;   // one attempt a call; elections only
  std::unique_ptr<client::GatewayClient> gateway_;  // null for a SQL worker
  std::unique_ptr<SqlCounter> sql_;                 // null for a gateway worker
  const std::string path_;                          // what the history's `gateway` says
  std::mt19937_64 random_;  // seeded: the same seed makes the same choices
  uint64_t round_ = 0;
};

// The election rounds' index in WorkerControl::resource (the hot resources
// are 0.., the semaphore resources.size()).
inline size_t ElectionIndex(const WorkerOptions& options) {
  return options.resources.size() + 1;
}

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_WORKER_H_

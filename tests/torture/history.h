// History: what happened during one torture run, as plain structs (no gRPC
// types), for the checker (history_checker.h). The workers and the lock
// service record it (history_log.h parses their files); the harness adds
// the final state it read after healing everything.
//
// Times are CLOCK_MONOTONIC nanoseconds (monotonic_clock.h). That clock is
// system-wide, so times from different processes compare, and libfaketime's
// wall-clock jumps (DONT_FAKE_MONOTONIC=1) do not move it.
//
// An operation's outcome is what its caller can know:
//   kOk       the server acknowledged it: it took effect, durably;
//   kRefused  the server answered that it did not take effect (a stale
//             token, not acquired): it changed nothing;
//   kUnknown  it may or may not have taken effect (a timeout, UNAVAILABLE,
//             a broken connection, the caller killed mid-call).
//
// Thread safety: plain values.
#ifndef FENCEGATE_TESTS_TORTURE_HISTORY_H_
#define FENCEGATE_TESTS_TORTURE_HISTORY_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "fencegate/client/lease_mode.h"

namespace fencegate::torture {

using client::LeaseMode;
using client::LeaseModeName;

// The completion time of a call whose process died before it returned.
inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// The `gateway` of a fenced read or write that a SQL worker ran in a
// PostgreSQL transaction of its own (fenced with the SQL fencing API,
// docs/sql-fencing.md) on the gateways' tables instead of sending it to a
// gateway: to the checker, one more way in to the same fences.
inline constexpr char kSqlPath[] = "sql";

enum class Outcome { kOk, kRefused, kUnknown };
const char* OutcomeName(Outcome outcome);

// What every call has: who made it, when it was invoked and when it
// returned, and its outcome.
struct Call {
  std::string process;  // the worker, e.g. "w3"
  int64_t invoke_ns = 0;
  int64_t complete_ns = kNever;
  Outcome outcome = Outcome::kUnknown;
};

// Acquire of a lease. kRefused: not acquired. A multi-resource Acquire is
// one AcquireOp per resource, with the same times, holder and outcome.
struct AcquireOp : Call {
  std::string resource;
  std::string holder;
  LeaseMode mode = LeaseMode::kExclusive;
  uint32_t permits = 0;  // kPermit: the semaphore's size
  uint64_t token = 0;    // kOk: the token granted
  // A Campaign (an election round): the resource is the election, the
  // holder the candidate, the token the term; `value` is what the term
  // says first (its seq 0).
  bool campaign = false;
  std::string value;
};

// A Proclaim of `value` in `term` (a Campaign's token) of `election`.
// kOk: applied as the term's seq-th value. A value is never proclaimed
// twice by the workers (it names its holder and round).
struct ProclaimOp : Call {
  std::string election;
  uint64_t term = 0;
  std::string value;
  uint64_t seq = 0;  // kOk
};

// One state an observer of `election` was told (LockClient::Observe), in
// the order its process was told them: who leads in which term, saying
// which value (seq 0: the Campaign's; then each Proclaim's), or that
// nobody leads (term: the term that ended, 0 when not known).
struct ObservedChange {
  std::string process;  // the observing worker
  int64_t time_ns = 0;  // when it was told
  std::string election;
  bool leader = false;
  uint64_t term = 0;
  uint64_t seq = 0;
  std::string value;
  std::string candidate;
};

// A fenced read of the resource's counter with a lease's token: an
// exclusive lease's, or a shared one's (which moves no fence).
struct FencedReadOp : Call {
  std::string resource;
  std::string gateway;  // the address it was sent to, or kSqlPath
  LeaseMode mode = LeaseMode::kExclusive;
  uint64_t token = 0;
  uint64_t value = 0;      // kOk: the counter (0 when absent)
  uint64_t max_token = 0;  // kOk or kRefused: the fence the gateway reported
};

// One increment: a MultiWrite of counter = value and log/<log_id> = value,
// with `token`, after a fenced read saw value - 1.
struct WriteOp : Call {
  std::string resource;
  std::string gateway;  // the address it was sent to, or kSqlPath
  uint64_t token = 0;
  uint64_t value = 0;
  std::string log_id;
  uint64_t max_token = 0;  // kOk or kRefused: the fence the gateway reported
};

// One line of the lock service's lease history
// (common/test_hooks/test_hooks.h), on the server's monotonic clock (which,
// being CLOCK_MONOTONIC, all instances of a replicated lock service share: they
// run on one machine).
struct LeaseEvent {
  enum class Kind { kLoad, kRestore, kGrant, kRelease, kExpire };
  int64_t time_ns = 0;
  Kind kind = Kind::kGrant;
  std::string resource;  // empty for kLoad
  uint64_t token = 0;
  int64_t ttl_ms = 0;
  // The instance that wrote it: "lockservice", or "lockservice-<i>" of a
  // replicated lock service. A load is a start, a recovery, or a new term
  // of a leader.
  std::string instance = "lockservice";
  LeaseMode mode = LeaseMode::kExclusive;  // of a grant or restore
  std::string holder;                      // of a grant or restore
};

// A resource as read after the run, once every fault was healed and both
// servers had been killed and restarted one last time.
struct FinalState {
  int64_t read_ns = 0;   // when the final reads began
  uint64_t fence = 0;    // the gateway's max token
  uint64_t counter = 0;  // 0 when absent
  std::map<std::string, uint64_t> log;  // log id -> the value it holds
};

// A resource's fence at a gateway after the run, once it had had time to
// catch up with the lock service's fence feed (grant-time fencing).
struct FeedFence {
  int64_t read_ns = 0;    // when it was read
  uint64_t fence = 0;     // the gateway's fence
  uint64_t position = 0;  // the lock service's latest position for it
};

struct History {
  std::vector<AcquireOp> acquires;
  std::vector<FencedReadOp> reads;
  std::vector<WriteOp> writes;
  std::vector<ProclaimOp> proclaims;
  // By process, each process's in the order it was told them.
  std::vector<ObservedChange> observed;
  // In time order: each instance's in the order it wrote them (its
  // processes ran one after the other), several instances' merged by time.
  std::vector<LeaseEvent> lease_events;
  // Every resource the workers used (and the harness's fence probe).
  std::map<std::string, FinalState> final_state;
  // The gateways followed the lock service's fence feed (a secure run).
  bool grant_time_fencing = false;
  // Then: each resource's fence as the gateways held it once they had
  // caught up with the feed after the run (fence_feed_wait.h), before the
  // last crash; by resource.
  std::map<std::string, FeedFence> feed_fences;
};

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_HISTORY_H_

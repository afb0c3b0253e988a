// --shape=elect: one candidate of an election, for the benchmark's
// election failover row (issue 35). It campaigns on `election` with a TTL
// (2 s in the row) and, once it leads, makes a fenced write every
// `write_every` (~5 ms) until `duration` has passed or it is killed: the
// orchestrator (bench/orchestrate/failover.py) starts two, kills the
// leader with kill -9, and times the successor's first write from the kill.
//
//   fencegate  the C++ client library as a user gets it: LockClient::Campaign
//              (its term's Lease renews itself every third of the TTL), then
//              GatewayClient::Put with the term's lease: the write is fenced
//              by the term at the gateway. Both on the Session streams (the
//              library's default).
//   etcd       etcd's own election service (v3electionpb.Election, run by
//              etcd with its concurrency.Election recipe) on a lease of the
//              TTL that this candidate grants and keeps alive, as etcd's Go
//              concurrency.Session does: LeaseKeepAlive on a stream, the
//              next one a third of the TTL after the last answer. Campaign
//              answers once every older candidate's key is gone; then each
//              write is a Txn guarded by the leader key's create revision
//              (EtcdDriver::FencedWrite): etcd's way to fence a leader.
//
//   fencegate-loadgen --shape=elect --system=fencegate --target=LOCKSERVICE
//       --gateway_target=GATEWAY --run_id=ELECTION --elect_ttl=2s
//       --duration=60s
//   fencegate-loadgen --shape=elect --system=etcd --target=ETCD
//       --run_id=ELECTION --elect_ttl=2s --duration=60s
//
// Prints one JSON line when it starts campaigning ({"phase": "campaigning",
// ...}) and one after its first successful fenced write ({"phase":
// "first_write", "term", "campaign_unix_us", "elected_unix_us",
// "first_write_unix_us"}: CLOCK_REALTIME, so another process can subtract
// its own time of the kill). Then it goes on writing, and returns an error
// if a later write fails (the term was lost).
//
// Thread safety: RunCandidate() is called from one thread.
#ifndef FENCEGATE_BENCH_LOADGEN_ELECT_H_
#define FENCEGATE_BENCH_LOADGEN_ELECT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace fencegate::bench {

struct CandidateConfig {
  std::string system;          // fencegate or etcd
  std::string target;          // the lock service, or etcd
  std::string gateway_target;  // fencegate: the gateway
  std::string election;
  std::string candidate;  // this candidate's name, and its value
  absl::Duration ttl = absl::Seconds(2);
  absl::Duration write_every = absl::Milliseconds(5);
  absl::Duration duration = absl::Seconds(60);  // the whole life, campaign included
};

// OK when `duration` ran out (leading or still waiting); an error when a
// call failed or, once leading, a write was refused.
absl::Status RunCandidate(const CandidateConfig& config);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_ELECT_H_

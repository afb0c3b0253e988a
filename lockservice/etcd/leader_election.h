// LeaderElection: makes one of several lock-service instances the leader,
// through one key in etcd, and tells each instance its role.
//
// Each round, the instance takes a fresh EtcdSession (an etcd lease kept
// alive) and runs one txn: if the leader key does not exist, create it
// with this instance's address as value, attached to the session's lease;
// otherwise read it. The creator leads for one TERM, identified by the
// key's create revision (LeaderGuard). Every commit of the term is an etcd
// txn guarded by "create_revision(leader key) == the term's", so once the
// key is gone (lease expired or revoked) or re-created by another
// instance, nothing of the old term can commit any more, however late it
// tries: a paused or partitioned leader fences itself out.
//
// A term ends when the session is lost (no keep-alive acknowledged in
// time; see etcd_session.h), when StepDown() is called (a commit failed),
// or on Stop(). The instance then revokes its lease, which deletes the key,
// so the next leader can start at once, and campaigns again with a new
// session. An instance that does not lead watches the key and reports
// each new leader's address; when the key is deleted it campaigns.
//
// Thread safety: thread-safe. The delegate's methods run on the election's
// own thread, one at a time; StartTerm may block (it loads state).
// Ownership: `client`, `clock` and `delegate` must outlive the election.
#ifndef FENCEGATE_LOCKSERVICE_ETCD_LEADER_ELECTION_H_
#define FENCEGATE_LOCKSERVICE_ETCD_LEADER_ELECTION_H_

#include <cstdint>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/base/monotonic_wait.h"
#include "fencegate/clock.h"
#include "lockservice/etcd/etcd_client.h"
#include "lockservice/etcd/etcd_session.h"

namespace fencegate::lockservice {

// One term of one leader.
struct LeaderGuard {
  std::string key;            // the leader key
  int64_t create_revision = 0;  // the revision that created it for this term
  int64_t lease_id = 0;         // the session lease it is attached to
};

class LeaderElection {
 public:
  enum class TermEnd {
    kStopped,      // Stop(): hand over cleanly
    kSessionLost,  // the lease could not be proven alive
    kSteppedDown,  // StepDown(): a commit failed or was refused
  };

  class Delegate {
   public:
    virtual ~Delegate() = default;
    // This instance leads from now on. OK once it serves; an error makes
    // the election end the term (EndTerm is not called) and campaign again.
    virtual absl::Status StartTerm(const LeaderGuard& guard) = 0;
    // The term StartTerm began has ended; stop serving as leader.
    virtual void EndTerm(TermEnd why) = 0;
    // Another instance leads, at `address` (the leader key's value);
    // empty: no leader is known right now.
    virtual void LeaderChanged(const std::string& address) = 0;
  };

  struct Options {
    std::string key;    // the leader key
    std::string value;  // this instance's address, for the others to forward to
    absl::Duration session_ttl = absl::Seconds(5);
    // Deadline of each etcd call (campaign txn, lease grant, revoke).
    absl::Duration etcd_timeout = absl::Seconds(5);
  };

  LeaderElection(etcd::EtcdClient* client, Clock* clock, Options options,
                 Delegate* delegate);
  ~LeaderElection();  // Stop()

  // Starts campaigning, on a thread of the election.
  void Start();
  // Ends the term `create_revision` if it is the current one (a commit of
  // it failed). Returns at once; the election thread does the rest.
  void StepDown(int64_t create_revision);
  // Ends the current term (EndTerm(kStopped)), revokes the lease and stops
  // campaigning. Blocks until done. Idempotent.
  void Stop();

 private:
  enum class Outcome { kWon, kOtherLeads, kRetry };
  struct Campaign {
    Outcome outcome = Outcome::kRetry;
    LeaderGuard guard;          // kWon
    std::string leader;         // kOtherLeads: the leader's address
    int64_t read_revision = 0;  // kOtherLeads: watch from after this
  };

  void Run();
  // Campaigns with `session` until it is lost, a term ends, or Stop().
  void RunSession(EtcdSession& session);
  Campaign TryCampaign(EtcdSession& session);
  void Lead(const LeaderGuard& guard);
  // Watches the leader key from `after_revision` + 1 until it is deleted,
  // the watch fails, the session is lost or Stop().
  void WatchLeader(int64_t after_revision);
  // Waits up to `d`, or less if stopping or the session is lost.
  void Pause(absl::Duration d);
  void OnSessionLost();
  bool Interrupted() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || session_lost_;
  }

  etcd::EtcdClient* const client_;
  Clock* const clock_;
  const Options options_;
  Delegate* const delegate_;

  absl::Mutex mu_;
  MonotonicWait wake_;  // stopping_ or session_lost_ changed
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool session_lost_ ABSL_GUARDED_BY(mu_) = false;
  bool step_down_ ABSL_GUARDED_BY(mu_) = false;
  int64_t term_revision_ ABSL_GUARDED_BY(mu_) = 0;  // 0: not leading
  // The watch in progress, cancelled to interrupt it.
  etcd::EtcdClient::Watch* watch_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::thread thread_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_ETCD_LEADER_ELECTION_H_

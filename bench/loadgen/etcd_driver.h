// EtcdDriver: etcd over its v3 gRPC API (third_party/etcd), raw stubs, one
// connection. It runs the recipe of etcd's own Go client,
// client/v3/concurrency (Session + Mutex), step for step:
//
//   Open         LeaseGrant(session_ttl): one session lease per client,
//                reused for every lock, kept alive on the way (as
//                concurrency.Session does). Granting a lease per lock would
//                add a raft commit to every acquire; etcd users do not.
//   Acquire      one Txn: if my key "lock/<resource>/<lease hex>" does not
//                exist, put it with the lease; read the oldest key under the
//                prefix. Mine is oldest: acquired, token = my key's create
//                revision. Otherwise, try-lock: delete my key, not acquired;
//                wait: wait for every older key to be deleted (Range of the
//                next older key + a Watch on it, repeated, so waiters queue
//                in revision order with no herd), then Range my key to check
//                the session is alive (Mutex.Lock does the same). The watch
//                starts at "now" and the key is read again once it is set
//                up, instead of starting at the read's revision as the Go
//                client does: a watch that starts in the past can sit up to
//                100 ms in etcd's unsynced watcher set. Faster for etcd.
//   Release      DeleteRange(my key): owner-checked, since the key is this
//                session's own.
//   FencedWrite  one Txn: if create_revision(my key) == token, put
//                "data/<resource>/<key>" (Mutex.IsOwner() as the guard).
//   kShared, kWrite  the RWMutex recipe of etcd's
//                client/v3/experimental/recipes (rwmutex.go), step for
//                step: a Txn puts my key "rw/<r>/read/<lease hex>" or
//                ".../write/<lease hex>" under the session lease if absent
//                (newUniqueEphemeralKey; the lease id instead of the time in
//                ns makes it unique, as a client holds one lock per
//                resource); then a reader waits for the newest write key
//                below its revision, a writer for the newest key of either
//                kind below it, and again until none is left
//                (waitOnLastRev; the watch as above, from now, then a
//                re-read). Token: my key's revision. Release deletes it.
//   AcquireMany  several Mutex locks one by one in the order given (the
//                callers sort them), each waiting; if one is not granted
//                the others are released (acquire_in_order.h).
//
// Every write is a raft proposal that etcd fsyncs to its WAL before it
// answers (the server runs without --unsafe-no-fsync).
//
// Thread safety: none (see driver.h).
#ifndef FENCEGATE_BENCH_LOADGEN_ETCD_DRIVER_H_
#define FENCEGATE_BENCH_LOADGEN_ETCD_DRIVER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/loadgen/driver.h"
#include "etcdserverpb/rpc.grpc.pb.h"

namespace fencegate::bench {

class EtcdDriver final : public Driver {
 public:
  explicit EtcdDriver(std::string target) : target_(std::move(target)) {}
  ~EtcdDriver() override;

  FENCEGATE_BENCH_DRIVER_OVERRIDES

  // The session lease Open() granted (0 before): --shape=elect campaigns
  // with it and keeps it alive itself (elect.h).
  int64_t lease_id() const { return lease_id_; }

 private:
  // kShared, kWrite: the RWMutex recipe.
  absl::StatusOr<std::optional<HeldLock>> RwAcquire(const std::string& resource,
                                                    const AcquireOptions& options);
  // Renews the session lease when a third of its TTL has passed.
  absl::Status KeepAliveIfDue();
  // Returns once no key under `prefix` created at or before
  // `max_create_revision` is left, or an error at `give_up`.
  absl::Status WaitDeletes(const std::string& prefix,
                           int64_t max_create_revision, absl::Time give_up);
  // Returns once `key`, which the caller read with `create_revision`, is
  // gone (deleted, or deleted and created again).
  absl::Status WaitDelete(const std::string& key, int64_t create_revision,
                          absl::Time give_up);
  absl::Status DeleteKey(const std::string& key);

  const std::string target_;
  std::unique_ptr<etcdserverpb::KV::Stub> kv_;
  std::unique_ptr<etcdserverpb::Watch::Stub> watch_;
  std::unique_ptr<etcdserverpb::Lease::Stub> lease_;

  int64_t lease_id_ = 0;
  absl::Duration session_ttl_;
  absl::Time last_keep_alive_;
  std::unique_ptr<grpc::ClientContext> keep_alive_context_;
  std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::LeaseKeepAliveRequest,
                                           etcdserverpb::LeaseKeepAliveResponse>>
      keep_alive_;

  // Reused between calls.
  etcdserverpb::TxnRequest acquire_txn_;
  etcdserverpb::TxnRequest write_txn_;
  etcdserverpb::TxnResponse txn_response_;
};

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_ETCD_DRIVER_H_

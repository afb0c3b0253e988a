// EtcdClient: a connection to an etcd cluster over its v3 gRPC API
// (third_party/etcd), with failover across the cluster's members. No Debian
// package ships a C++ etcd client; this one covers what fencegate needs.
//
// Each call goes to the member that answered last. When that member cannot
// answer (unreachable, no raft leader, overloaded, or the attempt timed out)
// the call moves on to the next member, round robin, with a short backoff
// after each full round, until the call's `deadline`. Other errors (a
// malformed request, a lease that does not exist) are returned at once.
// A member's channel that has stopped reconnecting (common/server/stuck_channel.h:
// after a wall-clock step back, gRPC's reconnection waits as long as the
// step) is replaced by a fresh one.
//
// Retries and idempotence: a write whose attempt timed out may still have
// been applied, and the retry applies it again. Callers send only writes
// that are safe to repeat (puts of absolute values under a compare that
// their own earlier attempt keeps true), or handle the repeat themselves.
//
// Errors: the last attempt's status, as an absl::Status with the gRPC code,
// its message prefixed by the method and the member ("etcd Txn at
// 127.0.0.1:2379: ..."). DEADLINE_EXCEEDED when `deadline` passed.
//
// Thread safety: thread-safe; share one client. Deadlines are absl::Now()
// times (network deadlines, not lease logic).
#ifndef FENCEGATE_LOCKSERVICE_ETCD_ETCD_CLIENT_H_
#define FENCEGATE_LOCKSERVICE_ETCD_ETCD_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/server/stuck_channel.h"
#include "etcdserverpb/rpc.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "grpcpp/support/sync_stream.h"

namespace fencegate::etcd {

// Parses "etcd://host:port[,host:port...]" into its endpoints. Bad input is
// INVALID_ARGUMENT naming `flag` and the expected form.
absl::StatusOr<std::vector<std::string>> ParseEtcdUrl(absl::string_view url,
                                                      absl::string_view flag);

// The end of the key range that holds every key starting with `prefix`
// (etcd's GetPrefixRangeEnd): the prefix with its last byte below 0xff
// incremented.
std::string PrefixRangeEnd(std::string prefix);

struct EtcdClientOptions {
  std::vector<std::string> endpoints;  // host:port of each cluster member
  // One attempt against one member; a call makes several within its deadline.
  absl::Duration attempt_timeout = absl::Seconds(2);
  // TLS to the members (common/server/tls.h); null: plaintext.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
};

class EtcdClient {
 public:
  // A watch stream (Watch.Watch) on one member. Next() blocks.
  class Watch {
   public:
    ~Watch();
    // The next response; an error when the stream ended (Cancel(), the
    // member went away, or the stream's deadline passed).
    absl::StatusOr<etcdserverpb::WatchResponse> Next();
    // Ends the stream; a Next() blocked in another thread returns an error.
    // Thread-safe.
    void Cancel() { context_.TryCancel(); }

   private:
    friend class EtcdClient;
    Watch() = default;
    // Outlives the stream: the channel it runs on. Declared first, so it
    // is destroyed last.
    std::shared_ptr<const void> connection_;
    grpc::ClientContext context_;
    std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest,
                                             etcdserverpb::WatchResponse>>
        stream_;
    std::string member_;
  };

  // REQUIRES: options.endpoints is not empty. Connects lazily.
  explicit EtcdClient(EtcdClientOptions options);

  const std::vector<std::string>& endpoints() const { return endpoints_; }

  absl::StatusOr<etcdserverpb::TxnResponse> Txn(
      const etcdserverpb::TxnRequest& request, absl::Time deadline);
  absl::StatusOr<etcdserverpb::RangeResponse> Range(
      const etcdserverpb::RangeRequest& request, absl::Time deadline);
  // A lease of `ttl` (rounded up to whole seconds; etcd may raise it to its
  // minimum). The answer's TTL is the one granted.
  absl::StatusOr<etcdserverpb::LeaseGrantResponse> LeaseGrant(
      absl::Duration ttl, absl::Time deadline);
  // Revokes lease `id`: every key attached to it is deleted. A lease that
  // no longer exists is NOT_FOUND.
  absl::Status LeaseRevoke(int64_t id, absl::Time deadline);
  // One keep-alive of lease `id` (on a stream of its own). A TTL <= 0 in
  // the answer means the lease no longer exists.
  absl::StatusOr<etcdserverpb::LeaseKeepAliveResponse> LeaseKeepAliveOnce(
      int64_t id, absl::Time deadline);
  // The status of the member at `endpoint` itself (no failover).
  absl::StatusOr<etcdserverpb::StatusResponse> MemberStatus(
      const std::string& endpoint, absl::Time deadline);
  // Opens a watch and waits for etcd to confirm it; the stream then lives
  // until `stream_deadline`, Cancel() or an error.
  absl::StatusOr<std::unique_ptr<Watch>> StartWatch(
      const etcdserverpb::WatchCreateRequest& request, absl::Time deadline,
      absl::Time stream_deadline);

 private:
  // One channel to a member and its stubs; replaced whole when it is stuck.
  struct Connection : std::enable_shared_from_this<Connection> {
    std::string endpoint;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Lease::Stub> lease;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch;
    std::unique_ptr<etcdserverpb::Maintenance::Stub> maintenance;
  };
  struct Member {
    std::string endpoint;
    absl::Mutex mu;
    std::shared_ptr<Connection> connection ABSL_GUARDED_BY(mu);
    StuckChannelWatch watch ABSL_GUARDED_BY(mu);
  };

  std::shared_ptr<Connection> Connect(const std::string& endpoint) const;
  // The member's connection to use now: a fresh one if it was stuck.
  std::shared_ptr<Connection> Current(Member& member);
  // Runs `attempt` against members as the header says. `method` names the
  // call in errors.
  absl::Status Call(
      absl::string_view method, absl::Time deadline,
      absl::FunctionRef<grpc::Status(Connection&, grpc::ClientContext&)> attempt);

  const std::vector<std::string> endpoints_;
  const absl::Duration attempt_timeout_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  grpc::ChannelArguments args_;
  std::vector<std::unique_ptr<Member>> members_;
  // The member that answered last: where the next call starts.
  std::atomic<size_t> preferred_{0};
};

}  // namespace fencegate::etcd

#endif  // FENCEGATE_LOCKSERVICE_ETCD_ETCD_CLIENT_H_

// GatewayClient: fenced storage from C++. Calls made with a Lease carry its
// resource and token, so each one is checked against the gateway's fence
// and raises it: the first use of a new lease shuts out every older holder.
// Each call also carries the lease's mode (Fencing::mode): a shared
// lease's token only reads, and its fenced reads leave the fence as they
// find it; the gateway refuses its writes and fences, and any call with a
// permit's token, with INVALID_ARGUMENT (docs/gateway.md, "Shared tokens").
// Calls without a token field (List, Describe) fence explicitly first when
// the lease is new to this client. A stale token comes back as ABORTED with
// IsStaleToken() and CurrentToken() = the gateway's max token
// (client/errors.h); it is never retried. A gateway that checks signatures
// refuses a token without its lease's signature with PERMISSION_DENIED
// (IsBadSignature). UNAVAILABLE is retried with backoff until the call's
// deadline, ClientOptions::call_timeout (client_options.h): a retried put
// may bump the version twice, and a retried compare-and-set may then
// report VERSION_MISMATCH. A caller that must know what each attempt did
// sets retry.max_attempts = 1.
//
// Transport (ClientOptions::gateway_transport): one unary call per
// operation, or the gateway's Session stream, one per client, which all its
// threads share: the same semantics, errors and retries, but many calls in
// flight on one connection, which the gateway commits together.
//
// Asynchronous calls (WriteAsync, PutAsync) return at once and pipeline from
// one thread: always on the stream, one attempt (its UNAVAILABLE is the
// caller's to retry: whether it was applied is unknown). WriteAsync's
// callback runs on the library's thread, never blocked by the caller
// (client/session_stream.h): it must not block or make a blocking call of
// this client, may make further asynchronous calls (a closed loop inside
// its callbacks), and runs on the calling thread when the call is refused
// at once (RESOURCE_EXHAUSTED: more than 64 calls queued per place in
// flight, ClientOptions::max_stream_in_flight). A call is answered when
// its answer comes or its stream ends; destroying the client first
// answers CANCELLED.
//
// Thread safety: thread-safe. Ownership: Leases passed in are only read
// during the call.
#ifndef FENCEGATE_CLIENT_GATEWAY_CLIENT_H_
#define FENCEGATE_CLIENT_GATEWAY_CLIENT_H_

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "fencegate/client/client_options.h"
#include "fencegate/client/fencing.h"
#include "fencegate/client/lease.h"
#include "fencegate/token_signature.h"
#include "grpcpp/channel.h"

namespace fencegate::v1 {
class ReadRequest;
class ReadResponse;
}  // namespace fencegate::v1

namespace fencegate::client {

struct Mutation {
  std::string key;
  std::optional<std::string> value;          // nullopt: delete the key
  std::optional<uint64_t> expected_version;  // 0: the key must not exist
};

struct WriteResult {
  uint64_t version = 0;
  uint64_t max_token = 0;
};

struct MultiWriteResult {
  std::vector<uint64_t> versions;  // in mutation order
  uint64_t max_token = 0;
};

struct ReadResult {
  bool found = false;
  std::string value;
  uint64_t version = 0;
  uint64_t max_token = 0;
};

struct KeyEntry {
  std::string key;
  uint64_t version = 0;
  uint64_t size_bytes = 0;
};

struct ListPage {
  std::vector<KeyEntry> keys;
  std::string next_page_token;  // empty on the last page
};

struct ResourceSummary {
  uint64_t max_token = 0;
  uint64_t key_count = 0;
  uint64_t total_bytes = 0;
};

class GatewayClient {
 public:
  explicit GatewayClient(std::shared_ptr<grpc::Channel> channel,
                         ClientOptions options = ClientOptions());
  ~GatewayClient();
  GatewayClient(const GatewayClient&) = delete;
  GatewayClient& operator=(const GatewayClient&) = delete;
  // A channel to `address`, with TLS if options.tls says so (see
  // LockClient::Connect).
  static absl::StatusOr<std::unique_ptr<GatewayClient>> Connect(
      const std::string& address, ClientOptions options = ClientOptions());

  absl::StatusOr<WriteResult> Put(
      const Fencing& fencing, const std::string& key, const std::string& value,
      std::optional<uint64_t> expected_version = std::nullopt);
  absl::StatusOr<WriteResult> Delete(
      const Fencing& fencing, const std::string& key,
      std::optional<uint64_t> expected_version = std::nullopt);
  // All or nothing, inside one resource.
  absl::StatusOr<MultiWriteResult> MultiWrite(const Fencing& fencing,
                                              const std::vector<Mutation>& mutations);
  // A fenced read: refused if stale; with an exclusive lease's token it
  // raises the fence, with a shared one's it leaves it as it is.
  absl::StatusOr<ReadResult> Read(const Fencing& fencing, const std::string& key);
  // A plain read, no token: sees the latest committed value, checks nothing.
  absl::StatusOr<ReadResult> ReadUnfenced(const std::string& resource,
                                          const std::string& key);
  // Raises the fence to the token without writing; returns the max token.
  absl::StatusOr<uint64_t> Fence(const Fencing& fencing);
  // Write (a put or a delete) on the Session stream without waiting:
  // `done` runs once with its result (see the top of this file). A call
  // still queued for a place in flight rpc_timeout after it was made fails
  // DEADLINE_EXCEEDED, unsent.
  using WriteDone = absl::AnyInvocable<void(absl::StatusOr<WriteResult>)>;
  void WriteAsync(const Fencing& fencing, const Mutation& mutation, WriteDone done);
  // Put as WriteAsync, the result in a future.
  std::future<absl::StatusOr<WriteResult>> PutAsync(
      const Fencing& fencing, const std::string& key, const std::string& value,
      std::optional<uint64_t> expected_version = std::nullopt);
  absl::StatusOr<ListPage> List(const std::string& resource, uint32_t page_size = 0,
                                const std::string& page_token = "");
  absl::StatusOr<ResourceSummary> Describe(const std::string& resource);

  // Lease overloads: the same calls with FencingOf(lease).
  absl::StatusOr<WriteResult> Put(
      const Lease& lease, const std::string& key, const std::string& value,
      std::optional<uint64_t> expected_version = std::nullopt) {
    return Put(FencingOf(lease), key, value, expected_version);
  }
  absl::StatusOr<WriteResult> Delete(
      const Lease& lease, const std::string& key,
      std::optional<uint64_t> expected_version = std::nullopt) {
    return Delete(FencingOf(lease), key, expected_version);
  }
  absl::StatusOr<MultiWriteResult> MultiWrite(const Lease& lease,
                                              const std::vector<Mutation>& mutations) {
    return MultiWrite(FencingOf(lease), mutations);
  }
  absl::StatusOr<ReadResult> Read(const Lease& lease, const std::string& key) {
    return Read(FencingOf(lease), key);
  }
  absl::StatusOr<uint64_t> Fence(const Lease& lease) { return Fence(FencingOf(lease)); }
  // Fences first if this lease is exclusive and new to this client.
  absl::StatusOr<ListPage> List(const Lease& lease, uint32_t page_size = 0,
                                const std::string& page_token = "");

 private:
  // The generated gRPC stub (gateway_client.cc): kept out of this header,
  // so that it needs none of the generated code.
  struct Stub;

  // Retries UNAVAILABLE until the call's deadline (CallDeadline), each
  // attempt at most rpc_timeout.
  template <typename Call>
  absl::Status Run(Call call);
  // One call as a unary RPC (`unary`) or on the Session stream, as the
  // options say, with Run()'s retries (fencegate.v1 request and response).
  template <typename Response, typename Request, typename Unary>
  absl::StatusOr<Response> Send(const Request& request, Unary unary);
  absl::StatusOr<v1::ReadResponse> SendRead(const v1::ReadRequest& request);
  absl::StatusOr<WriteResult> Write(const Fencing& fencing, const Mutation& mutation);
  // Remembers that `fencing` has been checked and raised at the gateway.
  void NoteFenced(const Fencing& fencing);
  bool IsFenced(const Fencing& fencing);

  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<Stub> stub_;
  const ClientOptions options_;
  absl::Mutex mu_;
  // Per resource, the largest token this client has had accepted.
  absl::flat_hash_map<std::string, uint64_t> fenced_ ABSL_GUARDED_BY(mu_);
  // The Session stream's client (gateway_client.cc, over
  // client/session_stream.h); its stream is opened by the first call that
  // uses it. Last, so it goes first: its destructor runs the callbacks of
  // the calls still waiting, which use the members above.
  struct Session;
  const std::unique_ptr<Session> session_;
};

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_GATEWAY_CLIENT_H_

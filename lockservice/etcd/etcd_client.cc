#include "lockservice/etcd/etcd_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/base/log.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace fencegate::etcd {
namespace {

using etcdserverpb::LeaseKeepAliveRequest;
using etcdserverpb::LeaseKeepAliveResponse;

constexpr absl::string_view kScheme = "etcd://";
// After every member failed once in a row, wait before the next round.
constexpr absl::Duration kFirstRoundBackoff = absl::Milliseconds(20);
constexpr absl::Duration kMaxRoundBackoff = absl::Milliseconds(500);

// Failures another member, or the same one a moment later, may not have:
// unreachable, no raft leader or leader changed ("etcdserver: ..." errors
// are UNAVAILABLE), overloaded ("too many requests"), the attempt timed out,
// or the connection broke mid-call.
bool MayPassElsewhere(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE ||
         code == grpc::StatusCode::DEADLINE_EXCEEDED ||
         code == grpc::StatusCode::RESOURCE_EXHAUSTED ||
         code == grpc::StatusCode::UNKNOWN;
}

absl::Status ToStatus(absl::string_view method, const std::string& member,
                      const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat("etcd ", method, " at ", member, ": ",
                                   status.error_message()));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseEtcdUrl(absl::string_view url,
                                                      absl::string_view flag) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": '", url, "' ", why,
        "; expected etcd://host:port[,host:port...], e.g. "
        "etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379"));
  };
  if (!absl::StartsWith(url, kScheme)) return bad("does not start with etcd://");
  std::vector<std::string> endpoints;
  for (absl::string_view endpoint :
       absl::StrSplit(url.substr(kScheme.size()), ',')) {
    const size_t colon = endpoint.rfind(':');
    int port = 0;
    if (colon == absl::string_view::npos || colon == 0 ||
        !absl::SimpleAtoi(endpoint.substr(colon + 1), &port) || port < 1 ||
        port > 65535) {
      return bad(absl::StrCat("has an endpoint '", endpoint,
                              "' that is not host:port with a port in 1..65535"));
    }
    endpoints.emplace_back(endpoint);
  }
  return endpoints;
}

std::string PrefixRangeEnd(std::string prefix) {
  for (int i = static_cast<int>(prefix.size()) - 1; i >= 0; --i) {
    if (static_cast<unsigned char>(prefix[i]) < 0xff) {
      prefix[i] = static_cast<char>(prefix[i] + 1);
      prefix.resize(i + 1);
      return prefix;
    }
  }
  return std::string(1, '\0');  // every key
}

EtcdClient::Watch::~Watch() {
  if (stream_ != nullptr) {
    context_.TryCancel();
    stream_->Finish().IgnoreError();
  }
}

absl::StatusOr<etcdserverpb::WatchResponse> EtcdClient::Watch::Next() {
  if (stream_ == nullptr) return absl::UnavailableError("etcd watch: the stream has ended");
  etcdserverpb::WatchResponse response;
  if (stream_->Read(&response)) return response;
  grpc::Status status = stream_->Finish();
  stream_.reset();
  if (status.ok()) status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream ended");
  return ToStatus("Watch", member_, status);
}

EtcdClient::EtcdClient(EtcdClientOptions options)
    : endpoints_(std::move(options.endpoints)),
      attempt_timeout_(options.attempt_timeout),
      credentials_(options.credentials ? options.credentials
                                       : grpc::InsecureChannelCredentials()) {
  grpc::ChannelArguments& args = args_;
  // A load reads many rows in one answer.
  args.SetMaxReceiveMessageSize(64 << 20);
  // A member that comes back is used again soon (gRPC's default backoff
  // grows to two minutes).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // gRPC also takes this as the deadline of one connection attempt (default
  // 20 s). etcd listens well before it serves, and a connection made in
  // between stalls until that deadline; a loaded machine still completes a
  // handshake in far less than 2 s.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 2000);
  // After a failed connection, pick_first waits for the name to be resolved
  // again before it retries, and the DNS resolver by default resolves at
  // most every 30 s.
  args.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, 500);
  // Find a dead connection while a call (a watch) is open. etcd refuses
  // pings more often than every 5 s (--grpc-keepalive-min-time) and pings
  // without calls, so neither is asked for.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  // A stuck channel's replacement must not inherit its subchannel.
  UseOwnSubchannels(args);
  for (const std::string& endpoint : endpoints_) {
    auto member = std::make_unique<Member>();
    member->endpoint = endpoint;
    absl::MutexLock lock(&member->mu);
    member->connection = Connect(endpoint);
    members_.push_back(std::move(member));
  }
}

std::shared_ptr<EtcdClient::Connection> EtcdClient::Connect(
    const std::string& endpoint) const {
  auto connection = std::make_shared<Connection>();
  connection->endpoint = endpoint;
  connection->channel = grpc::CreateCustomChannel(endpoint, credentials_, args_);
  connection->kv = etcdserverpb::KV::NewStub(connection->channel);
  connection->lease = etcdserverpb::Lease::NewStub(connection->channel);
  connection->watch = etcdserverpb::Watch::NewStub(connection->channel);
  connection->maintenance = etcdserverpb::Maintenance::NewStub(connection->channel);
  return connection;
}

std::shared_ptr<EtcdClient::Connection> EtcdClient::Current(Member& member) {
  absl::MutexLock lock(&member.mu);
  if (member.watch.Stuck(*member.connection->channel)) {
    LogWarning("etcd member %s: its channel stopped reconnecting; replacing it",
               member.endpoint);
    member.connection = Connect(member.endpoint);
    member.watch.Reset();
  }
  return member.connection;
}

absl::Status EtcdClient::Call(
    absl::string_view method, absl::Time deadline,
    absl::FunctionRef<grpc::Status(Connection&, grpc::ClientContext&)> attempt) {
  const size_t n = members_.size();
  size_t index = preferred_.load() % n;
  absl::Duration backoff = kFirstRoundBackoff;
  absl::Status last = absl::DeadlineExceededError(
      absl::StrCat("etcd ", method, ": the deadline passed before any attempt"));
  for (size_t tried = 0;; ++tried) {
    const absl::Time now = absl::Now();
    if (now >= deadline) break;
    if (tried > 0 && tried % n == 0) {  // every member failed once more
      absl::SleepFor(std::min(backoff, deadline - now));
      backoff = std::min(backoff * 2, kMaxRoundBackoff);
      if (absl::Now() >= deadline) break;
    }
    Member& member = *members_[index];
    grpc::ClientContext context;
    context.set_deadline(
        absl::ToChronoTime(std::min(deadline, absl::Now() + attempt_timeout_)));
    std::shared_ptr<Connection> connection = Current(member);
    grpc::Status status = attempt(*connection, context);
    if (status.ok()) {
      preferred_.store(index);
      return absl::OkStatus();
    }
    last = ToStatus(method, member.endpoint, status);
    if (!MayPassElsewhere(status.error_code())) return last;
    index = (index + 1) % n;
  }
  if (last.code() != absl::StatusCode::kDeadlineExceeded) {
    last = absl::DeadlineExceededError(absl::StrCat(
        "no etcd member answered ", method, " in time; last error: ", last.message()));
  }
  return last;
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(
    const etcdserverpb::TxnRequest& request, absl::Time deadline) {
  etcdserverpb::TxnResponse response;
  absl::Status status =
      Call("Txn", deadline, [&](Connection& member, grpc::ClientContext& context) {
        return member.kv->Txn(&context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<etcdserverpb::RangeResponse> EtcdClient::Range(
    const etcdserverpb::RangeRequest& request, absl::Time deadline) {
  etcdserverpb::RangeResponse response;
  absl::Status status =
      Call("Range", deadline, [&](Connection& member, grpc::ClientContext& context) {
        return member.kv->Range(&context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<etcdserverpb::LeaseGrantResponse> EtcdClient::LeaseGrant(
    absl::Duration ttl, absl::Time deadline) {
  etcdserverpb::LeaseGrantRequest request;
  request.set_ttl(absl::ToInt64Seconds(absl::Ceil(ttl, absl::Seconds(1))));
  etcdserverpb::LeaseGrantResponse response;
  absl::Status status =
      Call("LeaseGrant", deadline, [&](Connection& member, grpc::ClientContext& context) {
        return member.lease->LeaseGrant(&context, request, &response);
      });
  if (!status.ok()) return status;
  if (!response.error().empty()) {
    return absl::UnavailableError(absl::StrCat("etcd LeaseGrant: ", response.error()));
  }
  return response;
}

absl::Status EtcdClient::LeaseRevoke(int64_t id, absl::Time deadline) {
  etcdserverpb::LeaseRevokeRequest request;
  request.set_id(id);
  etcdserverpb::LeaseRevokeResponse response;
  return Call("LeaseRevoke", deadline,
              [&](Connection& member, grpc::ClientContext& context) {
                return member.lease->LeaseRevoke(&context, request, &response);
              });
}

absl::StatusOr<LeaseKeepAliveResponse> EtcdClient::LeaseKeepAliveOnce(
    int64_t id, absl::Time deadline) {
  LeaseKeepAliveRequest request;
  request.set_id(id);
  LeaseKeepAliveResponse response;
  absl::Status status = Call(
      "LeaseKeepAlive", deadline, [&](Connection& member, grpc::ClientContext& context) {
        auto stream = member.lease->LeaseKeepAlive(&context);
        if (stream->Write(request) && stream->Read(&response)) {
          context.TryCancel();  // one answer is all this call wants
          stream->Finish().IgnoreError();
          return grpc::Status::OK;
        }
        grpc::Status finished = stream->Finish();
        return finished.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                            "keep-alive stream closed without an answer")
                             : finished;
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<etcdserverpb::StatusResponse> EtcdClient::MemberStatus(
    const std::string& endpoint, absl::Time deadline) {
  for (auto& member : members_) {
    if (member->endpoint != endpoint) continue;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(deadline));
    etcdserverpb::StatusResponse response;
    grpc::Status status = Current(*member)->maintenance->Status(
        &context, etcdserverpb::StatusRequest(), &response);
    if (!status.ok()) return ToStatus("Status", endpoint, status);
    return response;
  }
  return absl::NotFoundError(
      absl::StrCat("etcd member ", endpoint, " is not an endpoint of this client"));
}

absl::StatusOr<std::unique_ptr<EtcdClient::Watch>> EtcdClient::StartWatch(
    const etcdserverpb::WatchCreateRequest& request, absl::Time deadline,
    absl::Time stream_deadline) {
  std::unique_ptr<Watch> watch;
  absl::Status status =
      Call("Watch", deadline, [&](Connection& member, grpc::ClientContext&) {
        // The stream outlives this attempt, so it has a context of its own.
        watch.reset(new Watch());
        watch->member_ = member.endpoint;
        watch->connection_ = member.shared_from_this();
        watch->context_.set_deadline(absl::ToChronoTime(stream_deadline));
        watch->stream_ = member.watch->Watch(&watch->context_);
        etcdserverpb::WatchRequest create;
        *create.mutable_create_request() = request;
        etcdserverpb::WatchResponse created;
        if (watch->stream_->Write(create) && watch->stream_->Read(&created)) {
          if (created.created() && !created.canceled()) return grpc::Status::OK;
          watch->context_.TryCancel();
          watch->stream_->Finish().IgnoreError();
          watch->stream_.reset();
          return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                              absl::StrCat("watch not created: ", created.cancel_reason()));
        }
        grpc::Status finished = watch->stream_->Finish();
        watch->stream_.reset();
        return finished.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                            "watch stream closed before it was created")
                             : finished;
      });
  if (!status.ok()) return status;
  return watch;
}

}  // namespace fencegate::etcd

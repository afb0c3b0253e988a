#include "bench/loadgen/etcd_driver.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/loadgen/acquire_in_order.h"
#include "bench/loadgen/grpc_util.h"
#include "lockservice/etcd/etcd_client.h"

namespace fencegate::bench {
namespace {

using etcdserverpb::Compare;
using etcdserverpb::RangeRequest;

// The oldest (ascending) or newest (descending) key under `prefix`.
void SetFirstCreate(RangeRequest* range, const std::string& prefix,
                    RangeRequest::SortOrder order) {
  range->set_key(prefix);
  range->set_range_end(etcd::PrefixRangeEnd(prefix));
  range->set_sort_target(RangeRequest::CREATE);
  range->set_sort_order(order);
  range->set_limit(1);
}

// The run's end cut the wait short. etcd reports its side of the deadline
// as UNKNOWN "context deadline exceeded", gRPC as DEADLINE_EXCEEDED: either
// way, a watch that ends at or after `give_up` gave up, it did not fail.
bool GaveUp(const grpc::Status& status, absl::Time give_up) {
  return !status.ok() && (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                          absl::Now() >= give_up);
}

absl::Status GiveUp() { return absl::DeadlineExceededError("gave up waiting for the lock"); }

}  // namespace

EtcdDriver::~EtcdDriver() { Close(); }

absl::Status EtcdDriver::Open(absl::Duration session_ttl) {
  auto channel = ConnectOwnChannel(target_, kCallTimeout);
  if (!channel.ok()) return channel.status();
  kv_ = etcdserverpb::KV::NewStub(*channel);
  watch_ = etcdserverpb::Watch::NewStub(*channel);
  lease_ = etcdserverpb::Lease::NewStub(*channel);

  session_ttl_ = session_ttl;
  etcdserverpb::LeaseGrantRequest grant;
  grant.set_ttl(absl::ToInt64Seconds(absl::Ceil(session_ttl, absl::Seconds(1))));
  etcdserverpb::LeaseGrantResponse granted;
  grpc::ClientContext context;
  SetDeadline(context, absl::Now() + kCallTimeout);
  absl::Status status = FromGrpc("LeaseGrant", lease_->LeaseGrant(&context, grant, &granted));
  if (!status.ok()) return status;
  if (!granted.error().empty()) {
    return absl::UnavailableError(absl::StrCat("LeaseGrant: ", granted.error()));
  }
  lease_id_ = granted.id();
  last_keep_alive_ = absl::Now();
  return absl::OkStatus();
}

void EtcdDriver::Close() {
  if (keep_alive_ != nullptr) {
    keep_alive_->WritesDone();
    keep_alive_context_->TryCancel();
    keep_alive_->Finish().IgnoreError();
    keep_alive_.reset();
    keep_alive_context_.reset();
  }
  if (lease_id_ != 0 && lease_ != nullptr) {
    etcdserverpb::LeaseRevokeRequest revoke;
    revoke.set_id(lease_id_);
    etcdserverpb::LeaseRevokeResponse revoked;
    grpc::ClientContext context;
    SetDeadline(context, absl::Now() + kCallTimeout);
    lease_->LeaseRevoke(&context, revoke, &revoked).IgnoreError();  // best effort
    lease_id_ = 0;
  }
}

absl::Status EtcdDriver::KeepAliveIfDue() {
  const absl::Time now = absl::Now();
  if (now - last_keep_alive_ < session_ttl_ / 3) return absl::OkStatus();
  if (keep_alive_ == nullptr) {
    keep_alive_context_ = std::make_unique<grpc::ClientContext>();
    // Bounded like everything else: no run lasts anywhere near this long.
    SetDeadline(*keep_alive_context_, now + absl::Minutes(10));
    keep_alive_ = lease_->LeaseKeepAlive(keep_alive_context_.get());
  }
  etcdserverpb::LeaseKeepAliveRequest request;
  request.set_id(lease_id_);
  etcdserverpb::LeaseKeepAliveResponse response;
  if (!keep_alive_->Write(request) || !keep_alive_->Read(&response)) {
    return absl::UnavailableError("LeaseKeepAlive: stream broken");
  }
  if (response.ttl() <= 0) return absl::AbortedError("LeaseKeepAlive: session lease expired");
  last_keep_alive_ = now;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<HeldLock>> EtcdDriver::Acquire(
    const std::string& resource, const AcquireOptions& options) {
  if (absl::Status alive = KeepAliveIfDue(); !alive.ok()) return alive;
  if (options.mode != LockMode::kExclusive) return RwAcquire(resource, options);
  const std::string prefix = absl::StrCat("lock/", resource, "/");
  std::string my_key = absl::StrFormat("%s%x", prefix, lease_id_);

  // Mutex.tryAcquire: create my key if absent; read mine and the oldest.
  acquire_txn_.Clear();
  Compare* absent = acquire_txn_.add_compare();
  absent->set_result(Compare::EQUAL);
  absent->set_target(Compare::CREATE);
  absent->set_key(my_key);
  absent->set_create_revision(0);
  etcdserverpb::PutRequest* put = acquire_txn_.add_success()->mutable_request_put();
  put->set_key(my_key);
  put->set_lease(lease_id_);
  SetFirstCreate(acquire_txn_.add_success()->mutable_request_range(), prefix,
                 RangeRequest::ASCEND);
  acquire_txn_.add_failure()->mutable_request_range()->set_key(my_key);
  SetFirstCreate(acquire_txn_.add_failure()->mutable_request_range(), prefix,
                 RangeRequest::ASCEND);
  {
    grpc::ClientContext context;
    SetDeadline(context, absl::Now() + kCallTimeout);
    absl::Status status =
        FromGrpc("Txn(acquire)", kv_->Txn(&context, acquire_txn_, &txn_response_));
    if (!status.ok()) return status;
  }
  if (txn_response_.responses_size() != 2) {
    return absl::InternalError("Txn(acquire): expected 2 responses");
  }
  int64_t my_revision = txn_response_.header().revision();
  if (!txn_response_.succeeded()) {
    const auto& mine = txn_response_.responses(0).response_range().kvs();
    if (mine.empty()) return absl::InternalError("Txn(acquire): my key vanished");
    my_revision = mine[0].create_revision();
  }
  const auto& owner = txn_response_.responses(1).response_range().kvs();
  if (owner.empty() || owner[0].create_revision() == my_revision) {
    return HeldLock{resource, static_cast<uint64_t>(my_revision), std::move(my_key)};
  }
  if (!options.wait) {
    // Mutex.TryLock: leave the queue again.
    if (absl::Status status = DeleteKey(my_key); !status.ok()) return status;
    return std::nullopt;
  }
  // Mutex.Lock: wait for the older keys, then check my session still holds.
  absl::Status waited = WaitDeletes(prefix, my_revision - 1, options.give_up);
  if (!waited.ok()) {
    if (absl::Status status = DeleteKey(my_key); !status.ok()) return status;
    if (absl::IsDeadlineExceeded(waited)) return std::nullopt;  // gave up
    return waited;
  }
  etcdserverpb::RangeRequest get;
  get.set_key(my_key);
  etcdserverpb::RangeResponse got;
  grpc::ClientContext context;
  SetDeadline(context, absl::Now() + kCallTimeout);
  absl::Status status = FromGrpc("Range(my key)", kv_->Range(&context, get, &got));
  if (!status.ok()) return status;
  if (got.kvs().empty()) return absl::AbortedError("etcd session expired while waiting");
  return HeldLock{resource, static_cast<uint64_t>(my_revision), std::move(my_key)};
}

absl::StatusOr<std::optional<HeldLock>> EtcdDriver::RwAcquire(
    const std::string& resource, const AcquireOptions& options) {
  const std::string prefix = absl::StrCat("rw/", resource, "/");
  const bool read = options.mode == LockMode::kShared;
  std::string my_key =
      absl::StrFormat("%s%s/%x", prefix, read ? "read" : "write", lease_id_);

  // newUniqueEphemeralKey: put my key under the session lease if absent.
  etcdserverpb::TxnRequest put_txn;
  Compare* absent = put_txn.add_compare();
  absent->set_result(Compare::EQUAL);
  absent->set_target(Compare::VERSION);
  absent->set_key(my_key);
  absent->set_version(0);
  etcdserverpb::PutRequest* put = put_txn.add_success()->mutable_request_put();
  put->set_key(my_key);
  put->set_lease(lease_id_);
  {
    grpc::ClientContext context;
    SetDeadline(context, absl::Now() + kCallTimeout);
    absl::Status status =
        FromGrpc("Txn(rw key)", kv_->Txn(&context, put_txn, &txn_response_));
    if (!status.ok()) return status;
  }
  if (!txn_response_.succeeded()) {
    return absl::InternalError(absl::StrCat("Txn(rw key): ", my_key, " exists already"));
  }
  const int64_t my_revision = txn_response_.header().revision();

  // waitOnLastRev: a reader waits for the newest writer below it, a writer
  // for the newest key of either kind below it; again until none is left.
  etcdserverpb::RangeRequest last;
  const std::string blockers = read ? absl::StrCat(prefix, "write") : prefix;
  last.set_key(blockers);
  last.set_range_end(etcd::PrefixRangeEnd(blockers));
  last.set_sort_target(RangeRequest::MOD);
  last.set_sort_order(RangeRequest::DESCEND);
  last.set_limit(1);
  last.set_max_mod_revision(my_revision - 1);
  for (;;) {
    etcdserverpb::RangeResponse found;
    grpc::ClientContext context;
    SetDeadline(context, absl::Now() + kCallTimeout);
    absl::Status status = FromGrpc("Range(last rev)", kv_->Range(&context, last, &found));
    if (!status.ok()) return status;
    if (found.kvs().empty()) break;
    absl::Status waited =
        options.wait ? WaitDelete(found.kvs(0).key(), found.kvs(0).create_revision(),
                                  options.give_up)
                     : GiveUp();
    if (!waited.ok()) {
      if (absl::Status deleted = DeleteKey(my_key); !deleted.ok()) return deleted;
      if (absl::IsDeadlineExceeded(waited)) return std::nullopt;  // gave up
      return waited;
    }
  }
  return HeldLock{resource, static_cast<uint64_t>(my_revision), std::move(my_key),
                  options.mode};
}

absl::StatusOr<std::optional<std::vector<HeldLock>>> EtcdDriver::AcquireMany(
    const std::vector<std::string>& resources, const AcquireOptions& options) {
  return AcquireEachInOrder(*this, resources, options);
}

absl::Status EtcdDriver::WaitDeletes(const std::string& prefix,
                                     int64_t max_create_revision,
                                     absl::Time give_up) {
  etcdserverpb::RangeRequest older;
  SetFirstCreate(&older, prefix, RangeRequest::DESCEND);
  older.set_max_create_revision(max_create_revision);
  while (absl::Now() < give_up) {
    etcdserverpb::RangeResponse found;
    grpc::ClientContext context;
    SetDeadline(context, absl::Now() + kCallTimeout);
    absl::Status status = FromGrpc("Range(older)", kv_->Range(&context, older, &found));
    if (!status.ok()) return status;
    if (found.kvs().empty()) return absl::OkStatus();
    status = WaitDelete(found.kvs(0).key(), found.kvs(0).create_revision(), give_up);
    if (!status.ok()) return status;
  }
  return GiveUp();
}

absl::Status EtcdDriver::WaitDelete(const std::string& key, int64_t create_revision,
                                    absl::Time give_up) {
  grpc::ClientContext context;
  SetDeadline(context, give_up);
  auto stream = watch_->Watch(&context);
  auto finish = [&](absl::Status status) {
    context.TryCancel();
    stream->Finish().IgnoreError();
    return status;
  };
  etcdserverpb::WatchRequest request;
  etcdserverpb::WatchCreateRequest* create = request.mutable_create_request();
  create->set_key(key);
  create->add_filters(etcdserverpb::WatchCreateRequest::NOPUT);
  etcdserverpb::WatchResponse response;
  if (!stream->Write(request) || !stream->Read(&response)) {
    grpc::Status finished = stream->Finish();
    if (GaveUp(finished, give_up)) return GiveUp();
    return FromGrpc("Watch", finished.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                                          "stream ended before created")
                                           : finished);
  }
  if (!response.created()) return finish(absl::UnavailableError("Watch: not created"));
  // The watch reports deletes from now on; one that happened between the
  // caller's read and now shows as the key being gone already, or as a new
  // incarnation of it (its owner released and queued again, behind us):
  // waiting for that one would deadlock.
  etcdserverpb::RangeRequest get;
  get.set_key(key);
  get.set_keys_only(true);
  etcdserverpb::RangeResponse got;
  {
    grpc::ClientContext get_context;
    SetDeadline(get_context, absl::Now() + kCallTimeout);
    absl::Status status = FromGrpc("Range(older key)", kv_->Range(&get_context, get, &got));
    if (!status.ok()) return finish(status);
  }
  if (got.kvs().empty() || got.kvs(0).create_revision() != create_revision) {
    return finish(absl::OkStatus());
  }
  while (stream->Read(&response)) {
    if (response.canceled()) {
      return finish(absl::UnavailableError(
          absl::StrCat("Watch canceled: ", response.cancel_reason())));
    }
    for (const auto& event : response.events()) {
      if (event.type() == mvccpb::Event::DELETE) return finish(absl::OkStatus());
    }
  }
  grpc::Status finished = stream->Finish();
  if (GaveUp(finished, give_up)) return GiveUp();
  return FromGrpc("Watch", finished.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                                        "stream ended")
                                         : finished);
}

absl::Status EtcdDriver::DeleteKey(const std::string& key) {
  etcdserverpb::DeleteRangeRequest request;
  request.set_key(key);
  etcdserverpb::DeleteRangeResponse response;
  grpc::ClientContext context;
  SetDeadline(context, absl::Now() + kCallTimeout);
  return FromGrpc("DeleteRange", kv_->DeleteRange(&context, request, &response));
}

absl::Status EtcdDriver::Release(const HeldLock& lock) { return DeleteKey(lock.owner); }

absl::Status EtcdDriver::FencedWrite(const HeldLock& lock, absl::string_view key,
                                     absl::string_view value) {
  write_txn_.Clear();
  Compare* owner = write_txn_.add_compare();
  owner->set_result(Compare::EQUAL);
  owner->set_target(Compare::CREATE);
  owner->set_key(lock.owner);
  owner->set_create_revision(static_cast<int64_t>(lock.token));
  etcdserverpb::PutRequest* put = write_txn_.add_success()->mutable_request_put();
  put->set_key(absl::StrCat("data/", lock.resource, "/", key));
  put->set_value(value.data(), value.size());
  grpc::ClientContext context;
  SetDeadline(context, absl::Now() + kCallTimeout);
  absl::Status status =
      FromGrpc("Txn(fenced put)", kv_->Txn(&context, write_txn_, &txn_response_));
  if (!status.ok()) return status;
  if (!txn_response_.succeeded()) {
    return absl::AbortedError("Txn(fenced put): lock key's revision changed (lock lost)");
  }
  return absl::OkStatus();
}

}  // namespace fencegate::bench

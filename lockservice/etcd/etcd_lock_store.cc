#include "lockservice/etcd/etcd_lock_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "lockservice/etcd/lock_records.pb.h"

namespace fencegate::lockservice {
namespace {

using etcdserverpb::Compare;
using etcdserverpb::RangeRequest;

}  // namespace

std::string EtcdLeaderKey(const std::string& prefix) { return prefix + "leader"; }

EtcdLockStore::EtcdLockStore(etcd::EtcdClient* client, EtcdLockStoreOptions options,
                             LeaderGuard guard,
                             absl::AnyInvocable<void(const absl::Status&)> on_term_lost)
    : client_(client),
      options_(std::move(options)),
      guard_(std::move(guard)),
      token_key_(options_.prefix + "token"),
      lease_prefix_(options_.prefix + "lease/"),
      on_term_lost_(std::move(on_term_lost)) {}

etcdserverpb::TxnRequest EtcdLockStore::GuardedTxn() const {
  etcdserverpb::TxnRequest txn;
  Compare* guard = txn.add_compare();
  guard->set_key(guard_.key);
  guard->set_target(Compare::CREATE);
  guard->set_result(Compare::EQUAL);
  guard->set_create_revision(guard_.create_revision);
  // On failure, who holds the key now (for the log).
  txn.add_failure()->mutable_request_range()->set_key(guard_.key);
  return txn;
}

absl::Status EtcdLockStore::Ended() const {
  return absl::UnavailableError(
      "this lock-service instance no longer leads (its term in etcd has "
      "ended); retry: another instance, or this one in a new term, serves");
}

absl::Status EtcdLockStore::Lose(absl::Status why) {
  if (!ended_.exchange(true)) {
    LogWarning("etcd lock store: term %d ends: %s", guard_.create_revision,
               why.ToString());
    if (on_term_lost_) on_term_lost_(why);
  }
  return why;
}

absl::Status EtcdLockStore::Commit(const LockStoreBatch& batch) {
  if (ended_.load()) return Ended();
  etcdserverpb::TxnRequest txn = GuardedTxn();
  if (batch.last_token > committed_token_) {
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(token_key_);
    put->set_value(absl::StrCat(batch.last_token));
  }
  etcdstore::v1::LeaseRow row;
  for (const auto& [resource, lease] : batch.leases) {
    if (!lease) {
      auto* del = txn.add_success()->mutable_request_delete_range();
      del->set_key(lease_prefix_ + resource);
      continue;
    }
    row.set_holder(lease->holder);
    row.set_token(lease->token);
    row.set_ttl_ms(absl::ToInt64Milliseconds(lease->ttl));
    row.set_hold_count(lease->hold_count);
    row.clear_request_ids();
    for (const std::string& id : lease->request_ids) row.add_request_ids(id);
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(lease_prefix_ + resource);
    row.SerializeToString(put->mutable_value());
  }
  if (txn.success_size() == 0) {
    // A barrier: see the header for why it reads.
    RangeRequest* read = txn.add_success()->mutable_request_range();
    read->set_key(guard_.key);
    read->set_count_only(true);
  }
  absl::StatusOr<etcdserverpb::TxnResponse> response =
      client_->Txn(txn, absl::Now() + options_.commit_timeout);
  if (!response.ok()) {
    return Lose(absl::UnavailableError(absl::StrCat(
        "etcd did not confirm the commit, so its outcome is unknown (",
        response.status().message(), ")")));
  }
  if (!response->succeeded()) {
    const auto& kvs = response->responses(0).response_range().kvs();
    return Lose(absl::UnavailableError(absl::StrCat(
        "the commit was refused: this instance no longer leads (the leader "
        "key ",
        kvs.empty() ? std::string("is gone")
                    : absl::StrCat("was re-created at revision ",
                                   kvs[0].create_revision(), " by ", kvs[0].value()),
        "); nothing was applied")));
  }
  committed_token_ = std::max(committed_token_, batch.last_token);
  return absl::OkStatus();
}

absl::StatusOr<LockStoreState> EtcdLockStore::Load() {
  if (ended_.load()) return Ended();
  const absl::Time deadline = absl::Now() + options_.load_timeout;
  const std::string lease_end = etcd::PrefixRangeEnd(lease_prefix_);
  etcdserverpb::TxnRequest txn = GuardedTxn();
  txn.add_success()->mutable_request_range()->set_key(token_key_);
  RangeRequest* first = txn.add_success()->mutable_request_range();
  first->set_key(lease_prefix_);
  first->set_range_end(lease_end);
  first->set_limit(options_.load_page);
  absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn, deadline);
  if (!response.ok()) {
    return Lose(absl::UnavailableError(
        absl::StrCat("cannot load the lock state from etcd: ", response.status().message())));
  }
  if (!response->succeeded()) {
    return Lose(absl::UnavailableError(
        "cannot load the lock state: this instance no longer leads"));
  }
  LockStoreState state;
  const auto& token_kvs = response->responses(0).response_range().kvs();
  if (!token_kvs.empty() && !absl::SimpleAtoi(token_kvs[0].value(), &state.last_token)) {
    return Lose(absl::DataLossError(absl::StrCat(
        "etcd key ", token_key_, " holds '", token_kvs[0].value(),
        "', not a token; repair or delete it (tokens then restart above the "
        "largest lease's)")));
  }
  const int64_t revision = response->header().revision();
  etcdserverpb::RangeResponse page = response->responses(1).response_range();
  for (;;) {
    for (const mvccpb::KeyValue& kv : page.kvs()) {
      absl::Status parsed = ParseLease(kv, state);
      if (!parsed.ok()) return Lose(parsed);
    }
    if (!page.more() || page.kvs().empty()) break;
    RangeRequest next;
    next.set_key(page.kvs(page.kvs_size() - 1).key() + std::string(1, '\0'));
    next.set_range_end(lease_end);
    next.set_limit(options_.load_page);
    next.set_revision(revision);  // the snapshot the guarded txn saw
    absl::StatusOr<etcdserverpb::RangeResponse> more = client_->Range(next, deadline);
    if (!more.ok()) {
      return Lose(absl::UnavailableError(
          absl::StrCat("cannot load the lock state from etcd: ", more.status().message())));
    }
    page = *std::move(more);
  }
  committed_token_ = state.last_token;
  for (const LeaseRecord& lease : state.leases) {
    committed_token_ = std::max(committed_token_, lease.token);
  }
  return state;
}

absl::Status EtcdLockStore::ParseLease(const mvccpb::KeyValue& kv,
                                       LockStoreState& state) const {
  etcdstore::v1::LeaseRow row;
  if (!row.ParseFromString(kv.value())) {
    return absl::DataLossError(absl::StrCat(
        "etcd key ", kv.key(), " does not hold a lease row; repair or delete it"));
  }
  LeaseRecord lease;
  lease.resource = kv.key().substr(lease_prefix_.size());
  lease.holder = row.holder();
  lease.token = row.token();
  lease.ttl = absl::Milliseconds(row.ttl_ms());
  lease.hold_count = row.hold_count();
  lease.request_ids.assign(row.request_ids().begin(), row.request_ids().end());
  state.leases.push_back(std::move(lease));
  return absl::OkStatus();
}

}  // namespace fencegate::lockservice

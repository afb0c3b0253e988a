#include "lockservice/etcd/etcd_lock_store.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "common/base/log.h"
#include "common/test_hooks/test_hooks.h"
#include "lockservice/etcd/lock_records.pb.h"

namespace fencegate::lockservice {
namespace {

using etcdserverpb::Compare;
using etcdserverpb::RangeRequest;

absl::Status UnknownMode(absl::string_view key, uint32_t mode) {
  return absl::DataLossError(absl::StrCat(
      "etcd key ", key, " has mode ", mode,
      ", which this version does not know (0 exclusive, 1 shared, 2 permit); it was "
      "written by a newer version"));
}

std::string StateName(const std::string& prefix) {
  return absl::StrCat("etcd prefix ", prefix);
}

// The format in `value` of the key `key` under `prefix`, or DATA_LOSS.
absl::StatusOr<int64_t> ParseFormat(const std::string& prefix, const std::string& key,
                                    const std::string& value) {
  int64_t format = 0;
  if (!absl::SimpleAtoi(value, &format) || format < 1) {
    return UnreadableStateFormatError(StateName(prefix), absl::StrCat("key ", key),
                                      value);
  }
  return format;
}

}  // namespace

std::string EtcdLeaderKey(const std::string& prefix) { return prefix + "leader"; }

std::string EtcdFormatKey(const std::string& prefix) { return prefix + "format"; }

absl::Status CheckEtcdStateFormat(etcd::EtcdClient& client, const std::string& prefix,
                                  absl::Time deadline) {
  RangeRequest range;
  range.set_key(EtcdFormatKey(prefix));
  absl::StatusOr<etcdserverpb::RangeResponse> response = client.Range(range, deadline);
  if (!response.ok()) return response.status();
  if (response->kvs().empty()) return absl::OkStatus();
  absl::StatusOr<int64_t> format =
      ParseFormat(prefix, range.key(), response->kvs(0).value());
  if (!format.ok()) return format.status();
  if (*format > EtcdLockStore::kStateFormat) {
    return NewerStateFormatError(StateName(prefix), *format, EtcdLockStore::kStateFormat);
  }
  return absl::OkStatus();
}

EtcdLockStore::EtcdLockStore(etcd::EtcdClient* client, EtcdLockStoreOptions options,
                             LeaderGuard guard,
                             absl::AnyInvocable<void(const absl::Status&)> on_term_lost)
    : client_(client),
      options_(std::move(options)),
      guard_(std::move(guard)),
      token_key_(options_.prefix + "token"),
      lease_prefix_(options_.prefix + "lease/"),
      fence_prefix_(options_.prefix + "fence/"),
      wait_prefix_(options_.prefix + "wait/"),
      hold_prefix_(options_.prefix + "hold/"),
      format_key_(EtcdFormatKey(options_.prefix)),
      on_term_lost_(std::move(on_term_lost)) {}

std::string EtcdLockStore::FenceKey(uint64_t position) const {
  return absl::StrFormat("%s%020d", fence_prefix_, position);
}

std::string EtcdLockStore::WaitKey(uint64_t seq) const {
  return absl::StrFormat("%s%020d", wait_prefix_, seq);
}

std::string EtcdLockStore::HoldKey(uint64_t token) const {
  return absl::StrFormat("%s%020d", hold_prefix_, token);
}

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
  if (!loaded_) {
    // Moving a fence position deletes its old key, which Load() learns.
    return absl::FailedPreconditionError("EtcdLockStore: Load() before Commit()");
  }
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
    row.clear_proclamation();
    if (const std::optional<Proclamation>& said = lease->proclamation) {
      row.mutable_proclamation()->set_seq(said->seq);
      row.mutable_proclamation()->set_value(said->value);
    }
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(lease_prefix_ + resource);
    row.SerializeToString(put->mutable_value());
  }
  etcdstore::v1::HoldRow hold_row;
  for (const auto& [token, hold] : batch.holds) {
    if (!hold) {
      txn.add_success()->mutable_request_delete_range()->set_key(HoldKey(token));
      continue;
    }
    hold_row.set_resource(hold->resource);
    hold_row.set_holder(hold->holder);
    hold_row.set_token(token);
    hold_row.set_ttl_ms(absl::ToInt64Milliseconds(hold->ttl));
    hold_row.set_hold_count(hold->hold_count);
    hold_row.clear_request_ids();
    for (const std::string& id : hold->request_ids) hold_row.add_request_ids(id);
    hold_row.set_mode(static_cast<uint32_t>(hold->mode));
    hold_row.set_permits(hold->permits);
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(HoldKey(token));
    hold_row.SerializeToString(put->mutable_value());
  }
  etcdstore::v1::WaiterRow waiter_row;
  for (const auto& [seq, waiter] : batch.waiters) {
    if (!waiter) {
      txn.add_success()->mutable_request_delete_range()->set_key(WaitKey(seq));
      continue;
    }
    waiter_row.set_resource(waiter->resource);
    waiter_row.set_holder(waiter->holder);
    waiter_row.set_ttl_ms(absl::ToInt64Milliseconds(waiter->ttl));
    waiter_row.set_request_id(waiter->request_id);
    waiter_row.set_mode(static_cast<uint32_t>(waiter->mode));
    waiter_row.set_permits(waiter->permits);
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(WaitKey(seq));
    waiter_row.SerializeToString(put->mutable_value());
  }
  // Fence positions only grow; the resource's old key goes.
  std::vector<std::pair<const std::string*, uint64_t>> moved;
  for (const FencePosition& fence : batch.fence_positions) {
    auto old = fence_positions_.find(fence.resource);
    if (old != fence_positions_.end()) {
      if (fence.position <= old->second) continue;
      txn.add_success()->mutable_request_delete_range()->set_key(FenceKey(old->second));
    }
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(FenceKey(fence.position));
    put->set_value(fence.resource);
    moved.emplace_back(&fence.resource, fence.position);
  }
  if (txn.success_size() == 0) {
    // A barrier: see the header for why it reads.
    RangeRequest* read = txn.add_success()->mutable_request_range();
    read->set_key(guard_.key);
    read->set_count_only(true);
  }
  if (!batch.empty()) FENCEGATE_FAILPOINT("lock.before_commit");  // test builds only
  if (batch.last_token > committed_token_) {
    FENCEGATE_FAILPOINT_ON("lock.before_token_commit", [&](absl::string_view resource) { return absl::c_any_of(batch.leases, [&](const auto& lease) { return lease.first == resource; }) || absl::c_any_of(batch.holds, [&](const auto& hold) { return hold.second && hold.second->resource == resource; }); });  // test builds only
  }
  if (FENCEGATE_PLANTED_BUG("lock_term_guard_off")) txn.clear_compare();  // test builds only
  absl::StatusOr<etcdserverpb::TxnResponse> response =
      client_->Txn(txn, absl::Now() + options_.commit_timeout);
  const bool confirmed = response.ok() && response->succeeded();
  if (!confirmed && FENCEGATE_PLANTED_BUG("lock_leader_grants_without_session")) return absl::OkStatus();  // test builds only
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
        ")")));
  }
  committed_token_ = std::max(committed_token_, batch.last_token);
  for (const auto& [resource, position] : moved) fence_positions_[*resource] = position;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<FencePosition>> EtcdLockStore::ScanFencePositions(
    uint64_t after, size_t limit) {
  RangeRequest range;
  range.set_key(FenceKey(after + 1));
  range.set_range_end(etcd::PrefixRangeEnd(fence_prefix_));
  range.set_limit(static_cast<int64_t>(limit));
  absl::StatusOr<etcdserverpb::RangeResponse> response =
      client_->Range(range, absl::Now() + options_.commit_timeout);
  if (!response.ok()) return response.status();
  std::vector<FencePosition> positions;
  for (const mvccpb::KeyValue& kv : response->kvs()) {
    FencePosition fence;
    if (!absl::SimpleAtoi(absl::string_view(kv.key()).substr(fence_prefix_.size()),
                          &fence.position)) {
      return absl::DataLossError(absl::StrCat("etcd key ", kv.key(),
                                              " is not a fence position; repair or delete it"));
    }
    fence.resource = kv.value();
    positions.push_back(std::move(fence));
  }
  return positions;
}

absl::StatusOr<LockStoreState> EtcdLockStore::Load() {
  if (ended_.load()) return Ended();
  const absl::Time deadline = absl::Now() + options_.load_timeout;
  etcdserverpb::TxnRequest txn = GuardedTxn();
  txn.add_success()->mutable_request_range()->set_key(token_key_);
  for (const std::string* prefix :
       {&lease_prefix_, &fence_prefix_, &wait_prefix_, &hold_prefix_}) {
    RangeRequest* first = txn.add_success()->mutable_request_range();
    first->set_key(*prefix);
    first->set_range_end(etcd::PrefixRangeEnd(*prefix));
    first->set_limit(options_.load_page);
  }
  txn.add_success()->mutable_request_range()->set_key(format_key_);
  absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn, deadline);
  if (!response.ok()) {
    return Lose(absl::UnavailableError(
        absl::StrCat("cannot load the lock state from etcd: ", response.status().message())));
  }
  if (!response->succeeded()) {
    return Lose(absl::UnavailableError(
        "cannot load the lock state: this instance no longer leads"));
  }
  // The format first: rows of a newer one may not parse.
  std::optional<int64_t> marked;
  const auto& format_kvs = response->responses(5).response_range().kvs();
  if (!format_kvs.empty()) {
    absl::StatusOr<int64_t> format =
        ParseFormat(options_.prefix, format_key_, format_kvs[0].value());
    if (!format.ok()) return Lose(format.status());
    if (*format > kStateFormat) {
      return Lose(
          NewerStateFormatError(StateName(options_.prefix), *format, kStateFormat));
    }
    marked = *format;
  }
  bool empty = true;  // no key at all: new state
  for (int i = 0; i < 5; ++i) {
    if (!response->responses(i).response_range().kvs().empty()) empty = false;
  }
  LockStoreState state;
  const auto& token_kvs = response->responses(0).response_range().kvs();
  if (!token_kvs.empty() && !absl::SimpleAtoi(token_kvs[0].value(), &state.last_token)) {
    return Lose(absl::DataLossError(absl::StrCat(
        "etcd key ", token_key_, " holds '", token_kvs[0].value(),
        "', not a token; repair it (it must be at least every token issued)")));
  }
  // Every page at the revision the guarded txn saw: one snapshot.
  const int64_t revision = response->header().revision();
  absl::Status status = LoadRows(
      lease_prefix_, revision, response->responses(1).response_range(), deadline,
      [&](const mvccpb::KeyValue& kv) { return ParseLease(kv, state); });
  if (!status.ok()) return Lose(status);
  // Shared leases and permits after the exclusive leases (LoadSink's order).
  status =
      LoadRows(hold_prefix_, revision, response->responses(4).response_range(), deadline,
               [&](const mvccpb::KeyValue& kv) { return ParseHold(kv, state); });
  if (!status.ok()) return Lose(status);
  absl::flat_hash_map<std::string, uint64_t> fences;
  status = LoadRows(fence_prefix_, revision, response->responses(2).response_range(),
                    deadline, [&](const mvccpb::KeyValue& kv) {
                      uint64_t position = 0;
                      if (!absl::SimpleAtoi(
                              absl::string_view(kv.key()).substr(fence_prefix_.size()),
                              &position)) {
                        return absl::DataLossError(absl::StrCat(
                            "etcd key ", kv.key(), " is not a fence position; repair or delete it"));
                      }
                      uint64_t& known = fences[kv.value()];
                      known = std::max(known, position);
                      state.last_token = std::max(state.last_token, position);
                      return absl::OkStatus();
                    });
  if (!status.ok()) return Lose(status);
  status = LoadRows(wait_prefix_, revision, response->responses(3).response_range(), deadline,
                    [&](const mvccpb::KeyValue& kv) { return ParseWaiter(kv, state); });
  if (!status.ok()) return Lose(status);
  const StateFormatAtOpen found{marked, kStateFormat, empty};
  if (marked != kStateFormat) {
    status = Migrate(marked, deadline);
    if (!status.ok()) return Lose(status);
    if (found.migrated()) {
      LogInfo("etcd lock store %s: state now in %s", options_.prefix, found.Describe());
    }
  }
  format_at_open_ = found;
  fence_positions_ = std::move(fences);
  loaded_ = true;
  committed_token_ = state.last_token;
  for (const LeaseRecord& lease : state.leases) {
    committed_token_ = std::max(committed_token_, lease.token);
  }
  return state;
}

absl::Status EtcdLockStore::Migrate(std::optional<int64_t> marked, absl::Time deadline) {
  etcdserverpb::TxnRequest txn = GuardedTxn();
  // Format 1, the 0.1.0 format, changes no key: state without a marker
  // only gets one. Format 2 adds LeaseRow.proclamation, absent in every
  // row of format 1: no key changes either. A later format adds the
  // changes of its step from `marked` here, to this one txn, before the
  // marker.
  (void)marked;
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(format_key_);
  put->set_value(absl::StrCat(kStateFormat));
  absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn, deadline);
  if (!response.ok()) {
    return absl::UnavailableError(
        absl::StrCat("etcd did not confirm the migration to state format ", kStateFormat,
                     ", so its outcome is unknown (", response.status().message(), ")"));
  }
  if (!response->succeeded()) {
    return absl::UnavailableError(
        "cannot migrate the lock state: this instance no longer leads");
  }
  return absl::OkStatus();
}

absl::Status EtcdLockStore::LoadRows(
    const std::string& prefix, int64_t revision, etcdserverpb::RangeResponse page,
    absl::Time deadline, absl::FunctionRef<absl::Status(const mvccpb::KeyValue&)> row) {
  for (;;) {
    for (const mvccpb::KeyValue& kv : page.kvs()) {
      absl::Status status = row(kv);
      if (!status.ok()) return status;
    }
    if (!page.more() || page.kvs().empty()) return absl::OkStatus();
    RangeRequest next;
    next.set_key(page.kvs(page.kvs_size() - 1).key() + std::string(1, '\0'));
    next.set_range_end(etcd::PrefixRangeEnd(prefix));
    next.set_limit(options_.load_page);
    next.set_revision(revision);
    absl::StatusOr<etcdserverpb::RangeResponse> more = client_->Range(next, deadline);
    if (!more.ok()) {
      return absl::UnavailableError(
          absl::StrCat("cannot load the lock state from etcd: ", more.status().message()));
    }
    page = *std::move(more);
  }
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
  if (row.has_proclamation()) {
    lease.proclamation =
        Proclamation{row.proclamation().seq(), row.proclamation().value()};
  }
  state.leases.push_back(std::move(lease));
  return absl::OkStatus();
}

absl::Status EtcdLockStore::ParseHold(const mvccpb::KeyValue& kv,
                                      LockStoreState& state) const {
  etcdstore::v1::HoldRow row;
  uint64_t token = 0;
  if (!row.ParseFromString(kv.value()) ||
      !absl::SimpleAtoi(absl::string_view(kv.key()).substr(hold_prefix_.size()),
                        &token) ||
      token != row.token()) {
    return absl::DataLossError(absl::StrCat(
        "etcd key ", kv.key(), " does not hold a hold row; repair or delete it"));
  }
  const std::optional<LeaseMode> mode = LeaseModeFromNumber(row.mode());
  if (!mode) return UnknownMode(kv.key(), row.mode());
  LeaseRecord lease;
  lease.resource = row.resource();
  lease.holder = row.holder();
  lease.token = token;
  lease.ttl = absl::Milliseconds(row.ttl_ms());
  lease.hold_count = row.hold_count();
  lease.request_ids.assign(row.request_ids().begin(), row.request_ids().end());
  lease.mode = *mode;
  lease.permits = row.permits();
  state.leases.push_back(std::move(lease));
  return absl::OkStatus();
}

absl::Status EtcdLockStore::ParseWaiter(const mvccpb::KeyValue& kv,
                                        LockStoreState& state) const {
  etcdstore::v1::WaiterRow row;
  WaiterRecord waiter;
  if (!row.ParseFromString(kv.value()) ||
      !absl::SimpleAtoi(absl::string_view(kv.key()).substr(wait_prefix_.size()),
                        &waiter.seq)) {
    return absl::DataLossError(absl::StrCat(
        "etcd key ", kv.key(), " does not hold a waiter row; repair or delete it"));
  }
  waiter.resource = row.resource();
  waiter.holder = row.holder();
  waiter.ttl = absl::Milliseconds(row.ttl_ms());
  waiter.request_id = row.request_id();
  const std::optional<LeaseMode> mode = LeaseModeFromNumber(row.mode());
  if (!mode) return UnknownMode(kv.key(), row.mode());
  waiter.mode = *mode;
  waiter.permits = row.permits();
  state.waiters.push_back(std::move(waiter));
  return absl::OkStatus();
}

}  // namespace fencegate::lockservice

#include "bench/loadgen/kinds_workloads.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fencegate::bench {
namespace {

absl::Status Violated(int resource, absl::string_view what) {
  return absl::InternalError(
      absl::StrCat("mutual exclusion violated on resource ", resource, ": ", what));
}

// The first error of a cycle: its acquire's wait aside, a broken exclusion
// first (it is what the cycle is for), then the write's, then the release's.
absl::Status FirstOf(absl::Status a, absl::Status b, absl::Status c = absl::OkStatus()) {
  if (!a.ok()) return a;
  if (!b.ok()) return b;
  return c;
}

}  // namespace

ExclusionCheck::ExclusionCheck(int resources)
    : writers_(new std::atomic<int>[resources]()),
      readers_(new std::atomic<int>[resources]()) {}

absl::Status ExclusionCheck::EnterWriter(int resource) {
  if (writers_[resource].fetch_add(1) != 0) return Violated(resource, "two writers");
  if (readers_[resource].load() != 0)
    return Violated(resource, "a writer beside readers");
  return absl::OkStatus();
}

void ExclusionCheck::LeaveWriter(int resource) { writers_[resource].fetch_sub(1); }

absl::Status ExclusionCheck::EnterReader(int resource) {
  readers_[resource].fetch_add(1);
  if (writers_[resource].load() != 0)
    return Violated(resource, "a reader beside a writer");
  return absl::OkStatus();
}

void ExclusionCheck::LeaveReader(int resource) { readers_[resource].fetch_sub(1); }

KindsClient::KindsClient(const RunConfig& config, int index, Driver& driver,
                         ExclusionCheck& check, const std::string& value, absl::Time end)
    : config_(config),
      index_(index),
      driver_(driver),
      check_(check),
      value_(value),
      key_(absl::StrCat("k", index)),
      end_(end),
      random_(static_cast<uint32_t>(index) + 1) {}

AcquireOptions KindsClient::Waiting(LockMode mode) const {
  AcquireOptions options;
  options.mode = mode;
  options.ttl = config_.lock_ttl;
  options.wait = true;
  options.give_up = end_;
  options.need_token = mode != LockMode::kShared;
  return options;
}

absl::StatusOr<KindsOp> KindsClient::SharedCycle(uint64_t k) {
  const int resource =
      static_cast<int>((index_ + k * config_.clients) % config_.resources);
  AcquireOptions options = Waiting(LockMode::kShared);
  auto lock = driver_.Acquire(ResourceName(config_, resource), options);
  if (!lock.ok()) return lock.status();
  KindsOp op;
  if (!lock->has_value()) {
    op.abandoned = true;
    return op;
  }
  absl::Status entered = check_.EnterReader(resource);
  check_.LeaveReader(resource);
  absl::Status released = driver_.Release(**lock);
  if (absl::Status failed = FirstOf(entered, released); !failed.ok()) return failed;
  return op;
}

absl::StatusOr<KindsOp> KindsClient::RwMix() {
  const int resource = static_cast<int>(random_() % config_.resources);
  KindsOp op;
  op.wrote = static_cast<int>(random_() % 100) >= kReadPercent;
  const absl::Time asked = absl::Now();
  auto lock = driver_.Acquire(ResourceName(config_, resource),
                              Waiting(op.wrote ? LockMode::kWrite : LockMode::kShared));
  if (!lock.ok()) return lock.status();
  if (!lock->has_value()) {
    op.abandoned = true;
    return op;
  }
  op.wait = absl::Now() - asked;
  if (!op.wrote) {
    absl::Status entered = check_.EnterReader(resource);
    check_.LeaveReader(resource);
    absl::Status released = driver_.Release(**lock);
    if (absl::Status failed = FirstOf(entered, released); !failed.ok()) return failed;
    return op;
  }
  absl::Status entered = check_.EnterWriter(resource);
  absl::Status written = driver_.FencedWrite(**lock, key_, value_);
  check_.LeaveWriter(resource);
  absl::Status released = driver_.Release(**lock);
  if (absl::Status failed = FirstOf(entered, written, released); !failed.ok())
    return failed;
  return op;
}

std::vector<int> KindsClient::MultiSet(uint64_t k) {
  std::vector<int> set;
  const int clients = config_.clients;
  if (config_.resources >= kMultiResources * clients) {
    // Client c's own resources: c, c + clients, c + 2 x clients, ...
    const uint64_t own = config_.resources / clients;
    for (int j = 0; j < kMultiResources; ++j) {
      set.push_back(index_ + clients * static_cast<int>((k * kMultiResources + j) % own));
    }
  } else {
    while (static_cast<int>(set.size()) < kMultiResources) {
      const int resource = static_cast<int>(random_() % config_.resources);
      if (std::find(set.begin(), set.end(), resource) == set.end())
        set.push_back(resource);
    }
  }
  std::sort(set.begin(), set.end(), [this](int a, int b) {
    return ResourceName(config_, a) < ResourceName(config_, b);
  });
  return set;
}

absl::StatusOr<KindsOp> KindsClient::MultiCycle(uint64_t k) {
  const std::vector<int> set = MultiSet(k);
  std::vector<std::string> names;
  for (int resource : set) names.push_back(ResourceName(config_, resource));
  const bool overlap = config_.resources < kMultiResources * config_.clients;
  AcquireOptions options = Waiting(LockMode::kExclusive);
  options.wait = overlap;
  options.need_token = false;
  auto locks = driver_.AcquireMany(names, options);
  if (!locks.ok()) return locks.status();
  KindsOp op;
  if (!locks->has_value()) {
    (overlap ? op.abandoned : op.not_acquired) = true;
    return op;
  }
  absl::Status entered;
  for (int resource : set) {
    if (absl::Status status = check_.EnterWriter(resource); entered.ok())
      entered = status;
  }
  for (int resource : set) check_.LeaveWriter(resource);
  absl::Status released;
  for (const HeldLock& lock : **locks) {
    if (absl::Status status = driver_.Release(lock); released.ok()) released = status;
  }
  if (absl::Status failed = FirstOf(entered, released); !failed.ok()) return failed;
  return op;
}

}  // namespace fencegate::bench

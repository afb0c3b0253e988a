#include "tests/unit/fence_sequence.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gateway/request_validation.h"

namespace fencegate::gateway {
namespace {

using Kind = FenceSequence::Op::Kind;

const std::vector<std::string> kResources = {"f0", "f1", "f2"};
const std::vector<std::string> kKeys = {"k0", "k1", "k2", "k3"};

std::string Request(const FenceSequence::Op& op) {
  static constexpr const char* kNames[] = {"Write", "MultiWrite", "fenced Read", "Fence"};
  std::string out = absl::StrCat(kNames[static_cast<int>(op.kind)], " ", op.resource,
                                 " token ", op.token);
  if (op.kind == Kind::kFencedRead) absl::StrAppend(&out, " key '", op.key, "'");
  for (const M& m : op.mutations) {
    absl::StrAppend(&out, m.kind == Mutation::Kind::kPut ? " put '" : " delete '", m.key, "'");
    if (m.kind == Mutation::Kind::kPut) absl::StrAppend(&out, "='", m.value, "'");
    if (m.expected) absl::StrAppend(&out, " if at version ", *m.expected);
  }
  return out;
}

}  // namespace

FenceSequence::FenceSequence(uint64_t seed) : rng_(seed) {}

absl::Status FenceSequence::Open() {
  absl::StatusOr<std::unique_ptr<SqliteStorage>> storage =
      SqliteStorage::Open(dir_.File("gateway.db"), 1);
  if (!storage.ok()) return storage.status();
  storage_ = *std::move(storage);
  faulty_ = std::make_unique<testing::FaultyStorageBackend>(storage_.get());
  store_ = std::make_unique<FencedStore>(faulty_.get(), limits_);
  model_.set_fence_cache(store_->refuses_from_memory());
  model_.Restart();  // a new store's cache is empty
  return absl::OkStatus();
}

absl::Status FenceSequence::Run() {
  if (absl::Status status = Open(); !status.ok()) return status;
  return testing::RunSteps(
      static_cast<int>(rng_.Between(6, 20)), [this](std::string& log) { return Step(log); },
      [this](std::string& log) {
        log = "crash and reopen (the end)";
        return Crash();
      });
}

absl::Status FenceSequence::Step(std::string& log) {
  if (rng_.Percent(10)) {
    log = "crash and reopen";
    return Crash();
  }
  const int n = rng_.Percent(60) ? 1 : static_cast<int>(rng_.Between(2, 5));
  std::vector<Op> ops;
  for (int i = 0; i < n; ++i) ops.push_back(RandomOp());
  const bool queued = std::any_of(ops.begin(), ops.end(),
                                  [](const Op& op) { return op.want.queued; });
  const bool fail = queued && rng_.Percent(8);
  if (fail) {
    model_.FailStep();
    for (Op& op : ops) {
      if (op.want.queued) op.want.text = kUnavailableText;
    }
  } else {
    model_.CommitStep();
  }
  log = n == 1 ? "one op" : absl::StrCat("a batch of ", n, " ops");
  if (fail) absl::StrAppend(&log, ", whose commit fails");
  if (n == 1) {
    if (fail) faulty_->FailNthCommit(1);
    Submit(ops[0]);
  } else {
    SubmitBatch(ops, fail);
  }
  for (Op& op : ops) {
    const std::string got =
        std::visit([](const auto& reply) { return ReplyText(reply->Wait()); }, op.reply);
    absl::StrAppend(&log, "\n       ", Request(op), " -> ", got);
    if (got != op.want.text) {
      return absl::InternalError(absl::StrCat(Request(op), " answered '", got,
                                              "'; the model expects '", op.want.text,
                                              "'"));
    }
  }
  std::vector<std::string> touched;
  for (const Op& op : ops) {
    if (std::count(touched.begin(), touched.end(), op.resource) == 0) {
      touched.push_back(op.resource);
    }
  }
  absl::Status status = CheckState(touched, /*values=*/false);
  if (!status.ok() || !fail || !rng_.Percent(30)) return status;
  absl::StrAppend(&log, "\n       crash and reopen");
  return Crash();
}

FenceSequence::Op FenceSequence::RandomOp() {
  Op op;
  op.resource = rng_.Pick(kResources);
  op.token = TokenNear(model_.Current(op.resource).fence);
  const uint64_t dice = rng_.Below(20);
  if (dice < 13) {
    op.kind = dice < 8 ? Kind::kWrite : Kind::kMultiWrite;
    const bool multi = op.kind == Kind::kMultiWrite;
    op.mutations = RandomMutations(op.resource, multi);
    op.want = model_.Write(op.resource, op.token, op.mutations, multi);
  } else if (dice < 17) {
    op.kind = Kind::kFencedRead;
    op.key = rng_.Percent(3) ? "" : rng_.Pick(kKeys);
    op.want = model_.FencedRead(op.resource, op.key, op.token);
  } else {
    op.kind = Kind::kFence;
    op.want = model_.Fence(op.resource, op.token);
  }
  return op;
}

uint64_t FenceSequence::TokenNear(uint64_t fence) {
  if (rng_.Percent(3)) return rng_.Pick<uint64_t>({0, kMaxToken + 1, ~uint64_t{0}});  // bad
  if (rng_.Percent(2)) return kMaxToken;
  const int64_t delta = rng_.Pick<int64_t>({-2, -1, 0, 0, 1, 1, 2, 5});
  if (delta >= 0) return fence + static_cast<uint64_t>(delta);
  const uint64_t below = static_cast<uint64_t>(-delta);
  return fence > below ? fence - below : 1;
}

std::vector<M> FenceSequence::RandomMutations(const std::string& resource, bool multi) {
  std::vector<std::string> keys = kKeys;
  for (size_t i = keys.size() - 1; i > 0; --i) std::swap(keys[i], keys[rng_.Below(i + 1)]);
  keys.resize(multi ? rng_.Between(1, 3) : 1);
  std::vector<M> mutations;
  for (const std::string& key : keys) {
    const auto& objects = model_.Current(resource).objects;
    auto it = objects.find(key);
    const uint64_t version = it == objects.end() ? 0 : it->second.version;
    M m;
    m.key = rng_.Percent(2) ? "" : key;  // bad input
    m.kind = rng_.Percent(75) ? Mutation::Kind::kPut : Mutation::Kind::kDelete;
    if (m.kind == Mutation::Kind::kPut && !rng_.Percent(10)) {
      m.value = absl::StrCat("v", next_value_++);
    }
    const uint64_t choice = rng_.Below(100);
    if (choice >= 60) m.expected = choice < 80 ? version : choice < 88 ? 0 : version + 1;
    mutations.push_back(std::move(m));
  }
  return mutations;
}

void FenceSequence::Submit(Op& op) {
  switch (op.kind) {
    case Kind::kWrite:
    case Kind::kMultiWrite:
      op.reply = StartWrite(*store_, op.resource, op.token, op.mutations,
                            op.kind == Kind::kMultiWrite);
      break;
    case Kind::kFencedRead:
      op.reply = StartRead(*store_, op.resource, op.key, op.token);
      break;
    case Kind::kFence:
      op.reply = StartFence(*store_, op.resource, op.token);
      break;
  }
}

void FenceSequence::SubmitBatch(std::vector<Op>& ops, bool fail) {
  absl::Notification entered, proceed;
  faulty_->HoldNextCommit(&entered, &proceed);
  ReplyPtr<FenceResult> blocker = StartFence(*store_, "blocker", 1);
  entered.WaitForNotification();
  // The held commit is counted already: the next one is the ops' batch.
  if (fail) faulty_->FailNthCommit(1);
  for (Op& op : ops) Submit(op);
  proceed.Notify();
  // The writer is past `proceed` once the blocker is answered.
  static_cast<void>(blocker->Wait());
}

absl::Status FenceSequence::Crash() {
  store_.reset();  // nothing is queued: every reply of the sequence has come
  faulty_.reset();
  storage_.reset();
  absl::Status status = Open();
  if (!status.ok()) return status;
  return CheckState(kResources, /*values=*/true);
}

absl::Status FenceSequence::CheckState(const std::vector<std::string>& resources,
                                       bool values) {
  for (const std::string& name : resources) {
    absl::StatusOr<ResourceStats> stats = store_->Describe(name);
    const std::string described = ReplyText(stats);
    const std::string listed = ReplyText(store_->List(ListArgs{name, 0, ""}));
    const std::string want_described = model_.Describe(name).text;
    const std::string want_listed = model_.List(name, 0, "").text;
    if (described != want_described || listed != want_listed) {
      return absl::InternalError(absl::StrCat(name, " is '", described, "; ", listed,
                                              "'; the model says '", want_described, "; ",
                                              want_listed, "'"));
    }
    uint64_t& seen = fence_seen_[name];
    if (stats->max_token < seen) {
      return absl::InternalError(absl::StrCat("the fence of ", name, " went down from ",
                                              seen, " to ", stats->max_token));
    }
    seen = stats->max_token;
    if (!values) continue;
    for (const std::string& key : kKeys) {
      const std::string read = ReplyText(StartRead(*store_, name, key, 0)->Wait());
      const std::string want_read = model_.Read(name, key).text;
      if (read != want_read) {
        return absl::InternalError(absl::StrCat("Read(", name, ", ", key, ") says '",
                                                read, "'; the model says '", want_read,
                                                "'"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace fencegate::gateway

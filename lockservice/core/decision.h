// The decision under way in the lock manager: the rows it changes, the
// fence positions it moves and the replies and lease ends it will
// deliver, gathered while the manager decides and handed to the group
// commit together when the decision ends, as one group no batch cuts
// (common/core/group_commit.h; docs/design.md, "The lock manager": decisions
// commit whole). Nothing in it is delivered before its batch commits.
//
// Also what one entry of a batch is (CommitItem): LockManager::Flush folds a
// batch's rows into one store commit, then runs its deliveries in order.
//
// Thread safety: none; LockManager::mu_ guards its Decision. Deliveries run
// later, on the thread that flushes their batch, without the mutex.
#ifndef FENCEGATE_LOCKSERVICE_CORE_DECISION_H_
#define FENCEGATE_LOCKSERVICE_CORE_DECISION_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/core/group_commit.h"
#include "lockservice/core/elections.h"
#include "lockservice/core/fence_feed.h"
#include "lockservice/core/lease_listener.h"
#include "lockservice/core/lock_calls.h"
#include "lockservice/core/lock_store.h"

namespace fencegate::lockservice {

struct HeldLease;     // resource_state.h
class ResourceState;  // resource_state.h
struct Waiter;        // wait_queue.h

struct LeaseRowChange {  // a resource's lease row
  std::string resource;
  std::optional<LeaseRecord> lease;  // nullopt: delete the row
};
struct HoldRowChange {  // a shared lease's or a permit's row, by token
  uint64_t token = 0;
  std::optional<LeaseRecord> lease;  // nullopt: delete the row
};
struct WaiterRowChange {  // a parked Acquire's row
  uint64_t seq = 0;
  std::optional<WaiterRecord> waiter;  // nullopt: delete the row
};
// A reply or a lease's end to deliver once the batch is durable, told
// whether the batch committed.
using Delivery = absl::AnyInvocable<void(const absl::Status& commit)>;

struct CommitItem {
  // Implicit, so that Add(change) says what it queues.
  template <typename Change>
  CommitItem(Change c) : change(std::move(c)) {}  // NOLINT(google-explicit-constructor)

  // The manager's recovery epoch when the item was decided: an item of an
  // older epoch was decided on discarded state and is failed, not committed.
  uint64_t epoch = 0;
  uint64_t last_token = 0;  // the token counter when the item was decided
  // A fence event moves the resource's fence position (and is published).
  std::variant<LeaseRowChange, HoldRowChange, WaiterRowChange, FenceEvent, Delivery>
      change;
};

class Decision {
 public:
  // The most items one decision queues (LockManager::kMaxDecisionItems says
  // why); one that queues more is logged as the bug it is.
  // `elections` (the manager's) says what an exclusive lease's row carries
  // when its lease leads an election.
  Decision(size_t max_items, const Elections* elections)
      : max_items_(max_items), elections_(elections) {}

  // The lease row of `lease` (of `r`, named `name`) as it is now: an
  // exclusive lease's row by resource (with its proclamation, if it leads
  // an election), the others' by token.
  void PutLease(const std::string& name, const ResourceState& r, const HeldLease& lease);
  // The deletion of that row.
  void DeleteLease(const std::string& name, const HeldLease& lease);
  // The row of the parked Acquire `w` (queued on `name`), or its deletion.
  void PutWaiter(const std::string& name, const Waiter& w);
  void DeleteWaiter(const Waiter& w);
  // A fence position to commit with the batch and then publish.
  void MoveFence(FenceEvent event) { Add(std::move(event)); }

  // `done` gets `result` once the batch commits, or the commit's error.
  template <typename T>
  void Reply(Callback<T> done, absl::StatusOr<T> result) {
    Deliver([done = std::move(done),
             result = std::move(result)](const absl::Status& commit) mutable {
      if (commit.ok()) {
        done(std::move(result));
      } else {
        done(commit);
      }
    });
  }
  // `listener` hears of `loss` once the batch commits (a failed commit is
  // followed by a rebuild, which stops every listener instead). Holds a
  // reference on it until then.
  void TellLost(LeaseListener* listener, LeaseLoss loss);
  // `observer` hears `change` once the batch commits (a failed commit is
  // followed by a rebuild, which stops every observer instead). Holds a
  // reference on it until then.
  void TellChange(ElectionObserver* observer, ElectionChange change);
  // Runs `delivery` once the batch is durable, told whether it committed.
  void Deliver(Delivery delivery) { Add(std::move(delivery)); }

  // Ends the decision: its items go to `queue` as one group, each stamped
  // with `epoch` and `last_token` (the counter after every token it drew).
  // A null `queue` (the manager is loading at Create, or being destroyed)
  // drops them: nothing is decided then that a client waits for.
  void End(GroupCommitQueue<CommitItem>* queue, uint64_t epoch, uint64_t last_token);

 private:
  void Add(CommitItem item) { items_.push_back(std::move(item)); }

  const size_t max_items_;
  const Elections* const elections_;
  std::vector<CommitItem> items_;  // keeps its capacity across decisions
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_DECISION_H_

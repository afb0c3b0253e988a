// Decision (decision.h): the rows, fence moves and deliveries of the lock
// manager's decision under way, handed to the group commit as one group.
#include "lockservice/core/decision.h"

#include "common/base/log.h"
#include "lockservice/core/resource_state.h"
#include "lockservice/core/wait_queue.h"

namespace fencegate::lockservice {
namespace {

LeaseRecord ToRecord(const std::string& name, const HeldLease& lease, uint32_t permits) {
  LeaseRecord record;
  record.resource = name;
  record.holder = lease.holder;
  record.token = lease.token;
  record.ttl = lease.ttl.get();
  record.hold_count = lease.hold_count;
  record.mode = lease.mode;
  record.permits = permits;
  record.request_ids = lease.request_ids.ToVector();
  return record;
}

}  // namespace

void Decision::PutLease(const std::string& name, const ResourceState& r,
                        const HeldLease& lease) {
  const uint32_t permits = lease.mode == LeaseMode::kPermit ? r.shared->permits : 0;
  LeaseRecord record = ToRecord(name, lease, permits);
  if (lease.mode == LeaseMode::kExclusive) {
    if (const Proclamation* said = elections_->Find(name, lease.token)) {
      record.proclamation = *said;
    }
    Add(LeaseRowChange{name, std::move(record)});
  } else {
    Add(HoldRowChange{lease.token, std::move(record)});
  }
}

void Decision::DeleteLease(const std::string& name, const HeldLease& lease) {
  if (lease.mode == LeaseMode::kExclusive) {
    Add(LeaseRowChange{name, std::nullopt});
  } else {
    Add(HoldRowChange{lease.token, std::nullopt});
  }
}

void Decision::PutWaiter(const std::string& name, const Waiter& w) {
  Add(WaiterRowChange{w.seq, WaiterRecord{w.seq, name, w.holder, w.ttl, w.request_id,
                                          w.mode, w.permits}});
}

void Decision::DeleteWaiter(const Waiter& w) {
  Add(WaiterRowChange{w.seq, std::nullopt});
}

void Decision::TellLost(LeaseListener* listener, LeaseLoss loss) {
  listener->Ref();  // until told, whatever happens to it meanwhile
  Deliver([listener, loss = std::move(loss)](const absl::Status& commit) {
    // A failed commit is followed by a rebuild, which stops every listener.
    if (commit.ok()) listener->OnLeaseLost(loss);
    listener->Unref();
  });
}

void Decision::TellChange(ElectionObserver* observer, ElectionChange change) {
  observer->Ref();
  Deliver([observer, change = std::move(change)](const absl::Status& commit) {
    if (commit.ok()) observer->OnChange(change);
    observer->Unref();
  });
}

void Decision::End(GroupCommitQueue<CommitItem>* queue, uint64_t epoch,
                   uint64_t last_token) {
  if (items_.empty()) return;
  if (queue == nullptr) {
    items_.clear();
    return;
  }
  if (items_.size() > max_items_) {
    // A bug, not an input: the batch may now exceed what etcd allows in
    // one txn, which fails that commit (and the manager recovers).
    LogError("one decision queued %d items, more than the most a decision may (%d)",
             items_.size(), max_items_);
  }
  for (CommitItem& item : items_) {
    item.epoch = epoch;
    item.last_token = last_token;
  }
  queue->SubmitGroup(items_);
}

}  // namespace fencegate::lockservice

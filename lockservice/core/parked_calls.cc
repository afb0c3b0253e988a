// ParkedCalls (parked_calls.h): the lock manager's parked Acquire and
// AcquireMany calls, by call id and by the end of their wait.
#include "lockservice/core/parked_calls.h"

namespace fencegate::lockservice {

void ParkedCalls::Park(CallId id, Place place, absl::Time deadline) {
  place.waiter->deadline = CompactTime(deadline);
  one_.emplace(id, place);
  deadlines_.Add(place.waiter->deadline, id, place.resource);
  timer_.Arm(deadlines_);
}

std::optional<ParkedCalls::Place> ParkedCalls::Find(CallId id) const {
  auto it = one_.find(id);
  if (it == one_.end()) return std::nullopt;
  return it->second;
}

void ParkedCalls::Unpark(const Waiter& w) {
  one_.erase(w.id);
  deadlines_.Remove(w.deadline, w.id);
  timer_.DisarmIfEmpty(deadlines_);
}

void ParkedCalls::ParkMany(CallId id, std::unique_ptr<Many> call) {
  deadlines_.Add(call->deadline, id, call->places.front().resource);
  many_.emplace(id, std::move(call));
  timer_.Arm(deadlines_);
}

const ParkedCalls::Many* ParkedCalls::FindMany(CallId id) const {
  auto it = many_.find(id);
  return it == many_.end() ? nullptr : it->second.get();
}

std::unique_ptr<ParkedCalls::Many> ParkedCalls::UnparkMany(CallId id) {
  auto it = many_.find(id);
  if (it == many_.end()) return nullptr;
  std::unique_ptr<Many> call = std::move(it->second);
  many_.erase(it);
  deadlines_.Remove(call->deadline, id);
  timer_.DisarmIfEmpty(deadlines_);
  return call;
}

std::pair<std::vector<ParkedCalls::Place>,
          std::vector<std::unique_ptr<ParkedCalls::Many>>>
ParkedCalls::TakeAll() {
  std::vector<Place> ones;
  ones.reserve(one_.size());
  for (auto& [id, place] : one_) ones.push_back(place);
  std::vector<std::unique_ptr<Many>> many;
  many.reserve(many_.size());
  for (auto& [id, call] : many_) many.push_back(std::move(call));
  one_.clear();
  many_.clear();
  deadlines_.Clear();
  timer_.DisarmIfEmpty(deadlines_);
  return {std::move(ones), std::move(many)};
}

}  // namespace fencegate::lockservice

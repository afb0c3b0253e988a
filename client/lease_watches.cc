#include "client/lease_watches.h"

#include <algorithm>

namespace fencegate::client {

LeaseWatch::~LeaseWatch() { watches_->Drop(this); }

std::unique_ptr<LeaseWatch> LeaseWatches::Watch(
    std::string resource, uint64_t token, absl::AnyInvocable<void(LeaseNotice)> listener) {
  std::unique_ptr<LeaseWatch> watch(
      new LeaseWatch(this, std::move(resource), token, std::move(listener)));
  absl::MutexLock lock(&mu_);
  watching_[Key(watch->resource_, token)].push_back(watch.get());
  return watch;
}

void LeaseWatches::Drop(LeaseWatch* watch) {
  absl::MutexLock lock(&mu_);
  auto it = watching_.find(Key(watch->resource_, watch->token_));
  if (it == watching_.end()) return;
  std::vector<LeaseWatch*>& list = it->second;
  list.erase(std::remove(list.begin(), list.end(), watch), list.end());
  if (list.empty()) watching_.erase(it);
}

void LeaseWatches::Ended(const std::string& resource, uint64_t token,
                         LeaseNotice notice) {
  absl::MutexLock lock(&mu_);
  auto it = watching_.find(Key(resource, token));
  if (it == watching_.end()) return;
  for (LeaseWatch* watch : it->second) watch->listener_(notice);
}

void LeaseWatches::StreamEnded() {
  absl::MutexLock lock(&mu_);
  for (auto& [key, list] : watching_) {
    for (LeaseWatch* watch : list) watch->listener_(LeaseNotice::kStreamEnded);
  }
}

}  // namespace fencegate::client

#include "lockservice/core/fence_feed.h"

#include <algorithm>
#include <utility>

namespace fencegate::lockservice {

void FenceFeed::Subscribe(std::shared_ptr<Subscriber> subscriber) {
  {
    absl::MutexLock lock(&mu_);
    if (!closed_) {
      subscribers_.push_back(std::move(subscriber));
      return;
    }
  }
  subscriber->OnClose();
}

void FenceFeed::Unsubscribe(const Subscriber* subscriber) {
  absl::MutexLock lock(&mu_);
  subscribers_.erase(
      std::remove_if(subscribers_.begin(), subscribers_.end(),
                     [subscriber](const auto& s) { return s.get() == subscriber; }),
      subscribers_.end());
}

std::vector<std::shared_ptr<FenceFeed::Subscriber>> FenceFeed::Snapshot() {
  absl::MutexLock lock(&mu_);
  return subscribers_;
}

void FenceFeed::Publish(const std::vector<FenceEvent>& events) {
  if (events.empty()) return;
  for (const auto& subscriber : Snapshot()) subscriber->OnEvents(events);
}

void FenceFeed::Close() {
  std::vector<std::shared_ptr<Subscriber>> closing;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    closing.swap(subscribers_);
  }
  for (const auto& subscriber : closing) subscriber->OnClose();
}

}  // namespace fencegate::lockservice

#include "lockservice/wait_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fencegate::lockservice {
namespace {

std::string RequestKey(const std::string& holder, const std::string& request_id) {
  return absl::StrCat(holder, absl::string_view("\0", 1), request_id);
}

}  // namespace

WaitQueue::iterator WaitQueue::Link(iterator place, Waiter w) {
  auto it = waiters_.insert(place, std::move(w));
  if (it->seq != 0) by_request_.emplace(RequestKey(it->holder, it->request_id), it);
  ++waiters_of_[it->holder];
  return it;
}

void WaitQueue::Unlink(iterator w) {
  if (w->seq != 0) by_request_.erase(RequestKey(w->holder, w->request_id));
  auto count = waiters_of_.find(w->holder);
  if (--count->second == 0) waiters_of_.erase(count);
  waiters_.erase(w);
}

std::optional<WaitQueue::iterator> WaitQueue::Find(
    const std::string& holder, const std::string& request_id) {
  auto it = by_request_.find(RequestKey(holder, request_id));
  if (it == by_request_.end()) return std::nullopt;
  return it->second;
}

}  // namespace fencegate::lockservice

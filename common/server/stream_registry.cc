#include "common/server/stream_registry.h"

#include "common/base/log.h"

namespace fencegate {

StreamRegistry::StreamRegistry(size_t max_sessions)
    : quota_(max_sessions, "Session streams", "--max_sessions",
             "Use one stream per client for all its calls, close the streams it no "
             "longer needs, or retry later or on another instance") {}

void StreamRegistry::CloseAll(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  closed_ = true;
  close_status_ = status;
  for (StreamSession* session : sessions_) session->Close(status);
}

size_t StreamRegistry::live() {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

bool StreamRegistry::AwaitEnded(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto ended = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sessions_.empty(); };
  if (mu_.AwaitWithDeadline(absl::Condition(&ended), deadline)) return true;
  LogWarning(
      "%d Session stream(s) still open at the shutdown deadline "
      "(--shutdown_grace); they are cancelled, and their clients see CANCELLED",
      static_cast<int>(sessions_.size()));
  return false;
}

bool StreamRegistry::Add(StreamSession* session, absl::Status* status) {
  absl::MutexLock lock(&mu_);
  if (closed_) {
    *status = close_status_;
    return false;
  }
  *status = quota_.Take();
  if (!status->ok()) return false;
  sessions_.insert(session);
  return true;
}

void StreamRegistry::Remove(StreamSession* session) {
  absl::MutexLock lock(&mu_);
  if (sessions_.erase(session) > 0) quota_.Give();
}

}  // namespace fencegate

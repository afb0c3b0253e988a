// DeadlineTimer (deadline_timer.h): one clock timer for a DeadlineIndex.
#include "lockservice/core/deadline_timer.h"

namespace fencegate::lockservice {

void DeadlineTimer::Arm(const DeadlineIndex& index) {
  const absl::Time earliest = index.Earliest();
  if (earliest >= at_) return;
  if (id_ != 0) clock_->Cancel(id_);
  at_ = earliest;
  id_ = set_timer_(earliest);
}

void DeadlineTimer::DisarmIfEmpty(const DeadlineIndex& index) {
  if (!index.empty() || id_ == 0) return;
  clock_->Cancel(id_);
  id_ = 0;
  at_ = absl::InfiniteFuture();
}

}  // namespace fencegate::lockservice

#include "common/core/stream_quota.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace fencegate {

StreamQuota::StreamQuota(size_t max, std::string streams, std::string flag,
                         std::string advice)
    : max_(max),
      streams_(std::move(streams)),
      flag_(std::move(flag)),
      advice_(std::move(advice)) {}

absl::Status StreamQuota::Take() {
  size_t open = open_.load(std::memory_order_relaxed);
  while (open < max_) {
    if (open_.compare_exchange_weak(open, open + 1, std::memory_order_relaxed)) {
      return absl::OkStatus();
    }
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "this server has ", open, " ", streams_, " open, its limit (", flag_, "=", max_,
      "); this stream is refused: nothing sent on it is applied. ", advice_));
}

void StreamQuota::Give() { open_.fetch_sub(1, std::memory_order_relaxed); }

}  // namespace fencegate

// CompactTime and CompactDuration: an absl::Time or absl::Duration in 8
// bytes instead of 16, for the fields the lock manager keeps per lease and
// per resource (a million of each: 8 bytes saved per field is 8 MB).
//
// Resolution: whole nanoseconds (absl keeps quarter nanoseconds; every
// clock the service reads ticks in nanoseconds or coarser). A CompactTime
// holds the times from 1677 to 2262 exactly and InfinitePast/InfiniteFuture
// as themselves; one made by default is InfinitePast. A CompactDuration
// holds +-292 years, and the infinities as themselves.
//
// Thread safety: plain values.
#ifndef FENCEGATE_LOCKSERVICE_CORE_COMPACT_TIME_H_
#define FENCEGATE_LOCKSERVICE_CORE_COMPACT_TIME_H_

#include <cstdint>
#include <limits>

#include "absl/time/time.h"

namespace fencegate::lockservice {

class CompactTime {
 public:
  CompactTime() = default;
  explicit CompactTime(absl::Time t) : nanos_(absl::ToUnixNanos(t)) {}

  absl::Time get() const {
    if (nanos_ == kMin) return absl::InfinitePast();
    if (nanos_ == kMax) return absl::InfiniteFuture();
    return absl::FromUnixNanos(nanos_);
  }

  friend bool operator==(CompactTime a, CompactTime b) { return a.nanos_ == b.nanos_; }
  friend bool operator<(CompactTime a, CompactTime b) { return a.nanos_ < b.nanos_; }

 private:
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t nanos_ = kMin;  // absl::ToUnixNanos saturates to these
};

class CompactDuration {
 public:
  CompactDuration() = default;
  explicit CompactDuration(absl::Duration d) : nanos_(absl::ToInt64Nanoseconds(d)) {}

  absl::Duration get() const {
    if (nanos_ == kMin) return -absl::InfiniteDuration();
    if (nanos_ == kMax) return absl::InfiniteDuration();
    return absl::Nanoseconds(nanos_);
  }

 private:
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t nanos_ = 0;  // absl::ToInt64Nanoseconds saturates to kMin/kMax
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_CORE_COMPACT_TIME_H_

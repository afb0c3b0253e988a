// MonotonicNanos: CLOCK_MONOTONIC in nanoseconds, the one clock of a torture
// run. It is system-wide, so the harness, the workers and the lock service's
// lease history all read the same timeline, and libfaketime leaves it alone
// (DONT_FAKE_MONOTONIC=1): only CLOCK_REALTIME jumps. Thread-safe.
#ifndef FENCEGATE_TESTS_TORTURE_MONOTONIC_CLOCK_H_
#define FENCEGATE_TESTS_TORTURE_MONOTONIC_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace fencegate::torture {

inline int64_t MonotonicNanos() {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_MONOTONIC_CLOCK_H_

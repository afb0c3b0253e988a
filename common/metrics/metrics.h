// The three kinds of metric fencegate keeps (Prometheus' counter, gauge and
// histogram), cheap enough for the hot path: an update is one or two
// relaxed atomic operations, with no lock, no allocation and no lookup.
// A metric with labels is one child of a family (registry.h), resolved once
// (at start-up) to a pointer that the code then bumps.
//
// Reads (Value(), Snapshot()) are for the exposition: each value read is
// one that was current at some instant during the read, and a histogram's
// buckets and count always agree (the count is their sum).
//
// Ownership: a Registry owns every metric it hands out; they live as long
// as it does. Thread safety: every method is thread-safe.
#ifndef FENCEGATE_COMMON_METRICS_METRICS_H_
#define FENCEGATE_COMMON_METRICS_METRICS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace fencegate::metrics {

// A count that only grows (Prometheus "counter").
class alignas(64) Counter {
 public:
  void Increment(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// A value that goes up and down (Prometheus "gauge"), in whole units.
class alignas(64) Gauge {
 public:
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Observations counted into buckets with fixed upper bounds (Prometheus
// "histogram"), plus their sum. Bucket i counts the observations v with
// bounds[i-1] < v <= bounds[i]; one more bucket counts those above the
// last bound (+Inf). The exposition makes the counts cumulative.
class Histogram {
 public:
  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per bound, then +Inf (= count)
    uint64_t count = 0;
    double sum = 0;
  };

  // REQUIRES: `bounds` strictly increasing, finite (Registry checks).
  explicit Histogram(std::vector<double> bounds)
      : bounds_(std::move(bounds)),
        counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

  void Observe(double v) {
    size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i]) ++i;  // a dozen bounds at most
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    uint64_t old_bits = sum_bits_.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t new_bits = ToBits(FromBits(old_bits) + v);
      if (sum_bits_.compare_exchange_weak(old_bits, new_bits,
                                          std::memory_order_relaxed)) {
        break;
      }
    }
  }

  // The time since `start`, in seconds.
  void ObserveSince(std::chrono::steady_clock::time_point start) {
    Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  const std::vector<double>& bounds() const { return bounds_; }

  Snapshot Read() const {
    Snapshot s;
    s.cumulative.reserve(bounds_.size() + 1);
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      s.count += counts_[i].load(std::memory_order_relaxed);
      s.cumulative.push_back(s.count);
    }
    s.sum = FromBits(sum_bits_.load(std::memory_order_relaxed));
    return s;
  }

 private:
  static uint64_t ToBits(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    return bits;
  }
  static double FromBits(uint64_t bits) {
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    return d;
  }

  const std::vector<double> bounds_;
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<uint64_t> sum_bits_{0};  // a double (0.0 is all zero bits)
};

// Bucket bounds fencegate uses, in base units.
// Latencies in seconds: 100 us to 10 s.
inline std::vector<double> LatencyBounds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,   0.1,     0.25,   0.5,   1,      2.5,   10};
}
// Waits in seconds: 1 ms to 5 minutes.
inline std::vector<double> WaitBounds() {
  return {0.001, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
}
// Sizes (requests per batch): 1 to 1024.
inline std::vector<double> BatchBounds() {
  return {1, 2, 4, 8, 16, 32, 64, 128, 256, 1024};
}

}  // namespace fencegate::metrics

#endif  // FENCEGATE_COMMON_METRICS_METRICS_H_

// Registry: one server's metrics, and their exposition (exposition.h).
//
//   metrics::Registry registry;
//   auto& grants = registry.AddCounter("fencegate_lock_grants_total",
//                                      "Leases granted.", {"kind"});
//   metrics::Counter* waited = &grants.Get({"waited"});  // once, at start-up
//   waited->Increment();                                   // on the hot path
//   std::string text = registry.Render();                  // on each scrape
//
// Families of counters, gauges and histograms own their children (one per
// combination of label values); Get() finds or makes one, under the
// family's mutex, so resolve children once and keep the pointer. Values
// that live elsewhere (a lock manager's table, /proc) are read at each
// Render() through a collector (AddCollected). Families render in the
// order they were added, children in the order they were made.
//
// Labels must stay bounded: never a resource name, holder or key as a
// label value (docs/observability.md, "Labels").
//
// Errors: a name that breaks the format, a family added twice, or Get()
// with the wrong number of values is a programming error: it is printed
// and the process aborts (at start-up, where families are added).
//
// Ownership: the registry owns its families and their children; pointers
// stay valid for its lifetime. Collectors may run until the registry is
// destroyed or their owner calls RemoveCollected(). Thread safety: all
// methods are thread-safe; collectors run on the thread that calls
// Render(), one Render() at a time.
#ifndef FENCEGATE_COMMON_METRICS_REGISTRY_H_
#define FENCEGATE_COMMON_METRICS_REGISTRY_H_

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/metrics/exposition.h"
#include "common/metrics/metrics.h"

namespace fencegate::metrics {

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type,
             std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  const std::string& name() const { return name_; }
  MetricType type() const { return type_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  virtual void Render(ExpositionWriter& out) const = 0;

 protected:
  // Aborts unless `values` has one value per label name.
  void CheckArity(const std::vector<std::string>& values) const;

  const std::string name_;
  const std::string help_;
  const MetricType type_;
  const std::vector<std::string> label_names_;
};

// The children of one family, T = Counter, Gauge or Histogram.
template <typename T>
class Family final : public FamilyBase {
 public:
  using MakeFn = std::function<std::unique_ptr<T>()>;
  Family(std::string name, std::string help, MetricType type,
         std::vector<std::string> label_names, MakeFn make)
      : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)),
        make_(std::move(make)) {}

  // The child with these label values (one per label name), made on first
  // use. Takes the family's mutex: resolve once, then keep the reference.
  T& Get(const std::vector<std::string>& values = {}) {
    CheckArity(values);
    absl::MutexLock lock(&mu_);
    for (auto& [child_values, child] : children_) {
      if (child_values == values) return *child;
    }
    children_.emplace_back(values, make_());
    return *children_.back().second;
  }

  void Render(ExpositionWriter& out) const override;

 private:
  const MakeFn make_;
  mutable absl::Mutex mu_;
  std::deque<std::pair<std::vector<std::string>, std::unique_ptr<T>>> children_
      ABSL_GUARDED_BY(mu_);
};

// One sample of a collected family.
struct CollectedSample {
  std::vector<std::string> label_values;
  double value = 0;
};
using CollectFn = std::function<void(std::vector<CollectedSample>& out)>;

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Family<Counter>& AddCounter(std::string name, std::string help,
                              std::vector<std::string> label_names = {});
  Family<Gauge>& AddGauge(std::string name, std::string help,
                          std::vector<std::string> label_names = {});
  // REQUIRES: `bounds` strictly increasing and finite; "le" is not a label.
  Family<Histogram>& AddHistogram(std::string name, std::string help,
                                  std::vector<double> bounds,
                                  std::vector<std::string> label_names = {});
  // A counter or gauge family whose samples `collect` appends at each
  // Render() (a family with no sample renders its HELP and TYPE only).
  // `owner` (optional) names the collector for RemoveCollected().
  void AddCollected(std::string name, std::string help, MetricType type,
                    std::vector<std::string> label_names, CollectFn collect,
                    const void* owner = nullptr);
  // Stops calling the collectors added with `owner` (their families stay,
  // empty); waits for a Render() that is running them.
  void RemoveCollected(const void* owner);

  // The exposition of every family.
  std::string Render() const;

 private:
  class CollectedFamily;
  // Aborts on a bad or repeated name.
  void CheckNew(const std::string& name, const std::vector<std::string>& label_names)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  template <typename T>
  Family<T>& Add(std::unique_ptr<Family<T>> family);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate::metrics

#endif  // FENCEGATE_COMMON_METRICS_REGISTRY_H_

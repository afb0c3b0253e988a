#include "common/metrics/registry.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fencegate::metrics {
namespace {

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "metrics registry: %s\n", message.c_str());
  std::abort();
}

}  // namespace

FamilyBase::FamilyBase(std::string name, std::string help, MetricType type,
                       std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)) {}

void FamilyBase::CheckArity(const std::vector<std::string>& values) const {
  if (values.size() != label_names_.size()) {
    Fail(absl::StrCat(name_, " has labels {", absl::StrJoin(label_names_, ","),
                      "} but was given ", values.size(), " values"));
  }
}

// Counters and gauges: one sample per child.
template <typename T>
void RenderScalars(
    const std::string& name, const std::vector<std::string>& labels,
    const std::deque<std::pair<std::vector<std::string>, std::unique_ptr<T>>>& children,
    ExpositionWriter& out) {
  for (const auto& [values, child] : children) {
    out.Sample(name, labels, values, FormatValue(child->Value()));
  }
}

template <>
void Family<Counter>::Render(ExpositionWriter& out) const {
  out.Family(name_, help_, type_);
  absl::MutexLock lock(&mu_);
  RenderScalars(name_, label_names_, children_, out);
}

template <>
void Family<Gauge>::Render(ExpositionWriter& out) const {
  out.Family(name_, help_, type_);
  absl::MutexLock lock(&mu_);
  RenderScalars(name_, label_names_, children_, out);
}

template <>
void Family<Histogram>::Render(ExpositionWriter& out) const {
  out.Family(name_, help_, type_);
  const std::string bucket = name_ + "_bucket";
  const std::string sum = name_ + "_sum";
  const std::string count = name_ + "_count";
  absl::MutexLock lock(&mu_);
  for (const auto& [values, child] : children_) {
    const Histogram::Snapshot s = child->Read();
    const std::vector<double>& bounds = child->bounds();
    for (size_t i = 0; i < bounds.size(); ++i) {
      out.Sample(bucket, label_names_, values, FormatValue(s.cumulative[i]), "le",
                 FormatValue(bounds[i]));
    }
    out.Sample(bucket, label_names_, values, FormatValue(s.count), "le", "+Inf");
    out.Sample(sum, label_names_, values, FormatValue(s.sum));
    out.Sample(count, label_names_, values, FormatValue(s.count));
  }
}

class Registry::CollectedFamily final : public FamilyBase {
 public:
  CollectedFamily(std::string name, std::string help, MetricType type,
                  std::vector<std::string> label_names, CollectFn collect,
                  const void* owner)
      : FamilyBase(std::move(name), std::move(help), type, std::move(label_names)),
        collect_(std::move(collect)),
        owner_(owner) {}

  // Called with the registry's mutex held, like Render().
  void Remove(const void* owner) {
    if (owner_ == owner) collect_ = nullptr;
  }

  void Render(ExpositionWriter& out) const override {
    out.Family(name_, help_, type_);
    if (!collect_) return;
    std::vector<CollectedSample> samples;
    collect_(samples);
    for (const CollectedSample& sample : samples) {
      CheckArity(sample.label_values);
      out.Sample(name_, label_names_, sample.label_values, FormatValue(sample.value));
    }
  }

 private:
  CollectFn collect_;
  const void* const owner_;
};

void Registry::CheckNew(const std::string& name,
                        const std::vector<std::string>& label_names) {
  if (!IsValidMetricName(name)) Fail(absl::StrCat("bad metric name '", name, "'"));
  for (const std::string& label : label_names) {
    if (!IsValidLabelName(label)) {
      Fail(absl::StrCat(name, ": bad label name '", label, "'"));
    }
  }
  for (const auto& family : families_) {
    if (family->name() == name) Fail(absl::StrCat(name, " was added twice"));
  }
}

template <typename T>
Family<T>& Registry::Add(std::unique_ptr<Family<T>> family) {
  absl::MutexLock lock(&mu_);
  CheckNew(family->name(), family->label_names());
  Family<T>& result = *family;
  families_.push_back(std::move(family));
  return result;
}

Family<Counter>& Registry::AddCounter(std::string name, std::string help,
                                      std::vector<std::string> label_names) {
  return Add(std::make_unique<Family<Counter>>(
      std::move(name), std::move(help), MetricType::kCounter, std::move(label_names),
      [] { return std::make_unique<Counter>(); }));
}

Family<Gauge>& Registry::AddGauge(std::string name, std::string help,
                                  std::vector<std::string> label_names) {
  return Add(std::make_unique<Family<Gauge>>(std::move(name), std::move(help),
                                             MetricType::kGauge, std::move(label_names),
                                             [] { return std::make_unique<Gauge>(); }));
}

Family<Histogram>& Registry::AddHistogram(std::string name, std::string help,
                                          std::vector<double> bounds,
                                          std::vector<std::string> label_names) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      Fail(absl::StrCat(name, ": bucket bounds must be finite and increasing"));
    }
  }
  for (const std::string& label : label_names) {
    if (label == "le") Fail(absl::StrCat(name, ": 'le' is the bucket label"));
  }
  return Add(std::make_unique<Family<Histogram>>(
      std::move(name), std::move(help), MetricType::kHistogram, std::move(label_names),
      [bounds] { return std::make_unique<Histogram>(bounds); }));
}

void Registry::AddCollected(std::string name, std::string help, MetricType type,
                            std::vector<std::string> label_names, CollectFn collect,
                            const void* owner) {
  if (type == MetricType::kHistogram) Fail(absl::StrCat(name, ": collected histogram"));
  absl::MutexLock lock(&mu_);
  CheckNew(name, label_names);
  families_.push_back(std::make_unique<CollectedFamily>(std::move(name), std::move(help),
                                                        type, std::move(label_names),
                                                        std::move(collect), owner));
}

void Registry::RemoveCollected(const void* owner) {
  absl::MutexLock lock(&mu_);
  for (auto& family : families_) {
    if (auto* collected = dynamic_cast<CollectedFamily*>(family.get())) {
      collected->Remove(owner);
    }
  }
}

std::string Registry::Render() const {
  std::string text;
  ExpositionWriter out(&text);
  absl::MutexLock lock(&mu_);
  for (const auto& family : families_) family->Render(out);
  return text;
}

}  // namespace fencegate::metrics

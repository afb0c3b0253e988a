#include "gateway/stale_refusals.h"

#include "absl/strings/ascii.h"

namespace fencegate::gateway {
namespace {

constexpr size_t kMaxClassBytes = 32;
constexpr size_t kMaxShownBytes = 200;
constexpr char kUnclassified[] = "unclassified";
constexpr char kOther[] = "other";

bool ClassChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '-';
}

}  // namespace

absl::string_view RpcName(StaleRefusals::Rpc rpc) {
  switch (rpc) {
    case StaleRefusals::kWrite:
      return "write";
    case StaleRefusals::kRead:
      return "read";
    case StaleRefusals::kFence:
      return "fence";
  }
  return "other";
}

StaleRefusals::StaleRefusals(metrics::Registry& registry, size_t capacity,
                             size_t max_classes)
    : family_(registry.AddCounter(
          "fencegate_gateway_stale_refused_total",
          "Requests refused for a stale fencing token (a superseded holder's write, "
          "fenced read or fence), by RPC and resource class: each one a corruption the "
          "fence prevented.",
          {"rpc", "class"})),
      capacity_(capacity),
      max_classes_(max_classes) {
  absl::MutexLock lock(&mu_);
  // These series exist from the start, at 0, so that rate() and increase()
  // see the first refusal.
  CountersOf("");
  for (Rpc rpc : {kWrite, kRead, kFence}) {
    other_[rpc] = &family_.Get({std::string(RpcName(rpc)), kOther});
  }
}

std::string StaleRefusals::ClassOf(absl::string_view resource) {
  const size_t slash = resource.find('/');
  if (slash == absl::string_view::npos) return kUnclassified;
  absl::string_view prefix = resource.substr(0, slash);
  if (prefix.empty() || prefix.size() > kMaxClassBytes) return kOther;
  for (char c : prefix) {
    if (!ClassChar(c)) return kOther;
  }
  return std::string(prefix);
}

StaleRefusals::Counters& StaleRefusals::CountersOf(absl::string_view resource) {
  const std::string name = ClassOf(resource);
  auto it = classes_.find(name);
  if (it != classes_.end()) return it->second;
  // "unclassified" is made first and never counts against the cap.
  if (name == kOther || (name != kUnclassified && classes_.size() > max_classes_)) {
    return other_;
  }
  Counters& counters = classes_[name];
  for (Rpc rpc : {kWrite, kRead, kFence}) {
    counters[rpc] = &family_.Get({std::string(RpcName(rpc)), name});
  }
  return counters;
}

void StaleRefusals::Record(Rpc rpc, absl::string_view resource, uint64_t token,
                           uint64_t fence, absl::Time when) {
  absl::MutexLock lock(&mu_);
  CountersOf(resource)[rpc]->Increment();
  recent_.push_front(
      Refusal{std::string(resource.substr(0, kMaxShownBytes)), token, fence, rpc, when});
  if (recent_.size() > capacity_) recent_.pop_back();
}

std::vector<StaleRefusals::Refusal> StaleRefusals::Recent() {
  absl::MutexLock lock(&mu_);
  return std::vector<Refusal>(recent_.begin(), recent_.end());
}

}  // namespace fencegate::gateway

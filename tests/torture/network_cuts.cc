#include "tests/torture/network_cuts.h"

namespace fencegate::torture {

Links Between(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  Links links;
  for (const std::string& x : a) {
    for (const std::string& y : b) {
      if (x != y) links.emplace_back(x, y);
    }
  }
  return links;
}

std::pair<std::string, std::string> NetworkCuts::Key(
    const std::pair<std::string, std::string>& link) {
  return link.first <= link.second ? link : std::make_pair(link.second, link.first);
}

absl::Status NetworkCuts::Hold(const Links& links) {
  absl::MutexLock lock(&mu_);
  Links fresh;
  for (const auto& link : links) {
    if (holds_[Key(link)]++ == 0) fresh.push_back(Key(link));
  }
  if (fresh.empty()) return absl::OkStatus();
  return network_->Cut(fresh, testing::CutDirection::kBothWays);
}

absl::Status NetworkCuts::Release(const Links& links) {
  absl::MutexLock lock(&mu_);
  Links healed;
  for (const auto& link : links) {
    auto it = holds_.find(Key(link));
    if (it == holds_.end()) continue;  // HealAll() came first
    if (--it->second == 0) {
      healed.push_back(it->first);
      holds_.erase(it);
    }
  }
  if (healed.empty()) return absl::OkStatus();
  return network_->Heal(healed, testing::CutDirection::kBothWays);
}

absl::Status NetworkCuts::HealAll() {
  absl::MutexLock lock(&mu_);
  holds_.clear();
  return network_->HealAll();
}

}  // namespace fencegate::torture

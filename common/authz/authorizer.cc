#include "common/authz/authorizer.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/base/log.h"

namespace fencegate::authz {

absl::StatusOr<std::unique_ptr<Authorizer>> Authorizer::Load(
    std::string path, metrics::Registry* registry) {
  absl::StatusOr<Policy> policy = Policy::Load(path);
  if (!policy.ok()) return policy.status();
  return std::unique_ptr<Authorizer>(
      new Authorizer(std::move(path), *std::move(policy), registry));
}

Authorizer::Authorizer(std::string path, Policy policy, metrics::Registry* registry)
    : path_(std::move(path)), policy_(std::make_shared<const Policy>(std::move(policy))) {
  if (registry == nullptr) return;
  auto& refusals = registry->AddCounter(
      "fencegate_authz_refusals_total",
      "Calls refused by the policy (--policy), by the permission they lacked.",
      {"permission"});
  for (const PermissionInfo& info : AllPermissions()) {
    refusal_counters_[static_cast<size_t>(info.permission)] = &refusals.Get({info.name});
  }
  reload_failure_counter_ =
      &registry
           ->AddCounter("fencegate_authz_policy_reload_failures_total",
                        "Policy reloads (SIGHUP) refused: the file did not load; the "
                        "policy in force stayed.")
           .Get();
}

std::shared_ptr<const Policy> Authorizer::current() const {
  absl::ReaderMutexLock lock(&mu_);
  return policy_;
}

absl::Status Authorizer::Check(absl::string_view identity, Permission permission,
                               absl::string_view resource) const {
  if (current()->Allows(identity, permission, resource)) return absl::OkStatus();
  return Refuse(identity, permission, resource);
}

absl::Status Authorizer::CheckEither(absl::string_view identity, Permission permission,
                                     Permission alternative,
                                     absl::string_view resource) const {
  std::shared_ptr<const Policy> policy = current();
  if (policy->Allows(identity, permission, resource) ||
      policy->Allows(identity, alternative, resource)) {
    return absl::OkStatus();
  }
  return Refuse(identity, permission, resource);
}

absl::Status AuthorizeEither(const Authorizer* authorizer, absl::string_view identity,
                             Permission permission, Permission alternative,
                             absl::string_view resource) {
  if (authorizer == nullptr) return absl::OkStatus();
  return authorizer->CheckEither(identity, permission, alternative, resource);
}

absl::Status Authorizer::Refuse(absl::string_view identity, Permission permission,
                                absl::string_view resource) const {
  refusals_.fetch_add(1, std::memory_order_relaxed);
  metrics::Counter* counter = refusal_counters_[static_cast<size_t>(permission)];
  if (counter != nullptr) counter->Increment();
  const std::string who = absl::CHexEscape(identity);
  const std::string what = absl::CHexEscape(resource);
  LogWarning("authz: refused identity=\"%s\" permission=%s resource=\"%s\"", who,
             NameOf(permission), what);
  return absl::PermissionDeniedError(absl::StrCat(
      "identity '", who, "' lacks permission '", NameOf(permission), "'",
      InfoOf(permission).per_resource ? absl::StrCat(" on resource '", what, "'")
                                      : std::string(),
      " (the server's policy, --policy; nothing was done): ask its operator for a "
      "rule that grants it"));
}

absl::Status Authorizer::Reload() {
  absl::StatusOr<Policy> policy = Policy::Load(path_);
  if (!policy.ok()) {
    reload_failures_.fetch_add(1, std::memory_order_relaxed);
    if (reload_failure_counter_ != nullptr) reload_failure_counter_->Increment();
    return policy.status();
  }
  auto next = std::make_shared<const Policy>(*std::move(policy));
  absl::MutexLock lock(&mu_);
  policy_.swap(next);
  return absl::OkStatus();  // the old policy goes with `next`, after the unlock
}

std::string Authorizer::Describe() const {
  const size_t rules = current()->rules().size();
  return absl::StrCat(path_, " (", rules, rules == 1 ? " rule)" : " rules)");
}

}  // namespace fencegate::authz

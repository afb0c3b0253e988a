// Authorizer: the policy in force on one server (--policy, policy.h), and
// the check every call makes against it.
//
//   absl::Status s = Authorize(authorizer, subject, Permission::kWrite, name);
//   if (!s.ok()) return s;  // PERMISSION_DENIED; nothing was done
//
// A refusal is PERMISSION_DENIED naming the identity, the permission it
// lacks and the resource; it is counted in
// fencegate_authz_refusals_total{permission} (never labelled by identity
// or resource) and written as one audit log line ("authz: refused
// identity=... permission=... resource=..."). Authorize() with a null
// Authorizer (no --policy) allows everything.
//
// Reload() re-reads the file (SIGHUP): a file that does not parse is
// refused, the policy in force stays, and the failure is counted in
// fencegate_authz_policy_reload_failures_total; a good one replaces the
// policy at once for every later check.
//
// Ownership: the servers own theirs and pass it (borrowed) to their
// services and sessions, which must not outlive it. `registry` (null:
// metrics off) must outlive it.
//
// Thread safety: thread-safe. Checks take a reader lock just long enough to
// copy the current policy's shared_ptr; Reload() parses outside the lock and
// swaps under it.
#ifndef FENCEGATE_COMMON_AUTHZ_AUTHORIZER_H_
#define FENCEGATE_COMMON_AUTHZ_AUTHORIZER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/authz/permission.h"
#include "common/authz/policy.h"
#include "common/metrics/registry.h"

namespace fencegate::authz {

class Authorizer {
 public:
  // Loads the policy file at `path`; its error (naming the file, the line
  // and what is wrong) if it does not load.
  static absl::StatusOr<std::unique_ptr<Authorizer>> Load(std::string path,
                                                          metrics::Registry* registry);
  Authorizer(const Authorizer&) = delete;
  Authorizer& operator=(const Authorizer&) = delete;

  // OK, or PERMISSION_DENIED (counted, logged) if the policy does not grant
  // `identity` `permission` on `resource` ("" for calls naming none).
  absl::Status Check(absl::string_view identity, Permission permission,
                     absl::string_view resource) const;
  // OK if the policy grants `identity` `permission` or `alternative` on
  // `resource`; else Check()'s refusal of `permission`.
  absl::Status CheckEither(absl::string_view identity, Permission permission,
                           Permission alternative, absl::string_view resource) const;
  // As Check() for every resource of `resources` (strings): the first
  // refused one fails the whole call.
  template <typename Resources>
  absl::Status CheckEach(absl::string_view identity, Permission permission,
                         const Resources& resources) const {
    std::shared_ptr<const Policy> policy = current();
    for (const auto& resource : resources) {
      if (!policy->Allows(identity, permission, resource)) {
        return Refuse(identity, permission, resource);
      }
    }
    return absl::OkStatus();
  }

  // Re-reads the file. On error the policy in force stays, the failure is
  // counted, and the error is returned.
  absl::Status Reload();

  std::shared_ptr<const Policy> current() const;
  const std::string& path() const { return path_; }
  // "<path> (<n> rules)", for the start-up line and logs.
  std::string Describe() const;
  // Refusals and failed reloads so far (also when metrics are off).
  uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }
  uint64_t reload_failures() const {
    return reload_failures_.load(std::memory_order_relaxed);
  }

 private:
  Authorizer(std::string path, Policy policy, metrics::Registry* registry);
  absl::Status Refuse(absl::string_view identity, Permission permission,
                      absl::string_view resource) const;

  const std::string path_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Policy> policy_ ABSL_GUARDED_BY(mu_);
  // Null when metrics are off.
  std::array<metrics::Counter*, kPermissionCount> refusal_counters_{};
  metrics::Counter* reload_failure_counter_ = nullptr;
  mutable std::atomic<uint64_t> refusals_{0};
  std::atomic<uint64_t> reload_failures_{0};
};

// `authorizer`->Check(...), or OK when `authorizer` is null (no policy).
inline absl::Status Authorize(const Authorizer* authorizer, absl::string_view identity,
                              Permission permission, absl::string_view resource) {
  if (authorizer == nullptr) return absl::OkStatus();
  return authorizer->Check(identity, permission, resource);
}
// OK if `identity` has `permission` or `alternative` on `resource`;
// otherwise the refusal of `permission` (counted and logged once). OK when
// `authorizer` is null.
absl::Status AuthorizeEither(const Authorizer* authorizer, absl::string_view identity,
                             Permission permission, Permission alternative,
                             absl::string_view resource);
template <typename Resources>
absl::Status AuthorizeEach(const Authorizer* authorizer, absl::string_view identity,
                           Permission permission, const Resources& resources) {
  if (authorizer == nullptr) return absl::OkStatus();
  return authorizer->CheckEach(identity, permission, resources);
}

}  // namespace fencegate::authz

#endif  // FENCEGATE_COMMON_AUTHZ_AUTHORIZER_H_

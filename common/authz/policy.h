// Policy: who may do what, as read from a policy file (--policy on both
// servers). One rule per line; blank lines and lines starting with # are
// ignored (so is everything after a # that starts a word):
//
//   allow <identity> <permission>[,<permission>...] <resource prefix>
//
//   allow CN=orders-worker-*,O=acme acquire,read,write orders/
//   allow "CN=ops team,O=acme"       describe,admin          *
//   allow CN=gateway-1,O=acme        describe                *
//
// - identity: the client certificate's subject as the lock service records
//   it (common/server/tls.h PeerSubject, RFC 2253: "CN=alice,O=acme"),
//   matched against the whole subject. `*` matches any run of characters
//   (none included); every other character matches itself. Double quotes
//   around it allow spaces ("CN=ops team"); it holds no quote itself.
// - permissions: names from permission.h (acquire, describe, read, write,
//   fence, admin), comma-separated, no spaces; `all` grants every one.
// - resource prefix: the rule covers every resource whose name starts with
//   it. `*` or `""` covers every resource; a trailing `*` is allowed and
//   means the same as without it (orders/* = orders/); a `*` elsewhere is an
//   error. Permissions whose calls name no resource (admin) need `*`.
//
// A call is allowed iff some rule matches its identity, grants its
// permission and covers its resource; nothing is allowed otherwise (there
// is no deny rule). docs/security.md, "Authorization", has the mapping of
// every RPC to its permission.
//
// Errors: Parse() answers INVALID_ARGUMENT "<origin>:<line>: <what is
// wrong>" for the first bad line.
//
// Thread safety: a Policy is an immutable value once parsed.
#ifndef FENCEGATE_COMMON_AUTHZ_POLICY_H_
#define FENCEGATE_COMMON_AUTHZ_POLICY_H_

#include <bitset>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/authz/permission.h"

namespace fencegate::authz {

struct PolicyRule {
  std::string identity;  // the pattern, `*` a wildcard
  std::bitset<kPermissionCount> permissions;
  std::string prefix;  // "" = every resource
  int line = 0;        // in the file, from 1
};

// `*` matches any run of characters, every other character itself; the
// whole of `text` must match.
bool GlobMatches(absl::string_view pattern, absl::string_view text);

class Policy {
 public:
  // Parses policy file text; `origin` (the path) starts error messages.
  static absl::StatusOr<Policy> Parse(absl::string_view text, absl::string_view origin);
  // Reads and parses the file at `path`; INVALID_ARGUMENT naming it if it
  // cannot be read.
  static absl::StatusOr<Policy> Load(const std::string& path);

  // Whether some rule grants `identity` `permission` on `resource` (pass ""
  // for calls that name no resource: only rules for every resource cover
  // it).
  bool Allows(absl::string_view identity, Permission permission,
              absl::string_view resource) const;

  const std::vector<PolicyRule>& rules() const { return rules_; }

 private:
  std::vector<PolicyRule> rules_;
};

}  // namespace fencegate::authz

#endif  // FENCEGATE_COMMON_AUTHZ_POLICY_H_

// KeyRing: the secret keys that sign and verify fencing tokens, as read from
// a key file (--signing_keys on both servers). One key per line:
//
//   # comments and blank lines are ignored
//   <key id> <secret as hex> [sign] [not_after=<RFC 3339 UTC time>]
//
//   k2026a 3f1c...(64 to 256 hex digits)... sign
//   k2025b 9be0...                          not_after=2026-12-31T00:00:00Z
//
// - key id: 1 to 64 of [A-Za-z0-9._-]; unique in the file.
// - secret: 32 to 128 bytes of randomness, in hex (`fencegate keygen` makes
//   one; so does `openssl rand -hex 32`).
// - sign: the key the lock service signs new grants with. At most one line
//   may say it; the lock service needs exactly one, gateways ignore it.
// - not_after: from this wall-clock instant on, the key neither signs nor
//   verifies (a retired key). Key expiry is administrative time, measured
//   in days, so the wall clock is the right clock here, unlike for leases.
//
// Rotation steps: docs/security.md.
//
// Thread safety: a KeyRing is an immutable value once parsed.
#ifndef FENCEGATE_COMMON_SIGNING_SIGNING_KEYS_H_
#define FENCEGATE_COMMON_SIGNING_SIGNING_KEYS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fencegate {

// The longest key id a key file may hold.
inline constexpr size_t kMaxKeyIdBytes = 64;

struct SigningKey {
  std::string id;
  std::string secret;  // raw bytes
  bool sign = false;
  absl::Time not_after = absl::InfiniteFuture();
};

class KeyRing {
 public:
  // Parses key file text. `origin` (a path) prefixes error messages, which
  // name the line and what is wrong with it; secrets are never quoted.
  static absl::StatusOr<KeyRing> Parse(absl::string_view text,
                                       absl::string_view origin);
  // Reads and parses the file at `path`.
  static absl::StatusOr<KeyRing> Load(const std::string& path);

  // The key with this id, or null.
  const SigningKey* Find(absl::string_view id) const;
  // The key marked `sign`, or null.
  const SigningKey* signing_key() const;
  const std::vector<SigningKey>& keys() const { return keys_; }
  // "k1 (sign), k2 (not after 2026-...)", for logs; no secrets.
  std::string Describe() const;

 private:
  std::vector<SigningKey> keys_;
};

// `t` as the key file writes not_after: 2027-01-31T00:00:00Z.
std::string FormatKeyTime(absl::Time t);

// A fresh key file line: `id`, 32 random bytes in hex, and " sign" if asked.
absl::StatusOr<std::string> NewKeyLine(absl::string_view id, bool sign);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SIGNING_SIGNING_KEYS_H_

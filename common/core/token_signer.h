// TokenSigner: signs fencing tokens (lock service) and checks signatures
// (gateway, and the lock service's Renew/Release) with the keys of a
// KeyRing.
//
// A signature is HMAC-SHA256 under the key `key_id` over
//   "fencegate.v1.token" 0x00
//   u8(len(key_id)) key_id
//   u64be(len(resource)) resource
//   u64be(token)
//   u8(mode)                      only for kShared (1) and kPermit (2)
// so it binds the exact resource, token, lease mode and key: a token
// cannot be raised, moved to another resource, passed off as another
// key's, or a shared lease's token as an exclusive one's (which may write).
// An exclusive token's bytes are exactly those signed before lock kinds
// existed, so its old signatures stay valid. The bytes of the three modes
// never coincide: every field before the mode has its length fixed or
// given, so a shared or permit message is an exclusive one plus a byte.
// Comparison is constant-time.
//
// Errors: Sign() fails with FAILED_PRECONDITION when the ring has no usable
// `sign` key; Verify() fails with PERMISSION_DENIED (BadSignatureError,
// common/base/errors.h) saying whether the signature is missing, made by an
// unknown or retired key, or does not match.
//
// Thread safety: thread-safe. Replace() swaps the key ring (a key file
// reloaded on SIGHUP) while other threads sign and verify; each call uses
// one ring throughout.
#ifndef FENCEGATE_COMMON_CORE_TOKEN_SIGNER_H_
#define FENCEGATE_COMMON_CORE_TOKEN_SIGNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/signing/signing_keys.h"
#include "fencegate/lease_mode.h"
#include "fencegate/token_signature.h"

namespace fencegate {

class TokenSigner {
 public:
  // `wall_clock` tells key expiry (not_after); tests pass their own.
  explicit TokenSigner(KeyRing keys,
                       std::function<absl::Time()> wall_clock = absl::Now);

  // Signs the token of a lease of `mode` on `resource`.
  absl::StatusOr<TokenSignature> Sign(absl::string_view resource, uint64_t token,
                                      LeaseMode mode) const;
  // OK if Sign() can succeed now (a `sign` key exists and has not expired),
  // so the lock service can refuse an Acquire before granting it.
  absl::Status CheckCanSign() const;
  // OK iff `signature` was made by Sign(resource, token, mode) with a key
  // of the ring that has not expired.
  absl::Status Verify(absl::string_view resource, uint64_t token, LeaseMode mode,
                      const TokenSignature& signature) const {
    return Verify(resource, token, mode, signature.key_id, signature.mac);
  }
  // The same on views (no copy on a server's request path); an empty
  // key_id and mac mean unsigned.
  absl::Status Verify(absl::string_view resource, uint64_t token, LeaseMode mode,
                      absl::string_view key_id, absl::string_view mac) const;

  void Replace(KeyRing keys);
  std::shared_ptr<const KeyRing> keys() const;

 private:
  const std::function<absl::Time()> wall_clock_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const KeyRing> keys_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_TOKEN_SIGNER_H_

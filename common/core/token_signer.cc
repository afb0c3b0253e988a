#include "common/core/token_signer.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/base/errors.h"

namespace fencegate {
namespace {

constexpr size_t kMacBytes = 32;

void AppendU64(std::string& out, uint64_t value) {  // big-endian
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

// The bytes a signature covers (see the header).
std::string Message(absl::string_view key_id, absl::string_view resource, uint64_t token,
                    LeaseMode mode) {
  std::string message("fencegate.v1.token", 18);
  message.push_back('\0');
  message.push_back(static_cast<char>(key_id.size()));  // <= kMaxKeyIdBytes
  message.append(key_id.data(), key_id.size());
  AppendU64(message, resource.size());
  message.append(resource.data(), resource.size());
  AppendU64(message, token);
  // Exclusive: nothing more, the bytes signed before lock kinds existed.
  if (mode != LeaseMode::kExclusive) message.push_back(static_cast<char>(mode));
  return message;
}

std::string Mac(const SigningKey& key, absl::string_view resource, uint64_t token,
                LeaseMode mode) {
  const std::string message = Message(key.id, resource, token, mode);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.secret.data(), static_cast<int>(key.secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac,
       &length);
  return std::string(reinterpret_cast<char*>(mac), length);
}

// A key id as a request gave it, fit for an error message: it may be any
// bytes and any length, so it is escaped and cut after the longest valid id.
std::string QuotedKeyId(absl::string_view key_id) {
  std::string quoted =
      absl::StrCat("'", absl::CHexEscape(key_id.substr(0, kMaxKeyIdBytes)), "'");
  if (key_id.size() > kMaxKeyIdBytes) {
    absl::StrAppend(&quoted, " (cut; ", key_id.size(), " bytes in all)");
  }
  return quoted;
}

}  // namespace

TokenSigner::TokenSigner(KeyRing keys, std::function<absl::Time()> wall_clock)
    : wall_clock_(std::move(wall_clock)),
      keys_(std::make_shared<const KeyRing>(std::move(keys))) {}

void TokenSigner::Replace(KeyRing keys) {
  auto ring = std::make_shared<const KeyRing>(std::move(keys));
  absl::MutexLock lock(&mu_);
  keys_ = std::move(ring);
}

std::shared_ptr<const KeyRing> TokenSigner::keys() const {
  absl::MutexLock lock(&mu_);
  return keys_;
}

namespace {

// The ring's usable signing key, or why there is none.
absl::StatusOr<const SigningKey*> UsableSigningKey(const KeyRing& ring, absl::Time now) {
  const SigningKey* key = ring.signing_key();
  if (key == nullptr) {
    return absl::FailedPreconditionError(
        "no key in the key file is marked 'sign'; the lock service cannot sign "
        "tokens (--signing_keys)");
  }
  if (now >= key->not_after) {
    return absl::FailedPreconditionError(absl::StrCat(
        "signing key '", key->id, "' expired at ", FormatKeyTime(key->not_after),
        "; mark a current key 'sign' in the key file and reload it (SIGHUP)"));
  }
  return key;
}

}  // namespace

absl::StatusOr<TokenSignature> TokenSigner::Sign(absl::string_view resource,
                                                 uint64_t token, LeaseMode mode) const {
  std::shared_ptr<const KeyRing> ring = keys();
  absl::StatusOr<const SigningKey*> key = UsableSigningKey(*ring, wall_clock_());
  if (!key.ok()) return key.status();
  return TokenSignature{(*key)->id, Mac(**key, resource, token, mode)};
}

absl::Status TokenSigner::CheckCanSign() const {
  return UsableSigningKey(*keys(), wall_clock_()).status();
}

absl::Status TokenSigner::Verify(absl::string_view resource, uint64_t token,
                                 LeaseMode mode, absl::string_view key_id,
                                 absl::string_view mac) const {
  if (key_id.empty() && mac.empty()) {
    return BadSignatureError(absl::StrCat(
        "token ", token, " for resource '", resource,
        "' carries no signature, and this server accepts only signed tokens "
        "(--signing_keys): send the signature the lock service returned with it"));
  }
  std::shared_ptr<const KeyRing> ring = keys();
  const SigningKey* key = ring->Find(key_id);
  if (key == nullptr) {
    return BadSignatureError(absl::StrCat(
        "token ", token, " is signed with key ", QuotedKeyId(key_id),
        " (signature.key_id), which this server does not accept (unknown, or "
        "removed by a key rotation): acquire the lock again for a token signed "
        "with a current key"));
  }
  if (wall_clock_() >= key->not_after) {
    return BadSignatureError(absl::StrCat(
        "token ", token, " is signed with key '", key->id, "', which expired at ",
        FormatKeyTime(key->not_after),
        ": acquire the lock again for a token signed with a current key"));
  }
  const std::string expected = Mac(*key, resource, token, mode);
  if (mac.size() != kMacBytes ||
      CRYPTO_memcmp(expected.data(), mac.data(), kMacBytes) != 0) {
    return BadSignatureError(absl::StrCat(
        "the signature does not match token ", token, " on resource '", resource,
        "' with mode ", absl::AsciiStrToUpper(LeaseModeName(mode)),
        ": it is forged, altered, or was made for another "
        "token, resource or lease mode. Use the token, signature and mode the lock "
        "service granted for this resource"));
  }
  return absl::OkStatus();
}

}  // namespace fencegate

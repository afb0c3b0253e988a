// Fuzz target: signing key files (common/signing/signing_keys.h), which both
// servers read at start and on SIGHUP. Any text is either refused with
// INVALID_ARGUMENT naming the file, or gives a key
// ring that keeps the file's rules (ids of 1-64 [A-Za-z0-9._-], unique;
// secrets of 32-128 bytes; at most one signing key), and whose signatures
// verify for their own resource and token only.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "common/core/token_signer.h"
#include "common/signing/signing_keys.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

bool ValidId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fencegate::KeyRing;
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<KeyRing> ring = KeyRing::Parse(text, "keys.txt");
  if (!ring.ok()) {
    FUZZ_CHECK(ring.status().code() == absl::StatusCode::kInvalidArgument &&
                   absl::StartsWith(ring.status().message(), "keys.txt"),
               "refused without naming the file: ", ring.status().ToString());
    return 0;
  }
  std::set<std::string> ids;
  int signing = 0;
  for (const fencegate::SigningKey& key : ring->keys()) {
    FUZZ_CHECK(ValidId(key.id), "key id '", key.id, "' breaks the rules");
    FUZZ_CHECK(ids.insert(key.id).second, "key id '", key.id, "' twice");
    FUZZ_CHECK(key.secret.size() >= 32 && key.secret.size() <= 128, "secret of ",
               key.secret.size(), " bytes");
    FUZZ_CHECK(ring->Find(key.id) == &key, "Find('", key.id, "') is another key");
    signing += key.sign ? 1 : 0;
  }
  FUZZ_CHECK(!ids.empty() && signing <= 1, ids.size(), " keys, ", signing, " signing");
  ring->Describe();
  // A fixed wall clock, so an input behaves the same on every run.
  fencegate::TokenSigner signer(*ring, [] { return absl::FromUnixSeconds(1767225600); });
  absl::StatusOr<fencegate::TokenSignature> signature =
      signer.Sign("orders", 42, fencegate::LeaseMode::kExclusive);
  FUZZ_CHECK(signature.ok() == signer.CheckCanSign().ok(), "Sign and CheckCanSign disagree");
  if (signature.ok()) {
    FUZZ_CHECK(
        signer.Verify("orders", 42, fencegate::LeaseMode::kExclusive, *signature).ok(),
        "a fresh signature fails");
    FUZZ_CHECK(signer.Verify("orders", 43, fencegate::LeaseMode::kExclusive, *signature)
                       .code() == absl::StatusCode::kPermissionDenied,
               "a signature verifies for another token");
    FUZZ_CHECK(signer.Verify("orderz", 42, fencegate::LeaseMode::kExclusive, *signature)
                       .code() == absl::StatusCode::kPermissionDenied,
               "a signature verifies for another resource");
  }
  return 0;
}

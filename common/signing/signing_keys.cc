#include "common/signing/signing_keys.h"

#include <openssl/rand.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fencegate {
namespace {

constexpr size_t kMinSecretBytes = 32;
constexpr size_t kMaxSecretBytes = 128;

bool IsIdChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
         c == '-';
}

bool IsHex(absl::string_view s) {
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<KeyRing> KeyRing::Parse(absl::string_view text,
                                       absl::string_view origin) {
  KeyRing ring;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, " line ", line_number, ": ", what));
    };
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.size() < 2) {
      return error("expected '<key id> <secret as hex> [sign] [not_after=TIME]'");
    }
    SigningKey key;
    key.id = std::string(words[0]);
    if (key.id.size() > kMaxKeyIdBytes) {
      return error(absl::StrCat("key id is ", key.id.size(), " bytes; the limit is ",
                                kMaxKeyIdBytes));
    }
    for (char c : key.id) {
      if (!IsIdChar(c)) {
        return error(absl::StrCat("key id '", key.id,
                                  "' may hold only letters, digits, '.', '_' and '-'"));
      }
    }
    if (ring.Find(key.id) != nullptr) {
      return error(absl::StrCat("key id '", key.id, "' appears twice"));
    }
    absl::string_view hex = words[1];
    if (hex.size() % 2 != 0 || !IsHex(hex)) {
      return error(absl::StrCat("the secret of key '", key.id,
                                "' is not hex (an even number of 0-9a-f digits)"));
    }
    key.secret = absl::HexStringToBytes(hex);
    if (key.secret.size() < kMinSecretBytes || key.secret.size() > kMaxSecretBytes) {
      return error(absl::StrCat("the secret of key '", key.id, "' is ",
                                key.secret.size(), " bytes; it must be ",
                                kMinSecretBytes, " to ", kMaxSecretBytes,
                                " bytes (", 2 * kMinSecretBytes, " to ",
                                2 * kMaxSecretBytes, " hex digits)"));
    }
    for (size_t i = 2; i < words.size(); ++i) {
      absl::string_view word = words[i];
      if (word == "sign") {
        if (ring.signing_key() != nullptr) {
          return error(absl::StrCat("key '", key.id, "' says 'sign', but key '",
                                    ring.signing_key()->id,
                                    "' already does; only one key signs"));
        }
        key.sign = true;
      } else if (absl::ConsumePrefix(&word, "not_after=")) {
        std::string parse_error;
        if (!absl::ParseTime(absl::RFC3339_full, word, &key.not_after, &parse_error)) {
          return error(absl::StrCat("not_after of key '", key.id,
                                    "' is not an RFC 3339 time such as "
                                    "2027-01-31T00:00:00Z: ",
                                    parse_error));
        }
      } else {
        return error(absl::StrCat("unknown word '", word, "' after key '", key.id,
                                  "' (expected 'sign' or 'not_after=TIME')"));
      }
    }
    ring.keys_.push_back(std::move(key));
  }
  if (ring.keys_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, " holds no key"));
  }
  return ring;
}

absl::StatusOr<KeyRing> KeyRing::Load(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    return absl::NotFoundError(absl::StrCat("cannot read key file ", path));
  }
  std::stringstream text;
  text << file.rdbuf();
  if (file.bad()) return absl::DataLossError(absl::StrCat("error reading ", path));
  return Parse(text.str(), path);
}

const SigningKey* KeyRing::Find(absl::string_view id) const {
  for (const SigningKey& key : keys_) {
    if (key.id == id) return &key;
  }
  return nullptr;
}

const SigningKey* KeyRing::signing_key() const {
  for (const SigningKey& key : keys_) {
    if (key.sign) return &key;
  }
  return nullptr;
}

std::string KeyRing::Describe() const {
  return absl::StrJoin(keys_, ", ", [](std::string* out, const SigningKey& key) {
    absl::StrAppend(out, key.id);
    if (key.sign) absl::StrAppend(out, " (sign)");
    if (key.not_after != absl::InfiniteFuture()) {
      absl::StrAppend(out, " (not after ", FormatKeyTime(key.not_after), ")");
    }
  });
}

std::string FormatKeyTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

absl::StatusOr<std::string> NewKeyLine(absl::string_view id, bool sign) {
  unsigned char secret[kMinSecretBytes];
  if (RAND_bytes(secret, sizeof(secret)) != 1) {
    return absl::InternalError("OpenSSL could not produce random bytes");
  }
  std::string line = absl::StrCat(
      id, " ",
      absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(secret),
                                               sizeof(secret))));
  if (sign) absl::StrAppend(&line, " sign");
  return line;
}

}  // namespace fencegate

#include "fencegate/client/fencing_token.h"

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace fencegate::client {

namespace {

// The mode prefixes of the text form, "<mode>:".
constexpr absl::string_view kExclusivePrefix = "exclusive:";
constexpr absl::string_view kSharedPrefix = "shared:";
constexpr absl::string_view kPermitPrefix = "permit:";

absl::string_view PrefixOf(LeaseMode mode) {
  switch (mode) {
    case LeaseMode::kExclusive:
      return "";
    case LeaseMode::kShared:
      return kSharedPrefix;
    case LeaseMode::kPermit:
      return kPermitPrefix;
  }
  return "";
}

}  // namespace

std::string FormatFencingToken(uint64_t token, const TokenSignature& signature,
                               LeaseMode mode) {
  if (signature.empty()) return absl::StrCat(PrefixOf(mode), token);
  return absl::StrCat(PrefixOf(mode), token, ".", signature.key_id, ".",
                      absl::WebSafeBase64Escape(signature.mac));
}

absl::StatusOr<SignedToken> ParseFencingToken(absl::string_view text,
                                              absl::string_view field) {
  const absl::string_view whole = text;
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, "='", whole, "': ", why,
                     "; expected a token such as 42, 42.<key id>.<signature> or "
                     "shared:42.<key id>.<signature> as 'fencegate acquire' prints it"));
  };
  SignedToken parsed;
  if (absl::ConsumePrefix(&text, kSharedPrefix)) {
    parsed.mode = LeaseMode::kShared;
  } else if (absl::ConsumePrefix(&text, kPermitPrefix)) {
    parsed.mode = LeaseMode::kPermit;
  } else if (!absl::ConsumePrefix(&text, kExclusivePrefix) &&
             text.substr(0, text.find('.')).find(':') != absl::string_view::npos) {
    // A mode comes before the token; a ':' after it is the key id's.
    return invalid("the mode before ':' is not exclusive, shared or permit");
  }
  const size_t first_dot = text.find('.');
  if (!absl::SimpleAtoi(text.substr(0, first_dot), &parsed.token) || parsed.token == 0) {
    return invalid("the token is not a number of 1 or more");
  }
  if (first_dot == absl::string_view::npos) return parsed;
  const size_t last_dot = text.rfind('.');
  if (last_dot == first_dot) return invalid("the signature's key id or mac is missing");
  parsed.signature.key_id = std::string(text.substr(first_dot + 1, last_dot - first_dot - 1));
  if (parsed.signature.key_id.empty()) return invalid("the key id is empty");
  if (!absl::WebSafeBase64Unescape(text.substr(last_dot + 1), &parsed.signature.mac) ||
      parsed.signature.mac.empty()) {
    return invalid("the signature is not base64url");
  }
  return parsed;
}

}  // namespace fencegate::client

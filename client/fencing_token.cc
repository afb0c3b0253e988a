#include "fencegate/client/fencing_token.h"

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fencegate::client {

std::string FormatFencingToken(uint64_t token, const TokenSignature& signature) {
  if (signature.empty()) return absl::StrCat(token);
  return absl::StrCat(token, ".", signature.key_id, ".",
                      absl::WebSafeBase64Escape(signature.mac));
}

absl::StatusOr<SignedToken> ParseFencingToken(absl::string_view text,
                                              absl::string_view field) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, "='", text, "': ", why,
        "; expected a token such as 42, or 42.<key id>.<signature> as "
        "'fencegate acquire' prints it"));
  };
  SignedToken parsed;
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

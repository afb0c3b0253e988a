// The text form of a fencing token and its signature, for the CLI, scripts
// and logs: "42" when unsigned, "42.<key id>.<mac>" when signed, the mac in
// unpadded base64url (43 characters). `fencegate acquire` prints it and the
// other commands take it back in --token.
//
// The signed form is a bearer credential: whoever has it can write with the
// token until a newer holder fences it out. Keep it out of shared logs.
//
// Thread safety: pure functions.
#ifndef FENCEGATE_CLIENT_FENCING_TOKEN_H_
#define FENCEGATE_CLIENT_FENCING_TOKEN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fencegate/token_signature.h"

namespace fencegate::client {

struct SignedToken {
  uint64_t token = 0;
  TokenSignature signature;  // empty: unsigned
};

std::string FormatFencingToken(uint64_t token, const TokenSignature& signature);
// INVALID_ARGUMENT naming `field` if `text` is neither form.
absl::StatusOr<SignedToken> ParseFencingToken(absl::string_view text,
                                              absl::string_view field = "--token");

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_FENCING_TOKEN_H_

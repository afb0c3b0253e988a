// The text form of a fencing token, its signature and its lease's mode,
// for the CLI, scripts and logs: "42" when unsigned, "42.<key id>.<mac>"
// when signed, the mac in unpadded base64url (43 characters); a shared
// lease's or a permit's token starts with its mode, "shared:42" or
// "permit:42.<key id>.<mac>". A text without a mode is an exclusive
// lease's token (what every text meant before lock kinds), and
// "exclusive:42" is read the same. `fencegate acquire` prints it and the
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
#include "fencegate/client/lease_mode.h"
#include "fencegate/token_signature.h"

namespace fencegate::client {

struct SignedToken {
  uint64_t token = 0;
  TokenSignature signature;  // empty: unsigned
  LeaseMode mode = LeaseMode::kExclusive;
};

// An exclusive token is written without a mode, so older readers read it.
std::string FormatFencingToken(uint64_t token, const TokenSignature& signature,
                               LeaseMode mode = LeaseMode::kExclusive);
// INVALID_ARGUMENT naming `field` if `text` is neither form.
absl::StatusOr<SignedToken> ParseFencingToken(absl::string_view text,
                                              absl::string_view field = "--token");

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_FENCING_TOKEN_H_

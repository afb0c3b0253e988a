// TokenMode: the mode of the lease a fencing token belongs to, as the
// servers' shared code (the token signer, the gateway) knows it. The same
// values as lockservice::LeaseMode (lockservice/lease_mode.h) and the wire's
// fencegate.v1.LeaseMode (token.proto), which the lock service converts
// from; common/ and the gateway do not depend on the lock service.
//
//   kExclusive  the token may write, fence and read at the gateway; its
//               signature covers exactly the bytes it did before lock
//               kinds, so old signatures stay valid;
//   kShared     the token may only read (a fenced read that does not raise
//               the fence); its signature also covers the mode;
//   kPermit     the gateway refuses the token; signed with the mode too.
//
// Thread safety: values and pure functions.
#ifndef FENCEGATE_COMMON_TOKEN_MODE_H_
#define FENCEGATE_COMMON_TOKEN_MODE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace fencegate {

// Signed and sent: never renumber.
enum class TokenMode : uint8_t { kExclusive = 0, kShared = 1, kPermit = 2 };

// The mode of a wire value (fencegate.v1.LeaseMode, an open enum: any
// int32 arrives), or nullopt for a value this server does not know.
inline std::optional<TokenMode> TokenModeFromWire(int value) {
  switch (value) {
    case 0:
      return TokenMode::kExclusive;
    case 1:
      return TokenMode::kShared;
    case 2:
      return TokenMode::kPermit;
    default:
      return std::nullopt;
  }
}

// "EXCLUSIVE", "SHARED", "PERMIT": as the wire names them, for messages.
inline absl::string_view TokenModeName(TokenMode mode) {
  switch (mode) {
    case TokenMode::kExclusive:
      return "EXCLUSIVE";
    case TokenMode::kShared:
      return "SHARED";
    case TokenMode::kPermit:
      return "PERMIT";
  }
  return "UNKNOWN";
}

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_TOKEN_MODE_H_

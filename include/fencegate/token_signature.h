// TokenSignature: the signature a lock service that signs tokens hands out
// with each grant and renewal, and that a gateway checking signatures wants
// with every fenced call (docs/security.md). A plain value: the client
// library carries it from the lock service to the gateway, the servers make
// and check it (common/core/token_signer.h, which is not part of the client).
//
// Thread safety: a value type.
#ifndef FENCEGATE_TOKEN_SIGNATURE_H_
#define FENCEGATE_TOKEN_SIGNATURE_H_

#include <string>

namespace fencegate {

struct TokenSignature {
  std::string key_id;
  std::string mac;  // 32 raw bytes; empty: unsigned

  bool empty() const { return key_id.empty() && mac.empty(); }
};

}  // namespace fencegate

#endif  // FENCEGATE_TOKEN_SIGNATURE_H_

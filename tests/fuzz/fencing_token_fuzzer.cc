// Fuzz target: the text form of fencing tokens (client/fencing_token.h),
// which the CLI reads from its users. Any text either parses to a token of
// 1 or more whose formatted form parses back to the same token, signature
// and mode, or is refused with INVALID_ARGUMENT naming the field.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "fencegate/client/fencing_token.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fencegate::client::ParseFencingToken;
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<fencegate::client::SignedToken> parsed = ParseFencingToken(text, "--token");
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument &&
                   absl::StrContains(parsed.status().message(), "--token"),
               "refused without naming the field: ", parsed.status().ToString());
    return 0;
  }
  FUZZ_CHECK(parsed->token >= 1, "parsed token 0 from '", text, "'");
  const std::string formatted = fencegate::client::FormatFencingToken(
      parsed->token, parsed->signature, parsed->mode);
  absl::StatusOr<fencegate::client::SignedToken> again = ParseFencingToken(formatted);
  FUZZ_CHECK(
      again.ok() && again->token == parsed->token &&
          again->signature.key_id == parsed->signature.key_id &&
          again->signature.mac == parsed->signature.mac && again->mode == parsed->mode,
      "'", text, "' formats as '", formatted, "', which does not parse back the same");
  return 0;
}

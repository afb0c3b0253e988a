// Input checks shared by both servers. Each returns OK or INVALID_ARGUMENT
// whose message names the field, the limit and what was received, and whose
// ErrorInfo (common/base/errors.h) carries the field name.
//
// Thread safety: pure functions; safe from any thread.
#ifndef FENCEGATE_COMMON_CORE_VALIDATION_H_
#define FENCEGATE_COMMON_CORE_VALIDATION_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace google::protobuf {
class Message;
}

namespace fencegate {

// A resource, holder or key name: 1..max_bytes bytes of valid UTF-8 with no
// ASCII control characters (so names print safely in logs and the CLI).
absl::Status ValidateName(absl::string_view field, absl::string_view value,
                          size_t max_bytes);

// Like ValidateName, but empty is allowed (optional fields).
absl::Status ValidateOptionalName(absl::string_view field,
                                  absl::string_view value, size_t max_bytes);

// A duration given in milliseconds on the wire (field names end in _ms):
// within [min, max]. The message quotes all three in ms; its ErrorInfo
// carries max (in ms) as max_value.
absl::Status ValidateDuration(absl::string_view field, absl::Duration value,
                              absl::Duration min, absl::Duration max);

// A fencing token: tokens start at 1, so 0 is never valid.
absl::Status ValidateToken(absl::string_view field, uint64_t token);

// Refuses a request carrying fields this server does not know: a newer
// client's field (say, a compare-and-set condition) must not be dropped
// silently. Checks nested messages too.
absl::Status RejectUnknownFields(const google::protobuf::Message& message);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_CORE_VALIDATION_H_

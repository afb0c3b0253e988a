#include "gateway/request_validation.h"

#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/base/errors.h"
#include "common/core/validation.h"
#include "fencegate/lease_mode.h"

namespace fencegate::gateway {
namespace {

// "mutation.key" for Write, "mutations[2].key" for MultiWrite.
std::string FieldOf(const WriteArgs& args, size_t i, absl::string_view member) {
  std::string field = args.multi ? absl::StrCat("mutations[", i, "]") : "mutation";
  if (!member.empty()) absl::StrAppend(&field, ".", member);
  return field;
}

absl::Status ValidateMutation(const WriteArgs& args, size_t i,
                              const GatewayLimits& limits) {
  const Mutation& m = args.mutations[i];
  if (m.kind == Mutation::Kind::kUnset) {
    std::string field = FieldOf(args, i, "");
    return InvalidFieldError(
        field, absl::StrCat(field, " has neither a value nor delete=true; set "
                                   "value to put the key, or delete=true to "
                                   "delete it"));
  }
  // The field name is only built when there is an error to report.
  if (!ValidateName("key", m.key, limits.max_key_bytes).ok()) {
    return ValidateName(FieldOf(args, i, "key"), m.key, limits.max_key_bytes);
  }
  if (m.kind == Mutation::Kind::kPut && m.value.size() > limits.max_value_bytes) {
    std::string field = FieldOf(args, i, "value");
    return InvalidFieldError(
        field, absl::StrCat(field, " is ", m.value.size(),
                            " bytes; the limit is ", limits.max_value_bytes,
                            " bytes (--max_value_bytes); store a smaller value"));
  }
  return absl::OkStatus();
}

// A mode value this server does not know.
absl::Status UnknownModeError(int mode) {
  return InvalidFieldError(
      "mode", absl::StrCat("mode is ", mode,
                           ", which this gateway does not know; send the mode of the "
                           "lease the token belongs to: 0 (EXCLUSIVE), 1 (SHARED) or "
                           "2 (PERMIT)"));
}

absl::Status PermitError() {
  return InvalidFieldError(
      "mode",
      "mode is PERMIT: the gateway refuses a permit's token, since the N "
      "holders of a semaphore share no order to fence by; write with the "
      "token of an EXCLUSIVE lease, read with a SHARED or EXCLUSIVE one's");
}

// Write, MultiWrite, Fence: only an exclusive lease's token changes a
// resource.
absl::Status ValidateWriterMode(int mode) {
  const std::optional<LeaseMode> known = LeaseModeFromNumber(mode);
  if (!known.has_value()) return UnknownModeError(mode);
  switch (*known) {
    case LeaseMode::kExclusive:
      return absl::OkStatus();
    case LeaseMode::kShared:
      return InvalidFieldError(
          "mode",
          "mode is SHARED: a shared lease's token cannot write; Write, "
          "MultiWrite and Fence need the token of an EXCLUSIVE lease. Read "
          "with it (a fenced Read), or acquire the lock in mode EXCLUSIVE "
          "to write");
    case LeaseMode::kPermit:
      return PermitError();
  }
  return UnknownModeError(mode);
}

}  // namespace

absl::Status ValidateResource(absl::string_view resource,
                              const GatewayLimits& limits) {
  return ValidateName("resource", resource, limits.max_resource_bytes);
}

absl::Status ValidateFencingToken(uint64_t token) {
  absl::Status status = ValidateToken("token", token);
  if (status.ok() && token > kMaxToken) {
    return InvalidFieldError(
        "token", absl::StrCat("token is ", token, "; the gateway accepts tokens "
                              "up to ", kMaxToken,
                              "; pass the token of a lease from the lock service"));
  }
  return status;
}

absl::Status ValidateWrite(const WriteArgs& args, const GatewayLimits& limits) {
  absl::Status status = ValidateResource(args.resource, limits);
  if (status.ok()) status = ValidateFencingToken(args.token);
  if (status.ok()) status = ValidateWriterMode(args.mode);
  if (!status.ok()) return status;
  const size_t n = args.mutations.size();
  if (n == 0) {
    return InvalidFieldError(
        "mutations", absl::StrCat("mutations is empty; send 1 to ",
                                  limits.max_mutations, " mutations"));
  }
  if (n > limits.max_mutations) {
    return InvalidFieldError(
        "mutations",
        absl::StrCat("mutations has ", n, " entries; the limit is ",
                     limits.max_mutations,
                     " per MultiWrite (--max_mutations); send fewer"));
  }
  size_t bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    status = ValidateMutation(args, i, limits);
    if (!status.ok()) return status;
    bytes += args.mutations[i].key.size() + args.mutations[i].value.size();
  }
  if (bytes > limits.max_request_bytes) {
    return InvalidFieldError(
        "mutations",
        absl::StrCat("the mutations carry ", bytes, " bytes of keys and values; "
                     "the limit is ", limits.max_request_bytes,
                     " bytes per MultiWrite (--max_request_bytes); send less"));
  }
  if (n > 1) {
    absl::flat_hash_map<absl::string_view, size_t> first;
    first.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      auto [it, inserted] = first.emplace(args.mutations[i].key, i);
      if (inserted) continue;
      std::string field = FieldOf(args, i, "key");
      return InvalidFieldError(
          field, absl::StrCat(field, " '", args.mutations[i].key, "' repeats ",
                              FieldOf(args, it->second, "key"),
                              "; a key may appear once per MultiWrite; merge "
                              "the two changes into one"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRead(const ReadArgs& args, const GatewayLimits& limits) {
  absl::Status status = ValidateResource(args.resource, limits);
  if (status.ok()) status = ValidateName("key", args.key, limits.max_key_bytes);
  if (status.ok() && args.token != 0) status = ValidateFencingToken(args.token);
  if (!status.ok() || args.mode == 0) return status;
  const std::optional<LeaseMode> known = LeaseModeFromNumber(args.mode);
  if (!known.has_value()) return UnknownModeError(args.mode);
  if (args.token == 0) {
    return InvalidFieldError(
        "mode", absl::StrCat("mode is ", absl::AsciiStrToUpper(LeaseModeName(*known)),
                             " but token is 0 (a plain read): a mode goes with a "
                             "token; send the lease's token for a fenced read, or "
                             "leave mode unset for a plain one"));
  }
  if (*known == LeaseMode::kPermit) return PermitError();
  return absl::OkStatus();
}

absl::Status ValidateFence(const FenceArgs& args, const GatewayLimits& limits) {
  absl::Status status = ValidateResource(args.resource, limits);
  if (status.ok()) status = ValidateFencingToken(args.token);
  if (status.ok()) status = ValidateWriterMode(args.mode);
  return status;
}

absl::Status ValidateList(const ListArgs& args, const GatewayLimits& limits) {
  absl::Status status = ValidateResource(args.resource, limits);
  if (!status.ok()) return status;
  if (args.page_size > limits.max_page_size) {
    return InvalidFieldError(
        "page_size", absl::StrCat("page_size is ", args.page_size,
                                  "; the limit is ", limits.max_page_size,
                                  " (--max_page_size); 0 asks for the default of ",
                                  limits.default_page_size));
  }
  // A page token is the last key of the previous page.
  if (!ValidateOptionalName("page_token", args.page_token, limits.max_key_bytes).ok()) {
    return InvalidFieldError(
        "page_token", "page_token is not one this server issued; pass back the "
                      "previous ListResponse's next_page_token unchanged, or "
                      "leave it empty for the first page");
  }
  return absl::OkStatus();
}

}  // namespace fencegate::gateway

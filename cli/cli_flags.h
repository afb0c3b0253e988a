// The fencegate CLI's flags. Every subcommand shares this one set of absl
// flags; each command lists the ones that apply to it (commands.h) and the
// parser (flag_parser.h) refuses the rest. Defaults are documented here and
// shown by --help.
#ifndef FENCEGATE_EXAMPLES_CLI_CLI_FLAGS_H_
#define FENCEGATE_EXAMPLES_CLI_CLI_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/time/time.h"

// Where and how to connect.
ABSL_DECLARE_FLAG(std::string, lockservice);
ABSL_DECLARE_FLAG(std::string, gateway);
ABSL_DECLARE_FLAG(bool, json);
ABSL_DECLARE_FLAG(absl::Duration, timeout);
ABSL_DECLARE_FLAG(std::string, tls_ca);
ABSL_DECLARE_FLAG(std::string, tls_cert);
ABSL_DECLARE_FLAG(std::string, tls_key);
// What to act on.
ABSL_DECLARE_FLAG(std::string, resource);
ABSL_DECLARE_FLAG(std::string, token);
ABSL_DECLARE_FLAG(std::string, key);
// Locks.
ABSL_DECLARE_FLAG(std::string, holder);
ABSL_DECLARE_FLAG(absl::Duration, ttl);
ABSL_DECLARE_FLAG(absl::Duration, wait);
ABSL_DECLARE_FLAG(std::string, request_id);
ABSL_DECLARE_FLAG(bool, shared);
ABSL_DECLARE_FLAG(uint32_t, permits);
ABSL_DECLARE_FLAG(std::vector<std::string>, resources);
// Storage.
ABSL_DECLARE_FLAG(std::string, value);
ABSL_DECLARE_FLAG(std::string, value_file);
ABSL_DECLARE_FLAG(bool, delete);
ABSL_DECLARE_FLAG(uint64_t, expected_version);
ABSL_DECLARE_FLAG(uint32_t, page_size);
ABSL_DECLARE_FLAG(std::string, page_token);
// Keys.
ABSL_DECLARE_FLAG(std::string, key_id);
ABSL_DECLARE_FLAG(bool, sign);
// run.
ABSL_DECLARE_FLAG(absl::Duration, kill_after);
ABSL_DECLARE_FLAG(std::string, elect);
// Elections.
ABSL_DECLARE_FLAG(std::string, election);
ABSL_DECLARE_FLAG(uint32_t, count);

namespace fencegate::cli {

// Flags a command line may leave out and take from the environment
// instead: where to connect, and how. A flag given wins over its variable,
// which wins over the flag's default; an empty variable counts as unset.
// `fencegate run` sets them for its command (run_command.cc), so that a
// `fencegate` inside it connects as `fencegate run` did.
struct FlagFromEnvironment {
  const char* flag;
  const char* variable;
};
inline constexpr FlagFromEnvironment kFlagsFromEnvironment[] = {
    {"lockservice", "FENCEGATE_LOCKSERVICE"}, {"gateway", "FENCEGATE_GATEWAY"},
    {"tls_ca", "FENCEGATE_TLS_CA"},           {"tls_cert", "FENCEGATE_TLS_CERT"},
    {"tls_key", "FENCEGATE_TLS_KEY"},
};

// Sets each flag of kFlagsFromEnvironment that is not in `given` from its
// variable, if that is set and not empty. INVALID_ARGUMENT naming the
// variable if its value is not one the flag takes.
absl::Status ApplyFlagsFromEnvironment(const absl::flat_hash_set<std::string>& given);

}  // namespace fencegate::cli

#endif  // FENCEGATE_EXAMPLES_CLI_CLI_FLAGS_H_

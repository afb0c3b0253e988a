// Parses a subcommand's flags into the CLI's absl flags (cli_flags.h),
// accepting only those that apply to the subcommand, so that a mistyped or
// misplaced flag is a usage error (exit 4) with a message, never ignored.
//
// Forms: --name=value, --name value, and for booleans --name / --noname.
// One or two leading dashes. No positional arguments.
#ifndef FENCEGATE_EXAMPLES_CLI_FLAG_PARSER_H_
#define FENCEGATE_EXAMPLES_CLI_FLAG_PARSER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"

namespace fencegate::cli {

// Sets the flags in `args`, each of which must be named in `allowed`.
// Returns the names given; INVALID_ARGUMENT naming the culprit otherwise.
absl::StatusOr<absl::flat_hash_set<std::string>> ParseFlags(
    const std::vector<std::string>& args, const std::vector<std::string>& allowed);

// True if `args` asks for help (-h, --help, -help, --helpfull).
bool AsksForHelp(const std::vector<std::string>& args);

}  // namespace fencegate::cli

#endif  // FENCEGATE_EXAMPLES_CLI_FLAG_PARSER_H_

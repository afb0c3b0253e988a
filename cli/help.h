// Help text of the fencegate CLI: `fencegate help` and `fencegate help CMD`
// (same as `fencegate CMD --help`). Flag descriptions and defaults come
// from the flags themselves (cli_flags.cc).
#ifndef FENCEGATE_EXAMPLES_CLI_HELP_H_
#define FENCEGATE_EXAMPLES_CLI_HELP_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"

namespace fencegate::cli {

// Flags every command takes, besides its own; but --json, which a
// command that runs a command (run: its stdout is the command's) does not.
inline constexpr const char* kCommonFlags[] = {"json", "timeout", "tls_ca", "tls_cert",
                                               "tls_key"};

// kCommonFlags as `command` takes them.
std::vector<std::string> CommonFlagsOf(const Command& command);

void PrintGeneralHelp(std::ostream& out);
void PrintCommandHelp(const Command& command, std::ostream& out);

}  // namespace fencegate::cli

#endif  // FENCEGATE_EXAMPLES_CLI_HELP_H_

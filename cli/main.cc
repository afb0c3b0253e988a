// fencegate: the command-line client. `fencegate help` lists the commands;
// exit_codes.h is the contract for scripts.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/cli_flags.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/flag_parser.h"
#include "cli/help.h"
#include "cli/output.h"
#include "common/build_info/build_info.h"
#include "fencegate/client/fencing_token.h"

namespace fencegate::cli {
namespace {

std::string CommandNames() {
  std::vector<std::string> names;
  for (const Command* c : AllCommands()) names.push_back(c->name);
  return absl::StrJoin(names, ", ");
}

// Checks what the parser cannot: required flags, and tokens above 0.
absl::Status CheckFlags(const Command& command, const CommandContext& ctx) {
  for (const std::string& name : command.required) {
    if (!ctx.Given(name)) {
      return UsageError(absl::StrCat("missing --", name, "; usage: ", command.usage));
    }
  }
  if (ctx.Given("token")) {
    absl::StatusOr<client::SignedToken> token =
        client::ParseFencingToken(absl::GetFlag(FLAGS_token));
    if (!token.ok()) return UsageError(token.status().message());
  }
  if (absl::GetFlag(FLAGS_timeout) <= absl::ZeroDuration()) {
    return UsageError("--timeout must be above 0");
  }
  return absl::OkStatus();
}

int Main(const std::vector<std::string>& args) {
  if (args.empty()) {
    PrintGeneralHelp(std::cerr);
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--version" || first == "version") {
    std::cout << VersionLine() << "\n";
    return kExitOk;
  }
  if (first == "help" || first == "--help" || first == "-h") {
    if (args.size() == 1) {
      PrintGeneralHelp(std::cout);
      return kExitOk;
    }
    if (const Command* command = FindCommand(args[1])) {
      PrintCommandHelp(*command, std::cout);
      return kExitOk;
    }
    std::cerr << "fencegate help: no command '" << args[1]
              << "'; commands: " << CommandNames() << "\n";
    return kExitUsage;
  }
  const Command* command = FindCommand(first);
  if (command == nullptr) {
    std::cerr << "fencegate: unknown command '" << first
              << "'; commands: " << CommandNames() << ". See 'fencegate help'.\n";
    return kExitUsage;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  // `run`'s command: everything after the first `--`, flags or not.
  std::vector<std::string> command_args;
  bool has_separator = false;
  if (command->takes_command) {
    auto separator = std::find(rest.begin(), rest.end(), "--");
    if (separator != rest.end()) {
      has_separator = true;
      command_args.assign(separator + 1, rest.end());
      rest.erase(separator, rest.end());
    }
  }
  if (AsksForHelp(rest)) {
    PrintCommandHelp(*command, std::cout);
    return kExitOk;
  }

  std::vector<std::string> allowed = command->flags;
  const std::vector<std::string> common = CommonFlagsOf(*command);
  allowed.insert(allowed.end(), common.begin(), common.end());
  absl::StatusOr<absl::flat_hash_set<std::string>> given = ParseFlags(rest, allowed);
  // Errors print as JSON only once --json is known to be set.
  Output out(given.ok() && absl::GetFlag(FLAGS_json));
  if (!given.ok()) {
    out.PrintFailure(command->name, UsageError(given.status().message()));
    return kExitUsage;
  }
  CommandContext ctx;
  ctx.out = &out;
  ctx.given = *std::move(given);
  ctx.command_args = std::move(command_args);
  if (command->takes_command && ctx.command_args.empty()) {
    out.PrintFailure(command->name, UsageError(absl::StrCat(
                                        has_separator ? "missing the command after `--`"
                                                      : "missing `-- COMMAND [ARGS...]`",
                                        "; usage: ", command->usage)));
    return kExitUsage;
  }
  if (absl::Status from_env = ApplyFlagsFromEnvironment(ctx.given); !from_env.ok()) {
    out.PrintFailure(command->name, UsageError(from_env.message()));
    return kExitUsage;
  }
  // The whole call, retries included, as etcdctl's --command-timeout.
  ctx.client_options.call_timeout = absl::GetFlag(FLAGS_timeout);
  ctx.client_options.rpc_timeout = absl::GetFlag(FLAGS_timeout);
  ctx.client_options.tls.ca = absl::GetFlag(FLAGS_tls_ca);
  ctx.client_options.tls.cert = absl::GetFlag(FLAGS_tls_cert);
  ctx.client_options.tls.key = absl::GetFlag(FLAGS_tls_key);

  absl::Status status = CheckFlags(*command, ctx);
  if (status.ok()) status = command->run(ctx);
  if (!status.ok()) {
    out.PrintFailure(command->name, status);
    return ctx.exit_code.value_or(ExitCodeFor(status));
  }
  out.PrintSuccess();
  return ctx.exit_code.value_or(kExitOk);
}

}  // namespace
}  // namespace fencegate::cli

int main(int argc, char** argv) {
  fencegate::InitBuildInfo("fencegate");
  return fencegate::cli::Main(std::vector<std::string>(argv + 1, argv + argc));
}

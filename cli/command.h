// A subcommand of the fencegate CLI: its name, help, the flags that apply to
// it, and the function that runs it. lock_commands.cc and
// gateway_commands.cc define them; main.cc dispatches.
//
// A command reads its flags with absl::GetFlag, fills ctx.out with its
// answer, and returns OK or the status that ended it; main.cc prints that
// and turns it into the exit code (exit_codes.h).
#ifndef FENCEGATE_EXAMPLES_CLI_COMMAND_H_
#define FENCEGATE_EXAMPLES_CLI_COMMAND_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cli/output.h"
#include "fencegate/client/client_options.h"
#include "fencegate/client/fencing_token.h"
#include "fencegate/client/lock_client.h"

namespace fencegate::cli {

struct CommandContext {
  Output* out = nullptr;
  // The flags given on the command line (names without "--").
  absl::flat_hash_set<std::string> given;
  client::ClientOptions client_options;
  // With Command::takes_command: what follows `--` (not empty).
  std::vector<std::string> command_args;
  // Set by a command that chooses its exit code itself (`run` passes its
  // command's through); unset: the code of the status it returned.
  std::optional<int> exit_code;

  bool Given(absl::string_view flag) const { return given.contains(flag); }
};

struct Command {
  const char* name;
  const char* summary;                // one line, for `fencegate help`
  const char* usage;                  // the synopsis
  const char* description;            // what it does, its output, its exit codes
  std::vector<std::string> flags;     // those that apply, besides --json, --timeout
  std::vector<std::string> required;  // of `flags`
  absl::Status (*run)(CommandContext& ctx);
  // Takes a command to run after `--` (ctx.command_args): `run`.
  bool takes_command = false;
};

// The lock service's commands: acquire, renew, release, describe, keygen.
const std::vector<Command>& LockCommands();
// The gateway's commands: write, read, fence, list.
const std::vector<Command>& GatewayCommands();

// status: a server's key figures (status_command.cc).
const std::vector<Command>& StatusCommands();
// sql-install, sql-keys: the SQL fencing API (sql_commands.cc).
const std::vector<Command>& SqlCommands();
// run: holds a lock while a command runs (run_command.cc).
const std::vector<Command>& RunCommands();
// leader, observe, proclaim, resign: elections (election_commands.cc).
const std::vector<Command>& ElectionCommands();

// Every command, in help order.
std::vector<const Command*> AllCommands();
// nullptr if there is no such command.
const Command* FindCommand(absl::string_view name);

// The --holder a lock command sends when none is given: $USER@hostname.
std::string DefaultHolder();

// The --token flag, already checked by main.cc (0 when not given).
client::SignedToken TokenFromFlags();

// An UNAVAILABLE or DEADLINE_EXCEEDED status reworded to name the server
// and how to point the CLI elsewhere; other statuses are returned as is.
// `tls` says whether the CLI connected with TLS, for the hint.
absl::Status NameServer(absl::Status status, absl::string_view server,
                        absl::string_view address, absl::string_view flag, bool tls);

// A client of the lock service at --lockservice; a usage error (exit 4)
// when it cannot be made (TLS files).
absl::StatusOr<std::unique_ptr<client::LockClient>> ConnectLock(
    const CommandContext& ctx);
// NameServer for the lock service at --lockservice.
absl::Status FromLockService(const CommandContext& ctx, absl::Status status);

}  // namespace fencegate::cli

#endif  // FENCEGATE_EXAMPLES_CLI_COMMAND_H_

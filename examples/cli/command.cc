#include "examples/cli/command.h"

#include "absl/strings/str_cat.h"

namespace fencegate::cli {

std::vector<const Command*> AllCommands() {
  std::vector<const Command*> all;
  for (const Command& c : LockCommands()) all.push_back(&c);
  for (const Command& c : GatewayCommands()) all.push_back(&c);
  return all;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command* c : AllCommands()) {
    if (name == c->name) return c;
  }
  return nullptr;
}

absl::Status NameServer(absl::Status status, absl::string_view server,
                        absl::string_view address, absl::string_view flag) {
  if (status.code() != absl::StatusCode::kUnavailable &&
      status.code() != absl::StatusCode::kDeadlineExceeded) {
    return status;
  }
  return absl::Status(
      status.code(),
      absl::StrCat("no answer from ", server, " at ", address, " (", status.message(),
                   "). Is it running there? Point the CLI at it with ", flag,
                   "=HOST:PORT, or retry if it is restarting"));
}

}  // namespace fencegate::cli

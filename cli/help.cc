#include "cli/help.h"

#include <algorithm>
#include <string>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/exit_codes.h"

namespace fencegate::cli {
namespace {

void PrintFlag(const std::string& name, bool required, std::ostream& out) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr) return;
  // Defaults that mean "not given" say nothing; the help text explains.
  const std::string def = flag->DefaultValue();
  std::string left = absl::StrCat("  --", name);
  if (required) {
    absl::StrAppend(&left, "  (required)");
  } else if (!def.empty() && def != "0" && def != "false") {
    absl::StrAppend(&left, "=", def);
  }
  out << left << "\n      " << flag->Help() << "\n";
}

}  // namespace

std::vector<std::string> CommonFlagsOf(const Command& command) {
  std::vector<std::string> flags;
  for (const char* name : kCommonFlags) {
    if (command.takes_command && std::string(name) == "json") continue;
    flags.push_back(name);
  }
  return flags;
}

void PrintGeneralHelp(std::ostream& out) {
  out << "fencegate: leases with fencing tokens, and fenced storage, from the shell.\n"
         "\n"
         "Usage: fencegate COMMAND [--flag=value ...]\n"
         "       fencegate help COMMAND      (or: fencegate COMMAND --help)\n"
         "       fencegate --version         (or: fencegate version)\n"
         "\n"
         "Commands:\n";
  for (const Command* c : AllCommands()) {
    out << absl::StrFormat("  %-10s %s\n", c->name, c->summary);
  }
  out << "\n"
         "Lock commands talk to --lockservice (default 127.0.0.1:7070), storage\n"
         "commands to --gateway (default 127.0.0.1:7071). Every command takes\n"
         "--json (one JSON object on stdout; not run), --timeout, and --tls_ca (with\n"
         "--tls_cert/--tls_key for mutual TLS) for servers that use TLS.\n"
         "FENCEGATE_LOCKSERVICE, FENCEGATE_GATEWAY, FENCEGATE_TLS_CA,\n"
         "FENCEGATE_TLS_CERT and FENCEGATE_TLS_KEY stand for those flags when\n"
         "they are not given (run sets them for its command).\n"
         "\n"
         "Example:\n"
         "  fencegate acquire --resource=orders --ttl=30s      # token 7\n"
         "  fencegate write --resource=orders --token=7 --key=count --value=1\n"
         "  fencegate release --resource=orders --token=7\n"
         "  fencegate run --resource=orders -- sh -c \\\n"
         "    'fencegate write --resource=orders --token=$FENCEGATE_TOKEN ...'\n"
         "\n"
      << ExitCodeHelp();
}

void PrintCommandHelp(const Command& command, std::ostream& out) {
  out << "Usage: " << command.usage << "\n\n" << command.description << "\n\nFlags:\n";
  for (const std::string& name : command.flags) {
    const bool required = std::find(command.required.begin(), command.required.end(),
                                    name) != command.required.end();
    PrintFlag(name, required, out);
  }
  for (const std::string& name : CommonFlagsOf(command)) PrintFlag(name, false, out);
  out << "\n" << ExitCodeHelp();
}

}  // namespace fencegate::cli

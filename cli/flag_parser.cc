#include "cli/flag_parser.h"

#include <algorithm>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace fencegate::cli {
namespace {

bool Allowed(const std::vector<std::string>& allowed, absl::string_view name) {
  return std::find(allowed.begin(), allowed.end(), name) != allowed.end();
}

std::string AllowedList(const std::vector<std::string>& allowed) {
  return absl::StrJoin(allowed, ", ", [](std::string* out, const std::string& name) {
    absl::StrAppend(out, "--", name);
  });
}

}  // namespace

bool AsksForHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "-h" || arg == "--help" || arg == "-help" || arg == "--helpfull") {
      return true;
    }
  }
  return false;
}

absl::StatusOr<absl::flat_hash_set<std::string>> ParseFlags(
    const std::vector<std::string>& args, const std::vector<std::string>& allowed) {
  absl::flat_hash_set<std::string> given;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (!absl::ConsumePrefix(&arg, "-") || arg.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected argument '", args[i], "': this command takes only flags (",
          AllowedList(allowed), "), e.g. --resource=NAME"));
    }
    absl::ConsumePrefix(&arg, "-");
    std::string name(arg.substr(0, arg.find('=')));
    const bool has_value = arg.find('=') != absl::string_view::npos;
    std::string value = has_value ? std::string(arg.substr(arg.find('=') + 1)) : "";

    // --noname for booleans.
    if (!Allowed(allowed, name) && absl::StartsWith(name, "no") && !has_value &&
        Allowed(allowed, name.substr(2))) {
      absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name.substr(2));
      if (flag != nullptr && flag->IsOfType<bool>()) {
        name = name.substr(2);
        value = "false";
      }
    }
    if (!Allowed(allowed, name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag --", name, " for this command; it takes ", AllowedList(allowed)));
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) {
      return absl::InternalError(absl::StrCat("flag --", name, " is not defined"));
    }
    if (!has_value && value.empty()) {
      if (flag->IsOfType<bool>()) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " needs a value: --", name, "=VALUE"));
      }
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad value for --", name, ": ", error));
    }
    if (!given.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, " is given twice"));
    }
  }
  return given;
}

}  // namespace fencegate::cli

// A server's flags, each bound once to the field of its options struct that
// it fills. One line in the server's main.cc:
//
//   FENCEGATE_OPTION_FLAG(LockServerOptions, absl::Duration, min_ttl,
//                         limits.min_ttl, "smallest lease TTL accepted");
//
// defines --min_ttl (its default is the field's default in a default-built
// LockServerOptions, its help the text given) and registers how the flag
// fills limits.min_ttl and how the start-up line shows it. Then
// OptionFlags<LockServerOptions>::Apply(options) fills every bound field
// from the parsed command line, and Describe(options) answers
// "min_ttl=1s max_ttl=..." for all of them in the order they were bound. So
// a new flag is its field, with its default, and its one line: parsing,
// --help and the start-up line follow.
//
// FENCEGATE_OPTION_FLAG_UNDESCRIBED binds a flag that Describe() leaves
// out, for a value the server describes itself (a connection string that
// may hold a password).
//
// Bind only in a binary's own sources (its main.cc; common/server_main/server_main.cc
// for the flags both servers take): a flag name is defined once per
// program, and two servers' libraries linked into one test would define
// theirs twice.
//
// Thread safety: flags are bound before main() runs (static
// initialization); Apply() and Describe() read the registry only after.
#ifndef FENCEGATE_COMMON_SERVER_MAIN_OPTION_FLAGS_H_
#define FENCEGATE_COMMON_SERVER_MAIN_OPTION_FLAGS_H_

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"

namespace fencegate {

// How the start-up line shows a value: strings as they are (empty as ""),
// durations as absl::FormatDuration, numbers and booleans as numbers.
inline std::string OptionText(const std::string& value) {
  return value.empty() ? std::string("\"\"") : value;
}
inline std::string OptionText(absl::Duration value) { return absl::FormatDuration(value); }
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
std::string OptionText(T value) {
  return absl::StrCat(value);
}

template <typename Options>
class OptionFlags {
 public:
  struct Binding {
    const char* name;
    void (*apply)(Options&);                    // field = the flag's value
    std::string (*describe)(const Options&);  // null: left out of Describe()
  };

  // Registers `binding`; the macros below call it. Returns true.
  static bool Bind(Binding binding) {
    Bindings().push_back(binding);
    return true;
  }
  // Sets every bound field of `options` from its flag; the others keep
  // their values.
  static void Apply(Options& options) {
    for (const Binding& binding : Bindings()) binding.apply(options);
  }
  // "name=value" for every bound field Describe() shows, space-separated,
  // in the order bound.
  static std::string Describe(const Options& options) {
    std::vector<std::string> parts;
    for (const Binding& binding : Bindings()) {
      if (binding.describe == nullptr) continue;
      parts.push_back(absl::StrCat(binding.name, "=", binding.describe(options)));
    }
    return absl::StrJoin(parts, " ");
  }

 private:
  static std::vector<Binding>& Bindings() {
    static std::vector<Binding>* const bindings = new std::vector<Binding>;
    return *bindings;
  }
};

// A server's options from the command line: the flags every server takes
// into options.serving (common/server_main/server_main.cc), then its own; fields no
// flag is bound to keep their defaults.
template <typename ServerOptions>
ServerOptions ServerOptionsFromFlags() {
  ServerOptions options;
  OptionFlags<decltype(options.serving)>::Apply(options.serving);
  OptionFlags<ServerOptions>::Apply(options);
  return options;
}

// Its own flags' settings, then those every server takes, as Describe().
template <typename ServerOptions>
std::string DescribeServerOptions(const ServerOptions& options) {
  std::string own = OptionFlags<ServerOptions>::Describe(options);
  std::string serving = OptionFlags<decltype(options.serving)>::Describe(options.serving);
  return own.empty() || serving.empty() ? own + serving : absl::StrCat(own, " ", serving);
}

}  // namespace fencegate

#define FENCEGATE_OPTION_FLAG_BIND_(Options, Type, name, field, help, describe) \
  ABSL_FLAG(Type, name, Options().field, help);                                \
  [[maybe_unused]] static const bool fencegate_option_flag_##name =            \
      ::fencegate::OptionFlags<Options>::Bind(                                 \
          {#name, [](Options& o) { o.field = absl::GetFlag(FLAGS_##name); }, describe})

#define FENCEGATE_OPTION_FLAG(Options, Type, name, field, help)  \
  FENCEGATE_OPTION_FLAG_BIND_(                                  \
      Options, Type, name, field, help,                         \
      [](const Options& o) { return ::fencegate::OptionText(o.field); })

#define FENCEGATE_OPTION_FLAG_UNDESCRIBED(Options, Type, name, field, help) \
  FENCEGATE_OPTION_FLAG_BIND_(Options, Type, name, field, help, nullptr)

#endif  // FENCEGATE_COMMON_SERVER_MAIN_OPTION_FLAGS_H_

// What both servers' main() do besides their own flags: the flags every
// server takes (bound to ServingOptions' fields: option_flags.h), the
// process set-up before them, and the signal loop after the server started.
//
//   FENCEGATE_OPTION_FLAG(Options, std::string, listen, serving.listen,
//                         fencegate::kListenFlagHelp);
//   ...                                     // one line per flag of its own
//   int main(int argc, char** argv) {
//     fencegate::InitServerMain("fencegate-x", argc, argv, "what it does.\nUsage: ...");
//     Options options = Options::FromFlags();  // these flags and its own
//     auto server = Server::Start(options);  // Start() calls options.Validate()
//     ...            // log failure, or the start-up line (options.Describe())
//     return fencegate::ServeUntilShutdownSignal("fencegate-x", **server);
//   }
//
// Defined here: --port_file, --shutdown_grace, --signing_keys, --tls_cert,
// --tls_key, --tls_client_ca, --policy, --metrics_listen, --metrics_port_file
// (OptionFlags<ServingOptions>). Each main binds --listen itself, because
// its default differs by server, with the help text kListenFlagHelp. Link
// this only into server binaries: it defines flags.
//
// Thread safety: call from main()'s thread only.
#ifndef FENCEGATE_COMMON_SERVER_MAIN_SERVER_MAIN_H_
#define FENCEGATE_COMMON_SERVER_MAIN_SERVER_MAIN_H_

#include <string>

#include "absl/strings/string_view.h"
#include "common/server/server_setup.h"

namespace fencegate {

inline constexpr char kListenFlagHelp[] =
    "host:port to serve gRPC on; port 0 picks a free port";

// `usage` is what --help prints after "<program>: ": what the server does,
// then "Usage: ..." lines.
// Blocks SIGTERM, SIGINT and SIGHUP (before any thread starts, so every
// thread inherits the mask), records `program` for --version and the logs
// (InitBuildInfo, build_info.h), sets `usage`, parses the command line
// (--help lists the flags of the main file and of this file), and turns off
// Abseil's per-acquisition lock-order check in production: it costs about
// 3% of a server's CPU under load (tests keep it on).
void InitServerMain(absl::string_view program, int argc, char** argv,
                    absl::string_view usage);

// Waits for SIGTERM or SIGINT; each SIGHUP before it reloads the signing
// keys and the policy (logging what is now in use, or why the old stays). Then shuts
// `server` down and logs that `program` stopped. Returns main()'s exit
// status.
int ServeUntilShutdownSignal(absl::string_view program, ServerControl& server);

}  // namespace fencegate

#endif  // FENCEGATE_COMMON_SERVER_MAIN_SERVER_MAIN_H_

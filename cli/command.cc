#include "cli/command.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "cli/cli_flags.h"
#include "cli/exit_codes.h"

namespace fencegate::cli {

std::vector<const Command*> AllCommands() {
  std::vector<const Command*> all;
  for (const Command& c : LockCommands()) all.push_back(&c);
  for (const Command& c : RunCommands()) all.push_back(&c);
  for (const Command& c : ElectionCommands()) all.push_back(&c);
  for (const Command& c : GatewayCommands()) all.push_back(&c);
  for (const Command& c : StatusCommands()) all.push_back(&c);
  for (const Command& c : SqlCommands()) all.push_back(&c);
  return all;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command* c : AllCommands()) {
    if (name == c->name) return c;
  }
  return nullptr;
}

std::string DefaultHolder() {
  const char* user = std::getenv("USER");
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return absl::StrCat(user != nullptr && *user != '\0' ? user : "user", "@",
                      *host != '\0' ? host : "localhost");
}

client::SignedToken TokenFromFlags() {
  const std::string text = absl::GetFlag(FLAGS_token);
  if (text.empty()) return client::SignedToken{};
  absl::StatusOr<client::SignedToken> token = client::ParseFencingToken(text);
  return token.ok() ? *token : client::SignedToken{};
}

absl::Status NameServer(absl::Status status, absl::string_view server,
                        absl::string_view address, absl::string_view flag, bool tls) {
  if (status.code() != absl::StatusCode::kUnavailable &&
      status.code() != absl::StatusCode::kDeadlineExceeded) {
    return status;
  }
  return absl::Status(
      status.code(),
      absl::StrCat(
          "no answer from ", server, " at ", address, " (", status.message(),
          "). Is it running there? Point the CLI at it with ", flag,
          "=HOST:PORT, or retry if it is restarting. ",
          tls ? "The CLI used TLS: check that --tls_ca signed the server's "
                "certificate, and give --tls_cert/--tls_key if it requires mutual TLS"
              : "The CLI used plaintext: if the server uses TLS, pass --tls_ca "
                "(and --tls_cert/--tls_key for mutual TLS)"));
}

absl::StatusOr<std::unique_ptr<client::LockClient>> ConnectLock(
    const CommandContext& ctx) {
  absl::StatusOr<std::unique_ptr<client::LockClient>> client =
      client::LockClient::Connect(absl::GetFlag(FLAGS_lockservice), ctx.client_options);
  if (!client.ok()) return UsageError(client.status().message());
  return client;
}

absl::Status FromLockService(const CommandContext& ctx, absl::Status status) {
  return NameServer(std::move(status), "the lock service",
                    absl::GetFlag(FLAGS_lockservice), "--lockservice",
                    ctx.client_options.tls.enabled());
}

}  // namespace fencegate::cli

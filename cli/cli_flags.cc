#include "cli/cli_flags.h"

#include <cstdlib>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, lockservice, "127.0.0.1:7070", "lock service address, host:port");
ABSL_FLAG(std::string, gateway, "127.0.0.1:7071", "gateway address, host:port");
ABSL_FLAG(bool, json, false, "print one JSON object on stdout instead of text");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(5),
          "deadline of the command's call: an unreachable or restarting server is "
          "retried with backoff until then (acquire: plus its --wait)");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA that signed the servers' certificates; set = connect over TLS");
ABSL_FLAG(std::string, tls_cert, "", "client certificate, for servers that require mutual TLS");
ABSL_FLAG(std::string, tls_key, "", "private key of --tls_cert");

ABSL_FLAG(std::string, resource, "",
          "the resource: the lock's name, and the "
          "storage namespace the gateway fences");
ABSL_FLAG(std::string, token, "",
          "the fencing token as acquire printed it: 42, or 42.<key id>.<signature> "
          "when the lock service signs tokens");
ABSL_FLAG(std::string, key, "", "the object's key inside the resource");

ABSL_FLAG(std::string, holder, "",
          "who asks (default: $USER@hostname); the same holder acquiring again "
          "gets the same token and one more hold");
ABSL_FLAG(absl::Duration, ttl, absl::Seconds(10),
          "lease length; renew before it runs out (e.g. 500ms, 30s, 2m)");
ABSL_FLAG(absl::Duration, wait, absl::ZeroDuration(),
          "how long to queue for a held lock; 0 tries once and answers at once");
ABSL_FLAG(std::string, request_id, "",
          "idempotency key: a retried call with the same id is applied once");
ABSL_FLAG(bool, shared, false,
          "a shared lease: many holders at once, none exclusive; its token reads "
          "at the gateway (fenced), it does not write");
ABSL_FLAG(std::vector<std::string>, resources, {},
          "several resources at once, comma-separated (instead of --resource): "
          "granted all together or not at all, each its own lease and token");
ABSL_FLAG(uint32_t, permits, 0,
          "take one permit of a semaphore of this many (1 to the lock service's "
          "--max_holders_per_resource); every holder must give the same number");

ABSL_FLAG(std::string, value, "",
          "the value to write; for an election, what its leader says (say, its address)");
ABSL_FLAG(std::string, value_file, "", "write this file's bytes; - reads stdin");
ABSL_FLAG(bool, delete, false, "delete the key instead of writing a value");
ABSL_FLAG(uint64_t, expected_version, 0,
          "if given, write only if the key's version is this (0: only if the key "
          "does not exist yet)");
ABSL_FLAG(uint32_t, page_size, 0, "at most this many keys (0: the server's default)");
ABSL_FLAG(std::string, page_token, "",
          "continue a listing from where the previous page ended");

ABSL_FLAG(std::string, key_id, "", "the new key's id: letters, digits, '.', '_', '-'");
ABSL_FLAG(bool, sign, false, "mark the new key as the one the lock service signs with");

ABSL_FLAG(absl::Duration, kill_after, absl::Seconds(10),
          "when the lease is lost, SIGKILL the command's process group this long "
          "after the SIGTERM if the command still runs");
ABSL_FLAG(std::string, elect, "",
          "run: campaign for this election (with --value) instead of taking --resource");
ABSL_FLAG(std::string, election, "", "the election's name (a resource name)");
ABSL_FLAG(uint32_t, count, 0,
          "observe: stop after this many changes (0: until --timeout)");

namespace fencegate::cli {

absl::Status ApplyFlagsFromEnvironment(const absl::flat_hash_set<std::string>& given) {
  for (const FlagFromEnvironment& entry : kFlagsFromEnvironment) {
    if (given.contains(entry.flag)) continue;
    const char* value = std::getenv(entry.variable);
    if (value == nullptr || *value == '\0') continue;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(entry.flag);
    std::string error;
    if (flag == nullptr || !flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad value in $", entry.variable, " (for --", entry.flag, "): ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace fencegate::cli

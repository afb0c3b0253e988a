#include "tests/torture/cluster.h"

#include <sys/stat.h>

#include <fstream>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fencegate::torture {
namespace {

// A key file with one fresh 32-byte signing key (docs/security.md).
absl::Status WriteSigningKeys(const std::string& path) {
  std::random_device random;
  std::string secret;
  for (int i = 0; i < 32; ++i) absl::StrAppendFormat(&secret, "%02x", random() & 0xff);
  {
    std::ofstream out(path, std::ios::trunc);
    out << "torture " << secret << " sign\n";
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  chmod(path.c_str(), 0600);
  return absl::OkStatus();
}

}  // namespace

Cluster::Cluster(const Schedule& schedule, ClusterOptions options)
    : schedule_(schedule), options_(std::move(options)) {}

absl::Status Cluster::Start() {
  const std::string& bug = schedule_.profile.planted_bug;
  const std::string keys = options_.run_dir + "/signing-keys.txt";
  ServerNodeOptions lock{"lockservice", options_.lockservice_binary, options_.run_dir,
                         {absl::StrCat("--lease_history_file=", options_.run_dir,
                                       "/lockservice.history"),
                          "--shutdown_grace=2s"},
                         options_.faketime_library};
  ServerNodeOptions gateway{"gateway", options_.gateway_binary, options_.run_dir,
                            {"--shutdown_grace=2s"}, options_.faketime_library};
  // Each planted bug lives in one server; its name says which.
  if (absl::StartsWith(bug, "lock_")) lock.extra_args.push_back("--planted_bug=" + bug);
  if (absl::StartsWith(bug, "gateway_")) gateway.extra_args.push_back("--planted_bug=" + bug);
  if (schedule_.secure) {
    absl::Status written = WriteSigningKeys(keys);
    if (!written.ok()) return written;
    lock.extra_args.push_back("--signing_keys=" + keys);
    gateway.extra_args.push_back("--signing_keys=" + keys);
  }
  lockservice_ = std::make_unique<ServerNode>(lock);
  absl::Status started = lockservice_->Start();
  if (!started.ok()) return started;
  if (schedule_.secure) gateway.extra_args.push_back("--lockservice=" + lockservice_->address());
  gateway_ = std::make_unique<ServerNode>(gateway);
  return gateway_->Start();
}

void Cluster::Heal(std::vector<std::string>* errors) {
  for (ServerNode* server : {lockservice_.get(), gateway_.get()}) {
    std::string exit = server->UnexpectedExit();
    if (!exit.empty()) errors->push_back(absl::StrCat("the ", server->name(), " exited by itself: ", exit));
    server->Disarm();
    server->SetClockOffset(absl::ZeroDuration());
    server->Continue();
    absl::Status started = server->Start();
    if (!started.ok()) errors->push_back(started.ToString());
  }
}

}  // namespace fencegate::torture

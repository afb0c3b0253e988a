#include "harness/network_namespaces.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include <cctype>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "harness/log_file.h"
#include "harness/run_program.h"

namespace fencegate::testing {
namespace {

constexpr char kIp[] = "/usr/sbin/ip";
constexpr char kNft[] = "/usr/sbin/nft";
constexpr char kNetnsDir[] = "/run/netns";
// Every namespace of every run starts with it; the rest of a run's prefix
// names the process that made them.
constexpr char kFamily[] = "fgt-";
constexpr char kBridgeVethPrefix[] = "h-";
constexpr absl::Duration kCommandTimeout = absl::Seconds(60);

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks
// after boot. "" if there is no such process.
std::string StartTime(const std::string& pid) {
  const std::string stat = ReadWholeFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = stat.rfind(')');  // the name may contain spaces
  if (paren == std::string::npos) return "";
  std::vector<std::string> fields =
      absl::StrSplit(stat.substr(paren + 2), ' ', absl::SkipEmpty());
  return fields.size() > 19 ? fields[19] : "";  // field 3 is fields[0]
}

// Runs `argv` (in `netns`, if given) with `input` on stdin; OK iff it
// exits 0.
absl::Status Run(std::vector<std::string> argv, const std::string& input,
                 const std::string& netns = "") {
  ChildProcess::Options options;
  options.argv = std::move(argv);
  options.network_namespace = netns;
  const std::string what = absl::StrJoin(options.argv, " ");
  absl::StatusOr<ProgramResult> result =
      RunProgram(std::move(options), kCommandTimeout, input);
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(absl::StrCat(what, " failed (exit ", result->exit_code,
                                            "): ", result->stderr_text, "\ninput:\n",
                                            input));
  }
  return absl::OkStatus();
}

absl::Status CheckHostName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 13;
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-');
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("host name '", name,
                   "': use 1 to 13 letters, digits or '-' (a veth name is at "
                   "most 15 characters)"));
}

std::string Veth(const std::string& host) { return kBridgeVethPrefix + host; }

}  // namespace

absl::StatusOr<int> VirtualNetwork::RemoveStaleNamespaces() {
  DIR* dir = opendir(kNetnsDir);
  if (dir == nullptr) return 0;  // no namespace was ever made
  std::vector<std::string> stale;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.rfind(kFamily, 0) != 0) continue;
    // fgt-<pid>-<start>-<host>
    std::vector<std::string> parts =
        absl::StrSplit(name.substr(4), absl::MaxSplits('-', 2));
    uint64_t number = 0;
    if (parts.size() < 3 || !absl::SimpleAtoi(parts[0], &number) ||
        !absl::SimpleAtoi(parts[1], &number)) {
      continue;  // not named by a run: not ours to judge
    }
    if (StartTime(parts[0]) != parts[1]) stale.push_back(name);
  }
  closedir(dir);
  if (stale.empty()) return 0;
  std::string batch;
  for (const std::string& name : stale) absl::StrAppend(&batch, "netns del ", name, "\n");
  absl::Status removed = Run({kIp, "-batch", "-"}, batch);
  if (!removed.ok()) return removed;
  return static_cast<int>(stale.size());
}

absl::StatusOr<std::unique_ptr<VirtualNetwork>> VirtualNetwork::Create(
    const std::vector<std::string>& host_names) {
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(
        "network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN)");
  }
  for (const char* tool : {kIp, kNft}) {
    if (access(tool, X_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          tool,
          " is missing: run ./scripts/install-deps (Debian's iproute2 and nftables)"));
    }
  }
  if (host_names.size() > 250) return absl::InvalidArgumentError("at most 250 hosts");
  absl::StatusOr<int> removed = RemoveStaleNamespaces();
  if (!removed.ok()) return removed.status();

  std::unique_ptr<VirtualNetwork> network(new VirtualNetwork());
  const std::string pid = absl::StrCat(getpid());
  network->prefix_ = absl::StrCat(kFamily, pid, "-", StartTime(pid), "-");
  network->bridge_netns_ = network->prefix_ + "bridge";
  int n = 0;
  for (const std::string& name : host_names) {
    absl::Status valid = CheckHostName(name);
    if (!valid.ok()) return valid;
    if (name == "bridge" || network->hosts_.count(name) > 0) {
      return absl::InvalidArgumentError(absl::StrCat("host name '", name, "' is taken"));
    }
    network->hosts_[name] =
        NetworkHost{name, network->prefix_ + name, absl::StrCat("10.77.0.", ++n)};
    network->order_.push_back(name);
  }
  absl::Status built = network->Build();
  if (!built.ok()) return built;  // the destructor removes what was made
  return network;
}

absl::Status VirtualNetwork::Build() {
  std::string namespaces = absl::StrCat("netns add ", bridge_netns_, "\n");
  for (const std::string& name : order_) {
    absl::StrAppend(&namespaces, "netns add ", hosts_[name].netns, "\n");
  }
  absl::Status status = Run({kIp, "-batch", "-"}, namespaces);
  if (!status.ok()) return status;

  std::string bridge = "link add br0 type bridge\nlink set br0 up\n";
  for (const std::string& name : order_) {
    absl::StrAppend(&bridge, "link add ", Veth(name), " type veth peer name eth0 netns ",
                    hosts_[name].netns, "\n", "link set ", Veth(name), " master br0\n",
                    "link set ", Veth(name), " up\n");
  }
  status = Run({kIp, "-n", bridge_netns_, "-batch", "-"}, bridge);
  if (!status.ok()) return status;
  for (const std::string& name : order_) {
    status = Run({kIp, "-n", hosts_[name].netns, "-batch", "-"},
                 absl::StrCat("link set lo up\naddr add ", hosts_[name].address,
                              "/24 dev eth0\nlink set eth0 up\n"));
    if (!status.ok()) return status;
  }
  // Frames between two hosts pass the bridge's forward hook; a cut drops
  // those whose (in port, out port) pair is in the set.
  return Run({kNft, "-f", "-"},
             "table bridge fgt {\n"
             "  set cuts { type ifname . ifname; }\n"
             "  chain forward {\n"
             "    type filter hook forward priority 0; policy accept;\n"
             "    iifname . oifname @cuts drop\n"
             "  }\n"
             "}\n",
             bridge_netns_);
}

VirtualNetwork::~VirtualNetwork() {
  if (prefix_.empty()) return;
  std::string batch;
  for (const std::string& name : order_) {
    if (access(absl::StrCat(kNetnsDir, "/", hosts_[name].netns).c_str(), F_OK) == 0) {
      absl::StrAppend(&batch, "netns del ", hosts_[name].netns, "\n");
    }
  }
  if (access(absl::StrCat(kNetnsDir, "/", bridge_netns_).c_str(), F_OK) == 0) {
    absl::StrAppend(&batch, "netns del ", bridge_netns_, "\n");
  }
  if (!batch.empty()) Run({kIp, "-batch", "-"}, batch).IgnoreError();
}

const NetworkHost& VirtualNetwork::host(const std::string& name) const {
  return hosts_.at(name);
}

absl::Status VirtualNetwork::ChangeCuts(
    const char* verb, const std::vector<std::pair<std::string, std::string>>& links,
    CutDirection direction) {
  const bool add = std::string(verb) == "add";
  std::vector<std::pair<std::string, std::string>> wanted;
  for (const auto& [from, to] : links) {
    for (const std::string* name : {&from, &to}) {
      if (hosts_.count(*name) == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("no host '", *name, "' in this network (see Create())"));
      }
    }
    wanted.emplace_back(Veth(from), Veth(to));
    if (direction == CutDirection::kBothWays) wanted.emplace_back(Veth(to), Veth(from));
  }
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<std::string, std::string>> change;
  for (auto& pair : wanted) {
    if ((cuts_.count(pair) > 0) != add) change.push_back(std::move(pair));
  }
  if (change.empty()) return absl::OkStatus();
  std::vector<std::string> elements;
  for (const auto& [in, out] : change) {
    elements.push_back(absl::StrCat("\"", in, "\" . \"", out, "\""));
  }
  absl::Status status = Run({kNft, "-f", "-"},
                            absl::StrCat(verb, " element bridge fgt cuts { ",
                                         absl::StrJoin(elements, ", "), " }\n"),
                            bridge_netns_);
  if (!status.ok()) return status;
  for (const auto& pair : change) {
    if (add) {
      cuts_.insert(pair);
    } else {
      cuts_.erase(pair);
    }
  }
  return absl::OkStatus();
}

absl::Status VirtualNetwork::Cut(
    const std::vector<std::pair<std::string, std::string>>& links,
    CutDirection direction) {
  return ChangeCuts("add", links, direction);
}

absl::Status VirtualNetwork::Heal(
    const std::vector<std::pair<std::string, std::string>>& links,
    CutDirection direction) {
  return ChangeCuts("delete", links, direction);
}

absl::Status VirtualNetwork::HealAll() {
  absl::MutexLock lock(&mu_);
  absl::Status status =
      Run({kNft, "-f", "-"}, "flush set bridge fgt cuts\n", bridge_netns_);
  if (status.ok()) cuts_.clear();
  return status;
}

std::vector<std::string> VirtualNetwork::Cuts() const {
  absl::MutexLock lock(&mu_);
  const size_t prefix = std::string(kBridgeVethPrefix).size();
  std::vector<std::string> cuts;
  for (const auto& [in, out] : cuts_) {
    cuts.push_back(absl::StrCat(in.substr(prefix), ">", out.substr(prefix)));
  }
  return cuts;
}

absl::Status VirtualNetwork::JoinFromThisThread(const std::string& host) const {
  auto it = hosts_.find(host);
  if (it == hosts_.end())
    return absl::InvalidArgumentError(absl::StrCat("no host ", host));
  const std::string path = absl::StrCat(kNetnsDir, "/", it->second.netns);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("open ", path, ": ", strerror(errno)));
  const int joined = setns(fd, CLONE_NEWNET);
  const int error = errno;
  close(fd);
  if (joined != 0) {
    return absl::InternalError(absl::StrCat("setns into ", path, ": ", strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace fencegate::testing

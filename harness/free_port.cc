#include "harness/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <random>
#include <sstream>

#include "absl/base/const_init.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "harness/log_file.h"

namespace fencegate::testing {
namespace {

// The lowest port the kernel hands out for port 0 and outgoing connections.
int EphemeralLow() {
  int low = 32768;
  std::istringstream in(ReadWholeFile("/proc/sys/net/ipv4/ip_local_port_range"));
  in >> low;
  return low;
}

bool PortIsFree(const std::string& host, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool free = inet_pton(AF_INET, host.c_str(), &addr.sin_addr) == 1 &&
                    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return free;
}

}  // namespace

absl::StatusOr<int> PickFreePort(const std::string& host) {
  static absl::Mutex mu(absl::kConstInit);
  static std::mt19937* random = new std::mt19937(std::random_device{}());
  // The ports handed out lately, most recent last: free when checked, but
  // their servers may not have bound them yet (an etcd member's client and
  // peer ports are picked one after the other, then both bound at its
  // start), so none is handed out again while it is among them.
  static std::deque<int>* given = new std::deque<int>;
  constexpr size_t kRemembered = 4096;
  absl::MutexLock lock(&mu);
  const int high = std::max(EphemeralLow() - 1, 20000);
  std::uniform_int_distribution<int> ports(std::max(10000, high - 15000), high);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = ports(*random);
    if (std::find(given->begin(), given->end(), port) != given->end()) continue;
    if (!PortIsFree(host, port)) continue;
    given->push_back(port);
    if (given->size() > kRemembered) given->pop_front();
    return port;
  }
  return absl::UnavailableError(
      absl::StrCat("no free port below ", high + 1, " on ", host, " after 100 tries"));
}

}  // namespace fencegate::testing

// VirtualNetwork (harness/network_namespaces.h): hosts in namespaces
// of their own reach each other over the bridge; a cut drops frames in the
// directions asked for, and healing lets them through again; a run removes
// its namespaces, and stale ones of dead runs, never others. Needs root
// (CI runs as root); skipped otherwise.
#include "harness/network_namespaces.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/run_program.h"
#include "tests/testing/status_matchers.h"

namespace fencegate::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int kPort = 7171;

bool NamespaceExists(const std::string& name) {
  return std::filesystem::exists("/run/netns/" + name);
}

// Runs `body` on a thread of its own inside `host`'s namespace.
void OnHost(const VirtualNetwork& network, const std::string& host,
            const std::function<void()>& body) {
  std::thread thread([&] {
    ASSERT_THAT(network.JoinFromThisThread(host), IsOk());
    body();
  });
  thread.join();
}

// A listener on `host`'s address, made inside its namespace; -1 on failure.
int Listen(const VirtualNetwork& network, const std::string& host) {
  int fd = -1;
  OnHost(network, host, [&] {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(kPort);
    inet_pton(AF_INET, network.host(host).address.c_str(), &addr.sin_addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(fd, 16) != 0) {
      close(fd);
      fd = -1;
    }
  });
  return fd;
}

// Whether a TCP connection from `from` to `to` completes within 500 ms.
bool Connects(const VirtualNetwork& network, const std::string& from,
              const std::string& to) {
  bool connected = false;
  OnHost(network, from, [&] {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(kPort);
    inet_pton(AF_INET, network.host(to).address.c_str(), &addr.sin_addr);
    connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    pollfd p = {fd, POLLOUT, 0};
    int error = -1;
    socklen_t length = sizeof(error);
    connected = poll(&p, 1, 500) == 1 &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
    close(fd);
  });
  return connected;
}

class VirtualNetworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  }
};

TEST_F(VirtualNetworkTest, CutsDropFramesInTheDirectionsAskedAndHealingRestoresThem) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<VirtualNetwork> network,
                       VirtualNetwork::Create({"a", "b", "c"}));
  const int b_listener = Listen(*network, "b");
  const int a_listener = Listen(*network, "a");
  ASSERT_GE(b_listener, 0);
  ASSERT_GE(a_listener, 0);
  EXPECT_TRUE(Connects(*network, "a", "b"));
  EXPECT_TRUE(Connects(*network, "c", "b"));

  // One way: a's frames to b are dropped, so no handshake completes either
  // way; c is untouched.
  ASSERT_THAT(network->Cut({{"a", "b"}}, CutDirection::kFromTo), IsOk());
  EXPECT_THAT(network->Cuts(), ElementsAre("a>b"));
  EXPECT_FALSE(Connects(*network, "a", "b"));
  EXPECT_FALSE(Connects(*network, "b", "a"));
  EXPECT_TRUE(Connects(*network, "c", "b"));
  ASSERT_THAT(network->Heal({{"a", "b"}}, CutDirection::kFromTo), IsOk());
  EXPECT_TRUE(Connects(*network, "a", "b"));

  ASSERT_THAT(network->Cut({{"c", "b"}, {"c", "a"}}, CutDirection::kBothWays), IsOk());
  EXPECT_EQ(network->Cuts().size(), 4u);
  EXPECT_FALSE(Connects(*network, "c", "b"));
  EXPECT_FALSE(Connects(*network, "c", "a"));
  EXPECT_TRUE(Connects(*network, "a", "b"));
  // Cutting again and healing what is not cut are no-ops.
  ASSERT_THAT(network->Cut({{"c", "b"}}, CutDirection::kBothWays), IsOk());
  ASSERT_THAT(network->Heal({{"a", "b"}}, CutDirection::kBothWays), IsOk());
  ASSERT_THAT(network->HealAll(), IsOk());
  EXPECT_THAT(network->Cuts(), IsEmpty());
  EXPECT_TRUE(Connects(*network, "c", "b"));
  close(a_listener);
  close(b_listener);
}

TEST_F(VirtualNetworkTest, ProcessesRunOnTheirHostAndTheRunRemovesItsNamespaces) {
  std::string prefix;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<VirtualNetwork> network,
                         VirtualNetwork::Create({"a"}));
    prefix = network->prefix();
    ChildProcess::Options options;
    options.argv = {"/usr/sbin/ip", "-4", "-o", "addr", "show", "dev", "eth0"};
    options.network_namespace = network->host("a").netns;
    ASSERT_OK_AND_ASSIGN(ProgramResult shown, RunProgram(options, absl::Seconds(30)));
    EXPECT_THAT(shown.stdout_text, ::testing::HasSubstr("inet 10.77.0.1/24"));
    EXPECT_TRUE(NamespaceExists(prefix + "a"));
    EXPECT_TRUE(NamespaceExists(prefix + "bridge"));
  }
  EXPECT_FALSE(NamespaceExists(prefix + "a"));
  EXPECT_FALSE(NamespaceExists(prefix + "bridge"));
}

TEST_F(VirtualNetworkTest, OnlyNamespacesOfDeadRunsAreStale) {
  // A dead run's (no process 4000000000 exists), one of this process (alive),
  // one of this pid started at another time (the pid was reused), and one
  // that is not a run's at all.
  std::string prefix;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<VirtualNetwork> network,
                         VirtualNetwork::Create({}));
    prefix = network->prefix();
  }
  // "fgt-<pid>-<start>-": the start time is between the second and last dash.
  const std::string rest = prefix.substr(4);
  const std::string live_start =
      rest.substr(rest.find('-') + 1, rest.rfind('-') - rest.find('-') - 1);
  const std::string pid = absl::StrCat(getpid());
  const std::string dead = "fgt-4000000000-1-x";
  const std::string live = absl::StrCat("fgt-", pid, "-", live_start, "-x");
  const std::string reused = absl::StrCat("fgt-", pid, "-1-x");
  const std::string other = "fgtest-1-1-x";
  for (const std::string& name : {dead, live, reused, other}) {
    ASSERT_OK_AND_ASSIGN(
        ProgramResult made,
        RunProgram({"/usr/sbin/ip", "netns", "add", name}, absl::Seconds(30)));
    ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
  }
  // Another process that makes a network (a test running beside this one
  // under ctest -j2) removes stale namespaces too, maybe these first; and
  // other runs' stale ones count here: what must hold is which survive.
  ASSERT_THAT(VirtualNetwork::RemoveStaleNamespaces().status(), IsOk());
  EXPECT_FALSE(NamespaceExists(dead));
  EXPECT_FALSE(NamespaceExists(reused));
  EXPECT_TRUE(NamespaceExists(live));
  EXPECT_TRUE(NamespaceExists(other));
  for (const std::string& name : {live, other}) {
    RunProgram({"/usr/sbin/ip", "netns", "del", name}, absl::Seconds(30)).IgnoreError();
  }
}

}  // namespace
}  // namespace fencegate::testing

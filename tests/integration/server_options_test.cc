// The options both servers are started with: Validate() refuses what cannot
// work with INVALID_ARGUMENT naming the flag, Start() calls it before it
// opens anything (so a server started in-process gets main()'s checks), and
// main() reports the same refusal and exits non-zero.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gateway/gateway_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/child_process.h"
#include "harness/server_process.h"
#include "harness/temp_dir.h"
#include "lockservice/server/lock_server.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {
namespace {

using ::fencegate::testing::IsOk;
using ::fencegate::testing::StatusIs;
using ::testing::HasSubstr;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

struct LockCase {
  std::string flag;  // what the error must name
  std::function<void(lockservice::LockServerOptions&)> spoil;
};

std::vector<LockCase> LockCases() {
  using O = lockservice::LockServerOptions;
  return {
      {"--listen", [](O& o) { o.serving.listen = ""; }},
      {"--listen", [](O& o) { o.serving.listen = "localhost"; }},
      {"--shutdown_grace", [](O& o) { o.serving.shutdown_grace = absl::Seconds(-1); }},
      {"--metrics_listen", [](O& o) { o.serving.metrics_listen = "localhost"; }},
      {"--metrics_listen", [](O& o) { o.serving.metrics_listen = "127.0.0.1:70000"; }},
      {"--tls_key", [](O& o) { o.serving.tls.cert = "cert.pem"; }},
      {"--tls_cert", [](O& o) { o.serving.tls.client_ca = "ca.pem"; }},
      {"--min_ttl", [](O& o) { o.limits.min_ttl = absl::ZeroDuration(); }},
      {"--min_ttl", [](O& o) { o.limits.min_ttl = o.limits.max_ttl + absl::Seconds(1); }},
      {"--max_wait", [](O& o) { o.limits.max_wait = absl::Seconds(-1); }},
      {"--lock_delay", [](O& o) { o.limits.lock_delay = absl::Seconds(-1); }},
      {"--max_hold", [](O& o) { o.limits.max_hold = absl::Seconds(-1); }},
      {"--waiter_reattach_grace",
       [](O& o) { o.limits.waiter_reattach_grace = absl::Seconds(-1); }},
      {"--max_resource_bytes", [](O& o) { o.limits.max_resource_bytes = 0; }},
      {"--max_holder_bytes", [](O& o) { o.limits.max_holder_bytes = 0; }},
      {"--max_resources", [](O& o) { o.limits.max_resources = 0; }},
      {"--max_holders_per_resource", [](O& o) { o.limits.max_holders_per_resource = 0; }},
      {"--max_multi_resources", [](O& o) { o.limits.max_multi_resources = 0; }},
      {"--max_multi_resources", [](O& o) { o.limits.max_multi_resources = 9; }},
      {"--max_batch", [](O& o) { o.limits.max_batch = 0; }},
      {"--max_pending", [](O& o) { o.limits.max_pending = 0; }},
      {"--max_stream_in_flight", [](O& o) { o.session_limits.max_in_flight = 0; }},
      {"--max_sessions", [](O& o) { o.max_sessions = 0; }},
      {"--max_fence_watchers", [](O& o) { o.max_fence_watchers = 0; }},
      {"--db", [](O& o) { o.db_path = ""; }},
      {"--store", [](O& o) { o.store = "mysql://db"; }},
      {"--etcd_session_ttl",
       [](O& o) {
         o.store = "etcd://127.0.0.1:1";
         o.etcd_session_ttl = absl::Milliseconds(500);
       }},
      {"--etcd_max_txn_ops",
       [](O& o) {
         o.store = "etcd://127.0.0.1:1";
         o.etcd_max_txn_ops = 33;  // one below 2 + 2 * kMaxDecisionItems
       }},
      {"--etcd_prefix",
       [](O& o) {
         o.store = "etcd://127.0.0.1:1";
         o.etcd_prefix = "";
       }},
      {"--peer_tls_ca",
       [](O& o) {
         o.store = "etcd://127.0.0.1:1";
         o.serving.tls.cert = "cert.pem";
         o.serving.tls.key = "key.pem";
       }},
  };
}

TEST(LockServerOptionsTest, DefaultsAreValid) {
  EXPECT_THAT(lockservice::LockServerOptions().Validate(), IsOk());
}

TEST(LockServerOptionsTest, EachImpossibleSettingIsRefusedNamingItsFlag) {
  for (const LockCase& c : LockCases()) {
    lockservice::LockServerOptions options;
    c.spoil(options);
    EXPECT_THAT(options.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr(c.flag)))
        << "case naming " << c.flag;
  }
}

TEST(LockServerOptionsTest, StartRefusesBeforeItOpensTheDatabase) {
  testing::TempDir dir;
  for (const LockCase& c : LockCases()) {
    lockservice::LockServerOptions options;
    options.serving.listen = "127.0.0.1:0";
    options.db_path = dir.File("locks.db");
    c.spoil(options);
    if (options.db_path.empty()) continue;  // the --db case itself
    EXPECT_THAT(lockservice::LockServer::Start(options),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.flag)));
    EXPECT_FALSE(Exists(dir.File("locks.db"))) << "case naming " << c.flag;
  }
}

struct GatewayCase {
  std::string flag;
  std::function<void(gateway::GatewayServerOptions&)> spoil;
};

std::vector<GatewayCase> GatewayCases() {
  using O = gateway::GatewayServerOptions;
  return {
      {"--listen", [](O& o) { o.serving.listen = ""; }},
      {"--shutdown_grace", [](O& o) { o.serving.shutdown_grace = absl::Seconds(-1); }},
      {"--metrics_listen", [](O& o) { o.serving.metrics_listen = ":x"; }},
      {"--tls_cert", [](O& o) { o.serving.tls.key = "key.pem"; }},
      {"--max_key_bytes", [](O& o) { o.limits.max_key_bytes = 0; }},
      {"--max_mutations", [](O& o) { o.limits.max_mutations = 0; }},
      {"--max_request_bytes",
       [](O& o) { o.limits.max_request_bytes = o.limits.max_value_bytes - 1; }},
      {"--max_request_bytes", [](O& o) { o.limits.max_request_bytes = (1u << 30) + 1; }},
      {"--default_page_size", [](O& o) { o.limits.default_page_size = 0; }},
      {"--default_page_size",
       [](O& o) { o.limits.default_page_size = o.limits.max_page_size + 1; }},
      {"--max_batch", [](O& o) { o.limits.max_batch = 0; }},
      {"--max_pending", [](O& o) { o.limits.max_pending = 0; }},
      {"--max_stream_in_flight", [](O& o) { o.session_limits.max_in_flight = 0; }},
      {"--max_sessions", [](O& o) { o.max_sessions = 0; }},
      {"--read_connections", [](O& o) { o.read_connections = 0; }},
      {"--db", [](O& o) { o.db_path = ""; }},
      {"--storage", [](O& o) { o.storage = "mysql://db"; }},
      {"--max_key_bytes",
       [](O& o) {
         o.storage = "postgres://fg@127.0.0.1:1/fg";
         o.limits.max_key_bytes = gateway::kPostgresMaxNameBytes;
       }},
  };
}

TEST(GatewayServerOptionsTest, DefaultsAreValid) {
  EXPECT_THAT(gateway::GatewayServerOptions().Validate(), IsOk());
}

TEST(GatewayServerOptionsTest, EachImpossibleSettingIsRefusedNamingItsFlag) {
  for (const GatewayCase& c : GatewayCases()) {
    gateway::GatewayServerOptions options;
    c.spoil(options);
    EXPECT_THAT(options.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr(c.flag)))
        << "case naming " << c.flag;
  }
}

TEST(GatewayServerOptionsTest, StartRefusesBeforeItOpensTheDatabase) {
  testing::TempDir dir;
  for (const GatewayCase& c : GatewayCases()) {
    gateway::GatewayServerOptions options;
    options.serving.listen = "127.0.0.1:0";
    options.db_path = dir.File("gateway.db");
    c.spoil(options);
    if (options.db_path.empty()) continue;
    EXPECT_THAT(gateway::GatewayServer::Start(options),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.flag)));
    EXPECT_FALSE(Exists(dir.File("gateway.db"))) << "case naming " << c.flag;
  }
}

// Runs `argv` to its end; returns its exit status and sets *output to what
// it printed (stdout and stderr).
int RunToEnd(std::vector<std::string> argv, const testing::TempDir& dir,
             std::string* output) {
  testing::ChildProcess::Options options;
  options.argv = std::move(argv);
  options.stderr_path = dir.File("output.txt");
  std::remove(options.stderr_path.c_str());  // the child appends to it
  auto child = testing::ChildProcess::Start(options);
  EXPECT_THAT(child, IsOk());
  if (!child.ok()) return -1;
  absl::StatusOr<int> status = (*child)->Wait(absl::Seconds(60));
  EXPECT_THAT(status, IsOk());
  std::stringstream text;
  text << std::ifstream(options.stderr_path).rdbuf();
  *output = text.str();
  return status.ok() && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
}

TEST(ServerMainTest, MainRefusesWhatValidateRefusesAndCreatesNothing) {
  testing::TempDir dir;
  std::string output;
  EXPECT_EQ(RunToEnd({FENCEGATE_LOCKSERVICE_BIN, "--listen=127.0.0.1:0", "--min_ttl=0s",
                      "--db=" + dir.File("locks.db")},
                     dir, &output),
            1);
  EXPECT_THAT(output, HasSubstr("failed to start"));
  EXPECT_THAT(output, HasSubstr("--min_ttl"));
  EXPECT_FALSE(Exists(dir.File("locks.db")));

  EXPECT_EQ(RunToEnd({FENCEGATE_GATEWAY_BIN, "--listen=127.0.0.1:0", "--read_connections=0",
                      "--db=" + dir.File("gateway.db")},
                     dir, &output),
            1);
  EXPECT_THAT(output, HasSubstr("--read_connections"));
  EXPECT_FALSE(Exists(dir.File("gateway.db")));
}

TEST(ServerMainTest, HelpListsTheSharedFlagsAndTheServersOwn) {
  testing::TempDir dir;
  std::string output;
  for (const char* binary : {FENCEGATE_LOCKSERVICE_BIN, FENCEGATE_GATEWAY_BIN}) {
    RunToEnd({binary, "--help"}, dir, &output);  // Abseil exits 1 after --help
    for (const char* flag :
         {"--listen", "--port_file", "--shutdown_grace", "--signing_keys", "--tls_cert",
          "--tls_key", "--tls_client_ca", "--metrics_listen", "--metrics_port_file",
          "--max_batch", "--max_stream_in_flight", "--max_sessions", "--db"}) {
      EXPECT_THAT(output, HasSubstr(flag)) << binary;
    }
  }
  EXPECT_THAT(output, HasSubstr("default: \"127.0.0.1:7071\""));
}

// The flags --help lists, each with its default as --help prints it
// (strings without their quotes).
std::vector<std::pair<std::string, std::string>> FlagsOfHelp(const std::string& help) {
  std::vector<std::pair<std::string, std::string>> flags;
  for (absl::string_view wrapped : absl::StrSplit(help, "\n    --")) {
    // One line: --help wraps long entries onto indented lines.
    const std::string entry = absl::StrJoin(
        absl::StrSplit(wrapped, absl::ByAnyChar(" \n"), absl::SkipEmpty()), " ");
    const size_t name_end = entry.find(" (");
    const size_t default_at = entry.rfind("; default: ");
    if (name_end == std::string::npos || default_at == std::string::npos) continue;
    absl::string_view value =
        absl::string_view(entry).substr(default_at + strlen("; default: "));
    value = value.substr(0, value.find(';'));
    absl::ConsumePrefix(&value, "\"");
    absl::ConsumeSuffix(&value, "\"");
    flags.emplace_back(std::string(entry.substr(0, name_end)), std::string(value));
  }
  return flags;
}

// Every server flag can come from a --flagfile, as the packages' systemd
// units give them (/etc/fencegate/<server>.flags): a file that sets every
// flag --help lists is accepted, comments and blank lines included, and
// what it sets takes effect. (--listen, --port_file and --db come from the
// harness on the command line, after the file.) And every flag is bound to
// its options struct (common/server_main/option_flags.h): the start-up line shows each
// one's setting, but the gateway's --storage (it may hold a password; the
// line says storage= as the server describes it).
TEST(ServerMainTest, EveryFlagCanComeFromAFlagsFile) {
  testing::TempDir dir;
  for (const char* binary : {FENCEGATE_LOCKSERVICE_BIN, FENCEGATE_GATEWAY_BIN}) {
    SCOPED_TRACE(binary);
    std::string help;
    RunToEnd({binary, "--help"}, dir, &help);
    const std::vector<std::pair<std::string, std::string>> flags = FlagsOfHelp(help);
    // Every entry of --help was read, with its default.
    const std::vector<absl::string_view> entries = absl::StrSplit(help, "\n    --");
    EXPECT_EQ(flags.size(), entries.size() - 1) << help;
    EXPECT_GE(flags.size(), 20u) << help;
    std::string file = "# every flag of --help, at its default but one\n\n";
    for (const auto& [name, value] : flags) {
      if (name == "listen" || name == "port_file" || name == "db") continue;
      file += name == "max_batch" ? "--max_batch=17\n"
                                  : absl::StrCat("--", name, "=", value, "\n");
    }
    const std::string path = dir.File("server.flags");
    std::ofstream(path) << file;
    const std::string name =
        absl::EndsWith(binary, "gateway") ? "gateway" : "lockservice";
    absl::StatusOr<std::unique_ptr<testing::ServerProcess>> server =
        testing::ServerProcess::Start(
            binary, {"--flagfile=" + path, "--db=" + dir.File(name + ".db")}, dir.path(),
            name);
    ASSERT_THAT(server, IsOk()) << file;
    EXPECT_THAT((*server)->WaitForLog("max_batch=17"), IsOk());
    const std::string log = (*server)->LogTail();
    const size_t line_at = log.find(" serving on port ");
    ASSERT_NE(line_at, std::string::npos) << log;
    const std::string line = log.substr(line_at, log.find('\n', line_at) - line_at);
    for (const auto& [flag, value] : flags) {
      if (flag == "storage") continue;
      EXPECT_TRUE(absl::StrContains(line, absl::StrCat(" ", flag, "=")) ||
                  absl::StrContains(line, absl::StrCat("(", flag, "=")))
          << flag << " is not on the start-up line: " << line;
    }
    EXPECT_THAT((*server)->Terminate(), IsOk());
  }
}

// A flag the server does not know, in the flags file, stops it at start
// with an error that names the flag and the file's line.
TEST(ServerMainTest, AnUnknownFlagInTheFlagsFileIsRefused) {
  testing::TempDir dir;
  const std::string path = dir.File("bad.flags");
  std::ofstream(path) << "--listen=127.0.0.1:0\n--max_tll=30s\n";
  std::string output;
  EXPECT_EQ(RunToEnd({FENCEGATE_LOCKSERVICE_BIN, "--flagfile=" + path,
                      "--db=" + dir.File("locks.db")},
                     dir, &output),
            1);
  EXPECT_THAT(output, HasSubstr("max_tll"));
  EXPECT_FALSE(Exists(dir.File("locks.db")));
}

// Started by systemd, a server's stderr is the journal (JOURNAL_STREAM
// names it): its lines then carry syslog priorities instead of a time.
TEST(ServerMainTest, LogsToTheJournalWithPriorities) {
  testing::TempDir dir;
  const std::string log = dir.File("lockservice.log");
  std::ofstream(log).close();
  struct stat st;
  ASSERT_EQ(stat(log.c_str(), &st), 0);
  testing::ServerProcessOptions options;
  options.process.argv = {FENCEGATE_LOCKSERVICE_BIN, "--db=" + dir.File("locks.db")};
  options.process.env = {absl::StrCat("JOURNAL_STREAM=", st.st_dev, ":", st.st_ino)};
  options.dir = dir.path();
  options.name = "lockservice";
  absl::StatusOr<std::unique_ptr<testing::ServerProcess>> server =
      testing::ServerProcess::Start(std::move(options));
  ASSERT_THAT(server, IsOk());
  EXPECT_THAT((*server)->Terminate(), IsOk());
  const std::string text = (*server)->LogSinceStart();
  EXPECT_THAT(text, HasSubstr("<6>fencegate-lockservice 0."));
  EXPECT_THAT(text, HasSubstr("\n<6>fencegate-lockservice stopped cleanly\n"));
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(absl::StartsWith(line, "<6>") || absl::StartsWith(line, "<4>") ||
                absl::StartsWith(line, "<3>"))
        << line;
  }
}

}  // namespace
}  // namespace fencegate

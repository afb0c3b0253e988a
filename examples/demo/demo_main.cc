// fencegate-demo: the paused lock holder, end to end (./scripts/demo).
// Starts a lock service and a gateway on free ports in a temp directory
// (and, for act 4, a PostgreSQL server of its own from Debian's binaries),
// plays the acts of acts.h with real client processes, prints a
// timeline, writes an SVG sequence diagram, and cleans up: servers stopped,
// clients gone, temp directory removed, also on Ctrl-C or SIGTERM.
//
// Exit status: 0 every act came out as expected; 1 an act did not; 2 the
// demo could not run (a binary missing, a server failing); 128 + signal
// when interrupted.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/build_info/build_info.h"
#include "common/grpc/channel_credentials.h"
#include "common/metrics/key_figures.h"
#include "common/signing/signing_keys.h"
#include "examples/demo/acts.h"
#include "harness/counter_store.h"
#include "harness/interrupt.h"
#include "examples/demo/sequence_svg.h"
#include "harness/test_certificates.h"
#include "examples/demo/timeline.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "fencegate/client_tls_files.h"
#include "fencegate/v1/server_info.grpc.pb.h"
#include "gateway/postgres/postgres_sql_api.h"
#include "grpcpp/create_channel.h"
#include "harness/postgres_server.h"
#include "harness/server_process.h"

ABSL_FLAG(std::string, out, FENCEGATE_DEMO_DEFAULT_OUT,
          "where to write the SVG sequence diagram of the run");
ABSL_FLAG(absl::Duration, ttl, absl::Seconds(2),
          "lease TTL in every act; the pauses last about this long");
ABSL_FLAG(std::string, acts, "1,2,3,4", "which acts to play, comma-separated");
ABSL_FLAG(bool, color, true, "color the timeline when stdout is a terminal");
ABSL_FLAG(bool, tls, false,
          "run everything over mutual TLS, with certificates made for the run by "
          "the openssl tool (the lease holder is then the client certificate's "
          "subject)");
ABSL_FLAG(std::string, lockservice_bin, FENCEGATE_LOCKSERVICE_BIN,
          "the fencegate-lockservice binary");
ABSL_FLAG(std::string, gateway_bin, FENCEGATE_GATEWAY_BIN,
          "the fencegate-gateway binary");
ABSL_FLAG(std::string, client_bin, FENCEGATE_DEMO_CLIENT_BIN,
          "the fencegate-demo-client binary");

namespace fencegate::demo {
namespace {

constexpr int kExitNotAsExpected = 1;
constexpr int kExitCannotRun = 2;

// A fresh directory under $TMPDIR, removed with everything in it.
class WorkDir {
 public:
  static absl::StatusOr<std::unique_ptr<WorkDir>> Create() {
    const char* tmp = std::getenv("TMPDIR");
    std::string path =
        absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/fencegate-demo-XXXXXX");
    if (mkdtemp(path.data()) == nullptr) {
      return absl::UnavailableError(absl::StrCat("cannot create a temp dir at ", path));
    }
    return std::unique_ptr<WorkDir>(new WorkDir(path));
  }
  ~WorkDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit WorkDir(std::string path) : path_(std::move(path)) {}
  const std::string path_;
};

void Intro() {
  std::cout
      << "fencegate demo: can a lock holder that was paused, or cut off, still damage "
         "the data?\n\n"
         "Two client processes take turns on a lock and increment a shared counter\n"
         "(read it, add one, write it back). Every lock grant carries a fencing token\n"
         "that only grows; the gateway in front of the storage refuses a write whose\n"
         "token is older than one it has already seen.\n";
}

// Signed tokens always, mutual TLS when asked: the servers' flags, the
// clients' files, and a line for the reader.
struct Security {
  std::vector<std::string> server_args;
  ClientTlsFiles client_tls[2];  // client 1, client 2
  ClientTlsFiles demo_tls;       // the demo's own view of the servers
  std::string description;
};

absl::StatusOr<Security> MakeSecurity(const std::string& dir, bool tls) {
  Security security;
  absl::StatusOr<std::string> key = NewKeyLine("demo-key-1", /*sign=*/true);
  if (!key.ok()) return key.status();
  const std::string key_file = dir + "/signing-keys.txt";
  std::ofstream out(key_file);
  out << "# made for this run; both servers read it\n" << *key << "\n";
  out.close();
  if (!out) return absl::UnavailableError("cannot write " + key_file);
  chmod(key_file.c_str(), 0600);
  security.server_args.push_back("--signing_keys=" + key_file);
  security.description =
      "tokens are signed (HMAC-SHA256, key 'demo-key-1'): the gateway accepts a token "
      "only with the signature the lock service gave it";
  if (!tls) return security;
  absl::StatusOr<TestCertificates> certs =
      MakeTestCertificates(dir, {"client 1", "client 2", "demo"});
  if (!certs.ok()) return certs.status();
  security.server_args.push_back("--tls_cert=" + certs->server.cert);
  security.server_args.push_back("--tls_key=" + certs->server.key);
  security.server_args.push_back("--tls_client_ca=" + certs->server.client_ca);
  security.client_tls[0] = certs->clients["client 1"];
  security.client_tls[1] = certs->clients["client 2"];
  security.demo_tls = certs->clients["demo"];
  absl::StrAppend(&security.description,
                  "\nall connections use mutual TLS; a lease's holder is its client "
                  "certificate's subject (CN=client 1, CN=client 2)");
  return security;
}

using Server = std::unique_ptr<testing::ServerProcess>;

// One of fencegate's servers on 127.0.0.1, port 0 (a free port), its
// database and its log in the work directory.
absl::StatusOr<Server> StartServer(const std::string& binary, const std::string& name,
                                   const std::string& work_dir,
                                   const std::vector<std::string>& extra_args) {
  testing::ServerProcessOptions options;
  options.process.argv = {binary, absl::StrCat("--db=", work_dir, "/", name, ".db")};
  options.process.argv.insert(options.process.argv.end(), extra_args.begin(),
                              extra_args.end());
  options.process.death_signal = SIGTERM;  // if the demo dies, the server stops cleanly
  options.dir = work_dir;
  options.name = name;
  options.check_cancelled = CheckInterrupted;
  absl::StatusOr<Server> server = testing::ServerProcess::Start(std::move(options));
  if (absl::IsNotFound(server.status())) {
    return absl::NotFoundError(
        absl::StrCat(server.status().message(), "; build it first (./scripts/build)"));
  }
  return server;
}

// Where the server's status page is ("" if it has none), with TLS: https.
std::string StatusPage(const testing::ServerProcess& server, bool tls) {
  absl::StatusOr<int> port = server.MetricsPort();
  if (!port.ok()) return "";
  return absl::StrCat(tls ? "https" : "http", "://127.0.0.1:", *port, "/");
}

// The gateway's stale-write counter (fencegate_gateway_stale_refused_total
// with rpc="write", every resource class), read through its gRPC port as
// `fencegate status` reads it.
absl::StatusOr<double> StaleWritesRefused(const std::string& address,
                                          const ClientTlsFiles& tls) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(tls);
  if (!credentials.ok()) return credentials.status();
  auto stub =
      fencegate::v1::ServerInfo::NewStub(grpc::CreateChannel(address, *credentials));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  fencegate::v1::GetMetricsResponse response;
  grpc::Status status =
      stub->GetMetrics(&context, fencegate::v1::GetMetricsRequest(), &response);
  if (!status.ok()) return absl::UnavailableError(status.error_message());
  absl::StatusOr<std::vector<metrics::Sample>> samples =
      metrics::ParseExposition(response.exposition());
  if (!samples.ok()) return samples.status();
  return metrics::SumOf(*samples, "fencegate_gateway_stale_refused_total",
                        {{"rpc", "write"}})
      .value_or(0);
}

// Act 4's PostgreSQL: a server of the demo's own, with the SQL fencing API
// (checking signatures with the servers' key file) and the clients' table
// in a schema of its own.
struct DemoPostgres {
  std::unique_ptr<testing::PostgresServer> server;
  std::string uri;
};

absl::StatusOr<DemoPostgres> StartPostgres(const std::string& key_file) {
  DemoPostgres postgres;
  absl::StatusOr<std::unique_ptr<testing::PostgresServer>> server =
      testing::PostgresServer::Start();
  if (!server.ok()) return server.status();
  postgres.server = *std::move(server);
  absl::StatusOr<std::string> uri = postgres.server->NewSchemaUri();
  if (!uri.ok()) return uri.status();
  postgres.uri = *uri;
  try {
    pqxx::connection db(postgres.uri);
    if (absl::Status s = gateway::InstallSqlApi(db); !s.ok()) return s;
    absl::StatusOr<KeyRing> keys = KeyRing::Load(key_file);
    if (!keys.ok()) return keys.status();
    if (absl::Status s = gateway::LoadSqlKeys(db, *keys); !s.ok()) return s;
  } catch (const std::exception& e) {
    return absl::UnavailableError(e.what());
  }
  if (absl::Status s = CreateSqlCounterTable(postgres.uri); !s.ok()) return s;
  return postgres;
}

// Stops a server with SIGTERM and says so if it did not exit cleanly.
void StopServer(Server& server, const char* name) {
  if (server == nullptr) return;
  absl::Status stopped = server->Terminate(absl::Seconds(10));
  if (!stopped.ok())
    std::cerr << "warning: " << name << ": " << stopped.message() << "\n";
  server.reset();
}

int Run() {
  std::vector<std::string> acts = absl::StrSplit(absl::GetFlag(FLAGS_acts), ',');
  for (const std::string& act : acts) {
    if (act != "1" && act != "2" && act != "3" && act != "4") {
      std::cerr << "--acts: no act '" << act << "'; the acts are 1, 2, 3 and 4\n";
      return kExitCannotRun;
    }
  }
  const absl::Duration ttl = absl::GetFlag(FLAGS_ttl);
  if (ttl < absl::Milliseconds(300) || ttl > absl::Seconds(30)) {
    std::cerr << "--ttl must be between 300ms and 30s\n";
    return kExitCannotRun;
  }
  Intro();
  absl::StatusOr<std::unique_ptr<WorkDir>> dir = WorkDir::Create();
  if (!dir.ok()) {
    std::cerr << dir.status().message() << "\n";
    return kExitCannotRun;
  }
  absl::StatusOr<Security> security =
      MakeSecurity((*dir)->path(), absl::GetFlag(FLAGS_tls));
  if (!security.ok()) {
    std::cerr << "cannot set up keys and certificates: " << security.status().message()
              << "\n";
    return kExitCannotRun;
  }
  absl::StatusOr<Server> locks =
      StartServer(absl::GetFlag(FLAGS_lockservice_bin), "lockservice", (*dir)->path(),
                  security->server_args);
  absl::StatusOr<Server> gateway =
      locks.ok() ? StartServer(absl::GetFlag(FLAGS_gateway_bin), "gateway",
                               (*dir)->path(), security->server_args)
                 : locks.status();
  if (!locks.ok() || !gateway.ok()) {
    const absl::Status& why = locks.ok() ? gateway.status() : locks.status();
    std::cerr << "cannot start the servers: " << why.message() << "\n";
    if (locks.ok()) StopServer(*locks, "lock service");
    return Interrupted() ? 128 + InterruptSignal() : kExitCannotRun;
  }
  std::cout << "\nlock service: pid " << (*locks)->pid() << " on " << (*locks)->address()
            << "    gateway: pid " << (*gateway)->pid() << " on " << (*gateway)->address()
            << "\nwork dir: " << (*dir)->path() << "\n"
            << security->description << "\n";
  const bool tls = absl::GetFlag(FLAGS_tls);
  const std::string lock_page = StatusPage(**locks, tls);
  const std::string gateway_page = StatusPage(**gateway, tls);
  std::cout << "status pages, while the demo runs: lock service " << lock_page
            << "  gateway " << gateway_page
            << " (Prometheus: the same address + metrics)\n";

  Timeline timeline(&std::cout, absl::GetFlag(FLAGS_color) && isatty(STDOUT_FILENO));
  client::ClientOptions own;
  own.tls = security->demo_tls;
  absl::StatusOr<std::unique_ptr<client::LockClient>> lock_client =
      client::LockClient::Connect((*locks)->address(), own);
  absl::StatusOr<std::unique_ptr<client::GatewayClient>> gateway_client =
      client::GatewayClient::Connect((*gateway)->address(), own);
  if (!lock_client.ok() || !gateway_client.ok()) {
    std::cerr << "cannot connect: "
              << (lock_client.ok() ? gateway_client.status() : lock_client.status())
              << "\n";
    StopServer(*gateway, "gateway");
    StopServer(*locks, "lock service");
    return kExitCannotRun;
  }
  DemoSetup setup;
  setup.client_tls[0] = security->client_tls[0];
  setup.client_tls[1] = security->client_tls[1];
  setup.client_binary = absl::GetFlag(FLAGS_client_bin);
  setup.work_dir = (*dir)->path();
  setup.lockservice_port = (*locks)->port();
  setup.lockservice = (*locks)->address();
  setup.gateway = (*gateway)->address();
  setup.ttl = ttl;
  setup.timeline = &timeline;
  setup.lock = lock_client->get();
  setup.gateway_client = gateway_client->get();

  DemoPostgres postgres;
  if (std::find(acts.begin(), acts.end(), "4") != acts.end()) {
    absl::StatusOr<DemoPostgres> started =
        StartPostgres((*dir)->path() + "/signing-keys.txt");
    if (started.ok()) {
      postgres = *std::move(started);
      setup.postgres = postgres.uri;
      std::cout << "PostgreSQL for act 4: pid " << postgres.server->pid() << " on port "
                << postgres.server->port() << "\n";
    } else {
      std::cout << "\nAct 4 skipped: no PostgreSQL server could be started here ("
                << started.status().message()
                << "). Install Debian's postgresql package to see fencing in a table of "
                   "your own.\n";
      acts.erase(std::remove(acts.begin(), acts.end(), "4"), acts.end());
    }
  }

  std::vector<ActResult> results;
  absl::Status error;
  for (const std::string& act : acts) {
    const ActScript& script = act == "1"   ? kGcPauseAct
                              : act == "2" ? kExpiredLeaseAct
                              : act == "3" ? kUnfencedAct
                                           : kSqlTableAct;
    absl::StatusOr<ActResult> result = PlayAct(setup, script);
    if (!result.ok()) {
      error = result.status();
      break;
    }
    results.push_back(*std::move(result));
  }

  std::cout << "\n== Summary ==\n";
  bool all_as_expected = error.ok();
  for (const ActResult& r : results) {
    std::cout << (r.as_expected() ? "  as expected  " : "  NOT AS EXPECTED  ") << r.title
              << "\n      " << r.summary << "\n";
    for (const std::string& f : r.failures) std::cout << "      failed: " << f << "\n";
    all_as_expected = all_as_expected && r.as_expected();
  }
  if (!error.ok()) std::cout << "  stopped: " << error.message() << "\n";
  if (all_as_expected && results.size() == acts.size()) {
    std::cout
        << "\nWith the fence, the stale writes were refused and no update was lost;\n"
           "without it, the same schedule lost one. The lock alone was not enough.\n";
  }

  const std::string out = absl::GetFlag(FLAGS_out);
  absl::Status written = WriteFileAtomically(
      out, RenderSequenceSvg("fencegate demo: a paused lock holder and fencing tokens",
                             timeline.sections(), timeline.steps()));
  if (written.ok()) {
    std::cout << "\nSequence diagram: " << std::filesystem::absolute(out).string()
              << " (open it in a browser)\n";
  } else {
    std::cerr << "cannot write the diagram: " << written.message() << "\n";
  }

  absl::StatusOr<double> stale = StaleWritesRefused((*gateway)->address(), own.tls);
  std::cout << "\nStatus pages were at: lock service " << lock_page << ", gateway "
            << gateway_page << "\n";
  if (stale.ok()) {
    std::cout << "Stale-write counter at the end: fencegate_gateway_stale_refused_total"
                 "{rpc=\"write\"} = "
              << *stale << " (each one a write the fence refused)\n";
  } else {
    std::cout << "Stale-write counter: could not be read (" << stale.status().message()
              << ")\n";
  }

  std::cout.flush();
  // Our own connections first: a server waits for open ones when it stops.
  lock_client->reset();
  gateway_client->reset();
  StopServer(*gateway, "gateway");
  StopServer(*locks, "lock service");
  postgres.server.reset();  // fast shutdown, its temp dir removed
  std::cout << "Servers stopped; temp dir removed.\n";
  if (Interrupted()) return 128 + InterruptSignal();
  if (!error.ok()) return kExitCannotRun;
  return all_as_expected && written.ok() ? 0 : kExitNotAsExpected;
}

}  // namespace
}  // namespace fencegate::demo

int main(int argc, char** argv) {
  fencegate::demo::WatchForInterrupts();  // before any thread starts
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "demo_main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  fencegate::InitBuildInfo("fencegate-demo", std::move(usage));
  absl::SetProgramUsageMessage(
      "a paused lock holder vs. fencing tokens, with real processes.\n"
      "Usage: fencegate-demo [--out=FILE.svg] [--ttl=2s] [--acts=1,2,3,4] [--tls]\n"
      "Exit status: 0 every act as expected, 1 an act was not, 2 could not run, "
      "128+N interrupted by signal N.");
  absl::ParseCommandLine(argc, argv);
  return fencegate::demo::Run();
}

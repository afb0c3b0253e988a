// The Debian packages of this build (label package), as made by the ctest
// fixture package.debs (make_packages.sh: CPack, then dpkg -x of every
// package into a throwaway root):
//   - what each .deb holds (dpkg-deb --contents), with owners and modes,
//     its control fields and conffiles;
//   - lintian finds no error or warning (each override says why, in
//     packaging/debian/*.lintian-overrides);
//   - the systemd units pass `systemd-analyze verify`, and `systemd-analyze
//     security` rates them well hardened;
//   - from the unpacked root: every binary reports the version, each
//     server starts with the packaged flags file (the harness moves it to
//     a free port and a temp database) and stops cleanly, and Debian's
//     python3 imports the Python client and its generated stubs;
//   - the maintainer scripts, run with every command they call replaced by
//     a recorder: a fresh install makes the fencegate user and the state
//     directory and enables nothing; a purge deletes only this package's
//     state; the Python package's are byte-compiled on install and cleaned
//     on removal.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/must_run.h"
#include "harness/run_program.h"
#include "harness/server_process.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::Not;
using ::testing::UnorderedElementsAreArray;

const std::string kWork = FENCEGATE_PACKAGE_TEST_DIR;
const std::string kRoot = kWork + "/root";
const std::string kVersion = FENCEGATE_EXPECTED_VERSION;
const std::string kDebVersion = kVersion + "-1";
// The soname's version (major.minor, 0.x), and its package.
const std::string kSoversion = FENCEGATE_EXPECTED_SOVERSION;
const std::string kClientPackage = "libfencegate-client" + kSoversion;
const std::string kLib = "/usr/" FENCEGATE_INSTALL_LIBDIR;
const std::string kPythonPackage = "python3-fencegate";
// Debian's directory of Python 3 modules (every 3.x), and its copy in the root.
const std::string kDistPackages = "/usr/lib/python3/dist-packages";
const std::string kRootDistPackages = kRoot + kDistPackages;

std::string ReadFile(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string NativeArch() {
  return std::string(
      absl::StripAsciiWhitespace(MustRun({"dpkg", "--print-architecture"}).stdout_text));
}

// The .deb of `package`, of this machine's architecture or of `arch` ("all").
std::string Deb(const std::string& package, const std::string& arch = NativeArch()) {
  return absl::StrCat(kWork, "/debs/", package, "_", kDebVersion, "_", arch, ".deb");
}

std::string Field(const std::string& deb, const std::string& field) {
  return std::string(absl::StripAsciiWhitespace(
      MustRun({"dpkg-deb", "--field", deb, field}).stdout_text));
}

// "mode owner path" of each file and link in the package (directories left
// out), e.g. "-rwxr-xr-x root/root /usr/bin/fencegate".
std::vector<std::string> Contents(const std::string& package,
                                  const std::string& arch = NativeArch()) {
  std::vector<std::string> files;
  const std::string listing =
      MustRun({"dpkg-deb", "--contents", Deb(package, arch)}).stdout_text;
  for (absl::string_view line : absl::StrSplit(listing, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 6 || f[0][0] == 'd') continue;
    absl::string_view path = f[5];
    absl::ConsumePrefix(&path, ".");
    std::string file = absl::StrCat(f[0], " ", f[1], " ", path);
    if (f[0][0] == 'l' && f.size() == 8) absl::StrAppend(&file, " -> ", f[7]);  // a link
    files.push_back(file);
  }
  return files;
}

// What every package has: copyright, changelog, lintian overrides.
std::vector<std::string> Docs(const std::string& package) {
  return {"-rw-r--r-- root/root /usr/share/doc/" + package + "/changelog.Debian.gz",
          "-rw-r--r-- root/root /usr/share/doc/" + package + "/copyright",
          "-rw-r--r-- root/root /usr/share/lintian/overrides/" + package};
}

std::vector<std::string> ServerContents(const std::string& program,
                                        const std::string& flags) {
  std::vector<std::string> files = {
      "-rwxr-xr-x root/root /usr/bin/" + program,
      "-rw-r--r-- root/root /etc/fencegate/" + flags,
      "-rw-r--r-- root/root /lib/systemd/system/" + program + ".service",
      "-rw-r--r-- root/root /usr/share/man/man1/" + program + ".1.gz",
      "-rw-r--r-- root/root /usr/share/doc/" + program + "/examples/policy.example",
  };
  for (std::string& doc : Docs(program)) files.push_back(doc);
  return files;
}

TEST(PackageTest, ServerPackagesHoldBinaryUnitFlagsAndDocs) {
  EXPECT_THAT(Contents("fencegate-lockservice"),
              UnorderedElementsAreArray(
                  ServerContents("fencegate-lockservice", "lockservice.flags")));
  EXPECT_THAT(Contents("fencegate-gateway"), UnorderedElementsAreArray(ServerContents(
                                                 "fencegate-gateway", "gateway.flags")));
  for (const std::string package : {"fencegate-lockservice", "fencegate-gateway"}) {
    SCOPED_TRACE(package);
    const std::string flags = package == "fencegate-gateway" ? "gateway" : "lockservice";
    EXPECT_EQ(ReadFile(kWork + "/control/" + package + "/conffiles"),
              "/etc/fencegate/" + flags + ".flags\n");
    const std::string depends =
        MustRun({"dpkg-deb", "--field", Deb(package), "Depends"}).stdout_text;
    EXPECT_THAT(depends, HasSubstr("adduser"));
    EXPECT_THAT(depends, HasSubstr("libgrpc++1.51"));  // from dpkg-shlibdeps
    EXPECT_THAT(depends, Not(HasSubstr(kClientPackage)));
    for (const std::string script : {"postinst", "prerm", "postrm"}) {
      struct stat st;
      ASSERT_EQ(stat((kWork + "/control/" + package + "/" + script).c_str(), &st), 0)
          << script;
      EXPECT_EQ(st.st_mode & 0777, 0755) << script;
    }
  }
}

TEST(PackageTest, CliAndLibraryPackages) {
  std::vector<std::string> cli = {
      "-rwxr-xr-x root/root /usr/bin/fencegate",
      "-rw-r--r-- root/root /usr/share/fencegate/sql/fencegate_sql_api.sql",
      "-rw-r--r-- root/root /usr/share/man/man1/fencegate.1.gz"};
  for (std::string& doc : Docs("fencegate-cli")) cli.push_back(doc);
  EXPECT_THAT(Contents("fencegate-cli"), UnorderedElementsAreArray(cli));

  std::vector<std::string> runtime = {
      "-rw-r--r-- root/root " + kLib + "/libfencegate-client.so." + kVersion,
      "lrwxrwxrwx root/root " + kLib + "/libfencegate-client.so." + kSoversion +
          " -> libfencegate-client.so." + kVersion,
  };
  for (std::string& doc : Docs(kClientPackage)) runtime.push_back(doc);
  EXPECT_THAT(Contents(kClientPackage), UnorderedElementsAreArray(runtime));
  EXPECT_EQ(ReadFile(kWork + "/control/" + kClientPackage + "/shlibs"),
            "libfencegate-client " + kSoversion + " " + kClientPackage +
                " (= " + kDebVersion + ")\n");
  EXPECT_EQ(ReadFile(kWork + "/control/" + kClientPackage + "/triggers"),
            "activate-noawait ldconfig\n");

  const std::vector<std::string> dev = Contents("libfencegate-client-dev");
  EXPECT_THAT(
      dev, IsSupersetOf(std::vector<std::string>{
               "-rw-r--r-- root/root /usr/include/fencegate/client/lock_client.h",
               "-rw-r--r-- root/root /usr/include/fencegate/client/gateway_client.h",
               "-rw-r--r-- root/root /usr/include/fencegate/clock.h",
               "-rw-r--r-- root/root /usr/include/fencegate/v1/lock.pb.h",
               "-rw-r--r-- root/root /usr/include/fencegate/v1/lock.grpc.pb.h",
               "-rw-r--r-- root/root " + kLib + "/libfencegate-client.a",
               "lrwxrwxrwx root/root " + kLib +
                   "/libfencegate-client.so -> libfencegate-client.so." + kSoversion,
               "-rw-r--r-- root/root " + kLib + "/cmake/fencegate/fencegate-config.cmake",
               "-rw-r--r-- root/root " + kLib +
                   "/cmake/fencegate/fencegate-config-version.cmake",
               "-rw-r--r-- root/root " + kLib + "/pkgconfig/fencegate-client.pc",
               "-rw-r--r-- root/root /usr/share/fencegate/proto/fencegate/v1/lock.proto",
           }));
  for (const std::string& file : dev) {
    const std::string path = file.substr(file.find(" /") + 1);
    EXPECT_TRUE(absl::StartsWith(path, "/usr/include/fencegate/") ||
                absl::StartsWith(path, kLib + "/") ||
                absl::StartsWith(path, "/usr/share/fencegate/proto/") ||
                absl::StartsWith(path, "/usr/share/doc/libfencegate-client-dev/") ||
                absl::StartsWith(path, "/usr/share/lintian/overrides/"))
        << path;
  }
  EXPECT_THAT(MustRun({"dpkg-deb", "--field", Deb("libfencegate-client-dev"), "Depends"})
                  .stdout_text,
              HasSubstr(kClientPackage + " (= " + kDebVersion + ")"));
}

// The client's files as the source tree has them (clients/python/fencegate:
// its modules and py.typed, not bytecode nor stubs generated there), as
// dpkg-deb lists them in the package.
std::vector<std::string> PythonSourceFiles() {
  namespace fs = std::filesystem;
  const fs::path source = FENCEGATE_PYTHON_SOURCE_DIR;
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(source);
       it != fs::recursive_directory_iterator(); ++it) {
    const fs::path relative = fs::relative(it->path(), source);
    if (it->is_directory() &&
        (relative.filename() == "__pycache__" || relative == "v1")) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file() &&
               (relative.extension() == ".py" || relative == "py.typed")) {
      files.push_back(absl::StrCat("-rw-r--r-- root/root ", kDistPackages, "/fencegate/",
                                   relative.string()));
    }
  }
  return files;
}

// python3-fencegate holds exactly the client's modules, the stubs of each
// .proto, the dist-info that gives its version, and the docs: no bytecode.
TEST(PackageTest, PythonPackageHoldsTheClientAndItsStubs) {
  const std::string deb = Deb(kPythonPackage, "all");
  std::vector<std::string> files = PythonSourceFiles();
  const std::string dir = "-rw-r--r-- root/root " + kDistPackages + "/fencegate/";
  ASSERT_THAT(files, IsSupersetOf({dir + "__init__.py", dir + "lock_client.py",
                                   dir + "aio/__init__.py", dir + "py.typed"}));
  files.push_back(dir + "v1/__init__.py");
  for (const std::string proto : {"errors", "gateway", "lock", "server_info", "token"}) {
    files.push_back(dir + "v1/" + proto + "_pb2.py");
    files.push_back(dir + "v1/" + proto + "_pb2_grpc.py");
  }
  files.push_back(absl::StrCat("-rw-r--r-- root/root ", kDistPackages, "/fencegate-",
                               kVersion, ".dist-info/METADATA"));
  for (std::string& doc : Docs(kPythonPackage)) files.push_back(doc);
  EXPECT_THAT(Contents(kPythonPackage, "all"), UnorderedElementsAreArray(files));

  EXPECT_EQ(Field(deb, "Architecture"), "all");
  EXPECT_EQ(Field(deb, "Section"), "python");
  const std::string depends = Field(deb, "Depends");
  EXPECT_THAT(depends, HasSubstr("python3:any (>= 3.11~)"));
  EXPECT_THAT(depends, HasSubstr("python3-grpcio"));
  EXPECT_THAT(depends, HasSubstr("python3-protobuf"));
  EXPECT_THAT(depends, Not(HasSubstr("lib")));  // nothing of dpkg-shlibdeps
  EXPECT_EQ(Field(deb, "Suggests"), "python3-psycopg");
  for (const std::string script : {"postinst", "prerm"}) {
    struct stat st;
    ASSERT_EQ(stat((kWork + "/control/" + kPythonPackage + "/" + script).c_str(), &st), 0)
        << script;
    EXPECT_EQ(st.st_mode & 0777, 0755) << script;
  }
}

// Debian's python3 imports the client and its stubs from the unpacked root
// alone (-I: no $PYTHONPATH, no user site, not the working directory; -B:
// no bytecode written), as after `apt install ./python3-fencegate_*.deb`.
TEST(PackageTest, PythonClientImportsFromTheUnpackedRoot) {
  const std::string script =
      "import sys\n"
      "sys.path.insert(0, sys.argv[1])\n"
      "import fencegate, fencegate.aio\n"
      "from fencegate.v1 import lock_pb2, lock_pb2_grpc, gateway_pb2_grpc\n"
      "print(fencegate.__version__)\n"
      "print(fencegate.LockClient.__module__, fencegate.aio.LockClient.__module__)\n"
      "print(fencegate.__file__)\n"
      "print(lock_pb2.__file__)\n"
      "print(lock_pb2_grpc.LockServiceStub.__name__,"
      " gateway_pb2_grpc.GatewayStub.__name__)\n";
  ProgramResult python =
      MustRun({"/usr/bin/python3", "-I", "-B", "-c", script, kRootDistPackages});
  const std::vector<std::string> expected = {
      kVersion,
      "fencegate.lock_client fencegate.aio._locks",
      kRootDistPackages + "/fencegate/__init__.py",
      kRootDistPackages + "/fencegate/v1/lock_pb2.py",
      "LockServiceStub GatewayStub",
  };
  EXPECT_EQ(python.stdout_text, absl::StrJoin(expected, "\n") + "\n");
}

// Every override in packaging/debian/*.lintian-overrides comes right after
// a comment that says why.
TEST(PackageTest, LintianFindsNoErrorOrWarning) {
  std::vector<std::string> argv = {"lintian", "--fail-on", "error,warning",
                                   "--no-tag-display-limit", "--display-info"};
  for (const std::string package :
       {"fencegate-lockservice", "fencegate-gateway", "fencegate-cli",
        kClientPackage.c_str(), "libfencegate-client-dev", kPythonPackage.c_str()}) {
    argv.push_back(package == kPythonPackage ? Deb(package, "all") : Deb(package));
    const std::string overrides = kRoot + "/usr/share/lintian/overrides/" + package;
    if (!Exists(overrides)) continue;
    bool commented = false;
    for (absl::string_view line : absl::StrSplit(ReadFile(overrides), '\n')) {
      if (absl::StartsWith(line, "#")) {
        commented = true;
      } else if (!line.empty()) {
        EXPECT_TRUE(commented) << package << ": override without a reason: " << line;
        commented = false;
      }
    }
  }
  ProgramResult lintian = MustRun(argv);
  std::cout << lintian.stdout_text;
}

TEST(PackageTest, SystemdUnitsVerifyAndAreHardened) {
  for (const std::string program : {"fencegate-lockservice", "fencegate-gateway"}) {
    SCOPED_TRACE(program);
    const std::string unit = kRoot + "/lib/systemd/system/" + program + ".service";
    // verify also checks that ExecStart's and ExecReload's binaries exist
    // (in the unpacked root) and that Documentation='s man page opens (from
    // the root's man pages); unknown keys are only warnings, so any output
    // fails the test.
    ProgramResult verify =
        MustRun({"systemd-analyze", "verify", "--root=" + kRoot, unit}, absl::Minutes(1),
                {"MANPATH=" + kRoot + "/usr/share/man"});
    EXPECT_EQ(verify.stdout_text + verify.stderr_text, "");
    // An exposure of 2.0 or less, on systemd's scale from 0 (best) to 10:
    // these units score 1.5; without the system call filter and the empty
    // capability bound alone they would score 4.8 and fail.
    ProgramResult security =
        MustRun({"systemd-analyze", "security", "--offline=true", "--root=" + kRoot,
                 "--threshold=20", "--no-pager", unit});
    EXPECT_THAT(security.stdout_text, HasSubstr("Overall exposure level for"));
    const std::string text = ReadFile(unit);
    for (const std::string setting :
         {"User=fencegate", "NoNewPrivileges=yes", "ProtectSystem=strict",
          "ProtectHome=yes", "PrivateTmp=yes", "StateDirectory=fencegate",
          "Restart=on-failure", "ExecReload=/bin/kill -HUP $MAINPID"}) {
      EXPECT_THAT(text, HasSubstr("\n" + setting + "\n"));
    }
    EXPECT_THAT(
        text, HasSubstr("ExecStart=/usr/bin/" + program + " --flagfile=/etc/fencegate/"));
  }
}

TEST(PackageTest, BinariesFromTheUnpackedRootReportTheVersion) {
  for (const std::string program :
       {"fencegate-lockservice", "fencegate-gateway", "fencegate"}) {
    EXPECT_THAT(MustRun({kRoot + "/usr/bin/" + program, "--version"}).stdout_text,
                HasSubstr(absl::StrCat(program, " ", kVersion, " (git")));
  }
  // The man pages are help2man's rendering of --help.
  EXPECT_THAT(MustRun({"zcat", kRoot + "/usr/share/man/man1/fencegate-lockservice.1.gz"})
                  .stdout_text,
              HasSubstr("max_ttl"));
}

// Each server started as its unit starts it, from the packaged flags file;
// the harness's --listen (port 0) and a temp --db come after it on the
// command line and win.
TEST(PackageTest, ServersStartWithThePackagedFlagsFile) {
  TempDir dir;
  for (const auto& [program, flags] : std::vector<std::pair<std::string, std::string>>{
           {"fencegate-lockservice", "lockservice.flags"},
           {"fencegate-gateway", "gateway.flags"}}) {
    SCOPED_TRACE(program);
    const std::string flagfile = kRoot + "/etc/fencegate/" + flags;
    ASSERT_THAT(ReadFile(flagfile), HasSubstr("--db=/var/lib/fencegate/"));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServerProcess> server,
                         ServerProcess::Start(kRoot + "/usr/bin/" + program,
                                              {"--flagfile=" + flagfile,
                                               "--db=" + dir.File(program + ".db")},
                                              dir.path(), program));
    EXPECT_THAT(server->WaitForLog(dir.File(program + ".db")), IsOk());
    EXPECT_TRUE(Exists(dir.File(program + ".db")));
    EXPECT_THAT(server->Terminate(), IsOk()) << server->LogTail();
  }
}

// docs/python.md's quick start, as written (the first python block under
// "## Quick start"), run twice by Debian's python3 with the unpacked
// python3-fencegate alone (as after `apt install`) against the packaged
// servers, whose addresses replace the documented defaults: the count it
// keeps goes 1, then 2. (The virtual environment path of the same page:
// clients/python/tests/test_quickstart.py.)
TEST(PackageTest, PythonQuickStartRunsFromThePackage) {
  const std::string docs = ReadFile(FENCEGATE_PYTHON_DOCS);
  const size_t section = docs.find("\n## Quick start\n");
  ASSERT_NE(section, std::string::npos) << "no '## Quick start' in docs/python.md";
  const std::string open = "```python\n";
  const size_t begin = docs.find(open, section);
  ASSERT_NE(begin, std::string::npos) << "no python block in the quick start";
  const size_t end = docs.find("```", begin + open.size());
  ASSERT_NE(end, std::string::npos);
  std::string code = docs.substr(begin + open.size(), end - begin - open.size());

  TempDir dir;
  std::vector<std::unique_ptr<ServerProcess>> servers;
  for (const std::string program : {"fencegate-lockservice", "fencegate-gateway"}) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ServerProcess> server,
                         ServerProcess::Start(kRoot + "/usr/bin/" + program,
                                              {"--db=" + dir.File(program + ".db")},
                                              dir.path(), program));
    servers.push_back(std::move(server));
  }
  for (const auto& [documented, address] :
       std::vector<std::pair<std::string, std::string>>{
           {"127.0.0.1:7070", servers[0]->address()},
           {"127.0.0.1:7071", servers[1]->address()}}) {
    const size_t at = code.find(documented);
    ASSERT_NE(at, std::string::npos) << "the quick start no longer names " << documented;
    code.replace(at, documented.size(), address);
  }
  const std::string script = "import sys\nsys.path.insert(0, sys.argv[1])\n" + code;
  for (const std::string total : {"1", "2"}) {
    ProgramResult run =
        MustRun({"/usr/bin/python3", "-I", "-B", "-c", script, kRootDistPackages});
    EXPECT_THAT(run.stdout_text, ::testing::MatchesRegex("token [0-9]+ total " + total + "\n"));
  }
  for (auto& server : servers) EXPECT_THAT(server->Terminate(), IsOk()) << server->LogTail();
}

// The maintainer scripts of a server package, run with every command they
// call replaced by one that records its arguments.
class MaintainerScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string command :
         {"getent", "adduser", "mkdir", "chown", "deb-systemd-helper",
          "deb-systemd-invoke", "systemctl", "rm", "rmdir", "py3compile", "pypy3compile",
          "py3clean"}) {
      std::ofstream stub(dir_.File(command));
      stub << "#!/bin/sh\necho \"" << command << " $*\" >> " << dir_.File("calls") << "\n"
           << (command == "getent" || command == "deb-systemd-helper" ? "exit 1\n"
                                                                      : "exit 0\n");
      stub.close();
      chmod(dir_.File(command).c_str(), 0755);
    }
  }

  // The commands `script` of `package` ran, one per line.
  std::string Run(const std::string& package, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/bin/sh",
                                     kWork + "/control/" + package + "/" + args[0]};
    argv.insert(argv.end(), args.begin() + 1, args.end());
    std::remove(dir_.File("calls").c_str());
    MustRun(argv, absl::Seconds(30), {"PATH=" + dir_.path() + ":/usr/bin:/bin"});
    return ReadFile(dir_.File("calls"));
  }

  TempDir dir_;
};

TEST_F(MaintainerScriptTest,
       FreshInstallMakesTheUserAndTheStateDirectoryAndEnablesNothing) {
  const std::string calls = Run("fencegate-lockservice", {"postinst", "configure", ""});
  EXPECT_THAT(calls,
              HasSubstr("adduser --system --group --quiet --home /var/lib/fencegate "
                        "--no-create-home"));
  EXPECT_THAT(calls, HasSubstr(" fencegate\n"));
  if (!Exists("/var/lib/fencegate")) {
    EXPECT_THAT(calls, HasSubstr("mkdir -m 0750 /var/lib/fencegate"));
    EXPECT_THAT(calls, HasSubstr("chown fencegate:fencegate /var/lib/fencegate"));
  }
  EXPECT_THAT(calls,
              HasSubstr("deb-systemd-helper update-state fencegate-lockservice.service"));
  EXPECT_THAT(calls, Not(HasSubstr("deb-systemd-helper enable")));
  EXPECT_THAT(calls, Not(HasSubstr("deb-systemd-invoke start")));
}

TEST_F(MaintainerScriptTest, PurgeDeletesOnlyThisPackagesState) {
  const std::string lock = Run("fencegate-lockservice", {"postrm", "purge"});
  EXPECT_THAT(lock, HasSubstr("deb-systemd-helper purge fencegate-lockservice.service"));
  EXPECT_THAT(
      lock, HasSubstr("rm -f /var/lib/fencegate/locks.db /var/lib/fencegate/locks.db-wal "
                      "/var/lib/fencegate/locks.db-shm /var/lib/fencegate/locks.db.lock"));
  EXPECT_THAT(lock, Not(HasSubstr("objects.db")));
  EXPECT_THAT(lock, HasSubstr("rmdir --ignore-fail-on-non-empty /var/lib/fencegate"));
  EXPECT_THAT(lock, Not(HasSubstr("deluser")));
  const std::string gateway = Run("fencegate-gateway", {"postrm", "purge"});
  EXPECT_THAT(gateway, HasSubstr("rm -f /var/lib/fencegate/objects.db"));
  EXPECT_THAT(gateway, Not(HasSubstr("locks.db")));
  // A plain remove keeps the state.
  EXPECT_THAT(Run("fencegate-gateway", {"postrm", "remove"}), Not(HasSubstr("rm -f")));
}

// The Python package's scripts do what dh_python3's do: compile its modules
// after installing (PyPy's too, if there), delete the bytecode before
// removing.
TEST_F(MaintainerScriptTest, PythonModulesAreCompiledOnInstallAndCleanedOnRemove) {
  EXPECT_EQ(Run(kPythonPackage, {"postinst", "configure", ""}),
            "py3compile -p python3-fencegate\npypy3compile -p python3-fencegate\n");
  EXPECT_EQ(Run(kPythonPackage, {"prerm", "remove"}), "py3clean -p python3-fencegate\n");
}

}  // namespace
}  // namespace fencegate::testing

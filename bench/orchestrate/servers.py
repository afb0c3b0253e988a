"""Starting the servers a benchmark run measures, each on 127.0.0.1 with a
free port and its data in the run's temp dir, each waited for with a
deadline (processes.wait_until):

- fencegate's lock service and gateway (metrics on), and with --metrics-ab
  the same pair with metrics off and a scraper of the pair with metrics on;
- with --storage postgres, PostgreSQL from Debian's binaries, a gateway on
  it, and the SQL fencing API installed in a schema of its own;
- the empty-call echo server; a single-node etcd (fsync on);
- with --store etcd, fencegate's lock service on an etcd of its own, two
  instances (leader and standby, found from the leader key);
- Redis with appendfsync always, and everysec (not durable).

  Servers(options, procs, work, build_dir).start()   what the options ask for
  servers.target[name]                               its host:port
  servers.postgres_server_pids()                     the PostgreSQL topology's

Standard library only.
"""

import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import threading

from .options import Exit
from .processes import free_port, log, output, quiet, wait_until


class Scraper:
    """GETs /metrics of the given servers every second, as a Prometheus
    with a short scrape interval would (--metrics-ab). A thread of the
    script (its CPU counted as the benchmark's own, as the bash subshell's
    was); stop() ends it within a scrape's timeout."""

    def __init__(self, port_files):
        self.port_files = port_files
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="metrics-scraper", daemon=True)

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopped.set()
        self.thread.join(timeout=10)

    def _loop(self):
        while not self.stopped.wait(1.0):
            for path in self.port_files:
                try:
                    with open(path) as f:
                        port = int(f.read().strip())
                    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                        # HTTP/1.0: the server closes when it has answered.
                        s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
                        while s.recv(65536):
                            pass
                except (OSError, ValueError):
                    pass


def _version_key(path):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", path)]


class Servers:
    def __init__(self, options, procs, work, build_dir):
        self.o = options
        self.procs = procs
        self.work = work
        self.build_dir = build_dir
        self.target = {}  # name -> host:port (sql: a PostgreSQL URL)
        self.fg_leader = self.fg_standby = ""  # --store etcd: the two instances' names
        self.loop_redis = False
        self.scraper = None
        self.pg_bin = ""

    def binary(self, path):
        return os.path.join(self.build_dir, path)

    def pid(self, name):
        return self.procs.pid(name)

    def start_port_file_server(self, name, binary, *args):
        """A fencegate-style server: it listens on port 0 and publishes the
        port in a file once serving."""
        port_file = os.path.join(self.work, f"{name}.port")
        self.procs.start(name, [binary, "--listen=127.0.0.1:0", f"--port_file={port_file}",
                                *args])
        wait_until(self.procs, name, 30,
                   lambda: os.path.exists(port_file) and os.path.getsize(port_file) > 0)
        with open(port_file) as f:
            self.target[name] = f"127.0.0.1:{f.read().strip()}"

    def start(self):
        o, w = self.o, self.work
        lockservice = self.binary("lockservice/fencegate-lockservice")
        gateway = self.binary("gateway/fencegate-gateway")
        if o.has("fencegate") or o.has("python") or o.has("loop"):
            # Metrics on (the default), on free ports published in *.metrics_port.
            self.start_port_file_server(
                "lockservice", lockservice, f"--db={w}/lockservice.db",
                "--metrics_listen=127.0.0.1:0", f"--metrics_port_file={w}/lockservice.metrics_port")
            self.start_port_file_server(
                "gateway", gateway, f"--db={w}/gateway.db", "--metrics_listen=127.0.0.1:0",
                f"--metrics_port_file={w}/gateway.metrics_port")
            log(f"fencegate: lock service {self.target['lockservice']}, "
                f"gateway {self.target['gateway']}")
        # --metrics-ab: the same pair with metrics off, and a scraper of the
        # pair with metrics on (every second, both servers, as Prometheus would).
        if o.metrics_ab:
            self.start_port_file_server("lockservice-nometrics", lockservice,
                                        f"--db={w}/lockservice-nometrics.db", "--metrics_listen=")
            self.start_port_file_server("gateway-nometrics", gateway,
                                        f"--db={w}/gateway-nometrics.db", "--metrics_listen=")
            self.scraper = Scraper([f"{w}/lockservice.metrics_port", f"{w}/gateway.metrics_port"])
            self.scraper.start()
            log("metrics A/B: metrics off at lock service "
                f"{self.target['lockservice-nometrics']}, gateway "
                f"{self.target['gateway-nometrics']}; scraping the pair with metrics on every "
                "second")
        if o.storage == "postgres":
            self.start_postgres()
        if o.has("grpc-empty") or o.has("python") or o.has("loop"):
            self.start_port_file_server("echo", self.binary("bench/fencegate-echo-server"))
            log(f"echo server (grpc-empty, python-echo, echo-stream): {self.target['echo']}")
        if o.has("loop"):
            self.start_port_file_server("echo-cq", self.binary("bench/fencegate-echo-server"),
                                        "--api=cq")
            log(f"echo server on gRPC's asynchronous API (echo-cq): {self.target['echo-cq']}")
        if o.has("etcd"):
            port = self.start_etcd("etcd", "bench")
            self.target["etcd"] = f"127.0.0.1:{port}"
            log(f"etcd {etcd_version()}: {self.target['etcd']}")
        if o.store:
            self.start_fencegate_on_etcd(lockservice)
        # loop's Redis only where it is installed (with --build-dir nothing is).
        self.loop_redis = o.has("loop") and shutil.which("redis-server") is not None
        if o.has("redis") or o.has("python") or self.loop_redis:
            self.start_redis("redis-always", "always")
        if o.has("redis"):
            self.start_redis("redis-everysec", "everysec")

    def stop_scraper(self):
        if self.scraper:
            self.scraper.stop()
            self.scraper = None

    # ------------------------------------------------------------ PostgreSQL

    def start_postgres(self):
        """PostgreSQL from Debian's binaries, its data and unix socket in the
        temp dir, on a free loopback port; the gateway reaches it over TCP, as
        it would a database on another host. Defaults otherwise: fsync and
        synchronous_commit on. It refuses to run as root: then it runs as the
        postgres user Debian's package creates."""
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key)
        self.pg_bin = bins[-1] if bins else ""
        if not os.access(os.path.join(self.pg_bin, "postgres"), os.X_OK):
            log("--storage postgres: no PostgreSQL server (apt-get install postgresql)")
            raise Exit(1)
        b = lambda tool: os.path.join(self.pg_bin, tool)  # noqa: E731
        pg_dir = os.path.join(self.work, "pg")
        os.makedirs(pg_dir, exist_ok=True)
        as_user = []
        if os.getuid() == 0:
            os.chmod(self.work, 0o711)  # postgres may pass through, not list
            user = pwd.getpwnam("postgres")
            os.chown(pg_dir, user.pw_uid, user.pw_gid)
            as_user = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
        initdb_log = os.path.join(self.work, "initdb.log")
        with open(initdb_log, "w") as f:
            ok = run_logged(as_user + [b("initdb"), "-D", f"{pg_dir}/data", "-U", "fencegate",
                                       "--auth=trust", "--encoding=UTF8", "--locale=C",
                                       "--no-sync"], f, timeout=300)
        if not ok:
            self.procs.die_with_log(initdb_log, "initdb failed")
        port = free_port()
        self.procs.start("postgres", as_user + [b("postgres"), "-D", f"{pg_dir}/data", "-p",
                                                str(port), "-k", pg_dir,
                                                "-c", "listen_addresses=127.0.0.1"])
        wait_until(self.procs, "postgres", 60,
                   lambda: quiet([b("pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)]))
        self.start_port_file_server("gateway-pg", self.binary("gateway/fencegate-gateway"),
                                    f"--storage=postgresql://fencegate@127.0.0.1:{port}/postgres")
        version = (output([b("postgres"), "--version"]).split() + ["", "", ""])[2]
        log(f"fencegate on PostgreSQL {version}: gateway {self.target['gateway-pg']}, "
            f"database 127.0.0.1:{port}")
        # The SQL fencing API's writes go to a schema of their own, so their
        # fences and the gateway's never meet.
        pg_log = self.procs.log_path("postgres")
        with open(pg_log, "a") as f:
            ok = run_logged([b("psql"), "-q", "-h", "127.0.0.1", "-p", str(port), "-U",
                             "fencegate", "-d", "postgres", "-c",
                             "CREATE SCHEMA IF NOT EXISTS sql_bench"], f)
        if not ok:
            self.procs.die_with_log(pg_log, "cannot create the schema sql_bench")
        self.target["sql"] = (f"postgresql://fencegate@127.0.0.1:{port}/postgres"
                              "?options=-csearch_path%3Dsql_bench")
        with open(pg_log, "a") as f:
            ok = run_logged([self.binary("cli/fencegate"), "sql-install",
                             f"--postgres={self.target['sql']}"], f)
        if not ok:
            self.procs.die_with_log(pg_log, "fencegate sql-install failed")

    def postgres_children(self):
        """The postmaster's children (its backends, which serve the gateway's
        connections), as PIDs; [] without PostgreSQL."""
        parent = self.pid("postgres")
        if not parent:
            return []
        children = []
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                with open(stat) as f:
                    text = f.read()
            except OSError:
                continue
            if text[text.rindex(")") + 2:].split()[1] == parent:
                children.append(int(stat.split("/")[2]))
        return sorted(children)

    def postgres_server_pids(self):
        """The PostgreSQL topology's server processes: lock service, gateway,
        and the database (the postmaster and its backends)."""
        names = [self.pid("lockservice"), self.pid("gateway-pg"), self.pid("postgres")]
        return ",".join(names + [str(c) for c in self.postgres_children()])

    # ------------------------------------------------------------------ etcd

    def start_etcd(self, name, member):
        """A single-member etcd `name`, data in WORK/NAME; its client port.
        Defaults otherwise (fsync of the WAL before every commit is
        acknowledged). Compaction keeps the history from growing over the
        run, as in production."""
        client_port, peer_port = free_port(), free_port()
        self.procs.start(name, [
            "etcd", "--name", member, "--data-dir", os.path.join(self.work, name),
            "--listen-client-urls", f"http://127.0.0.1:{client_port}",
            "--advertise-client-urls", f"http://127.0.0.1:{client_port}",
            "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-cluster", f"{member}=http://127.0.0.1:{peer_port}",
            "--auto-compaction-mode=revision", "--auto-compaction-retention=100000"])
        wait_until(self.procs, name, 30, lambda: quiet(
            ["etcdctl", f"--endpoints=127.0.0.1:{client_port}", "--command-timeout=2s",
             "endpoint", "health"], env=etcdctl_env()))
        return client_port

    def start_fencegate_on_etcd(self, lockservice):
        """fencegate's lock service on its own single-member etcd (fsync on),
        two instances; the leader and the standby are found from the leader key."""
        port = self.start_etcd("etcd-fencegate", "fencegate")
        for name in ("lockservice-etcd-a", "lockservice-etcd-b"):
            self.start_port_file_server(name, lockservice, f"--store=etcd://127.0.0.1:{port}")

        def leader_is(name):
            value = output(["etcdctl", f"--endpoints=127.0.0.1:{port}", "--command-timeout=2s",
                            "get", "/fencegate/lockservice/leader", "--print-value-only"],
                           env=etcdctl_env())
            return value.rstrip("\n") == self.target[name]

        wait_until(self.procs, "lockservice-etcd-a", 30,
                   lambda: leader_is("lockservice-etcd-a") or leader_is("lockservice-etcd-b"))
        if leader_is("lockservice-etcd-a"):
            self.fg_leader, self.fg_standby = "lockservice-etcd-a", "lockservice-etcd-b"
        else:
            self.fg_leader, self.fg_standby = "lockservice-etcd-b", "lockservice-etcd-a"
        log(f"fencegate on etcd {etcd_version()} 127.0.0.1:{port}: leader "
            f"{self.target[self.fg_leader]}, standby {self.target[self.fg_standby]}")

    # ----------------------------------------------------------------- Redis

    def start_redis(self, name, fsync):
        port = free_port()
        data = os.path.join(self.work, name)
        os.makedirs(data, exist_ok=True)
        self.procs.start(name, ["redis-server", "--bind", "127.0.0.1", "--port", str(port),
                                "--dir", data, "--appendonly", "yes", "--appendfsync", fsync,
                                "--save", "", "--daemonize", "no"])
        self.target[name] = f"127.0.0.1:{port}"
        wait_until(self.procs, name, 30,
                   lambda: "PONG" in output(["redis-cli", "-p", str(port), "ping"]))
        log(f"{name} (appendfsync {fsync}): {self.target[name]}")


def etcdctl_env():
    return dict(os.environ, ETCDCTL_API="3")


def etcd_version():
    """The third word of `etcd --version`'s first line ("3.4.23")."""
    lines = output(["etcd", "--version"]).splitlines()
    words = lines[0].split() if lines else []
    return words[2] if len(words) > 2 else ""


def run_logged(argv, log_file, timeout=120):
    """Runs `argv` with its output appended to the open `log_file`; whether
    it exited 0 within `timeout` seconds."""
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=log_file,
                              stderr=subprocess.STDOUT, timeout=timeout).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False

"""./scripts/bench's command line: its flags, their defaults and the checks
between them, exactly as the bash script had them (its header, which --help
prints, documents every flag).

  parse(argv, script)   an Options, or raises Exit (status 0 after --help,
                        2 for a wrong argument, its message printed)

Standard library only.
"""

import dataclasses

DEFAULT_SYSTEMS = "fencegate,etcd,redis,grpc-empty,fsync,python,loop"
KNOWN_SYSTEMS = ("fencegate", "etcd", "redis", "grpc-empty", "fsync", "python", "loop")
DEFAULT_SCALE_SIZES = "10000,100000,1000000"


class Exit(Exception):
    """Leave with `status`, after printing `message` (when there is one) to
    stderr; raised before anything was started, or caught by main's cleanup."""

    def __init__(self, status, message=""):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclasses.dataclass
class Options:
    quick: bool = False
    systems: str = DEFAULT_SYSTEMS
    runs: str = ""
    duration: str = ""
    warmup: str = ""
    build_dir: str = ""
    sha: str = ""
    out: str = ""
    docs: str = "auto"  # "auto", then True or False
    profile: bool = False
    metrics_ab: bool = False
    scale: bool = False
    scale_sizes: str = DEFAULT_SCALE_SIZES
    workloads: str = ""
    store: str = ""  # "" (SQLite only) or "etcd"
    storage: str = "sqlite"
    scale_out: str = ""  # --scale's results file: --out, else latest.json
    scale_runs: list = dataclasses.field(default_factory=list)  # --duration, --warmup as given

    def has(self, system):
        """Whether --systems names `system` (the bash `has`: ",LIST," holds ",system,")."""
        return f",{system}," in f",{self.systems},"

    def system_list(self):
        return self.systems.replace(",", " ").split()


def help_text(script):
    """The header comment of `script` (scripts/bench) from its second line to
    `set -euo pipefail`, without the leading "# "."""
    out = []
    with open(script) as f:
        lines = f.read().split("\n")
    for line in lines[1:]:
        if line.startswith("set -euo"):
            break
        if line.startswith("#"):
            line = line[2:] if line.startswith("# ") else line[1:]
        out.append(line)
    return "\n".join(out) + "\n"


def join_separated(argv):
    """"--store etcd" is "--store=etcd", "--storage postgres" "--storage=postgres"."""
    out = []
    i = 0
    while i < len(argv):
        if argv[i] in ("--store", "--storage") and i + 1 < len(argv):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


# --flag=VALUE: the attribute it sets.
_VALUED = {"--storage": "storage", "--systems": "systems", "--runs": "runs",
           "--workloads": "workloads", "--duration": "duration", "--warmup": "warmup",
           "--build-dir": "build_dir", "--sha": "sha", "--out": "out",
           "--scale-sizes": "scale_sizes", "--store": "store"}
# --flag: the attribute and the value it sets.
_BARE = {"--quick": ("quick", True), "--docs": ("docs", True), "--no-docs": ("docs", False),
         "--profile": ("profile", True), "--metrics-ab": ("metrics_ab", True),
         "--scale": ("scale", True)}


def parse(argv, script):
    o = Options()
    for arg in join_separated(argv):
        name, eq, value = arg.partition("=")
        if eq and name in _VALUED:
            setattr(o, _VALUED[name], value)
        elif arg in _BARE:
            setattr(o, *_BARE[arg])
        elif arg in ("-h", "--help"):
            print(help_text(script), end="")
            raise Exit(0)
        else:
            raise Exit(2, f"bench: unknown argument '{arg}' (see --help)")
    o.scale_out = o.out or "bench/results/latest.json"
    if o.duration:
        o.scale_runs.append(f"--duration={o.duration}")
    if o.warmup:
        o.scale_runs.append(f"--warmup={o.warmup}")
    if o.quick:
        o.runs, o.duration, o.warmup = o.runs or "1", o.duration or "500ms", o.warmup or "200ms"
        o.out = o.out or "bench/results/quick.json"
    else:
        o.runs, o.duration, o.warmup = o.runs or "3", o.duration or "2s", o.warmup or "500ms"
        o.out = o.out or "bench/results/latest.json"
    if o.store in ("", "sqlite"):
        o.store = ""
    elif o.store == "etcd":
        if not o.has("fencegate"):
            raise Exit(2, "bench: --store=etcd needs fencegate in --systems")
    else:
        raise Exit(2, f"bench: unknown --store '{o.store}' (etcd; the embedded SQLite store "
                      "always runs)")
    for s in o.system_list():
        if s not in KNOWN_SYSTEMS:
            raise Exit(2, f"bench: unknown system '{s}' in --systems")
    if o.storage == "postgres":
        if not o.has("fencegate"):
            raise Exit(2, "bench: --storage postgres needs fencegate in --systems")
    elif o.storage != "sqlite":
        raise Exit(2, f"bench: unknown --storage '{o.storage}' (sqlite or postgres)")
    if o.metrics_ab and not o.has("fencegate"):
        raise Exit(2, "bench: --metrics-ab needs fencegate in --systems")
    if not o.runs.isdigit():
        raise Exit(2, f"bench: --runs={o.runs}: not a whole number")
    if o.docs == "auto":
        o.docs = not o.quick and o.systems == DEFAULT_SYSTEMS and not o.workloads
        if o.scale and o.scale_sizes != DEFAULT_SCALE_SIZES:
            o.docs = False
    return o


def packages(o):
    """The Debian packages a run of `o` needs beyond ./scripts/install-deps'
    own (without --build-dir: the script installs them, then builds)."""
    extra = ["python3"]
    if o.has("etcd") or o.store:
        extra += ["etcd-server", "etcd-client"]
    if o.has("redis") or o.has("loop") or o.scale:
        extra += ["redis-server", "libhiredis-dev", "libevent-dev"]
    # The Python load generator: Debian's grpcio, protobuf (protoc compiles
    # bench/echo.proto for it) and redis-py.
    if o.has("python"):
        extra += ["redis-server", "python3-redis", "python3-grpcio", "python3-protobuf"]
    if o.profile:
        extra += ["linux-perf"]
    if o.storage == "postgres":
        extra += ["postgresql"]
    return extra

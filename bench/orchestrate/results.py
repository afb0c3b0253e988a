"""After the runs: the results JSON (bench/report.py aggregate), the metrics
A/B summary, and the regenerated results page and charts (bench/report.py
render and render-scale). The report is run as its own command, as the
bench tests run it.

  git_sha(sha, dirty=True)                 --sha, else this tree's HEAD
  aggregate(o, raw, machine, ...)          writes --out (with the failover
                                           trials' lines, failover.py)
  metrics_ab_summary(raw)                  ops/s off vs on, to stderr
  render_docs(o) / render_scale_docs(o)

Standard library only.
"""

import collections
import json
import os
import statistics
import subprocess
import sys

from .options import Exit
from .processes import log

REPORT = "bench/report.py"
MARKDOWN = "docs/benchmarks.md"


def report(*args):
    """bench/report.py with `args`; its exit status ends the run when it fails."""
    status = subprocess.run([sys.executable, REPORT, *args]).returncode
    if status != 0:
        raise Exit(status)


def git_sha(sha, dirty=True):
    """`sha` when given, else this tree's HEAD ("unknown" outside git), with
    -dirty when `dirty` and tracked files differ from it."""
    if sha:
        return sha
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    out = head.stdout.strip()
    if dirty:
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=60)
        if status.stdout.strip():
            out += "-dirty"
    return out


def aggregate(o, raw, machine, sha, load_before, load_after, cpu_before, cpu_after,
              failovers=""):
    out_dir = os.path.dirname(o.out)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    report("aggregate", f"--raw={raw}", f"--machine={machine}", f"--git_sha={sha}",
           f"--load_before={load_before}", f"--load_after={load_after}",
           f"--quick={1 if o.quick else 0}", f"--cpu_before={cpu_before}",
           f"--cpu_after={cpu_after}",
           f"--syncs={'bench/results/syncs.jsonl' if o.profile else ''}",
           f"--runs={o.runs}", f"--duration={o.duration}", f"--warmup={o.warmup}",
           f"--failover={failovers}", f"--out={o.out}")


def metrics_ab_summary(raw):
    """Medians of the runs, metrics off vs on, per point (docs/observability.md)."""
    ops = collections.defaultdict(list)
    with open(raw) as f:
        for line in f:
            r = json.loads(line)
            if r["system"] in ("fencegate", "fencegate-nometrics"):
                ops[(r["workload"], r["resources"], r["clients"], r["system"])].append(
                    r["ops_per_s"])
    err = sys.stderr
    print("bench: metrics A/B, median ops/s (metrics off -> on):", file=err)
    for (w, res, c, s) in sorted(k for k in ops if k[3] == "fencegate-nometrics"):
        off = statistics.median(ops[(w, res, c, s)])
        on = ops.get((w, res, c, "fencegate"))
        if not on or off <= 0:
            continue
        on = statistics.median(on)
        print(f"bench:   {w:13s} resources={res:<5d} clients={c:<3d} {off:10.0f} -> {on:10.0f}"
              f"  ({100 * (on - off) / off:+.1f}%)", file=err)


def render_docs(o):
    """The results page and its chart (and the Scale chart, when the results
    have "scale"); the hand-written analysis page is not touched."""
    report("render", f"--results={o.out}", f"--markdown={MARKDOWN}",
           "--svg=docs/benchmarks.svg", "--scale_svg=docs/benchmarks-scale.svg")
    log(f"wrote {MARKDOWN} and docs/benchmarks.svg")


def render_scale_docs(o):
    report("render-scale", f"--results={o.scale_out}", f"--markdown={MARKDOWN}",
           "--svg=docs/benchmarks-scale.svg")
    log(f"wrote the Scale section of {MARKDOWN} and docs/benchmarks-scale.svg")

#!/usr/bin/env python3
"""Turns fencegate-loadgen's JSON lines into bench/results/latest.json and
docs/benchmarks.md + docs/benchmarks.svg. Called by ./scripts/bench and
the bench tests (tests/bench_tests.cmake). This file is the command line;
the work is in report_aggregate.py (CPU snapshots, medians),
report_markdown.py (the page), report_svg.py (the chart), report_tables.py,
report_systems.py, report_python.py, report_loop.py, report_failover.py
and scale_report.py (svg_chart.py: what the two charts share).

  report.py cpu PID...                 one CPU-time snapshot (JSON) for the
                                       "was the machine busy" figure
  report.py aggregate --raw=F ...      medians of the runs -> results JSON
  report.py render --results=F --markdown=F --svg=F [--scale_svg=F]
  report.py render-scale --results=F --markdown=F --svg=F
                                       only the Scale section (bench/
                                       scale_report.py) and its chart, from
                                       the key "scale" (./scripts/bench --scale)

Standard library only. The results schema (each entry of "results"):
  system      fencegate | fencegate-stream (the same servers, every call
              on their Session streams) | fencegate-etcd (its lock service on etcd, to the
              leader) | fencegate-etcd-standby (the same, through a standby)
              | fencegate-pg (its gateway on PostgreSQL, --storage postgres)
              | sql-fenced, sql-plain (a write to a PostgreSQL table of the
              user's own, with and without the SQL fencing API's
              fencegate_fence, --storage postgres)
              | etcd | redis | grpc-empty | python-fencegate, python-redis,
              python-echo (bench/python/loadgen.py: fencegate.aio, redis.asyncio,
              a grpc.aio stream to the echo server; bench/report_python.py)
              | fencegate-loop, redis-loop, echo-stream, echo-cq (fencegate-loadgen
              --shape=loop: event-loop clients; bench/report_loop.py)
  durability  fsync (acknowledged only after fsync) | everysec (Redis,
              NOT durable) | none (the empty call)
  workload    lock_cycle | fenced_write | handoff | pipelined_write (one
              client, 32 writes in flight) | shared_cycle | rw_mix |
              multi_cycle (the lock kinds, issue 21) | rpc
  resources, clients
  ops_per_s, p50_us, p99_us   medians over the runs
  runs        every run's own figures, in the order they ran
  detail      CPU µs and context switches per op, server and client;
              fencegate: gateway_items_per_commit and
              lockservice_items_per_commit, the calls one commit carried (from
              each server's commit histogram, over the run with its warm-up);
              handoff: waiting-time percentiles and fairness (medians);
              rw_mix: writes/s and the writers' waiting-time percentiles
The key "failover" (aggregate --failover=FILE: the election failover
trials, bench/orchestrate/failover.py) has one entry per system, as
report_failover.summarize gives it.
The key "scale" (bench/scale.py) is kept when aggregate rewrites the file.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_aggregate import aggregate, cpu_snapshot  # noqa: E402 (bench/, beside this file)
from report_markdown import render, render_scale  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    cpu = sub.add_parser("cpu")
    cpu.add_argument("pids", nargs="*")
    agg = sub.add_parser("aggregate")
    for name in ["raw", "machine", "git_sha", "load_before", "load_after", "quick", "runs",
                 "duration", "warmup", "out"]:
        agg.add_argument(f"--{name}", required=True)
    agg.add_argument("--syncs", default="", help="syncs.jsonl of a --profile run (optional)")
    agg.add_argument("--cpu_before", default="")
    agg.add_argument("--cpu_after", default="")
    agg.add_argument("--failover", default="",
                     help="the election failover trials' JSON lines (optional)")
    ren = sub.add_parser("render")
    for name in ["results", "markdown", "svg"]:
        ren.add_argument(f"--{name}", required=True)
    ren.add_argument("--scale_svg", default="",
                     help="also the Scale chart, when the results have the key \"scale\"")
    ren_scale = sub.add_parser("render-scale")
    for name in ["results", "markdown", "svg"]:
        ren_scale.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    if args.command == "cpu":
        print(json.dumps(cpu_snapshot(args.pids)))
    elif args.command == "aggregate":
        aggregate(args)
    elif args.command == "render-scale":
        render_scale(args)
    else:
        render(args)


if __name__ == "__main__":
    sys.exit(main())

"""The systems the benchmark pages know, in the order their columns and rows
appear, with their labels and chart colours; and the lock kinds' points.
Shared by bench/report_aggregate.py (the order results are sorted in),
bench/report_tables.py, bench/report_markdown.py and bench/report_svg.py.

A system is (system, durability) as fencegate-loadgen reports them
(bench/report.py's header lists the values). Standard library only.
"""

SYSTEM_ORDER = [
    ("fencegate", "fsync"),
    ("fencegate-stream", "fsync"),
    ("fencegate-etcd", "fsync"),
    ("fencegate-etcd-standby", "fsync"),
    ("fencegate-pg", "fsync"),
    ("sql-fenced", "fsync"),
    ("sql-plain", "fsync"),
    ("etcd", "fsync"),
    ("redis", "fsync"),
    ("redis", "everysec"),
]
LABEL = {
    ("fencegate", "fsync"): "fencegate",
    ("fencegate-stream", "fsync"): "fencegate, streams",
    ("fencegate-etcd", "fsync"): "fencegate on etcd",
    ("fencegate-etcd-standby", "fsync"): "fencegate on etcd, via standby",
    ("fencegate-pg", "fsync"): "fencegate on PostgreSQL",
    ("sql-fenced", "fsync"): "your table, fenced in SQL",
    ("sql-plain", "fsync"): "your table, unfenced",
    ("etcd", "fsync"): "etcd",
    ("redis", "fsync"): "Redis always",
    ("redis", "everysec"): "Redis everysec (not durable)",
    ("grpc-empty", "none"): "empty gRPC call",
}
COLOR = {
    ("fencegate", "fsync"): "#1f6feb",
    ("fencegate-stream", "fsync"): "#0a3069",
    ("fencegate-etcd", "fsync"): "#79c0ff",
    ("fencegate-etcd-standby", "fsync"): "#a5d6ff",
    ("fencegate-pg", "fsync"): "#56d364",
    ("sql-fenced", "fsync"): "#2ea043",
    ("sql-plain", "fsync"): "#8b949e",
    ("etcd", "fsync"): "#e36209",
    ("redis", "fsync"): "#b31d28",
    ("redis", "everysec"): "#f0a3a3",
}
# The lock kinds' points (issue 21), all at 32 clients: (workload, resources, title).
KINDS_POINTS = [("shared_cycle", 1, "shared cycle, hot resource"),
                ("rw_mix", 4, "rw_mix 90/10, 4 hot resources"),
                ("multi_cycle", 1000, "multi-acquire of 4, own sets (1,000 resources)"),
                ("multi_cycle", 8, "multi-acquire of 4, overlapping (8 resources)")]

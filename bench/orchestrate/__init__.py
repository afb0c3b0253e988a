"""./scripts/bench's process orchestration (run as `python3 bench/orchestrate`,
which ./scripts/bench execs): options.py (the command line), processes.py
(starting, waiting for and stopping processes by PID), servers.py (the peer
servers), plan.py (the points), point.py (one loadgen run, CPU snapshots),
profiling.py (--profile), results.py (aggregate, the pages), main.py (the
sequence and the cleanup). Standard library only.
"""

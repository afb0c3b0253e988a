#!/usr/bin/env bash
# A harness of the etcd-cluster topology killed with kill -9 leaves no
# process running (every child has a death signal, child_process.h) and
# only namespaces named after itself, which the next run (here:
# --remove_stale_namespaces, what every run does first) removes; nobody
# else's namespace is touched (docs/torture-topologies.md).
#   crashed_harness_test.sh <fencegate-torture> <work dir>
set -euo pipefail
torture="$1"
work="$2"
rm -rf "$work"
mkdir -p "$work"
ip netns add fgtest-bystander-$$  # not a run's: must survive
trap 'ip netns del fgtest-bystander-$$ 2>/dev/null || true' EXIT

"$torture" --profile=etcd-quick --schedules=1 --seed=1 --work_dir="$work" >"$work/out" 2>&1 &
harness=$!
# Until its etcd members run (each in a namespace of the run's).
for _ in $(seq 1 600); do
  if compgen -G "$work/schedule-1/etcd-m*.log" >/dev/null; then break; fi
  sleep 0.1
done
compgen -G "$work/schedule-1/etcd-m*.log" >/dev/null || { echo "no etcd started"; cat "$work/out"; exit 1; }
mapfile -t namespaces < <(ip netns list | awk '{print $1}' | grep "^fgt-$harness-" || true)
[ "${#namespaces[@]}" -gt 0 ] || { echo "no namespace of the run"; exit 1; }
running=0
for ns in "${namespaces[@]}"; do
  running=$((running + $(ip netns pids "$ns" 2>/dev/null | wc -l)))
done
[ "$running" -gt 0 ] || { echo "no process of the run in its namespaces yet"; exit 1; }
kill -9 "$harness"
wait "$harness" 2>/dev/null || true

# Its children die with it: no process is left in its namespaces.
for _ in $(seq 1 100); do
  left=0
  for ns in "${namespaces[@]}"; do
    [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] || left=1
  done
  [ "$left" -eq 0 ] && break
  sleep 0.1
done
[ "$left" -eq 0 ] || { echo "processes outlived the harness"; exit 1; }

"$torture" --remove_stale_namespaces
for ns in "${namespaces[@]}"; do
  if ip netns list | awk '{print $1}' | grep -qx "$ns"; then
    echo "stale namespace $ns was not removed"; exit 1
  fi
done
ip netns list | awk '{print $1}' | grep -qx "fgtest-bystander-$$" || {
  echo "a namespace that is not a run's was removed"; exit 1; }
echo "PASS: ${#namespaces[@]} namespaces of the killed run removed, none of its $running processes left"

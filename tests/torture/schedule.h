// Schedule: the faults of one torture run, drawn from a seed, and the
// profile (how many workers, resources, faults of each kind) they follow.
// The same seed and profile give the same schedule: the same faults, at the
// same offsets, on the same targets, with the same durations. (Thread
// interleavings, and so the exact histories, differ from run to run.)
//
// Thread safety: plain values and pure functions.
#ifndef FENCEGATE_TESTS_TORTURE_SCHEDULE_H_
#define FENCEGATE_TESTS_TORTURE_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fencegate::torture {

enum class FaultKind {
  kPauseHolder,       // SIGSTOP a worker at some moment while it holds a lease
  kKillHolder,        // kill -9 a worker while it holds a lease; start it
                      // again as a new incarnation (a new name)
  kPauseBeforeWrite,  // the worker stops itself between its lease check and
                      // its write: the worst moment
  kStaleWriterRace,   // a worker stopped before its write resumes after its
                      // lease expired, while the new holder's fenced read
                      // waits in the same stalled gateway commit (or in
                      // another gateway's, whose stall ends first)
  kKillRestart,       // kill -9 a server; restart it after `duration`
  kStopServer,        // SIGSTOP a server for `duration`
  kFailpointCrash,    // the server crashes at `failpoint`; restart it
  kClockJump,         // the server's wall clock jumps by `clock_offset`,
                      // stays there for `duration`, and jumps back
  // A server on SQLite under the disk-fault preload (disk_faults):
  kDiskFull,      // its disk is full for `duration`, then space returns
  kFsyncFailure,  // its next fsync fails; it stops itself (a commit's) or
                  // not (a checkpoint's); either way it is then killed and
                  // restarted after a power cut
  kWriteFailure,  // the same with its next write
  // The etcd-cluster topology's own:
  kPauseLeaderPastTtl,  // the lock-service leader is stopped (SIGSTOP) with
                        // the commit of the harness's probe grant in flight
                        // (stalled at the failpoint lock.before_token_commit)
                        // until another instance leads and granted the probe
                        // resource too, then resumed: the term guard must
                        // refuse that commit
  kQuorumLoss,          // kill -9 the etcd leader and a follower; restart
                        // both after `duration`
  kPartition,           // cut the links `partition` names, both ways, for
                        // `duration` (0: see Partition), then heal them
};

enum class Target { kLockService, kGateway, kWorker, kEtcd };

// Which instance of a replicated service a fault hits, decided when it is
// delivered: the lock service's leader (the instance the leader key in
// etcd names) or a standby; the etcd leader or a follower. kOnly: there is
// one (the SQLite topology), or the fault needs no choice.
enum class Role { kOnly, kLeader, kStandby };

// The network cuts of the etcd-cluster topology (every server and worker on
// a host of its own, harness/network_namespaces.h). Each is cut both
// ways and healed after the fault's duration.
enum class Partition {
  kNone,
  // The lock-service leader from every etcd member, not from its clients
  // (the workers, the gateways, the other instances): its term must end
  // before another instance's begins.
  kLeaderFromEtcd,
  // One etcd member (`role`: the etcd leader or a follower) from every
  // other host.
  kIsolateEtcdMember,
  // etcd split 2/1, the etcd leader on the minority side with the
  // lock-service leader; the standbys with the majority. Clients reach all.
  kEtcdSplitLeaderMinority,
  // Every gateway from every lock-service instance: the grant-time fence
  // feed (WatchFences) stops. Duration 0: held until every gateway's
  // stream has ended (its keep-alive noticed), so the gateways must catch
  // up after the heal. Meanwhile the harness acquires and releases a lease
  // on a resource of its own, whose fence only that catch-up raises.
  kGatewaysFromLockService,
  // One worker holding a lease from every lock-service instance, not from
  // its gateway (the Kleppmann partition), for `ttl_factor` x its TTL.
  kWorkerFromLockService,
};

struct Fault {
  FaultKind kind = FaultKind::kPauseHolder;
  Target target = Target::kWorker;
  Role role = Role::kOnly;
  Partition partition = Partition::kNone;
  int worker = -1;             // kWorker, and kStaleWriterRace's stale writer
  int gateway = -1;            // kGateway: which one (a race: its writer's gateway)
  absl::Duration at;           // after the traffic started
  double ttl_factor = 1;       // pauses last this many times the lease's TTL
  absl::Duration duration;     // stop, downtime, clock-jump hold
  std::string failpoint;       // kFailpointCrash
  absl::Duration clock_offset;  // kClockJump
  // kStaleWriterRace on plain fencing: the stale writer's lease is released
  // by an operator (the harness, with its token) instead of expiring, as
  // `etcdctl lease revoke` or Redisson's forceUnlock free the lock of a
  // holder that looks dead. No expiry mark is drawn then, so the
  // successor's token is the next one after the stale writer's.
  bool release_by_operator = false;
};

// How many faults of each kind one server gets.
struct ServerFaults {
  int kill_restarts = 1;
  int stops = 1;
  int failpoint_crashes = 1;
  int clock_jumps = 1;
  std::vector<std::string> failpoints;  // crashes pick from these
  // Only with ScheduleProfile::disk_faults:
  int disk_fulls = 0;
  int fsync_failures = 0;
  int write_failures = 0;
};

// Where the gateways keep fences and objects: each in a SQLite file of its
// own (then there is one gateway), or all in one PostgreSQL database, which
// the run starts (harness/postgres_server.h) and never faults.
enum class GatewayStorage { kSqlite, kPostgres };

// The servers of a run: the lock service and `gateways` gateways on
// `storage`; worker i talks to gateway i % gateways. The lock service is
// one instance on SQLite, or (etcd_members > 0) `lockservices` instances
// on an etcd cluster of the run's own, one leading and the others
// forwarding; worker i then talks to instance i % lockservices first (and
// to the others when that one is gone). A replicated topology runs every
// process (etcd members, instances, gateways, PostgreSQL, workers) on a
// host of its own in a network of the run's own, so links can be cut.
struct Topology {
  std::string name = "sqlite";
  int gateways = 1;
  GatewayStorage storage = GatewayStorage::kSqlite;
  // How long a worker's gateway call may take before its outcome counts as
  // unknown. With several gateways, longer than one can hold a request that
  // it will still apply (docs/torture-topologies.md, "Two gateways on one
  // PostgreSQL").
  absl::Duration gateway_timeout = absl::Seconds(15);
  int lockservices = 1;
  int etcd_members = 0;  // 0: the lock service on SQLite
  // --etcd_session_ttl of every instance: how long a dead leader blocks
  // the next one.
  absl::Duration etcd_session_ttl = absl::Seconds(2);
  // How long a fault waits for its moment (a worker holding a lease or
  // reaching its write, a commit reaching a failpoint) before it counts as
  // undelivered. Longer on etcd: failovers, losses of quorum and partitions
  // overlap there, and with the holders' own faults all three hot
  // resources can stay taken or held back (a parked waiter's place is kept
  // for its client's retry at each new leader, --waiter_reattach_grace)
  // for over 20 s.
  absl::Duration reach_timeout = absl::Seconds(30);

  bool replicated() const { return etcd_members > 0; }
};

// Signed tokens on every server and grant-time fencing on the gateways
// (docs/security.md), or the plain Kleppmann fencing.
enum class Security { kPlain, kSecure, kAlternate /* secure on odd seeds */ };

// The faults only a replicated topology has (Topology::replicated()). On
// it, the lock service's ServerFaults hit the leader and a standby by
// turns (kills and stops; clock jumps and failpoint crashes hit the
// leader).
struct ReplicatedFaults {
  int leader_pauses_past_ttl = 1;
  int etcd_kill_restarts = 2;  // the etcd leader and a follower by turns
  int etcd_stops = 2;          // likewise
  int etcd_quorum_losses = 1;
  int leader_from_etcd = 1;  // partitions, one Partition each
  int etcd_member_isolations = 1;
  int etcd_splits = 1;
  int fence_feed_cuts = 1;
  int worker_cuts = 1;
  // The share of fence-feed cuts held until the gateways' streams ended
  // (the others last 1-5 s, and the stream may resume as it was).
  double fence_feed_cuts_until_streams_end = 0.5;
  // The cuts of the leader from etcd last from this to 6 s (the session
  // TTL is 2 s).
  absl::Duration min_leader_cut = absl::Seconds(1);
};

struct ScheduleProfile {
  std::string name = "default";
  Topology topology;
  Security security = Security::kAlternate;
  int workers = 6;
  // SQL workers (worker.h): after the `workers`, as worker indices
  // workers .. workers + sql_workers - 1, on the same hot resources; they
  // increment through PostgreSQL transactions fenced with fencegate_fence
  // instead of through a gateway (GatewayStorage::kPostgres only). A race
  // never takes one as its stale writer (it stalls gateway commits); they
  // get pauses of their own, drawn after every other fault, so the other
  // faults of a seed are what they were without them.
  int sql_workers = 0;
  int sql_holder_pauses = 0;
  int sql_pauses_before_write = 0;
  int resources = 3;
  absl::Duration traffic = absl::Seconds(20);  // faults fall inside it
  absl::Duration min_ttl = absl::Seconds(1);
  absl::Duration max_ttl = absl::Seconds(3);
  absl::Duration max_think = absl::Milliseconds(50);
  int holder_pauses = 3;
  int pauses_before_write = 3;
  // kill -9 of gateway workers holding a lease (a leader among them),
  // each then started again (WorkerProcess::Restart).
  int holder_kills = 0;
  int stale_writer_races = 2;  // on the timeline of the writer's gateway
  double release_by_operator = 0.5;  // the share of races that use it
  ServerFaults lockservice{1, 1, 1, 1, {"lock.before_commit", "lock.after_commit"}};
  // Each gateway gets these.
  ServerFaults gateway{1, 1, 1, 1, {"gateway.before_commit", "gateway.after_commit"}};
  ReplicatedFaults replicated;  // only on a replicated topology
  // The kinds of lock (docs/semantics.md): the share of each gateway
  // worker's rounds that read with a shared lease, take one of the
  // semaphore's `permits` permits (SemaphoreName()), or take two hot
  // resources in one Acquire (worker.h); the rest are writer rounds.
  double shared_rounds = 0;
  double permit_rounds = 0;
  double multi_rounds = 0;
  uint32_t permits = 2;
  // The share of each gateway worker's rounds that campaign for
  // ElectionName() (worker.h); with any, those workers observe it too.
  double elect_rounds = 0;
  std::string planted_bug;  // empty: the correct system
  // The servers on SQLite run under the disk-fault preload (tests/disk/):
  // they get the ServerFaults' disk faults, and every restart of one
  // follows a power cut of its database (server_node.h).
  bool disk_faults = false;
};

struct Schedule {
  uint64_t seed = 0;
  ScheduleProfile profile;
  bool secure = false;  // signed tokens and grant-time fencing
  std::vector<Fault> faults;  // by `at`
};

Schedule MakeSchedule(const ScheduleProfile& profile, uint64_t seed);

// The name of worker `index`: "w<index>", or "sql<i>" for SQL worker i
// (index = profile.workers + i).
std::string WorkerName(const ScheduleProfile& profile, int index);

// The name of hot resource `index`: "hot-<index>".
std::string ResourceName(int index);
// The semaphore of the permit rounds: "semaphore".
std::string SemaphoreName();
// The election of the election rounds: "election".
std::string ElectionName();

// The name of gateway `index` of a topology: "gateway" when it is the only
// one, else "gateway-<index>". Names its ServerNode and its files.
std::string GatewayName(const Topology& topology, int index);
// The same for the lock service's instances: "lockservice", "lockservice-<i>".
std::string LockServiceName(const Topology& topology, int index);

// Every fault counts as one promised fault.
int PromisedFaults(const Schedule& schedule);

std::string DescribeFault(const Schedule& schedule, const Fault& fault);

// "default": every kind of fault on 3 hot resources. "quick": the same,
// shorter, for a smoke run. "races" (stale-writer races on one hot
// resource), "lock-crashes" (failpoint crashes before the lock service's
// commit), "lock-restarts" (kill -9 of the lock service), "gateway-restart"
// (one kill -9 of the gateway): one kind of fault each, the schedules the
// planted bugs run (planted_bugs.h). "postgres-two-gateways": two gateways
// on one PostgreSQL (topology postgres-two-gateways) with workers on both,
// under pauses, races, kill -9, SIGSTOP and failpoint crashes of either
// gateway, and kill -9 of the lock service; two SQL workers among them
// (sql_workers), paused too. "sql-pauses": SQL workers paused at the worst
// moment on one hot resource (topology postgres-two-gateways), the
// schedules of the SQL worker's planted bug. "etcd-cluster": the replicated
// topology (below) under every fault of "postgres-two-gateways", the lock
// service's faults on its leader and standbys, etcd's faults and the
// partitions. "etcd-quick": a few of those, for a smoke run. "kinds": the
// kinds of lock: readers with shared leases among the writers, permit
// holders of a semaphore and multi-resource Acquires, under holder pauses
// (past the TTL, and at each round's worst moment) and the servers'
// faults. "kinds-contention": the same rounds on four hot resources with no
// faults, the schedules of the kinds' planted bugs. "kinds-paused-readers":
// readers paused between their two reads among writers, the schedules of
// the gateway's shared-read planted bug. "etcd-kinds": etcd-quick's faults
// with the rounds of "kinds" (torture.etcd_cluster.kinds). "etcd-leader-partitions",
// "etcd-leader-pauses", "etcd-standbys", "etcd-fence-feed-cuts": the schedules of the
// etcd planted bugs. "disk-faults": both servers on a failing disk (full,
// failed fsyncs and writes, power cuts at every kill and crash) among
// pauses and races. "disk-fsync": failed fsyncs alone, the schedules of
// the disk's planted bug. "elections": eight candidates of one election
// (and its observers) among writers, leaders paused past their TTL, the
// servers' faults; "etcd-elections" the same on etcd-quick's faults;
// "elections-paused-leaders": leaders paused at their worst moment alone,
// the schedules of the election's planted bug.
absl::StatusOr<ScheduleProfile> ProfileNamed(const std::string& name);

// "sqlite" (one gateway on its own SQLite file, what every profile but
// postgres-two-gateways uses), "postgres-two-gateways" (two gateways on
// one PostgreSQL database) or "etcd-cluster" (three lock-service instances
// on a three-member etcd cluster, and two gateways on one PostgreSQL).
absl::StatusOr<Topology> TopologyNamed(const std::string& name);

}  // namespace fencegate::torture

#endif  // FENCEGATE_TESTS_TORTURE_SCHEDULE_H_

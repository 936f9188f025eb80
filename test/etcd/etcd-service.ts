/**
 * Starts throwaway etcd members for the tests: a single member, or a cluster of several members
 * with distinct client and peer ports and one --initial-cluster, each on free loopback ports with
 * its data dir in a temp directory. Members can be killed, paused and restarted one by one for the
 * fault cases. FENCEGATE_TEST_ETCD_URL (an etcd:// URL) replaces the started services when set.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.js';

export interface EtcdMember {
  name: string;
  clientPort: number;
  peerPort: number;
  process: ChildProcess | null;
}

export interface EtcdCluster {
  /** etcd://127.0.0.1:port[,…] for every member. */
  url: string;
  members: EtcdMember[];
  /** SIGKILLs one member (it stays down until restart). */
  kill(member: EtcdMember): Promise<void>;
  pause(member: EtcdMember): void;
  resume(member: EtcdMember): void;
  /** Starts a killed member again on its data dir. */
  restart(member: EtcdMember): Promise<void>;
  /** The member that is leader now, asked through etcdctl. */
  leader(): EtcdMember;
  /** Whether a running member knows a leader now, asked through etcdctl. */
  hasLeader(member: EtcdMember): boolean;
  stop(): Promise<void>;
}

function endpoint(member: EtcdMember): string {
  return `http://127.0.0.1:${member.clientPort}`;
}

function isHealthy(member: EtcdMember): boolean {
  try {
    execFileSync(
      'etcdctl',
      ['--endpoints', endpoint(member), '--command-timeout=1s', 'endpoint', 'health'],
      {
        stdio: 'pipe',
        env: { ...process.env, ETCDCTL_API: '3' },
      },
    );
    return true;
  } catch {
    return false;
  }
}

async function waitHealthy(members: EtcdMember[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const member of members) {
    while (!isHealthy(member)) {
      if (Date.now() > deadline) {
        throw new Error(
          `etcd member ${member.name} on port ${member.clientPort} did not become healthy`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

interface MemberStatus {
  Endpoint: string;
  Status: { header: { member_id: number }; leader?: number };
}

function statusOf(members: EtcdMember[]): MemberStatus[] {
  const out = execFileSync(
    'etcdctl',
    [
      '--endpoints',
      members.map(endpoint).join(','),
      '--command-timeout=2s',
      'endpoint',
      'status',
      '-w',
      'json',
    ],
    { encoding: 'utf8', env: { ...process.env, ETCDCTL_API: '3' } },
  );
  return JSON.parse(out) as MemberStatus[];
}

/** Raft timers of a cluster's members, in milliseconds. */
export interface EtcdTimers {
  heartbeatMs: number;
  electionMs: number;
}

/**
 * Short timers, for the fault cases: a new leader within about a second. A member heartbeats to
 * its peers every interval even when idle, so the clusters that live for the whole run keep
 * etcd's defaults (100 and 1,000 ms), which cost half the CPU while they wait.
 */
export const FAULT_TIMERS: EtcdTimers = { heartbeatMs: 50, electionMs: 500 };
const DEFAULT_TIMERS: EtcdTimers = { heartbeatMs: 100, electionMs: 1000 };

/**
 * Starts `size` members forming one cluster; resolves when every member answers. `flags` go to
 * every member as they are (a small `--max-txn-ops`, for one).
 */
export async function startEtcdCluster(
  size: number,
  timers: EtcdTimers = DEFAULT_TIMERS,
  flags: readonly string[] = [],
): Promise<EtcdCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-etcd-'));
  const members: EtcdMember[] = [];
  for (let i = 0; i < size; i += 1) {
    members.push({
      name: `m${i}`,
      clientPort: await freePort(),
      peerPort: await freePort(),
      process: null,
    });
  }
  const initialCluster = members
    .map((member) => `${member.name}=http://127.0.0.1:${member.peerPort}`)
    .join(',');
  const token = `fencegate-test-${members[0]?.peerPort ?? 0}`;
  const launch = (member: EtcdMember): void => {
    const child = spawn(
      'etcd',
      [
        '--name',
        member.name,
        '--data-dir',
        join(dir, member.name),
        '--listen-client-urls',
        endpoint(member),
        '--advertise-client-urls',
        endpoint(member),
        '--listen-peer-urls',
        `http://127.0.0.1:${member.peerPort}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${member.peerPort}`,
        '--initial-cluster',
        initialCluster,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        token,
        '--heartbeat-interval',
        String(timers.heartbeatMs),
        '--election-timeout',
        String(timers.electionMs),
        '--logger',
        'zap',
        '--log-level',
        'error',
        ...flags,
      ],
      { stdio: 'ignore' },
    );
    member.process = child;
    child.once('exit', () => {
      if (member.process === child) member.process = null;
    });
  };
  for (const member of members) launch(member);
  const cluster: EtcdCluster = {
    url: `etcd://${members.map((member) => `127.0.0.1:${member.clientPort}`).join(',')}`,
    members,
    async kill(member) {
      const child = member.process;
      if (child === null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    pause(member) {
      member.process?.kill('SIGSTOP');
    },
    resume(member) {
      member.process?.kill('SIGCONT');
    },
    async restart(member) {
      if (member.process !== null) return;
      launch(member);
      await waitHealthy([member], 20_000);
    },
    leader() {
      const statuses = statusOf(members.filter((member) => member.process !== null));
      const leaderStatus = statuses.find((s) => s.Status.header.member_id === s.Status.leader);
      const member = members.find((m) => leaderStatus?.Endpoint === endpoint(m));
      if (member === undefined) throw new Error('no etcd leader');
      return member;
    },
    hasLeader(member) {
      // etcd leaves `leader` out of the answer when it is 0 (no leader).
      return statusOf([member]).some((status) => (status.Status.leader ?? 0) !== 0);
    },
    async stop() {
      for (const member of members) {
        cluster.resume(member);
        await cluster.kill(member);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitHealthy(members, 30_000);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

export interface EtcdService {
  /** Single member. */
  url: string;
  /** Three members. */
  clusterUrl: string;
  origin: string;
  stop(): Promise<void>;
}

/**
 * A cluster for the whole run, started a second time on other ports if the first start never
 * became healthy: a port found free can be taken by another process before etcd binds it.
 */
async function startOnFreshPorts(size: number): Promise<EtcdCluster> {
  try {
    return await startEtcdCluster(size);
  } catch {
    return await startEtcdCluster(size);
  }
}

/** The etcd services for the test run, or an Error saying what is missing. */
export async function findOrStartEtcd(): Promise<EtcdService | Error> {
  const explicit = process.env.FENCEGATE_TEST_ETCD_URL;
  if (explicit !== undefined && explicit !== '') {
    return {
      url: explicit,
      clusterUrl: explicit,
      origin: 'FENCEGATE_TEST_ETCD_URL',
      stop: () => Promise.resolve(),
    };
  }
  try {
    execFileSync('sh', ['-c', 'command -v etcd && command -v etcdctl'], { stdio: 'pipe' });
  } catch {
    // The install command is the test group's to print (test/helpers/stores/etcd.ts).
    return new Error('etcd and etcdctl are not on PATH');
  }
  const [single, cluster] = await Promise.all([startOnFreshPorts(1), startOnFreshPorts(3)]);
  return {
    url: single.url,
    clusterUrl: cluster.url,
    origin: `a single member and a 3-member cluster started on loopback (${single.url}; ${cluster.url})`,
    stop: async () => {
      await Promise.all([single.stop(), cluster.stop()]);
    },
  };
}

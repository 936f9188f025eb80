/**
 * CPU spent per operation, split between this process and the database server: where a
 * contender's cost goes when both share the machine's cores. The database's share is the CPU of
 * every process named `postgres` on this host, and of those it reaped (/proc, Linux only; null
 * elsewhere, or when the server is on another host). Background workers are included.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface CpuReading {
  processMicros: number;
  databaseTicks: number | null;
}

export interface CpuPerOp {
  processMicros: number;
  databaseMicros: number | null;
}

function clockTicksPerSecond(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
}

const TICKS_PER_SECOND = clockTicksPerSecond();

/** utime + stime of the local postgres processes, in clock ticks; null without /proc. */
function databaseTicks(): number | null {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  let total = 0;
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended while we read
    }
    const close = stat.lastIndexOf(')');
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
    const fields = stat.slice(close + 2).split(' ');
    // After the name: state is field 3 of stat(5); utime and stime are 14 and 15; cutime and
    // cstime (16, 17) hold the CPU of children reaped, so backends that ended still count.
    total += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return total;
}

export function readCpu(local: boolean): CpuReading {
  const usage = process.cpuUsage();
  return {
    processMicros: usage.user + usage.system,
    databaseTicks: local ? databaseTicks() : null,
  };
}

export function cpuPerOp(before: CpuReading, after: CpuReading, operations: number): CpuPerOp {
  const ops = Math.max(1, operations);
  const database =
    before.databaseTicks === null || after.databaseTicks === null
      ? null
      : (((after.databaseTicks - before.databaseTicks) / TICKS_PER_SECOND) * 1e6) / ops;
  return {
    processMicros: (after.processMicros - before.processMicros) / ops,
    databaseMicros: database,
  };
}

export function formatCpu(cpu: CpuPerOp): string {
  const database = cpu.databaseMicros === null ? 'n/a' : `${cpu.databaseMicros.toFixed(0)} µs`;
  return `CPU per op: this process ${cpu.processMicros.toFixed(0)} µs, PostgreSQL ${database}`;
}

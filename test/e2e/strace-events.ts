/**
 * Reading an `strace -f -ttt -T -y` log as timed system calls: each call with its start and end
 * (microseconds), the path or socket its descriptor names, its arguments as printed and its result. A
 * call another thread interrupted is printed in two lines ("<unfinished ...>" and "<... resumed>");
 * the two are joined here.
 */
import { readFileSync } from 'node:fs';

export interface SyscallEvent {
  pid: number;
  name: string;
  /** The descriptor's path as `-y` prints it (`/x/y.db-wal`, `socket:[123]`), if any. */
  path: string;
  /** The arguments as printed, both halves of an interrupted call. */
  args: string;
  result: string;
  /** Microseconds since the epoch, as integers: a double cannot hold seconds to the microsecond. */
  start: number;
  end: number;
}

function micros(printed: string): number {
  const [seconds, fraction = ''] = printed.split('.');
  return Number(seconds) * 1_000_000 + Number(fraction.padEnd(6, '0').slice(0, 6));
}

const COMPLETE = /^(\d+) +(\d+\.\d+) (\w+)\((.*)\) += (.*?) <(\d+\.\d+)>$/;
const UNFINISHED = /^(\d+) +(\d+\.\d+) (\w+)\((.*) <unfinished \.\.\.>$/;
const RESUMED = /^(\d+) +(\d+\.\d+) <\.\.\. (\w+) resumed>(.*)\) += (.*?) <(\d+\.\d+)>$/;
const FD_PATH = /^\d+<([^>]*)>/;

export function readSyscalls(tracePath: string): SyscallEvent[] {
  const events: SyscallEvent[] = [];
  const open = new Map<string, { start: number; args: string }>();
  for (const line of readFileSync(tracePath, 'utf8').split('\n')) {
    let match = COMPLETE.exec(line);
    if (match !== null) {
      const [, pid, start, name, args, result, duration] = match;
      events.push(event(Number(pid), name!, args!, result!, micros(start!), micros(duration!)));
      continue;
    }
    match = UNFINISHED.exec(line);
    if (match !== null) {
      const [, pid, start, name, args] = match;
      open.set(`${pid}:${name}`, { start: micros(start!), args: args! });
      continue;
    }
    match = RESUMED.exec(line);
    if (match !== null) {
      const [, pid, , name, rest, result, duration] = match;
      const first = open.get(`${pid}:${name}`);
      if (first === undefined) continue;
      open.delete(`${pid}:${name}`);
      events.push(
        event(Number(pid), name!, first.args + rest!, result!, first.start, micros(duration!)),
      );
    }
  }
  return events.sort((a, b) => a.start - b.start);
}

function event(
  pid: number,
  name: string,
  args: string,
  result: string,
  start: number,
  duration: number,
): SyscallEvent {
  return {
    pid,
    name,
    path: FD_PATH.exec(args)?.[1] ?? '',
    args,
    result,
    start,
    end: start + duration,
  };
}

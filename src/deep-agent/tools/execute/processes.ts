/**
 * Finding and ending the processes one local-shell command started, for where no PID
 * namespace holds them together (see local.ts). Linux's /proc is read directly: a process is
 * the command's when its environment carries the run's marker (every descendant inherits it
 * unless it clears its environment) or when it holds one of the command's output pipes. On
 * systems without /proc only the process group can be ended.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { type Clock, systemClock } from '../../../core/clock.js';

/** The environment variable that marks every process of one command. */
export const RUN_MARKER = 'TASKLINE_LOCAL_RUN';

/** Sends SIGKILL to a process group; false when there was nobody left to kill. */
export function killGroup(pgid: number | undefined): boolean {
  if (!pgid) return false;
  try {
    process.kill(-pgid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/**
 * The pipe behind a process's file descriptor (`pipe:[inode]`, or `socket:[inode]`: Node's
 * stdio pipes are socket pairs), if it is one.
 */
export function pipeOf(pid: number, fd: number): string | undefined {
  try {
    const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    return /^(pipe|socket):\[\d+\]$/.test(link) ? link : undefined;
  } catch {
    return undefined;
  }
}

function pids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => pid !== process.pid);
  } catch {
    return [];
  }
}

function carries(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker);
  } catch {
    return false;
  }
}

function holds(pid: number, pipes: ReadonlySet<string>): boolean {
  if (pipes.size === 0) return false;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    try {
      return pipes.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      return false;
    }
  });
}

/**
 * Kills every process that carries `RUN_MARKER=token` or holds one of `pipes`, again until a
 * scan finds none (a process may fork while the scan runs); returns how many were killed.
 */
export function killMarked(token: string, pipes: ReadonlySet<string>): number {
  const marker = `${RUN_MARKER}=${token}`;
  let killed = 0;
  for (let round = 0; round < 10; round++) {
    const found = pids().filter((pid) => carries(pid, marker) || holds(pid, pipes));
    if (found.length === 0) break;
    for (const pid of found) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
  }
  return killed;
}

/** How a local command's processes are held together. */
export type LocalContainment = 'pid-namespace' | 'process-group';

/**
 * `unshare` arguments that run a command as PID 1 of a new PID namespace (the kernel ends
 * every other process in it when PID 1 exits) with its own /proc, or undefined when this
 * machine does not allow one. Root needs no user namespace; anyone else maps their own uid.
 */
export async function probeNamespace(
  env: Record<string, string>,
  clock: Clock = systemClock,
): Promise<string[] | undefined> {
  if (process.platform !== 'linux') return undefined;
  const root = process.getuid?.() === 0;
  const base = ['--pid', '--fork', '--kill-child'];
  const user = root ? [] : ['--map-current-user'];
  for (const flags of [
    [...user, ...base, '--mount-proc'],
    [...user, ...base],
  ]) {
    if (await succeeds('unshare', [...flags, 'true'], env, clock)) return flags;
  }
  return undefined;
}

function succeeds(
  file: string,
  args: string[],
  env: Record<string, string>,
  clock: Clock,
): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: 'ignore', env });
    const timer = clock.setTimer(5_000, () => {
      child.kill('SIGKILL');
      resolve(false);
    });
    child.on('error', () => {
      timer.cancel();
      resolve(false);
    });
    child.on('exit', (code) => {
      timer.cancel();
      resolve(code === 0);
    });
  });
}

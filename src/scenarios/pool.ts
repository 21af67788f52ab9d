/**
 * Runs scenario files in child processes (sessions are CPU-bound, a process per worker keeps
 * upstream's process-wide state apart, and only a process can be stopped whatever its code
 * does: a bot stuck in a busy loop never yields to a timer in its own process). Within the
 * machine's cores by default. Reports come back in file order. Every file is bounded by
 * `timeoutMs`: a worker that does not answer in time is killed. Several files share a worker;
 * when a shared worker stalls or dies, each file that was running in it is run again alone in
 * a fresh worker (with its own full time), so the file that stalls is the one reported and the
 * others pass or fail on their own.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isTasklineError, TasklineError } from '../core/errors.js';
import type { AudioHearingOptions } from './audio/mode.js';
import type { ScenarioReport } from './scenario.js';
import type { WorkerReply, WorkerRequest, WorkerSettings } from './worker.js';

/** Options for {@link runScenarioFiles}. */
export interface RunFilesOptions {
  /** Worker processes (default: see {@link defaultJobs}); every file runs in one. */
  jobs?: number;
  /** Audio mode instead of text mode. */
  audio?: boolean;
  /** Upper bound for one scenario file (all its repeats), ms (default 120 s text, 300 s audio). */
  timeoutMs?: number;
  /** Called as each scenario finishes (in finishing order). */
  onReport?: (report: ScenarioReport) => void;
  /** How audio mode hears the caller: recogniser, voices, phone line, hints. */
  hearing?: AudioHearingOptions;
  /** What fails a run: everything (default) or only wrong captured values and errors. */
  judge?: 'all' | 'captures';
}

/**
 * Scenarios run at once in one process. Text-mode calls spend most of their time waiting
 * (upstream's session close alone takes ~0.5 s), so several share a process; audio-mode
 * calls run one per process so timing is measured on an unloaded event loop.
 */
const PER_PROCESS = { text: 4, audio: 1 } as const;

/** Runs `files` and returns their reports in the same order. */
export async function runScenarioFiles(
  files: readonly string[],
  options: RunFilesOptions = {},
): Promise<ScenarioReport[]> {
  const audio = options.audio === true;
  const perProcess = PER_PROCESS[audio ? 'audio' : 'text'];
  const jobs = Math.max(
    1,
    Math.min(
      options.jobs ?? defaultJobs(audio, files.length),
      Math.ceil(files.length / perProcess),
    ),
  );
  const timeoutMs = options.timeoutMs ?? (audio ? 300_000 : 120_000);
  const reports: ScenarioReport[] = new Array(files.length);
  let next = 0;
  const finish = (index: number, report: ScenarioReport) => {
    reports[index] = report;
    options.onReport?.(report);
  };
  const settings: WorkerSettings = {
    ...(options.hearing ? { hearing: options.hearing } : {}),
    ...(options.judge ? { judge: options.judge } : {}),
  };
  const workers: Array<WorkerProcess | undefined> = new Array(jobs);
  const lane = async (slot: number): Promise<void> => {
    const w = slot % jobs;
    while (next < files.length) {
      const index = next++;
      const file = files[index]!;
      let report: ScenarioReport | undefined;
      while (report === undefined) {
        workers[w] ??= new WorkerProcess(audio, settings);
        const worker = workers[w]!;
        report = await worker.run(file, timeoutMs).catch(async (error: unknown) => {
          // The worker is gone (WorkerProcess killed it, or it died); a fresh one takes the rest.
          if (workers[w] === worker) workers[w] = undefined;
          if (isTasklineError(error) && error.details?.notSent) return undefined; // never ran
          return worker.failedShared
            ? runAlone(file, audio, settings, timeoutMs)
            : crashed(file, audio, error);
        });
      }
      finish(index, report);
    }
  };
  try {
    await Promise.all(Array.from({ length: jobs * perProcess }, (_, slot) => lane(slot)));
  } finally {
    await Promise.all(workers.map((w) => w?.exit()));
  }
  return reports;
}

/** Runs one file in a worker of its own (after the worker it shared stalled or died). */
async function runAlone(
  file: string,
  audio: boolean,
  settings: WorkerSettings,
  timeoutMs: number,
): Promise<ScenarioReport> {
  const solo = new WorkerProcess(audio, settings);
  try {
    return await solo.run(file, timeoutMs);
  } catch (error) {
    return crashed(file, audio, error);
  } finally {
    await solo.exit();
  }
}

/**
 * Worker processes by default. A process costs ~2 s to start here (loading upstream and
 * transpiling TypeScript modules; measured: the same in a worker thread, which also cannot
 * load .ts modules through tsx's `--import` on Node 20), so text mode adds one per
 * TEXT_FILES_PER_PROCESS files, up to the cores; audio mode runs in real time and uses the
 * cores from the start.
 */
function defaultJobs(audio: boolean, files: number): number {
  const cores = availableParallelism();
  return audio ? cores : Math.min(cores, Math.max(1, Math.floor(files / TEXT_FILES_PER_PROCESS)));
}

const TEXT_FILES_PER_PROCESS = 16;

/** Longest a worker process may take to load before its first file (it loads upstream). */
const BOOT_TIMEOUT_MS = 60_000;

function crashed(file: string, audio: boolean, error: unknown): ScenarioReport {
  return {
    file,
    name: file,
    mode: audio ? 'audio' : 'text',
    status: 'failed',
    reason: error instanceof Error ? error.message : String(error),
    runs: [],
    durationMs: 0,
  };
}

/** One child process running scenarios; killed at its first timeout or crash. */
class WorkerProcess {
  private readonly child: ChildProcess;
  private nextId = 0;
  private readonly waiting = new Map<number, (reply: WorkerReply) => void>();
  private readonly exited: Promise<number | null>;
  private readonly crashes = new Map<number, (error: Error) => void>();
  /** Runs in flight when the worker first failed (a timeout or a crash). */
  private inFlightAtFailure?: number;
  /** Resolves once the worker has loaded (a run's time limit starts then, not at spawn). */
  private readonly ready: Promise<void>;

  constructor(audio: boolean, settings: WorkerSettings) {
    const entry = workerEntry();
    this.child = fork(entry.file, [], {
      execArgv: [...inheritedExecArgv(), ...entry.execArgv],
      env: {
        ...process.env,
        ...entry.env,
        TASKLINE_SCENARIO_MODE: audio ? 'audio' : 'text',
        TASKLINE_SCENARIO_SETTINGS: JSON.stringify(settings),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    let started: () => void = () => {};
    this.ready = new Promise((resolve) => {
      started = resolve;
    });
    this.child.on('message', (reply: WorkerReply) => {
      if (reply.type === 'ready') {
        started();
        return;
      }
      this.waiting.get(reply.id)?.(reply);
      this.waiting.delete(reply.id);
    });
    // A parent that cannot reach its worker (it died) learns it from 'exit'.
    this.child.on('error', () => {});
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.inFlightAtFailure ??= this.crashes.size;
        const error = new TasklineError(
          'call_failed',
          `the worker process running it exited (${signal ?? `code ${code}`})`,
        );
        for (const crash of [...this.crashes.values()]) crash(error);
        resolve(code);
      });
    });
  }

  /** True when the worker failed while it ran more than one file (so none of them is to blame yet). */
  get failedShared(): boolean {
    return (this.inFlightAtFailure ?? 0) > 1;
  }

  /**
   * Runs `file`, bounded by `timeoutMs` from when the worker is ready; a worker that is not
   * ready within {@link BOOT_TIMEOUT_MS} (or `timeoutMs` if longer) is stopped too.
   */
  run(file: string, timeoutMs: number): Promise<ScenarioReport> {
    const id = this.nextId++;
    return new Promise<ScenarioReport>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        clearTimeout(timer);
        this.crashes.delete(id);
        this.waiting.delete(id);
      };
      const overrun = (message: string) => () => {
        this.inFlightAtFailure ??= this.crashes.size;
        settle();
        this.kill();
        reject(new TasklineError('timeout', message));
      };
      this.crashes.set(id, (error) => {
        settle();
        reject(error);
      });
      this.waiting.set(id, (reply) => {
        settle();
        if (reply.type === 'report') resolve(reply.report);
      });
      if (this.inFlightAtFailure !== undefined || !this.child.connected) {
        settle();
        reject(
          new TasklineError('call_failed', 'the worker process had stopped', { notSent: true }),
        );
        return;
      }
      const bootMs = Math.max(BOOT_TIMEOUT_MS, timeoutMs);
      timer = setTimeout(overrun(`the worker process did not start within ${bootMs} ms`), bootMs);
      void this.ready.then(() => {
        if (!this.crashes.has(id)) return; // already settled
        clearTimeout(timer);
        timer = setTimeout(
          overrun(`gave up after ${timeoutMs} ms (the worker was stopped)`),
          timeoutMs,
        );
        this.child.send({ type: 'run', id, file } satisfies WorkerRequest);
      });
    });
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  async exit(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    if (this.inFlightAtFailure !== undefined || !this.child.connected) {
      this.kill();
      await this.exited;
      return;
    }
    const killer = setTimeout(() => this.kill(), 10_000);
    this.child.send({ type: 'exit' } satisfies WorkerRequest);
    await this.exited;
    clearTimeout(killer);
  }
}

/** This process's Node options, minus code to evaluate and the inspector. */
function inheritedExecArgv(): string[] {
  const out: string[] = [];
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-e' || a === '--eval' || a === '-p' || a === '--print') {
      i += 1;
      continue;
    }
    if (/^(--eval|--print)=/.test(a) || a.startsWith('--inspect') || a.startsWith('--input-type')) {
      continue;
    }
    out.push(a);
  }
  return out;
}

interface WorkerEntry {
  file: string;
  execArgv: string[];
  env: Record<string, string>;
}

/**
 * The worker script: the TypeScript source (run through tsx) when taskline itself runs
 * from source, else the bundled JavaScript. Found from the package root, because bundling
 * moves this module into a shared chunk.
 */
function workerEntry(): WorkerEntry {
  const here = fileURLToPath(import.meta.url);
  let dir = dirname(here);
  for (let i = 0; i < 6; i++) {
    const pkg = join(dir, 'package.json');
    if (
      existsSync(pkg) &&
      (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'taskline'
    )
      break;
    dir = dirname(dir);
  }
  const source = join(dir, 'src', 'scenarios', 'worker.ts');
  if (here.endsWith('.ts') && existsSync(source)) {
    const tsconfig = join(dir, 'tsconfig.json');
    return {
      file: source,
      execArgv: ['--import', import.meta.resolve('tsx')],
      env: existsSync(tsconfig) ? { TSX_TSCONFIG_PATH: tsconfig } : {},
    };
  }
  const tsx = tsxLoader();
  return {
    file: join(dir, 'dist', 'bundle', 'scenarios', 'worker.js'),
    // Modules written in TypeScript need tsx in the app, as `taskline run` does.
    execArgv: tsx ? ['--import', tsx] : [],
    env: {},
  };
}

function tsxLoader(): string | undefined {
  try {
    return import.meta.resolve('tsx');
  } catch {
    return undefined;
  }
}

/**
 * Runs many scenario files in parallel in child processes (sessions are CPU-bound, and a
 * process per worker keeps upstream's process-wide state apart), within the machine's
 * cores by default. Reports come back in file order; a worker that dies or hangs fails
 * only the scenario it was running.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TasklineError } from '../core/errors.js';
import type { AudioHearingOptions } from './audio/mode.js';
import type { CallMode } from './driver.js';
import { runScenarioFile, type ScenarioReport } from './scenario.js';
import { textMode } from './text-mode.js';
import type { WorkerReply, WorkerRequest, WorkerSettings } from './worker.js';

/** Options for {@link runScenarioFiles}. */
export interface RunFilesOptions {
  /** Worker processes (1 runs in this process; default: see {@link defaultJobs}). */
  jobs?: number;
  /** Audio mode instead of text mode. */
  audio?: boolean;
  /** How audio mode hears the caller: recogniser, voices, phone line, hints. */
  hearing?: AudioHearingOptions;
  /** What fails a run: everything (default) or only wrong captured values and errors. */
  judge?: 'all' | 'captures';
  /** Upper bound for one scenario file (all its repeats), ms (default 120 s text, 300 s audio). */
  timeoutMs?: number;
  /** Called as each scenario finishes (in finishing order). */
  onReport?: (report: ScenarioReport) => void;
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
  const run = { ...(options.judge ? { judge: options.judge } : {}) };
  if (jobs === 1) {
    const mode = await modeFor(audio, options.hearing);
    try {
      const lane = async () => {
        while (next < files.length) {
          const index = next++;
          finish(
            index,
            await bounded(
              runScenarioFile(files[index]!, { mode, ...run }),
              files[index]!,
              audio,
              timeoutMs,
            ),
          );
        }
      };
      await Promise.all(Array.from({ length: perProcess }, lane));
    } finally {
      await mode.close();
    }
    return reports;
  }
  const workers: Array<WorkerProcess | undefined> = new Array(jobs);
  const lane = async (slot: number): Promise<void> => {
    const w = slot % jobs;
    while (next < files.length) {
      const index = next++;
      const file = files[index]!;
      workers[w] ??= new WorkerProcess(audio, {
        ...(options.hearing ? { hearing: options.hearing } : {}),
        ...run,
      });
      const worker = workers[w]!;
      const report = await worker.run(file, timeoutMs).catch((error: unknown) => {
        // A hung or dead worker fails what it was running; a fresh one takes the rest.
        worker.kill();
        if (workers[w] === worker) workers[w] = undefined;
        return crashed(file, audio, error);
      });
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

async function modeFor(audio: boolean, hearing?: AudioHearingOptions): Promise<CallMode> {
  if (!audio) return textMode;
  const { audioMode } = await import('./audio/mode.js');
  return audioMode(hearing);
}

function bounded(
  running: Promise<ScenarioReport>,
  file: string,
  audio: boolean,
  timeoutMs: number,
): Promise<ScenarioReport> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TasklineError('timeout', `gave up after ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  return Promise.race([running, limit])
    .catch((error: unknown) => crashed(file, audio, error))
    .finally(() => clearTimeout(timer));
}

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

/** One child process running scenarios. */
class WorkerProcess {
  private readonly child: ChildProcess;
  private nextId = 0;
  private readonly waiting = new Map<number, (reply: WorkerReply) => void>();
  private readonly exited: Promise<number | null>;
  private readonly crashes = new Map<number, (error: Error) => void>();

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
    this.child.on('message', (reply: WorkerReply) => {
      this.waiting.get(reply.id)?.(reply);
      this.waiting.delete(reply.id);
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        const error = new TasklineError(
          'call_failed',
          `the worker process running it exited (${signal ?? `code ${code}`})`,
        );
        for (const crash of [...this.crashes.values()]) crash(error);
        resolve(code);
      });
    });
  }

  run(file: string, timeoutMs: number): Promise<ScenarioReport> {
    const id = this.nextId++;
    return new Promise<ScenarioReport>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new TasklineError('timeout', `gave up after ${timeoutMs} ms (the worker was stopped)`),
        );
      }, timeoutMs);
      this.crashes.set(id, (error) => {
        clearTimeout(timer);
        this.crashes.delete(id);
        reject(error);
      });
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        this.crashes.delete(id);
        resolve(reply.report);
      });
      this.child.send({ type: 'run', id, file } satisfies WorkerRequest);
    });
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  async exit(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
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

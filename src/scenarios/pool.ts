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
import type { CallMode } from './driver.js';
import { runScenarioFile, type ScenarioReport } from './scenario.js';
import { textMode } from './text-mode.js';
import type { WorkerReply, WorkerRequest } from './worker.js';

/** Options for {@link runScenarioFiles}. */
export interface RunFilesOptions {
  /** Parallel worker processes (default: the machine's cores; 1 runs in this process). */
  jobs?: number;
  /** Audio mode instead of text mode. */
  audio?: boolean;
  /** Upper bound for one scenario file (all its repeats), ms (default 120 s text, 300 s audio). */
  timeoutMs?: number;
  /** Called as each scenario finishes (in finishing order). */
  onReport?: (report: ScenarioReport) => void;
}

/** Runs `files` and returns their reports in the same order. */
export async function runScenarioFiles(
  files: readonly string[],
  options: RunFilesOptions = {},
): Promise<ScenarioReport[]> {
  const jobs = Math.max(1, Math.min(options.jobs ?? availableParallelism(), files.length));
  const timeoutMs = options.timeoutMs ?? (options.audio ? 300_000 : 120_000);
  if (jobs === 1) return runInProcess(files, options, timeoutMs);
  const reports: ScenarioReport[] = new Array(files.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    let child: WorkerProcess | undefined;
    try {
      while (next < files.length) {
        const index = next++;
        const file = files[index]!;
        child ??= new WorkerProcess(options.audio === true);
        const report = await child.run(file, timeoutMs).catch((error: unknown) => {
          child?.kill();
          child = undefined;
          return crashed(file, options.audio === true, error);
        });
        reports[index] = report;
        options.onReport?.(report);
      }
    } finally {
      await child?.exit();
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  return reports;
}

async function runInProcess(
  files: readonly string[],
  options: RunFilesOptions,
  timeoutMs: number,
): Promise<ScenarioReport[]> {
  let mode: CallMode = textMode;
  if (options.audio) {
    const { audioMode } = await import('./audio/mode.js');
    mode = await audioMode();
  }
  const reports: ScenarioReport[] = [];
  try {
    for (const file of files) {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new TasklineError('timeout', `gave up after ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      const report = await Promise.race([runScenarioFile(file, { mode }), limit])
        .catch((error: unknown) => crashed(file, options.audio === true, error))
        .finally(() => clearTimeout(timer));
      reports.push(report);
      options.onReport?.(report);
    }
  } finally {
    await mode.close();
  }
  return reports;
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
  private exited: Promise<number | null>;
  private crash: ((error: Error) => void) | undefined;

  constructor(audio: boolean) {
    const entry = workerEntry();
    this.child = fork(entry.file, [], {
      execArgv: [...process.execArgv.filter((a) => !a.startsWith('--inspect')), ...entry.execArgv],
      env: {
        ...process.env,
        ...entry.env,
        TASKLINE_SCENARIO_MODE: audio ? 'audio' : 'text',
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
        this.crash?.(
          new TasklineError(
            'call_failed',
            `the worker process running it exited (${signal ?? `code ${code}`})`,
          ),
        );
        resolve(code);
      });
    });
  }

  run(file: string, timeoutMs: number): Promise<ScenarioReport> {
    const id = this.nextId++;
    return new Promise<ScenarioReport>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new TasklineError('timeout', `gave up after ${timeoutMs} ms (the worker was stopped)`));
      }, timeoutMs);
      this.crash = (error) => {
        clearTimeout(timer);
        reject(error);
      };
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        this.crash = undefined;
        resolve(reply.report);
      });
      this.child.send({ type: 'run', id, file } satisfies WorkerRequest);
    });
  }

  kill(): void {
    this.crash = undefined;
    this.child.kill('SIGKILL');
  }

  async exit(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.crash = undefined;
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    this.child.send({ type: 'exit' } satisfies WorkerRequest);
    await this.exited;
    clearTimeout(killer);
  }
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
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'taskline') break;
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

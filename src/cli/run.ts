import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { initializeLogger, type llm } from '@livekit/agents';
import type { CallerAction, CallModule } from '../app/module.js';
import { TasklineError } from '../core/errors.js';
import { formatLine } from '../testing/expect.js';
import { SimulatedCaller, type TranscriptLine } from '../testing/simulated-caller.js';

/** Options of `taskline run`. */
export interface RunOptions {
  /** A JSON file of caller actions; the module's demo script when omitted. */
  script?: string;
  /** Read caller lines from the terminal instead of a script. */
  interactive?: boolean;
  /** Use the module's scripted model even when OPENAI_API_KEY is set. */
  scripted?: boolean;
  /** Where lines are written (stdout by default). */
  print?: (line: string) => void;
  /** Where interactive lines come from (stdin by default). */
  input?: NodeJS.ReadableStream;
}

/** Loads a CallModule from a file or folder (its index.ts / index.js). */
export async function loadCallModule(path: string): Promise<CallModule> {
  let file = resolve(path);
  if (existsSync(file) && statSync(file).isDirectory()) {
    const index = ['index.ts', 'index.js', 'index.mjs']
      .map((f) => resolve(file, f))
      .find(existsSync);
    if (!index) throw new TasklineError('not_found', `${path} has no index.ts or index.js.`);
    file = index;
  }
  if (!existsSync(file)) throw new TasklineError('not_found', `No module at ${path}.`);
  const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  const candidate = mod.default;
  if (!isCallModule(candidate)) {
    throw new TasklineError(
      'invalid_argument',
      `${path} must export default defineCallModule({ name, createCall, createScriptedModel, demoScript }).`,
    );
  }
  return candidate;
}

/**
 * Runs a bot in the terminal: a scripted or typed caller drives it with no room and no
 * audio. With OPENAI_API_KEY it talks to the real model, otherwise to the module's
 * scripted one. Returns the call's typed result.
 */
export async function runCall(module: CallModule, options: RunOptions = {}): Promise<unknown> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  initializeLogger({ pretty: false, level: 'silent' });
  const model = await chooseModel(module, options);
  const call = module.createCall();
  print(`# ${module.name}: ${module.description}`);
  print(`# model: ${model.label()}`);
  const caller = await SimulatedCaller.start({
    agent: call.agent,
    llm: model,
    onLine: (line: TranscriptLine) => print(formatLine(line)),
    sessionOptions: {
      connOptions: { llmConnOptions: { maxRetry: 1, retryIntervalMs: 500, timeoutMs: 30_000 } },
    },
  });
  try {
    if (options.interactive) await interact(caller, options, print);
    else await caller.play(options.script ? readScript(options.script) : module.demoScript);
  } finally {
    await caller.close();
  }
  const result = call.result();
  print(`result: ${JSON.stringify(result, null, 2)}`);
  return result;
}

async function chooseModel(module: CallModule, options: RunOptions): Promise<llm.LLM> {
  if (process.env.OPENAI_API_KEY && !options.scripted) {
    const openai = await import('@livekit/agents-plugin-openai');
    return new openai.LLM({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini' });
  }
  return module.createScriptedModel();
}

async function interact(
  caller: SimulatedCaller,
  options: RunOptions,
  print: (line: string) => void,
): Promise<void> {
  print('# type to speak; #123# presses keys; /silence 8000 waits; /hangup ends the call');
  const lines = createInterface({ input: options.input ?? process.stdin, terminal: false });
  for await (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    try {
      if (line === '/hangup' || line === '/quit') {
        await caller.hangup();
        break;
      }
      const silence = /^\/silence\s+(\d+)$/.exec(line);
      if (silence) await caller.silence(Number(silence[1]));
      else if (line.startsWith('#')) await caller.dtmf(line.slice(1));
      else await caller.say(line);
    } catch (error) {
      print(`! ${error instanceof Error ? error.message : String(error)}`);
    }
    if (caller.isClosed) break;
  }
  lines.close();
}

/** Reads and checks a JSON caller script. */
export function readScript(path: string): CallerAction[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new TasklineError('invalid_argument', `Cannot read the script ${path}: ${String(error)}`);
  }
  if (!Array.isArray(data) || !data.every(isCallerAction)) {
    throw new TasklineError(
      'invalid_argument',
      `${path} must be a JSON array of {"say"}, {"bargeIn"}, {"dtmf"}, {"silence"} or {"hangup": true} actions.`,
    );
  }
  return data;
}

function isCallerAction(a: unknown): a is CallerAction {
  if (typeof a !== 'object' || a === null) return false;
  const o = a as Record<string, unknown>;
  return (
    typeof o.say === 'string' ||
    typeof o.bargeIn === 'string' ||
    typeof o.dtmf === 'string' ||
    (typeof o.silence === 'number' && o.silence >= 0) ||
    o.hangup === true
  );
}

function isCallModule(m: unknown): m is CallModule {
  if (typeof m !== 'object' || m === null) return false;
  const o = m as Record<string, unknown>;
  return (
    typeof o.name === 'string' &&
    typeof o.createCall === 'function' &&
    typeof o.createScriptedModel === 'function' &&
    Array.isArray(o.demoScript)
  );
}

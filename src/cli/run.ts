import { StringDecoder } from 'node:string_decoder';
import type { llm } from '@livekit/agents';
import { parse as parseYaml } from 'yaml';
import {
  type CallDemo,
  type CallerAction,
  type CallerTurn,
  type CallModule,
  isCallerAction,
  loadCallDemo,
  toCallerTurn,
} from '../app/module.js';
import { MAX_INPUT_FILE_BYTES, readTextFileCapped } from '../core/bounded-read.js';
import { isTasklineError, TasklineError } from '../core/errors.js';
import { logLevelFromEnv, startLogger } from '../core/log.js';
import { loadOptional } from '../core/optional.js';
import { SessionFailures } from '../core/session-failures.js';
import { explainTurn, parseScenario } from '../scenarios/load.js';
import { turnSchema } from '../scenarios/schema.js';
import { formatLine } from '../testing/expect.js';
import { SimulatedCaller, type TranscriptLine } from '../testing/simulated-caller.js';

/** Options of `taskline run`. */
export interface RunOptions {
  /** A scenario file (or a list of caller turns) to play; the module's demo script when omitted. */
  script?: string;
  /** Where notices go (a deprecated script format); stderr in the CLI. */
  warn?: (line: string) => void;
  /** Read caller lines from the terminal instead of a script. */
  interactive?: boolean;
  /** Use the module's scripted model even when OPENAI_API_KEY is set. */
  scripted?: boolean;
  /** Where lines are written (stdout by default). */
  print?: (line: string) => void;
  /** Where interactive lines come from (stdin by default). */
  input?: NodeJS.ReadableStream;
}

/** Loads a CallModule from a file or folder; it lives in app/ so scenarios can use it too. */
export { loadCallModule } from '../app/load.js';

/** Everything a run needs, checked before the call starts. */
interface PreparedRun {
  model: llm.LLM;
  modelLabel: string;
  createCall: CallModule['createCall'];
  /** The caller turns to play; undefined in interactive mode. */
  actions: readonly CallerTurn[] | undefined;
}

/**
 * Checks the script, the demo parts and the model before anything starts, so a bad file or
 * a module with no way to run fails at once with what to do about it.
 */
async function prepare(module: CallModule, options: RunOptions): Promise<PreparedRun> {
  const demo = await loadCallDemo(module);
  let actions: readonly CallerTurn[] | undefined;
  if (options.script) {
    const script = readScript(options.script);
    if (script.deprecation) options.warn?.(`taskline run: deprecated: ${script.deprecation}`);
    actions = script.turns;
  } else if (!options.interactive) {
    actions = demo.demoScript?.map(toCallerTurn);
    if (!actions) {
      throw new TasklineError(
        'invalid_argument',
        `${module.name} has no demo script: pass --script call.scenario.yaml or --interactive, or give the module one (demo: () => import('./demo.js'), exporting demoScript).`,
      );
    }
  }
  const real = process.env.OPENAI_API_KEY && !options.scripted;
  if (real) {
    const model = await openaiModel();
    const endpoint = process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1';
    const modelLabel = `${model.model} (${model.label()}, ${endpoint})`;
    return { model, modelLabel, createCall: module.createCall, actions };
  }
  const model = scriptedModel(module, demo, options);
  return {
    model,
    modelLabel: model.label(),
    createCall: demo.createCall ?? module.createCall,
    actions,
  };
}

async function openaiModel(): Promise<llm.LLM> {
  const openai = await loadOptional(
    () => import('@livekit/agents-plugin-openai'),
    '@livekit/agents-plugin-openai',
    '`taskline run` with OPENAI_API_KEY set (pass --scripted to use the module scripted model)',
  );
  return new openai.LLM({
    model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini',
    baseURL: process.env.OPENAI_BASE_URL || undefined,
  });
}

function scriptedModel(module: CallModule, demo: CallDemo, options: RunOptions): llm.LLM {
  if (demo.createScriptedModel) return demo.createScriptedModel();
  const why = options.scripted
    ? `${module.name} has no scripted model, so --scripted cannot be used.`
    : `${module.name} has no scripted model and OPENAI_API_KEY is not set.`;
  throw new TasklineError(
    'invalid_argument',
    `${why} Set OPENAI_API_KEY (and optionally OPENAI_MODEL, OPENAI_BASE_URL) to talk to a real model, or give the module a scripted model: defineCallModule({ ..., demo: () => import('./demo.js') }) with demo.ts exporting createScriptedModel() and demoScript.`,
  );
}

/**
 * Runs a bot in the terminal: a scripted or typed caller drives it with no room and no
 * audio. With OPENAI_API_KEY it talks to the real model, otherwise to the module's
 * scripted one. Returns the call's typed result; a call that failed (a model or session
 * error, an exception in an agent's `onEnter`) stops and throws a TasklineError
 * `call_failed` whose message is the cause and whose `cause` is the original error.
 */
export async function runCall(module: CallModule, options: RunOptions = {}): Promise<unknown> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  startLogger({ level: logLevelFromEnv() });
  const run = await prepare(module, options);
  const call = run.createCall();
  print(`# ${module.name}: ${module.description}`);
  print(`# model: ${run.modelLabel}`);
  let failures: SessionFailures | undefined;
  const caller = await SimulatedCaller.start({
    agent: call.agent,
    llm: run.model,
    onLine: (line: TranscriptLine) => print(formatLine(line)),
    onSession: (session) => {
      failures = new SessionFailures(session);
    },
    sessionOptions: {
      connOptions: { llmConnOptions: { maxRetry: 1, retryIntervalMs: 500, timeoutMs: 30_000 } },
    },
  });
  const watch = failures as SessionFailures | undefined;
  let thrown: unknown;
  try {
    watch?.check();
    if (!watch?.failed) {
      if (run.actions) await play(caller, run.actions, watch);
      else await interact(caller, options, print, watch);
    }
  } catch (error) {
    thrown = error;
  } finally {
    watch?.check();
    await caller.close().catch((error: unknown) => {
      thrown ??= error;
    });
    watch?.dispose();
  }
  const failure = watch?.first;
  if (failure) {
    const error = new TasklineError('call_failed', failure.message, { source: failure.source });
    error.cause = failure.error;
    throw error;
  }
  if (thrown !== undefined) throw thrown;
  const result = call.result();
  print(`result: ${JSON.stringify(result, null, 2)}`);
  return result;
}

async function play(
  caller: SimulatedCaller,
  turns: readonly CallerTurn[],
  failures: SessionFailures | undefined,
): Promise<void> {
  for (const turn of turns) {
    if (caller.isClosed || failures?.failed) return;
    await caller.playTurn(turn);
    failures?.check();
  }
}

async function interact(
  caller: SimulatedCaller,
  options: RunOptions,
  print: (line: string) => void,
  failures: SessionFailures | undefined,
): Promise<void> {
  print('# type to speak; #123# presses keys; /silence 8000 waits; /hangup ends the call');
  for await (const raw of boundedLines(options.input ?? process.stdin, MAX_TYPED_LINE_BYTES)) {
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
    failures?.check();
    if (caller.isClosed || failures?.failed) break;
  }
}

/** Longest line typed in interactive mode (8 KiB). */
export const MAX_TYPED_LINE_BYTES = 8 * 1024;

/**
 * The lines of `input`, each at most `maxBytes`: input that never ends a line (/dev/zero, a
 * binary file piped in) stops the call with `limit_exceeded` instead of filling memory.
 */
export async function* boundedLines(
  input: NodeJS.ReadableStream,
  maxBytes: number,
): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of input) {
    pending += typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      yield pending.slice(0, nl).replace(/\r$/, '');
      pending = pending.slice(nl + 1);
    }
    if (Buffer.byteLength(pending) > maxBytes) {
      throw new TasklineError(
        'limit_exceeded',
        `A typed line is longer than ${maxBytes / 1024} KiB; the input is not lines of text (type a line and press Enter).`,
      );
    }
  }
  pending += decoder.end();
  if (pending !== '') yield pending;
}

/** Largest caller script read (1 MiB). */
export const MAX_SCRIPT_BYTES = MAX_INPUT_FILE_BYTES;

/** A caller script, read and checked (see {@link readScript}). */
export interface CallerScript {
  turns: CallerTurn[];
  /** Set when the file uses the earlier action format: what to write instead. */
  deprecation?: string;
}

/**
 * Reads and checks a caller script before any call starts: a scenario file (YAML or JSON,
 * its `turns`), or a bare list of turns — the format `taskline test` reads. The earlier
 * JSON list of actions (`{"dtmf": "123", "gapMs": 250}`, `bargeIn`) is still read, with a
 * deprecation notice. The file is a regular file of at most `maxBytes` (a device such as
 * /dev/zero, a pipe or a huge file is refused before it is read).
 */
export function readScript(path: string, maxBytes = MAX_SCRIPT_BYTES): CallerScript {
  let text: string;
  try {
    text = readTextFileCapped(path, { what: 'caller script', maxBytes });
  } catch (error) {
    if (isTasklineError(error, 'not_found')) {
      throw new TasklineError('not_found', `The script ${path} does not exist.`);
    }
    throw error;
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new TasklineError(
      'invalid_argument',
      `The script ${path} is not YAML or JSON: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
  }
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    // A scenario file: validated as `taskline test` does (file:line in errors).
    return { turns: parseScenario(text, path).spec.turns };
  }
  const shape = `a scenario file (turns: [...]) or a list of caller turns: ${TURN_SHAPES}`;
  if (!Array.isArray(data))
    throw new TasklineError('invalid_argument', `${path} must be ${shape}.`);
  if (data.some(isCallerAction)) return readActions(path, data);
  const turns = data.map((turn, index) => {
    const checked = turnSchema.safeParse(turn);
    if (!checked.success) {
      throw new TasklineError(
        'invalid_argument',
        `${path}, turn ${index + 1} (${JSON.stringify(turn)}): ${explainTurn(turn).message}. The script must be ${shape}.`,
      );
    }
    return checked.data;
  });
  return { turns };
}

const TURN_SHAPES =
  '{say: ...}, {keys: "123#", gap?: 250ms, mask?: true}, {silence: 8s}, {barge_in: ...} or hangup';

/** The earlier action list, checked and converted to turns. */
function readActions(path: string, data: unknown[]): CallerScript {
  const shape =
    'a JSON array of {"say": "..."}, {"bargeIn": "..."}, {"dtmf": "123#"}, {"silence": 8000} or {"hangup": true} actions';
  data.forEach((action, index) => {
    const problem = actionProblem(action);
    if (problem) {
      throw new TasklineError(
        'invalid_argument',
        `${path}, action ${index + 1} (${JSON.stringify(action)}): ${problem}. The script must be ${shape}.`,
      );
    }
  });
  return {
    turns: (data as CallerAction[]).map(toCallerTurn),
    deprecation: `${path} uses the earlier action format ({"dtmf": ...}, {"bargeIn": ...}, "gapMs"). It still plays, but write caller turns as scenario files do — {"keys": "123#", "gap": 250}, {"barge_in": "..."}, {"silence": "8s"} — or point --script at a *.scenario.yaml file.`,
  };
}
const DTMF_KEYS = /^[0-9*#A-D]+$/;

function actionProblem(a: unknown): string | undefined {
  if (typeof a !== 'object' || a === null || Array.isArray(a)) return 'not an object';
  const o = a as Record<string, unknown>;
  const kinds = ['say', 'bargeIn', 'dtmf', 'silence', 'hangup'].filter((k) => k in o);
  if (kinds.length !== 1) return `needs exactly one of say, bargeIn, dtmf, silence, hangup`;
  if ('say' in o || 'bargeIn' in o) {
    const text = o.say ?? o.bargeIn;
    return typeof text === 'string' && text.trim()
      ? undefined
      : 'the text must be a non-empty string';
  }
  if ('dtmf' in o) {
    if (typeof o.dtmf !== 'string' || !DTMF_KEYS.test(o.dtmf)) return 'dtmf takes keys 0-9 * # A-D';
    if (o.gapMs !== undefined && !(typeof o.gapMs === 'number' && o.gapMs >= 0)) {
      return 'gapMs must be a number of milliseconds';
    }
    if (o.mask !== undefined && typeof o.mask !== 'boolean') return 'mask must be true or false';
    return undefined;
  }
  if ('silence' in o) {
    return typeof o.silence === 'number' && Number.isFinite(o.silence) && o.silence >= 0
      ? undefined
      : 'silence takes a number of milliseconds';
  }
  return o.hangup === true ? undefined : 'hangup must be true';
}

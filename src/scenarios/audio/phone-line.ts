/**
 * The phone line a scenario's caller is heard through: settings (a scenario's `line:` or a
 * named preset from `taskline test --line`), and the per-frame processing the caller line
 * runs — caller speech at a level, plus noise at a signal-to-noise ratio, plus the agent's
 * audio echoed back, through the G.711 channel when asked.
 */
import { TasklineError } from '../../core/errors.js';
import { speak, type Voice } from '../../testing/voices.js';
import { durationMs, type LineSpec } from '../schema.js';
import {
  activeRms,
  babbleNoise,
  dbGain,
  MulawChannel,
  type NoiseSource,
  pinkNoise,
  toInt16,
  whiteNoise,
} from './line-effects.js';
import { LINE_PRESETS } from './line-presets.js';

export { LINE_PRESETS };

/** The preset called `name`; an unknown name is an `invalid_argument` error listing them. */
export function linePreset(name: string): LineSpec {
  const preset = LINE_PRESETS[name];
  if (!preset) {
    throw new TasklineError(
      'invalid_argument',
      `there is no line "${name}": use one of ${Object.keys(LINE_PRESETS).join(', ')}`,
    );
  }
  return preset;
}

/** `over` merged onto `base` (a scenario's `line:` over the run's `--line`). */
export function mergeLine(base: LineSpec | undefined, over: LineSpec | undefined): LineSpec {
  return { ...base, ...over };
}

/** True when the line changes the caller's audio at all. */
export function isClean(line: LineSpec): boolean {
  return (
    (line.codec ?? 'none') === 'none' &&
    (line.level_db ?? 0) === 0 &&
    line.noise === undefined &&
    line.echo === undefined
  );
}

/** One line per call: turns caller speech and agent echo into what the agent hears. */
export class LineProcessor {
  /** Gain applied to the caller's speech. */
  readonly speechGain: number;
  /** Delay of the agent's echo, ms (undefined: no echo). */
  readonly echoDelayMs: number | undefined;
  private readonly echoGain: number;
  private readonly channel: MulawChannel | undefined;
  private noise: NoiseSource | undefined;
  private noiseRms = 0;

  private constructor(private readonly spec: LineSpec) {
    this.speechGain = dbGain(spec.level_db ?? 0);
    this.echoDelayMs = spec.echo ? durationMs(spec.echo.delay) : undefined;
    this.echoGain = spec.echo ? dbGain(spec.echo.level_db) : 0;
    this.channel = spec.codec === 'mulaw' ? new MulawChannel() : undefined;
  }

  /**
   * Builds the line for a caller speaking in `voice`: the noise level is set from that voice's
   * active speech level (after the line's level change), so `snr_db` means what it says.
   */
  static async create(spec: LineSpec, voice: Voice, seed = 1): Promise<LineProcessor> {
    const line = new LineProcessor(spec);
    if (spec.noise) {
      const reference = await speak('hello, I am calling about my account', voice);
      const speechRms = activeRms(reference.samples) * line.speechGain;
      line.noiseRms = speechRms * dbGain(-spec.noise.snr_db);
      line.noise =
        spec.noise.kind === 'white'
          ? whiteNoise(seed)
          : spec.noise.kind === 'pink'
            ? pinkNoise(seed)
            : babbleNoise(await babbleTalkers(voice));
    }
    return line;
  }

  /** What the agent hears for one frame: `speech` (caller samples, 0 when quiet) plus `echo`. */
  process(speech: Int16Array, echo: Float32Array | undefined): Int16Array {
    if (isClean(this.spec)) return speech;
    const n = speech.length;
    const mixed = new Float32Array(n);
    for (let i = 0; i < n; i++) mixed[i] = speech[i]! * this.speechGain;
    if (this.noise) {
      const noise = this.noise.next(n);
      for (let i = 0; i < n; i++) mixed[i] = mixed[i]! + noise[i]! * this.noiseRms;
    }
    if (echo) for (let i = 0; i < n; i++) mixed[i] = mixed[i]! + echo[i]! * this.echoGain;
    return toInt16(this.channel ? this.channel.process(mixed) : mixed);
  }
}

const BABBLE_LINES = [
  'I would like to check the status of my order from last week please',
  'no I said the second one, the one with the blue cover, not that one',
  'could you put me through to someone in the billing department',
  'we were going to meet at the station at half past six but the train was late',
  'my daughter has a dentist appointment on thursday morning',
  'the weather has been terrible all week and the garden is flooded',
];

/** Recordings of other talkers for babble (the other flite voices, so never the caller's own). */
async function babbleTalkers(caller: Voice): Promise<Int16Array[]> {
  const others = ['kal16', 'slt', 'rms', 'awb'].filter((n) => n !== caller.name);
  return Promise.all(
    BABBLE_LINES.map(async (line, i) => {
      const pcm = await speak(line, { engine: 'flite', name: others[i % others.length]! });
      return pcm.samples;
    }),
  );
}

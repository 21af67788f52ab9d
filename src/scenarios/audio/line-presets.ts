/** The named phone lines of `taskline test --line NAME` (data only: the CLI lists them cheaply). */
import type { LineSpec } from '../schema.js';

/**
 * Named lines for `taskline test --line NAME`. No 8 kHz acoustic model is packaged for
 * pocketsphinx (Debian's `pocketsphinx-en-us` and PyPI's are 16 kHz), and the 16 kHz model
 * hears almost nothing through G.711, so `phone` keeps the line's other effects at 16 kHz and
 * `g711` adds the codec. No named line echoes the agent by default: Silero VAD calls even a
 * −40 dB echo of the agent's prompt speech (measured, bench/hearing-bench.ts), so without an
 * echo canceller on the line the agent cuts itself off; `echo` shows it.
 */
export const LINE_PRESETS: Record<string, LineSpec> = {
  clean: {},
  phone: { level_db: -6, noise: { kind: 'pink', snr_db: 35 } },
  g711: { codec: 'mulaw', level_db: -6, noise: { kind: 'pink', snr_db: 35 } },
  noisy: { noise: { kind: 'pink', snr_db: 10 } },
  white: { noise: { kind: 'white', snr_db: 15 } },
  babble: { noise: { kind: 'babble', snr_db: 10 } },
  echo: { echo: { delay: '200ms', level_db: -10 } },
  quiet: { level_db: -24 },
  loud: { level_db: 12 },
};

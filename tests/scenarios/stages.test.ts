import { describe, expect, it } from 'vitest';
import { formatStages } from '../../src/scenarios/audio/stages.js';
import { stageLines } from '../../src/scenarios/report.js';
import type { RunReport } from '../../src/scenarios/run-call.js';

describe('per-turn stages in the audio-mode report', () => {
  it('shows where a turn’s time went, the answer only when it came after an acknowledgement', () => {
    expect(
      formatStages({
        vadMs: 282,
        sttMs: 301,
        turnEndMs: 903,
        ttsFirstByteMs: 71,
        firstAudioMs: 330,
        answerMs: 1004,
      }),
    ).toBe('vad 282 · stt 301 · turn end 903 · tts 1st byte 71 · first audio 330 · answer 1004 ms');
    expect(formatStages({ vadMs: 580, turnEndMs: 640, firstAudioMs: 720, answerMs: 720 })).toBe(
      'vad 580 · turn end 640 · first audio 720 ms',
    );
    expect(formatStages({})).toBe('');
  });

  it('prints one line per speech turn that has stages', () => {
    const run: RunReport = {
      ok: true,
      failures: [],
      transcript: [],
      durationMs: 1,
      turns: [
        {
          turn: 0,
          label: 'say "yes"',
          input: 'speech',
          interruptions: 0,
          stages: { vadMs: 280, firstAudioMs: 330 },
        },
        { turn: 1, label: 'keys 12', input: 'keys', interruptions: 0 },
      ],
    };
    expect(stageLines(run, '  ')).toEqual(['  turn 1 (say "yes"): vad 280 · first audio 330 ms']);
  });
});

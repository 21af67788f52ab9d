// Hints per question: what the active capture expects reaches the recogniser (the OpenAI
// transcription prompt, upstream's session keyterms, any adapter), and is cleared after.
import { voice } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { attachCall } from '../../src/core/call.js';
import type { Expectation } from '../../src/core/expectation.js';
import { ensureLogger } from '../../src/core/log.js';
import {
  applyRecognizerHints,
  keytermHints,
  parseTranscriptionPrompt,
  promptHints,
  type RecognizerHints,
  transcriptionPrompt,
} from '../../src/core/recognizer-hints.js';

const expecting = (kind: Expectation['kind'], phrases: string[]): Expectation => ({
  task: 'q',
  kind,
  phrases,
  judge: () => 'unknown',
});

describe('recognizer hints', () => {
  it('writes a prompt a transcription model follows and the local endpoint reads back', () => {
    const prompt = transcriptionPrompt(expecting('yesNo', ['yes', 'no', 'no, thanks', 'yes']));
    expect(prompt).toBe('Yes or no: yes, no, no thanks.');
    expect(parseTranscriptionPrompt(prompt)).toEqual({
      kind: 'yesNo',
      phrases: ['yes', 'no', 'no thanks'],
    });
    expect(parseTranscriptionPrompt(transcriptionPrompt(expecting('digits', [])))).toEqual({
      kind: 'digits',
      phrases: [],
    });
    expect(parseTranscriptionPrompt('Hello there, this is a call about cars.')).toBeUndefined();
  });

  it('caps a long phrase list so the prompt stays within a model prompt', () => {
    const many = Array.from({ length: 300 }, (_, i) => `option number ${i}`);
    const prompt = transcriptionPrompt(expecting('choice', many));
    expect(prompt.length).toBeLessThanOrEqual(600);
    expect(parseTranscriptionPrompt(prompt)?.phrases[0]).toBe('option number 0');
  });

  it('follows the call: each capture sets the hints, its end clears them, stop clears them', () => {
    ensureLogger();
    const call = attachCall(new voice.AgentSession({}));
    const seen: Array<string | undefined> = [];
    const prompts: Array<string | undefined> = [];
    const spy: RecognizerHints = { update: (e) => seen.push(e?.kind) };
    const stt = { updateOptions: (o: { prompt?: string }) => prompts.push(o.prompt) };
    const outer = call.expect(expecting('choice', ['balance', 'lost card']));
    const stop = applyRecognizerHints(call, spy, promptHints(stt, { basePrompt: 'A bank call.' }));
    const inner = call.expect(expecting('digits', []));
    inner();
    outer();
    stop();
    call.expect(expecting('yesNo', ['yes']));
    expect(seen).toEqual(['choice', 'digits', 'choice', undefined, undefined]);
    expect(prompts).toEqual([
      'One of the options: balance, lost card.',
      'Digits.',
      'One of the options: balance, lost card.',
      'A bank call.',
      'A bank call.',
    ]);
  });

  it('passes the phrases to upstream session keyterms, keeping the base terms', () => {
    ensureLogger();
    const session = new voice.AgentSession({});
    const call = attachCall(session);
    const applied: string[][] = [];
    session.updateOptions = (o) => {
      if (o?.keyterms) applied.push(o.keyterms);
    };
    const stop = applyRecognizerHints(call, keytermHints(session, ['Acme']));
    const done = call.expect(expecting('choice', ['balance', 'lost card']));
    done();
    stop();
    expect(applied).toEqual([['Acme'], ['Acme', 'balance', 'lost card'], ['Acme'], ['Acme']]);
  });

  it('keeps hearing when an adapter throws', () => {
    ensureLogger();
    const call = attachCall(new voice.AgentSession({}));
    const seen: string[] = [];
    applyRecognizerHints(
      call,
      {
        update: () => {
          throw new Error('no hints here');
        },
      },
      { update: (e) => seen.push(e?.task ?? '-') },
    );
    expect(() => call.expect(expecting('yesNo', ['yes']))).not.toThrow();
    expect(seen).toEqual(['-', 'q']);
  });
});

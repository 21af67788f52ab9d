/**
 * Every example's call scenarios as calls through a real livekit-server: each example runs
 * as a real worker under its agent name, dispatched into a fresh room per scenario, where a
 * phone-line caller (participant kind SIP, its own number) speaks and keys the scenario's
 * turns. What a caller hears and the typed outcome are checked (see harness/scenario.ts).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E2E_DIR, liveKitSuite, liveKitUnavailable, type Worker } from './harness/index.js';
import { playScenario } from './harness/scenario.js';

/** Scenarios whose outcome depends on a part this suite replaces, and where that is covered. */
const TRANSFER =
  'its outcome is a transfer, which needs a SIP service behind the server: ivr-bank.test.ts (refused) and sip.test.ts (REFER)';
const REPAIRS =
  "repair patterns are proven in text mode and in audio mode (taskline test examples --audio); as room calls they would add ~4 minutes to CI's 40";
const ELSEWHERE: Record<string, string> = {
  'repair-cancel.scenario.yaml': REPAIRS,
  'repair-correct.scenario.yaml': REPAIRS,
  'repair-human.scenario.yaml': REPAIRS,
  'repair-repeat-skip.scenario.yaml': REPAIRS,
  'agent-transfer.scenario.yaml': TRANSFER,
  'barge-in.scenario.yaml': TRANSFER,
  'silence.scenario.yaml': TRANSFER,
  'wrong-pin.scenario.yaml': TRANSFER,
  'background-research.scenario.yaml':
    "the demo's scripted model answers by position, and in a room the researcher's finding is spoken while the caller is quiet, taking the step of the caller's next turn (text mode runs it: taskline test examples)",
};

const EXAMPLES = ['ivr-bank', 'survey', 'callback', 'assistant', 'concierge'] as const;

async function agentName(example: string): Promise<string> {
  const room = (await import(`../../examples/${example}/room.ts`)) as { AGENT_NAME: string };
  return room.AGENT_NAME;
}

describe.skipIf(await liveKitUnavailable())('the examples through a real LiveKit server', () => {
  const lk = liveKitSuite();
  let line = 0;

  for (const [index, example] of EXAMPLES.entries()) {
    describe(example, () => {
      let worker: Worker;
      beforeAll(async () => {
        worker = await lk.worker({
          file: `tests/e2e/workers/${example}.ts`,
          agentName: await agentName(example),
          port: 17891 + index,
          env: { TASKLINE_CHECKPOINTS: join(E2E_DIR, `${example}-${process.pid}.db`) },
        });
      });
      afterAll(async () => {
        await worker?.stop();
      });

      const dir = `examples/${example}`;
      const files = readdirSync(dir).filter((f) => f.endsWith('.scenario.yaml'));
      for (const file of files) {
        const why = ELSEWHERE[file];
        it.skipIf(why)(`${file}${why ? ` (skipped: ${why})` : ''}`, async () => {
          line += 1;
          const report = await playScenario(
            lk,
            worker,
            join(dir, file),
            `${example}-${process.pid}-${line}`,
            // A phone caller with a number of their own: a survey resumes by number.
            {
              identity: `sip_caller_${line}`,
              phoneNumber: `+1415555${String(200 + line).padStart(4, '0')}`,
            },
          );
          if (report.unchecked.length) {
            console.info(
              `[${example}/${file}] not observable from the caller's side: ${report.unchecked.join(', ')}`,
            );
          }
          expect(report.failures, JSON.stringify(report.agentLines)).toEqual([]);
        });
      }
    });
  }
});

/**
 * A stand-in for a call's agent job, for the guardian's decision tests: a real rtc-node
 * participant of kind agent (with the `lk.agent.name` attribute a worker stamps) in a room of
 * the real server, with a lifeline to the guardian when one is given — and nothing else, so
 * a test can kill it (SIGKILL) or let it leave on purpose (a `done` line on stdin) in
 * milliseconds. Prints `READY` once in the room (and greeted by the guardian), `LEFT` after
 * leaving.
 *
 *   tsx stand-in-agent.ts <ws url> <room> <identity> <agent name> [guardian url]
 */
import { createInterface } from 'node:readline';
import { Room } from '@livekit/rtc-node';
import { AccessToken } from 'livekit-server-sdk';
import { openLifeline } from '../../../src/app/guardian/lifeline.js';

const [url, room, identity, agentName, guardian] = process.argv.slice(2);
if (!url || !room || !identity || !agentName) {
  throw new Error('usage: stand-in-agent.ts <ws url> <room> <identity> <agent name> [guardian]');
}
const apiKey = process.env.LIVEKIT_API_KEY ?? 'devkey';
const apiSecret = process.env.LIVEKIT_API_SECRET ?? 'secret';

const token = new AccessToken(apiKey, apiSecret, {
  identity,
  attributes: { 'lk.agent.name': agentName },
  ttl: '10m',
});
token.kind = 'agent';
token.addGrant({ roomJoin: true, room, agent: true, canPublish: true, canSubscribe: true });
const rtc = new Room();
await rtc.connect(url, await token.toJwt(), { autoSubscribe: false, dynacast: false });

const lifeline = guardian
  ? await new Promise<ReturnType<typeof openLifeline>>((resolve) => {
      const opened = openLifeline({
        url: guardian,
        apiKey,
        apiSecret,
        call: { room, agentName, identity, jobId: identity.replace(/^agent-/, '') },
        onConnected: () => resolve(opened),
      });
    })
  : undefined;
process.stdout.write('READY\n');

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line.trim() !== 'done') return;
  await lifeline?.done('call ended');
  await rtc.disconnect();
  process.stdout.write('LEFT\n');
  process.exit(0);
});

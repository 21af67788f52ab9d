/**
 * reminder as a LiveKit worker that calls out: each job is one reminder call, dispatched by
 * name with the appointment as job metadata, e.g. with the lk CLI:
 *
 *   lk dispatch create --agent-name taskline-reminder --room reminder-1234 \
 *     --metadata '{"patient":"Sam Taylor","phone":"+15550123","when":"Friday at 10:30"}'
 *
 * The worker joins the room, dials the patient through LiveKit SIP (an outbound trunk:
 * LIVEKIT_SIP_OUTBOUND_TRUNK), and the call runs as in `index.ts`; keys for a switchboard are
 * sent by the agent's own participant in this room, where the patient's SIP leg is.
 *
 *   export LIVEKIT_URL=wss://… LIVEKIT_API_KEY=… LIVEKIT_API_SECRET=… OPENAI_API_KEY=…
 *   export LIVEKIT_SIP_OUTBOUND_TRUNK=ST_…
 *   npx tsx examples/reminder/room.ts start
 */
import { cli } from '@livekit/agents';
import { isMainModule, roomAgent, roomServerOptions } from 'taskline/app';
import { reminder } from './index.js';

/** The name jobs are dispatched to. */
export const AGENT_NAME = 'taskline-reminder';

/** The LiveKit worker entry: one outbound reminder call per job. */
export default roomAgent(reminder, { model: 'gpt-4.1-mini', outbound: {} });

/** The worker's options: this file's default export, dispatched by name only. */
export const serverOptions = () => roomServerOptions(import.meta.url, { agentName: AGENT_NAME });

if (isMainModule(import.meta.url)) cli.runApp(serverOptions());

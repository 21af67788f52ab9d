// Runs the concierge in a LiveKit room (Silero VAD, OpenAI speech, model and voice),
// dispatched by name (`taskline-concierge`):
//   OPENAI_API_KEY=... LIVEKIT_URL=... LIVEKIT_API_KEY=... LIVEKIT_API_SECRET=... \
//   CONCIERGE_DB=./concierge.db npx tsx examples/concierge/room.ts start
// Notes are keyed by the caller's number (SIP calls that present one); the Python sandbox
// is loaded when the call starts so the first calculation does not wait for it.
import { cli } from '@livekit/agents';
import { isMainModule, roomAgent, roomServerOptions } from 'taskline/app';
import concierge from './index.js';

/** The name this worker is dispatched by. */
export const AGENT_NAME = 'taskline-concierge';

/** The LiveKit worker entry: one fresh concierge per room. */
export default roomAgent(concierge);

/** The worker's options: this file's default export, dispatched by name only. */
export const serverOptions = () => roomServerOptions(import.meta.url, { agentName: AGENT_NAME });

if (isMainModule(import.meta.url)) cli.runApp(serverOptions());

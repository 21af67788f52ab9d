/**
 * ivr-bank in a LiveKit room: phone callers arrive through LiveKit SIP, an individual
 * dispatch rule puts each in its own room and dispatches this worker by name
 * (`taskline-ivr-bank`). Keys pressed on the phone reach the menu and the PIN entry as
 * `RoomEvent.DtmfReceived`; "talk to someone" hands the caller to the service desk over
 * LiveKit SIP — a cold REFER, or a warm transfer with TASKLINE_TRANSFER_MODE=warm (needs an
 * outbound trunk, LIVEKIT_SIP_OUTBOUND_TRUNK). Either way the caller stays on the line.
 *
 *   export LIVEKIT_URL=wss://… LIVEKIT_API_KEY=… LIVEKIT_API_SECRET=… OPENAI_API_KEY=…
 *   export TASKLINE_TRANSFER_TO=+15550100          # your service desk
 *   npx tsx examples/ivr-bank/room.ts start      # production worker; development: see the README
 */
import { cli } from '@livekit/agents';
import { isMainModule, roomAgent, roomServerOptions } from 'taskline/app';
import { ivrBank } from './index.js';

/** The name SIP dispatch rules dispatch this worker by. */
export const AGENT_NAME = 'taskline-ivr-bank';

/** The LiveKit worker entry: one bank call per room. */
export default roomAgent(ivrBank, { model: 'gpt-4.1-mini' });

/** The worker's options: this file's default export, dispatched by name only. */
export const serverOptions = () => roomServerOptions(import.meta.url, { agentName: AGENT_NAME });

if (isMainModule(import.meta.url)) cli.runApp(serverOptions());

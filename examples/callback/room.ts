// Runs the callback bot in a LiveKit room, dispatched by name (`taskline-callback`):
//   LIVEKIT_URL=... LIVEKIT_API_KEY=... LIVEKIT_API_SECRET=... OPENAI_API_KEY=... \
//     npx tsx examples/callback/room.ts start      # production worker; development: see the README
import { cli } from '@livekit/agents';
import { isMainModule, roomAgent, roomServerOptions } from 'taskline/app';
import callback from './index.js';

/** The name this worker is dispatched by. */
export const AGENT_NAME = 'taskline-callback';

export default roomAgent(callback);

/** The worker's options: this file's default export, dispatched by name only. */
export const serverOptions = () => roomServerOptions(import.meta.url, { agentName: AGENT_NAME });

if (isMainModule(import.meta.url)) cli.runApp(serverOptions());

// Runs the assistant in a LiveKit room (Silero VAD, OpenAI speech, model and voice),
// dispatched by name (`taskline-assistant`):
//   OPENAI_API_KEY=... LIVEKIT_URL=... LIVEKIT_API_KEY=... LIVEKIT_API_SECRET=... \
//     npx tsx examples/assistant/room.ts start      # production worker; development: see the README
// The researcher runs on OpenAI too (OPENAI_MODEL, default gpt-4o-mini), with its own
// model instance; its findings are spoken when ready, into whichever agent has the call.
import { cli } from '@livekit/agents';
import { isMainModule, roomAgent, roomServerOptions } from 'taskline/app';
import assistant from './index.js';

/** The name this worker is dispatched by. */
export const AGENT_NAME = 'taskline-assistant';

/** The LiveKit worker entry: one fresh assistant call per room. */
export default roomAgent(assistant);

/** The worker's options: this file's default export, dispatched by name only. */
export const serverOptions = () => roomServerOptions(import.meta.url, { agentName: AGENT_NAME });

if (isMainModule(import.meta.url)) cli.runApp(serverOptions());

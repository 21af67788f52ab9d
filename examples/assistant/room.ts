// Runs the assistant in a LiveKit room (Silero VAD, OpenAI speech, model and voice):
//   OPENAI_API_KEY=... LIVEKIT_URL=... LIVEKIT_API_KEY=... LIVEKIT_API_SECRET=... \
//     npx tsx examples/assistant/room.ts dev
// The researcher runs on OpenAI too (OPENAI_MODEL, default gpt-4o-mini), with its own
// model instance; its findings are spoken when ready, into whichever agent has the call.
import { fileURLToPath } from 'node:url';
import { cli, ServerOptions } from '@livekit/agents';
import { roomAgent } from 'taskline';
import assistant from './index.js';

/** The LiveKit worker entry: one fresh assistant call per room. */
export default roomAgent(assistant);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  cli.runApp(new ServerOptions({ agent: fileURLToPath(import.meta.url) }));
}

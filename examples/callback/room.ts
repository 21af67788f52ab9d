// Runs the callback bot in a LiveKit room:  npx tsx examples/callback/room.ts dev
// Needs LIVEKIT_URL, LIVEKIT_API_KEY, LIVEKIT_API_SECRET and OPENAI_API_KEY.
import { fileURLToPath } from 'node:url';
import { cli, ServerOptions } from '@livekit/agents';
import { roomAgent } from 'taskline';
import callback from './index.js';

export default roomAgent(callback);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  cli.runApp(new ServerOptions({ agent: fileURLToPath(import.meta.url) }));
}

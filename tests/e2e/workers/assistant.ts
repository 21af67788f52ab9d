/** examples/assistant as a real worker (see session.ts for what differs from room.ts). */
import { cli } from '@livekit/agents';
import assistant from '../../../examples/assistant/index.js';
import { AGENT_NAME } from '../../../examples/assistant/room.js';
import { isMainModule, roomAgent } from '../../../src/app/room.js';
import { e2eModule, e2eServerOptions, e2eSessionOptions } from './session.js';

export default roomAgent(() => e2eModule(assistant), e2eSessionOptions(assistant));

if (isMainModule(import.meta.url)) cli.runApp(e2eServerOptions(import.meta.url, AGENT_NAME));

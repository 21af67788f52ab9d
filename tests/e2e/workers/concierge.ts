/** examples/concierge as a real worker (see session.ts for what differs from room.ts). */
import { cli } from '@livekit/agents';
import concierge from '../../../examples/concierge/index.js';
import { AGENT_NAME } from '../../../examples/concierge/room.js';
import { isMainModule, roomAgent } from '../../../src/app/room.js';
import { e2eModule, e2eServerOptions, e2eSessionOptions } from './session.js';

export default roomAgent(() => e2eModule(concierge), e2eSessionOptions(concierge));

if (isMainModule(import.meta.url)) cli.runApp(e2eServerOptions(import.meta.url, AGENT_NAME));

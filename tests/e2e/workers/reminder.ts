/**
 * examples/reminder as a real outbound worker (see session.ts for what differs from room.ts):
 * each job dials the appointment's phone through livekit-sip with the suite's outbound trunk
 * (LIVEKIT_SIP_OUTBOUND_TRUNK, set by the test).
 */
import { cli } from '@livekit/agents';
import { reminder } from '../../../examples/reminder/index.js';
import { AGENT_NAME } from '../../../examples/reminder/room.js';
import { isMainModule, roomAgent } from '../../../src/app/room.js';
import { e2eModule, e2eServerOptions, e2eSessionOptions } from './session.js';

export default roomAgent(() => e2eModule(reminder), {
  ...e2eSessionOptions(reminder),
  outbound: {},
});

if (isMainModule(import.meta.url)) cli.runApp(e2eServerOptions(import.meta.url, AGENT_NAME));

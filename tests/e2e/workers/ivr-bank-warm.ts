/**
 * examples/ivr-bank as a real worker whose transfers are warm (TASKLINE_TRANSFER_MODE=warm,
 * an outbound trunk in LIVEKIT_SIP_OUTBOUND_TRUNK, from the test): "talk to someone" puts
 * the caller on hold, dials the desk over livekit-sip into a consultation room, briefs the
 * person who answers, and asks the server to move them into the caller's room once they
 * agree, all within {@link CONSULT_TIMEOUT_MS}. The model
 * is a stand-in that plays the briefing agent (the demo's stand-in only knows the menu);
 * everything else is as in ivr-bank.ts (see session.ts).
 */
import { cli } from '@livekit/agents';
import { ivrBank } from '../../../examples/ivr-bank/index.js';
import { isMainModule, roomAgent } from '../../../src/app/room.js';
import { briefingModel, CONSULT_TIMEOUT_MS, WARM_AGENT_NAME } from './briefing.js';
import { e2eModule, e2eServerOptions, e2eSessionOptions } from './session.js';

export default roomAgent(() => e2eModule(ivrBank), {
  ...e2eSessionOptions(ivrBank, { model: briefingModel }),
  // The caller's hold is bounded: ringing, briefing and the move within a minute.
  transfer: { warm: { consultTimeoutMs: CONSULT_TIMEOUT_MS } },
});

if (isMainModule(import.meta.url)) cli.runApp(e2eServerOptions(import.meta.url, WARM_AGENT_NAME));

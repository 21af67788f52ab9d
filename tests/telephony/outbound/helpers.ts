import { voice } from '@livekit/agents';
import type { CallOutOptions, CallOutOutcome } from '../../../src/telephony/outbound/call-out.js';
import { callOut } from '../../../src/telephony/outbound/call-out.js';
import { type DialResult, RecordingDialer } from '../../../src/telephony/outbound/dialer.js';
import {
  leaveVoicemail,
  type VoicemailOptions,
  type VoicemailResult,
} from '../../../src/telephony/outbound/voicemail-drop.js';
import { ScriptedLLM } from '../../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../../src/testing/simulated-caller.js';

export const MESSAGE =
  'Hi Sam, this is Riverside Clinic about your appointment on Friday at 10. Please call us back.';

/** An outbound call: dial, see who answered, leave a voicemail when a machine answered. */
export class Reminder extends voice.Agent {
  answered: CallOutOutcome | undefined;
  voicemail: VoicemailResult | undefined;
  readonly dialer: RecordingDialer;
  private readonly callOptions: Partial<CallOutOptions>;
  private readonly voicemailOptions: VoicemailOptions;

  constructor(
    options: {
      answer?: (to: string) => DialResult;
      call?: Partial<CallOutOptions>;
      voicemail?: VoicemailOptions;
    } = {},
  ) {
    super({ instructions: 'Appointment reminder.' });
    this.dialer = new RecordingDialer(options.answer ? (r) => options.answer!(r.to) : undefined);
    this.callOptions = options.call ?? {};
    this.voicemailOptions = options.voicemail ?? {};
  }

  override async onEnter(): Promise<void> {
    this.answered = await callOut(this.session, {
      dialer: this.dialer,
      to: '+15550123',
      ...this.callOptions,
    });
    if (this.answered.status !== 'voicemail') return;
    this.voicemail = await leaveVoicemail(
      this.session,
      'Hi {name}, this is Riverside Clinic about your appointment on {when}. Please call us back.',
      { name: 'Sam', when: 'Friday at 10' },
      { greeting: this.answered.greeting, ...this.voicemailOptions },
    );
  }
}

/** Starts a simulated outbound call (the simulated caller plays the far end). */
export async function startReminder(agent: Reminder): Promise<SimulatedCaller> {
  return SimulatedCaller.start({ agent, llm: new ScriptedLLM() });
}

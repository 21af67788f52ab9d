/**
 * reminder: Riverside Clinic's appointment reminder, which calls patients.
 *
 *   dial ─┬─ a person ──────────── reminder ── "will you make it?" (yes/no) ── confirmed / cancelled
 *         ├─ a voicemail ───────── the message, after the beep (or once the greeting ends)
 *         ├─ a full mailbox ────── nothing left: call again later
 *         ├─ a switchboard (IVR) ─ the patient's extension keyed ── a person ── reminder …
 *         └─ busy / no answer / failed (SIP status) ── call again later
 *
 * The whole call is `onEnter`, one awaited, typed step after another. Who answered, the
 * beep, the switchboard's menu and a yes or no are read by taskline's rules: no model call on
 * any of these paths. `room.ts` runs it as a LiveKit worker that dials through LiveKit SIP.
 */
import { voice } from '@livekit/agents';
import { type CallInstance, type CallSetup, defineCallModule } from 'taskline';
import { yesNo } from 'taskline/tasks';
import {
  type CallOutOutcome,
  callOut,
  type Dialer,
  endCall,
  farEndOf,
  type IvrOutcome,
  leaveVoicemail,
  navigateIvr,
  RecordingDialer,
  RecordingKeySender,
  type VoicemailResult,
} from 'taskline/telephony';
import { z } from 'zod';

/** Who to call, about what (a room job's metadata, as JSON). */
export const appointmentSchema = z.object({
  patient: z.string().min(1),
  phone: z.string().min(3),
  /** The patient's extension, when the number is a switchboard (a care home, an office). */
  extension: z
    .string()
    .regex(/^[0-9]{1,8}$/)
    .optional(),
  when: z.string().min(1),
});
export type Appointment = z.infer<typeof appointmentSchema>;

/** The demo's appointment. */
export const DEMO_APPOINTMENT: Appointment = {
  patient: 'Sam Taylor',
  phone: '+15550123',
  extension: '204',
  when: 'Friday at 10:30',
};

/** How the reminder ended. */
export type ReminderOutcome =
  | 'confirmed'
  | 'cancelled'
  | 'unconfirmed'
  | 'message_left'
  | 'mailbox_full'
  | 'not_reached'
  | 'hung_up';

/** The call's typed result. */
export interface ReminderResult {
  outcome?: ReminderOutcome;
  answeredBy?: CallOutOutcome['status'];
  voicemail?: VoicemailResult['status'];
  switchboard?: { status: IvrOutcome['status']; keys: string[] };
  /** Why the patient was not reached (SIP status, mailbox, switchboard). */
  reason?: string;
}

const MESSAGE =
  'Hello, this is Riverside Clinic with a reminder for {patient}: an appointment on {when}. If you cannot make it, please call us on 555 0100. Goodbye.';

/** The reminder: one outbound call, step by step. */
export class ReminderCall extends voice.Agent {
  readonly result: ReminderResult = {};
  private readonly appointment: Appointment;
  private readonly dialer: Dialer;

  constructor(appointment: Appointment, dialer: Dialer) {
    super({ instructions: 'You are the appointment reminder line of Riverside Clinic. Be brief.' });
    this.appointment = appointment;
    this.dialer = dialer;
  }

  override async onEnter(): Promise<void> {
    const answered = await callOut(this.session, {
      dialer: this.dialer,
      to: this.appointment.phone,
    });
    this.result.answeredBy = answered.status;
    switch (answered.status) {
      case 'busy':
      case 'no_answer':
      case 'failed':
        return this.end('not_reached', answered.reason);
      case 'hangup':
      case 'cancelled':
        return this.end('hung_up', answered.reason);
      case 'voicemail':
        return this.voicemail(answered.greeting);
      case 'ivr':
        return this.switchboard(answered.greeting);
      default:
        return this.remind();
    }
  }

  private async voicemail(greeting: string): Promise<void> {
    const left = await leaveVoicemail(this.session, MESSAGE, this.appointment, { greeting });
    this.result.voicemail = left.status;
    if (left.status === 'left' || left.status === 'no_beep') return this.end('message_left');
    if (left.status === 'mailbox_full') return this.end('mailbox_full', 'the mailbox is full');
    return this.end('hung_up', left.reason);
  }

  private async switchboard(greeting: string): Promise<void> {
    const { extension, patient } = this.appointment;
    const route = await navigateIvr(this.session, {
      reach: patient,
      synonyms: ['residents', 'patients'],
      greeting,
      answers: extension ? [{ when: 'extension', keys: extension }] : [],
    });
    this.result.switchboard = {
      status: route.status,
      keys: route.path.flatMap((step) => (step.did === 'keys' ? [step.value ?? ''] : [])),
    };
    if (route.status === 'human' || route.status === 'reached') return this.remind();
    const why = route.status === 'stuck' ? route.detail : route.reason;
    return this.end(route.status === 'hangup' ? 'hung_up' : 'not_reached', why);
  }

  private async remind(): Promise<void> {
    const { patient, when } = this.appointment;
    const coming = await yesNo({
      name: 'will_attend',
      question: `Hello, this is Riverside Clinic with a reminder for ${patient}: an appointment on ${when}. Will ${patient} be able to make it?`,
    }).run();
    if (coming.status === 'hangup') return this.end('hung_up');
    if (coming.status !== 'ok') {
      this.result.outcome = 'unconfirmed';
      return endCall(this.session, { goodbye: 'We will send the details by text. Goodbye.' });
    }
    this.result.outcome = coming.value ? 'confirmed' : 'cancelled';
    await endCall(this.session, {
      goodbye: coming.value
        ? `Thank you, we look forward to seeing ${patient} on ${when}. Goodbye.`
        : 'Thank you for letting us know. Reception will call to find a new time. Goodbye.',
    });
  }

  private async end(outcome: ReminderOutcome, reason?: string): Promise<void> {
    this.result.outcome = outcome;
    if (reason) this.result.reason = reason;
    await endCall(this.session);
  }
}

/**
 * Reads the appointment from a room job's metadata (JSON, see {@link appointmentSchema}); the
 * demo's outside a room. A room job dispatched without one is refused: it must not call anyone.
 */
export function appointmentOf(setup?: CallSetup): Appointment {
  if (setup?.metadata) return appointmentSchema.parse(JSON.parse(setup.metadata));
  if (setup?.room) {
    throw new Error(
      'The reminder was dispatched without an appointment: pass {"patient","phone","when"} as the job metadata.',
    );
  }
  return DEMO_APPOINTMENT;
}

/**
 * Builds one reminder call. In a room the dialer (LiveKit SIP) and the appointment come from
 * the room entry; the demo dials nobody (the simulated far end answers) and records keys.
 */
export function createReminderCall(setup?: CallSetup): CallInstance<ReminderResult> {
  const dialer = setup?.dialer ?? new RecordingDialer();
  if (setup?.session && !setup.room) farEndOf(setup.session).keys ??= new RecordingKeySender();
  const agent = new ReminderCall(appointmentOf(setup), dialer);
  return { agent, result: () => agent.result };
}

/** The reminder module for `taskline test`, `taskline run` and the room entry. */
export const reminder = defineCallModule<ReminderResult>({
  name: 'reminder',
  description:
    'Calls a patient: a reminder to a person, a voicemail after the beep, a switchboard navigated to their extension.',
  createCall: createReminderCall,
  demo: () => import('./demo.js'),
});

export default reminder;

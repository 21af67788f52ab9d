import { voice } from '@livekit/agents';
import { type CallModule, defineCallModule } from 'taskline';
import type { FlowEnding, FlowResult, FlowRunOptions, FlowStatus } from 'taskline/flows';
import { RecordingTransferer, type Transferer } from 'taskline/telephony';
import { GOODBYE_LINE, type SurveyAnswers, surveyFlow, useTransferer } from './flow.js';

export * from './flow.js';

/**
 * How every survey call ends: a completed survey has already thanked the caller, anything
 * else (a refusal, answers that never came, a lost checkpoint race) says goodbye; then the
 * bot ends the call. A caller who hung up hears nothing.
 */
export const SURVEY_ENDING: FlowEnding = {
  goodbye: (result) => {
    if (
      result.status === 'completed' ||
      result.status === 'hangup' ||
      result.status === 'transferred'
    ) {
      return undefined;
    }
    if (result.status === 'conflict') return 'This survey is continuing on another line. Goodbye.';
    return GOODBYE_LINE;
  },
};

/** What a survey call reports when it ends: how the flow ended and the typed answers. */
export interface SurveyOutcome {
  status: FlowStatus | 'running';
  answers: Partial<SurveyAnswers>;
  /** The caller's repair requests by kind (a repeat, a skip, a correction, a cancel, a person). */
  repairs: Record<string, number>;
}

/** The survey in either form: built in code (flow.ts) or loaded from survey.flow.yaml. */
export interface SurveyForm {
  run(options?: FlowRunOptions): Promise<FlowResult<SurveyAnswers>>;
}

/**
 * The call's agent: it runs the survey flow from `onEnter`, keeps the typed result, and ends
 * the call when the flow ends, however it ends. Pass checkpoint options to make calls
 * resumable, and a form to run the survey's document instead of its code.
 */
export class SurveyCall extends voice.Agent {
  result: FlowResult<SurveyAnswers> | undefined;
  private readonly runOptions: FlowRunOptions;
  private readonly form: SurveyForm;
  private readonly transferer: Transferer;

  /** @param transferer how a caller who asks for a person is handed over (the room's, or a recording stand-in). */
  constructor(
    runOptions: FlowRunOptions = {},
    form: SurveyForm = surveyFlow,
    transferer: Transferer = new RecordingTransferer(),
  ) {
    super({
      id: 'survey_call',
      instructions: 'You run a short customer survey by phone. Keep every reply short.',
    });
    this.runOptions = runOptions;
    this.form = form;
    this.transferer = transferer;
  }

  override async onEnter(): Promise<void> {
    useTransferer(this.session, this.transferer);
    this.result = await this.form.run({ onEnd: SURVEY_ENDING, ...this.runOptions });
  }

  /** The outcome so far (`running` until the flow ends). */
  get outcome(): SurveyOutcome {
    const r = this.result;
    return r
      ? { status: r.status, answers: r.answers, repairs: { ...r.report.repairs } }
      : { status: 'running', answers: {}, repairs: {} };
  }
}

/** The survey packaged for the README demo, `npx taskline run` and tests. */
export const surveyModule: CallModule<SurveyOutcome> = defineCallModule({
  name: 'survey',
  description:
    'A customer survey flow: consent, a 0-10 score by voice or keypad, then why (0-6) or a referral and email (9-10).',
  createCall(setup) {
    // A runner that hands a checkpoint store (`taskline test`) gets every answer checkpointed.
    const agent = new SurveyCall(
      setup?.checkpoints ? { checkpoints: setup.checkpoints } : {},
      surveyFlow,
      setup?.transferer,
    );
    return { agent, result: () => agent.outcome };
  },
  demo: () => import('./demo.js'),
});

export default surveyModule;

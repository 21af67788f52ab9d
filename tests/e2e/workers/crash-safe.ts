/**
 * A crash-safe survey as a real worker, for the guardian's e2e suite: examples/survey's room
 * agent checkpointed under the call's key (the room's sid, the same for every job dispatched
 * into the room) in the SQLite file at TASKLINE_CHECKPOINTS, shared by every worker of the
 * test; a job the guardian re-dispatched resumes the flow with one apology line
 * (`canResume`: only while the flow is unfinished). Each job keeps a lifeline to the guardian
 * at TASKLINE_GUARDIAN_URL (the room entry opens it).
 *
 * With TASKLINE_E2E_BACKOFFICE set, the call also looks the caller's account up in the
 * background as it starts: a remote sub-agent whose durable delegation (SQLite file at
 * TASKLINE_DELEGATIONS, NATS JetStream at TASKLINE_NATS_URL under TASKLINE_E2E_BUS_PREFIX)
 * the test's back office answers when it chooses. A resumed job recovers it instead of
 * asking again, and speaks its finding once. Every checkpoint write is printed
 * (`E2E_CHECKPOINT {json}`) so the test sees when and where a job resumed.
 *
 * Speech and model: see session.ts; the model also speaks a delivered finding.
 */
import { cli, type JobContext, type llm, type voice } from '@livekit/agents';
import { createSurveyModel } from '../../../examples/survey/demo.js';
import type { SurveyOutcome } from '../../../examples/survey/index.js';
import { surveyFlow, surveyModule } from '../../../examples/survey/index.js';
import { SurveyRoomCall } from '../../../examples/survey/room.js';
import { hasUnfinishedFlow, resumeApology } from '../../../src/app/continuity.js';
import { type CallModule, type CallSetup, defineCallModule } from '../../../src/app/module.js';
import { isMainModule, roomAgent } from '../../../src/app/room.js';
import { TaskManager } from '../../../src/delegation/manager.js';
import { type CheckpointStore, openCheckpointStore } from '../../../src/flows/index.js';
import type { FlowRunOptions } from '../../../src/flows/run-options.js';
import { NatsDelegationBus } from '../../../src/service/bus/nats.js';
import { createDelegationSender } from '../../../src/service/bus/sender.js';
import { remoteSubAgent } from '../../../src/service/remote.js';
import { SqliteDelegationStore } from '../../../src/service/stores/sqlite.js';
import { ScriptedLLM } from '../../../src/testing/scripted-llm.js';
import { e2eModule, e2eServerOptions, e2eSessionOptions } from './session.js';

/** The agent name the suite dispatches (and the guardian re-dispatches). */
export const CRASH_SAFE_AGENT = 'taskline-crash-safe';
/** The prefix of the line a worker prints after each checkpoint write. */
export const CHECKPOINT_PREFIX = 'E2E_CHECKPOINT ';
/** What the back office is asked, and the line the bot says with its finding. */
export const LOOKUP = {
  description: 'Look up the caller account',
  prompt: 'Account of +14155550177?',
};
/** Said when the back office's finding is delivered (it carries the finding's words). */
export const FINDING_LINE = 'About your account: your order ships tomorrow.';
/** What the back office answers. */
export const FINDING = 'The order ships tomorrow.';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: start workers with the suite`);
  return value;
}

/** The survey room agent that also keeps the account lookup going (or recovers it). */
class CrashSafeCall extends SurveyRoomCall {
  constructor(
    options: FlowRunOptions,
    private readonly lookup: { manager: TaskManager; resumed: boolean } | undefined,
  ) {
    super(options);
  }

  override async onEnter(): Promise<void> {
    if (this.lookup) {
      const { manager, resumed } = this.lookup;
      manager.attach(this.session);
      if (resumed) await manager.recover();
      else manager.start({ subagentType: 'lookup', ...LOOKUP });
    }
    await super.onEnter();
  }
}

/** The survey, checkpointed under the call's key and resumable after a crash. */
export function crashSafeSurvey(
  checkpoints: CheckpointStore,
  lookup?: (setup: CallSetup | undefined) => TaskManager,
): CallModule<SurveyOutcome> {
  return defineCallModule<SurveyOutcome>({
    ...surveyModule,
    name: 'crash-safe-survey',
    createCall(setup) {
      const agent = new CrashSafeCall(
        {
          checkpoints,
          ...(setup?.callKey ? { callId: setup.callKey } : {}),
          ...(setup?.resumed ? { resumeLine: resumeApology } : {}),
          onCheckpoint: (info) =>
            process.stdout.write(`${CHECKPOINT_PREFIX}${JSON.stringify(info)}\n`),
        },
        lookup ? { manager: lookup(setup), resumed: setup?.resumed !== undefined } : undefined,
      );
      return { agent, result: () => agent.outcome };
    },
    canResume: (setup) =>
      hasUnfinishedFlow(checkpoints, { flow: surveyFlow.name, callId: setup.callKey }),
  });
}

let delegations: Promise<{ store: SqliteDelegationStore; bus: NatsDelegationBus }> | undefined;
let checkpointStore: Promise<CheckpointStore> | undefined;

/** The process's stores and bus, opened once (in prewarm, before a job arrives). */
function openStores() {
  checkpointStore ??= openCheckpointStore({ kind: 'sqlite', path: env('TASKLINE_CHECKPOINTS') });
  if (process.env.TASKLINE_E2E_BACKOFFICE) {
    delegations ??= (async () => ({
      store: await SqliteDelegationStore.open({ path: env('TASKLINE_DELEGATIONS') }),
      bus: await NatsDelegationBus.connect({
        servers: env('TASKLINE_NATS_URL'),
        prefix: env('TASKLINE_E2E_BUS_PREFIX'),
        contract: false,
      }),
    }))();
  }
  return { checkpoints: checkpointStore, delegations };
}

/** The job's TaskManager with the back office's lookup, its sender named after the job. */
async function lookupManager(ctx: JobContext): Promise<TaskManager | undefined> {
  const target = process.env.TASKLINE_E2E_BACKOFFICE;
  const opened = openStores().delegations;
  if (!target || !opened) return undefined;
  const { store, bus } = await opened;
  const sender = await createDelegationSender({ agentId: `voice-${ctx.job.id}`, bus, store });
  return new TaskManager({
    // The finding is news the caller is waiting for: said as soon as the line is idle, the
    // open question asked again after it (the default, `step`, would hold it to a step end).
    deliverAt: 'interrupt',
    subagents: [
      remoteSubAgent({
        name: 'lookup',
        description: 'Looks the caller up in the back office.',
        sender,
        target,
      }),
    ],
  });
}

/**
 * The survey's stand-in model, and the line that speaks a delivered finding: a deferred
 * reply carrying the back office's words is answered with {@link FINDING_LINE}.
 */
class CrashSafeModel extends ScriptedLLM {
  readonly #survey = createSurveyModel();
  readonly #delivery = new ScriptedLLM({
    respond: (req) => {
      const text = req.messages
        .filter((m) => m.role === 'system')
        .map((m) => m.text)
        .join('\n');
      return { say: text.includes(FINDING) ? FINDING_LINE : 'Sorry, one moment.' };
    },
  });

  override bind(session: voice.AgentSession): this {
    super.bind(session);
    this.#survey.bind(session);
    this.#delivery.bind(session);
    return this;
  }

  override chat(args: Parameters<ScriptedLLM['chat']>[0]): llm.LLMStream {
    const delivery = args.chatCtx.items.some(
      (item) =>
        item.type === 'message' &&
        item.role === 'system' &&
        (item.textContent ?? '').includes('Delegated task results are ready'),
    );
    return (delivery ? this.#delivery : this.#survey).chat(args);
  }
}

const modelModule: CallModule = {
  ...surveyModule,
  demo: undefined,
  createScriptedModel: () => new CrashSafeModel(),
};

const sessionOptions = e2eSessionOptions(modelModule);

export default roomAgent(
  async (ctx) => {
    const checkpoints = await openStores().checkpoints;
    const manager = await lookupManager(ctx);
    return e2eModule(crashSafeSurvey(checkpoints, manager ? () => manager : undefined));
  },
  {
    ...sessionOptions,
    prewarm: async (proc) => {
      await sessionOptions.prewarm?.(proc);
      const { checkpoints, delegations } = openStores();
      await Promise.all([checkpoints, delegations]);
    },
  },
);

if (isMainModule(import.meta.url)) {
  cli.runApp(e2eServerOptions(import.meta.url, CRASH_SAFE_AGENT));
}

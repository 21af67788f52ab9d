// A small bank flow for checkpoint tests: consent, a masked PIN on the keypad, then an
// amount; the run is hosted by an agent whose onEnter awaits the flow. Also: the stores the
// tests run against (SQLite file, PostgreSQL) and a raw look at what a store holds.
import { voice } from '@livekit/agents';
import { announce } from '../../src/flows/announce.js';
import { flow } from '../../src/flows/builder.js';
import {
  type CheckpointKey,
  type CheckpointStore,
  type FlowState,
  PostgresCheckpointStore,
  SqliteCheckpointStore,
} from '../../src/flows/checkpoints/index.js';
import type { FlowRunOptions } from '../../src/flows/runner.js';
import type { FlowResult } from '../../src/flows/types.js';
import { number, yesNo } from '../../src/tasks/prebuilt.js';
import { collectDigits } from '../../src/telephony/digits.js';
import { ScriptedLLM } from '../../src/testing/scripted-llm.js';
import { SimulatedCaller } from '../../src/testing/simulated-caller.js';
import type { VirtualClock } from '../../src/testing/virtual-clock.js';

export const CONSENT = 'May I take a payment today?';
export const PIN = 'Enter your 4-digit PIN, then press pound.';
export const AMOUNT = 'How much would you like to pay?';
export const DONE = 'Payment scheduled. Goodbye!';

/** consent → pin (masked keypad digits) → amount (0-500) → done. */
export const bankFlow = flow('bank')
  .step('consent', yesNo({ name: 'consent', question: CONSENT }), {
    next: { true: 'pin', false: 'end' },
  })
  .step(
    'pin',
    collectDigits({ name: 'pin', prompt: PIN, minDigits: 4, maxDigits: 4, mask: true }),
    { label: 'your PIN' },
  )
  .step('amount', number({ name: 'amount', question: AMOUNT, min: 0, max: 500, integer: true }), {
    label: 'the amount',
  })
  .step('done', announce(DONE));

export type BankAnswers = { consent: boolean; pin?: string; amount?: number };

/** Starts a call that runs `run` from the host agent's onEnter; `box.result` holds its result. */
export async function startBank(
  options: FlowRunOptions & { clock?: VirtualClock; callId?: string },
  run: (o: FlowRunOptions) => Promise<FlowResult<unknown>> = (o) => bankFlow.run(o),
) {
  const { clock, ...runOptions } = options;
  const box: { result?: FlowResult<unknown> } = {};
  class Host extends voice.Agent {
    constructor() {
      super({ id: 'host', instructions: 'host' });
    }
    override async onEnter(): Promise<void> {
      box.result = await run(runOptions);
    }
  }
  const caller = await SimulatedCaller.start({
    agent: new Host(),
    llm: new ScriptedLLM(),
    clock,
    callId: options.callId,
  });
  return { caller, box };
}

/** Writes a well-formed state over whatever the store holds, through the store. */
export async function plant(store: CheckpointStore, key: CheckpointKey, state: FlowState) {
  const current = await store.load(key);
  await store.save(key, state, current?.version ?? 0);
}

/** The stores under test: SQLite (a file) and PostgreSQL (skipped when it is not running). */
export interface StoreUnderTest {
  name: string;
  open(): Promise<CheckpointStore>;
  /** The stored row's state column as text, exactly as the database holds it. */
  raw(key: CheckpointKey): Promise<string | undefined>;
  /** Writes a row's state column as given (any JSON, or text that is not JSON at all). */
  forge(key: CheckpointKey, state: unknown, options?: { text?: string }): Promise<void>;
  close(): Promise<void>;
}

export async function sqliteUnderTest(path: string): Promise<StoreUnderTest> {
  const { default: Database } = await import('better-sqlite3');
  const stores: CheckpointStore[] = [];
  const under: StoreUnderTest = {
    name: 'sqlite',
    async open() {
      const store = await SqliteCheckpointStore.open({ path });
      stores.push(store);
      return store;
    },
    async raw(key) {
      const db = new Database(path, { readonly: true });
      try {
        const row = db
          .prepare('SELECT state FROM taskline_flow_checkpoints WHERE flow = ? AND call_id = ?')
          .get(key.flow, key.callId) as { state: string } | undefined;
        return row?.state;
      } finally {
        db.close();
      }
    },
    async forge(key, state, options = {}) {
      await under.open();
      const db = new Database(path);
      try {
        db.prepare(
          `INSERT INTO taskline_flow_checkpoints (flow, call_id, version, status, position, state, updated_at)
           VALUES (?, ?, 1, 'running', '?', ?, ?)
           ON CONFLICT (flow, call_id) DO UPDATE SET version = version + 1, state = excluded.state`,
        ).run(key.flow, key.callId, options.text ?? JSON.stringify(state), Date.now());
      } finally {
        db.close();
      }
    },
    async close() {
      for (const s of stores) await s.close();
    },
  };
  return under;
}

export async function postgresUnderTest(url: string, table: string): Promise<StoreUnderTest> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const stores: CheckpointStore[] = [];
  const under: StoreUnderTest = {
    name: 'postgres',
    async open() {
      const store = await PostgresCheckpointStore.connect({ pool, table });
      stores.push(store);
      return store;
    },
    async raw(key) {
      const { rows } = await pool.query<{ state: string }>(
        `SELECT state::text AS state FROM "${table}" WHERE flow = $1 AND call_id = $2`,
        [key.flow, key.callId],
      );
      return rows[0]?.state;
    },
    async forge(key, state) {
      await under.open();
      await pool.query(
        `INSERT INTO "${table}" (flow, call_id, version, status, position, state, updated_at)
         VALUES ($1, $2, 1, 'running', '?', $3::jsonb, $4)
         ON CONFLICT (flow, call_id) DO UPDATE SET version = "${table}".version + 1, state = excluded.state`,
        [key.flow, key.callId, JSON.stringify(state), Date.now()],
      );
    },
    async close() {
      await pool.query(`DROP TABLE IF EXISTS "${table}"`).catch(() => undefined);
      await pool.end();
    },
  };
  return under;
}

/**
 * The NATS bus of the delegation service: JetStream streams and consumers for tasks, results
 * and changes, and the wire contract's plain-JSON subjects. Over 500 lines: one connection's
 * streams, consumers and their shutdown share state and read best together.
 */
import type {
  ConsumerMessages,
  JetStreamClient,
  JetStreamManager,
  JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { TasklineError } from '../../core/errors.js';
import { loadOptional } from '../../core/optional.js';
import { recordTraceHeaders, type TraceCarrier } from '../../observability/propagation.js';
import { contractMessageOf, contractSubject } from './contract.js';
import { JobLimit, RecentKeys } from './dedupe.js';
import {
  channelOf,
  type DelegationChannel,
  type DelegationEvent,
  eventKey,
  parseDelegationEvent,
} from './events.js';
import { errorMessage, logDelegation } from './log.js';
import { SelectionMessage } from './signals.js';
import { agentToken, checkBusPrefix } from './subjects.js';
import type {
  BusSubscription,
  DelegationBus,
  DelegationEventHandler,
  PublishAck,
  SubscribeOptions,
  WatchOptions,
} from './types.js';

/** Options of {@link NatsDelegationBus.connect}. */
export interface NatsDelegationBusOptions {
  /** Server URL(s) (default `TASKLINE_NATS_URL` or 127.0.0.1:4222); ignored with `connection`. */
  servers?: string | string[];
  /** An open connection the caller owns (the bus never closes it). */
  connection?: NatsConnection;
  /**
   * Wait between reconnect attempts when the server goes away (default 2 s). The bus's own
   * connection never stops trying: events wait in the store's outbox meanwhile.
   */
  reconnectWaitMs?: number;
  /** Subject root and stream-name stem (default `taskline`); one prefix = one isolated bus. */
  prefix?: string;
  /** Time a delivered event may stay unacknowledged before redelivery (default 30 s). */
  ackWaitMs?: number;
  /** Deliveries per event before JetStream gives up on it (default 20). */
  maxDeliver?: number;
  /** How long the stream keeps events (default 7 days). */
  maxAgeMs?: number;
  /** Publish-side dedupe window for msg ids (default 2 minutes). */
  duplicateWindowMs?: number;
  /** Most events pulled at once per subscription (default 64; at most twice its concurrency). */
  batch?: number;
  /** Event keys remembered for consumer-side dedupe (default 10,000). */
  dedupeWindow?: number;
  /**
   * The contract's events on plain NATS subjects named after the receiving agent (`agentB`),
   * for subscribers that know nothing of taskline. Default on, with bare agent names; give a
   * `prefix` to publish on `<prefix>.<agent>` instead, or `false` to publish none.
   */
  contract?: false | { prefix?: string };
}

type NatsCore = typeof import('@nats-io/transport-node');
type NatsJs = typeof import('@nats-io/jetstream');

/** Delay before redelivering an event whose handler threw: 200 ms doubling, capped at 30 s. */
function backoffMs(attempt: number): number {
  return Math.min(200 * 2 ** Math.max(0, attempt - 1), 30_000);
}

/**
 * The cross-process bus on NATS JetStream. Work for an agent (`delegation_task`, cancels) goes
 * to `<prefix>.to.<agent>.work.<event>` in a work-queue stream (`<prefix>_jobs`): one durable
 * pull consumer per agent, shared by every worker serving that agent id, so a pool of workers
 * takes each job exactly once and a job whose worker died is redelivered to another. Replies
 * (`delegation_result`, status) go to `<prefix>.to.<agent>.reply.<event>` in a limits stream
 * (`<prefix>_delegations`, kept `maxAgeMs`). Both: explicit ack (redelivered after `ackWaitMs`,
 * while a slow handler keeps it alive with `working()`), msg-id dedupe on publish and key dedupe
 * on receive. After JetStream has stored an event, its contract JSON is also published on the
 * plain subject named after the receiving agent (see {@link NatsDelegationBusOptions.contract}).
 * Selection signals use plain subjects `<prefix>.signal.<agent>`. The NATS client is loaded on
 * `connect`.
 */
export class NatsDelegationBus implements DelegationBus {
  /** The JetStream stream holding replies (results, status) to agents. */
  readonly stream: string;
  /** The JetStream work-queue stream holding work (tasks, cancels) for agents and pools. */
  readonly jobStream: string;
  private readonly handled: RecentKeys;
  private readonly closers = new Set<() => Promise<void>>();
  private closed = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly owned: boolean,
    private readonly core: NatsCore,
    private readonly jsMod: NatsJs,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly prefix: string,
    private readonly options: Required<
      Pick<NatsDelegationBusOptions, 'ackWaitMs' | 'maxDeliver' | 'batch'>
    >,
    dedupeWindow: number,
    private readonly contractPrefix: string | undefined,
  ) {
    this.stream = `${prefix}_delegations`;
    this.jobStream = `${prefix}_jobs`;
    this.handled = new RecentKeys(dedupeWindow);
  }

  /** Connects (or adopts `connection`) and creates the stream if it does not exist. */
  static async connect(options: NatsDelegationBusOptions = {}): Promise<NatsDelegationBus> {
    const prefix = checkBusPrefix(options.prefix ?? 'taskline');
    const contractPrefix =
      options.contract === false ? undefined : (options.contract?.prefix ?? '');
    if (contractPrefix && contractSubject('agent', contractPrefix) === undefined) {
      throw new TasklineError(
        'invalid_argument',
        `Contract subject prefix ${JSON.stringify(contractPrefix)} is not a NATS subject; use tokens like "org.agents".`,
      );
    }
    const [core, jsMod] = await Promise.all([
      loadOptional(
        () => import('@nats-io/transport-node'),
        '@nats-io/transport-node',
        'the NATS delegation bus',
      ),
      loadOptional(
        () => import('@nats-io/jetstream'),
        '@nats-io/jetstream',
        'the NATS delegation bus',
      ),
    ]);
    const nc =
      options.connection ??
      (await core.connect({
        servers: options.servers ?? process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222',
        name: `taskline-delegations-${prefix}`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: options.reconnectWaitMs ?? 2_000,
      }));
    try {
      const jsm = await jsMod.jetstreamManager(nc);
      const bus = new NatsDelegationBus(
        nc,
        options.connection === undefined,
        core,
        jsMod,
        jsMod.jetstream(nc),
        jsm,
        prefix,
        {
          ackWaitMs: options.ackWaitMs ?? 30_000,
          maxDeliver: options.maxDeliver ?? 20,
          batch: options.batch ?? 64,
        },
        options.dedupeWindow ?? 10_000,
        contractPrefix,
      );
      await bus.ensureStreams(
        options.maxAgeMs ?? 7 * 86_400_000,
        options.duplicateWindowMs ?? 120_000,
      );
      return bus;
    } catch (error) {
      if (options.connection === undefined) await nc.close();
      throw error;
    }
  }

  private async ensureStreams(maxAgeMs: number, duplicateWindowMs: number): Promise<void> {
    const { RetentionPolicy } = this.jsMod;
    const common = {
      max_age: this.core.nanos(maxAgeMs),
      duplicate_window: this.core.nanos(duplicateWindowMs),
    };
    // Replies first: a stream from before work queues captured `<prefix>.to.>`, and must give
    // up the work subjects before the work-queue stream can take them.
    await this.ensureStream(
      this.stream,
      [this.channelSubjects('reply')],
      RetentionPolicy.Limits,
      common,
    );
    await this.ensureStream(
      this.jobStream,
      [this.channelSubjects('work')],
      RetentionPolicy.Workqueue,
      common,
    );
  }

  private async ensureStream(
    name: string,
    subjects: string[],
    retention: import('@nats-io/jetstream').RetentionPolicy,
    common: { max_age: number; duplicate_window: number },
  ): Promise<void> {
    const existing = await this.jsm.streams.info(name).catch(() => undefined);
    if (existing) {
      if (existing.config.retention !== retention) {
        throw new TasklineError(
          'invalid_state',
          `NATS stream ${name} has retention ${existing.config.retention}, not ${retention}; delete it (nats stream rm ${name}) or use another prefix.`,
        );
      }
      const same =
        existing.config.subjects?.length === subjects.length &&
        subjects.every((s) => existing.config.subjects?.includes(s));
      if (!same) await this.jsm.streams.update(name, { ...existing.config, subjects });
      return;
    }
    try {
      await this.jsm.streams.add({ name, subjects, retention, ...common });
    } catch (error) {
      // Another process may have created it in between.
      await this.jsm.streams.info(name).catch(() => {
        throw error;
      });
    }
  }

  private channelSubjects(channel: DelegationChannel): string {
    return `${this.prefix}.to.*.${channel}.*`;
  }

  private streamOf(channel: DelegationChannel): string {
    return channel === 'work' ? this.jobStream : this.stream;
  }

  private subject(agentId: string, channel: DelegationChannel, kind: string): string {
    return `${this.prefix}.to.${agentToken(agentId)}.${channel}.${kind}`;
  }

  private assertOpen(): void {
    if (this.closed) throw new TasklineError('invalid_state', 'This delegation bus is closed.');
  }

  /**
   * Stores the event in JetStream (deduplicated by {@link eventKey}), then publishes its
   * contract JSON on the receiving agent's plain subject. The contract message goes out after
   * every store, duplicates included: a publisher retrying after a crash may repeat it (each
   * carries the event key as `Nats-Msg-Id`), but never drops it.
   */
  async publish(event: DelegationEvent): Promise<PublishAck> {
    this.assertOpen();
    const key = eventKey(event);
    const trace = recordTraceHeaders(event.record.sub_task_data);
    const ack = await this.js.publish(
      this.subject(event.to, channelOf(event.event), event.event),
      JSON.stringify(event),
      { msgID: key, ...(trace ? { headers: this.traceHeaders(trace) } : {}) },
    );
    this.publishContract(event, key, trace);
    return { duplicate: ack.duplicate };
  }

  private readonly unroutable = new RecentKeys(1_000);

  /** W3C trace context headers (`traceparent`, `tracestate`) for a message. */
  private traceHeaders(trace: TraceCarrier) {
    const headers = this.core.headers();
    headers.set('traceparent', trace.traceparent);
    if (trace.tracestate) headers.set('tracestate', trace.tracestate);
    return headers;
  }

  private publishContract(event: DelegationEvent, key: string, trace?: TraceCarrier): void {
    if (this.contractPrefix === undefined) return;
    const message = contractMessageOf(event);
    if (!message) return;
    const subject = contractSubject(message.to, this.contractPrefix);
    if (subject === undefined) {
      if (this.unroutable.add(message.to)) {
        logDelegation('warn', 'agent id is not a NATS subject; no contract event for it', {
          agent: message.to,
        });
      }
      return;
    }
    const headers = trace ? this.traceHeaders(trace) : this.core.headers();
    headers.set('Nats-Msg-Id', key);
    this.nc.publish(subject, JSON.stringify(message.event), { headers });
  }

  private async ensureConsumer(stream: string, durable: string, filter: string): Promise<void> {
    const ackWait = this.core.nanos(this.options.ackWaitMs);
    try {
      const info = await this.jsm.consumers.info(stream, durable);
      if (info.config.ack_wait !== ackWait || info.config.max_deliver !== this.options.maxDeliver) {
        await this.jsm.consumers.update(stream, durable, {
          ack_wait: ackWait,
          max_deliver: this.options.maxDeliver,
        });
      }
      return;
    } catch {
      // not there yet: create it below
    }
    try {
      await this.jsm.consumers.add(stream, {
        durable_name: durable,
        ack_policy: this.jsMod.AckPolicy.Explicit,
        deliver_policy: this.jsMod.DeliverPolicy.All,
        filter_subject: filter,
        ack_wait: ackWait,
        max_deliver: this.options.maxDeliver,
        max_ack_pending: 1_000,
      });
    } catch (error) {
      await this.jsm.consumers.info(stream, durable).catch(() => {
        throw error;
      });
    }
  }

  async subscribe(
    agentId: string,
    channel: DelegationChannel,
    handler: DelegationEventHandler,
    options: SubscribeOptions = {},
  ): Promise<BusSubscription> {
    this.assertOpen();
    if (channel === 'work' && options.durable !== undefined) {
      throw new TasklineError(
        'invalid_argument',
        'Work is a queue shared by every worker of an agent id; a separate durable consumer only applies to replies.',
      );
    }
    const suffix = options.durable === undefined ? '' : `_${agentToken(options.durable)}`;
    const durable = `${channel}_${agentToken(agentId)}${suffix}`;
    const stream = this.streamOf(channel);
    await this.ensureConsumer(
      stream,
      durable,
      `${this.prefix}.to.${agentToken(agentId)}.${channel}.*`,
    );
    const consumer = await this.js.consumers.get(stream, durable);
    const concurrency = Math.max(1, options.concurrency ?? 1);
    // Pull little more than can run at once: a message waiting in the local buffer still runs
    // down its ack wait, and would be redelivered while it waits.
    const messages: ConsumerMessages = await consumer.consume({
      max_messages: Math.max(1, Math.min(this.options.batch, concurrency * 2)),
    });
    const slots = new JobLimit(concurrency);
    const running = new Set<Promise<void>>();
    const loop = (async () => {
      for await (const m of messages) {
        await slots.acquire();
        const job = this.handle(m, agentId, handler).finally(() => {
          slots.release();
          running.delete(job);
        });
        running.add(job);
      }
    })().catch((error: unknown) => {
      logDelegation('error', 'delegation consumer stopped', {
        durable,
        error: errorMessage(error),
      });
    });
    const close = async () => {
      this.closers.delete(close);
      await messages.close();
      await loop;
      await Promise.allSettled([...running]);
    };
    this.closers.add(close);
    return { close };
  }

  private async handle(m: JsMsg, agentId: string, handler: DelegationEventHandler): Promise<void> {
    let event: DelegationEvent;
    try {
      event = parseDelegationEvent(JSON.parse(m.string()));
    } catch (error) {
      logDelegation('error', 'malformed delegation event dropped', {
        subject: m.subject,
        error: errorMessage(error),
      });
      m.term('malformed');
      return;
    }
    const key = `${agentId}\u0000${eventKey(event)}`;
    if (this.handled.has(key)) {
      m.ack();
      return;
    }
    const attempt = m.info.deliveryCount;
    const heartbeat = setInterval(() => m.working(), Math.max(100, this.options.ackWaitMs / 2));
    heartbeat.unref();
    try {
      await handler(event, { attempt });
      this.handled.add(key);
      m.ack();
    } catch (error) {
      logDelegation('warn', 'delegation handler failed; the event will be redelivered', {
        key: eventKey(event),
        attempt,
        error: errorMessage(error),
      });
      m.nak(backoffMs(attempt));
    } finally {
      clearInterval(heartbeat);
    }
  }

  async watch(
    handler: (event: DelegationEvent) => void,
    options: WatchOptions = {},
  ): Promise<BusSubscription> {
    this.assertOpen();
    const subject =
      options.to === undefined
        ? `${this.prefix}.to.>`
        : `${this.prefix}.to.${agentToken(options.to)}.>`;
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        let event: DelegationEvent;
        try {
          event = parseDelegationEvent(safeJson(msg.string()));
        } catch {
          return;
        }
        try {
          handler(event);
        } catch (error) {
          logDelegation('warn', 'delegation watcher failed', { error: errorMessage(error) });
        }
      },
    });
    return this.track(sub);
  }

  async signal(to: string, message: SelectionMessage): Promise<void> {
    this.assertOpen();
    this.nc.publish(`${this.prefix}.signal.${agentToken(to)}`, JSON.stringify(message));
  }

  async onSignal(
    agentId: string,
    handler: (message: SelectionMessage) => void,
  ): Promise<BusSubscription> {
    this.assertOpen();
    const sub = this.nc.subscribe(`${this.prefix}.signal.${agentToken(agentId)}`, {
      callback: (err, msg) => {
        if (err) return;
        const parsed = SelectionMessage.safeParse(safeJson(msg.string()));
        if (!parsed.success) return;
        try {
          handler(parsed.data);
        } catch (error) {
          logDelegation('warn', 'selection signal handler failed', { error: errorMessage(error) });
        }
      },
    });
    return this.track(sub);
  }

  /** Registers a core subscription and waits until the server has it (so no message is missed). */
  private async track(sub: Subscription): Promise<BusSubscription> {
    const close = async () => {
      this.closers.delete(close);
      sub.unsubscribe();
    };
    this.closers.add(close);
    await this.nc.flush();
    return { close };
  }

  /** Round trip to the NATS server (health checks); rejects when the connection is closed. */
  async ping(): Promise<void> {
    if (this.closed || this.nc.isClosed()) {
      throw new TasklineError('invalid_state', 'The NATS connection is closed.');
    }
    await this.nc.flush();
  }

  /** Deletes this bus's streams and every event in them (tests and benches clean up with it). */
  async deleteStream(): Promise<void> {
    await Promise.allSettled([
      this.jsm.streams.delete(this.stream),
      this.jsm.streams.delete(this.jobStream),
    ]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.closers].map((c) => c()));
    if (this.owned) await this.nc.drain().catch(() => this.nc.close());
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

import type { DelegationChannel, DelegationEvent } from './events.js';
import type { SelectionMessage } from './signals.js';

/** How a handler is being called: the delivery attempt (1 on first delivery). */
export interface DeliveryInfo {
  attempt: number;
}

/**
 * Handles one event. Resolving acknowledges it; throwing makes the bus deliver it again later
 * (at-least-once), up to the bus's delivery cap.
 */
export type DelegationEventHandler = (
  event: DelegationEvent,
  info: DeliveryInfo,
) => Promise<void> | void;

/** Options of {@link DelegationBus.subscribe}. */
export interface SubscribeOptions {
  /** Handlers running at once for this subscription (default 1: in order). */
  concurrency?: number;
  /** Suffix for the durable consumer name, to run independent consumers of one inbox. */
  durable?: string;
}

/** Options of {@link DelegationBus.watch}. */
export interface WatchOptions {
  /** Only events addressed to this agent. */
  to?: string;
}

/** A live subscription; `close()` stops delivery (unacknowledged events are delivered again later). */
export interface BusSubscription {
  close(): Promise<void>;
}

/** Result of a publish: whether the bus recognised the event as a duplicate and dropped it. */
export interface PublishAck {
  duplicate: boolean;
}

/**
 * Carries delegation events between agents: each agent has a `work` inbox (tasks, cancels) and
 * a `reply` inbox (results, status), delivered at least once to a durable subscription and
 * deduplicated by {@link eventKey}. `watch` sees every event (best effort, for dashboards and the
 * WebSocket API); `signal`/`onSignal` carry short-lived selection messages (bids, votes).
 */
export interface DelegationBus {
  publish(event: DelegationEvent): Promise<PublishAck>;
  subscribe(
    agentId: string,
    channel: DelegationChannel,
    handler: DelegationEventHandler,
    options?: SubscribeOptions,
  ): Promise<BusSubscription>;
  /** Sees every event as it is published (best effort); `to` narrows it to one agent's events. */
  watch(
    handler: (event: DelegationEvent) => void,
    options?: WatchOptions,
  ): Promise<BusSubscription>;
  signal(to: string, message: SelectionMessage): Promise<void>;
  onSignal(agentId: string, handler: (message: SelectionMessage) => void): Promise<BusSubscription>;
  /** Resolves when the bus's server answers (health checks); rejects when it is closed or down. */
  ping?(): Promise<void>;
  close(): Promise<void>;
}

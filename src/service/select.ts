import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../core/clock.js';
import { type DelegationRecord, deadlineSeconds } from '../delegation/record.js';
import { errorMessage, logDelegation } from './bus/log.js';
import type { SelectionMessage } from './bus/signals.js';
import type { BusSubscription, DelegationBus } from './bus/types.js';

/** The sub-task a target is being chosen for. */
export interface SelectionTask {
  delegation_type: string;
  sub_task_data: Record<string, unknown>;
}

/** The part of a delegation record a selection method looks at. */
export function selectionTaskOf(
  record: Pick<DelegationRecord, 'delegation_type' | 'sub_task_data'>,
): SelectionTask {
  return { delegation_type: record.delegation_type, sub_task_data: record.sub_task_data };
}

/** An agent that may take sub-tasks, and the delegation types it can handle. */
export interface AgentInfo {
  id: string;
  capabilities: readonly string[];
}

/** One bid in an auction. */
export interface Bid {
  agent: string;
  cost: number;
  eta_ms: number;
}

/** How a target was chosen, or why none could be. */
export type Selection =
  | { ok: true; target: string; method: SelectionStrategy['method']; detail?: unknown }
  | {
      ok: false;
      method: SelectionStrategy['method'];
      reason: 'no_candidates' | 'no_bids' | 'no_votes' | 'no_majority' | 'no_rule';
      message: string;
      detail?: unknown;
    };

/** A plan rule: when the sub-task matches, delegate to `target`. */
export interface PlanRule {
  /** Delegation type(s) the rule applies to (any when absent). */
  type?: string | readonly string[];
  /** sub_task_data fields that must equal these values (top-level, strict equality). */
  data?: Record<string, string | number | boolean | null>;
  /** Any other condition. */
  when?: (task: SelectionTask) => boolean;
  /** The target, or a function of the sub-task. */
  target: string | ((task: SelectionTask) => string);
}

/** How to choose a target. */
export type SelectionStrategy =
  | { method: 'direct'; target: string }
  | {
      method: 'auction';
      agents: readonly AgentInfo[];
      /** How long bids are collected, on the clock. */
      windowMs: number;
      /** Primary key (default `cost`); the other is the tie-break, then the agent id. */
      rankBy?: 'cost' | 'eta';
    }
  | {
      method: 'vote';
      voters: readonly string[];
      candidates: readonly string[];
      windowMs: number;
      /** `majority`: more than half the first choices; `borda`: ranked points (default). */
      rule?: 'majority' | 'borda';
    }
  | { method: 'plan'; rules: readonly PlanRule[]; fallback?: string };

/** What auctions and votes need: the bus, who is asking, and a clock for the deadline. */
export interface SelectionContext {
  bus: DelegationBus;
  /** The agent running the auction or vote (answers come to its signal inbox). */
  requester: string;
  clock?: Clock;
}

/** Picks the winning bid: lowest primary key, then the other key, then the agent id. */
export function pickBid(bids: readonly Bid[], rankBy: 'cost' | 'eta' = 'cost'): Bid | undefined {
  const key = (b: Bid) => (rankBy === 'cost' ? [b.cost, b.eta_ms] : [b.eta_ms, b.cost]);
  let best: Bid | undefined;
  for (const b of bids) {
    if (!best) {
      best = b;
      continue;
    }
    const [a1, a2] = key(b);
    const [b1, b2] = key(best);
    if (a1! < b1! || (a1 === b1 && (a2! < b2! || (a2 === b2 && b.agent < best.agent)))) {
      best = b;
    }
  }
  return best;
}

/** Tally of a vote; rankings list candidates best first. */
export interface VoteTally {
  rule: 'majority' | 'borda';
  votes: number;
  /** First-choice counts (majority) or Borda points, by candidate. */
  scores: Record<string, number>;
}

/**
 * Counts rankings. Majority: a candidate needs more than half of the first choices. Borda: with
 * n candidates, place i earns n-1-i points (unranked earn 0). Ties break on first choices,
 * then the candidate id. Unknown or repeated names in a ranking are ignored.
 */
export function tallyVotes(
  candidates: readonly string[],
  rankings: readonly (readonly string[])[],
  rule: 'majority' | 'borda' = 'borda',
): { winner?: string; tally: VoteTally } {
  const known = new Set(candidates);
  const first: Record<string, number> = {};
  const points: Record<string, number> = {};
  for (const c of candidates) {
    first[c] = 0;
    points[c] = 0;
  }
  let votes = 0;
  for (const ranking of rankings) {
    const clean = [...new Set(ranking)].filter((c) => known.has(c));
    if (clean.length === 0) continue;
    votes++;
    first[clean[0]!]! += 1;
    clean.forEach((c, i) => {
      points[c]! += candidates.length - 1 - i;
    });
  }
  const scores = rule === 'majority' ? first : points;
  const tally: VoteTally = { rule, votes, scores };
  if (votes === 0) return { tally };
  const order = [...candidates].sort(
    (a, b) => scores[b]! - scores[a]! || first[b]! - first[a]! || (a < b ? -1 : a > b ? 1 : 0),
  );
  const top = order[0]!;
  if (rule === 'majority' && first[top]! * 2 <= votes) return { tally };
  return { winner: top, tally };
}

/** Chooses a target from plan rules: the first rule that matches, else the fallback. */
export function planTarget(
  rules: readonly PlanRule[],
  task: SelectionTask,
  fallback?: string,
): Selection {
  for (const [index, rule] of rules.entries()) {
    if (rule.type !== undefined) {
      const types = typeof rule.type === 'string' ? [rule.type] : rule.type;
      if (!types.includes(task.delegation_type)) continue;
    }
    if (rule.data && !Object.entries(rule.data).every(([k, v]) => task.sub_task_data[k] === v)) {
      continue;
    }
    if (rule.when && !rule.when(task)) continue;
    const target = typeof rule.target === 'string' ? rule.target : rule.target(task);
    return { ok: true, target, method: 'plan', detail: { rule: index } };
  }
  if (fallback !== undefined)
    return { ok: true, target: fallback, method: 'plan', detail: { rule: 'fallback' } };
  return {
    ok: false,
    method: 'plan',
    reason: 'no_rule',
    message: `No plan rule matches delegation type "${task.delegation_type}" and no fallback is set.`,
  };
}

/**
 * Sends `request` to each agent and collects their answers for `round` until all have answered
 * or `windowMs` passes on the clock, whichever is first.
 */
async function collect(
  ctx: SelectionContext,
  agents: readonly string[],
  windowMs: number,
  build: (round: string, deadline: number) => SelectionMessage,
  kind: 'bid' | 'vote',
): Promise<SelectionMessage[]> {
  const clock = ctx.clock ?? systemClock;
  const round = randomUUID();
  const expected = new Set(agents);
  const answers = new Map<string, SelectionMessage>();
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const sub: BusSubscription = await ctx.bus.onSignal(ctx.requester, (m) => {
    if (m.kind !== kind || m.round !== round || !expected.has(m.from) || answers.has(m.from))
      return;
    answers.set(m.from, m);
    if (answers.size === expected.size) finish();
  });
  const timer = clock.setTimer(windowMs, finish);
  try {
    const deadline = deadlineSeconds(clock.now() + windowMs);
    const request = build(round, deadline);
    await Promise.all(agents.map((a) => ctx.bus.signal(a, request)));
    if (agents.length === 0) finish();
    await done;
  } finally {
    timer.cancel();
    await sub.close();
  }
  return [...answers.values()];
}

/**
 * Calls for bids from the agents capable of the task's type, collects them until the window
 * closes on the clock (or all answered), and picks by cost/eta with a deterministic tie-break.
 */
export async function runAuction(
  ctx: SelectionContext,
  task: SelectionTask,
  options: { agents: readonly AgentInfo[]; windowMs: number; rankBy?: 'cost' | 'eta' },
): Promise<Selection> {
  const capable = options.agents
    .filter((a) => a.capabilities.includes(task.delegation_type))
    .map((a) => a.id);
  if (capable.length === 0) {
    return {
      ok: false,
      method: 'auction',
      reason: 'no_candidates',
      message: `No agent is capable of "${task.delegation_type}".`,
    };
  }
  const answers = await collect(
    ctx,
    capable,
    options.windowMs,
    (round, deadline) => ({ kind: 'bid_request', round, from: ctx.requester, deadline, ...task }),
    'bid',
  );
  const bids: Bid[] = [];
  for (const m of answers) {
    if (m.kind === 'bid' && m.cost !== undefined && m.eta_ms !== undefined) {
      bids.push({ agent: m.from, cost: m.cost, eta_ms: m.eta_ms });
    }
  }
  const best = pickBid(bids, options.rankBy);
  if (!best) {
    return {
      ok: false,
      method: 'auction',
      reason: 'no_bids',
      message: `None of ${capable.join(', ')} bid within ${options.windowMs} ms.`,
      detail: { asked: capable },
    };
  }
  return { ok: true, target: best.agent, method: 'auction', detail: { bids, winner: best } };
}

/** Asks voters to rank the candidates, collects until the window closes, and counts. */
export async function runVote(
  ctx: SelectionContext,
  task: SelectionTask,
  options: {
    voters: readonly string[];
    candidates: readonly string[];
    windowMs: number;
    rule?: 'majority' | 'borda';
  },
): Promise<Selection> {
  if (options.candidates.length === 0) {
    return {
      ok: false,
      method: 'vote',
      reason: 'no_candidates',
      message: 'No candidates to vote on.',
    };
  }
  const answers = await collect(
    ctx,
    options.voters,
    options.windowMs,
    (round, deadline) => ({
      kind: 'vote_request',
      round,
      from: ctx.requester,
      deadline,
      candidates: [...options.candidates],
      ...task,
    }),
    'vote',
  );
  const rankings = answers.flatMap((m) => (m.kind === 'vote' ? [m.ranking] : []));
  const { winner, tally } = tallyVotes(options.candidates, rankings, options.rule ?? 'borda');
  if (winner !== undefined) return { ok: true, target: winner, method: 'vote', detail: tally };
  return tally.votes === 0
    ? {
        ok: false,
        method: 'vote',
        reason: 'no_votes',
        message: 'Nobody voted in time.',
        detail: tally,
      }
    : {
        ok: false,
        method: 'vote',
        reason: 'no_majority',
        message: `No candidate has more than half of ${tally.votes} first choices.`,
        detail: tally,
      };
}

/** Chooses a target with any strategy: direct, auction, vote or plan. */
export async function selectTarget(
  task: SelectionTask,
  strategy: SelectionStrategy,
  ctx?: SelectionContext,
): Promise<Selection> {
  switch (strategy.method) {
    case 'direct':
      return { ok: true, target: strategy.target, method: 'direct' };
    case 'plan':
      return planTarget(strategy.rules, task, strategy.fallback);
    case 'auction':
    case 'vote': {
      if (!ctx) {
        return {
          ok: false,
          method: strategy.method,
          reason: 'no_candidates',
          message: `A ${strategy.method} needs a SelectionContext (bus, requester).`,
        };
      }
      return strategy.method === 'auction'
        ? runAuction(ctx, task, strategy)
        : runVote(ctx, task, strategy);
    }
  }
}

/** How an agent answers calls for bids and votes. */
export interface SelectionAnswers {
  /** A bid for the task, or undefined to decline. */
  bid?: (
    task: SelectionTask & { from: string },
  ) => Promise<Omit<Bid, 'agent'> | undefined> | Omit<Bid, 'agent'> | undefined;
  /** A ranking of the candidates, best first (empty to abstain). */
  vote?: (
    task: SelectionTask & { from: string; candidates: string[] },
  ) => Promise<string[]> | string[];
}

/**
 * Makes `agentId` answer bid and vote requests on the bus. Resolves once listening (so an
 * auction started afterwards reaches it); close the returned subscription to stop.
 */
export async function answerSelection(
  bus: DelegationBus,
  agentId: string,
  answers: SelectionAnswers,
): Promise<BusSubscription> {
  return bus.onSignal(agentId, (m) => {
    if (m.kind === 'bid_request') {
      const task = {
        delegation_type: m.delegation_type,
        sub_task_data: m.sub_task_data,
        from: m.from,
      };
      void Promise.resolve()
        .then(() => answers.bid?.(task))
        .then((bid) =>
          bus.signal(m.from, {
            kind: 'bid',
            round: m.round,
            from: agentId,
            ...(bid ? { cost: bid.cost, eta_ms: bid.eta_ms } : {}),
          }),
        )
        .catch((error: unknown) =>
          logDelegation('warn', 'bid failed', { agentId, error: errorMessage(error) }),
        );
    } else if (m.kind === 'vote_request') {
      const task = {
        delegation_type: m.delegation_type,
        sub_task_data: m.sub_task_data,
        from: m.from,
        candidates: m.candidates,
      };
      void Promise.resolve()
        .then(() => answers.vote?.(task) ?? [])
        .then((ranking) =>
          bus.signal(m.from, { kind: 'vote', round: m.round, from: agentId, ranking }),
        )
        .catch((error: unknown) =>
          logDelegation('warn', 'vote failed', { agentId, error: errorMessage(error) }),
        );
    }
  });
}

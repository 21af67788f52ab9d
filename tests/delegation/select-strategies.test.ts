import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRecord } from '../../src/delegation/validate.js';
import { InProcessDelegationBus } from '../../src/service/bus/in-process.js';
import { NatsDelegationBus } from '../../src/service/bus/nats.js';
import type { DelegationBus } from '../../src/service/bus/types.js';
import {
  answerSelection,
  type PlanRule,
  pickBid,
  planTarget,
  runAuction,
  runVote,
  selectionTaskOf,
  selectTarget,
  tallyVotes,
} from '../../src/service/select.js';
import { flushAsync, VirtualClock } from '../../src/testing/virtual-clock.js';
import { serviceMissing } from '../services.js';

const task = { delegation_type: 'refund', sub_task_data: { amount: 120, country: 'DE' } };
const agents = [
  { id: 'billing-a', capabilities: ['refund', 'invoice'] },
  { id: 'billing-b', capabilities: ['refund'] },
  { id: 'billing-c', capabilities: ['refund'] },
  { id: 'support', capabilities: ['faq'] },
];

describe('target selection', () => {
  it('works on a record as the contract sends it, and times a call for bids in epoch seconds', async () => {
    const record = parseRecord({
      delegation_id: 'del789',
      task_id: 'task123',
      sub_task_id: 'sub456',
      workflow_level: 1,
      delegation_type: 'manual',
      target_subject_id: 'pending-choice',
      sender_subject_id: 'agentA',
      sub_task_data: { key: 'value' },
    });
    const plan = await selectTarget(selectionTaskOf(record), {
      method: 'plan',
      rules: [{ type: 'manual', data: { key: 'value' }, target: 'agentB' }],
    });
    expect(plan).toMatchObject({ ok: true, target: 'agentB' });
    const clock = new VirtualClock();
    const bus = new InProcessDelegationBus();
    const deadlines: number[] = [];
    await answerSelection(bus, 'agentB', {
      bid: (t) => {
        deadlines.push(Math.floor(clock.now() / 1000));
        return t.delegation_type === 'manual' ? { cost: 1, eta_ms: 10 } : undefined;
      },
    });
    const seen: unknown[] = [];
    await bus.onSignal('agentB', (m) => seen.push(m));
    const auction = await selectTarget(
      selectionTaskOf(record),
      { method: 'auction', agents: [{ id: 'agentB', capabilities: ['manual'] }], windowMs: 1_500 },
      { bus, requester: 'agentA', clock },
    );
    expect(auction).toMatchObject({ ok: true, target: 'agentB' });
    const request = seen[0] as { deadline: number };
    expect(Number.isInteger(request.deadline)).toBe(true);
    expect(request.deadline).toBe(Math.ceil((clock.now() + 1_500) / 1000));
    expect(deadlines).toHaveLength(1);
    await bus.close();
  });

  it('direct picks the given target', async () => {
    expect(await selectTarget(task, { method: 'direct', target: 'billing-a' })).toEqual({
      ok: true,
      target: 'billing-a',
      method: 'direct',
    });
  });

  it('plan applies the first matching rule (type, data, condition), else the fallback', () => {
    const rules: PlanRule[] = [
      { type: 'invoice', target: 'billing-a' },
      { type: ['refund'], data: { country: 'FR' }, target: 'billing-fr' },
      { type: 'refund', when: (t) => Number(t.sub_task_data.amount) > 100, target: 'supervisor' },
      { target: (t) => `queue-${t.delegation_type}` },
    ];
    expect(planTarget(rules, task)).toMatchObject({
      ok: true,
      target: 'supervisor',
      detail: { rule: 2 },
    });
    expect(
      planTarget(rules, { ...task, sub_task_data: { amount: 5, country: 'FR' } }),
    ).toMatchObject({
      target: 'billing-fr',
    });
    expect(planTarget(rules, { ...task, sub_task_data: { amount: 5 } })).toMatchObject({
      target: 'queue-refund',
    });
    expect(planTarget(rules.slice(0, 1), task, 'fallback-desk')).toMatchObject({
      target: 'fallback-desk',
    });
    expect(planTarget(rules.slice(0, 1), task)).toMatchObject({ ok: false, reason: 'no_rule' });
  });

  it('picks bids by cost, then eta, then agent id; or by eta first', () => {
    const bids = [
      { agent: 'c', cost: 5, eta_ms: 100 },
      { agent: 'b', cost: 5, eta_ms: 50 },
      { agent: 'a', cost: 5, eta_ms: 50 },
      { agent: 'd', cost: 9, eta_ms: 10 },
    ];
    expect(pickBid(bids)?.agent).toBe('a');
    expect(pickBid(bids, 'eta')?.agent).toBe('d');
    expect(pickBid([...bids].reverse())?.agent).toBe('a');
    expect(pickBid([])).toBeUndefined();
  });

  it('counts votes by Borda points or by majority of first choices, deterministically', () => {
    const candidates = ['x', 'y', 'z'];
    const rankings = [
      ['x', 'y', 'z'],
      ['y', 'x'],
      ['y', 'z', 'x'],
      ['x', 'bogus', 'x'],
    ];
    // Points 2/1/0 by place; "bogus" and the repeated x are ignored. x and y tie on points
    // and on first choices (2 each), so the id breaks the tie.
    expect(tallyVotes(candidates, rankings, 'borda')).toEqual({
      winner: 'x',
      tally: { rule: 'borda', votes: 4, scores: { x: 5, y: 5, z: 1 } },
    });
    expect(tallyVotes(candidates, rankings, 'majority')).toEqual({
      tally: { rule: 'majority', votes: 4, scores: { x: 2, y: 2, z: 0 } },
    });
  });

  it('borda and majority winners, ties and no majority', () => {
    const c = ['x', 'y', 'z'];
    expect(tallyVotes(c, [['x', 'y'], ['y', 'x'], ['x']], 'borda').winner).toBe('x');
    expect(
      tallyVotes(
        c,
        [
          ['y', 'x'],
          ['x', 'y'],
        ],
        'borda',
      ).winner,
    ).toBe('x'); // tie → id
    expect(tallyVotes(c, [['x'], ['x'], ['y']], 'majority').winner).toBe('x');
    const split = tallyVotes(c, [['x'], ['y'], ['z']], 'majority');
    expect(split.winner).toBeUndefined();
    expect(split.tally.scores).toEqual({ x: 1, y: 1, z: 1 });
    expect(tallyVotes(c, [[], ['nobody']], 'borda').winner).toBeUndefined();
  });
});

async function auctionOn(bus: DelegationBus, clock?: VirtualClock) {
  const asked: string[] = [];
  const answer = (id: string, bid?: { cost: number; eta_ms: number }) =>
    answerSelection(bus, id, {
      bid: (t) => {
        asked.push(`${id}<-${t.from}:${t.delegation_type}`);
        return bid;
      },
    });
  await answer('billing-a', { cost: 7, eta_ms: 100 });
  await answer('billing-b', { cost: 4, eta_ms: 900 });
  await answer('billing-c'); // declines
  await answer('support', { cost: 0, eta_ms: 0 }); // not capable: never asked
  const result = await runAuction(
    { bus, requester: 'voice-bot', ...(clock ? { clock } : {}) },
    task,
    { agents, windowMs: 5_000 },
  );
  return { result, asked: asked.sort() };
}

describe('auction and vote over the in-process bus', () => {
  it('asks only capable agents, closes early when all answered, and picks the cheapest', async () => {
    const bus = new InProcessDelegationBus();
    const { result, asked } = await auctionOn(bus, new VirtualClock());
    expect(asked).toEqual([
      'billing-a<-voice-bot:refund',
      'billing-b<-voice-bot:refund',
      'billing-c<-voice-bot:refund',
    ]);
    expect(result).toMatchObject({ ok: true, method: 'auction', target: 'billing-b' });
    await bus.close();
  });

  it('collects bids until the deadline on the clock when an agent stays silent', async () => {
    const bus = new InProcessDelegationBus();
    const clock = new VirtualClock();
    await answerSelection(bus, 'billing-a', { bid: () => ({ cost: 3, eta_ms: 10 }) });
    let settled = false;
    const pending = runAuction({ bus, requester: 'voice-bot', clock }, task, {
      agents: agents.slice(0, 2),
      windowMs: 2_000,
    }).finally(() => {
      settled = true;
    });
    await flushAsync();
    await clock.advance(1_999);
    expect(settled).toBe(false);
    await clock.advance(1);
    const result = await pending;
    expect(result).toMatchObject({
      ok: true,
      target: 'billing-a',
      detail: { bids: [{ agent: 'billing-a' }] },
    });
    await bus.close();
  });

  it('reports no candidates and no bids as outcomes, not errors', async () => {
    const bus = new InProcessDelegationBus();
    const clock = new VirtualClock();
    expect(
      await runAuction(
        { bus, requester: 'voice-bot', clock },
        { ...task, delegation_type: 'dance' },
        { agents, windowMs: 10 },
      ),
    ).toMatchObject({ ok: false, reason: 'no_candidates' });
    await answerSelection(bus, 'billing-c', {});
    const pending = runAuction({ bus, requester: 'voice-bot', clock }, task, {
      agents: [agents[2]!],
      windowMs: 1_000,
    });
    expect(await pending).toMatchObject({ ok: false, reason: 'no_bids' });
    await bus.close();
  });

  it('runs a vote with majority and Borda rules', async () => {
    const bus = new InProcessDelegationBus();
    const clock = new VirtualClock();
    const rankings: Record<string, string[]> = {
      v1: ['billing-a', 'billing-b'],
      v2: ['billing-b', 'billing-a'],
      v3: ['billing-b', 'billing-c'],
    };
    for (const [voter, ranking] of Object.entries(rankings)) {
      await answerSelection(bus, voter, {
        vote: ({ candidates }) => ranking.filter((c) => candidates.includes(c)),
      });
    }
    const ctx = { bus, requester: 'voice-bot', clock };
    const candidates = ['billing-a', 'billing-b', 'billing-c'];
    expect(
      await runVote(ctx, task, {
        voters: ['v1', 'v2', 'v3'],
        candidates,
        windowMs: 1_000,
        rule: 'majority',
      }),
    ).toMatchObject({
      ok: true,
      target: 'billing-b',
      detail: { votes: 3, scores: { 'billing-a': 1, 'billing-b': 2, 'billing-c': 0 } },
    });
    expect(
      await selectTarget(
        task,
        { method: 'vote', voters: ['v1', 'v2', 'v3'], candidates, windowMs: 1_000 },
        ctx,
      ),
    ).toMatchObject({
      ok: true,
      target: 'billing-b',
    });
    expect(
      await runVote(ctx, task, {
        voters: ['v1', 'v2'],
        candidates,
        windowMs: 1_000,
        rule: 'majority',
      }),
    ).toMatchObject({ ok: false, reason: 'no_majority' });
    const silent = runVote(ctx, task, { voters: ['nobody'], candidates, windowMs: 1_000 });
    await flushAsync();
    await clock.advance(1_000);
    expect(await silent).toMatchObject({ ok: false, reason: 'no_votes' });
    await bus.close();
  });
});

const noNats = (await serviceMissing('nats')) !== undefined;
describe('auction over NATS', { skip: noNats }, () => {
  const prefix = `sel_${process.pid}_${randomBytes(3).toString('hex')}`;
  const buses: NatsDelegationBus[] = [];
  afterAll(async () => {
    await buses[0]?.deleteStream().catch(() => {});
    await Promise.all(buses.map((b) => b.close()));
  });

  it('bidders on other connections answer and the cheapest wins', { timeout: 30_000 }, async () => {
    const url = process.env.TASKLINE_NATS_URL ?? '127.0.0.1:4222';
    const [requester, bidders] = await Promise.all([
      NatsDelegationBus.connect({ servers: url, prefix }),
      NatsDelegationBus.connect({ servers: url, prefix }),
    ]);
    buses.push(requester, bidders);
    const { result, asked } = await auctionOn(new ProxyBus(requester, bidders));
    expect(asked).toHaveLength(3);
    expect(result).toMatchObject({ ok: true, target: 'billing-b' });
  });
});

/** Bidders listen on one connection while the auction runs on another. */
class ProxyBus implements DelegationBus {
  constructor(
    private readonly requester: DelegationBus,
    private readonly bidders: DelegationBus,
  ) {}
  publish: DelegationBus['publish'] = (e) => this.requester.publish(e);
  subscribe: DelegationBus['subscribe'] = (...a) => this.requester.subscribe(...a);
  watch: DelegationBus['watch'] = (h) => this.requester.watch(h);
  signal: DelegationBus['signal'] = (to, m) =>
    m.kind === 'bid' || m.kind === 'vote'
      ? this.bidders.signal(to, m)
      : this.requester.signal(to, m);
  onSignal: DelegationBus['onSignal'] = (agent, h) =>
    agent === 'voice-bot' ? this.requester.onSignal(agent, h) : this.bidders.onSignal(agent, h);
  close = async () => {};
}

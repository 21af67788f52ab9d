// The WebSocket fan-out: a client too far behind is disconnected with 1013 and dropped, and
// never holds up the others; a broadcast reaches only the clients it is visible to.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import type { Identity } from '../../src/service/api/auth.js';
import { DelegationEventsHub } from '../../src/service/api/events-hub.js';

class FakeSocket extends EventEmitter {
  bufferedAmount = 0;
  readonly sent: string[] = [];
  closed: { code: number; reason: string } | undefined;
  send(text: string): void {
    this.sent.push(text);
  }
  close(code: number, reason: string): void {
    this.closed = { code, reason };
  }
}

const admin: Identity = { admin: true, name: 'ops' };
const billing: Identity = { admin: false, agent: 'billing' };
const socket = (s: FakeSocket) => s as unknown as WebSocket;

describe('DelegationEventsHub', () => {
  it('drops a client too slow to keep up and still sends to the rest', () => {
    const hub = new DelegationEventsHub();
    const slow = new FakeSocket();
    const fast = new FakeSocket();
    hub.add(socket(slow), admin);
    hub.add(socket(fast), admin);
    expect(hub.size).toBe(2);
    slow.bufferedAmount = 2 << 20;
    hub.broadcast({ type: 'call', data: { id: 'c1' } }, () => true);
    expect(slow.closed?.code).toBe(1013);
    expect(slow.closed?.reason).toMatch(/too slow/);
    expect(slow.sent).toHaveLength(1); // only its `ready`
    expect(fast.sent.at(-1)).toBe(JSON.stringify({ type: 'call', data: { id: 'c1' } }));
    expect(hub.size).toBe(1);
    hub.broadcast({ type: 'call', data: { id: 'c2' } }, () => true);
    expect(slow.sent).toHaveLength(1);
    expect(fast.sent).toHaveLength(3);
  });

  it('sends a broadcast only to the clients it is visible to', () => {
    const hub = new DelegationEventsHub();
    const seer = new FakeSocket();
    const other = new FakeSocket();
    hub.add(socket(seer), admin);
    hub.add(socket(other), billing);
    hub.broadcast({ type: 'call' }, (identity) => identity.admin);
    expect(seer.sent).toHaveLength(2);
    expect(other.sent).toHaveLength(1);
    expect(other.closed).toBeUndefined();
  });
});

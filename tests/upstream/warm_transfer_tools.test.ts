// Pins what WarmTransferer's early end on an unsupported move relies on: upstream 1.9's
// `createWarmTransferTask` (what `WarmTransferTask` runs) carries a `connect_to_caller` tool
// in its public tool list, and a tool list updated before the task runs is what the task
// offers (the briefing agent is built from `task.toolCtx.tools` when the human is dialled).
import { llm, workflows } from '@livekit/agents';
import { describe, expect, it } from 'vitest';
import { CONNECT_TOOL, isMoveUnsupported } from '../../src/telephony/warm-transfer.js';

describe("upstream's warm-transfer task tools", () => {
  it(`lists ${CONNECT_TOOL}, and keeps a replacement given before it runs`, async () => {
    const task = workflows.createWarmTransferTask({ sipCallTo: '+15550100', sipTrunkId: 'ST_x' });
    const names = task.toolCtx.tools.filter(llm.isFunctionTool).map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([CONNECT_TOOL, 'decline_transfer', 'voicemail_detected']),
    );
    const marked = task.toolCtx.tools.map((t) =>
      llm.isFunctionTool(t) && t.name === CONNECT_TOOL ? { ...t, description: 'wrapped' } : t,
    );
    await task.updateTools(marked);
    const connect = task.toolCtx.tools
      .filter(llm.isFunctionTool)
      .find((t) => t.name === CONNECT_TOOL);
    expect(connect?.description).toBe('wrapped');
    expect(llm.isFunctionTool(connect)).toBe(true);
  });

  it('tells a move the server can never make from one that may pass on a retry', () => {
    // What livekit-server v1.13.5 answers (roommanager.go: errors.New("not implemented")).
    expect(isMoveUnsupported(new Error('not implemented'))).toBe(true);
    expect(isMoveUnsupported(Object.assign(new Error('nope'), { code: 'unimplemented' }))).toBe(
      true,
    );
    expect(isMoveUnsupported(new Error('participant not found'))).toBe(false);
    expect(isMoveUnsupported(new Error('request timed out'))).toBe(false);
    expect(isMoveUnsupported('not implemented')).toBe(false);
  });
});

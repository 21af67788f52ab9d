// examples/assistant: the demo call through the simulated caller, and the researcher's
// document search over the shipped docs folder.
import { afterEach, describe, expect, it } from 'vitest';
import * as assistantDemo from '../../examples/assistant/demo.js';
import { FINDINGS, scriptedAssistantModel } from '../../examples/assistant/demo.js';
import { type AssistantCall, DOCS_DIR, GREETING } from '../../examples/assistant/index.js';
import { createDocsTools, searchTerms } from '../../examples/assistant/search.js';
import { SimulatedCaller } from '../../src/testing/index.js';

let caller: SimulatedCaller | undefined;
afterEach(async () => {
  await caller?.close();
  caller = undefined;
});

describe('examples/assistant', () => {
  it('looks into the question, keeps chatting, then speaks the findings once', async () => {
    const model = assistantDemo.createScriptedModel();
    const call: AssistantCall = assistantDemo.createScriptedCall();
    caller = await SimulatedCaller.start({ agent: call.agent, llm: model });
    // The researcher takes a second (virtual): the caller adds a todo meanwhile, and the
    // findings come during the pause.
    await caller.play(assistantDemo.demoScript.slice(0, 2));
    expect(call.manager.get('t1')?.status).toBe('running');
    await caller.play(assistantDemo.demoScript.slice(2));
    expect(caller.agentLines).toEqual([
      GREETING,
      "Sure, I'm looking into that now. Anything else while I check?",
      'Done: "Call the bank" is on your list.',
      FINDINGS,
      "You're welcome. Have a good day!",
    ]);
    const result = call.result();
    expect(result.todos).toEqual([{ id: '1', content: 'Call the bank', status: 'pending' }]);
    expect(result.tasks).toEqual([
      {
        id: 't1',
        description: 'Check refunds for opened items',
        status: 'completed',
        delivery: 'spoken',
        summary:
          'Opened items can be returned within 14 days of delivery, refunded as store credit. Unopened items have 30 days for a full refund. Source: refunds.md.',
        resultPath: '/tasks/t1/result.md',
      },
    ]);
    expect(await call.files.read('/tasks/t1/result.md')).toContain('## Brief');
    model.assertComplete();
  });

  it('the demo builds a fresh call each time', () => {
    const a = assistantDemo.createCall();
    const b = assistantDemo.createCall();
    expect(a.agent).not.toBe(b.agent);
    expect(scriptedAssistantModel()).not.toBe(scriptedAssistantModel());
  });

  it('search_docs ranks the shipped documents by keywords and shows the matching lines', async () => {
    const tools = createDocsTools({ root: DOCS_DIR });
    expect(searchTerms('What does the refund policy say about opened items?')).toEqual([
      'refund',
      'policy',
      'opened',
      'items',
    ]);
    const options = {
      ctx: undefined as never,
      toolCallId: 'c1',
      abortSignal: new AbortController().signal,
    };
    const found = String(
      await tools.search_docs.execute({ query: 'refund opened items' }, options),
    );
    expect(found.split('\n')[0]).toBe('/refunds.md');
    expect(found).toContain('Opened items can be returned within 14 days of delivery.');
    expect(String(await tools.search_docs.execute({ query: 'zebra' }, options))).toBe(
      '(no document mentions zebra)',
    );
    expect(String(await tools.read_doc.execute({ path: '/hours.md' }, options))).toContain(
      '9 am to 6 pm',
    );
    await expect(tools.read_doc.execute({ path: '/../../package.json' }, options)).rejects.toThrow(
      /not_found/,
    );
  });
});

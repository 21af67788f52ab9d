// Calls tab (active calls with their current step or task and last outcome) and Flows tab (a
// call's flow diagram with its traced path, rendered by the bundled Mermaid, and the per-step
// table from its report).
import { clockTime, el } from './api.js';

interface StepRecord {
  step: string;
  outcome: string;
  attempts: number;
  noInput: number;
  noMatch: number;
  modality?: string;
  durationMs: number;
  next?: string;
}
/** A call as `GET /calls` and the WebSocket send it. */
export interface CallView {
  call_id: string;
  state: 'active' | 'ended';
  flow?: string;
  step?: string;
  task?: string;
  outcome?: string;
  diagram?: string;
  report?: { steps?: StepRecord[]; status?: string };
  reporter: string;
  updated_at: number;
}

type Mermaid = typeof import('mermaid')['default'];
let mermaid: Promise<Mermaid> | undefined;
let renders = 0;

/** Loads Mermaid (a separate chunk of the bundle) on first use. */
function loadMermaid(): Promise<Mermaid> {
  mermaid ??= import('mermaid').then(({ default: m }) => {
    m.initialize({ startOnLoad: false, securityLevel: 'strict', theme: 'neutral' });
    return m;
  });
  return mermaid;
}

/** The calls and flows views. */
export class CallsView {
  private readonly calls = new Map<string, CallView>();
  private readonly body = document.querySelector('#calls-table tbody') as HTMLElement;
  private readonly picker = document.getElementById('flow-call') as HTMLSelectElement;
  private shownDiagram?: string;

  constructor(private readonly openFlows: () => void) {
    this.picker.addEventListener('change', () => void this.showFlow());
  }

  load(calls: CallView[]): void {
    this.calls.clear();
    for (const c of [...calls].reverse()) this.calls.set(c.call_id, c);
    this.render();
  }

  apply(call: CallView): void {
    this.calls.delete(call.call_id);
    this.calls.set(call.call_id, call);
    this.render();
  }

  remove(callId: string): void {
    this.calls.delete(callId);
    this.render();
  }

  private render(): void {
    const calls = [...this.calls.values()].reverse();
    this.body.replaceChildren(
      ...calls.map((c) => {
        const tr = el('tr', undefined, { 'data-call': c.call_id, 'data-state': c.state });
        tr.append(
          el('td', c.call_id),
          el('td', c.flow ?? ''),
          el('td', c.step ?? c.task ?? '', { class: 'step' }),
          el('td', c.outcome ?? '', { class: 'outcome' }),
          el('td', c.state, { class: 'state' }),
          el('td', clockTime(c.updated_at)),
          el('td', c.reporter),
        );
        tr.addEventListener('click', () => {
          if (!c.diagram) return;
          this.picker.value = c.call_id;
          this.openFlows();
          void this.showFlow();
        });
        return tr;
      }),
    );
    const current = this.picker.value;
    const withFlow = calls.filter((c) => c.diagram);
    this.picker.replaceChildren(
      ...withFlow.map((c) =>
        el('option', `${c.call_id} — ${c.flow ?? 'flow'} (${c.state})`, { value: c.call_id }),
      ),
    );
    if (withFlow.some((c) => c.call_id === current)) this.picker.value = current;
    void this.showFlow();
  }

  /** Renders the selected call's diagram (only when it changed) and its step table. */
  async showFlow(): Promise<void> {
    const call = this.calls.get(this.picker.value);
    const holder = document.getElementById('diagram') as HTMLElement;
    const steps = document.querySelector('#steps-table tbody') as HTMLElement;
    if (!call?.diagram) {
      holder.replaceChildren(el('p', 'No call with a flow yet.', { class: 'hint' }));
      steps.replaceChildren();
      this.shownDiagram = undefined;
      return;
    }
    steps.replaceChildren(
      ...(call.report?.steps ?? []).map((s, i) => {
        const tr = el('tr', undefined, { 'data-step': s.step });
        tr.append(
          el('td', i + 1),
          el('td', s.step),
          el('td', s.outcome),
          el('td', s.attempts),
          el('td', s.noInput),
          el('td', s.noMatch),
          el('td', s.modality ?? ''),
          el('td', `${(s.durationMs / 1000).toFixed(1)} s`),
          el('td', s.next ?? ''),
        );
        return tr;
      }),
    );
    const key = `${call.call_id}\u0000${call.diagram}`;
    if (key === this.shownDiagram) return;
    this.shownDiagram = key;
    try {
      const m = await loadMermaid();
      const { svg } = await m.render(`flow-diagram-${++renders}`, call.diagram);
      if (this.shownDiagram !== key) return; // a newer render started
      holder.innerHTML = svg; // Mermaid's own output, sanitised (securityLevel strict)
      holder.dataset.call = call.call_id;
    } catch (error) {
      holder.replaceChildren(
        el('p', `The diagram could not be drawn: ${String(error)}`, { class: 'error' }),
      );
    }
  }
}

// Calls tab (active calls with their current step or task and last outcome) and Flows tab (a
// call's flow diagram with its traced path, rendered by the bundled Mermaid, and the per-step
// table from its report). What a voice process reported is data, never markup: reports are
// checked before they are shown, diagram labels are drawn as SVG text (no HTML labels, which
// init directives cannot turn back on), and the SVG is stripped of anything that could load or
// run something before it enters the page.
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
  report?: { steps?: unknown; status?: string };
  reporter: string;
  /** `agent:<id>` or `admin:<name>`: a call is its owner and its call_id. */
  owner?: string;
  updated_at: number;
}

/** The board's key of a call: who reported it and its id (two keys may use the same id). */
export function callKey(call: Pick<CallView, 'call_id' | 'owner' | 'reporter'>): string {
  return `${call.owner ?? call.reporter}\u0000${call.call_id}`;
}

const isCount = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isText = (v: unknown) => typeof v === 'string';
const isOptionalText = (v: unknown) => v === undefined || isText(v);

/** The report's steps when they are a list of step records; undefined for anything else. */
export function reportSteps(report: unknown): StepRecord[] | undefined {
  if (typeof report !== 'object' || report === null) return undefined;
  const steps = (report as { steps?: unknown }).steps;
  if (!Array.isArray(steps)) return undefined;
  const ok = steps.every(
    (s: unknown) =>
      typeof s === 'object' &&
      s !== null &&
      isText((s as StepRecord).step) &&
      isText((s as StepRecord).outcome) &&
      isCount((s as StepRecord).attempts) &&
      isCount((s as StepRecord).noInput) &&
      isCount((s as StepRecord).noMatch) &&
      isCount((s as StepRecord).durationMs) &&
      isOptionalText((s as StepRecord).modality) &&
      isOptionalText((s as StepRecord).next),
  );
  return ok ? (steps as StepRecord[]) : undefined;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
/** Elements that can hold HTML, load a resource or run code: never kept in a diagram. */
const DROPPED = new Set([
  'foreignobject',
  'image',
  'img',
  'a',
  'script',
  'iframe',
  'object',
  'embed',
  'use',
  'audio',
  'video',
  'animate',
  'set',
  'animatetransform',
  'animatemotion',
]);

/**
 * Parses Mermaid's SVG and keeps only inert SVG: no HTML, links, images, scripts, event
 * handlers, or references outside the document (`url(#marker)` stays; `url(/x.png)` goes).
 */
export function inertSvg(svgText: string): SVGSVGElement | undefined {
  const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
  const root = doc.documentElement;
  if (root.namespaceURI !== SVG_NS || root.localName !== 'svg') return undefined;
  const outside = /url\(\s*['"]?\s*(?!#)[^)]*\)|@import|expression\(|javascript:/i;
  for (const node of [...root.querySelectorAll('*')]) {
    if (DROPPED.has(node.localName.toLowerCase()) || node.namespaceURI !== SVG_NS) {
      node.remove();
      continue;
    }
    if (node.localName === 'style' && outside.test(node.textContent ?? '')) {
      node.textContent = (node.textContent ?? '').replace(new RegExp(outside.source, 'gi'), 'none');
    }
    for (const attr of [...node.attributes]) {
      const name = attr.name.toLowerCase();
      if (
        name.startsWith('on') ||
        ((name === 'href' || name.endsWith(':href')) && !attr.value.startsWith('#')) ||
        outside.test(attr.value)
      ) {
        node.removeAttribute(attr.name);
      }
    }
  }
  return document.importNode(root, true) as unknown as SVGSVGElement;
}

type Mermaid = typeof import('mermaid')['default'];
let mermaid: Promise<Mermaid> | undefined;
let renders = 0;

/** Loads Mermaid (a separate chunk of the bundle) on first use. */
function loadMermaid(): Promise<Mermaid> {
  mermaid ??= import('mermaid').then(({ default: m }) => {
    m.initialize({
      startOnLoad: false,
      securityLevel: 'strict',
      theme: 'neutral',
      // Labels are SVG text, never HTML; a diagram's own init directive cannot change that.
      htmlLabels: false,
      flowchart: { htmlLabels: false },
      maxTextSize: 64 * 1024,
      secure: [
        'secure',
        'securityLevel',
        'startOnLoad',
        'maxTextSize',
        'suppressErrorRendering',
        'maxEdges',
        'htmlLabels',
        'flowchart',
        'themeCSS',
        'themeVariables',
        'fontFamily',
        'altFontFamily',
      ],
    });
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
    for (const c of [...calls].reverse()) this.calls.set(callKey(c), c);
    this.render();
  }

  apply(call: CallView): void {
    const key = callKey(call);
    this.calls.delete(key);
    this.calls.set(key, call);
    this.render();
  }

  remove(gone: Pick<CallView, 'call_id' | 'owner' | 'reporter'>): void {
    this.calls.delete(callKey(gone));
    this.render();
  }

  private render(): void {
    const calls = [...this.calls.values()].reverse();
    this.body.replaceChildren(
      ...calls.map((c) => {
        const tr = el('tr', undefined, {
          'data-call': c.call_id,
          'data-owner': c.owner ?? c.reporter,
          'data-state': c.state,
        });
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
          this.picker.value = callKey(c);
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
        el('option', `${c.call_id} — ${c.flow ?? 'flow'} (${c.state}, ${c.reporter})`, {
          value: callKey(c),
        }),
      ),
    );
    if (withFlow.some((c) => callKey(c) === current)) this.picker.value = current;
    void this.showFlow();
  }

  /** The step table's rows from the call's report, or one row saying the report is malformed. */
  private stepRows(call: CallView): HTMLElement[] {
    const records = call.report === undefined ? [] : reportSteps(call.report);
    if (records === undefined) {
      const row = el('tr', undefined, { class: 'error', 'data-malformed': 'true' });
      row.append(
        el('td', "This call's report is malformed: its steps are not a list of steps.", {
          colspan: '9',
        }),
      );
      return [row];
    }
    return records.map((s, i) => {
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
    });
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
    steps.replaceChildren(...this.stepRows(call));
    const key = `${callKey(call)}\u0000${call.diagram}`;
    if (key === this.shownDiagram) return;
    this.shownDiagram = key;
    try {
      const m = await loadMermaid();
      const { svg } = await m.render(`flow-diagram-${++renders}`, call.diagram);
      if (this.shownDiagram !== key) return; // a newer render started
      const inert = inertSvg(svg);
      if (!inert) throw new Error('Mermaid gave no SVG');
      holder.replaceChildren(inert);
      holder.dataset.call = call.call_id;
    } catch (error) {
      holder.replaceChildren(
        el('p', `The diagram could not be drawn: ${String(error)}`, { class: 'error' }),
      );
    }
  }
}

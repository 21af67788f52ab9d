// Delegations tab: a live table of records (state per stage, deadline countdown, result),
// filters, and a record's per-stage history.
import { clockTime, countdown, el } from './api.js';

interface StageStatus {
  state: string;
  time: number;
  deadline?: number;
  delegation_result?: unknown;
}
/** A delegation record as the API sends it (the wire contract). */
export interface DelegationRecord {
  delegation_id: string;
  delegation_type: string;
  sender_subject_id: string;
  target_subject_id: string;
  status: Record<string, StageStatus>;
  sub_task_data: Record<string, unknown>;
}

const RESULT_STAGE = 'delegation_result';
const FINAL = new Set(['done', 'failed', 'expired', 'cancelled']);
const MAX_ROWS = 500;

/** The state a person reads first: the result stage's, else the most recent stage's. */
function overall(record: DelegationRecord): StageStatus | undefined {
  const result = record.status[RESULT_STAGE];
  if (result) return result;
  return Object.values(record.status).sort((a, b) => b.time - a.time)[0];
}

function nextDeadline(record: DelegationRecord): number | undefined {
  const result = record.status[RESULT_STAGE];
  if (result && FINAL.has(result.state)) return undefined; // finished: nothing to count down
  const open = Object.values(record.status).filter(
    (s) => s.deadline !== undefined && !FINAL.has(s.state),
  );
  return open.length > 0 ? Math.min(...open.map((s) => s.deadline!)) : undefined;
}

function resultText(record: DelegationRecord): string {
  const result = record.status[RESULT_STAGE]?.delegation_result;
  if (result === undefined) return '';
  const text = typeof result === 'string' ? result : JSON.stringify(result);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

/** The delegations view over a tbody and the filter inputs. */
export class DelegationsView {
  private readonly records = new Map<string, DelegationRecord>();
  private selected?: string;
  private readonly body = document.querySelector('#deleg-table tbody') as HTMLElement;
  private readonly text = document.getElementById('filter-text') as HTMLInputElement;
  private readonly state = document.getElementById('filter-state') as HTMLSelectElement;

  constructor() {
    this.text.addEventListener('input', () => this.render());
    this.state.addEventListener('change', () => this.render());
    setInterval(() => this.tick(), 1000);
  }

  /** Replaces everything (after a (re)connect). */
  load(records: DelegationRecord[]): void {
    this.records.clear();
    for (const r of records) this.records.set(r.delegation_id, r);
    this.render();
  }

  /** Applies one pushed change. */
  apply(change: string, record: DelegationRecord): void {
    if (change === 'delete') this.records.delete(record.delegation_id);
    else {
      this.records.delete(record.delegation_id);
      this.records.set(record.delegation_id, record);
      while (this.records.size > MAX_ROWS) {
        this.records.delete(this.records.keys().next().value as string);
      }
    }
    this.render(record.delegation_id);
  }

  private visible(): DelegationRecord[] {
    const needle = this.text.value.trim().toLowerCase();
    const state = this.state.value;
    return [...this.records.values()].reverse().filter((r) => {
      if (state && overall(r)?.state !== state) return false;
      if (!needle) return true;
      return [r.delegation_id, r.delegation_type, r.sender_subject_id, r.target_subject_id].some(
        (v) => v.toLowerCase().includes(needle),
      );
    });
  }

  private render(changed?: string): void {
    const rows = this.visible().map((r) => this.row(r, r.delegation_id === changed));
    this.body.replaceChildren(...rows);
    const count = document.getElementById('deleg-count') as HTMLElement;
    count.textContent = `${rows.length} of ${this.records.size}`;
    if (this.selected) this.history(this.selected);
  }

  private row(r: DelegationRecord, flash: boolean): HTMLElement {
    const state = overall(r)?.state ?? '';
    const tr = el('tr', undefined, { 'data-id': r.delegation_id, 'data-state': state });
    if (flash) tr.classList.add('flash');
    const stages = el('td');
    for (const [name, s] of Object.entries(r.status)) {
      stages.append(el('span', `${name}: ${s.state}`, { class: `chip s-${s.state}` }));
    }
    const deadline = nextDeadline(r);
    const dl = el('td', '', { class: 'deadline' });
    if (deadline !== undefined) dl.dataset.deadline = String(deadline);
    tr.append(
      el('td', r.delegation_id),
      el('td', r.delegation_type),
      el('td', `${r.sender_subject_id} → ${r.target_subject_id}`),
      stages,
      el('td', state, { class: 'state' }),
      dl,
      el('td', resultText(r), { class: 'result' }),
    );
    this.paintDeadline(dl);
    tr.addEventListener('click', () => this.history(r.delegation_id));
    return tr;
  }

  private paintDeadline(cell: HTMLElement): void {
    const deadline = Number(cell.dataset.deadline);
    if (!cell.dataset.deadline || !Number.isFinite(deadline)) return;
    const { text, overdue } = countdown(deadline);
    cell.textContent = text;
    cell.classList.toggle('overdue', overdue);
  }

  private tick(): void {
    for (const cell of this.body.querySelectorAll<HTMLElement>('td.deadline')) {
      this.paintDeadline(cell);
    }
  }

  private history(id: string): void {
    const record = this.records.get(id);
    const aside = document.getElementById('history') as HTMLElement;
    this.selected = record ? id : undefined;
    aside.hidden = !record;
    if (!record) return;
    (document.getElementById('history-id') as HTMLElement).textContent = id;
    const stages = Object.entries(record.status).sort((a, b) => a[1].time - b[1].time);
    (aside.querySelector('tbody') as HTMLElement).replaceChildren(
      ...stages.map(([name, s]) => {
        const tr = el('tr');
        tr.append(
          el('td', name),
          el('td', s.state, { class: `s-${s.state}` }),
          el('td', clockTime(s.time)),
          el('td', s.deadline !== undefined ? clockTime(s.deadline) : ''),
          el('td', s.delegation_result === undefined ? '' : JSON.stringify(s.delegation_result)),
        );
        return tr;
      }),
    );
    (document.getElementById('history-data') as HTMLElement).textContent = JSON.stringify(
      record.sub_task_data,
      null,
      2,
    );
  }
}

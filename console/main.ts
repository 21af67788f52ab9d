// The taskline console: asks for an API key once (kept for this tab), then shows delegations,
// calls and flows live from the same server's API and WebSocket.
import { ApiError, call, type LiveMessage, live, storedKey, storeKey } from './api.js';
import { CallsView, type CallView } from './calls.js';
import { type DelegationRecord, DelegationsView } from './delegations.js';

const $ = (id: string) => document.getElementById(id) as HTMLElement;
const TABS = ['delegations', 'calls', 'flows'] as const;
type Tab = (typeof TABS)[number];

function show(tab: Tab): void {
  for (const t of TABS) $(t).hidden = t !== tab;
  for (const b of document.querySelectorAll<HTMLButtonElement>('#tabs button')) {
    b.setAttribute('aria-selected', String(b.dataset.tab === tab));
  }
}

let stop: (() => void) | undefined;

async function open(key: string): Promise<void> {
  const error = $('login-error');
  error.hidden = true;
  // One authenticated read proves the key before anything is kept.
  let first: DelegationRecord[];
  try {
    first = await call<DelegationRecord[]>(key, 'POST', '/delegations/query?limit=500', {});
  } catch (e) {
    storeKey(undefined);
    const refused = e instanceof ApiError && (e.status === 401 || e.status === 403);
    error.textContent = refused
      ? `Refused: ${e.message} Check the key and try again.`
      : `Cannot reach the server: ${e instanceof Error ? e.message : String(e)}`;
    error.hidden = false;
    return;
  }
  storeKey(key);
  $('login').hidden = true;
  $('tabs').hidden = false;
  $('signout').hidden = false;
  show('delegations');
  const delegations = new DelegationsView();
  const calls = new CallsView(() => show('flows'));
  delegations.load(first);
  const reload = async () => {
    const [records, active] = await Promise.all([
      call<DelegationRecord[]>(key, 'POST', '/delegations/query?limit=500', {}),
      call<CallView[]>(key, 'GET', '/calls'),
    ]);
    delegations.load(records);
    calls.load(active);
  };
  stop = live(key, {
    onOpen: () => void reload().catch(() => {}),
    onStatus: (text, ok) => {
      $('conn').textContent = text;
      $('conn').classList.toggle('live', ok);
    },
    onMessage: (m: LiveMessage) => {
      if (m.type === 'delegation') {
        const d = m.data as { change: string; record: DelegationRecord };
        delegations.apply(d.change, d.record);
      } else if (m.type === 'call') calls.apply(m.data as CallView);
      else if (m.type === 'call_gone') calls.remove(m.data as CallView);
    },
  });
}

for (const b of document.querySelectorAll<HTMLButtonElement>('#tabs button')) {
  b.addEventListener('click', () => show(b.dataset.tab as Tab));
}
$('login').addEventListener('submit', (event) => {
  event.preventDefault();
  void open(($('key') as HTMLInputElement).value.trim());
});
$('signout').addEventListener('click', () => {
  stop?.();
  storeKey(undefined);
  location.reload();
});
const remembered = storedKey();
if (remembered) void open(remembered);

import { api, onUnauthorized, requestPath } from './api.js';
import { $, h, replace, toast } from './dom.js';
import { createDetailView } from './detail-view.js';
import { STATUS_LABEL } from './format.js';
import { createHistoryView } from './history-view.js';
import { createHooksView } from './hooks-view.js';
import { installShortcuts, SHORTCUTS } from './keyboard.js';
import { createListView } from './list-view.js';
import { createLive } from './live.js';
import { createPendingStore } from './pending-store.js';
import { forgetSessionSecret } from './session-secret.js';
import { createRulesView } from './rules-view.js';
import { checkSession, signIn, signInMessage, signOut } from './session.js';

/**
 * Wiring: sign-in, the two views (pending, history), the detail pane, the live stream and the
 * keyboard. The location hash holds the view and the selected request (`#/pending/<id>`), so
 * the browser's Back button works, on a phone too. It never holds the token or the session.
 */

// Requests this page decided (or tried to): their end is announced once, not again by the stream.
const decidedHere = new Set();
// The request to show after each decision, chosen when it is sent: by the time the answer
// arrives the stream may already have taken the decided card out of the list.
const nextAfter = new Map();
const store = createPendingStore();
const listView = createListView({ store });
const historyView = createHistoryView();
const hooksView = createHooksView();
const rulesView = createRulesView();
const detail = createDetailView($('#detail'), {
  onSend: (id) => {
    decidedHere.add(id);
    const visible = listView.visible();
    const i = visible.findIndex((r) => r.id === id);
    nextAfter.set(id, i < 0 ? null : ((visible[i + 1] ?? visible[i - 1])?.id ?? null));
  },
  onDone: decided,
  onBack: back,
  reload: reloadRecord,
});
const live = createLive({ onEvent, resync, onStatus: showStatus, onDown: checkStillSignedIn });
let route = { view: 'pending', id: null };
let signedIn = false;
let historyLoaded = false;
// The format and kind names the daemon serves (GET /v1/formats), fetched once per sign-in.
let choices = null;

// ---- routing ----

function parseHash() {
  if (location.hash === '#/hooks') return { view: 'hooks', id: null };
  const m = /^#\/(pending|history|rules|requests)(?:\/([^/]+))?$/.exec(location.hash);
  if (!m) return { view: 'pending', id: null };
  try {
    return { view: m[1], id: m[2] ? decodeURIComponent(m[2]) : null };
  } catch {
    return { view: m[1], id: null };
  }
}

function navigate(view, id = null) {
  const hash = `#/${view}${id ? `/${encodeURIComponent(id)}` : ''}`;
  if (location.hash === hash) applyRoute();
  else location.hash = hash;
}

function back() {
  navigate(route.view);
}

async function applyRoute() {
  if (!signedIn) return;
  const previous = route;
  route = parseHash();
  // Notification links (`#/requests/<id>`) open the request where it lives: pending or history.
  if (route.view === 'requests') return openLinked(route.id);
  document.body.dataset.view = route.view;
  document.body.dataset.pane = route.id ? 'detail' : 'list';
  for (const tab of document.querySelectorAll('[data-tab]')) tab.setAttribute('aria-current', tab.dataset.tab === route.view ? 'page' : 'false');
  $('#pending-view').hidden = route.view !== 'pending';
  $('#history-view').hidden = route.view !== 'history';
  $('#hooks-view').hidden = route.view !== 'hooks';
  if (route.view === 'hooks') void hooksView.load();
  $('#rules-view').hidden = route.view !== 'rules';
  if (route.view === 'rules') void rulesView.load();
  if (route.view === 'history' && (!historyLoaded || previous.view !== 'history')) {
    historyLoaded = true;
    void historyView.load();
  }
  listView.select(route.view === 'pending' ? route.id : null);
  historyView.select(route.view === 'history' ? route.id : null);
  if (route.id !== detail.id || route.view !== previous.view) await showDetail(route);
}

async function openLinked(id) {
  if (!id) return navigate('pending');
  let record;
  try {
    record = await api('GET', requestPath(id));
  } catch (err) {
    if (err.status !== 401) toast(`Cannot open request ${id}: ${err.message}`, 'error');
    return navigate('pending');
  }
  location.replace(`#/${record.status === 'pending' ? 'pending' : 'history'}/${encodeURIComponent(id)}`);
}

async function showDetail({ view, id }) {
  if (!id) return detail.show(null);
  const known = view === 'pending' ? store.get(id) : historyView.get(id);
  let record = known;
  if (!record) {
    try {
      record = await api('GET', requestPath(id));
    } catch (err) {
      if (err.status !== 401) toast(`Cannot open request ${id}: ${err.message}`, 'error');
      return detail.show(null);
    }
    if (route.id !== id) return;
  }
  detail.show(record, { format: store.formatOf(id), actionable: view === 'pending' });
}

/** Refetches a request whose decision was refused as stale (409/412) and says why. */
async function reloadRecord(id, notice) {
  let record;
  try {
    record = await api('GET', requestPath(id));
  } catch (err) {
    if (err.status !== 401) toast(notice ?? `Cannot reload request ${id}: ${err.message}`, 'error');
    return;
  }
  store.apply({ type: 'request.reloaded', request: record });
  if (record.status === 'pending') detail.show(record, { format: store.formatOf(id), actionable: route.view === 'pending', notice });
  else detail.retire(record, notice);
}

// ---- live queue ----

/** The filters' choices from the daemon: its wire formats (and mcp) and the request kinds. */
async function loadChoices() {
  if (!choices) {
    choices = api('GET', '/v1/formats').then((answer) => {
      listView.setChoices(answer);
      historyView.setKinds(answer.kinds);
      return answer;
    });
    // A failed fetch is tried again by the next resync.
    choices.catch(() => {
      choices = null;
    });
  }
  return choices;
}

async function resync() {
  const { formats } = await loadChoices();
  const pending = (format) => api('GET', `/v1/requests?status=pending&limit=500${format ? `&format=${encodeURIComponent(format)}` : ''}`);
  // Listed records do not carry their wire format; asking once per format recovers it.
  const [all, ...byFormat] = await Promise.all([pending(null), ...formats.map(pending)]);
  const formatOf = new Map();
  byFormat.forEach((records, i) => records.forEach((r) => formatOf.set(r.id, formats[i])));
  store.replaceAll(all, formatOf);
  // The request on screen may have ended while the stream was down.
  if (route.view === 'pending' && detail.id && !store.has(detail.id)) void reloadRecord(detail.id);
}

function onEvent(message) {
  if (message?.type === 'rules.changed') {
    if (route.view === 'rules') rulesView.changed();
    return;
  }
  if (message?.type === 'mutes.changed') {
    if (route.view === 'hooks') void hooksView.load();
    return;
  }
  const r = message?.request;
  if (!r) return;
  const wasQueued = store.has(r.id);
  store.apply(message);
  if (r.status === 'pending') return;
  detail.retire(r);
  if (wasQueued && !decidedHere.has(r.id)) toast(`${STATUS_LABEL[r.status] ?? r.status}: ${r.title}`);
}

store.subscribe(() => {
  listView.render();
  listView.select(route.view === 'pending' ? route.id : null);
});

/** After a decision here: show the next request, the usual inbox rhythm. */
function decided(updated) {
  const next = nextAfter.get(updated.id);
  nextAfter.delete(updated.id);
  store.apply({ type: 'request.decided', request: updated });
  toast(`${STATUS_LABEL[updated.status] ?? updated.status}: ${updated.title}`, 'success');
  // Only move on if the reviewer is still looking at the request they decided.
  if (route.view === 'pending' && route.id === updated.id) navigate('pending', next && store.has(next) ? next : null);
}

function showStatus(state) {
  const el = $('#conn');
  el.dataset.state = state;
  $('#conn-text').textContent = { live: 'Live', connecting: 'Connecting…', reconnecting: 'Reconnecting…', offline: 'Offline' }[state] ?? state;
  el.title = state === 'live' ? 'Receiving new requests as they arrive' : 'Not connected: the list may be out of date; retrying';
}

async function checkStillSignedIn() {
  try {
    // Asked again after the check: a sign-out clicked meanwhile has said why already.
    if (signedIn && !(await checkSession()) && signedIn) leave('Your session ended. Sign in again.');
  } catch {
    // The daemon is unreachable: keep retrying the stream.
  }
}

// ---- sign-in ----

function enter() {
  signedIn = true;
  $('#signin').hidden = true;
  $('#app').hidden = false;
  live.start();
  void applyRoute();
}

function leave(message, kind = 'error') {
  signedIn = false;
  live.stop();
  store.clear();
  historyLoaded = false;
  choices = null;
  detail.show(null);
  $('#app').hidden = true;
  $('#signin').hidden = false;
  const note = $('#signin-error');
  note.textContent = message ?? '';
  note.hidden = !message;
  note.className = kind === 'error' ? 'form-error' : 'form-note';
  $('#token').focus();
}

$('#signin-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const button = $('#signin-button');
  const error = $('#signin-error');
  const token = $('#token');
  button.disabled = true;
  error.hidden = true;
  try {
    await signIn(token.value);
    token.value = '';
    enter();
  } catch (err) {
    error.className = 'form-error';
    error.textContent = signInMessage(err);
    error.hidden = false;
    token.select();
  } finally {
    button.disabled = false;
  }
});

$('#signout').addEventListener('click', async () => {
  // The daemon closes the event stream as it ends the session: that is no surprise to report.
  signedIn = false;
  try {
    await signOut();
  } catch {
    // Signed out here either way: the tab has forgotten its session secret.
  }
  leave('Signed out.', 'info');
});

onUnauthorized(() => {
  forgetSessionSecret();
  if (signedIn) leave('Your session ended. Sign in again.');
});

// ---- keyboard and help ----

function step(delta) {
  const ids = route.view === 'pending' ? listView.visible().map((r) => r.id) : historyView.ids();
  if (!ids.length) return;
  const i = ids.indexOf(route.id);
  const next = i < 0 ? (delta > 0 ? ids[0] : ids[ids.length - 1]) : ids[Math.min(ids.length - 1, Math.max(0, i + delta))];
  navigate(route.view, next);
}

const help = $('#help');
replace(
  $('#help-list'),
  SHORTCUTS.map(([key, what]) => h('div', null, h('dt', null, h('kbd', null, key)), h('dd', null, what))),
);
const toggleHelp = () => (help.open ? help.close() : help.showModal());
$('#help-button').addEventListener('click', toggleHelp);
$('#help-close').addEventListener('click', () => help.close());

installShortcuts({
  j: () => step(1),
  k: () => step(-1),
  a: () => detail.form?.approve(),
  d: () => detail.form?.deny(),
  f: () => detail.form?.focusFeedback(),
  p: () => navigate('pending'),
  h: () => navigate('history'),
  '/': () => {
    navigate('history');
    historyView.focusSearch();
  },
  '?': toggleHelp,
  Escape: () => {
    if (help.open) help.close();
    else if (route.id) back();
  },
});

// ---- start ----

window.addEventListener('hashchange', () => void applyRoute());
window.addEventListener('online', () => live.kick());
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) live.kick();
});
setInterval(() => {
  listView.tick();
  detail.tick();
}, 1000);

try {
  if (await checkSession()) enter();
  else leave(null);
} catch (err) {
  leave(signInMessage(err));
}

import { api } from './api.js';
import { $, h, replace } from './dom.js';
import { ago, dateTime, STATUS_LABEL } from './format.js';
import { visible } from './visible-text.js';

const OUTCOMES = ['approved', 'denied', 'answered', 'dismissed', 'expired', 'cancelled'];
/** Decided by a rule, auto mode or a decide hook: no person. */
const AUTO = 'auto';
const PAGE = 50;

/** Resolved requests (GET /v1/history): outcome, kind and agent filters, search, "Load more" via next_cursor. */
export function createHistoryView() {
  const form = $('#history-filters');
  const outcome = $('#history-outcome');
  const kind = $('#history-kind');
  const agent = $('#history-agent');
  const q = $('#history-q');
  const list = $('#history-list');
  const more = $('#history-more');
  const summary = $('#history-summary');
  const records = new Map();
  let cursor = null;
  let selectedId = null;
  let generation = 0;
  let shown = 0;

  replace(
    outcome,
    h('option', { value: '' }, 'All outcomes'),
    OUTCOMES.map((o) => h('option', { value: o }, STATUS_LABEL[o])),
    h('option', { value: AUTO }, 'Decided by policy'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void load();
  });
  for (const select of [outcome, kind]) select.addEventListener('change', () => void load());
  more.addEventListener('click', () => void load({ append: true }));

  function card({ outcome: status, resolved_at, request: r }) {
    const id = `history-${r.id}`;
    // Named by its title; outcome, kind, age and source describe it.
    return h(
      'li',
      null,
      h(
        'a',
        {
          class: ['card', 'history-card', r.id === selectedId && 'selected'],
          href: `#/history/${encodeURIComponent(r.id)}`,
          dataset: { id: r.id },
          'aria-labelledby': `${id}-title`,
          'aria-describedby': `${id}-top ${id}-meta`,
        },
        h(
          'div',
          { class: 'card-top', id: `${id}-top` },
          h('span', { class: ['chip', 'status', `status-${status}`] }, STATUS_LABEL[status] ?? status),
          h('span', { class: 'chip' }, r.kind),
          h('span', { class: 'spacer' }),
          h('span', { class: 'muted small', title: dateTime(resolved_at) }, ago(resolved_at)),
        ),
        h('div', { class: 'card-title', id: `${id}-title` }, r.title),
        h(
          'div',
          { class: 'card-meta', id: `${id}-meta` },
          h('span', null, r.source?.agent ?? r.source?.integration ?? 'unknown agent'),
          r.decision?.decided_by ? h('span', null, `by ${r.decision.decided_by}`) : null,
        ),
      ),
    );
  }

  /** First page for the current filters, or the next page when `append`. */
  async function load({ append = false } = {}) {
    const mine = append ? generation : ++generation;
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (outcome.value) params.set('outcome', outcome.value);
    if (kind.value) params.set('kind', kind.value);
    if (agent.value.trim()) params.set('agent', agent.value.trim());
    if (q.value.trim()) params.set('q', q.value.trim());
    if (append && cursor) params.set('cursor', cursor);
    more.disabled = true;
    if (!append) summary.textContent = 'Loading…';
    let page;
    try {
      page = await api('GET', `/v1/history?${params}`);
    } catch (err) {
      if (mine === generation) summary.textContent = visible(`Could not load history: ${err.message}`);
      more.disabled = false;
      return;
    }
    if (mine !== generation) return;
    if (!append) {
      records.clear();
      list.replaceChildren();
      shown = 0;
    }
    for (const item of page.items) records.set(item.request.id, item.request);
    list.append(...page.items.map(card));
    shown += page.items.length;
    cursor = page.next_cursor;
    more.hidden = !cursor;
    more.disabled = false;
    summary.textContent = shown === 0 ? 'Nothing resolved matches.' : `${shown}${cursor ? '+' : ''} resolved`;
  }

  function select(id) {
    selectedId = id;
    for (const a of list.querySelectorAll('a.card')) {
      a.classList.toggle('selected', a.dataset.id === id);
      if (a.dataset.id === id) a.scrollIntoView({ block: 'nearest' });
    }
  }

  /** The kind filter's choices, as the daemon serves them (GET /v1/formats); a chosen value is kept. */
  function setKinds(kinds) {
    const chosen = kind.value;
    replace(
      kind,
      h('option', { value: '' }, 'All kinds'),
      kinds.map((k) => h('option', { value: k }, k)),
    );
    kind.value = kinds.includes(chosen) ? chosen : '';
  }

  return {
    load,
    select,
    setKinds,
    get: (id) => records.get(id),
    ids: () => [...list.querySelectorAll('a.card')].map((a) => a.dataset.id),
    focusSearch: () => q.focus(),
  };
}

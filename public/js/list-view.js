import { $, h, replace } from './dom.js';
import { ago, timeLeft, urgency } from './format.js';

/** The pending column: filters, count, cards (newest first) with live countdowns. */
export function createListView({ store }) {
  const list = $('#pending-list');
  const summary = $('#pending-summary');
  const count = $('#pending-count');
  const format = $('#filter-format');
  const kind = $('#filter-kind');
  const agent = $('#filter-agent');
  let selectedId = null;

  for (const select of [format, kind, agent]) select.addEventListener('change', render);

  /** The filters' choices, as the daemon serves them (GET /v1/formats); a chosen value is kept. */
  function setChoices({ formats, kinds }) {
    for (const [select, values, all] of [
      [format, formats, 'All formats'],
      [kind, kinds, 'All kinds'],
    ]) {
      const chosen = select.value;
      replace(
        select,
        h('option', { value: '' }, all),
        values.map((v) => h('option', { value: v }, v)),
      );
      select.value = values.includes(chosen) ? chosen : '';
    }
    render();
  }

  const matches = (r) =>
    (!format.value || store.formatOf(r.id) === format.value) && (!kind.value || r.kind === kind.value) && (!agent.value || r.source?.agent === agent.value);

  function visible() {
    return store.list().filter(matches);
  }

  /** Agents present in the queue; a chosen agent stays listed even when its last request ends. */
  let agentKey = null;
  function renderAgents() {
    const agents = new Set(
      store
        .list()
        .map((r) => r.source?.agent)
        .filter(Boolean),
    );
    if (agent.value) agents.add(agent.value);
    const sorted = [...agents].sort();
    // Rebuilt only when the set changes, so an open dropdown is not closed by unrelated events.
    const key = JSON.stringify(sorted);
    if (key === agentKey) return;
    agentKey = key;
    const chosen = agent.value;
    replace(
      agent,
      h('option', { value: '' }, 'All agents'),
      sorted.map((a) => h('option', { value: a }, a)),
    );
    agent.value = chosen;
  }

  function card(r) {
    const src = r.source ?? {};
    const where = [src.repo ? src.repo.split('/').pop() : null, src.branch].filter(Boolean).join(':');
    const fmt = store.formatOf(r.id);
    const id = `pending-${r.id}`;
    // Named by its title; the chips, countdown and source describe it.
    return h(
      'li',
      null,
      h(
        'a',
        {
          class: ['card', `risk-${r.risk}`, r.id === selectedId && 'selected'],
          href: `#/pending/${encodeURIComponent(r.id)}`,
          dataset: { id: r.id },
          'aria-current': r.id === selectedId ? 'true' : null,
          'aria-labelledby': `${id}-title`,
          'aria-describedby': `${id}-top ${id}-meta`,
        },
        h(
          'div',
          { class: 'card-top', id: `${id}-top` },
          h('span', { class: ['risk-dot', `risk-${r.risk}`], title: `${r.risk} risk` }),
          h('span', { class: 'chip' }, r.kind),
          fmt ? h('span', { class: 'chip chip-quiet' }, fmt) : null,
          h('span', { class: 'spacer' }),
          r.expires_at != null ? h('span', { class: ['countdown', urgency(r.expires_at)], dataset: { expires: r.expires_at } }, timeLeft(r.expires_at)) : null,
        ),
        h('div', { class: 'card-title', id: `${id}-title` }, r.title),
        h(
          'div',
          { class: 'card-meta', id: `${id}-meta` },
          h('span', null, src.agent ?? src.integration ?? 'unknown agent'),
          where ? h('span', null, where) : null,
          h('span', { dataset: { ago: r.created_at } }, ago(r.created_at)),
        ),
      ),
    );
  }

  function render() {
    renderAgents();
    const all = store.size;
    const shown = visible();
    count.textContent = String(all);
    count.hidden = all === 0;
    document.title = all ? `(${all}) countersign` : 'countersign';
    summary.textContent = all === 0 ? 'Queue is empty' : shown.length === all ? `${all} pending` : `${shown.length} of ${all} pending`;
    if (shown.length) {
      replace(list, shown.map(card));
    } else if (all === 0) {
      replace(
        list,
        h(
          'li',
          { class: 'empty' },
          h('p', { class: 'empty-title' }, 'Nothing waiting for you'),
          h('p', null, 'New requests appear here as soon as an agent asks.'),
        ),
      );
    } else {
      replace(
        list,
        h(
          'li',
          { class: 'empty' },
          h('p', { class: 'empty-title' }, 'No pending request matches these filters'),
          h('button', { type: 'button', class: 'btn btn-ghost', onclick: clearFilters }, 'Clear filters'),
        ),
      );
    }
  }

  function clearFilters() {
    format.value = kind.value = agent.value = '';
    render();
  }

  function tick(now = Date.now()) {
    for (const el of list.querySelectorAll('[data-expires]')) {
      const at = Number(el.dataset.expires);
      el.textContent = timeLeft(at, now);
      el.className = `countdown ${urgency(at, now)}`;
    }
    for (const el of list.querySelectorAll('[data-ago]')) el.textContent = ago(Number(el.dataset.ago), now);
  }

  function select(id) {
    selectedId = id;
    for (const a of list.querySelectorAll('a.card')) {
      const on = a.dataset.id === id;
      a.classList.toggle('selected', on);
      if (on) {
        a.setAttribute('aria-current', 'true');
        a.scrollIntoView({ block: 'nearest' });
      } else a.removeAttribute('aria-current');
    }
  }

  return { render, tick, select, visible, setChoices };
}

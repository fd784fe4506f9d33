import { api, requestPath } from './api.js';
import { h, replace } from './dom.js';
import { ago, dateTime, STATUS_LABEL, timeLeft, urgency } from './format.js';
import { createDecideForm } from './decide-form.js';
import { renderMarkdown } from './markdown.js';
import { releasePreviewResources, renderPreview } from './previews.js';

/**
 * The right-hand pane: everything about one request, and the decision panel while it is
 * pending. Drawn once per request; live updates only swap the decision panel for a notice
 * when the request ends, so a reviewer's half-typed feedback is never wiped by other traffic.
 */
export function createDetailView(container, { onSend, onDone, onBack, reload }) {
  let current = null;
  let form = null;

  function show(record, { format = null, actionable = false, notice = null } = {}) {
    releasePreviewResources();
    form = null;
    current = record;
    if (!record) {
      replace(
        container,
        h(
          'div',
          { class: 'placeholder' },
          h('p', { class: 'empty-title' }, 'No request selected'),
          h('p', null, 'Pick one from the list, or press ', h('kbd', null, 'j'), ' to start at the top.'),
        ),
      );
      return;
    }
    const pending = record.status === 'pending' && actionable;
    if (pending) {
      form = createDecideForm(record, {
        format,
        onSend,
        onDone,
        onStale: (message) => reload(record.id, message),
      });
    }
    replace(
      container,
      h(
        'article',
        { class: 'detail', dataset: { id: record.id } },
        h('button', { type: 'button', class: 'btn btn-ghost back', onclick: onBack }, h('span', { 'aria-hidden': 'true' }, '← '), 'Back'),
        header(record, format),
        record.summary ? h('section', { class: 'block' }, renderMarkdown(record.summary)) : null,
        sourceBlock(record, format),
        record.previews?.length ? h('section', { class: 'block previews' }, record.previews.map(renderPreview)) : null,
        extraInput(record),
        h(
          'section',
          { class: 'block decision-block', id: 'decision-block' },
          h('h3', null, pending ? 'Decision' : 'Outcome'),
          noticeBox(notice),
          pending ? form.el : outcome(record),
        ),
        h('p', { class: 'hash' }, h('span', { class: 'k' }, 'Content hash'), h('code', null, record.content_hash)),
        lazySection('Audit trail', () => auditRows(record.id)),
        lazySection('Callback deliveries', () => deliveryRows(record.id)),
      ),
    );
    container.scrollTop = 0;
    window.scrollTo(0, 0);
  }

  /** The shown request ended elsewhere (event): retire the panel, keep the content visible. */
  function retire(record, notice = null) {
    if (!current || current.id !== record.id || current.status !== 'pending') return;
    current = record;
    form = null;
    const block = container.querySelector('#decision-block');
    if (!block) return;
    replace(block, h('h3', null, 'Outcome'), noticeBox(notice), outcome(record));
    for (const el of container.querySelectorAll('.detail-meta .deadline')) el.remove();
    const status = container.querySelector('.detail-head .status-slot');
    if (status) replace(status, statusChip(record.status));
  }

  function tick(now = Date.now()) {
    const el = container.querySelector('.detail-head [data-expires]');
    if (!el) return;
    const at = Number(el.dataset.expires);
    el.textContent = timeLeft(at, now);
    el.className = `countdown deadline ${urgency(at, now)}`;
  }

  return {
    show,
    retire,
    tick,
    get id() {
      return current?.id ?? null;
    },
    get form() {
      return form;
    },
  };
}

function noticeBox(notice) {
  return notice ? h('p', { class: 'notice', role: 'alert' }, notice) : null;
}

function statusChip(status) {
  return h('span', { class: ['chip', 'status', `status-${status}`] }, STATUS_LABEL[status] ?? status);
}

function header(r, format) {
  return h(
    'header',
    { class: 'detail-head' },
    h(
      'div',
      { class: 'chips' },
      h('span', { class: 'status-slot' }, r.status === 'pending' ? null : statusChip(r.status)),
      h('span', { class: ['chip', `risk-chip`, `risk-${r.risk}`] }, `${r.risk} risk`),
      h('span', { class: 'chip' }, r.kind),
      format ? h('span', { class: 'chip chip-quiet' }, format) : null,
      r.tool ? h('span', { class: 'chip chip-quiet' }, r.tool) : null,
    ),
    h('h2', { class: 'detail-title' }, r.title),
    h(
      'p',
      { class: 'detail-meta' },
      h('span', { title: dateTime(r.created_at) }, `Asked ${ago(r.created_at)}`),
      r.status === 'pending' && r.expires_at != null
        ? h(
            'span',
            { class: ['countdown', 'deadline', urgency(r.expires_at)], dataset: { expires: r.expires_at }, title: `Expires ${dateTime(r.expires_at)}` },
            timeLeft(r.expires_at),
          )
        : r.status === 'pending'
          ? h('span', null, 'No expiry')
          : null,
      r.status === 'pending' && r.expires_at != null
        ? h('span', { class: 'deadline' }, `then ${r.on_timeout === 'expire' ? 'expires' : `auto-${r.on_timeout}`}`)
        : null,
      h('code', { class: 'id' }, r.id),
    ),
  );
}

function sourceBlock(r, format) {
  const s = r.source ?? {};
  const rows = [
    ['Agent', s.agent],
    ['Session', s.session_title ? `${s.session_title} (${s.session ?? '—'})` : s.session],
    ['Directory', s.cwd],
    ['Repository', s.repo],
    ['Branch', s.branch],
    ['Host', s.host],
    ['Integration', s.integration],
    ['Format', format],
  ].filter(([, v]) => v);
  if (!rows.length) return null;
  return h(
    'section',
    { class: 'block' },
    h(
      'dl',
      { class: 'source' },
      rows.map(([k, v]) => h('div', null, h('dt', null, k), h('dd', null, v))),
    ),
  );
}

/** Raw agent input (e.g. a tool's arguments) beyond what the page renders as forms. */
function extraInput(r) {
  if (!r.input) return null;
  const { questions, feedback, ...rest } = r.input;
  if (!Object.keys(rest).length) return null;
  return h('details', { class: 'block fold' }, h('summary', null, 'Input'), h('pre', { class: 'code' }, h('code', null, JSON.stringify(rest, null, 2))));
}

function outcome(r) {
  const d = r.decision;
  const option = d ? r.options.find((o) => o.id === d.option) : null;
  const lines = [
    h(
      'p',
      null,
      statusChip(r.status),
      d ? h('strong', null, option?.label ?? d.option) : null,
      d?.decided_by ? `by ${d.decided_by}` : null,
      d?.decided_at ? h('span', { class: 'muted', title: dateTime(d.decided_at) }, `· ${ago(d.decided_at)}`) : null,
      d?.scope ? h('span', { class: 'chip chip-quiet' }, `scope: ${d.scope}`) : null,
    ),
  ];
  if (r.status === 'expired' && !d) lines.push(h('p', { class: 'muted' }, `Expired ${r.expires_at ? dateTime(r.expires_at) : ''} without a decision.`));
  if (r.status === 'cancelled') lines.push(h('p', { class: 'muted' }, 'Cancelled: the agent will not wait for an answer.'));
  if (d?.feedback) lines.push(h('blockquote', { class: 'feedback' }, d.feedback));
  const answers = d?.fields?.answers;
  if (answers) {
    const qs = r.input?.questions ?? [];
    lines.push(
      h(
        'dl',
        { class: 'answers' },
        Object.entries(answers).map(([id, a]) =>
          h(
            'div',
            null,
            h('dt', null, qs.find((q) => q.id === id)?.question ?? id),
            h('dd', null, [...(a.selected ?? []), a.text ? `“${a.text}”` : null].filter(Boolean).join(', ') || '—'),
          ),
        ),
      ),
    );
  }
  return h('div', { class: 'outcome' }, lines);
}

/** A folded section whose rows are fetched the first time it is opened. */
function lazySection(title, load) {
  const body = h('div', { class: 'fold-body' }, h('p', { class: 'muted' }, 'Loading…'));
  const el = h('details', { class: 'block fold' }, h('summary', null, title), body);
  let loaded = false;
  el.addEventListener('toggle', async () => {
    if (!el.open || loaded) return;
    loaded = true;
    try {
      replace(body, await load());
    } catch (err) {
      loaded = false;
      replace(body, h('p', { class: 'muted' }, `Could not load: ${err.message}`));
    }
  });
  return el;
}

async function auditRows(id) {
  const rows = await api('GET', requestPath(id, '/audit'));
  if (!rows?.length) return h('p', { class: 'muted' }, 'No entries.');
  return h(
    'ol',
    { class: 'timeline' },
    rows.map((row) =>
      h(
        'li',
        null,
        h('span', { class: 'when', title: dateTime(row.at) }, dateTime(row.at)),
        h('span', { class: 'what' }, row.event),
        h('span', { class: 'who' }, row.actor),
        auditDetails(row.details),
      ),
    ),
  );
}

/** Flat details (the usual case) as `key value` pairs; anything nested as JSON. */
function auditDetails(details) {
  if (details == null) return null;
  const flat = typeof details === 'object' && !Array.isArray(details) && Object.values(details).every((v) => v === null || typeof v !== 'object');
  if (!flat) return h('pre', { class: 'code small' }, h('code', null, JSON.stringify(details, null, 2)));
  return h(
    'span',
    { class: 'audit-details' },
    Object.entries(details).map(([k, v]) => h('span', null, h('span', { class: 'k' }, k), ' ', String(v))),
  );
}

/**
 * Callback deliveries with every attempt (GET /v1/requests/{id}/deliveries). A daemon without
 * that route answers 404, which means the same as an empty list: none.
 */
async function deliveryRows(id) {
  let rows;
  try {
    rows = await api('GET', requestPath(id, '/deliveries'));
  } catch (err) {
    if (err.status === 404) return h('p', { class: 'muted' }, 'None.');
    throw err;
  }
  if (!Array.isArray(rows) || !rows.length) return h('p', { class: 'muted' }, 'None.');
  return h(
    'ol',
    { class: 'timeline deliveries' },
    rows.map((d) =>
      h(
        'li',
        { dataset: { state: d.state } },
        h('span', { class: ['chip', 'delivery-state', `delivery-${d.state}`] }, d.state),
        h('span', { class: 'what' }, d.type),
        h('code', { class: 'url' }, d.url),
        d.next_attempt_at && (d.state === 'pending' || d.state === 'leased')
          ? h('span', { class: 'muted' }, `next attempt ${dateTime(d.next_attempt_at)}`)
          : null,
        d.last_error ? h('span', { class: 'delivery-error' }, d.last_error) : null,
        d.attempts?.length
          ? h(
              'ol',
              { class: 'attempts' },
              d.attempts.map((a) =>
                h(
                  'li',
                  null,
                  h('span', { class: 'when' }, `#${a.n} · ${dateTime(a.started_at)}`),
                  h('span', null, a.status != null ? `HTTP ${a.status}` : (a.error_class ?? 'in flight')),
                  a.latency_ms != null ? h('span', { class: 'muted' }, `${a.latency_ms} ms`) : null,
                  a.error ? h('span', { class: 'delivery-error' }, a.error) : null,
                ),
              ),
            )
          : h('span', { class: 'muted' }, 'no attempt yet'),
      ),
    ),
  );
}

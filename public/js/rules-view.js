import { api } from './api.js';
import { $, h, replace, toast } from './dom.js';
import { ago, dateTime } from './format.js';

const ACTIONS = ['approve', 'deny', 'ask', 'dismiss'];
/** Matchers that take a value or a comma list, then globs, then regular expressions. */
const EXACT = [
  ['agent', 'claude-code'],
  ['session', ''],
  ['integration', 'token name'],
  ['format', 'handup, paperclip…'],
  ['kind', 'command, edit…'],
  ['risk', 'low, medium'],
];
const GLOBS = [
  ['tool', 'spend.*'],
  ['cwd', '**/deploy/**'],
  ['repo', 'acme/*'],
];
const REGEXES = [
  ['command', '^git (status|diff)( |$)'],
  ['title', '^Deploy'],
];
const DAY = 86_400_000;
const PAST = { approve: 'approved', deny: 'denied', dismiss: 'dismissed', ask: 'kept for a person' };

/**
 * The Rules view: every rule in evaluation order with its hits; stored rules can be deleted;
 * a new rule is checked against history (POST /v1/rules/simulate, the current list plus the
 * candidate) before it can be saved; any request can be tried against the list (rules/test).
 */
export function createRulesView() {
  const list = $('#rules-list');
  const summary = $('#rules-summary');
  const form = $('#rule-form');
  const check = $('#rule-check');
  const save = $('#rule-save');
  const result = $('#rule-simulation');
  const error = $('#rule-error');
  let rules = [];
  let checked = null;
  let generation = 0;

  const field = (name) => form.elements.namedItem(name);
  buildForm();

  function buildForm() {
    const input = ([name, placeholder], kind) =>
      h(
        'label',
        { class: 'rule-field' },
        h('span', null, name, h('span', { class: 'muted' }, ` ${kind}`)),
        h('input', { type: 'text', name: `match-${name}`, placeholder, spellcheck: 'false', autocomplete: 'off' }),
      );
    replace(
      $('#rule-matchers'),
      EXACT.map((m) => input(m, 'exact, or a comma list')),
      GLOBS.map((m) => input(m, 'glob')),
      REGEXES.map((m) => input(m, 'regular expression')),
    );
    replace(
      field('action'),
      ACTIONS.map((a) => h('option', { value: a }, a)),
    );
    form.addEventListener('input', () => invalidate());
    form.addEventListener('change', () => showActionFields());
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void simulate();
    });
    save.addEventListener('click', () => void store());
    $('#rule-test').addEventListener('submit', (e) => {
      e.preventDefault();
      void tryRequest();
    });
    showActionFields();
  }

  function showActionFields() {
    const action = field('action').value;
    $('#rule-deny-fields').hidden = action !== 'deny';
    $('#rule-ask-fields').hidden = action !== 'ask';
  }

  /** Any edit after a check means the check no longer describes the rule: check again before saving. */
  function invalidate() {
    if (!checked) return;
    checked = null;
    save.disabled = true;
    result.replaceChildren();
  }

  /** The rule the form describes, or throws with the field to fix. */
  function candidate() {
    const id = field('id').value.trim();
    if (!id) throw Object.assign(new Error('Give the rule an id (a-z, 0-9 and -).'), { field: field('id') });
    const match = {};
    for (const [name] of EXACT) {
      const items = field(`match-${name}`)
        .value.split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (items.length) match[name] = items.length === 1 ? items[0] : items;
    }
    for (const [name] of [...GLOBS, ...REGEXES]) {
      const v = field(`match-${name}`).value;
      if (v.trim()) match[name] = v;
    }
    const rule = { id, match, action: field('action').value };
    if (rule.action === 'deny' && field('feedback').value.trim()) rule.feedback = field('feedback').value.trim();
    if (rule.action === 'ask' && field('risk').value) rule.risk = field('risk').value;
    if (rule.action === 'ask' && field('timeout').value.trim()) rule.timeout = field('timeout').value.trim();
    return rule;
  }

  function showError(message, focus) {
    error.textContent = message;
    error.hidden = false;
    focus?.focus();
  }

  async function simulate() {
    error.hidden = true;
    let rule;
    try {
      rule = candidate();
    } catch (err) {
      return showError(err.message, err.field);
    }
    check.disabled = true;
    result.replaceChildren(h('p', { class: 'muted' }, 'Replaying the last 30 days…'));
    try {
      const current = rules.map(({ source, hits, last_hit_at, created_at, ...r }) => r);
      const answer = await api('POST', '/v1/rules/simulate', { rules: [...current, rule] });
      checked = rule;
      save.disabled = false;
      replace(result, simulation(rule, answer));
    } catch (err) {
      result.replaceChildren();
      if (err.status !== 401) showError(`Not checked (${err.code}): ${err.message}`);
    } finally {
      check.disabled = false;
    }
  }

  async function store() {
    if (!checked) return;
    save.disabled = true;
    try {
      const stored = await api('POST', '/v1/rules', checked);
      toast(`Rule ${stored.id} saved`, 'success');
      form.reset();
      showActionFields();
      checked = null;
      result.replaceChildren();
      await load();
    } catch (err) {
      save.disabled = false;
      if (err.status !== 401) showError(`Not saved (${err.code}): ${err.message}`);
    }
  }

  async function remove(rule, box) {
    try {
      await api('DELETE', `/v1/rules/${encodeURIComponent(rule.id)}`);
      toast(`Rule ${rule.id} deleted`, 'success');
      await load();
    } catch (err) {
      box.replaceChildren(deleteButton(rule, box));
      if (err.status !== 401) toast(`Cannot delete ${rule.id}: ${err.message}`, 'error');
    }
  }

  // Two clicks, no browser dialog.
  function deleteButton(rule, box) {
    return h(
      'button',
      {
        type: 'button',
        class: 'btn btn-ghost btn-small',
        'aria-label': `Delete rule ${rule.id}`,
        onclick: () =>
          box.replaceChildren(
            h('span', { class: 'muted' }, 'Delete? '),
            h('button', { type: 'button', class: 'btn btn-deny btn-soft btn-small', onclick: () => remove(rule, box) }, 'Yes, delete'),
            h('button', { type: 'button', class: 'btn btn-ghost btn-small', onclick: () => box.replaceChildren(deleteButton(rule, box)) }, 'Keep'),
          ),
      },
      'Delete',
    );
  }

  function row(rule, i) {
    const actions = h('span', { class: 'rule-actions' });
    if (rule.source === 'stored') actions.append(deleteButton(rule, actions));
    const extra = [rule.risk ? `risk ${rule.risk}` : null, rule.timeout ? `timeout ${rule.timeout}` : null].filter(Boolean).join(', ');
    return h(
      'li',
      { class: 'rule', dataset: { id: rule.id } },
      h(
        'div',
        { class: 'rule-top' },
        h('span', { class: 'rule-pos muted' }, `${i + 1}.`),
        h('code', { class: 'rule-id' }, rule.id),
        h('span', { class: ['chip', `action-${rule.action}`] }, extra ? `${rule.action} · ${extra}` : rule.action),
        h('span', { class: 'chip chip-quiet' }, rule.source),
        h('span', { class: 'spacer' }),
        h(
          'span',
          { class: 'rule-hits', title: rule.last_hit_at ? `Last ${dateTime(rule.last_hit_at)}` : 'Never matched' },
          `${rule.hits} ${rule.hits === 1 ? 'hit' : 'hits'}`,
          rule.last_hit_at ? ` · ${ago(rule.last_hit_at)}` : '',
        ),
        actions,
      ),
      h(
        'div',
        { class: 'rule-match' },
        Object.entries(rule.match).map(([k, v]) =>
          h('span', { class: 'rule-matcher' }, h('span', { class: 'k' }, k), ' ', h('code', null, Array.isArray(v) ? v.join(', ') : String(v))),
        ),
      ),
      rule.feedback ? h('p', { class: 'rule-feedback muted' }, `Feedback: ${rule.feedback}`) : null,
      rule.expires_at ? h('p', { class: 'muted small' }, `Expires ${dateTime(rule.expires_at)}`) : null,
    );
  }

  async function load() {
    const mine = ++generation;
    let answer;
    try {
      answer = await api('GET', '/v1/rules');
    } catch (err) {
      if (mine === generation && err.status !== 401) summary.textContent = `Could not load rules: ${err.message}`;
      return;
    }
    if (mine !== generation) return;
    rules = answer;
    invalidate();
    replace(list, rules.map(row));
    summary.textContent =
      rules.length === 0
        ? 'No rules: every request waits for a person.'
        : `${rules.length} ${rules.length === 1 ? 'rule' : 'rules'}, evaluated top to bottom; the first that matches decides.`;
  }

  async function tryRequest() {
    const out = $('#rule-test-result');
    let body;
    try {
      body = JSON.parse($('#rule-test-input').value);
    } catch {
      out.textContent = 'Paste a request as JSON (as for POST /v1/requests).';
      return;
    }
    try {
      const answer = await api('POST', '/v1/rules/test', body);
      out.textContent = !answer.rule
        ? 'No rule matches: a person decides.'
        : answer.would_decide
          ? `Rule ${answer.rule.id} would ${answer.action} it (option "${answer.would_decide}").`
          : answer.action === 'ask'
            ? `Rule ${answer.rule.id} keeps it for a person.`
            : `Rule ${answer.rule.id} matches but would not decide: ${answer.skipped}.`;
    } catch (err) {
      if (err.status !== 401) out.textContent = `Refused (${err.code}): ${err.message}`;
    }
  }

  return {
    load,
    /** A rules.changed event: refresh what is on screen. */
    changed: () => void load(),
  };
}

/** "This rule would have approved 1,190 requests in the last 30 days; 3 of them a person denied", with those listed. */
function simulation(rule, answer) {
  const stats = answer.per_rule.find((p) => p.id === rule.id) ?? { matched: 0, decided: 0, disagreed: 0 };
  const days = Math.round((answer.until - answer.since) / DAY);
  const n = (x, one, many) => `${x.toLocaleString('en')} ${x === 1 ? one : many}`;
  const denied = answer.disagreements.filter((d) => d.rule_id === rule.id && d.actual === 'denied').length;
  const approved = answer.disagreements.filter((d) => d.rule_id === rule.id && (d.actual === 'approved' || d.actual === 'answered')).length;
  const cancelled = answer.disagreements.filter((d) => d.rule_id === rule.id && d.actual === 'cancelled').length;
  const count = rule.action === 'ask' ? stats.matched : stats.decided;
  let text = `This rule would have ${PAST[rule.action]} ${n(count, rule.action === 'dismiss' ? 'notice' : 'request', rule.action === 'dismiss' ? 'notices' : 'requests')} in the last ${n(days, 'day', 'days')}`;
  const against = [
    denied ? `${n(denied, 'of them', 'of them')} a person denied` : null,
    approved ? `${n(approved, 'of them', 'of them')} a person approved` : null,
    cancelled ? `${n(cancelled, 'was', 'were')} cancelled` : null,
  ].filter(Boolean);
  if (against.length) text += `; ${against.join(', ')}`;
  if (stats.matched > count && rule.action !== 'ask') text += ` (${stats.matched - count} more it matched still need a person)`;
  const mine = answer.disagreements.filter((d) => d.rule_id === rule.id);
  return [
    h('p', { class: ['simulation-summary', mine.length ? 'has-disagreements' : null] }, `${text}.`),
    answer.evaluated === 0 ? h('p', { class: 'muted small' }, 'No request ended in that window, so history says nothing yet.') : null,
    mine.length
      ? h(
          'ul',
          { class: 'disagreements' },
          mine.map((d) =>
            h(
              'li',
              null,
              h('a', { href: `#/history/${encodeURIComponent(d.request_id)}` }, d.title),
              h('span', { class: ['chip', `status-${d.actual}`] }, d.actual),
              d.decided_by ? h('span', { class: 'muted' }, `by ${d.decided_by}`) : null,
            ),
          ),
        )
      : null,
  ];
}

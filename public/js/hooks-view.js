import { api } from './api.js';
import { $, h, replace, toast } from './dom.js';
import { ago, dateTime } from './format.js';

/**
 * Notifications at a glance: every configured hook with its last deliveries (GET /v1/hooks and
 * /v1/hooks/{name}/deliveries), and the mutes in force, each removable (DELETE /v1/mutes/{id}).
 */
export function createHooksView() {
  const hooksList = $('#hooks-list');
  const mutesList = $('#mutes-list');
  const summary = $('#hooks-summary');
  let generation = 0;

  const STATE_CLASS = { delivered: 'status-approved', failed: 'status-denied', pending: 'status-pending', leased: 'status-pending' };

  function attemptsLine(d) {
    const last = d.attempts.at(-1);
    const parts = [`${d.attempts.length} attempt${d.attempts.length === 1 ? '' : 's'}`];
    if (last?.status != null) parts.push(`last ${last.status}`);
    if (d.last_error) parts.push(d.last_error);
    if (d.state === 'pending' && d.next_attempt_at) parts.push(`next ${ago(d.next_attempt_at).replace(' ago', '')}`);
    return parts.join(' · ');
  }

  function deliveryRow(d) {
    return h(
      'li',
      { class: 'delivery', dataset: { id: d.id } },
      h('span', { class: ['chip', 'status', STATE_CLASS[d.state]] }, d.state),
      h('span', { class: 'delivery-type' }, d.type),
      h('a', { href: `#/requests/${encodeURIComponent(d.request_id)}`, class: 'muted small' }, d.request_id),
      h('span', { class: 'muted small', title: dateTime(d.created_at) }, ago(d.created_at)),
      h('span', { class: 'muted small' }, attemptsLine(d)),
    );
  }

  function hookCard(hook, deliveries) {
    const last = hook.last_delivery;
    return h(
      'li',
      { class: 'hook-card', dataset: { hook: hook.name } },
      h(
        'div',
        { class: 'card-top' },
        h('strong', { class: 'hook-name' }, hook.name),
        h('span', { class: 'chip' }, hook.kind === 'exec' ? 'exec' : hook.format),
        hook.decision_links ? h('span', { class: 'chip chip-accent' }, 'decision links') : null,
        hook.signed ? h('span', { class: 'chip chip-quiet' }, 'signed') : null,
        h('span', { class: 'spacer' }),
        last
          ? h('span', { class: ['chip', 'status', STATE_CLASS[last.state]], title: dateTime(last.created_at) }, `last: ${last.state}`)
          : h('span', { class: 'muted small' }, 'nothing sent yet'),
      ),
      h('div', { class: 'card-meta' }, h('span', null, hook.target), h('span', null, hook.events.join(', '))),
      deliveries.length ? h('ul', { class: 'deliveries' }, deliveries.map(deliveryRow)) : null,
    );
  }

  function muteRow(m) {
    const who = [m.agent === null ? 'any agent' : `agent ${m.agent}`, m.session === null ? null : `session ${m.session}`].filter(Boolean).join(', ');
    const remove = h('button', { type: 'button', class: 'btn btn-ghost', dataset: { mute: m.id } }, 'Remove');
    remove.addEventListener('click', async () => {
      remove.disabled = true;
      try {
        await api('DELETE', `/v1/mutes/${encodeURIComponent(m.id)}`);
        toast(`Unmuted ${who}`, 'success');
        await load();
      } catch (err) {
        remove.disabled = false;
        if (err.status !== 401) toast(`Cannot remove the mute: ${err.message}`, 'error');
      }
    });
    return h(
      'li',
      { class: 'mute-row', dataset: { id: m.id } },
      h('span', { class: 'mute-who' }, who),
      m.dismiss_notices ? h('span', { class: 'chip chip-quiet' }, 'dismisses notices') : null,
      h('span', { class: 'muted small' }, m.expires_at === null ? 'until removed' : `until ${dateTime(m.expires_at)}`),
      h('span', { class: 'spacer' }),
      remove,
    );
  }

  async function load() {
    const mine = ++generation;
    summary.textContent = 'Loading…';
    let hooks;
    let mutes;
    let deliveries;
    try {
      [hooks, mutes] = await Promise.all([api('GET', '/v1/hooks'), api('GET', '/v1/mutes')]);
      deliveries = await Promise.all(hooks.map((hook) => api('GET', `/v1/hooks/${encodeURIComponent(hook.name)}/deliveries?limit=5`)));
    } catch (err) {
      if (mine === generation) summary.textContent = `Could not load notifications: ${err.message}`;
      return;
    }
    if (mine !== generation) return;
    summary.textContent = hooks.length === 0 ? 'No hooks configured (hooks: in the config file).' : `${hooks.length} hook${hooks.length === 1 ? '' : 's'}`;
    replace(
      hooksList,
      hooks.map((hook, i) => hookCard(hook, deliveries[i])),
    );
    replace(mutesList, mutes.length ? mutes.map(muteRow) : h('li', { class: 'muted small' }, 'No mutes.'));
  }

  return { load };
}

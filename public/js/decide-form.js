import { api, requestPath } from './api.js';
import { h, toast } from './dom.js';
import { rememberedAction } from './scope-action.js';

/**
 * The decision panel of a pending request: question forms, feedback, one button per option of
 * the request, and cancel. Every decision echoes the content_hash of the record on screen, so
 * a request that changed underneath the reviewer is refused (412) rather than decided blind.
 */
export function createDecideForm(record, { format = null, onSend, onDone, onStale }) {
  const questions = record.kind === 'question' ? (record.input?.questions ?? []) : [];
  // Questions the agent lets go unanswered (input.optional_questions): marked, and never required here.
  const optional = new Set(record.input?.optional_questions ?? []);
  const feedbackRequired = record.input?.feedback === 'required_on_deny';
  const error = h('div', { class: 'form-error', role: 'alert', hidden: true });
  const feedback = h('textarea', {
    id: 'feedback',
    name: 'feedback',
    rows: 3,
    maxlength: 65536,
    placeholder: feedbackRequired ? 'Required when denying: tell the agent why' : 'Optional: a note for the agent',
  });
  const fieldsets = questions.map((q) => questionFieldset(q, optional.has(q.id)));
  const scope = scopeField(record, format);
  const buttons = [];
  let busy = false;
  // Not armed until the request has been on screen a moment: a double click or a held key meant
  // for the request just decided must not decide the one that opened after it.
  let armed = false;

  const firstApprove = record.options.find((o) => o.outcome === 'approve');
  const firstDeny = record.options.find((o) => o.outcome === 'deny');
  for (const option of record.options) {
    // The colour says what the button does, whatever style the agent asked for.
    const tone = option.outcome === 'deny' ? 'deny' : 'approve';
    const primary = option.style === 'primary' || option === firstApprove || option === firstDeny;
    const key = option === firstApprove ? 'a' : option === firstDeny ? 'd' : null;
    // The hint is for the eye; assistive technology gets the key from aria-keyshortcuts, so the
    // button's name stays the option's label ("Approve", not "Approvea").
    buttons.push(
      h(
        'button',
        {
          type: 'button',
          class: ['btn', `btn-${tone}`, !primary && 'btn-soft'],
          dataset: { option: option.id, outcome: option.outcome },
          'aria-keyshortcuts': key,
          onclick: () => decide(option),
        },
        option.label,
        key ? h('kbd', { class: 'hint', 'aria-hidden': 'true' }, key) : null,
      ),
    );
  }

  const cancelButton = h('button', { type: 'button', class: 'btn btn-ghost', onclick: () => confirmCancel() }, 'Cancel request');
  const cancelBox = h('span', { class: 'cancel-box' }, cancelButton);

  const form = h(
    'form',
    { class: 'decide', novalidate: true, onsubmit: (e) => e.preventDefault() },
    fieldsets.map((f) => f.el),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'feedback' }, 'Feedback', h('span', { class: 'muted' }, feedbackRequired ? ' · required to deny' : ' · optional')),
      feedback,
    ),
    scope?.el,
    error,
    h('div', { class: 'actions' }, buttons, h('span', { class: 'spacer' }), cancelBox),
  );

  function showError(title, message, focus) {
    error.replaceChildren(h('strong', null, title), ' ', message);
    error.hidden = false;
    focus?.focus();
  }

  function setBusy(on) {
    busy = on;
    for (const b of form.querySelectorAll('button')) b.disabled = on || !armed;
    form.classList.toggle('busy', on);
  }

  setBusy(false);
  setTimeout(() => {
    armed = true;
    form.classList.add('armed');
    setBusy(busy);
  }, ARM_MS);

  function showApiError(err) {
    // 409/412 mean the record on screen is out of date: the page reloads it and shows why.
    if (err.status === 409) {
      onStale('Too late: this request is no longer pending. It was decided, cancelled or expired meanwhile (409 not_pending).');
    } else if (err.status === 412) {
      onStale(
        'The request changed after you opened it, so the decision was refused (412 content_hash_mismatch). It has been reloaded: review it again before deciding.',
      );
    } else if (err.status === 0) {
      showError('Not sent.', 'The daemon cannot be reached; check the connection and try again.');
    } else if (err.status !== 401) {
      showError(`Refused (${err.status} ${err.code}).`, err.message);
    }
  }

  /** Answers keyed by question id, or null (with the unanswered ones marked) if incomplete. */
  function collectAnswers() {
    const answers = {};
    let firstMissing = null;
    for (const f of fieldsets) {
      const answer = f.value();
      f.el.classList.toggle('invalid', !answer && !f.optional);
      if (answer) answers[f.id] = answer;
      else if (!f.optional) firstMissing ??= f;
    }
    if (firstMissing) {
      showError('Not yet.', 'Answer every question not marked optional before submitting.', firstMissing.el.querySelector('input, textarea'));
      return null;
    }
    return answers;
  }

  async function decide(option) {
    if (busy || !armed || !option) return;
    error.hidden = true;
    const note = feedback.value.trim();
    if (option.outcome === 'deny' && feedbackRequired && !note) {
      feedback.classList.add('invalid');
      return showError('Feedback needed.', 'This request asks for a reason when it is denied.', feedback);
    }
    feedback.classList.remove('invalid');
    const body = { option: option.id, content_hash: record.content_hash };
    if (note) body.feedback = note;
    if (option.outcome === 'approve' && scope?.value()) body.scope = scope.value();
    if (questions.length && option.outcome === 'approve') {
      const answers = collectAnswers();
      if (!answers) return;
      body.fields = { answers };
    }
    setBusy(true);
    onSend?.(record.id);
    try {
      const updated = await api('POST', requestPath(record.id, '/decision'), body);
      onDone(updated);
      if (updated.decision?.scope && updated.decision.rule_id)
        toast(`Won't ask again (${SCOPE_LABEL[updated.decision.scope]}): rule ${updated.decision.rule_id} saved`, 'success');
    } catch (err) {
      setBusy(false);
      showApiError(err);
    }
  }

  // Two clicks, no browser dialog: cancelling tells the agent nobody will answer.
  function confirmCancel() {
    cancelBox.replaceChildren(
      h('span', { class: 'muted' }, 'Cancel it? '),
      h('button', { type: 'button', class: 'btn btn-deny btn-soft', onclick: () => cancel() }, 'Yes, cancel'),
      h('button', { type: 'button', class: 'btn btn-ghost', onclick: () => cancelBox.replaceChildren(cancelButton) }, 'Keep'),
    );
  }

  async function cancel() {
    if (busy || !armed) return;
    setBusy(true);
    onSend?.(record.id);
    try {
      const updated = await api('POST', requestPath(record.id, '/cancel'));
      onDone(updated);
    } catch (err) {
      setBusy(false);
      cancelBox.replaceChildren(cancelButton);
      showApiError(err);
    }
  }

  return {
    el: form,
    approve: () => decide(firstApprove),
    deny: () => decide(firstDeny),
    focusFeedback: () => feedback.focus(),
  };
}

/** How long a request is on screen before its buttons and shortcuts decide it. */
const ARM_MS = 700;

const SCOPE_LABEL = { session: 'this session', project: 'this project', always: 'always' };

/**
 * "Don't ask again": offered on approvals only, with the scopes this request's
 * source allows (a session needs source.session, a project source.repo; every scope the agent).
 * Approving with one also stores a rule that approves the same action from the same agent.
 * Not offered where the daemon refuses it: a wire format's request remembered by a title the
 * adapter made (a first line, a stock phrase) while it shows more than that title.
 */
function scopeField(record, format) {
  const s = record.source ?? {};
  if (!s.agent || record.kind === 'question' || record.kind === 'info' || !record.options.some((o) => o.outcome === 'approve')) return null;
  const action = rememberedAction(record, format);
  if (!action) return null;
  const scopes = [s.session ? 'session' : null, s.repo ? 'project' : null, 'always'].filter(Boolean);
  const select = h(
    'select',
    { id: 'scope', name: 'scope' },
    h('option', { value: '' }, 'No: ask every time'),
    scopes.map((v) => h('option', { value: v }, v === 'always' ? `Always, for ${s.agent}` : `For ${SCOPE_LABEL[v]} of ${s.agent}`)),
  );
  const el = h(
    'div',
    { class: 'field scope-field' },
    h('label', { for: 'scope' }, "Don't ask again", h('span', { class: 'muted' }, ' · when approving, approve the same action from this agent from now on')),
    select,
    h('p', { class: 'muted scope-action' }, 'Remembers ', actionText(action)),
  );
  return { el, value: () => select.value || null };
}

/** What the rule will pass, in words: the reviewer sees how far "the same action" reaches. */
function actionText(action) {
  if (action.tool) return ['the tool ', h('code', null, action.tool)];
  if (action.title) return ['the title ', h('q', null, action.title)];
  return action.commands.flatMap((c, i) => [
    i > 0 ? '; ' : '',
    c.type === 'exact'
      ? ['exactly ', h('code', null, c.command)]
      : [h('code', null, c.words.join(' ')), c.words.length === 1 ? ' with any plain arguments' : ' followed by any plain words'],
  ]);
}

let uid = 0;

/** One question: radios (single), checkboxes (multi), and/or a free-text box. */
function questionFieldset(q, optional) {
  const name = `q${++uid}`;
  const multi = Boolean(q.multi);
  const inputs = [];
  const options = (q.options ?? []).map((o, i) => {
    const id = `${name}-${i}`;
    const recommended = q.recommended === i;
    // Named by its label alone; the recommendation and description describe it.
    const described = [recommended && `${id}-rec`, o.description && `${id}-desc`].filter(Boolean).join(' ');
    const input = h('input', {
      type: multi ? 'checkbox' : 'radio',
      name,
      value: o.label,
      id,
      'aria-labelledby': `${id}-label`,
      'aria-describedby': described || null,
    });
    inputs.push(input);
    return h(
      'div',
      { class: ['choice', recommended && 'recommended'] },
      input,
      h(
        'label',
        { for: id },
        h('span', { class: 'choice-label', id: `${id}-label` }, o.label),
        recommended ? h('span', { class: 'chip chip-accent', id: `${id}-rec` }, 'Recommended') : null,
        o.description ? h('span', { class: 'choice-desc', id: `${id}-desc` }, o.description) : null,
      ),
      o.preview ? h('details', { class: 'choice-preview' }, h('summary', null, 'Preview'), h('pre', { class: 'text' }, o.preview)) : null,
    );
  });
  const text = q.allow_free_text
    ? h('textarea', {
        rows: 2,
        name: `${name}-text`,
        'aria-label': `Your answer: ${q.question}`,
        placeholder: options.length ? 'Or write your own answer' : 'Your answer',
      })
    : null;
  const el = h(
    'fieldset',
    { class: 'question', dataset: { question: q.id } },
    h(
      'legend',
      null,
      q.header ? h('span', { class: 'q-header' }, q.header) : null,
      h('span', { class: 'q-text' }, q.question),
      optional ? h('span', { class: 'muted q-optional' }, ' · optional') : null,
    ),
    multi ? h('p', { class: 'muted small' }, 'Choose any that apply') : null,
    options,
    text,
  );
  el.addEventListener('input', () => el.classList.remove('invalid'));
  return {
    id: q.id,
    optional,
    el,
    value() {
      const selected = inputs.filter((i) => i.checked).map((i) => i.value);
      const written = text?.value.trim() ?? '';
      if (!selected.length && !written) return null;
      const answer = { selected };
      if (written) answer.text = written;
      return answer;
    },
  };
}

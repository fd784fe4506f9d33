import { AppError } from '../lib/errors.js';
import type { Answer, Decision, DecisionBody, HandupRequest, Status } from './request-schema.js';

/**
 * Checks a reviewer's decision against the record they saw and works out the resulting status
 * (docs/api.md). Pure: the caller has already checked the request is pending.
 */
export function decide(
  record: HandupRequest,
  body: DecisionBody,
  meta: { decidedBy: string; decidedAt: number },
): { status: Exclude<Status, 'pending'>; decision: Decision } {
  if (body.content_hash !== record.content_hash) {
    throw new AppError('content_hash_mismatch', 'the request changed since it was shown: content_hash does not match', {
      expected: record.content_hash,
    });
  }
  const option = record.options.find((o) => o.id === body.option);
  if (!option) {
    throw new AppError('invalid_decision', `option: "${body.option}" is not one of this request's options (${record.options.map((o) => o.id).join(', ')})`);
  }
  const feedback = body.feedback?.trim() ? body.feedback : null;
  if (option.outcome === 'deny' && record.input?.feedback === 'required_on_deny' && !feedback) {
    throw new AppError('invalid_decision', 'feedback: this request requires feedback when denied');
  }
  if (body.scope) {
    // Scoped allow: the scope names what later requests must match (agent plus
    // session or repo, and the command, tool or title), so each needs those source fields;
    // edited input cannot be widened, and questions and notices are never approved by a rule.
    if (option.outcome !== 'approve') throw new AppError('invalid_decision', 'scope: only an approval can carry a scope');
    if (record.kind === 'question' || record.kind === 'info') {
      throw new AppError('invalid_decision', `scope: a ${record.kind === 'info' ? 'notice (kind info)' : 'question'} cannot be approved for later requests`);
    }
    if (!record.source.agent) throw new AppError('invalid_decision', 'scope: needs a request with source.agent');
    if (body.scope === 'session' && !record.source.session) {
      throw new AppError('invalid_decision', 'scope: "session" needs a request with source.session');
    }
    if (body.scope === 'project' && !record.source.repo) {
      throw new AppError('invalid_decision', 'scope: "project" needs a request with source.repo');
    }
    if (Object.keys(body.fields ?? {}).some((k) => k !== 'answers')) {
      throw new AppError('invalid_decision', 'scope: cannot be combined with edited input (fields)');
    }
  }

  let fields = (body.fields ?? null) as Decision['fields'];
  if (record.kind === 'question') {
    // Question requests carry only answers (handup's DecisionFields). A decline may keep what was
    // filled in so far, but only answers the questions could have had.
    const other = Object.keys(fields ?? {}).find((k) => k !== 'answers');
    if (other !== undefined) throw new AppError('invalid_decision', `fields.${other}: a question's decision carries only answers`);
    const complete = option.outcome === 'approve';
    if (complete || fields?.answers != null) fields = { answers: checkAnswers(record, fields?.answers ?? null, complete) };
  } else if (fields?.answers != null) {
    throw new AppError('invalid_decision', 'fields.answers: only question requests take answers');
  }

  const status: Exclude<Status, 'pending'> =
    record.kind === 'info' ? 'dismissed' : option.outcome === 'deny' ? 'denied' : record.kind === 'question' ? 'answered' : 'approved';
  const decision: Decision = {
    option: option.id,
    content_hash: record.content_hash,
    outcome: option.outcome,
    feedback,
    fields,
    decided_by: meta.decidedBy,
    decided_at: meta.decidedAt,
  };
  if (body.scope) decision.scope = body.scope;
  return { status, decision };
}

/**
 * Every question answered as it allows, except that a question the record lists in
 * `input.optional_questions` may be left out (an empty answer to one counts as none); the
 * answers in handup's Answer shape (`selected` always present). Not `complete` (a decline):
 * any question may be left out, and what is given is checked all the same.
 */
function checkAnswers(
  record: HandupRequest,
  answers: Record<string, { selected?: string[] | undefined; text?: string | null | undefined }> | null,
  complete = true,
): Record<string, Answer> {
  const questions = record.input?.questions ?? [];
  const optional = new Set(record.input?.optional_questions ?? []);
  const given = answers ?? {};
  const out: Record<string, Answer> = {};
  for (const id of Object.keys(given)) {
    if (!questions.some((q) => q.id === id)) throw new AppError('invalid_decision', `fields.answers.${id}: there is no question "${id}"`);
  }
  for (const q of questions) {
    // Own keys only: a question id such as "constructor" must not find Object.prototype's.
    const a = Object.hasOwn(given, q.id) ? given[q.id] : undefined;
    const where = `fields.answers.${q.id}`;
    const empty = !a || ((a.selected ?? []).length === 0 && !a.text?.trim());
    if (empty && (optional.has(q.id) || !complete)) continue;
    if (!a) throw new AppError('invalid_decision', `${where}: every question must be answered`);
    const selected = a.selected ?? [];
    const labels = new Set((q.options ?? []).map((o) => o.label));
    for (const label of selected) {
      if (!labels.has(label)) throw new AppError('invalid_decision', `${where}.selected: "${label}" is not an option of this question`);
    }
    if (new Set(selected).size !== selected.length) throw new AppError('invalid_decision', `${where}.selected: an option is selected twice`);
    if (!q.multi && selected.length > 1) throw new AppError('invalid_decision', `${where}.selected: this question takes one option`);
    const hasText = typeof a.text === 'string' && a.text.trim().length > 0;
    if (a.text != null && !q.allow_free_text) throw new AppError('invalid_decision', `${where}.text: this question does not take free text`);
    if (selected.length === 0 && !hasText) throw new AppError('invalid_decision', `${where}: the answer is empty`);
    out[q.id] = a.text === undefined ? { selected } : { selected, text: a.text };
  }
  return out;
}

/** The decision recorded when a request times out with on_timeout deny/approve (null for expire). */
export function timeoutDecision(record: HandupRequest, decidedAt: number): Decision | null {
  if (record.on_timeout === 'expire') return null;
  const option = record.options.find((o) => o.outcome === record.on_timeout);
  if (!option) return null;
  return {
    option: option.id,
    content_hash: record.content_hash,
    outcome: option.outcome,
    feedback: null,
    fields: null,
    decided_by: 'timeout',
    decided_at: decidedAt,
  };
}

/**
 * The record as whatever decides without a person (rules, auto mode) sees it: without the
 * options only a person may choose (Normalized.personOnly, a grant for the whole session).
 */
export function unattendedView(record: HandupRequest, personOnly: readonly string[] | undefined): HandupRequest {
  return personOnly?.length ? { ...record, options: record.options.filter((o) => !personOnly.includes(o.id)) } : record;
}

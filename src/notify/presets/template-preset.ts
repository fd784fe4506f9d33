import Mustache from 'mustache';
import type { Envelope } from '../notify-envelope.js';

/** JSON string escaping for `{{name}}`, so a JSON template stays JSON whatever a title holds. */
const jsonEscape = (v: unknown) => JSON.stringify(String(v)).slice(1, -1);

/**
 * `format: template`: a Mustache template (logic-less; no partials, no code) rendered against
 * the envelope plus `text` (the one-line notice). `{{name}}` is escaped for a JSON string when
 * the hook sends JSON (the default content type) and inserted as is otherwise; `{{{name}}}`
 * is always inserted as is.
 */
export function renderTemplate(template: string, env: Envelope, text: string, contentType: string): string {
  const escape = /json/i.test(contentType) ? jsonEscape : (v: unknown) => String(v);
  return Mustache.render(template, { ...env, text }, {}, { escape });
}

import type { Preview } from './request-schema.js';

/**
 * Everything a preview carries as text, for the views where a person decides without the
 * inbox (the decision-link page, `countersign show`): a command
 * with its directory (and argv when it differs from the shell line), an email's headers, body
 * and attachments' names, the paths of a file set; what is only in blobs is named, and shown in
 * the inbox.
 */
export function previewText(p: Preview): string | null {
  const parts: string[] = [];
  if (p.command) {
    const c = p.command;
    if (c.cwd) parts.push(`# in ${c.cwd}`);
    if (c.shell != null) parts.push(`$ ${c.shell}`);
    if (c.argv?.length && (c.shell == null || c.argv.join(' ') !== c.shell.trim())) parts.push(`argv: ${JSON.stringify(c.argv)}`);
    if (c.env_keys?.length) parts.push(`env: ${c.env_keys.join(', ')}`);
  }
  if (p.email) {
    const e = p.email;
    const header = (name: string, value: string | null | undefined) => value && parts.push(`${name}: ${value}`);
    header('From', e.from);
    header('To', e.to?.join(', '));
    header('Cc', e.cc?.join(', '));
    header('Bcc', e.bcc?.join(', '));
    header('Reply-To', e.reply_to);
    header('Date', e.date);
    header('Subject', e.subject);
    // Before the body, so a long body cut short cannot hide them.
    for (const a of e.attachments ?? []) parts.push(`Attachment: ${a.name}${a.size != null ? ` (${a.size} bytes)` : ''}`);
    if (e.body_html)
      parts.push(e.body != null ? '(also an HTML body, which may say something else: shown in the inbox)' : '(an HTML body: shown in the inbox)');
    if (e.body != null) parts.push('', e.body);
    if (e.in_reply_to?.body) parts.push('', `In reply to${e.in_reply_to.from ? ` ${e.in_reply_to.from}` : ''}:`, e.in_reply_to.body);
  }
  for (const f of p.files ?? []) parts.push(`${f.path} (${f.size} bytes)`);
  if (p.inline != null) parts.push(p.inline);
  return parts.length ? parts.join('\n') : null;
}

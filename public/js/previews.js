import { fetchBlob } from './api.js';
import { h, replace } from './dom.js';
import { bytes } from './format.js';
import { renderMarkdown } from './markdown.js';
import { rasterType } from './raster-type.js';
import { visibleHtml } from './visible-text.js';
import { commandLine } from './command-line.js';

/**
 * One renderer per preview type (handup's Preview). Text is always set as text; markdown is
 * sanitised; HTML goes only into an iframe with an empty `sandbox` (no scripts, no same-origin,
 * no forms, no popups) through `srcdoc`, so it can neither run nor reach the API.
 *
 * An agent's bytes never become a document of this origin. Images are drawn only when their
 * bytes are PNG, JPEG, GIF, WebP or AVIF (whatever type the agent declared), through an object
 * URL of that inert type: opened in a tab of its own, it is still only an image. SVG (which can
 * carry script) and everything else is offered as a download, saved through a short-lived
 * `application/octet-stream` object URL that no browser renders.
 */

/** Text previews larger than this are offered as downloads instead of being drawn. */
const MAX_TEXT_BYTES = 2 * 1024 * 1024;
// A download's object URL lives this long: enough for the browser to start saving it.
const DOWNLOAD_URL_LIFETIME_MS = 60_000;

// The one Trusted Types policy besides DOMPurify's: it only ever feeds a sandboxed srcdoc.
const srcdocPolicy = window.trustedTypes?.createPolicy('countersign-srcdoc', { createHTML: (s) => s });

// Object URLs of preview images; released whenever the detail pane is redrawn.
const objectUrls = new Set();
export function releasePreviewResources() {
  for (const url of objectUrls) URL.revokeObjectURL(url);
  objectUrls.clear();
}

const TYPE_LABEL = {
  text: 'Text',
  markdown: 'Markdown',
  code: 'Code',
  diff: 'Diff',
  files: 'Files',
  command: 'Command',
  json: 'JSON',
  html: 'HTML',
  image: 'Image',
  video: 'Video',
  audio: 'Audio',
  file: 'File',
  pdf: 'PDF',
  email: 'Email',
};

export function renderPreview(preview) {
  const title = preview.title || preview.name || null;
  const meta = [preview.lang, preview.mime, preview.size != null ? bytes(preview.size) : null].filter(Boolean).join(' · ');
  const body = h('div', { class: 'preview-body' });
  const section = h(
    'section',
    { class: ['preview', `preview-${preview.type}`] },
    h(
      'header',
      { class: 'preview-head' },
      h('span', { class: 'preview-type' }, TYPE_LABEL[preview.type] ?? preview.type),
      title ? h('span', { class: 'preview-title' }, title) : null,
      meta ? h('span', { class: 'preview-meta' }, meta) : null,
    ),
    body,
  );
  fill(body, preview).catch((err) => body.replaceChildren(h('p', { class: 'muted' }, `Could not load this preview: ${err.message}`)));
  return section;
}

async function fill(body, p) {
  switch (p.type) {
    case 'command':
      return body.append(commandView(p));
    case 'diff':
      return withText(body, p, (text) => diffView(text));
    case 'code':
      return withText(body, p, (text) => h('pre', { class: 'code' }, h('code', null, text)));
    case 'markdown':
      return withText(body, p, (text) => renderMarkdown(text));
    case 'json':
      return withText(body, p, (text) => h('pre', { class: 'code' }, h('code', null, prettyJson(text))));
    case 'html':
      return withText(body, p, (text) => sandboxedHtml(text, p.title || p.name || 'HTML preview'));
    case 'text':
      return withText(body, p, (text) => h('pre', { class: 'text' }, text));
    case 'image':
      return body.append(await imageView(p));
    case 'files':
      return body.append(filesView(p));
    case 'email':
      return body.append(emailView(p.email ?? {}));
    default:
      return body.append(fileView(p));
  }
}

/** Inline text, or the blob's text when the preview was stored by hash. */
async function withText(body, p, render) {
  if (p.inline != null) return replace(body, render(p.inline), beforeAfter(p));
  if (p.blob) {
    if (p.size != null && p.size > MAX_TEXT_BYTES) return body.append(fileView(p));
    body.append(h('p', { class: 'muted' }, 'Loading…'));
    const text = await (await fetchBlob(p.blob)).text();
    return replace(body, render(text), beforeAfter(p));
  }
  replace(body, beforeAfter(p) ?? h('p', { class: 'muted' }, 'This preview is empty.'));
}

function beforeAfter(p) {
  if (!p.before_blob && !p.after_blob) return null;
  return h(
    'p',
    { class: 'file-links' },
    p.before_blob ? download(p.before_blob, 'before', 'Before') : null,
    p.after_blob ? download(p.after_blob, 'after', 'After') : null,
  );
}

/** A button that saves blob `hash` as `name` (fetched with the session; never opened). */
function download(hash, name, label = name) {
  const problem = h('span', { class: 'delivery-error', role: 'alert', hidden: true });
  const button = h(
    'button',
    {
      type: 'button',
      class: 'file-link',
      dataset: { blob: hash },
      onclick: async () => {
        button.disabled = true;
        problem.hidden = true;
        try {
          await save(hash, name);
        } catch (err) {
          replace(problem, ` Could not download: ${err.message}`);
          problem.hidden = false;
        } finally {
          button.disabled = false;
        }
      },
    },
    label || hash,
  );
  return h('span', null, button, problem);
}

async function save(hash, name) {
  const blob = await fetchBlob(hash);
  const url = URL.createObjectURL(new Blob([blob], { type: 'application/octet-stream' }));
  const link = h('a', { href: url, download: name || hash.replace(':', '-'), hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), DOWNLOAD_URL_LIFETIME_MS);
}

function commandView(p) {
  const c = p.command ?? {};
  const line = commandLine(p);
  return h(
    'div',
    null,
    h('pre', { class: 'command' }, h('span', { class: 'prompt', 'aria-hidden': 'true' }, '$ '), line),
    c.cwd ? h('p', { class: 'kv' }, h('span', { class: 'k' }, 'in'), h('code', null, c.cwd)) : null,
    // The agent may run the argv rather than the shell line: when they differ, show both.
    c.argv?.length && c.shell != null && c.argv.join(' ') !== c.shell.trim()
      ? h('p', { class: 'kv' }, h('span', { class: 'k' }, 'argv'), h('code', { class: 'argv' }, JSON.stringify(c.argv)))
      : null,
    c.env_keys?.length
      ? h(
          'p',
          { class: 'kv' },
          h('span', { class: 'k' }, 'env'),
          c.env_keys.map((k) => h('code', { class: 'chip' }, k)),
        )
      : null,
  );
}

function diffView(text) {
  const lines = text.replace(/\n$/, '').split('\n');
  let added = 0;
  let removed = 0;
  const rows = lines.map((line) => {
    let cls = 'ctx';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'file';
    else if (line.startsWith('+')) {
      cls = 'add';
      added++;
    } else if (line.startsWith('-')) {
      cls = 'del';
      removed++;
    } else if (line.startsWith('@@')) cls = 'hunk';
    else if (/^(diff |index |new file|deleted file|similarity|rename )/.test(line)) cls = 'meta';
    return h('span', { class: `d-${cls}` }, line, '\n');
  });
  return h(
    'div',
    null,
    h('p', { class: 'diff-stat' }, h('span', { class: 'd-add-n' }, `+${added}`), ' ', h('span', { class: 'd-del-n' }, `−${removed}`)),
    h('pre', { class: 'code diff' }, h('code', null, rows)),
  );
}

function prettyJson(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function sandboxedHtml(html, title) {
  const frame = h('iframe', { class: 'html-frame', sandbox: '', referrerpolicy: 'no-referrer', title: `Sandboxed HTML: ${title}` });
  const shown = visibleHtml(html);
  frame.srcdoc = srcdocPolicy ? srcdocPolicy.createHTML(shown) : shown;
  return h('div', null, frame, h('p', { class: 'muted small' }, 'Shown in a sandbox: scripts, forms and network requests are blocked.'));
}

async function imageView(p) {
  if (!p.blob) return p.inline ? h('pre', { class: 'text' }, p.inline) : h('p', { class: 'muted' }, 'No image data.');
  const blob = await fetchBlob(p.blob);
  // The type comes from the bytes, never from the agent's word for it.
  const type = rasterType(new Uint8Array(await blob.slice(0, 32).arrayBuffer()));
  if (!type) {
    return h(
      'div',
      { class: 'not-drawn' },
      h(
        'p',
        { class: 'muted' },
        `Not drawn: only PNG, JPEG, GIF, WebP and AVIF images are shown here, and these bytes are none of them${p.mime ? ` (declared ${p.mime})` : ''}. SVG files can carry scripts, so they are only offered as a download.`,
      ),
      h('p', { class: 'file-links' }, download(p.blob, p.name ?? 'image', `Download ${p.name ?? 'image'}`)),
    );
  }
  const url = URL.createObjectURL(new Blob([blob], { type }));
  objectUrls.add(url);
  return h(
    'figure',
    { class: 'image' },
    h('img', { src: url, alt: p.title || p.name || 'Image preview' }),
    h('figcaption', null, download(p.blob, p.name ?? 'image', 'Download')),
  );
}

function fileView(p) {
  if (!p.blob) return p.inline ? h('pre', { class: 'text' }, p.inline) : h('p', { class: 'muted' }, 'No file attached.');
  return h(
    'p',
    { class: 'file-links' },
    download(p.blob, p.name ?? p.title ?? p.type, `Download ${p.name ?? p.title ?? p.type}`),
    p.size != null ? h('span', { class: 'muted' }, ` ${bytes(p.size)}`) : null,
  );
}

function filesView(p) {
  const files = p.files ?? [];
  if (files.length === 0) return h('p', { class: 'muted' }, 'No files.');
  return h(
    'ul',
    { class: 'file-list' },
    files.map((f) =>
      h(
        'li',
        { class: f.path === p.entry ? 'entry' : null },
        download(f.blob, f.path.split('/').pop(), f.path),
        h('span', { class: 'muted' }, ` ${f.mime} · ${bytes(f.size)}`),
        f.path === p.entry ? h('span', { class: 'chip' }, 'entry') : null,
      ),
    ),
  );
}

function emailView(e) {
  const row = (label, value) =>
    value == null || value === '' || (Array.isArray(value) && value.length === 0)
      ? null
      : h('div', { class: 'email-row' }, h('dt', null, label), h('dd', null, Array.isArray(value) ? value.join(', ') : value));
  const out = h(
    'div',
    { class: 'email' },
    h(
      'dl',
      { class: 'email-head' },
      row('From', e.from),
      row('To', e.to),
      row('Cc', e.cc),
      row('Bcc', e.bcc),
      row('Reply-To', e.reply_to),
      row('Subject', e.subject),
      row('Date', e.date),
    ),
  );
  if (e.body) out.append(renderMarkdown(e.body, 'markdown email-body'));
  else if (e.body_html) out.append(sandboxedHtml(e.body_html, e.subject || 'email'));
  if (e.body && e.body_html) {
    const toggle = h('details', { class: 'email-html' }, h('summary', null, 'HTML version'));
    toggle.addEventListener('toggle', () => {
      if (toggle.open && toggle.children.length === 1) toggle.append(sandboxedHtml(e.body_html, e.subject || 'email'));
    });
    out.append(toggle);
  }
  if (e.attachments?.length) {
    out.append(
      h(
        'ul',
        { class: 'file-list' },
        e.attachments.map((a) =>
          h(
            'li',
            null,
            a.blob ? download(a.blob, a.name, a.name) : a.name,
            h('span', { class: 'muted' }, ` ${[a.mime, a.size != null ? bytes(a.size) : null].filter(Boolean).join(' · ')}`),
          ),
        ),
      ),
    );
  }
  if (e.in_reply_to?.body) {
    out.append(
      h(
        'blockquote',
        { class: 'email-quote' },
        h('p', { class: 'muted small' }, [e.in_reply_to.from, e.in_reply_to.date].filter(Boolean).join(' · ') || 'In reply to'),
        h('pre', { class: 'text' }, e.in_reply_to.body),
      ),
    );
  }
  return out;
}

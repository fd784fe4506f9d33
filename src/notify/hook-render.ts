import type { HookConfig } from './hook-config.js';
import type { NoticeText } from './notice-text.js';
import type { Envelope } from './notify-envelope.js';
import { renderDiscord } from './presets/discord-preset.js';
import { renderGoogleChat } from './presets/google-chat-preset.js';
import { ntfyPublishUrl, renderNtfy } from './presets/ntfy-preset.js';
import { renderSlack } from './presets/slack-preset.js';
import { renderTeams } from './presets/teams-preset.js';
import { renderTemplate } from './presets/template-preset.js';

/** The content type a webhook hook's body is sent with. */
export function hookContentType(hook: HookConfig): string {
  return hook.format === 'template' ? (hook.content_type ?? 'application/json') : 'application/json';
}

/**
 * The body a hook is sent for one event: the JSON envelope (`json`, and on an exec hook's
 * stdin), a service's preset shape, or the hook's template. Built once, when the outbox row is
 * written, and sent byte for byte on every attempt.
 */
export function renderHookBody(hook: HookConfig, env: Envelope, notice: NoticeText): string {
  if (hook.exec) return JSON.stringify(env);
  switch (hook.format ?? 'json') {
    case 'json':
      return JSON.stringify(env);
    case 'slack':
      return JSON.stringify(renderSlack(notice));
    case 'discord':
      return JSON.stringify(renderDiscord(notice));
    case 'teams':
      return JSON.stringify(renderTeams(notice));
    case 'google-chat':
      return JSON.stringify(renderGoogleChat(notice, env.id));
    case 'ntfy':
      return JSON.stringify(renderNtfy(notice, hook.webhook!));
    case 'template':
      return renderTemplate(hook.template!, env, notice.line, hookContentType(hook));
  }
}

/** Where a webhook hook's body is POSTed: its URL, except ntfy's JSON publishing, which goes to the server root. */
export function hookPostUrl(hook: HookConfig): string {
  return hook.format === 'ntfy' ? ntfyPublishUrl(hook.webhook!) : hook.webhook!;
}

/**
 * How a hook's target is shown in delivery listings: a webhook's origin only (Slack, Discord
 * and ntfy URLs carry their secret in the path), an exec hook's program name.
 */
export function describeHookTarget(hook: HookConfig): string {
  if (hook.exec) return `exec:${hook.exec[0]}`;
  return `${new URL(hook.webhook!).origin}/…`;
}

import { describe, expect, it } from 'vitest';
import type { NoticeText } from '../../src/notify/notice-text.js';
import { renderSlack } from '../../src/notify/presets/slack-preset.js';

const notice = (o: Partial<NoticeText>): NoticeText => ({
  type: 'notifications.summary',
  headline: 'Approval needed',
  line: 'Approval needed: Deploy',
  title: 'Deploy',
  agent: 'codex',
  risk: 'high',
  kind: 'command',
  status: 'pending',
  summary: null,
  url: 'https://approvals.example.com/#/requests/r1',
  links: [],
  feedback: null,
  ...o,
});

describe('Slack preset: Block Kit limits', () => {
  it('cuts the header at 150 characters after escaping, never inside an entity', () => {
    // "12 more from <agent>": the agent's name makes the headline as long as it likes.
    const headline = `12 more from ${'x'.repeat(134)}&&`;
    const body = renderSlack(notice({ headline })) as { blocks: Array<{ type: string; text: { text: string } }> };
    const header = body.blocks[0]!;
    expect(header.type).toBe('header');
    // Escaped it is 157 characters; the first 149 end in a half-written `&amp;`, which is dropped.
    expect(header.text.text).toBe(`12 more from ${'x'.repeat(134)}…`);
    expect(header.text.text.length).toBeLessThanOrEqual(150);
  });

  it('keeps text within the limit whole', () => {
    const body = renderSlack(notice({ headline: `${'y'.repeat(145)}&` })) as { blocks: Array<{ text: { text: string } }> };
    expect(body.blocks[0]!.text.text).toBe(`${'y'.repeat(145)}&amp;`);
  });
});

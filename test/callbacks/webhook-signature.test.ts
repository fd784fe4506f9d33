import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { standardWebhooksKey, webhookHeaders } from '../../src/callbacks/webhook-signature.js';

/** Both signature schemes, checked with the official verifier and by hand. */
describe('webhookHeaders', () => {
  const body = '{"v":1,"type":"request.decided","id":"01J00000000000000000000000","data":{}}';
  const id = '01J00000000000000000000000';
  const ts = Math.floor(Date.now() / 1000);

  it('whsec_ secret: Standard Webhooks key is the decoded bytes; handup keys with the string as given', () => {
    const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
    const h = webhookHeaders({ secret, id, timestampSec: ts, body });
    expect(h['webhook-id']).toBe(id);
    expect(h['webhook-timestamp']).toBe(String(ts));
    expect(h['x-handup-timestamp']).toBe(String(ts));
    expect(new Webhook(secret).verify(body, h)).toEqual(JSON.parse(body));
    const expected = createHmac('sha256', Buffer.from('0123456789abcdef0123456789abcdef')).update(`${id}.${ts}.${body}`).digest('base64');
    expect(h['webhook-signature']).toBe(`v1,${expected}`);
    expect(h['x-handup-signature']).toBe('sha256=' + createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex'));
  });

  it('plain secret: its UTF-8 bytes for both', () => {
    const secret = 'plain-secret-ünïcode';
    const h = webhookHeaders({ secret, id, timestampSec: ts, body });
    expect(standardWebhooksKey(secret)).toEqual(Buffer.from(secret, 'utf8'));
    expect(new Webhook(Buffer.from(secret, 'utf8').toString('base64')).verify(body, h)).toEqual(JSON.parse(body));
    expect(h['x-handup-signature']).toBe('sha256=' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${ts}.${body}`).digest('hex'));
  });

  it('a changed body or id fails verification', () => {
    const secret = 'whsec_' + Buffer.from('another-key-of-enough-length!!').toString('base64');
    const h = webhookHeaders({ secret, id, timestampSec: ts, body });
    expect(() => new Webhook(secret).verify(body.replace('decided', 'expired'), h)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...h, 'webhook-id': '01J00000000000000000000001' })).toThrow();
  });

  it('no secret: ids and timestamps only', () => {
    const h = webhookHeaders({ secret: null, id, timestampSec: ts, body });
    expect(Object.keys(h).sort()).toEqual(['webhook-id', 'webhook-timestamp', 'x-handup-timestamp']);
  });
});

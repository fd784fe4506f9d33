import WebSocket from 'ws';

export interface WsClient {
  socket: WebSocket;
  /** Every message received so far, parsed. */
  messages: unknown[];
  /** The next message not yet taken (waits for it). */
  next(): Promise<any>;
  /** Skips messages until one matches (waits for it). */
  nextMatching(match: (m: any) => boolean): Promise<any>;
  send(value: unknown): void;
  /** Resolves with the close code. */
  closed: Promise<number>;
}

/** A real `ws` client with a message queue, for tests. Rejects when the upgrade is refused. */
export async function connectWs(url: string, token: string | null): Promise<WsClient> {
  const socket = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const messages: unknown[] = [];
  let taken = 0;
  let waiting: (() => void) | null = null;
  socket.on('message', (data) => {
    messages.push(JSON.parse(String(data)));
    waiting?.();
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => {
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
      socket.terminate();
    });
    socket.once('error', reject);
  });

  async function next(): Promise<any> {
    while (taken >= messages.length) {
      await new Promise<void>((resolve, reject) => {
        waiting = () => {
          waiting = null;
          resolve();
        };
        void closed.then(() => reject(new Error(`the socket closed while waiting (got ${JSON.stringify(messages)})`)));
      });
    }
    return messages[taken++];
  }

  return {
    socket,
    messages,
    next,
    async nextMatching(match) {
      for (;;) {
        const m = await next();
        if (match(m)) return m;
      }
    },
    send: (value) => socket.send(JSON.stringify(value)),
    closed,
  };
}

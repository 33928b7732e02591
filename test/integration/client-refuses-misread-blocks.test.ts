// During a rolling upgrade the SDK may lease from a ticketd that misreads a sequence. It refuses a
// block answer without `ids` for a sequence it knows is opaque, and any `ids` value it does not
// know, rather than hand out IDs that may repeat. A relay in front of a real ticketd rewrites the
// answers as such a server would send them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTicketClient } from 'ticketd-client';
import type { RunningTicketd } from '../../src/server.js';
import { putSequence, sharedBackends, startInProcess } from '../support/ticketd.js';

const SEQUENCE = 'misread_opaque';
const TOKEN = 'misread-client-token-0123456789';

describe('the client refuses block answers it would misread', () => {
  let server: RunningTicketd;
  let relay: Server;
  let relayUrl = '';
  /** How the relay rewrites a block answer's `ids`: as it is, removed, or another value. */
  let rewrite: { kind: 'keep' } | { kind: 'drop' } | { kind: 'set'; value: string } = { kind: 'keep' };

  beforeAll(async () => {
    server = await startInProcess(sharedBackends(), { clientTokens: `${SEQUENCE}:${TOKEN}` });
    expect(await putSequence(server.url, SEQUENCE, { blockSize: 10, ids: 'opaque' })).toBe(201);
    relay = createServer((req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const answer = await fetch(`${server.url}${req.url}`, {
          method: req.method,
          headers: { authorization: req.headers.authorization ?? '' },
          ...(chunks.length > 0 && { body: Buffer.concat(chunks) }),
        });
        let text = await answer.text();
        if (answer.status === 200 && req.url?.endsWith('/blocks') === true && rewrite.kind !== 'keep') {
          const body = JSON.parse(text) as Record<string, unknown>;
          if (rewrite.kind === 'drop') delete body.ids;
          else body.ids = rewrite.value;
          text = JSON.stringify(body);
        }
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      })();
    });
    await new Promise<void>((done) => relay.listen(0, '127.0.0.1', done));
    relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((done) => relay?.close(done));
    await server?.close();
  });

  it('a sequence it knows is opaque, leased without ids (a ticketd from before opaque IDs)', async () => {
    rewrite = { kind: 'keep' };
    const client = createTicketClient({ urls: [relayUrl], sequence: SEQUENCE, token: TOKEN });
    try {
      expect(await client.nextBatch(10)).toHaveLength(10);
      rewrite = { kind: 'drop' };
      await expect(client.nextBatch(500)).rejects.toThrow(
        `sequence ${SEQUENCE} is opaque, but this ticketd leased it as a sequence without ids: upgrade that ticketd`,
      );
    } finally {
      await client.close();
    }
  });

  it('an ids value this version does not know', async () => {
    rewrite = { kind: 'set', value: 'scrambled' };
    const client = createTicketClient({ urls: [relayUrl], sequence: SEQUENCE, token: TOKEN });
    try {
      await expect(client.next()).rejects.toThrow(
        'block answer has ids "scrambled", unknown to this version; upgrade ticketd-client',
      );
    } finally {
      await client.close();
    }
  });
});

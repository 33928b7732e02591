import mysql, { type RowDataPacket } from 'mysql2/promise';
import {
  putSequence,
  sharedBackends,
  spawnTicketd,
  sqlOn,
  TEST_ADMIN_TOKEN,
  type ChildTicketd,
} from '../support/ticketd.js';

const SEQUENCE = 'hidden_volume';
const ORDERED = 'shown_volume';
const ADMIN = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
/** Counters start here, so every ticket and ordered ID of the sequence is a number found nowhere else. */
const FIRST_TICKET = 48_271_001;
/** IDs issued in all: a count no other figure on these routes has. */
const ISSUED = 7919;

/** True when `text` holds `value` as a whole number (not inside a longer one). */
function holdsNumber(text: string, value: string): boolean {
  return new RegExp(`(?<![0-9])${value}(?![0-9])`).test(text);
}

describe('an opaque sequence shows its volume and order to nobody without the admin token', () => {
  let front: ChildTicketd;

  beforeAll(async () => {
    front = await spawnTicketd(sharedBackends());
  }, 30_000);

  afterAll(async () => {
    await front?.stop();
  });

  it('on every route open to all: sequence list and detail, readiness, health, status page, metrics, OpenAPI, error bodies', async () => {
    const url = front.url;
    expect(await putSequence(url, SEQUENCE, { blockSize: 997, ids: 'opaque' })).toBe(201);
    expect(await putSequence(url, ORDERED, { blockSize: 997 })).toBe(201);
    for (const backend of sharedBackends().split(','))
      await sqlOn(backend, `ALTER TABLE tickets_${SEQUENCE} AUTO_INCREMENT = ${FIRST_TICKET}`);
    const served: string[] = [];
    for (const count of [4000, 3000, 919]) {
      const res = await fetch(`${url}/v1/sequences/${SEQUENCE}/ids?count=${count}`, { method: 'POST' });
      served.push(...((await res.json()) as { ids: string[] }).ids);
    }
    expect(served).toHaveLength(ISSUED);
    await fetch(`${url}/v1/sequences/${ORDERED}/ids?count=5`, { method: 'POST' });

    // What the admin sees: the figures an outsider must not find.
    const detail = (await (await fetch(`${url}/v1/sequences/${SEQUENCE}`, { headers: ADMIN })).json()) as {
      cache: { issued: number; available: number };
      capacity: { highestId: string };
      backends: { lastTicket: string | null }[];
      redacted: boolean;
    };
    expect(detail.redacted).toBe(false);
    expect(detail.cache.issued).toBe(ISSUED);
    const tickets = detail.backends.flatMap((b) => (b.lastTicket === null ? [] : [b.lastTicket]));
    expect(tickets.length).toBeGreaterThan(0);
    const decoded = await Promise.all(
      [served[0], served[ISSUED - 1]].map(
        async (id) =>
          (await (await fetch(`${url}/v1/sequences/${SEQUENCE}/ids/${id}`, { headers: ADMIN })).json()) as {
            ordered: string;
            ticket: string;
          },
      ),
    );
    const adminMetrics = await (await fetch(`${url}/metrics`, { headers: ADMIN })).text();
    expect(adminMetrics).toContain(`ticketd_ids_issued_total{sequence="${SEQUENCE}"} ${ISSUED}`);
    const conn = await mysql.createConnection(sharedBackends().split(',')[0]!);
    const [rows] = await conn.query<RowDataPacket[]>('SELECT id_key FROM ticketd_sequence_keys WHERE name = ?', [
      SEQUENCE,
    ]);
    await conn.end();
    const key = Buffer.from(rows[0]?.id_key as Buffer);
    const secrets = new Map<string, string>([
      ['issued count', String(ISSUED)],
      // A short number also turns up inside clock times and byte counts: the cached count is looked for when it is not.
      ...(detail.cache.available >= 1000 ? [['cached count', String(detail.cache.available)] as [string, string]] : []),
      ['highest ordered ID', detail.capacity.highestId],
      ...tickets.map((t, i): [string, string] => [`last ticket ${i}`, t]),
      ...decoded.flatMap((d, i): [string, string][] => [
        [`ordered ID ${i}`, d.ordered],
        [`ticket ${i}`, d.ticket],
      ]),
    ]);
    const keyForms = [
      key.toString('hex'),
      key.toString('hex').toUpperCase(),
      key.toString('base64'),
      key.toString('base64url'),
    ];

    // Everything an outsider can read, with no token and with a wrong one.
    const outsider: Record<string, string>[] = [{}, { authorization: 'Bearer not-the-admin-token-0123' }];
    const paths = [
      '/v1/sequences',
      `/v1/sequences/${SEQUENCE}`,
      '/readyz',
      '/healthz',
      '/',
      '/metrics',
      '/openapi.json',
    ];
    const errors: [string, RequestInit][] = [
      [`/v1/sequences/${SEQUENCE}/ids?count=0`, { method: 'POST' }],
      [`/v1/sequences/${SEQUENCE}/ids/${served[0]}`, {}],
      [`/v1/sequences/${SEQUENCE}/id-key`, {}],
      [`/v1/sequences/${SEQUENCE}/blocks`, { method: 'POST' }],
      [`/v1/sequences/${SEQUENCE}`, { method: 'DELETE' }],
      [`/v1/sequences/${SEQUENCE}/release`, { method: 'POST', body: '{"backend":"x"}' }],
      ['/nowhere', {}],
    ];
    const texts: [string, string][] = [];
    for (const headers of outsider) {
      for (const path of paths) texts.push([path, await (await fetch(`${url}${path}`, { headers })).text()]);
      for (const [path, init] of errors) {
        const res = await fetch(`${url}${path}`, { ...init, headers });
        expect(res.status).toBeGreaterThanOrEqual(400);
        texts.push([`${init.method ?? 'GET'} ${path}`, await res.text()]);
      }
    }
    const found = texts.flatMap(([where, text]) => [
      ...[...secrets]
        .filter(([, value]) => holdsNumber(text, value))
        .map(([what, value]) => `${where} shows the ${what} (${value})`),
      ...keyForms.filter((form) => text.includes(form)).map(() => `${where} shows the key`),
    ]);
    expect(found).toEqual([]);

    // What they do see: the sequence, its settings and state, and the ordered sequence as before.
    const shown = (await (await fetch(`${url}/v1/sequences/${SEQUENCE}`)).json()) as {
      ids: string;
      blockSize: string;
      redacted: boolean;
      cache: unknown;
      backends: { state: string; lastTicket: unknown }[];
    };
    expect(shown).toMatchObject({ ids: 'opaque', blockSize: '997', redacted: true, cache: null });
    expect(shown.backends.every((b) => b.lastTicket === null && b.state === 'up')).toBe(true);
    const ordered = (await (await fetch(`${url}/v1/sequences/${ORDERED}`)).json()) as {
      cache: { issued: number };
      redacted: boolean;
    };
    expect(ordered).toMatchObject({ redacted: false, cache: { issued: 5 } });
    const metrics = texts.find(([where]) => where === '/metrics')![1];
    expect(metrics).toContain(`ticketd_ids_issued_total{sequence="${ORDERED}"} 5`);
    expect(metrics).not.toContain(`sequence="${SEQUENCE}"`);
    expect(texts.find(([where]) => where === '/')![1]).toMatch(
      new RegExp(`<td>${SEQUENCE}</td><td>opaque</td><td>997</td><td>not shown</td>`),
    );
  });
});

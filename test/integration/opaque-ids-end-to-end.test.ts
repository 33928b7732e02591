import mysql, { type RowDataPacket } from 'mysql2/promise';
import { createTicketClient, IdPermutation } from 'ticketd-client';
import {
  putSequence,
  runCliAsync,
  sharedBackends,
  spawnTicketd,
  sqlOn,
  startPrivatePair,
  TEST_ADMIN_TOKEN,
  type ChildTicketd,
} from '../support/ticketd.js';

const SEQUENCE = 'opaque_ids';
const LEGACY = 'opaque_legacy';
/** A sequence as ticketd 0.4 made it: scheme feistel-aes256-v1. */
const MADE_BY_0_4 = 'opaque_made_by_0_4';
const TOKEN = 'opaque-client-token-0123456789';
const ANY_TOKEN = 'any-sequence-token-0123456789';
const UINT64_MAX = (1n << 64n) - 1n;
/** maxId of a sequence created without one (2^63 − 1: a signed BIGINT). */
const DEFAULT_MAX_ID = (1n << 63n) - 1n;
const INT_MAX = 2147483647n;
const LEGACY_START_AFTER = 1_500_000n;
/** IDs taken over HTTP from the two front ends together. */
const TOTAL_IDS = 10_000_000;
const BATCH = 10_000;

describe('opaque IDs end to end, on two front ends over the shared backends', () => {
  let fronts: ChildTicketd[] = [];
  /** Every response body the test saw, except the key route's: the key must be in none of them. */
  const bodies: string[] = [];
  let keyHex = '';

  const call = async (
    url: string,
    init: RequestInit = {},
    token: string = TOKEN,
  ): Promise<{ status: number; text: string }> => {
    const res = await fetch(url, {
      ...init,
      headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string> | undefined) },
    });
    const text = await res.text();
    if (!url.endsWith('/id-key')) bodies.push(text);
    return { status: res.status, text };
  };

  beforeAll(async () => {
    const env = {
      TICKETD_CLIENT_TOKENS: `${SEQUENCE}:${TOKEN},${LEGACY}:${TOKEN},${MADE_BY_0_4}:${TOKEN},*:${ANY_TOKEN}`,
    };
    fronts = await Promise.all([spawnTicketd(sharedBackends(), env), spawnTicketd(sharedBackends(), env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(fronts.map((f) => f.stop()));
  });

  it('creates an opaque sequence once, with one key on every backend, and refuses to change its mode', async () => {
    const [a, b] = fronts as [ChildTicketd, ChildTicketd];
    expect(await putSequence(a.url, SEQUENCE, { blockSize: 100_000, ids: 'opaque' })).toBe(201);
    expect(await putSequence(b.url, SEQUENCE, { blockSize: 100_000, ids: 'opaque' })).toBe(200);
    expect(await putSequence(b.url, SEQUENCE, { blockSize: 100_000 })).toBe(409);
    expect(await putSequence(a.url, SEQUENCE, { blockSize: 100_000, ids: 'ordered' })).toBe(409);
    expect(await putSequence(a.url, 'opaque_small', { blockSize: 10, maxId: 999_999, ids: 'opaque' })).toBe(400);
    const keys = await Promise.all(
      sharedBackends()
        .split(',')
        .map(async (url) => {
          const conn = await mysql.createConnection(url);
          try {
            const [rows] = await conn.query<RowDataPacket[]>(
              'SELECT scheme, id_key FROM ticketd_sequence_keys WHERE name = ?',
              [SEQUENCE],
            );
            expect(rows[0]?.scheme).toBe('feistel-aes256-v2');
            return Buffer.from(rows[0]?.id_key as Buffer).toString('hex');
          } finally {
            await conn.end();
          }
        }),
    );
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(keys[1]).toBe(keys[0]);
    keyHex = keys[0]!;
    const shown = JSON.parse((await call(`${a.url}/v1/sequences/${SEQUENCE}`)).text) as Record<string, unknown>;
    expect(shown).toMatchObject({ name: SEQUENCE, ids: 'opaque', blockSize: '100000' });
  });

  it(`hands out ${TOTAL_IDS.toLocaleString('en')} opaque IDs from both front ends, none twice, all in the domain, in no order`, async () => {
    const all = new BigUint64Array(TOTAL_IDS + 4 * BATCH);
    let taken = 0;
    let increases = 0;
    let pairs = 0;
    const worker = async (front: ChildTicketd): Promise<void> => {
      while (taken < TOTAL_IDS) {
        const at = taken;
        taken += BATCH;
        const { status, text } = await call(`${front.url}/v1/sequences/${SEQUENCE}/ids?count=${BATCH}`, {
          method: 'POST',
        });
        expect(status).toBe(200);
        const ids = (JSON.parse(text) as { ids: string[] }).ids;
        expect(ids.length).toBe(BATCH);
        for (let k = 0; k < ids.length; k++) {
          const id = BigInt(ids[k]!);
          if (k > 0) {
            pairs++;
            if (id > all[at + k - 1]!) increases++;
          }
          all[at + k] = id;
        }
      }
    };
    // Two clients per front end: both processes refill from both backends as they go.
    const [a, b] = fronts as [ChildTicketd, ChildTicketd];
    await Promise.all([worker(a), worker(b), worker(a), worker(b)]);
    // Single IDs and text/plain go through the same permutation.
    const singles: bigint[] = [];
    for (let i = 0; i < 100; i++) {
      const front = fronts[i % 2]!;
      const { text } = await call(`${front.url}/v1/sequences/${SEQUENCE}/next`);
      singles.push(BigInt((JSON.parse(text) as { id: string }).id));
    }
    const plain = await call(`${a.url}/v1/sequences/${SEQUENCE}/ids?count=500`, {
      method: 'POST',
      headers: { accept: 'text/plain' },
    });
    singles.push(...plain.text.trim().split('\n').map(BigInt));
    const used = all.subarray(0, taken);
    const everything = new BigUint64Array(used.length + singles.length);
    everything.set(used, 0);
    everything.set(BigUint64Array.from(singles), used.length);
    everything.sort();
    expect(everything[0]! > 0n).toBe(true);
    for (let k = 1; k < everything.length; k++) {
      if (everything[k] === everything[k - 1]) throw new Error(`ID ${everything[k]} was issued twice`);
    }
    expect(taken).toBeGreaterThanOrEqual(TOTAL_IDS);
    // Ordered IDs would increase every time; P's increase about half the time.
    expect(Math.abs(increases / pairs - 0.5)).toBeLessThan(0.01);
    // And they spread over the whole domain, up to 2^63 − 1: each sixteenth holds about 1/16 of them.
    const sixteenth = DEFAULT_MAX_ID / 16n;
    const buckets = new Array<number>(16).fill(0);
    for (const y of everything) buckets[Math.min(15, Number(y / sixteenth))]!++;
    for (const count of buckets) expect(Math.abs(count / everything.length - 1 / 16)).toBeLessThan(0.005);
    // The checks above hold the event loop for seconds, past the servers' keep-alive timeout: let
    // the client see those sockets close before the next test reuses one.
    await new Promise((done) => setTimeout(done, 100));
  }, 240_000);

  it('maps an ordered ID alike in both processes, and decodes any served ID to its ordered ID, ticket and backend', async () => {
    const [a, b] = fronts as [ChildTicketd, ChildTicketd];
    const served = (
      JSON.parse((await call(`${a.url}/v1/sequences/${SEQUENCE}/ids?count=50`, { method: 'POST' })).text) as {
        ids: string[];
      }
    ).ids;
    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const orderedIds: bigint[] = [];
    for (const id of served) {
      const [fromA, fromB] = await Promise.all(
        [a, b].map(
          async (f) =>
            JSON.parse(
              (await call(`${f.url}/v1/sequences/${SEQUENCE}/ids/${id}`, { headers: admin }, TEST_ADMIN_TOKEN)).text,
            ) as Record<string, string>,
        ),
      );
      expect(fromB).toEqual(fromA);
      expect(fromA).toMatchObject({ sequence: SEQUENCE, id, ids: 'opaque' });
      const ordered = BigInt(fromA!.ordered!);
      expect(BigInt(fromA!.ticket!)).toBe(ordered / 100_000n);
      // Odd tickets are backend A's, even ones B's: the decode names the owner of the ticket's class.
      const backends = sharedBackends().split(',');
      expect(fromA!.backend).toBe(backends[BigInt(fromA!.ticket!) % 2n === 1n ? 0 : 1]!.replace(/\/\/[^@]*@/, '//'));
      orderedIds.push(ordered);
    }
    // Consecutive requests of one process come from consecutive ordered IDs.
    expect(orderedIds.every((x, k) => k === 0 || x === orderedIds[k - 1]! + 1n)).toBe(true);
    // The operator's CLI reads the key from the backends and agrees.
    const cli = await runCliAsync(['ids', 'decode', SEQUENCE, served[0]!], { TICKETD_BACKENDS: sharedBackends() });
    expect(cli.stderr).toBe('');
    expect(cli.stdout).toContain(`ordered=${orderedIds[0]}`);
    // The client token is not the admin token.
    const denied = await call(`${a.url}/v1/sequences/${SEQUENCE}/ids/${served[0]}`);
    expect(denied.status).toBe(403);
    expect((await call(`${a.url}/v1/sequences/${SEQUENCE}/ids/0`, { headers: admin }, TEST_ADMIN_TOKEN)).status).toBe(
      404,
    );
  });

  it('gives the SDK the key only with the sequence’s own token, and the SDK then applies the same P locally', async () => {
    const [a, b] = fronts as [ChildTicketd, ChildTicketd];
    const wrongKey = await call(`${a.url}/v1/sequences/${SEQUENCE}/id-key`, {}, ANY_TOKEN);
    expect(wrongKey.status).toBe(403);
    expect((JSON.parse(wrongKey.text) as { detail: string }).detail).toBe(
      `opaque sequence ${SEQUENCE} gives the key only to holders of its own client token; this one is not among them`,
    );
    expect((await call(`${a.url}/v1/sequences/${SEQUENCE}/blocks`, { method: 'POST' }, ANY_TOKEN)).status).toBe(403);
    const keyRoute = await call(`${a.url}/v1/sequences/${SEQUENCE}/id-key`);
    expect(keyRoute.status).toBe(200);
    const answer = JSON.parse(keyRoute.text) as { scheme: string; key?: string; schemeKey: string };
    // A 0.4 client reads `key` and would apply v1: a v2 key is never put there.
    expect(answer).toMatchObject({ scheme: 'feistel-aes256-v2' });
    expect(answer.key).toBeUndefined();
    expect(Buffer.from(answer.schemeKey, 'base64url').toString('hex')).toBe(keyHex);

    const stranger = createTicketClient({ urls: [a.url], sequence: SEQUENCE, token: ANY_TOKEN });
    await expect(stranger.next()).rejects.toThrow(/own client token/);
    await stranger.close();

    const client = createTicketClient({ urls: [a.url, b.url], sequence: SEQUENCE, token: TOKEN });
    const ids = await client.nextBatch(20_000);
    const codec = await client.codec();
    expect(codec.ids).toBe('opaque');
    const permutation = new IdPermutation(
      Buffer.from(keyHex, 'hex'),
      { startAfter: 0n, maxId: DEFAULT_MAX_ID },
      'feistel-aes256-v2',
    );
    const decoded = ids.map((id) => codec.decode(id));
    expect(decoded.every((x, k) => permutation.encode(x) === ids[k])).toBe(true);
    // The client's IDs are blocks leased once: none of them is one the servers handed out.
    const server = (
      JSON.parse((await call(`${b.url}/v1/sequences/${SEQUENCE}/ids?count=10000`, { method: 'POST' })).text) as {
        ids: string[];
      }
    ).ids.map(BigInt);
    expect(new Set([...ids, ...server]).size).toBe(ids.length + server.length);
    await client.close();

    // An app that stores ordered keys and shows opaque ones.
    const storing = createTicketClient({ urls: [b.url], sequence: SEQUENCE, token: TOKEN, ordered: true });
    const first = await storing.next();
    const second = storing.nextSync();
    expect(second).toBe(first + 1n);
    const shown = (await storing.codec()).encode(first);
    expect(shown).toBe(permutation.encode(first));
    await storing.close();
  });

  it('keeps a migrated 32-bit opaque sequence inside (startAfter, 2^31−1]', async () => {
    const [a] = fronts as [ChildTicketd];
    expect(
      await putSequence(a.url, LEGACY, {
        blockSize: 100,
        startAfter: String(LEGACY_START_AFTER),
        maxId: String(INT_MAX),
        ids: 'opaque',
      }),
    ).toBe(201);
    let low = INT_MAX;
    let high = 0n;
    const seen = new Set<bigint>();
    for (let i = 0; i < 20; i++) {
      const { text } = await call(`${a.url}/v1/sequences/${LEGACY}/ids?count=5000`, { method: 'POST' });
      for (const s of (JSON.parse(text) as { ids: string[] }).ids) {
        const id = BigInt(s);
        seen.add(id);
        if (id < low) low = id;
        if (id > high) high = id;
      }
    }
    expect(seen.size).toBe(100_000);
    expect(low > LEGACY_START_AFTER).toBe(true);
    expect(high <= INT_MAX).toBe(true);
    // Spread over the domain, not packed just above the legacy IDs.
    expect(Number(high - low)).toBeGreaterThan(Number(INT_MAX - LEGACY_START_AFTER) * 0.99);
  });

  it('serves a sequence made by ticketd 0.4 (scheme v1) exactly as 0.4 did, and so does the SDK', async () => {
    const [a, b] = fronts as [ChildTicketd, ChildTicketd];
    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const env = { TICKETD_BACKENDS: sharedBackends() };
    expect(
      (
        await runCliAsync(
          [
            'sequences',
            'create',
            MADE_BY_0_4,
            '--block-size',
            '1000',
            '--ids',
            'opaque',
            '--max-id',
            String(UINT64_MAX),
          ],
          env,
        )
      ).status,
    ).toBe(0);
    // What 0.4.0 wrote (its default maxId was 2^64 − 1): the same rows, with its scheme's name beside the key (no front end has loaded it yet).
    const urls = sharedBackends().split(',');
    for (const url of urls)
      await sqlOn(url, `UPDATE ticketd_sequence_keys SET scheme = 'feistel-aes256-v1' WHERE name = '${MADE_BY_0_4}'`);
    const conn = await mysql.createConnection(urls[0]!);
    const [rows] = await conn.query<RowDataPacket[]>('SELECT id_key FROM ticketd_sequence_keys WHERE name = ?', [
      MADE_BY_0_4,
    ]);
    await conn.end();
    const v1 = new IdPermutation(
      new Uint8Array(rows[0]?.id_key as Buffer),
      { startAfter: 0n, maxId: UINT64_MAX },
      'feistel-aes256-v1',
    );
    for (const front of [a, b]) {
      const { text } = await call(`${front.url}/v1/sequences/${MADE_BY_0_4}/ids?count=1000`, { method: 'POST' });
      const ids = (JSON.parse(text) as { ids: string[] }).ids.map(BigInt);
      const decoded = JSON.parse(
        (await call(`${front.url}/v1/sequences/${MADE_BY_0_4}/ids/${ids[999]}`, { headers: admin }, TEST_ADMIN_TOKEN))
          .text,
      ) as { ordered: string };
      const first = BigInt(decoded.ordered) - 999n;
      expect(ids.every((id, k) => v1.encode(first + BigInt(k)) === id)).toBe(true);
    }
    // 0.4 clients read the key from `key`: a v1 sequence still answers there.
    const keyAnswer = JSON.parse((await call(`${a.url}/v1/sequences/${MADE_BY_0_4}/id-key`)).text) as {
      scheme: string;
      key: string;
    };
    expect(keyAnswer.scheme).toBe('feistel-aes256-v1');
    expect(Buffer.from(keyAnswer.key, 'base64url').equals(Buffer.from(rows[0]?.id_key as Buffer))).toBe(true);
    const client = createTicketClient({ urls: [a.url, b.url], sequence: MADE_BY_0_4, token: TOKEN });
    const leased = await client.nextBatch(3000);
    const codec = await client.codec();
    expect(leased.every((id) => v1.encode(codec.decode(id)) === id)).toBe(true);
    await client.close();
  });

  it('never shows a key in any response or log line', async () => {
    const [a] = fronts as [ChildTicketd];
    for (const path of ['/v1/sequences', `/v1/sequences/${SEQUENCE}`, '/metrics', '/', '/readyz', '/openapi.json'])
      bodies.push((await call(`${a.url}${path}`)).text);
    // The status page names each served sequence's mode.
    expect((await call(`${a.url}/`)).text).toMatch(new RegExp(`<td>${SEQUENCE}</td><td>opaque</td>`));
    const list = await runCliAsync(['sequences', 'list'], { TICKETD_BACKENDS: sharedBackends() });
    expect(list.stdout).toMatch(new RegExp(`^${SEQUENCE}\\t.*\\tids=opaque\\t`, 'm'));
    const key = Buffer.from(keyHex, 'hex');
    const forms = [keyHex, keyHex.toUpperCase(), key.toString('base64'), key.toString('base64url')];
    const texts = [...bodies, list.stdout, list.stderr, ...fronts.flatMap((f) => f.logs)];
    expect(texts.length).toBeGreaterThan(1000);
    for (const text of texts) for (const form of forms) expect(text.includes(form)).toBe(false);
  });
});

describe('an opaque sequence whose key differs between backends', () => {
  it('is reported by check, without the key, and served from neither backend', async () => {
    // A pair of its own: a broken sequence on the shared pair would fail every other suite's check.
    const pair = await startPrivatePair();
    try {
      const env = { TICKETD_BACKENDS: pair.backendsUrl };
      expect(
        (await runCliAsync(['sequences', 'create', 'split', '--block-size', '10', '--ids', 'opaque'], env)).stdout,
      ).toBe('sequence split created\n');
      expect((await runCliAsync(['check'], env)).status).toBe(0);
      await sqlOn(pair.b.url, "UPDATE ticketd_sequence_keys SET id_key = UNHEX(REPEAT('ab', 32)) WHERE name = 'split'");
      const check = await runCliAsync(['check'], env);
      expect(check.status).toBe(1);
      expect(check.stdout).toMatch(
        /^problem: sequence split has another key on mysql:\/\/\S+ than on mysql:\/\/\S+; their opaque IDs could collide/m,
      );
      expect(check.stdout + check.stderr).not.toMatch(/abab/i);
      const decode = await runCliAsync(['ids', 'decode', 'split', '12345'], env);
      expect(decode.status).toBe(1);
      expect(decode.stderr).toMatch(
        /^ticketd: sequence split has .* on mysql:\/\/\S+ but another key on mysql:\/\/\S+ \(TICKETD_SEQUENCE_CONFLICT\)$/,
      );
    } finally {
      await pair.dispose();
    }
  }, 60_000);
});

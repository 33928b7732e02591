/**
 * The contract, driven by the document itself: every operation /openapi.json lists gets valid and
 * invalid requests, with both backends up, with B stopped and with both stopped, and every answer's
 * status, Content-Type and body are judged against the document by Ajv (JSON Schema 2020-12, with
 * formats): not by a validator of our own. An operation added to the document without an example
 * here fails the test until it gets one.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { RunningTicketd } from '../../src/server.js';
import { startInProcess, startPrivatePair, TEST_ADMIN_TOKEN } from '../support/ticketd.js';

const CLIENT_TOKEN = 'sealed-client-token-0123456789';
const ORDERED = 'contract';
const SEALED = 'sealed';
const POOL = 'cpool';
const STRICT = 'cstrict';
/** Retired by its DELETE example; then every other route meets a retired sequence (410). */
const DOOMED = 'doomed';

/** What a request example asks for; `auth` names the bearer it carries. */
interface Example {
  readonly name: string;
  readonly params?: Readonly<Record<string, string>>;
  readonly query?: string;
  readonly auth?: 'admin' | 'client' | 'wrong';
  readonly accept?: string;
  readonly body?: unknown;
  /** A raw body (not JSON-encoded), sent as application/json. */
  readonly raw?: string;
}

/** A lease taken while the backends were up, for the renew and release examples. */
interface Context {
  lease: { workerId: number; epoch: string } | undefined;
  issuedId: string;
  /** A block of the opaque sequence, leased with its token, to give back. */
  block: { lease: string; first: string; last: string } | undefined;
}

type Examples = (ctx: Context) => { valid: Example[]; invalid: Example[] };

const big = 'x'.repeat(17 * 1024);

/** Every operation of the document, by `METHOD path`, with its examples. */
const EXAMPLES: Readonly<Record<string, Examples>> = {
  'POST /v1/sequences/{name}/ids': () => ({
    valid: [
      { name: 'three', params: { name: ORDERED }, query: 'count=3' },
      { name: 'text', params: { name: ORDERED }, query: 'count=2', accept: 'text/plain' },
      { name: 'opaque with its token', params: { name: SEALED }, query: 'count=2', auth: 'client' },
      { name: 'strict', params: { name: STRICT }, query: 'count=2' },
    ],
    invalid: [
      { name: 'count 0', params: { name: ORDERED }, query: 'count=0' },
      { name: 'bad name', params: { name: 'Bad' }, query: 'count=1' },
      { name: 'unknown', params: { name: 'nope' }, query: 'count=1' },
      { name: 'no token', params: { name: SEALED } },
      { name: 'wrong token', params: { name: SEALED }, auth: 'wrong' },
    ],
  }),
  'GET /v1/sequences/{name}/next': () => ({
    valid: [{ name: 'one', params: { name: ORDERED } }],
    invalid: [
      { name: 'retired', params: { name: DOOMED } },
      { name: 'unknown', params: { name: 'nope' } },
      { name: 'bad escape', params: { name: '%ZZ' } },
    ],
  }),
  'POST /v1/sequences/{name}/blocks': () => ({
    valid: [
      { name: 'ordered', params: { name: ORDERED } },
      { name: 'opaque with its token', params: { name: SEALED }, auth: 'client' },
    ],
    invalid: [
      { name: 'unknown', params: { name: 'nope' } },
      { name: 'opaque, wrong token', params: { name: SEALED }, auth: 'wrong' },
      { name: 'strict', params: { name: STRICT } },
    ],
  }),
  'POST /v1/sequences/{name}/blocks/return': (ctx) => ({
    // Given back once with both backends up; every later send (and the other phases) meets 409 or 503.
    valid:
      ctx.block === undefined
        ? []
        : [
            {
              name: 'a tail',
              params: { name: SEALED },
              auth: 'client',
              body: { lease: ctx.block.lease, from: String(BigInt(ctx.block.first) + 10n) },
            },
          ],
    invalid: [
      { name: 'forged lease', params: { name: SEALED }, auth: 'client', body: { lease: 'v1.1.2.0.x', from: '1' } },
      {
        name: 'from outside',
        params: { name: SEALED },
        auth: 'client',
        body: {
          lease: ctx.block?.lease ?? 'v1',
          from: ctx.block === undefined ? '0' : String(BigInt(ctx.block.last) + 1n),
        },
      },
      { name: 'no body', params: { name: SEALED }, auth: 'client' },
      { name: 'no token', params: { name: SEALED }, body: { lease: 'v1', from: '1' } },
      { name: 'ordered, no reuse', params: { name: ORDERED }, body: { lease: 'v1', from: '1' } },
    ],
  }),
  'POST /v1/sequences/{name}/strict-range': () => ({
    // The one process here leads (it elects itself on the first call), while a majority answers.
    valid: [{ name: 'strict', params: { name: STRICT }, query: 'count=3' }],
    invalid: [
      { name: 'ordered', params: { name: ORDERED }, query: 'count=1' },
      { name: 'count 0', params: { name: STRICT }, query: 'count=0' },
      { name: 'unknown', params: { name: 'nope' } },
    ],
  }),
  'GET /v1/sequences/{name}/id-key': () => ({
    valid: [{ name: 'opaque with its token', params: { name: SEALED }, auth: 'client' }],
    invalid: [
      { name: 'ordered', params: { name: ORDERED }, auth: 'client' },
      { name: 'no token', params: { name: SEALED } },
      { name: 'wrong token', params: { name: SEALED }, auth: 'wrong' },
    ],
  }),
  'GET /v1/sequences/{name}/ids/{id}': (ctx) => ({
    valid: [
      { name: 'issued', params: { name: ORDERED, id: ctx.issuedId }, auth: 'admin' },
      { name: 'never issued, a ticket of B', params: { name: ORDERED, id: '1000000200' }, auth: 'admin' },
    ],
    invalid: [
      { name: 'not a number', params: { name: ORDERED, id: 'abc' }, auth: 'admin' },
      { name: '23 digits', params: { name: ORDERED, id: '12345678901234567890123' }, auth: 'admin' },
      { name: 'no token', params: { name: ORDERED, id: '1' } },
      { name: 'wrong token', params: { name: ORDERED, id: '1' }, auth: 'wrong' },
    ],
  }),
  'POST /v1/sequences/{name}/release': () => ({
    valid: [
      { name: 'A', params: { name: ORDERED }, auth: 'admin', body: { backend: 'A' } },
      { name: 'B', params: { name: ORDERED }, auth: 'admin', body: { backend: 'B' } },
    ],
    invalid: [
      { name: 'no backend', params: { name: ORDERED }, auth: 'admin', body: {} },
      { name: 'unknown backend', params: { name: ORDERED }, auth: 'admin', body: { backend: 'Z' } },
      { name: 'bad JSON', params: { name: ORDERED }, auth: 'admin', raw: '{"backend":' },
      { name: 'too large', params: { name: ORDERED }, auth: 'admin', body: { backend: big } },
      { name: 'no token', params: { name: ORDERED }, body: { backend: 'A' } },
    ],
  }),
  'GET /v1/sequences/{name}': () => ({
    valid: [
      { name: 'ordered', params: { name: ORDERED } },
      { name: 'opaque, redacted', params: { name: SEALED } },
      { name: 'opaque as admin', params: { name: SEALED }, auth: 'admin' },
    ],
    invalid: [
      { name: 'unknown', params: { name: 'nope' } },
      { name: 'bad name', params: { name: 'Bad' } },
      { name: 'bad escape', params: { name: '%ZZ' } },
    ],
  }),
  'PUT /v1/sequences/{name}': () => ({
    valid: [{ name: 'identical', params: { name: ORDERED }, auth: 'admin', body: { blockSize: 100 } }],
    invalid: [
      { name: 'conflict', params: { name: ORDERED }, auth: 'admin', body: { blockSize: 7 } },
      { name: 'bad settings', params: { name: 'other' }, auth: 'admin', body: { blockSize: 0 } },
      { name: 'too large', params: { name: 'other' }, auth: 'admin', body: { blockSize: 1, pad: big } },
      { name: 'no token', params: { name: ORDERED }, body: { blockSize: 100 } },
      { name: 'wrong token', params: { name: ORDERED }, auth: 'wrong', body: { blockSize: 100 } },
    ],
  }),
  'DELETE /v1/sequences/{name}': () => ({
    valid: [{ name: 'retire', params: { name: DOOMED }, auth: 'admin' }],
    invalid: [
      { name: 'unknown', params: { name: 'nope' }, auth: 'admin' },
      { name: 'bad name', params: { name: 'Bad' }, auth: 'admin' },
      { name: 'no token', params: { name: ORDERED } },
      { name: 'wrong token', params: { name: ORDERED }, auth: 'wrong' },
    ],
  }),
  'PATCH /v1/sequences/{name}': () => ({
    valid: [
      {
        name: 'widened to 2^64 − 1',
        params: { name: ORDERED },
        auth: 'admin',
        body: { maxId: '18446744073709551615' },
      },
    ],
    invalid: [
      { name: 'lower', params: { name: ORDERED }, auth: 'admin', body: { maxId: '1000' } },
      { name: 'another setting', params: { name: ORDERED }, auth: 'admin', body: { maxId: '1000', blockSize: 5 } },
      { name: 'opaque', params: { name: SEALED }, auth: 'admin', body: { maxId: '1000' } },
      { name: 'unknown', params: { name: 'nope' }, auth: 'admin', body: { maxId: '1000' } },
      { name: 'no token', params: { name: ORDERED }, body: { maxId: '1000' } },
      { name: 'wrong token', params: { name: ORDERED }, auth: 'wrong', body: { maxId: '1000' } },
    ],
  }),
  'GET /v1/sequences': () => ({
    valid: [{ name: 'all' }, { name: 'as admin', auth: 'admin' }],
    invalid: [{ name: 'wrong token', auth: 'wrong' }],
  }),
  'GET /healthz': () => ({ valid: [{ name: 'alive' }], invalid: [] }),
  'GET /readyz': () => ({
    valid: [{ name: 'open' }, { name: 'as admin', auth: 'admin' }],
    invalid: [{ name: 'wrong token', auth: 'wrong' }],
  }),
  'GET /metrics': () => ({
    valid: [{ name: 'open' }, { name: 'as admin', auth: 'admin' }],
    invalid: [{ name: 'wrong token', auth: 'wrong' }],
  }),
  'GET /v1/worker-pools': () => ({ valid: [{ name: 'all' }], invalid: [] }),
  'GET /v1/worker-pools/{name}': () => ({
    valid: [
      { name: 'open', params: { name: POOL } },
      { name: 'as admin', params: { name: POOL }, auth: 'admin' },
    ],
    invalid: [
      { name: 'unknown', params: { name: 'nopool' } },
      { name: 'bad name', params: { name: 'Bad' } },
    ],
  }),
  'PUT /v1/worker-pools/{name}': () => ({
    valid: [{ name: 'identical', params: { name: POOL }, auth: 'admin', body: { workerBits: 3 } }],
    invalid: [
      { name: 'conflict', params: { name: POOL }, auth: 'admin', body: { workerBits: 4 } },
      { name: 'bad settings', params: { name: 'otherpool' }, auth: 'admin', body: { workerBits: 99 } },
      { name: 'too large', params: { name: 'otherpool' }, auth: 'admin', body: { workerBits: 3, pad: big } },
      { name: 'no token', params: { name: POOL }, body: { workerBits: 3 } },
      { name: 'wrong token', params: { name: POOL }, auth: 'wrong', body: { workerBits: 3 } },
    ],
  }),
  'POST /v1/worker-pools/{name}/leases': () => ({
    valid: [{ name: 'take', params: { name: POOL }, body: { holder: 'contract' } }],
    invalid: [
      { name: 'unknown pool', params: { name: 'nopool' } },
      { name: 'bad holder', params: { name: POOL }, body: { holder: 'x'.repeat(500) } },
    ],
  }),
  'POST /v1/worker-pools/{name}/leases/{worker}/renew': (ctx) => ({
    valid:
      ctx.lease === undefined
        ? []
        : [
            {
              name: 'held',
              params: { name: POOL, worker: String(ctx.lease.workerId) },
              body: { epoch: ctx.lease.epoch },
            },
          ],
    invalid: [
      { name: 'other epoch', params: { name: POOL, worker: '0' }, body: { epoch: '1' } },
      { name: 'worker 70000', params: { name: POOL, worker: '70000' }, body: { epoch: '1' } },
      { name: 'no epoch', params: { name: POOL, worker: '0' }, body: {} },
    ],
  }),
  'POST /v1/worker-pools/{name}/leases/{worker}/release': (ctx) => ({
    valid:
      ctx.lease === undefined
        ? []
        : [
            {
              name: 'held',
              params: { name: POOL, worker: String(ctx.lease.workerId) },
              body: { epoch: ctx.lease.epoch, lastUsedMs: Date.now() },
            },
          ],
    invalid: [
      { name: 'other epoch', params: { name: POOL, worker: '1' }, body: { epoch: '1', lastUsedMs: 1 } },
      { name: 'worker -1', params: { name: POOL, worker: '-1' }, body: { epoch: '1', lastUsedMs: 1 } },
    ],
  }),
  'GET /openapi.json': () => ({ valid: [{ name: 'document' }], invalid: [] }),
  'GET /': () => ({ valid: [{ name: 'status page' }], invalid: [] }),
};

interface Operation {
  readonly responses: Record<string, { content?: Record<string, { schema?: object }> }>;
  readonly requestBody?: unknown;
}

describe('every answer as /openapi.json documents it, with backends up, one down and both down', () => {
  let pair: Awaited<ReturnType<typeof startPrivatePair>>;
  let server: RunningTicketd;
  let document: { paths: Record<string, Record<string, Operation>> };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
  const ctx: Context = { lease: undefined, issuedId: '0', block: undefined };
  const statuses = new Map<string, number>();

  beforeAll(async () => {
    pair = await startPrivatePair();
    server = await startInProcess(pair.backendsUrl, { clientTokens: `${SEALED}:${CLIENT_TOKEN}` });
    document = (await (await fetch(`${server.url}/openapi.json`)).json()) as typeof document;
    ajv.addSchema(document, 'openapi');
    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    for (const [path, body] of [
      [`/v1/sequences/${ORDERED}`, { blockSize: 100 }],
      [`/v1/sequences/${SEALED}`, { blockSize: 100, ids: 'opaque' }],
      [`/v1/sequences/${DOOMED}`, { blockSize: 100 }],
      [`/v1/sequences/${STRICT}`, { blockSize: 1, ids: 'strict' }],
      [`/v1/worker-pools/${POOL}`, { workerBits: 3 }],
    ] as const) {
      const res = await fetch(`${server.url}${path}`, { method: 'PUT', headers: admin, body: JSON.stringify(body) });
      expect([200, 201]).toContain(res.status);
    }
    const issued = (await (
      await fetch(`${server.url}/v1/sequences/${ORDERED}/ids?count=1`, { method: 'POST' })
    ).json()) as { ids: string[] };
    ctx.issuedId = issued.ids[0]!;
    const lease = (await (await fetch(`${server.url}/v1/worker-pools/${POOL}/leases`, { method: 'POST' })).json()) as {
      workerId: number;
      epoch: string;
    };
    ctx.lease = { workerId: lease.workerId, epoch: lease.epoch };
    const block = await fetch(`${server.url}/v1/sequences/${SEALED}/blocks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_TOKEN}` },
    });
    ctx.block = (await block.json()) as typeof ctx.block;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await pair?.dispose();
  });

  it('has an example for every operation the document lists, and no example of an operation it does not', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.filter((op) => EXAMPLES[op] === undefined)).toEqual([]);
    expect(Object.keys(EXAMPLES).filter((op) => !operations.includes(op))).toEqual([]);
    for (const op of operations) expect([op, EXAMPLES[op]!(ctx).valid.length > 0]).toEqual([op, true]);
  });

  /** Sends every example of every operation; returns what fell outside the document. */
  async function walk(phase: string): Promise<string[]> {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const key = `${method.toUpperCase()} ${path}`;
        const { valid, invalid } = EXAMPLES[key]!(ctx);
        for (const example of [...valid, ...invalid]) {
          const answer = await send(method, path, example);
          statuses.set(`${phase} ${answer.status}`, (statuses.get(`${phase} ${answer.status}`) ?? 0) + 1);
          const wrong = judge(operation, answer, `#/paths/${pointer(path)}/${method}`);
          if (wrong !== undefined) problems.push(`${phase}: ${key} (${example.name}): ${wrong}`);
        }
      }
    }
    return problems;
  }

  async function send(
    method: string,
    path: string,
    example: Example,
  ): Promise<{ status: number; type: string; text: string }> {
    const url =
      server.url +
      path.replace(/\{(\w+)\}/g, (_, p: string) => example.params?.[p] ?? 'x') +
      (example.query === undefined ? '' : `?${example.query}`);
    const headers: Record<string, string> = {};
    if (example.auth !== undefined)
      headers.authorization = `Bearer ${example.auth === 'admin' ? TEST_ADMIN_TOKEN : example.auth === 'client' ? CLIENT_TOKEN : 'wrong-token-0123456789abcdef'}`;
    if (example.accept !== undefined) headers.accept = example.accept;
    let body: string | undefined;
    if (example.body !== undefined || example.raw !== undefined) {
      headers['content-type'] = 'application/json';
      body = example.raw ?? JSON.stringify(example.body);
    }
    const res = await fetch(url, { method: method.toUpperCase(), headers, body, signal: AbortSignal.timeout(15_000) });
    return {
      status: res.status,
      type: (res.headers.get('content-type') ?? '').split(';')[0]!.trim(),
      text: await res.text(),
    };
  }

  /** Why an answer is outside the document, or undefined when it is inside. */
  function judge(
    operation: Operation,
    answer: { status: number; type: string; text: string },
    at: string,
  ): string | undefined {
    // An exact status first, then its range (OpenAPI's 4XX), as the document's readers match them.
    const key = [String(answer.status), `${String(answer.status)[0]}XX`].find(
      (k) => operation.responses[k] !== undefined,
    );
    if (key === undefined) return `status ${answer.status} is not documented (${answer.text.slice(0, 160)})`;
    const response = operation.responses[key]!;
    if (response.content === undefined)
      return answer.text === ''
        ? undefined
        : `status ${answer.status} documents no body, but one came (${answer.type})`;
    const media = response.content[answer.type];
    if (media === undefined)
      return `status ${answer.status} came as ${answer.type || 'no content type'}, documented: ${Object.keys(response.content).join(', ')}`;
    if (media.schema === undefined) return `status ${answer.status} ${answer.type} has no schema`;
    let value: unknown = answer.text;
    if (answer.type.endsWith('json')) {
      try {
        value = JSON.parse(answer.text);
      } catch {
        return `status ${answer.status}: the ${answer.type} body is not JSON`;
      }
    }
    const ref = `openapi${at}/responses/${key}/content/${pointer(answer.type)}/schema`;
    if (!ajv.validate({ $ref: ref }, value))
      return `status ${answer.status} body does not match its schema: ${ajv.errorsText(ajv.errors)} (${answer.text.slice(0, 200)})`;
    return undefined;
  }

  it('answers every request inside the document with both backends up', async () => {
    expect(await walk('both up')).toEqual([]);
  }, 120_000);

  it('answers every request inside the document, and no 500, with backend B stopped', async () => {
    await pair.b.stop();
    expect(await walk('B stopped')).toEqual([]);
  }, 120_000);

  it('answers every request inside the document, and no 500, with both backends stopped', async () => {
    await pair.a.stop();
    expect(await walk('both stopped')).toEqual([]);
    console.log(`OpenAPI contract: answers by phase and status ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect([...statuses.keys()].filter((k) => k.endsWith(' 500'))).toEqual([]);
  }, 120_000);
});

/** A JSON pointer segment: `~` and `/` escaped. */
function pointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The OpenAPI 3.1 description of the HTTP API, served at /openapi.json. Keep it in step with app.ts. */
import { THIS_VERSION } from '../core/versions.js';
import { workerPoolPaths, workerPoolSchemas } from './openapi-worker-pools.js';

const idString = { type: 'string', pattern: '^[0-9]{1,20}$', description: 'A decimal integer up to 2^64−1 (at most 20 digits; above 2^64−1 is a 400).' };
const problem = { $ref: '#/components/schemas/Problem' };
const problemResponse = (description: string): object => ({
  description,
  content: { 'application/problem+json': { schema: problem } },
});
const nameParam = {
  name: 'name',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,47}$' },
};
const issueErrors = {
  '400': problemResponse('Bad input (count, name).'),
  '401': problemResponse('The sequence has client tokens (TICKETD_CLIENT_TOKENS) and no bearer token was sent.'),
  '403': problemResponse('The bearer token is not one of the sequence’s client tokens.'),
  '429': problemResponse('Over TICKETD_RATE_LIMIT for this token or address; see Retry-After.'),
  '404': problemResponse('Unknown sequence.'),
  '409': problemResponse('The sequence has reached its maxId (type /problems/sequence-exhausted).'),
  '503': problemResponse('No backend answered and the cache is empty (see Retry-After), or the sequence needs a newer ticketd (type /problems/upgrade-required).'),
};
const json = (schema: object): object => ({ 'application/json': { schema } });

/** The document. */
export const openApiDocument = Object.freeze({
  openapi: '3.1.0',
  info: { title: 'ticketd', version: THIS_VERSION, description: 'Unique 64-bit IDs from odd/even MySQL ticket servers.', license: { name: 'MIT', identifier: 'MIT' } },
  servers: [{ url: '/', description: 'The ticketd that serves this document.' }],
  components: {
    securitySchemes: {
      admin: { type: 'http', scheme: 'bearer', description: 'TICKETD_ADMIN_TOKEN' },
      client: { type: 'http', scheme: 'bearer', description: 'A client token of the sequence (TICKETD_CLIENT_TOKENS); only for sequences that have them.' },
    },
    schemas: {
      Problem: {
        type: 'object',
        required: ['type', 'title', 'status', 'detail', 'code'],
        properties: {
          type: { type: 'string' },
          title: { type: 'string' },
          status: { type: 'integer' },
          detail: { type: 'string' },
          code: { type: 'string' },
        },
      },
      SequenceSettings: {
        type: 'object',
        required: ['blockSize'],
        additionalProperties: false,
        properties: {
          blockSize: { oneOf: [{ type: 'integer', minimum: 1 }, idString] },
          startAfter: { oneOf: [{ type: 'integer', minimum: 0 }, idString] },
          maxId: { oneOf: [{ type: 'integer', minimum: 1 }, idString] },
          ids: {
            type: 'string',
            enum: ['ordered', 'opaque'],
            default: 'ordered',
            description:
              'ordered: IDs are the block numbers themselves. opaque: every ID served is P(ordered ID), a keyed permutation of (startAfter, maxId] (needs at least 1,000,000 IDs there). Fixed at creation: another value is a 409.',
          },
        },
      },
      Sequence: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          blockSize: idString,
          startAfter: idString,
          maxId: idString,
          ids: { type: 'string', enum: ['ordered', 'opaque'] },
          retired: { type: 'boolean', description: 'Present (true) once the sequence is retired: nothing of it is issued again.' },
          scheme: { type: 'string', description: 'Opaque sequences only: the permutation scheme stored with the key (feistel-aes256-v2 for new ones, feistel-aes256-v1 for those made by 0.4). It never changes.' },
        },
      },
      Capacity: {
        type: ['object', 'null'],
        description: 'How much of maxId is used, as seen by this process (null before it fetched the sequence).',
        properties: {
          level: { enum: ['ok', 'warning', 'critical', 'exhausted'], description: 'warning from 80% of maxId, critical from 95%.' },
          usedPercent: { type: 'number' },
          highestId: idString,
          idsPerSecond: { type: ['number', 'null'] },
          projectedExhaustionAt: { type: ['string', 'null'], format: 'date-time' },
        },
      },
      Readiness: {
        type: 'object',
        required: ['ready', 'backends', 'sequences'],
        properties: {
          ready: { type: 'boolean' },
          backends: { type: 'array', items: { type: 'object' } },
          sequences: { type: 'object', additionalProperties: { $ref: '#/components/schemas/Capacity' } },
        },
      },
      ...workerPoolSchemas,
      SequenceDetail: {
        allOf: [
          { $ref: '#/components/schemas/Sequence' },
          {
            type: 'object',
            properties: {
              cache: { type: ['object', 'null'], description: "This process's cache of the sequence." },
              capacity: { $ref: '#/components/schemas/Capacity' },
              backends: { type: 'array', items: { type: 'object' }, description: 'Per-backend state of the sequence: state, member, lastTicket, lastError, exhausted, quarantined (the reason, or null) and unclaimed (true while no peer takes its claims).' },
              redacted: {
                type: 'boolean',
                description: 'True for an opaque sequence asked without the admin token: cache and capacity are null, and backends show no lastTicket and no quarantine reason, since they would tell its volume and order.',
              },
            },
          },
        ],
      },
    },
  },
  paths: withSharedAnswers({
    '/v1/sequences/{name}/ids': {
      post: {
        operationId: 'issueIds',
        summary: 'Issue count IDs.',
        security: [{}, { client: [] }],
        parameters: [nameParam, { name: 'count', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 10000, default: 1 }, description: 'At most TICKETD_MAX_COUNT (default 10000).' }],
        responses: {
          '200': {
            description: 'The IDs, in increasing order within each block.',
            content: {
              ...json({ type: 'object', properties: { sequence: { type: 'string' }, ids: { type: 'array', items: idString } } }),
              'text/plain': { schema: { type: 'string', description: 'One ID per line.' } },
            },
          },
          ...issueErrors,
        },
      },
    },
    '/v1/sequences/{name}/next': {
      get: {
        operationId: 'nextId',
        summary: 'Issue one ID (Cache-Control: no-store).',
        security: [{}, { client: [] }],
        parameters: [nameParam],
        responses: {
          '200': { description: 'One ID.', content: json({ type: 'object', properties: { sequence: { type: 'string' }, id: idString } }) },
          ...issueErrors,
        },
      },
    },
    '/v1/sequences/{name}/blocks': {
      post: {
        operationId: 'leaseBlock',
        summary: 'Lease one whole block: the client hands out first..last itself.',
        security: [{}, { client: [] }],
        parameters: [nameParam],
        responses: {
          '200': {
            description: 'The leased block: ordered IDs first..last, also for an opaque sequence (ids says which; the client applies P with the key from /id-key).',
            content: json({ type: 'object', properties: { sequence: { type: 'string' }, first: idString, last: idString, ids: { type: 'string', enum: ['ordered', 'opaque'] } } }),
          },
          ...issueErrors,
          '403': problemResponse('The token is not one of the sequence’s client tokens; for an opaque sequence, not one of its own (a `*` token does not do).'),
        },
      },
    },
    '/v1/sequences/{name}/id-key': {
      get: {
        operationId: 'getIdKey',
        summary: 'The key of an opaque sequence, for a trusted client that applies P itself (ticketd-client does). Only with one of the sequence’s own client tokens; Cache-Control: no-store.',
        security: [{ client: [] }],
        parameters: [nameParam],
        responses: {
          '200': {
            description: 'The key and the domain it permutes.',
            content: json({
              type: 'object',
              properties: {
                sequence: { type: 'string' },
                ids: { type: 'string', enum: ['opaque'] },
                scheme: { type: 'string', description: 'The permutation scheme: feistel-aes256-v2 for sequences made from 0.5 on, feistel-aes256-v1 for those of 0.4 (docs/opaque-ids.md). A client must refuse a scheme it does not know.' },
                startAfter: idString,
                maxId: idString,
                key: { type: 'string', description: '32 bytes, base64url; only for scheme feistel-aes256-v1 (where 0.4 clients read it).' },
                schemeKey: { type: 'string', description: '32 bytes, base64url; for every later scheme. Not in `key`, so a 0.4 client, which applies v1 to whatever `key` holds, finds no key and refuses.' },
              },
            }),
          },
          '400': problemResponse('The sequence has ordered IDs: no key.'),
          '401': problemResponse('No bearer token.'),
          '403': problemResponse('Not one of the sequence’s own client tokens, or it has none.'),
          '404': problemResponse('Unknown sequence.'),
        },
      },
    },
    '/v1/sequences/{name}/ids/{id}': {
      get: {
        operationId: 'decodeId',
        summary: 'Where an ID came from (admin): its ordered ID (P⁻¹ for an opaque sequence), ticket and the backend whose residue class holds the ticket. An ID outside (startAfter, maxId], or whose ticket is above that backend\'s last ticket, was never handed out: 404 TICKETD_ID_NOT_ISSUED.',
        security: [{ admin: [] }],
        parameters: [nameParam, { name: 'id', in: 'path', required: true, schema: idString }],
        responses: {
          '200': {
            description: 'The decoded ID.',
            content: json({
              type: 'object',
              properties: {
                sequence: { type: 'string' },
                id: idString,
                ids: { type: 'string', enum: ['ordered', 'opaque'] },
                ordered: idString,
                ticket: idString,
                backend: { type: ['string', 'null'], description: 'mysql://host:port/db, or null when no backend this process knows owns the ticket.' },
              },
            }),
          },
          '400': problemResponse('Not a decimal integer of at most 2^64−1.'),
          '401': problemResponse('No bearer token.'),
          '403': problemResponse('Wrong token, or admin API disabled.'),
          '404': problemResponse('Unknown sequence (TICKETD_SEQUENCE_NOT_FOUND), or an ID never issued (TICKETD_ID_NOT_ISSUED).'),
          '503': problemResponse('The backend that owns the ticket did not answer, so whether the ID was issued cannot be told.'),
        },
      },
    },
    '/v1/sequences/{name}/release': {
      post: {
        operationId: 'releaseBackend',
        summary: 'Re-check a backend against the claims its peers hold and let it serve the sequence again, in this process (admin). Lifts a quarantine; a counter still below a claimed ticket is advanced past every claim first.',
        security: [{ admin: [] }],
        parameters: [nameParam],
        requestBody: {
          required: true,
          content: json({
            type: 'object',
            required: ['backend'],
            properties: { backend: { type: 'string', description: 'The backend as GET /v1/sequences/{name} names it (mysql://host:port/db), or its letter by its place in TICKETD_BACKENDS (A is the first), as ticketd dev names them.' } },
          }),
        },
        responses: {
          '200': {
            description: 'Released.',
            content: json({
              type: 'object',
              properties: {
                backend: { type: 'string' },
                sequence: { type: 'string' },
                wasQuarantined: { type: ['string', 'null'], description: 'Why it was quarantined, or null.' },
                nextTicket: idString,
                highestUsed: { oneOf: [idString, { type: 'null' }], description: 'Highest ticket of its class claimed (or below a floor) on its peers.' },
                advancedTo: { oneOf: [idString, { type: 'null' }], description: 'The next ticket its counter was moved to, or null.' },
              },
            }),
          },
          '400': problemResponse('No backend in the body.'),
          '401': problemResponse('No bearer token.'),
          '403': problemResponse('Wrong token, or admin API disabled.'),
          '404': problemResponse('Unknown sequence or backend.'),
          '503': problemResponse('The backend or one of its peers did not answer; nothing was changed.'),
        },
      },
    },
    '/v1/sequences/{name}': {
      get: {
        operationId: 'getSequence',
        summary: "Settings of a sequence and its per-backend state. An opaque sequence's counts, frontier and tickets only with the admin token (see redacted).",
        security: [{}, { admin: [] }],
        parameters: [nameParam],
        responses: {
          '200': { description: 'The sequence.', content: json({ $ref: '#/components/schemas/SequenceDetail' }) },
          '400': problemResponse('A name that does not match the pattern, or a path that is not valid percent-encoding.'),
          '404': problemResponse('Unknown sequence.'),
          '503': problemResponse('No backend answered, so whether the sequence exists cannot be told (see Retry-After).'),
        },
      },
      put: {
        operationId: 'createSequence',
        summary: 'Create a sequence on every backend (admin).',
        security: [{ admin: [] }],
        parameters: [nameParam],
        requestBody: { required: true, content: json({ $ref: '#/components/schemas/SequenceSettings' }) },
        responses: {
          '201': { description: 'Created.', content: json({ $ref: '#/components/schemas/Sequence' }) },
          '200': { description: 'An identical sequence exists.', content: json({ $ref: '#/components/schemas/Sequence' }) },
          '400': problemResponse('Bad name or settings.'),
          '401': problemResponse('No bearer token.'),
          '403': problemResponse('Wrong token, or admin API disabled.'),
          '409': problemResponse('Exists with other settings.'),
          '503': problemResponse('A backend did not answer (repeat to complete), or an opaque sequence meets a backend whose schema predates 0.6 (type /problems/schema-outdated: run npx ticketd init).'),
        },
      },
      delete: {
        operationId: 'retireSequence',
        summary:
          'Retire a sequence for good (admin). Once this answers, no backend hands a ticket of it to any ticketd, whatever its version; running processes of this version stop serving what they cached within 5 s (410 TICKETD_SEQUENCE_RETIRED). Its counters and claims stay, and its name is never created again (409). Repeating it completes what a backend that was down left.',
        security: [{ admin: [] }],
        parameters: [nameParam],
        responses: {
          '200': { description: 'Retired on every backend (also when it was already).', content: json({ $ref: '#/components/schemas/Sequence' }) },
          '400': problemResponse('A name that does not match the pattern.'),
          '401': problemResponse('No bearer token.'),
          '403': problemResponse('Wrong token, or admin API disabled.'),
          '404': problemResponse('Unknown sequence.'),
          '503': problemResponse('A backend did not answer: repeat to complete (the backends that answered issue nothing of it already), or a backend’s schema predates 0.8 (type /problems/schema-outdated: run npx ticketd init).'),
        },
      },
      patch: {
        operationId: 'widenSequence',
        summary:
          'Widen a sequence (admin): raise its maxId on every backend, as when a legacy INT column became BIGINT. Running processes serve up to it from their next refill (an exhausted one looks again every 5 s). Only maxId can change, and only upward.',
        security: [{ admin: [] }],
        parameters: [nameParam],
        requestBody: {
          required: true,
          content: json({ type: 'object', required: ['maxId'], additionalProperties: false, properties: { maxId: { oneOf: [{ type: 'integer', minimum: 1 }, idString] } } }),
        },
        responses: {
          '200': { description: 'The sequence as it now is (the same maxId again is a 200 that changes nothing).', content: json({ $ref: '#/components/schemas/Sequence' }) },
          '400': problemResponse('Not an object with maxId alone: blockSize, startAfter and ids are fixed.'),
          '401': problemResponse('No bearer token.'),
          '403': problemResponse('Wrong token, or admin API disabled.'),
          '404': problemResponse('Unknown sequence.'),
          '409': problemResponse('A lower maxId (it can only grow), or an opaque sequence (its domain is its key’s: another maxId would move every ID).'),
          '503': problemResponse('A backend did not answer: repeat to complete (every backend that answered has the new maxId already).'),
        },
      },
    },
    '/v1/sequences': {
      get: {
        operationId: 'listSequences',
        summary: 'All sequences and the backends that have them.',
        security: [{}],
        responses: {
          '200': {
            description: 'The sequences.',
            content: json({
              type: 'object',
              properties: {
                sequences: { type: 'array', items: { $ref: '#/components/schemas/Sequence' } },
                unanswered: {
                  type: 'array',
                  description: 'Backends that did not answer (their sequences may be missing from the list), with the reason.',
                  items: { type: 'object', properties: { backend: { type: 'string' }, reason: { type: 'string' } } },
                },
              },
            }),
          },
          '503': problemResponse('No backend answered.'),
        },
      },
    },
    '/healthz': {
      get: {
        operationId: 'healthz',
        summary: 'The process is alive.',
        security: [{}],
        responses: { '200': { description: 'Alive.', content: json({ type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }) } },
      },
    },
    '/readyz': {
      get: {
        operationId: 'readyz',
        summary: 'An ID can be issued now.',
        security: [{}, { admin: [] }],
        responses: {
          '200': {
            description:
              "Ready. Details: backends, and the capacity of every sequence this process has served. Without the admin token an opaque sequence's capacity is null and the backends' ticket counts leave its tickets out.",
            content: json({ $ref: '#/components/schemas/Readiness' }),
          },
          '503': { description: 'Not ready: no backend usable and no cached IDs. Same body as 200, with ready false.', content: json({ $ref: '#/components/schemas/Readiness' }) },
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        summary: "Prometheus metrics (ticketd_*). Without the admin token, samples labelled with a sequence that is not ordered are left out (docs/operating.md has the scrape config with the token).",
        security: [{}, { admin: [] }],
        responses: { '200': { description: 'Text exposition format (version 0.0.4).', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
    ...workerPoolPaths,
    '/openapi.json': {
      get: { operationId: 'openApiDocument', summary: 'This document.', security: [{}], responses: { '200': { description: 'OpenAPI 3.1.', content: json({ type: 'object', required: ['openapi', 'paths'], properties: { openapi: { type: 'string' }, paths: { type: 'object' } } }) } } },
    },
    '/': {
      get: {
        operationId: 'statusPage',
        summary: 'Status page (HTML). Open to all, so it shows no figure of an opaque sequence.',
        security: [{}],
        responses: { '200': { description: 'HTML.', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    },
  }),
});

/**
 * What every operation can answer besides its own: a request Node's parser or the router refuses
 * (400, 431), where the operation reads a body one over 16 KiB (413), and where it uses a sequence
 * a retired one (410). Added here once, so no operation can be documented without them.
 */
function withSharedAnswers<P extends Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>>(paths: P): P {
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      // Whatever uses a sequence meets a retired one (creating it again is a 409, retiring it again a 200).
      if (path.startsWith('/v1/sequences/{name}') && method !== 'put' && method !== 'delete') {
        operation.responses['410'] ??= problemResponse('The sequence is retired (TICKETD_SEQUENCE_RETIRED): nothing of it is issued again.');
      }
      if (operation.requestBody !== undefined) operation.responses['413'] ??= problemResponse('The body is larger than 16 KiB.');
      operation.responses['4XX'] ??= problemResponse('A malformed request: bad percent-encoding in the path or a request the HTTP parser refuses (400), a body over 16 KiB (413), headers over 16 KiB (431).');
    }
  }
  return paths;
}

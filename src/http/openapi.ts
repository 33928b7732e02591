/** The OpenAPI 3.1 description of the HTTP API, served at /openapi.json. Keep it in step with app.ts. */
import { THIS_VERSION } from '../core/versions.js';
import { workerPoolPaths, workerPoolSchemas } from './openapi-worker-pools.js';
import { idString, json, problemResponse } from './openapi-parts.js';
import { sequencePaths } from './openapi-sequences.js';
import { returnPaths } from './openapi-returns.js';

/** The document. */
export const openApiDocument = Object.freeze({
  openapi: '3.1.0',
  info: {
    title: 'ticketd',
    version: THIS_VERSION,
    description: 'Unique 64-bit IDs from odd/even MySQL ticket servers.',
    license: { name: 'MIT', identifier: 'MIT' },
  },
  servers: [{ url: '/', description: 'The ticketd that serves this document.' }],
  components: {
    securitySchemes: {
      admin: { type: 'http', scheme: 'bearer', description: 'TICKETD_ADMIN_TOKEN' },
      client: {
        type: 'http',
        scheme: 'bearer',
        description: 'A client token of the sequence (TICKETD_CLIENT_TOKENS); only for sequences that have them.',
      },
    },
    schemas: {
      Problem: {
        type: 'object',
        required: ['type', 'title', 'status', 'detail', 'code'],
        properties: {
          type: { type: 'string' },
          title: { type: 'string' },
          status: { type: 'integer' },
          detail: {
            type: 'string',
            description:
              "What went wrong. Without the admin token backends are named by letter (A, B, …), and a backend's error (codes BACKENDS_UNAVAILABLE, BACKEND_MISCONFIGURED, TICKET_CLAIMED_BEFORE, BACKEND_ACCESS_DENIED, BACKEND_TLS) becomes each backend's state: its address, account and error text are for the admin's eyes.",
          },
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
          maxId: {
            oneOf: [{ type: 'integer', minimum: 1 }, idString],
            description:
              'No ID is greater. Default 9223372036854775807 (2^63 − 1: a signed BIGINT, Java long, Go int64); up to 18446744073709551615 when given. A sequence created by ticketd 0.10 or earlier with the old default (2^64 − 1) keeps it, and a request without maxId matches it.',
          },
          ids: {
            type: 'string',
            enum: ['ordered', 'opaque'],
            default: 'ordered',
            description:
              'ordered: IDs are the block numbers themselves. opaque: every ID served is P(ordered ID), a keyed permutation of (startAfter, maxId] (needs at least 1,000,000 IDs there). strict: IDs in real-time order across every front end, served by one leader (docs/strict-sequences.md); no blocks, no widening. Fixed at creation: another value is a 409.',
          },
          reuse: {
            type: 'boolean',
            description:
              'Unused IDs given back (a front end stopping cleanly, a client returning a block) are served again. Opaque sequences always do (false is a 400); strict ones never (true is a 400); an ordered one only when created with true, as its later IDs are then no longer always larger. Fixed at creation.',
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
          ids: { type: 'string', enum: ['ordered', 'opaque', 'strict'] },
          retired: {
            type: 'boolean',
            description: 'Present (true) once the sequence is retired: nothing of it is issued again.',
          },
          reuse: {
            type: 'boolean',
            description: 'Present (true) for an ordered sequence created with reuse: IDs given back are served again.',
          },
          scheme: {
            type: 'string',
            description:
              'Opaque sequences only: the permutation scheme stored with the key (feistel-aes256-v2 for new ones, feistel-aes256-v1 for those made by 0.4). It never changes.',
          },
        },
      },
      Capacity: {
        type: ['object', 'null'],
        description: 'How much of maxId is used, as seen by this process (null before it fetched the sequence).',
        properties: {
          level: {
            enum: ['ok', 'warning', 'critical', 'exhausted'],
            description: 'warning from 80% of maxId, critical from 95%.',
          },
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
          backends: {
            type: 'array',
            items: {
              type: 'object',
              required: ['backend', 'name', 'state'],
              properties: {
                backend: { type: 'string' },
                name: { type: 'string' },
                state: { type: 'string' },
                failing: { type: 'boolean' },
              },
            },
            description:
              "Each backend's state (up, down, open, half-open, refused, unknown), lastError with lastErrorAt, and failing (true while that error is still happening: down, open, half-open or refused). Without the admin token: `backend` is its name (the URL's name=, else its letter A, B, …), with no identity, transport or error text; with it, `backend` is its mysql://host:port/db and identity and transport (TLS version and cipher) are shown.",
          },
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
              cached: {
                type: 'boolean',
                description:
                  'False: the settings (maxId, retired) were read from the backends for this answer, so a widening or a retirement made anywhere shows at once. True: no backend answered that read, and these are the settings this process last read (up to 5 s old while it serves the sequence).',
              },
              cache: { type: ['object', 'null'], description: "This process's cache of the sequence." },
              leader: {
                type: ['object', 'null'],
                description:
                  'Strict sequences only: who leads, as the lease rows on the backends say now (null: no live lease; the next request elects one). self: this process.',
                properties: { epoch: idString, url: { type: 'string' }, self: { type: 'boolean' } },
              },
              capacity: { $ref: '#/components/schemas/Capacity' },
              backends: {
                type: 'array',
                items: { type: 'object' },
                description:
                  'Per-backend state of the sequence: state, member, lastTicket, lastError, exhausted, quarantined (the reason, or null) and unclaimed (true while no peer takes its claims).',
              },
              redacted: {
                type: 'boolean',
                description:
                  'True for an opaque sequence asked without the admin token: cache and capacity are null, and backends show no lastTicket and no quarantine reason, since they would tell its volume and order.',
              },
            },
          },
        ],
      },
    },
  },
  paths: withSharedAnswers({
    ...sequencePaths,
    ...returnPaths,
    '/healthz': {
      get: {
        operationId: 'healthz',
        summary: 'The process is alive.',
        security: [{}],
        responses: {
          '200': {
            description: 'Alive.',
            content: json({ type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }),
          },
        },
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
              "Ready. Details: backends, and the capacity of every sequence this process has served. Without the admin token an opaque sequence's capacity is null and the backends' ticket counts leave its tickets out, and each backend is named by its letter in TICKETD_BACKENDS (A, B, …) with no address, account or error text (lastError reads 'failed (the error is shown with the admin token)').",
            content: json({ $ref: '#/components/schemas/Readiness' }),
          },
          '503': {
            description: 'Not ready: no backend usable and no cached IDs. Same body as 200, with ready false.',
            content: json({ $ref: '#/components/schemas/Readiness' }),
          },
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        summary:
          'Prometheus metrics (ticketd_*). Without the admin token, samples labelled with a sequence that is not ordered are left out (docs/operating.md has the scrape config with the token).',
        security: [{}, { admin: [] }],
        responses: {
          '200': {
            description: 'Text exposition format (version 0.0.4).',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
      },
    },
    ...workerPoolPaths,
    '/openapi.json': {
      get: {
        operationId: 'openApiDocument',
        summary: 'This document.',
        security: [{}],
        responses: {
          '200': {
            description: 'OpenAPI 3.1.',
            content: json({
              type: 'object',
              required: ['openapi', 'paths'],
              properties: { openapi: { type: 'string' }, paths: { type: 'object' } },
            }),
          },
        },
      },
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
function withSharedAnswers<
  P extends Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>,
>(paths: P): P {
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      // Whatever uses a sequence meets a retired one (creating it again is a 409, retiring it again a 200).
      if (path.startsWith('/v1/sequences/{name}') && method !== 'put' && method !== 'delete') {
        operation.responses['410'] ??= problemResponse(
          'The sequence is retired (TICKETD_SEQUENCE_RETIRED): nothing of it is issued again.',
        );
      }
      if (operation.requestBody !== undefined)
        operation.responses['413'] ??= problemResponse('The body is larger than 16 KiB.');
      operation.responses['4XX'] ??= problemResponse(
        'A malformed request: bad percent-encoding in the path or a request the HTTP parser refuses (400), a body over 16 KiB (413), headers over 16 KiB (431).',
      );
    }
  }
  return paths;
}

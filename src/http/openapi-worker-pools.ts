/** The worker-pool part of the OpenAPI document (routes/worker-routes.ts). */
import { json as body, problemResponse as problem } from './openapi-parts.js';

const poolParam = {
  name: 'name',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,47}$' },
};
const workerParam = {
  name: 'worker',
  in: 'path',
  required: true,
  schema: { type: 'integer', minimum: 0, maximum: 65535 },
};
const epoch = {
  type: 'string',
  pattern: '^[0-9]+$',
  description: 'The lease epoch, a decimal string: it only grows for a worker ID and is never handed out twice.',
};
const leaseErrors = {
  '400': problem('Bad body, or a worker ID outside 0 to 65535 or outside the pool.'),
  '401': problem('The pool has client tokens and no bearer token was sent.'),
  '403': problem('The bearer token is not one of the pool’s client tokens.'),
  '404': problem('Unknown pool (TICKETD_POOL_NOT_FOUND).'),
  '409': problem(
    'The lease is no longer held: it expired, another epoch holds the worker ID, or (renew) it was released (TICKETD_LEASE_LOST). Stop issuing on it and take a new one.',
  ),
  '503': problem(
    'The owner of the worker ID did not answer, or no other backend could hold the claim with TICKETD_CLAIMS=required (see Retry-After).',
  ),
};

/** Schemas of pools and leases. */
export const workerPoolSchemas = {
  PoolSettings: {
    type: 'object',
    additionalProperties: false,
    properties: {
      workerBits: {
        type: 'integer',
        minimum: 1,
        maximum: 16,
        default: 10,
        description: 'Worker IDs are 0 to 2^workerBits − 1.',
      },
      ttlMs: {
        type: 'integer',
        minimum: 1000,
        maximum: 600000,
        default: 30000,
        description: 'A lease lasts this long from its grant or renewal, by the owner backend’s clock.',
      },
      maxSkewMs: {
        type: 'integer',
        minimum: 0,
        maximum: 60000,
        default: 1000,
        description:
          'Holders stop issuing while their clock is further than this from the server’s; high-water marks add it.',
      },
      reuseDelayMs: {
        type: 'integer',
        description:
          'An expired, unreleased worker ID is granted again only this long after its expiry. At least ttlMs + maxSkewMs (the default).',
      },
    },
  },
  Pool: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      workerBits: { type: 'integer' },
      size: { type: 'integer' },
      ttlMs: { type: 'integer' },
      maxSkewMs: { type: 'integer' },
      reuseDelayMs: { type: 'integer' },
      owners: {
        type: 'array',
        items: { type: 'string' },
        description:
          'auto_increment_offsets of the backends that grant the worker IDs: worker w is granted by owners[w mod length] only.',
      },
    },
  },
  Lease: {
    type: 'object',
    properties: {
      pool: { type: 'string' },
      workerId: { type: 'integer' },
      epoch,
      holder: { type: 'string' },
      expiresAt: { type: 'string', format: 'date-time' },
      expiresInMs: {
        type: 'integer',
        description: 'How long the lease runs from when the owner granted or renewed it: count it from when you asked.',
      },
      serverTimeMs: {
        type: 'integer',
        description: 'The owner’s clock when it answered (Unix ms): compare yours with it.',
      },
      highWaterMs: {
        type: 'integer',
        description: 'Earlier holders of the worker ID used no timestamp above this one: issue only above it.',
      },
      workerBits: { type: 'integer' },
      ttlMs: { type: 'integer' },
      maxSkewMs: { type: 'integer' },
    },
  },
};

/** Paths of pools and leases. */
export const workerPoolPaths = {
  '/v1/worker-pools': {
    get: {
      operationId: 'listWorkerPools',
      summary: 'List worker pools.',
      security: [{}],
      responses: {
        '200': {
          description: 'Pools, as the backends that answered hold them.',
          content: body({
            type: 'object',
            properties: { pools: { type: 'array', items: { $ref: '#/components/schemas/Pool' } } },
          }),
        },
        '503': problem('No backend answered: the pools cannot be listed (not an empty list).'),
      },
    },
  },
  '/v1/worker-pools/{name}': {
    get: {
      operationId: 'getWorkerPool',
      summary: 'A pool and its leases, as the owners hold them. Holders and epochs only with the admin token.',
      security: [{}, { admin: [] }],
      parameters: [poolParam],
      responses: {
        '200': {
          description: 'The pool.',
          content: body({
            allOf: [
              { $ref: '#/components/schemas/Pool' },
              {
                type: 'object',
                properties: {
                  leased: { type: 'integer' },
                  cooling: { type: 'integer', description: 'Expired unreleased leases inside their reuse delay.' },
                  free: { type: 'integer' },
                  unanswered: {
                    type: 'array',
                    items: { type: 'string' },
                    description:
                      'Owners that did not answer (backend addresses with the admin token; "backend A" and so on without it); their worker IDs are not counted.',
                  },
                  leases: {
                    type: ['array', 'null'],
                    items: { type: 'object' },
                    description:
                      'workerId, owner, state, epoch, holder, expiresAt, freeAt; null without the admin token.',
                  },
                  redacted: { type: 'boolean' },
                  timeField: {
                    type: 'object',
                    required: ['timeBits', 'epoch', 'endsAt', 'secondsLeft'],
                    description:
                      "When the holders' Snowflake time field runs out: for the epoch and time bits TICKETD_SNOWFLAKE_EPOCH and TICKETD_SNOWFLAKE_TIME_BITS say they use (holders' options ticketd cannot see; default the clients' 2024-01-01 and 41 bits, fewer for a pool wider than 10 worker bits).",
                    properties: {
                      timeBits: { type: 'integer' },
                      epoch: { type: 'string', format: 'date-time' },
                      endsAt: {
                        type: 'string',
                        format: 'date-time',
                        description: 'The first millisecond the field cannot hold.',
                      },
                      secondsLeft: { type: 'integer', minimum: 0 },
                    },
                  },
                },
              },
            ],
          }),
        },
        '400': problem('A name that does not match the pattern.'),
        '404': problem('Unknown pool.'),
        '503': problem('No backend answered, so whether the pool exists cannot be told (see Retry-After).'),
      },
    },
    put: {
      operationId: 'createWorkerPool',
      summary:
        'Create a worker pool on every backend (admin): 201 created, 200 an identical one exists, 409 it differs.',
      security: [{ admin: [] }],
      parameters: [poolParam],
      requestBody: { required: true, content: body({ $ref: '#/components/schemas/PoolSettings' }) },
      responses: {
        '200': { description: 'An identical pool exists.', content: body({ $ref: '#/components/schemas/Pool' }) },
        '201': { description: 'Created.', content: body({ $ref: '#/components/schemas/Pool' }) },
        '400': problem('Bad name or settings.'),
        '401': problem('No bearer token.'),
        '403': problem('Wrong token, or admin API disabled.'),
        '409': problem('The pool exists with other settings (TICKETD_POOL_CONFLICT).'),
        '503': problem('A backend did not answer: repeat to complete.'),
      },
    },
  },
  '/v1/worker-pools/{name}/leases': {
    post: {
      operationId: 'takeLease',
      summary: 'Take a lease of a free worker ID.',
      security: [{}, { client: [] }],
      parameters: [poolParam],
      requestBody: {
        required: false,
        content: body({
          type: 'object',
          properties: {
            holder: {
              type: 'string',
              maxLength: 128,
              description: 'Shown to operators (pod name, host/pid); default the client address.',
            },
          },
        }),
      },
      responses: {
        '200': { description: 'The lease.', content: body({ $ref: '#/components/schemas/Lease' }) },
        ...leaseErrors,
        '503': problem(
          'Every worker ID is leased, cooling down or held by a claim (TICKETD_POOL_EXHAUSTED, with Retry-After), or an owner did not answer.',
        ),
      },
    },
  },
  '/v1/worker-pools/{name}/leases/{worker}/renew': {
    post: {
      operationId: 'renewLease',
      summary: 'Extend a lease from now, by the owner’s clock.',
      security: [{}, { client: [] }],
      parameters: [poolParam, workerParam],
      requestBody: {
        required: true,
        content: body({
          type: 'object',
          required: ['epoch'],
          properties: {
            epoch,
            skewMs: {
              type: 'number',
              description: 'The clock skew the holder measured at its last lease or renewal (reported in metrics).',
            },
          },
        }),
      },
      responses: {
        '200': { description: 'The lease, extended.', content: body({ $ref: '#/components/schemas/Lease' }) },
        ...leaseErrors,
      },
    },
  },
  '/v1/worker-pools/{name}/leases/{worker}/release': {
    post: {
      operationId: 'releaseLease',
      summary:
        'End a lease: the worker ID is free at once, and its next holder issues above lastUsedMs. A release repeated with the same epoch (its first answer lost) answers 200 again and changes nothing.',
      security: [{}, { client: [] }],
      parameters: [poolParam, workerParam],
      requestBody: {
        required: true,
        content: body({
          type: 'object',
          required: ['epoch', 'lastUsedMs'],
          properties: {
            epoch,
            lastUsedMs: {
              type: 'integer',
              minimum: 0,
              description: 'The last millisecond (Unix) used in an ID on this lease.',
            },
          },
        }),
      },
      responses: {
        '200': {
          description: 'Released now, or already released by this epoch.',
          content: body({ type: 'object', properties: { released: { const: true } } }),
        },
        ...leaseErrors,
        '409': problem('Another epoch holds or held the worker ID (TICKETD_LEASE_LOST): this lease ended before.'),
      },
    },
  },
};

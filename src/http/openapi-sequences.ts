/** The sequence routes of the OpenAPI document (routes/issuing-routes.ts, routes/sequence-routes.ts). */
import { idString, issueErrors, json, nameParam, problemResponse } from './openapi-parts.js';

/** Paths of sequences: issuing, keys, decoding, releasing, and a sequence's whole life. */
export const sequencePaths = {
  '/v1/sequences/{name}/ids': {
    post: {
      operationId: 'issueIds',
      summary: 'Issue count IDs.',
      security: [{}, { client: [] }],
      parameters: [
        nameParam,
        {
          name: 'count',
          in: 'query',
          schema: { type: 'integer', minimum: 1, maximum: 10000, default: 1 },
          description: 'At most TICKETD_MAX_COUNT (default 10000).',
        },
      ],
      responses: {
        '200': {
          description: 'The IDs, in increasing order within each block.',
          content: {
            ...json({
              type: 'object',
              properties: { sequence: { type: 'string' }, ids: { type: 'array', items: idString } },
            }),
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
        '200': {
          description: 'One ID.',
          content: json({ type: 'object', properties: { sequence: { type: 'string' }, id: idString } }),
        },
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
          description:
            'The leased block: ordered IDs first..last, also for an opaque sequence (ids says which; the client applies P with the key from /id-key).',
          content: json({
            type: 'object',
            properties: {
              sequence: { type: 'string' },
              first: idString,
              last: idString,
              ids: { type: 'string', enum: ['ordered', 'opaque'] },
              lease: {
                type: 'string',
                description:
                  'Only when the sequence takes IDs back (opaque ones, ordered ones created with reuse): the block’s lease, to give its unused tail back with POST …/blocks/return. Opaque to the client.',
              },
            },
          }),
        },
        ...issueErrors,
        '403': problemResponse(
          'The token is not one of the sequence’s client tokens; for an opaque sequence, not one of its own (a `*` token does not do).',
        ),
        '409': problemResponse(
          'The sequence has reached its maxId (type /problems/sequence-exhausted), or it is strict (TICKETD_STRICT_NO_BLOCKS, type /problems/strict-no-blocks): a block handed out by a client would leave real-time order.',
        ),
      },
    },
  },
  '/v1/sequences/{name}/strict-range': {
    post: {
      operationId: 'strictRange',
      summary:
        'Between front ends: a follower forwards the requests of a strict sequence here, to its leader, in one call (docs/strict-sequences.md). Served only by the leader.',
      security: [{}, { client: [] }],
      parameters: [
        nameParam,
        {
          name: 'count',
          in: 'query',
          schema: { type: 'integer', minimum: 1, maximum: 10000, default: 1 },
          description: 'At most TICKETD_MAX_COUNT (default 10000).',
        },
      ],
      responses: {
        '200': {
          description: 'count consecutive IDs, first..last.',
          content: json({
            type: 'object',
            properties: { sequence: { type: 'string' }, first: idString, last: idString },
          }),
        },
        ...issueErrors,
        '400': problemResponse('Bad input (count, name), or the sequence is not strict.'),
        '421': problemResponse(
          'This process does not lead the sequence (TICKETD_NOT_LEADER): ask the backends who does (GET /v1/sequences/{name}, leader).',
        ),
      },
    },
  },
  '/v1/sequences/{name}/id-key': {
    get: {
      operationId: 'getIdKey',
      summary:
        'The key of an opaque sequence, for a trusted client that applies P itself (ticketd-client does). Only with one of the sequence’s own client tokens; Cache-Control: no-store.',
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
              scheme: {
                type: 'string',
                description:
                  'The permutation scheme: feistel-aes256-v2 for sequences made from 0.5 on, feistel-aes256-v1 for those of 0.4 (docs/opaque-ids.md). A client must refuse a scheme it does not know.',
              },
              startAfter: idString,
              maxId: idString,
              key: {
                type: 'string',
                description: '32 bytes, base64url; only for scheme feistel-aes256-v1 (where 0.4 clients read it).',
              },
              schemeKey: {
                type: 'string',
                description:
                  '32 bytes, base64url; for every later scheme. Not in `key`, so a 0.4 client, which applies v1 to whatever `key` holds, finds no key and refuses.',
              },
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
      summary:
        "Where an ID came from (admin): its ordered ID (P⁻¹ for an opaque sequence), ticket and the backend whose residue class holds the ticket. An ID outside (startAfter, maxId], or whose ticket is above that backend's last ticket, was never handed out: 404 TICKETD_ID_NOT_ISSUED.",
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
              backend: {
                type: ['string', 'null'],
                description: 'mysql://host:port/db, or null when no backend this process knows owns the ticket.',
              },
            },
          }),
        },
        '400': problemResponse('Not a decimal integer of at most 2^64−1.'),
        '401': problemResponse('No bearer token.'),
        '403': problemResponse('Wrong token, or admin API disabled.'),
        '404': problemResponse(
          'Unknown sequence (TICKETD_SEQUENCE_NOT_FOUND), or an ID never issued (TICKETD_ID_NOT_ISSUED).',
        ),
        '503': problemResponse(
          'The backend that owns the ticket did not answer, so whether the ID was issued cannot be told.',
        ),
      },
    },
  },
  '/v1/sequences/{name}/release': {
    post: {
      operationId: 'releaseBackend',
      summary:
        'Re-check a backend against the claims its peers hold and let it serve the sequence again, in this process (admin). Lifts a quarantine; a counter still below a claimed ticket is advanced past every claim first.',
      security: [{ admin: [] }],
      parameters: [nameParam],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['backend'],
          properties: {
            backend: {
              type: 'string',
              description:
                'The backend as GET /v1/sequences/{name} names it (mysql://host:port/db), or its letter by its place in TICKETD_BACKENDS (A is the first), as ticketd dev names them.',
            },
          },
        }),
      },
      responses: {
        '200': {
          description: 'Released.',
          content: json({
            type: 'object',
            required: [
              'backend',
              'sequence',
              'wasQuarantined',
              'quarantineReason',
              'nextTicket',
              'highestUsed',
              'advancedTo',
            ],
            properties: {
              backend: { type: 'string' },
              sequence: { type: 'string' },
              wasQuarantined: { type: 'boolean', description: 'Whether the backend was quarantined for the sequence.' },
              quarantineReason: {
                type: ['string', 'null'],
                description: 'Why it was quarantined, or null when it was not.',
              },
              nextTicket: idString,
              highestUsed: {
                oneOf: [idString, { type: 'null' }],
                description: 'Highest ticket of its class claimed (or below a floor) on its peers.',
              },
              advancedTo: {
                oneOf: [idString, { type: 'null' }],
                description: 'The next ticket its counter was moved to, or null.',
              },
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
      summary:
        "Settings of a sequence and its per-backend state. An opaque sequence's counts, frontier and tickets only with the admin token (see redacted). Without the admin token each backend is named by its letter (A, B, …), with no address, account or error text.",
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
        '200': {
          description: 'An identical sequence exists.',
          content: json({ $ref: '#/components/schemas/Sequence' }),
        },
        '400': problemResponse('Bad name or settings.'),
        '401': problemResponse('No bearer token.'),
        '403': problemResponse('Wrong token, or admin API disabled.'),
        '409': problemResponse('Exists with other settings.'),
        '503': problemResponse(
          'A backend did not answer (repeat to complete), or an opaque sequence meets a backend whose schema predates 0.6 (type /problems/schema-outdated: run npx ticketd init).',
        ),
      },
    },
    delete: {
      operationId: 'retireSequence',
      summary:
        'Retire a sequence for good (admin). Once this answers, no backend hands a ticket of it to any ticketd, whatever its version; running processes of this version stop serving what they cached within 5 s (410 TICKETD_SEQUENCE_RETIRED). Its counters and claims stay, and its name is never created again (409). Repeating it completes what a backend that was down left.',
      security: [{ admin: [] }],
      parameters: [nameParam],
      responses: {
        '200': {
          description: 'Retired on every backend (also when it was already).',
          content: json({ $ref: '#/components/schemas/Sequence' }),
        },
        '400': problemResponse('A name that does not match the pattern.'),
        '401': problemResponse('No bearer token.'),
        '403': problemResponse('Wrong token, or admin API disabled.'),
        '404': problemResponse('Unknown sequence.'),
        '503': problemResponse(
          'A backend did not answer: repeat to complete (the backends that answered issue nothing of it already), or a backend’s schema predates 0.8 (type /problems/schema-outdated: run npx ticketd init).',
        ),
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
        content: json({
          type: 'object',
          required: ['maxId'],
          additionalProperties: false,
          properties: { maxId: { oneOf: [{ type: 'integer', minimum: 1 }, idString] } },
        }),
      },
      responses: {
        '200': {
          description: 'The sequence as it now is (the same maxId again is a 200 that changes nothing).',
          content: json({ $ref: '#/components/schemas/Sequence' }),
        },
        '400': problemResponse('Not an object with maxId alone: blockSize, startAfter and ids are fixed.'),
        '401': problemResponse('No bearer token.'),
        '403': problemResponse('Wrong token, or admin API disabled.'),
        '404': problemResponse('Unknown sequence.'),
        '409': problemResponse(
          'A lower maxId (it can only grow), an opaque sequence (its domain is its key’s: another maxId would move every ID), a strict one (not widened in this release), or a maxId past the ceiling of a migrated sequence whose legacy table keeps AUTO_INCREMENT (the old version’s reserve lies above it).',
        ),
        '503': problemResponse(
          'A backend did not answer: repeat to complete (every backend that answered has the new maxId already), or a backend’s schema predates 0.12 (type /problems/schema-outdated: run npx ticketd init).',
        ),
      },
    },
  },
  '/v1/sequences': {
    get: {
      operationId: 'listSequences',
      summary:
        'All sequences and the backends that have them: their addresses with the admin token, their letters in TICKETD_BACKENDS (A, B, …) without it.',
      security: [{}, { admin: [] }],
      responses: {
        '200': {
          description: 'The sequences.',
          content: json({
            type: 'object',
            properties: {
              sequences: { type: 'array', items: { $ref: '#/components/schemas/Sequence' } },
              unanswered: {
                type: 'array',
                description:
                  "Backends that did not answer (their sequences may be missing from the list), with the reason (the error with the admin token; without it, the backend's letter and no error text).",
                items: { type: 'object', properties: { backend: { type: 'string' }, reason: { type: 'string' } } },
              },
            },
          }),
        },
        '503': problemResponse('No backend answered.'),
      },
    },
  },
};

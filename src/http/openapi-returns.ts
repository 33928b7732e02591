/** The OpenAPI document's route for giving a leased block's unused IDs back (docs/operating.md, "Giving IDs back"). */
import { idString, issueErrors, json, nameParam, problemResponse } from './openapi-parts.js';

/** POST /v1/sequences/{name}/blocks/return. */
export const returnPaths = {
  '/v1/sequences/{name}/blocks/return': {
    post: {
      operationId: 'returnBlock',
      summary:
        'Give back the unused tail of a leased block: IDs from..last of the lease, none of which the client handed out. They are served again later (to anyone). Any failure: the client counts those IDs as lost and does not retry for long.',
      security: [{}, { client: [] }],
      parameters: [nameParam],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['lease', 'from'],
          additionalProperties: false,
          properties: {
            lease: { type: 'string', maxLength: 160, description: 'The lease POST …/blocks answered with the block.' },
            from: {
              ...idString,
              description:
                'The first ID given back, in the block’s own first..last (before any opaque permutation); every ID from it to last is given back.',
            },
          },
        }),
      },
      responses: {
        '200': {
          description: 'The IDs are recorded on a backend; `returned` is how many (a decimal string).',
          content: json({
            type: 'object',
            required: ['sequence', 'returned'],
            properties: { sequence: { type: 'string' }, returned: idString },
          }),
        },
        ...issueErrors,
        '400': problemResponse(
          'Bad body (lease, from), `from` outside the lease’s block, or the sequence does not take IDs back.',
        ),
        '403': problemResponse(
          'The lease is not valid for this sequence (TICKETD_LEASE_INVALID), or the token is not one of the sequence’s client tokens (an opaque sequence: its own).',
        ),
        '409': problemResponse(
          'That lease’s IDs were given back already (TICKETD_LEASE_RETURNED, type /problems/lease-returned).',
        ),
        '503': problemResponse('No backend recorded the IDs (see Retry-After): they are lost.'),
      },
    },
  },
};

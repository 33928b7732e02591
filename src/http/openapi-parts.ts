/** Pieces the OpenAPI document's parts share (openapi.ts, openapi-sequences.ts). */

/** A decimal ID or ticket, as every route sends them. */
export const idString = {
  type: 'string',
  pattern: '^[0-9]{1,20}$',
  description: 'A decimal integer up to 2^64−1 (at most 20 digits; above 2^64−1 is a 400).',
};
const problem = { $ref: '#/components/schemas/Problem' };
/** A problem+json answer with its description. */
export const problemResponse = (description: string): object => ({
  description,
  content: { 'application/problem+json': { schema: problem } },
});
/** The `{name}` path parameter of sequences. */
export const nameParam = {
  name: 'name',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,47}$' },
};
/** What the issuing routes can answer besides 200. */
export const issueErrors = {
  '400': problemResponse('Bad input (count, name).'),
  '401': problemResponse('The sequence has client tokens (TICKETD_CLIENT_TOKENS) and no bearer token was sent.'),
  '403': problemResponse('The bearer token is not one of the sequence’s client tokens.'),
  '429': problemResponse('Over TICKETD_RATE_LIMIT for this token or address; see Retry-After.'),
  '404': problemResponse('Unknown sequence.'),
  '409': problemResponse('The sequence has reached its maxId (type /problems/sequence-exhausted).'),
  '503': problemResponse(
    'No backend answered and the cache is empty (see Retry-After), the sequence needs a newer ticketd (type /problems/upgrade-required), or a strict sequence found no leader within 3 s (no majority of the backends, a failover; see Retry-After).',
  ),
};
/** A JSON body with this schema. */
export const json = (schema: object): object => ({ 'application/json': { schema } });

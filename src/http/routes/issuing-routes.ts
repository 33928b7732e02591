/** The issuing routes: IDs, the next ID, whole blocks, and an opaque sequence's key for its own clients. */
import type { RequestHandler } from 'express';
import type { Caller } from '../../core/caller.js';
import { FIRST_PERMUTATION_SCHEME } from 'ticketd-client';
import { BadRequestError } from '../../core/errors.js';
import type { TicketService } from '../../service/ticket-service.js';
import { writeAnswer } from '../answer.js';
import { idsAnswer, jsonAnswer, mentionsPlainText, nextAnswer, parseCount } from '../issuing-answers.js';
import { callerOf } from '../request-caller.js';
import { MAX_LEASE_LENGTH } from '../../service/block-leases.js';
import type { Route } from '../router.js';

/** What the issuing routes need. */
export interface IssuingRoutesOptions {
  readonly service: TicketService;
  readonly maxCount: number;
  /** Client token and rate limit checks, when configured. */
  readonly guards: readonly RequestHandler[];
  /** Throws unless the caller holds one of the sequence's own client tokens. */
  readonly ownToken: (caller: Caller, sequence: string, what: string) => void;
}

/** Adds the issuing routes. */
export function addIssuingRoutes(route: Route, options: IssuingRoutesOptions): void {
  const { service, maxCount, guards } = options;
  route('/v1/sequences/:name/ids', {
    post: {
      guards,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const count = parseCount(req.query.count, maxCount);
        const ids = await service.issue(name, count, callerOf(req));
        // Content negotiation only when text/plain is mentioned at all: it is costly on the hot path.
        writeAnswer(
          res,
          idsAnswer(
            name,
            ids,
            mentionsPlainText(req.headers.accept) && req.accepts(['application/json', 'text/plain']) === 'text/plain',
          ),
        );
      },
    },
  });

  route('/v1/sequences/:name/next', {
    get: {
      guards,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const ids = await service.issue(name, 1, callerOf(req));
        writeAnswer(res, nextAnswer(name, ids));
      },
    },
  });
  // A strict sequence's follower forwards here, to the leader: one contiguous range per call.
  route('/v1/sequences/:name/strict-range', {
    post: {
      guards,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const count = parseCount(req.query.count, maxCount);
        const range = await service.strictRange(name, count, callerOf(req));
        writeAnswer(res, jsonAnswer(`{"sequence":"${name}","first":"${range.first}","last":"${range.last}"}`));
      },
    },
  });
  addLeaseRoutes(route, options);
}

/** The body of POST …/blocks/return: `{"lease","from"}`. */
function parseReturnBody(body: unknown): { lease: string; from: bigint } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequestError('body must be a JSON object with lease and from');
  const { lease, from, ...rest } = body as Record<string, unknown>;
  const unknownFields = Object.keys(rest);
  if (unknownFields.length > 0)
    throw new BadRequestError(`unknown field(s) ${unknownFields.join(', ')}; allowed: lease, from`);
  if (typeof lease !== 'string' || lease.length === 0 || lease.length > MAX_LEASE_LENGTH)
    throw new BadRequestError(
      `lease must be the string POST /blocks answered (at most ${MAX_LEASE_LENGTH} characters)`,
    );
  if (typeof from !== 'string' || !/^[0-9]{1,20}$/.test(from))
    throw new BadRequestError('from must be a decimal ID string, the first ID given back');
  return { lease, from: BigInt(from) };
}

/** Whole blocks for clients that hand their IDs out themselves, and an opaque sequence's key for its own clients. */
function addLeaseRoutes(route: Route, { service, guards, ownToken }: IssuingRoutesOptions): void {
  route('/v1/sequences/:name/blocks', {
    post: {
      guards,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const { ids } = await service.settings(name);
        // An ordered block of an opaque sequence shows its order: only a trusted client gets one.
        if (ids === 'opaque') ownToken(callerOf(req), name, 'blocks');
        const { block, lease } = await service.leaseBlock(name);
        const leaseField = lease === undefined ? '' : `,"lease":"${lease}"`;
        writeAnswer(
          res,
          jsonAnswer(
            `{"sequence":"${name}","first":"${block.first}","last":"${block.last}","ids":"${ids}"${leaseField}}`,
          ),
        );
      },
    },
  });

  // Same authorization as the lease itself: only a holder of the block's lease can give its IDs back.
  route('/v1/sequences/:name/blocks/return', {
    post: {
      guards,
      jsonBody: true,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const { ids } = await service.settings(name);
        if (ids === 'opaque') ownToken(callerOf(req), name, 'blocks');
        const { lease, from } = parseReturnBody(req.body);
        const returned = await service.returnBlock(name, lease, from);
        writeAnswer(res, jsonAnswer(`{"sequence":"${name}","returned":"${returned}"}`));
      },
    },
  });

  route('/v1/sequences/:name/id-key', {
    get: {
      guards,
      handler: async (req, res) => {
        const name = req.params.name as string;
        const settings = await service.settings(name);
        if (settings.key === undefined) throw new BadRequestError(`sequence ${name} has ordered IDs: there is no key`);
        ownToken(callerOf(req), name, 'the key');
        res.set('Cache-Control', 'no-store');
        const key = Buffer.from(settings.key).toString('base64url');
        // Clients of 0.4 read `key` and apply v1 whatever the scheme: only a v1 key goes there.
        const keyField = settings.scheme === FIRST_PERMUTATION_SCHEME ? { key } : { schemeKey: key };
        res.json({
          sequence: name,
          ids: settings.ids,
          scheme: settings.scheme,
          startAfter: String(settings.startAfter),
          maxId: String(settings.maxId),
          ...keyField,
        });
      },
    },
  });
}

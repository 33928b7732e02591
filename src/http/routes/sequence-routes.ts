/** The sequence routes: settings and state, creation, widening and retiring, the admin's decode and release. */
import type { AdminGuard } from '../admin-auth.js';
import { parseSequenceSettings, parseUnsigned, settingsToJson } from '../../core/sequence.js';
import { parseWidening } from '../../core/widening.js';
import { BadRequestError } from '../../core/errors.js';
import type { TicketService } from '../../service/ticket-service.js';
import type { Route } from '../router.js';
import { ERROR_SHOWN_TO_ADMIN, namesOf, strangerSequenceBackend } from '../backend-names.js';
import { withoutTickets, type AdminCheck } from '../visibility.js';
import { shown } from '../../util/error-text.js';

/**
 * Adds the sequence routes; `admin` guards what needs the admin token, `isAdmin` tells who may see
 * an opaque sequence's counts (visibility.ts).
 */
export function addSequenceRoutes(route: Route, service: TicketService, admin: AdminGuard, isAdmin: AdminCheck): void {
  addAdminRoutes(route, service, admin);
  route('/v1/sequences/:name', {
    get: async (req, res) => {
      const name = req.params.name as string;
      const { settings, cached } = await service.currentSettings(name);
      const admin = isAdmin(req);
      const names = namesOf(service);
      const backends = admin
        ? service.backendsFor(name)
        : service.backendsFor(name).map((b) => strangerSequenceBackend(b, names));
      if (settings.ids === 'opaque' && !admin) {
        res.json({
          ...settingsToJson(settings),
          cached,
          cache: null,
          capacity: null,
          backends: backends.map(withoutTickets),
          redacted: true,
        });
        return;
      }
      const leader = await service.strictLeader(name);
      res.json({
        ...settingsToJson(settings),
        ...(leader === undefined ? {} : { leader }),
        cached,
        cache: service.cacheStatus(name) ?? null,
        capacity: service.capacityStatus(name) ?? null,
        backends,
        redacted: false,
      });
    },
    put: {
      guards: [admin('create-sequence')],
      jsonBody: true,
      handler: async (req, res) => {
        const { created, settings } = await service.createFromRequest(
          parseSequenceSettings(req.params.name as string, req.body),
        );
        res.status(created ? 201 : 200).json(settingsToJson(settings));
      },
    },
    delete: {
      guards: [admin('retire-sequence')],
      handler: async (req, res) => {
        res.json(settingsToJson(await service.retire(req.params.name as string)));
      },
    },
    patch: {
      guards: [admin('widen-sequence')],
      jsonBody: true,
      handler: async (req, res) => {
        const maxId = parseWidening(req.body);
        res.json(settingsToJson(await service.widen(req.params.name as string, maxId)));
      },
    },
  });

  route('/v1/sequences', {
    get: async (req, res) => {
      const list = await service.listSequences();
      if (isAdmin(req)) {
        res.json({
          sequences: list.sequences.map((s) => ({ ...settingsToJson(s.settings), backends: s.backends })),
          unanswered: list.unanswered,
        });
        return;
      }
      const names = namesOf(service);
      res.json({
        sequences: list.sequences.map((s) => ({
          ...settingsToJson(s.settings),
          backends: s.backends.map((b) => names.nameOf(b)),
        })),
        unanswered: list.unanswered.map((u) => ({ backend: names.nameOf(u.backend), reason: ERROR_SHOWN_TO_ADMIN })),
      });
    },
  });
}

/** The admin's routes on one sequence: where an ID came from, and lifting a quarantine. */
function addAdminRoutes(route: Route, service: TicketService, admin: AdminGuard): void {
  route('/v1/sequences/:name/ids/:id', {
    get: {
      guards: [admin('decode-id')],
      handler: async (req, res) => {
        const name = req.params.name as string;
        const decoded = await service.decode(name, parseId(req.params.id));
        res.json({
          sequence: name,
          id: String(decoded.id),
          ids: decoded.ids,
          ordered: String(decoded.ordered),
          ticket: String(decoded.ticket),
          backend: decoded.backend ?? null,
        });
      },
    },
  });

  route('/v1/sequences/:name/release', {
    post: {
      guards: [admin('release-backend')],
      jsonBody: true,
      handler: async (req, res) => {
        const body = req.body as { backend?: unknown } | undefined;
        if (typeof body?.backend !== 'string' || body.backend === '') {
          throw new BadRequestError(
            'body must be a JSON object with backend: the backend as GET /v1/sequences/{name} names it (mysql://host:port/db), or its letter in TICKETD_BACKENDS (A, B, …)',
          );
        }
        res.json(await service.release(req.params.name as string, body.backend));
      },
    },
  });
}

function parseId(value: unknown): bigint {
  if (typeof value !== 'string' || !/^[0-9]{1,20}$/.test(value)) {
    throw new BadRequestError(`id must be a decimal integer from 1 to 18446744073709551615; got ${shown(value, 40)}`);
  }
  return parseUnsigned(value, 'id');
}

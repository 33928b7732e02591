/** Routes with their guards, a JSON body parser where they take one, and 405 for other methods. */
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { MethodNotAllowedError } from '../core/errors.js';
import { sendProblem } from './problem.js';

/** Largest request body accepted (PUT bodies are three small fields). */
export const BODY_LIMIT_BYTES = 16 * 1024;

const drainBody = express.raw({ limit: BODY_LIMIT_BYTES, type: () => true });

/**
 * A route that reads no body still reads one that is sent (within the same limit as PUT's, 413
 * past it), so a large upload is refused rather than accepted and dropped; a request without a
 * body costs two header lookups.
 */
function ignoreBody(req: Request, res: Response, next: NextFunction): void {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) next();
  else drainBody(req, res, next);
}

/** A route's handler; what it throws becomes a problem+json answer. */
export type Handler = (req: Request, res: Response) => Promise<void> | void;

/** A route's handler with what must run before it: guards, and a JSON body parser for admin bodies. */
export interface Spec {
  readonly handler: Handler;
  readonly guards?: readonly RequestHandler[];
  readonly jsonBody?: boolean;
}

/** Adds a path with a handler (or spec) per method. */
export type Route = (path: string, specs: Record<string, Handler | Spec>) => void;

/** The `route` function for an app. */
export function router(app: Express): Route {
  return (path, specs) => {
    const allowed = Object.keys(specs).map((m) => m.toUpperCase());
    for (const [method, given] of Object.entries(specs)) {
      const spec: Spec = typeof given === 'function' ? { handler: given } : given;
      const wrapped = (req: Request, res: Response, next: NextFunction): void => {
        Promise.resolve(spec.handler(req, res)).catch(next);
      };
      const body =
        spec.jsonBody === true
          ? [express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: () => true })]
          : [ignoreBody];
      app[method as 'get' | 'post' | 'put'](path, ...(spec.guards ?? []), ...body, wrapped);
    }
    app.all(path, (req, res) => {
      res.set('Allow', allowed.join(', '));
      sendProblem(
        res,
        new MethodNotAllowedError(`${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`),
      );
    });
  };
}

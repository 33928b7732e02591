/** The request listener of the public port: the issuing routes' fast path, then the Express app. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_MAX_COUNT } from '../config/load-config.js';
import { createApp, type AppOptions } from './app.js';
import { createAudit } from './audit.js';
import { createFastPath } from './fast-path.js';
import { problemView } from './backend-names.js';
import { issuingGuards } from './issuing-guards.js';

/** Handles one request. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The app, with the fast path ahead of it sharing its guards and counting. Access logs (pino-http,
 * at debug level) are written inside Express: with them on, every request goes through Express.
 */
export function createListener(options: AppOptions): RequestListener {
  const guards =
    options.issuingGuards ?? issuingGuards(options.credentials, options.rateLimitPerSecond, options.countCaller);
  const app = createApp({ ...options, issuingGuards: guards });
  if (options.logger.isLevelEnabled('debug')) return app;
  const { service } = options;
  const shownTo = problemView(service);
  const fast = createFastPath({
    audit: createAudit(options.logger),
    service,
    guards,
    maxCount: options.maxCount ?? DEFAULT_MAX_COUNT,
    logger: options.logger,
    observe: options.observe,
    shownTo,
  });
  return (req, res) => {
    if (!fast(req, res)) app(req, res);
  };
}

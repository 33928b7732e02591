import { Credentials } from '../../src/http/credentials.js';
import { createApp } from '../../src/http/app.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { silentLogger } from '../../src/logger.js';
import type { TicketService } from '../../src/service/ticket-service.js';

/** Every route the app serves (path and method) must be in the OpenAPI document, and no more. */
describe('OpenAPI document', () => {
  it('describes exactly the routes the app serves', () => {
    // The app is only inspected, never called, so no service is needed behind it.
    const app = createApp({
      service: {} as TicketService,
      logger: silentLogger,
      credentials: new Credentials({ adminTokens: [], clientTokens: new Map() }),
      metrics: { contentType: 'text/plain', render: async () => '' },
    });
    const served = new Set<string>();
    for (const layer of (
      app.router as unknown as { stack: { route?: { path: string; methods: Record<string, boolean> } }[] }
    ).stack) {
      const route = layer.route;
      // app.all (the 405 answer for other methods) registers every method: not a route of its own.
      if (route === undefined || Object.keys(route.methods).length > 5) continue;
      for (const [method, on] of Object.entries(route.methods)) {
        if (on && method !== '_all') served.add(`${method.toUpperCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`);
      }
    }
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(openApiDocument.paths)) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    expect([...served].sort()).toEqual([...documented].sort());
    expect(served.size).toBeGreaterThan(10);
  });
});

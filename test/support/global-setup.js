// Starts the backend pair shared by integration tests that do not disturb it (no kills, no stops).
// Jest loads this file without moduleNameMapper, so it uses the build that `npm test` makes first.
import { Allocator, TicketService, initBackends, loadConfig, silentLogger } from '../../dist/index.js';
import { settleDocker, startSharedPair } from './shared-pair.js';

export default async function globalSetup() {
  settleDocker();
  const pair = await startSharedPair();
  const config = loadConfig({ backends: pair.backendsUrl });
  const setup = new Allocator({ backends: config.backends, logger: silentLogger });
  const service = new TicketService({ allocator: setup, logger: silentLogger });
  await initBackends(setup, service);
  await service.close();
  process.env.TICKETD_TEST_BACKENDS = pair.backendsUrl;
  globalThis.__ticketdSharedPair = pair;
}

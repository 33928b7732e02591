// Starts the backend pair shared by integration tests that do not disturb it (no kills, no stops).
// Jest loads this file without moduleNameMapper, so it uses the build that `npm test` makes first.
import { Allocator, TicketService, initBackends, loadConfig, silentLogger } from '../../dist/index.js';
import { engineName, findServerBinaries } from '../../dist/launcher/server-binary.js';
import { settleDocker, startSharedPair } from './shared-pair.js';

export default async function globalSetup() {
  sayEngines();
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

/** Says once which engines the conformance set (test/support/engines.ts) runs on. */
function sayEngines() {
  const engines = findServerBinaries(process.env);
  const names = engines.map(
    (e) => `${engineName(e)}${e.root === undefined ? '' : ` (from the root file system ${e.root})`}`,
  );
  console.log(`ticketd tests: engines found: ${names.join(', ') || 'none'}; the engine conformance set runs on each`);
  const missing = ['mariadb', 'mysql'].filter((f) => !engines.some((e) => e.flavor === f));
  if (missing.length > 0) {
    console.log(
      `ticketd tests: no ${missing.map((f) => (f === 'mysql' ? 'Oracle MySQL' : 'MariaDB')).join(' or ')} here, so the conformance set does not run on it (bash test/support/mysql-root.sh prepares MySQL 9.7; under CI the engines test fails)`,
    );
  }
}

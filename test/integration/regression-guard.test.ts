import { loadConfig } from '../../src/config/load-config.js';
import type { LocalPair } from '../../src/launcher/local-pair.js';
import { silentLogger } from '../../src/logger.js';
import { startTicketd, type RunningTicketd } from '../../src/server.js';
import {
  killConnections,
  postIds,
  putSequence,
  runCliAsync,
  sqlOn,
  startPrivatePair,
  TEST_ADMIN_TOKEN,
} from '../support/ticketd.js';

const SEQUENCE = 'restore_me';

/** What a restore from an old backup does to a ticket table: same name, counter far lower. */
async function restoreFromOldBackup(serverUrl: string): Promise<void> {
  await sqlOn(
    serverUrl,
    `DROP TABLE tickets_${SEQUENCE}`,
    `CREATE TABLE tickets_${SEQUENCE} (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, stub CHAR(1) NOT NULL DEFAULT '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=InnoDB`,
  );
}

describe('regression guard: a backend whose counter goes back', () => {
  let pair: LocalPair & { dispose(): Promise<void> };
  const seen = new Set<string>();
  let issued = 0;

  const start = (onRegression = 'advance'): Promise<RunningTicketd> =>
    startTicketd({
      config: loadConfig({ backends: pair.backendsUrl, port: '0', adminToken: TEST_ADMIN_TOKEN, onRegression }),
      logger: silentLogger,
      host: '127.0.0.1',
    });

  const issue = async (server: RunningTicketd, requests: number): Promise<string[]> => {
    const fresh: string[] = [];
    for (let i = 0; i < requests; i++) {
      // Large requests, so that refills (not the cache) serve most of them.
      for (const id of await postIds(server.url, SEQUENCE, 1000)) {
        seen.add(id);
        fresh.push(id);
      }
      issued += 1000;
    }
    return fresh;
  };

  beforeAll(async () => {
    pair = await startPrivatePair();
  });

  afterAll(async () => {
    await pair?.dispose();
  });

  it('a running ticketd refuses the regressed tickets and advances the counter past its mark', async () => {
    const server = await start();
    try {
      expect(await putSequence(server.url, SEQUENCE, { blockSize: 10 })).toBe(201);
      await issue(server, 20);
      await restoreFromOldBackup(pair.a.url);
      await issue(server, 20);
      expect(seen.size).toBe(issued);
      const a = server.service.backendStatus()[0]!;
      expect(a.stats.regressions).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it('a ticketd started after the restore catches it from the claims held by the peer', async () => {
    await restoreFromOldBackup(pair.a.url);
    const server = await start();
    try {
      await issue(server, 20);
      expect(seen.size).toBe(issued);
      expect(server.service.backendStatus()[0]!.stats.regressions).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it('with TICKETD_ON_REGRESSION=quarantine the backend is kept out for the sequence, and IDs come from the other', async () => {
    await restoreFromOldBackup(pair.a.url);
    const server = await start('quarantine');
    try {
      const fresh = await issue(server, 20);
      expect(seen.size).toBe(issued);
      const a = server.service.backendsFor(SEQUENCE)[0]!;
      expect(a.quarantined).toMatch(/below ticket \d+/);
      // After the first refused refill, every ticket is even: backend B's.
      const tickets = fresh.slice(-500).map((id) => BigInt(id) / 10n);
      expect(tickets.every((t) => t % 2n === 0n)).toBe(true);

      // Lifted without a restart: the CLI asks the running server, which re-checks A against the
      // claims on B, advances it past them, and uses it again.
      const released = await runCliAsync(['release', SEQUENCE, a.backend, '--server', server.url], {
        TICKETD_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      });
      expect(released.stdout).toMatch(
        /released .* \(was quarantined; next ticket \d+, highest claimed \d+; counter advanced to \d+\)/,
      );
      expect(released.status).toBe(0);
      expect(server.service.backendsFor(SEQUENCE)[0]!.quarantined).toBeNull();
      const after = await issue(server, 20);
      expect(seen.size).toBe(issued);
      expect(after.some((id) => (BigInt(id) / 10n) % 2n === 1n)).toBe(true);
      // A second release finds nothing to do, and an unknown backend is a 404 problem.
      const again = await runCliAsync(['release', SEQUENCE, a.backend, '--server', server.url], {
        TICKETD_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      });
      expect(again.stdout).toMatch(/was not quarantined; .*counter already past every claim/);
      const unknown = await runCliAsync(['release', SEQUENCE, 'mysql://nowhere:1/x', '--server', server.url], {
        TICKETD_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      });
      expect(unknown.status).toBe(1);
      expect(unknown.stdout).toMatch(/TICKETD_UNKNOWN_BACKEND: backend mysql:\/\/nowhere:1\/x is not configured/);
    } finally {
      await server.close();
    }
  });

  it('a backend restarted with another offset is refused on its next connection, and never used', async () => {
    const server = await start();
    try {
      await issue(server, 5);
      // Same as a server restarted without its option file: new sessions get offset 1, like A.
      await sqlOn(pair.b.url, 'SET GLOBAL auto_increment_offset = 1');
      await killConnections(pair.b.url);
      const fresh = await issue(server, 20);
      expect(seen.size).toBe(issued);
      const b = server.service.backendStatus()[1]!;
      expect(b.lastError).toMatch(/auto_increment_offset=1(, same as|; it had 16\/2)/);
      // The last IDs all come from A (odd tickets): B's tickets are not trusted any more.
      expect(fresh.slice(-1000).every((id) => (BigInt(id) / 10n) % 2n === 1n)).toBe(true);
    } finally {
      await sqlOn(pair.b.url, 'SET GLOBAL auto_increment_offset = 2');
      await server.close();
    }
  });
});

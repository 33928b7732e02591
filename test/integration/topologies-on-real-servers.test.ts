// docs/operating.md, "Topologies", on real servers: a Galera node (galera-4, bootstrapped as a
// one-node cluster) is refused with wsrep_auto_increment_control=ON and serves as one backend with
// it OFF; a read-only server is refused. Group Replication and TiDB need servers this machine does
// not have: their recognition is unit-tested (server-checks.test.ts).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  backendOptionFile,
  findServerBinary,
  freePort,
  startLocalServer,
  type LocalServer,
} from '../../src/launcher/local-mysql.js';
import { runCliAsync, spawnTicketd, type ChildTicketd } from '../support/ticketd.js';

const GALERA_LIBRARIES = [
  '/usr/lib/galera/libgalera_smm.so',
  '/usr/lib/libgalera_smm.so',
  '/usr/lib64/galera-4/libgalera_smm.so',
  '/usr/lib/galera-4/libgalera_smm.so',
];

describe('topologies on real servers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-topology-'));
  const binary = findServerBinary(process.env.TICKETD_MYSQLD, process.env.PATH);
  const galera = binary.flavor === 'mariadb' ? GALERA_LIBRARIES.find((p) => existsSync(p)) : undefined;
  const servers: LocalServer[] = [];
  let child: ChildTicketd | undefined;

  beforeAll(() => {
    if (galera === undefined)
      console.log(`the Galera cases do not run: no galera-4 library (${GALERA_LIBRARIES[0]}) for MariaDB here`);
  });

  afterAll(async () => {
    await child?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (name: string, file: string, extraArgs: string[]): Promise<LocalServer> => {
    const server = await startLocalServer({
      name,
      optionFile: backendOptionFile(file),
      dir: join(dir, name),
      binary,
      extraArgs,
    });
    servers.push(server);
    return server;
  };
  const galeraNode = async (name: string, control: 'ON' | 'OFF'): Promise<LocalServer> =>
    start(name, 'a', [
      '--wsrep-on=ON',
      `--wsrep-provider=${galera}`,
      '--wsrep-cluster-address=gcomm://',
      `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${await freePort()}`,
      '--wsrep-node-address=127.0.0.1',
      '--binlog-format=ROW',
      '--innodb-autoinc-lock-mode=2',
      `--wsrep-auto-increment-control=${control}`,
    ]);

  it('refuses a Galera node that rewrites the offsets', async () => {
    if (galera === undefined) return;
    const [node, b] = [await galeraNode('galera-control', 'ON'), await start('b-control', 'b', [])];
    const check = await runCliAsync(['check'], { TICKETD_BACKENDS: `${node.url},${b.url}` });
    expect(check.status).toBe(1);
    expect(check.stdout).toContain(
      `problem: backend mysql://127.0.0.1:${node.port}/ticketd has wsrep_on=ON with wsrep_auto_increment_control=ON; Galera rewrites auto_increment_offset per node`,
    );
  }, 120_000);

  it('serves from one Galera node as one backend when it keeps the offsets', async () => {
    if (galera === undefined) return;
    const [node, b] = [await galeraNode('galera', 'OFF'), await start('b', 'b', [])];
    const backends = `${node.url},${b.url}`;
    expect((await runCliAsync(['init'], { TICKETD_BACKENDS: backends })).status).toBe(0);
    expect((await runCliAsync(['check'], { TICKETD_BACKENDS: backends })).stdout).toContain('ok: 2 backends checked');
    child = await spawnTicketd(backends);
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${child.url}/v1/sequences/default/ids?count=1000`, { method: 'POST' });
      expect(res.status).toBe(200);
      for (const id of ((await res.json()) as { ids: string[] }).ids) ids.add(id);
    }
    expect(ids.size).toBe(20_000);
  }, 120_000);

  it('refuses a read-only server (a replica behind the address)', async () => {
    const [a, b] = [await start('a-ro', 'a', ['--read-only=ON']), await start('b-ro', 'b', [])];
    const check = await runCliAsync(['check'], { TICKETD_BACKENDS: `${a.url},${b.url}` });
    expect(check.status).toBe(1);
    expect(check.stdout).toContain(
      `problem: backend mysql://127.0.0.1:${a.port}/ticketd has read_only=ON (a replica?); name the writable server`,
    );
  }, 120_000);
});

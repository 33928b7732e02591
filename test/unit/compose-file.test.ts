import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * docker/compose.yml and docker/Dockerfile, read as files: the invariants ticketd relies on, and the
 * ones that keep the file working everywhere (docker-compose 1.29, loopback, image variables).
 * test/integration/compose-demo-on-docker.test.ts runs the file on a real engine.
 */
interface Service {
  volumes?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  command?: string[];
}

const composeText = readFileSync('docker/compose.yml', 'utf8');
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service>; name?: string };
const services = compose.services;

function optionFile(service: string): Record<string, string> {
  const mount = services[service]!.volumes!.find((v) => v.includes('/etc/mysql/conf.d/'))!;
  const path = mount.split(':')[0]!.replace(/^\.\.\//, '');
  const options: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^\s*([a-z_]+)\s*=\s*(\S+)/.exec(line);
    if (match) options[match[1]!] = match[2]!;
  }
  return options;
}

describe('docker/compose.yml', () => {
  const a = optionFile('mysql-a');
  const b = optionFile('mysql-b');

  it('gives the two MySQL services distinct offsets and the same increment, from the sql/ option files', () => {
    expect(a.auto_increment_offset).toBeDefined();
    expect(a.auto_increment_offset).not.toBe(b.auto_increment_offset);
    expect(a.auto_increment_increment).toBe(b.auto_increment_increment);
    expect(Number(a.auto_increment_increment)).toBeGreaterThanOrEqual(2);
  });

  it('turns the durability settings on for both', () => {
    for (const options of [a, b]) {
      expect(options.innodb_flush_log_at_trx_commit).toBe('1');
      expect(options.sync_binlog).toBe('1');
    }
  });

  it('points TICKETD_BACKENDS at both MySQL services, for init and serve', () => {
    for (const name of ['ticketd', 'ticketd-init']) {
      const backends = services[name]!.environment!.TICKETD_BACKENDS!.split(',');
      expect(backends.map((u) => new URL(u).host).sort()).toEqual(['mysql-a:3306', 'mysql-b:3306']);
    }
  });

  it('has ports and healthchecks, and starts ticketd only after init succeeded on healthy backends', () => {
    expect(services.ticketd!.ports).toEqual(['127.0.0.1:${TICKETD_HTTP_PORT:-8080}:8080']);
    for (const name of ['mysql-a', 'mysql-b', 'ticketd'])
      expect(services[name]!.healthcheck!.test.length).toBeGreaterThan(1);
    expect(services['ticketd-init']!.depends_on).toEqual({
      'mysql-a': { condition: 'service_healthy' },
      'mysql-b': { condition: 'service_healthy' },
    });
    expect(services.ticketd!.depends_on).toEqual({ 'ticketd-init': { condition: 'service_completed_successfully' } });
  });

  it('publishes every port on loopback only: the file carries the root password and the admin token', () => {
    const ports = Object.values(services).flatMap((s) => s.ports ?? []);
    expect(ports).toHaveLength(3);
    for (const port of ports) expect(port).toMatch(/^127\.0\.0\.1:/);
  });

  it('has no top-level name (docker-compose 1.29 refuses it) and takes its images from variables', () => {
    expect(compose.name).toBeUndefined();
    expect(composeText).toContain('image: ${TICKETD_MYSQL_IMAGE:-mysql:8.4}');
    expect(composeText).toContain('NODE_IMAGE: ${TICKETD_NODE_IMAGE:-node:20-slim}');
  });
});

describe('docker/Dockerfile', () => {
  const dockerfile = readFileSync('docker/Dockerfile', 'utf8');

  it('is a multi-stage build onto an empty base that runs as a non-root user, with a health check on /healthz', () => {
    expect(dockerfile.match(/^FROM \$\{NODE_IMAGE\}/gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^FROM scratch$/m);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20-slim$/m);
    expect(dockerfile).toMatch(/^USER 10001:10001$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*healthcheck\.mjs/m);
    expect(readFileSync('docker/healthcheck.mjs', 'utf8')).toMatch(/'\/healthz'/);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "dist\/cli\/main.js"\]$/m);
  });
});

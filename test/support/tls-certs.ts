/**
 * Certificates for the TLS tests, made with openssl in a temp directory: a CA, a server
 * certificate for 127.0.0.1 and localhost, one for another name, a second CA nobody trusts, and a
 * client certificate, all signed by the first CA unless said otherwise.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Paths of the PEM files. */
export interface TestCertificates {
  readonly dir: string;
  readonly ca: string;
  readonly otherCa: string;
  readonly server: { readonly cert: string; readonly key: string };
  /** The same CA, for the name other.example only. */
  readonly otherName: { readonly cert: string; readonly key: string };
  /** A second server certificate for 127.0.0.1 (a rotation swaps to it). */
  readonly rotated: { readonly cert: string; readonly key: string };
  readonly client: { readonly cert: string; readonly key: string; readonly subject: string };
  dispose(): void;
}

/** The subject of the client certificate, as MariaDB's REQUIRE SUBJECT compares it. */
export const CLIENT_SUBJECT = '/CN=ticketd-client/O=ticketd tests';

function openssl(dir: string, args: string[]): void {
  const run = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${run.stderr}`);
}

/** Makes every certificate; dispose() removes them. */
export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'ticketd-certs-'));
  const ca = (name: string, subject: string): void =>
    openssl(dir, [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-subj',
      subject,
    ]);
  const signed = (name: string, subject: string, san: string | undefined): void => {
    openssl(dir, [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      subject,
    ]);
    const ext = join(dir, `${name}.ext`);
    writeFileSync(
      ext,
      san === undefined ? 'extendedKeyUsage=clientAuth\n' : `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`,
    );
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      ext,
    ]);
  };
  ca('ca', '/CN=ticketd test CA');
  ca('other-ca', '/CN=untrusted test CA');
  signed('server', '/CN=localhost', 'IP:127.0.0.1,DNS:localhost');
  signed('other-name', '/CN=other.example', 'DNS:other.example');
  signed('rotated', '/CN=localhost rotated', 'IP:127.0.0.1,DNS:localhost');
  signed('client', CLIENT_SUBJECT, undefined);
  const pair = (name: string): { cert: string; key: string } => ({
    cert: join(dir, `${name}.pem`),
    key: join(dir, `${name}.key`),
  });
  return {
    dir,
    ca: join(dir, 'ca.pem'),
    otherCa: join(dir, 'other-ca.pem'),
    server: pair('server'),
    otherName: pair('other-name'),
    rotated: pair('rotated'),
    client: { ...pair('client'), subject: CLIENT_SUBJECT },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** mariadbd options that serve TLS with a certificate and refuse plaintext. */
export function tlsServerArgs(certs: TestCertificates, server: { cert: string; key: string } = certs.server): string[] {
  return [
    `--ssl-ca=${certs.ca}`,
    `--ssl-cert=${server.cert}`,
    `--ssl-key=${server.key}`,
    '--require-secure-transport=ON',
  ];
}

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBackendUrl } from '../../src/backend/backend-address.js';
import { mysqlSsl, type BackendTls } from '../../src/backend/backend-tls.js';
import { loadConfig } from '../../src/config/load-config.js';
import { makeCertificates, type TestCertificates } from '../support/tls-certs.js';

describe('TLS settings of a backend URL', () => {
  let dir: string;
  let ca: string;
  let notPem: string;
  let certs: TestCertificates;
  let caPem: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ticketd-tls-settings-'));
    ca = join(dir, 'ca.pem');
    certs = makeCertificates();
    caPem = readFileSync(certs.ca, 'utf8');
    writeFileSync(ca, caPem);
    notPem = join(dir, 'not.pem');
    writeFileSync(notPem, '-----BEGIN CERTIFICATE-----\n');
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    certs.dispose();
  });

  const tlsOf = (url: string, defaults = {}): BackendTls | string => {
    const parsed = parseBackendUrl(url, defaults);
    return typeof parsed === 'string' ? parsed : parsed.tls;
  };

  it('takes the mysql client words, in any case, with PREFERRED as the default', () => {
    expect(tlsOf('mysql://db/t')).toEqual({ mode: 'PREFERRED' });
    expect(tlsOf(`mysql://db/t?ssl-mode=verify_identity&ssl-ca=${ca}`)).toEqual({ mode: 'VERIFY_IDENTITY', ca });
    expect(tlsOf('mysql://db/t?ssl-mode=Disabled')).toEqual({ mode: 'DISABLED' });
  });

  it('lets a URL parameter win over TICKETD_BACKEND_SSL_*', () => {
    expect(tlsOf('mysql://db/t', { mode: 'REQUIRED', ca })).toEqual({ mode: 'REQUIRED', ca });
    expect(tlsOf('mysql://db/t?ssl-mode=DISABLED', { mode: 'REQUIRED' })).toEqual({ mode: 'DISABLED' });
  });

  it('refuses what it does not know or cannot use, never ignoring it', () => {
    expect(tlsOf('mysql://db/t?sslmode=require')).toMatch(
      /unknown parameter "sslmode"; allowed: ssl-mode, ssl-ca, ssl-cert, ssl-key, ssl, name$/,
    );
    expect(tlsOf('mysql://db/t?ssl-mode=REQUIRED&ssl-mode=DISABLED')).toMatch(/ssl-mode is given more than once/);
    expect(tlsOf('mysql://u:pw@db/t?ssl-mode=sometimes')).toMatch(
      /^mysql:\/\/u:\*\*\*@db\/t\?ssl-mode=sometimes: ssl-mode must be one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY/,
    );
    expect(tlsOf(`mysql://db/t?ssl-mode=VERIFY_CA&ssl-cert=${ca}`)).toMatch(/ssl-cert and ssl-key go together/);
    expect(tlsOf(`mysql://db/t?ssl-mode=DISABLED&ssl-ca=${ca}`)).toMatch(/ssl-mode=DISABLED with ssl-ca/);
    expect(tlsOf('mysql://db/t?ssl-ca=/no/such.pem')).toMatch(/ssl-ca=\/no\/such\.pem cannot be read \(ENOENT\)/);
    expect(tlsOf('mysql://db/t?ssl=yes')).toMatch(/ssl must be a JSON object/);
    expect(tlsOf(`mysql://db/t?ssl={}&ssl-mode=REQUIRED`)).toMatch(/cannot be combined/);
  });

  it('hands ssl={json} to mysql2 as given, and maps each mode to what it verifies', () => {
    const json = tlsOf(`mysql://db/t?ssl=${encodeURIComponent('{"rejectUnauthorized":true}')}`) as BackendTls;
    expect(json.mode).toBe('VERIFY_CA');
    expect(mysqlSsl(json)).toEqual({ rejectUnauthorized: true, verifyIdentity: false });
    expect(mysqlSsl({ mode: 'DISABLED' })).toBeUndefined();
    expect(mysqlSsl({ mode: 'REQUIRED' })).toEqual({ rejectUnauthorized: false, verifyIdentity: false });
    expect(mysqlSsl({ mode: 'VERIFY_CA', ca })).toEqual({ rejectUnauthorized: true, verifyIdentity: false, ca: caPem });
    expect(() => mysqlSsl({ mode: 'VERIFY_CA', ca: notPem })).toThrow(
      /^ssl-mode=VERIFY_CA ssl-ca=\S+not\.pem: the files do not hold a usable certificate and key/,
    );
    expect(tlsOf(`mysql://db/t?ssl-mode=VERIFY_CA&ssl-ca=${notPem}`)).toMatch(
      /the files do not hold a usable certificate and key/,
    );
    expect(mysqlSsl({ mode: 'VERIFY_IDENTITY' })).toEqual({ rejectUnauthorized: true, verifyIdentity: true });
  });

  it('reads the defaults from TICKETD_BACKEND_SSL_* and names them when they are wrong', () => {
    expect(
      loadConfig({ backends: 'mysql://db/t', backendSslMode: 'verify_ca', backendSslCa: ca }).backends[0]!.tls,
    ).toEqual({ mode: 'VERIFY_CA', ca });
    expect(() => loadConfig({ backends: 'mysql://db/t', backendSslMode: 'always' })).toThrow(
      /^TICKETD_BACKEND_SSL_\*: TICKETD_BACKEND_SSL_MODE must be one of/,
    );
  });
});

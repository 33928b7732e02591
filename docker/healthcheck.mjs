// The image's health check: GET /healthz (or the path given) on this container's own ticketd, over
// HTTPS when TICKETD_TLS_CERT is set and plain HTTP otherwise, on TICKETD_PORT (default 8080).
// Exit 0 on a 2xx, 1 otherwise (Docker's contract). It talks to its own process on loopback, so it
// does not verify the server's certificate: the certificate names the service, not 127.0.0.1, and
// its trust is the clients' concern. Under TICKETD_TLS_CLIENT_CA, give it a client certificate
// (TICKETD_HEALTHCHECK_CERT and TICKETD_HEALTHCHECK_KEY, PEM files).
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const path = process.argv[2] ?? '/healthz';
const port = Number(process.env.TICKETD_PORT || 8080);
const tls = Boolean(process.env.TICKETD_TLS_CERT);
const clientCert = process.env.TICKETD_HEALTHCHECK_CERT;
const clientKey = process.env.TICKETD_HEALTHCHECK_KEY;
const options = { host: '127.0.0.1', port, path, timeout: 1500 };
if (tls) {
  options.rejectUnauthorized = false;
  if (clientCert && clientKey) {
    options.cert = readFileSync(clientCert);
    options.key = readFileSync(clientKey);
  }
}
const req = (tls ? httpsRequest : httpRequest)(options, (res) => {
  res.resume();
  process.exit(res.statusCode >= 200 && res.statusCode < 300 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error('timed out')));
req.on('error', (error) => {
  console.error(`healthcheck: ${tls ? 'https' : 'http'}://127.0.0.1:${port}${path}: ${error.message}`);
  process.exit(1);
});
req.end();

/**
 * Every port a `serve --workers 2` process tree listens on, found from /proc (not from what ticketd
 * says it opened): each binds to TICKETD_HOST when it is set; without it the public port listens on
 * every interface and the peer ports on loopback only. The public port serves the API; every other
 * port (the workers' peer ports for strict sequences' forwarded calls) refuses anyone without the
 * fleet's peer proof, and with it serves the strict-range route only.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { loadConfig } from '../../src/config/load-config.js';
import { peerProof, PEER_PROOF_HEADER } from '../../src/service/peer-proof.js';
import { sharedBackends, spawnTicketd, type ChildTicketd } from '../support/ticketd.js';

interface Listening {
  readonly address: string;
  readonly port: number;
}

/** The process and its descendants. */
function processTree(pid: number): number[] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((x) => x !== '')
      .map(Number),
  );
  return [pid, ...children.flatMap(processTree)];
}

/** Socket inodes a process holds open. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match !== null) inodes.add(match[1]!);
    } catch {
      // closed between the listing and the read
    }
  }
  return inodes;
}

/** TCP sockets in LISTEN state (0A) from /proc/net/tcp and tcp6, by inode. */
function listeningSockets(): Map<string, Listening> {
  const found = new Map<string, Listening>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== '0A') continue;
      const [hexAddress, hexPort] = fields[1]!.split(':') as [string, string];
      found.set(fields[9]!, { address: decodeAddress(hexAddress), port: parseInt(hexPort, 16) });
    }
  }
  return found;
}

/** /proc/net/tcp writes an IPv4 address as one little-endian word; IPv6 as four. */
function decodeAddress(hex: string): string {
  if (hex.length === 8) return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
  return hex === '0'.repeat(32) ? '::' : `ipv6:${hex}`;
}

/** The ports the process tree of `ticketd` listens on, by port. */
function listeningPorts(ticketd: ChildTicketd): Listening[] {
  const tree = processTree(ticketd.process.pid!);
  expect(tree.length).toBeGreaterThanOrEqual(3);
  const sockets = listeningSockets();
  const ours = new Map<number, Listening>();
  for (const pid of tree)
    for (const inode of socketInodes(pid))
      if (sockets.has(inode)) ours.set(sockets.get(inode)!.port, sockets.get(inode)!);
  return [...ours.values()];
}

/** Starts `serve --workers 2` and waits until both workers listen. */
async function twoWorkers(backends: string, env: Record<string, string>): Promise<ChildTicketd> {
  const ticketd = await spawnTicketd(backends, { TICKETD_WORKERS: '2', ...env });
  // Both workers listen (each logs it) before the ports are counted.
  const until = Date.now() + 20_000;
  while (ticketd.logs.filter((l) => l.includes('"msg":"ticketd listening"')).length < 2 && Date.now() < until)
    await new Promise((r) => setTimeout(r, 100));
  return ticketd;
}

describe('listeners without TICKETD_HOST: the public port on every interface, the peer ports on loopback', () => {
  let ticketd: ChildTicketd;
  const backends = sharedBackends();

  beforeAll(async () => {
    ticketd = await twoWorkers(backends, {});
  });
  afterAll(async () => {
    await ticketd?.stop();
  });

  it('binds each peer port to 127.0.0.1, never to every interface', () => {
    const publicPort = Number(new URL(ticketd.url).port);
    const listening = listeningPorts(ticketd);
    expect(listening.length).toBe(3);
    const byPort = new Map(listening.map((l) => [l.port, l.address]));
    expect(['0.0.0.0', '::']).toContain(byPort.get(publicPort));
    const peers = listening.filter((l) => l.port !== publicPort).map((l) => l.address);
    expect(peers).toEqual(['127.0.0.1', '127.0.0.1']);
  });
});

describe("listeners: the public port on the operator's address, peer ports for peers only", () => {
  let ticketd: ChildTicketd;
  const backends = sharedBackends();

  beforeAll(async () => {
    ticketd = await twoWorkers(backends, { TICKETD_HOST: '127.0.0.1' });
  });
  afterAll(async () => {
    await ticketd?.stop();
  });

  it('finds every listening port of the process tree and asks each of them', async () => {
    const publicPort = Number(new URL(ticketd.url).port);
    const listening = listeningPorts(ticketd);
    // The public port, and one peer port per worker.
    expect(listening.map((l) => l.port)).toContain(publicPort);
    expect(listening.length).toBe(3);
    expect(listening.map((l) => l.address)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);

    const proof = peerProof(undefined, loadConfig({ backends }).backends);
    for (const { port } of listening) {
      const base = `http://127.0.0.1:${port}`;
      const next = await fetch(`${base}/v1/sequences/default/next`);
      const metrics = await fetch(`${base}/metrics`);
      const strictRange = await fetch(`${base}/v1/sequences/default/strict-range?count=1`, { method: 'POST' });
      const wrongProof = await fetch(`${base}/v1/sequences/default/strict-range?count=1`, {
        method: 'POST',
        headers: { [PEER_PROOF_HEADER]: proof.replace(/^./, (c) => (c === '0' ? '1' : '0')) },
      });
      if (port === publicPort) {
        expect(next.status).toBe(200);
        expect(metrics.status).toBe(200);
        continue;
      }
      for (const refused of [next, metrics, strictRange, wrongProof]) {
        expect({ port, status: refused.status }).toEqual({ port, status: 403 });
        // Marked as the peer port's refusal, so a follower never passes it on as its client's own.
        expect(refused.headers.get('x-ticketd-peer-refused')).toBe('refused');
        expect(((await refused.json()) as { code: string }).code).toBe('TICKETD_FORBIDDEN');
      }
      // A peer is served the strict-range route (an ordered sequence has no strict ranges: 400), and nothing else.
      const asPeer = await fetch(`${base}/v1/sequences/default/strict-range?count=1`, {
        method: 'POST',
        headers: { [PEER_PROOF_HEADER]: proof },
      });
      expect({ port, code: ((await asPeer.json()) as { code: string }).code }).not.toEqual({
        port,
        code: 'TICKETD_FORBIDDEN',
      });
      expect(asPeer.status).not.toBe(200);
      const peerNext = await fetch(`${base}/v1/sequences/default/next`, { headers: { [PEER_PROOF_HEADER]: proof } });
      expect({ port, status: peerNext.status }).toEqual({ port, status: 404 });
    }
  });
});

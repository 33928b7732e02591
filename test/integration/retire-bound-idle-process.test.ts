/**
 * The retire bound holds for an idle process (docs/reference.md, "Retiring"): a `ticketd serve
 * --workers 2` that served an ordered, an opaque and a strict sequence on every route, then got no
 * request at all while the CLI retired them, refuses each on every route and in both workers when
 * asked RETIRE_BOUND_MS later. Before its rechecks ran on a timer, each worker read a sequence
 * again only when asked for it, and served it once more from memory.
 */
import { request } from 'node:http';
import { loadConfig } from '../../src/config/load-config.js';
import { RETIRE_BOUND_MS } from '../../src/service/sequence-entry.js';
import { peerProof, PEER_PROOF_HEADER } from '../../src/service/peer-proof.js';
import {
  putSequence,
  runCliAsync,
  sharedBackends,
  spawnTicketd,
  TEST_ADMIN_TOKEN,
  type ChildTicketd,
} from '../support/ticketd.js';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
/** The opaque sequence's own client token: its blocks and key go only to holders of it. */
const OWN_TOKEN = 'idle-opaque-client-token-0123456789';
const own = { authorization: `Bearer ${OWN_TOKEN}` };
const asPeer = { [PEER_PROOF_HEADER]: peerProof(undefined, loadConfig({ backends: sharedBackends() }).backends) };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One request on a connection of its own, so that the cluster hands successive ones to the workers in turn. */
function fresh(
  method: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const req = request(url, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

/** The workers (pids) that answered a request for `sequence` with `status`, as the request log lines say, from line `from` on. */
function workersThatAnswered(logs: readonly string[], sequence: string, status: number, from = 0): Set<number> {
  const pids = new Set<number>();
  for (const line of logs.slice(from)) {
    if (!line.includes(`/v1/sequences/${sequence}/`)) continue;
    const entry = JSON.parse(line) as { pid?: number; req?: { url?: string }; res?: { statusCode?: number } };
    if (
      entry.req?.url?.startsWith(`/v1/sequences/${sequence}/`) &&
      entry.res?.statusCode === status &&
      entry.pid !== undefined
    )
      pids.add(entry.pid);
  }
  return pids;
}

interface Probe {
  readonly label: string;
  readonly method: string;
  readonly url: () => string;
  readonly headers?: Record<string, string>;
}

describe('the retire bound, for an idle process', () => {
  let ticketd: ChildTicketd;
  const suffix = process.pid;
  const ordered = `idle_ordered_${suffix}`;
  const opaque = `idle_opaque_${suffix}`;
  const strict = `idle_strict_${suffix}`;
  /** An ID of each sequence, for the admin's decode route. */
  const issued = new Map<string, string>();
  let leaderUrl = '';

  beforeAll(async () => {
    // Request lines are logged at debug, with the pid of the worker that answered.
    ticketd = await spawnTicketd(sharedBackends(), {
      TICKETD_WORKERS: '2',
      TICKETD_CLIENT_TOKENS: `${opaque}:${OWN_TOKEN}`,
      TICKETD_LOG_LEVEL: 'debug',
    });
    for (let i = 0; i < 100 && ticketd.logs.filter((l) => l.includes('"msg":"ticketd listening"')).length < 2; i++)
      await sleep(100);
  });

  afterAll(async () => {
    await ticketd?.stop('SIGTERM');
  });

  it('refuses every route in every worker within RETIRE_BOUND_MS, though no request came meanwhile', async () => {
    const listening = new Set(
      ticketd.logs
        .filter((l) => l.includes('"msg":"ticketd listening"'))
        .map((l) => (JSON.parse(l) as { pid: number }).pid),
    );
    expect(listening.size).toBe(2);
    expect(await putSequence(ticketd.url, ordered, { blockSize: 100_000 })).toBe(201);
    expect(await putSequence(ticketd.url, opaque, { blockSize: 100_000, ids: 'opaque' })).toBe(201);
    expect(await putSequence(ticketd.url, strict, { blockSize: 1, ids: 'strict' })).toBe(201);
    for (const name of [ordered, opaque, strict]) {
      const first = JSON.parse(
        (await fresh('GET', `${ticketd.url}/v1/sequences/${name}/next`, name === opaque ? own : {})).body,
      ) as { id: string };
      issued.set(name, first.id);
    }
    const shown = JSON.parse((await fresh('GET', `${ticketd.url}/v1/sequences/${strict}`)).body) as {
      leader: { url: string } | null;
    };
    leaderUrl = shown.leader?.url ?? '';
    expect(leaderUrl).not.toBe('');

    const on =
      (name: string, path: string): (() => string) =>
      () =>
        `${ticketd.url}/v1/sequences/${name}${path}`;
    const probes: Probe[] = [
      ...[ordered, opaque, strict].flatMap((name): Probe[] => [
        { label: `${name} ids`, method: 'POST', url: on(name, '/ids?count=3'), headers: name === opaque ? own : {} },
        { label: `${name} next`, method: 'GET', url: on(name, '/next'), headers: name === opaque ? own : {} },
      ]),
      ...[ordered, opaque].flatMap((name): Probe[] => [
        { label: `${name} blocks`, method: 'POST', url: on(name, '/blocks'), headers: name === opaque ? own : {} },
        { label: `${name} decode`, method: 'GET', url: () => on(name, `/ids/${issued.get(name)}`)(), headers: admin },
      ]),
      { label: `${opaque} id-key`, method: 'GET', url: on(opaque, '/id-key'), headers: own },
      // Forwarded calls go to the leader's own listener (a follower answers 421 whatever happens),
      // which serves only callers with the fleet's peer proof (derived here from TICKETD_BACKENDS).
      {
        label: `${strict} strict-range`,
        method: 'POST',
        url: () => `${leaderUrl}/v1/sequences/${strict}/strict-range?count=2`,
        headers: asPeer,
      },
    ];

    // Each route, four times on fresh connections: both workers serve each sequence from memory.
    for (const probe of probes) {
      for (let i = 0; i < 4; i++) {
        const answer = await fresh(probe.method, probe.url(), probe.headers);
        expect({ probe: probe.label, status: answer.status }).toEqual({ probe: probe.label, status: 200 });
      }
    }

    // Both workers hold each sequence (the strict one: the leader's and a follower's).
    for (const name of [ordered, opaque, strict]) expect(workersThatAnswered(ticketd.logs, name, 200).size).toBe(2);
    const probedFrom = ticketd.logs.length;

    // Retired by another process; then not one request to this one until the bound has passed.
    for (const name of [ordered, opaque, strict]) {
      const retired = await runCliAsync(['sequences', 'retire', name], { TICKETD_BACKENDS: sharedBackends() });
      expect(retired.status).toBe(0);
    }
    // Counted from the last retirement's answer: the others have had longer.
    const retiredAt = Date.now();
    await sleep(RETIRE_BOUND_MS + 200);

    const served: string[] = [];
    for (const probe of probes) {
      for (let i = 0; i < 4; i++) {
        const answer = await fresh(probe.method, probe.url(), probe.headers);
        if (answer.status !== 410) served.push(`${probe.label}: ${answer.status} ${answer.body.slice(0, 120)}`);
        else expect((JSON.parse(answer.body) as { code: string }).code).toBe('TICKETD_SEQUENCE_RETIRED');
      }
    }
    console.log(
      `retired while idle: ${probes.length} routes × 4 fresh connections over 2 workers asked ${Date.now() - retiredAt} ms after the CLI's retire; answered other than 410: ${served.length === 0 ? 'none' : served.join('; ')}`,
    );
    expect(served).toEqual([]);
    for (const name of [ordered, opaque, strict])
      expect(workersThatAnswered(ticketd.logs, name, 410, probedFrom).size).toBe(2);
  }, 60_000);
});

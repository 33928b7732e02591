/**
 * Scenario 10: what a strict sequence costs (docs/strict-sequences.md). Two `ticketd serve`
 * processes of their own on the run's backends: the first to ask leads the strict sequence, the
 * other forwards to it. Rows in rounds, each strict row beside the ordered one it is compared with:
 * next through the leader, next through the follower, count=100 through the leader. Then the
 * failover stall: the leader killed (-9) under load on the follower, until the follower's first
 * answer to a request sent after the kill.
 */
import type { ChildProcess } from 'node:child_process';
import type { HttpResult, Load } from './load.js';
import { serveTicketd } from './processes.js';

/** A row of scenario 10 and the row it is compared with. */
export interface StrictPair {
  readonly what: string;
  readonly ordered: HttpResult;
  readonly strict: HttpResult;
}

/** What scenario 10 measured. */
export interface StrictResults {
  readonly pairs: StrictPair[];
  /** Milliseconds from the leader's kill -9 to the first answer to a request sent after it, per kill. */
  readonly failoverStallMs: number[];
  /** Answers other than 200 during the failover runs (503 after the wait for a leader, refused connections). */
  readonly failoverRefused: number;
}

const ROUNDS = 2;
const SEQUENCE = 'strict_bench';

/** Runs scenario 10 on the run's backends; `load` is the run's own load function. */
export async function measureStrict(load: Load, backendsUrl: string, adminToken: string): Promise<StrictResults> {
  const children = new Set<ChildProcess>();
  const serve = async (): Promise<{ url: string; child: ChildProcess }> => {
    const { url, child } = await serveTicketd({ TICKETD_BACKENDS: backendsUrl, TICKETD_ADMIN_TOKEN: adminToken });
    children.add(child);
    child.once('exit', () => children.delete(child));
    return { url, child };
  };
  try {
    let leader = await serve();
    let follower = await serve();
    const created = await fetch(`${leader.url}/v1/sequences/${SEQUENCE}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ blockSize: 1000, ids: 'strict' }),
    });
    if (created.status !== 201)
      throw new Error(`creating ${SEQUENCE} answered ${created.status}: ${await created.text()}`);
    // The first to ask leads.
    await expectLeader(leader.url);
    const pairs: StrictPair[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const orderedNext = await load({
        name: 'ordered, next',
        url: `${leader.url}/v1/sequences/default/next`,
        idsPerResponse: 1,
        check: true,
      });
      pairs.push({
        what: 'next, through the leader',
        ordered: orderedNext,
        strict: await load({
          name: 'strict, next through the leader',
          url: `${leader.url}/v1/sequences/${SEQUENCE}/next`,
          idsPerResponse: 1,
          check: true,
        }),
      });
      pairs.push({
        what: 'next, through a follower',
        ordered: orderedNext,
        strict: await load({
          name: 'strict, next through a follower',
          url: `${follower.url}/v1/sequences/${SEQUENCE}/next`,
          idsPerResponse: 1,
          check: true,
        }),
      });
      const ordered100 = await load({
        name: 'ordered, count=100',
        url: `${leader.url}/v1/sequences/default/ids?count=100`,
        method: 'POST',
        idsPerResponse: 100,
        check: true,
      });
      pairs.push({
        what: 'count=100, through the leader',
        ordered: ordered100,
        strict: await load({
          name: 'strict, count=100 through the leader',
          url: `${leader.url}/v1/sequences/${SEQUENCE}/ids?count=100`,
          method: 'POST',
          idsPerResponse: 100,
          check: true,
        }),
      });
    }
    const failoverStallMs: number[] = [];
    let failoverRefused = 0;
    for (let kill = 0; kill < 2; kill++) {
      const stalled = await stallAfterKill(leader.child, follower.url);
      failoverStallMs.push(stalled.stallMs);
      failoverRefused += stalled.refused;
      // The follower leads now; a new process takes the killed one's place as its follower.
      await expectLeader(follower.url);
      [leader, follower] = [follower, await serve()];
    }
    return { pairs, failoverStallMs, failoverRefused };
  } finally {
    for (const child of children) child.kill('SIGKILL');
  }
}

/** Waits until the front end at `url` leads the strict sequence (it asks for IDs until GET shows it). */
async function expectLeader(url: string): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    await fetch(`${url}/v1/sequences/${SEQUENCE}/next`);
    const shown = (await (await fetch(`${url}/v1/sequences/${SEQUENCE}`)).json()) as {
      leader?: { self?: boolean } | null;
    };
    if (shown.leader?.self === true) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come to lead ${SEQUENCE} within 10 s`);
}

/** Under a load of 8 callers on the follower, kills the leader; how long until a request sent after the kill is answered. */
async function stallAfterKill(
  leader: ChildProcess,
  followerUrl: string,
): Promise<{ stallMs: number; refused: number }> {
  const kill: { at?: number } = {};
  let answeredAt: number | undefined;
  let refused = 0;
  const stopAt = performance.now() + 15_000;
  const caller = async (): Promise<void> => {
    while (answeredAt === undefined && performance.now() < stopAt) {
      const sentAt = performance.now();
      try {
        const res = await fetch(`${followerUrl}/v1/sequences/${SEQUENCE}/next`, {
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        if (res.status !== 200) refused++;
        else if (kill.at !== undefined && sentAt > kill.at) answeredAt ??= performance.now();
      } catch {
        refused++;
      }
    }
  };
  const callers = Array.from({ length: 8 }, () => caller());
  await new Promise((r) => setTimeout(r, 1000));
  kill.at = performance.now();
  leader.kill('SIGKILL');
  await Promise.all(callers);
  if (answeredAt === undefined) throw new Error('no answer from the follower within 15 s of the leader being killed');
  return { stallMs: Math.round(answeredAt - kill.at), refused };
}

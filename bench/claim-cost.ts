/**
 * What a claim costs: per chunk of 16 tickets, the run of REPLACEs on one backend against the
 * claim of those tickets on its peer (one multi-row INSERT plus the floor read, one round trip),
 * and against the high-water mark upsert of ticketd 0.2 that claims replaced, all in one run.
 */
import mysql from 'mysql2/promise';
import { Backend } from '../src/backend/mysql/backend.js';
import { DEFAULT_BACKEND_OPTIONS } from '../src/backend/backend-options.js';
import type { BackendAddress } from '../src/backend/backend-address.js';

/** Median and p99 milliseconds of one step. */
export interface StepCost {
  readonly name: string;
  readonly medianMs: number;
  readonly p99Ms: number;
}

const CHUNK = 16;
const ROUNDS = 300;

/** Times each step ROUNDS times on the pair; `sequence` must exist with its ticket tables. */
export async function measureClaimCost(
  a: BackendAddress,
  b: BackendAddress,
  bUrl: string,
  sequence: string,
): Promise<StepCost[]> {
  const source = new Backend(a, () => undefined, DEFAULT_BACKEND_OPTIONS);
  const peer = new Backend(b, () => undefined, DEFAULT_BACKEND_OPTIONS);
  const legacy = await mysql.createConnection(bUrl);
  const stripe = await source.settings();
  const times = { replace: [] as number[], claim: [] as number[], mark: [] as number[] };
  const time = async (into: number[], step: () => Promise<unknown>): Promise<void> => {
    const start = process.hrtime.bigint();
    await step();
    into.push(Number(process.hrtime.bigint() - start) / 1e6);
  };
  try {
    for (let i = 0; i < ROUNDS; i++) {
      let tickets: bigint[] = [];
      await time(times.replace, async () => {
        const batch = await source.fetchTickets(sequence, CHUNK);
        if (batch.error !== undefined) throw new Error('fetching tickets failed', { cause: batch.error });
        tickets = batch.tickets;
      });
      await time(times.claim, () => peer.claimTickets({ sequence, stripe, tickets, source: 'bench' }));
      const highest = String(tickets[tickets.length - 1]);
      await time(times.mark, () =>
        legacy.query(
          'INSERT INTO ticketd_marks (sequence, stripe_increment, stripe_residue, ticket, backend_id) VALUES (?, 2, 1, ?, ?) ' +
            'ON DUPLICATE KEY UPDATE backend_id = IF(VALUES(ticket) > ticket, VALUES(backend_id), backend_id), ticket = GREATEST(ticket, VALUES(ticket))',
          [sequence, highest, 'bench'],
        ),
      );
    }
    await legacy.query('DELETE FROM ticketd_marks WHERE sequence = ?', [sequence]);
  } finally {
    await legacy.end();
    await Promise.all([source.close(), peer.close()]);
  }
  return [
    summarise(`${CHUNK} REPLACEs on one backend (one chunk)`, times.replace),
    summarise(`claim of those ${CHUNK} tickets on the peer (INSERT + floor read)`, times.claim),
    summarise('0.2 high-water mark upsert on the peer (replaced by the claim)', times.mark),
  ];
}

function summarise(name: string, ms: number[]): StepCost {
  const sorted = [...ms].sort((x, y) => x - y);
  const at = (q: number): number =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100;
  return { name, medianMs: at(0.5), p99Ms: at(0.99) };
}

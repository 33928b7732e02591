/** Claims and their floors (core/claims.ts says what they mean). */
import type { ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import type { ClassClaims } from '../../core/claims.js';
import type { ClaimHistory } from '../../core/fence.js';
import { residueOf, type ResidueClass, type Stripe } from '../../core/stripes.js';
import { TicketClaimedBeforeError } from '../../core/errors.js';
import type { Claim } from '../ticket-backend.js';
import { isDuplicateKey } from './errors.js';
import type { Db } from './pool.js';

/** Claims pruned per DELETE, so that a first prune of a large table does not hold locks for long. */
const PRUNE_DELETE_BATCH = 10_000;

/**
 * Claims the tickets in one multi-row INSERT, then reads the floors in the same round trip and
 * returns them (the lane judges them). The floor is read after the insert: a prune commits its
 * floor before it deletes any claim, so a ticket whose old claim was pruned away meets the floor,
 * and one whose old claim is still there meets the duplicate key.
 */
export async function claimTickets(db: Db, claim: Claim): Promise<ClassClaims[]> {
  if (claim.tickets.length === 0) return [];
  const residue = String(residueOf(claim.stripe));
  const values = claim.tickets.flatMap((t) => [
    claim.sequence,
    String(t),
    String(claim.stripe.increment),
    residue,
    claim.source,
  ]);
  let floors: RowDataPacket[];
  try {
    const [results] = await db.withConnection((conn) =>
      conn.query<RowDataPacket[][]>({
        sql:
          `INSERT INTO ticketd_claims (sequence, ticket, stripe_increment, stripe_residue, backend_id) VALUES ${claim.tickets.map(() => '(?, ?, ?, ?, ?)').join(', ')}; ` +
          'SELECT stripe_increment AS inc, stripe_residue AS residue, MAX(floor_ticket) AS floor FROM ticketd_claim_floors WHERE sequence = ? GROUP BY stripe_increment, stripe_residue',
        values: [...values, claim.sequence],
        timeout: db.options.claimTimeoutMs,
      }),
    );
    floors = results[1] ?? [];
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    throw new TicketClaimedBeforeError(
      `backend ${db.label} already holds a claim for one of tickets ${claim.tickets[0]}..${claim.tickets[claim.tickets.length - 1]} of sequence ${claim.sequence}`,
      'duplicate',
      { cause: error },
    );
  }
  return floors.map(toClassClaims);
}

/** Highest claim and floor per residue class of a sequence, in one round trip. */
export async function readClaims(db: Db, sequence: string): Promise<ClassClaims[]> {
  const [results] = await db.withConnection((conn) =>
    conn.query<RowDataPacket[][]>({
      sql:
        'SELECT stripe_increment AS inc, stripe_residue AS residue, MAX(ticket) AS highest FROM ticketd_claims WHERE sequence = ? GROUP BY stripe_increment, stripe_residue; ' +
        'SELECT stripe_increment AS inc, stripe_residue AS residue, MAX(floor_ticket) AS floor FROM ticketd_claim_floors WHERE sequence = ? GROUP BY stripe_increment, stripe_residue',
      values: [sequence, sequence],
      timeout: db.options.queryTimeoutMs,
    }),
  );
  const byClass = new Map<string, ClassClaims>();
  for (const row of [...(results[0] ?? []), ...(results[1] ?? [])]) {
    const c = toClassClaims(row);
    const key = `${c.increment}/${c.residue}`;
    const known = byClass.get(key);
    byClass.set(key, { ...c, highest: known?.highest ?? c.highest, floor: known?.floor ?? c.floor });
  }
  return [...byClass.values()];
}

/** Adds a floor for a residue class of a sequence; a lower floor already there stays, and the class's floor is the MAX. */
export async function addFloor(db: Db, sequence: string, cls: ResidueClass, floor: bigint): Promise<void> {
  await db.withConnection((conn) =>
    conn.query({
      sql: 'INSERT IGNORE INTO ticketd_claim_floors (sequence, stripe_increment, stripe_residue, floor_ticket) VALUES (?, ?, ?, ?)',
      values: [sequence, String(cls.increment), String(cls.residue), String(floor)],
      timeout: db.options.queryTimeoutMs,
    }),
  );
}

/** The kept claims of a sequence per residue class: their tickets' range, and their times by this server's clock. */
export async function readClaimHistory(db: Db, sequence: string): Promise<ClaimHistory[]> {
  const [rows] = await db.withConnection((conn) =>
    conn.query<RowDataPacket[]>({
      sql:
        'SELECT stripe_increment AS inc, stripe_residue AS residue, MIN(ticket) AS lowest, MAX(ticket) AS highest, COUNT(*) AS claims, ' +
        'TIMESTAMPDIFF(MICROSECOND, MIN(claimed_at), MAX(claimed_at)) AS span_us, TIMESTAMPDIFF(MICROSECOND, MAX(claimed_at), NOW(3)) AS age_us ' +
        'FROM ticketd_claims WHERE sequence = ? GROUP BY stripe_increment, stripe_residue',
      values: [sequence],
      timeout: db.options.queryTimeoutMs,
    }),
  );
  return rows.map((r) => ({
    increment: BigInt(String(r.inc)),
    residue: BigInt(String(r.residue)),
    lowest: BigInt(String(r.lowest)),
    highest: BigInt(String(r.highest)),
    claims: Number(r.claims),
    spanMs: Number(r.span_us) / 1000,
    // A claim "in the future" (a clock set back since) counts as just made.
    ageMs: Math.max(0, Number(r.age_us) / 1000),
  }));
}

/** Milliseconds since the newest claim of any sequence, by this server's clock; undefined when it holds none. */
export async function newestClaimAgeMs(db: Db): Promise<number | undefined> {
  const [rows] = await db.withConnection((conn) =>
    conn.query<RowDataPacket[]>({
      sql: 'SELECT TIMESTAMPDIFF(MICROSECOND, MAX(claimed_at), NOW(3)) AS age_us FROM ticketd_claims',
      timeout: db.options.queryTimeoutMs,
    }),
  );
  const age: unknown = rows[0]?.age_us;
  return age === null || age === undefined ? undefined : Math.max(0, Number(age) / 1000);
}

/**
 * Keeps the newest `keep` claims of the stripe's class. The floor is committed before any claim
 * is deleted, so no ticket is ever neither claimed nor below the floor.
 */
export function pruneClaims(db: Db, sequence: string, stripe: Stripe, keep: number): Promise<bigint | undefined> {
  const cls = [sequence, String(stripe.increment), String(residueOf(stripe))];
  const timeout = db.options.ddlTimeoutMs;
  return db.withConnection(async (conn) => {
    const [rows] = await conn.query<RowDataPacket[]>({
      sql: 'SELECT ticket FROM ticketd_claims WHERE sequence = ? AND stripe_increment = ? AND stripe_residue = ? ORDER BY ticket DESC LIMIT 1 OFFSET ?',
      values: [...cls, keep],
      timeout,
    });
    if (rows[0] === undefined) return undefined;
    const floor = BigInt(String(rows[0].ticket));
    await conn.query({
      sql: 'INSERT IGNORE INTO ticketd_claim_floors (sequence, stripe_increment, stripe_residue, floor_ticket) VALUES (?, ?, ?, ?)',
      values: [...cls, String(floor)],
      timeout,
    });
    for (;;) {
      const [deleted] = await conn.query<ResultSetHeader>({
        sql: `DELETE FROM ticketd_claims WHERE sequence = ? AND stripe_increment = ? AND stripe_residue = ? AND ticket <= ? LIMIT ${PRUNE_DELETE_BATCH}`,
        values: [...cls, String(floor)],
        timeout,
      });
      if (deleted.affectedRows < PRUNE_DELETE_BATCH) break;
    }
    await conn.query({
      sql: 'DELETE FROM ticketd_claim_floors WHERE sequence = ? AND stripe_increment = ? AND stripe_residue = ? AND floor_ticket < ?',
      values: [...cls, String(floor)],
      timeout,
    });
    return floor;
  });
}

function toClassClaims(row: RowDataPacket): ClassClaims {
  const value = (v: unknown): bigint | undefined =>
    v === null || v === undefined ? undefined : BigInt(v as string | number | bigint);
  return {
    increment: BigInt(String(row.inc)),
    residue: BigInt(String(row.residue)),
    highest: value(row.highest),
    floor: value(row.floor),
  };
}

/**
 * Growing and shrinking the fleet (docs/operating.md, "Growing and shrinking the fleet"): each step
 * of adding or removing a backend, what to run for it, and whether the backends show it done. The
 * allocator holds the fleet as it is, with the backend joining or leaving last.
 */
import type { Allocator } from '../allocator/allocator.js';
import { backendLetter } from '../backend/backend-address.js';
import type { SequenceSettings } from '../core/sequence.js';
import { classesOverlap, residueOf, type ServerSettings } from '../core/stripes.js';
import { newerNeeded } from '../core/versions.js';
import { ConfigError, FleetChangeRefusedError } from '../core/errors.js';
import { errorText } from '../util/error-text.js';

/** The increment a fleet grows into by default: room for 16 backends without re-striping again. */
export const HEADROOM_INCREMENT = 16n;

/** One step of a procedure: what to do, and whether the backends show it done (front ends cannot be seen from here). */
export interface FleetStep {
  readonly title: string;
  readonly state: 'done' | 'to do' | 'not visible here';
  readonly how: readonly string[];
}

/** The procedure for adding a backend. */
export interface AddPlan {
  readonly increment: bigint;
  readonly offset: bigint;
  readonly steps: readonly FleetStep[];
  /** Steps 1 and 3 are done: the new backend may be seeded. */
  readonly seedable: boolean;
}

type Reading = {
  readonly label: string;
  readonly settings?: ServerSettings;
  readonly sequences: readonly SequenceSettings[];
  readonly error?: string;
};

/**
 * Plans adding the allocator's last backend to the others; reads, changes nothing. `urls` name the
 * backends in the printed commands, in the allocator's order.
 */
export async function planAdd(
  allocator: Allocator,
  wantedIncrement: bigint | undefined,
  urls: readonly string[],
): Promise<AddPlan> {
  const url = urls[urls.length - 1]!;
  const readings = await readFleet(allocator);
  const joining = readings[readings.length - 1]!;
  const current = readings.slice(0, -1);
  const unread = current.find((r) => r.settings === undefined);
  if (unread !== undefined)
    throw new FleetChangeRefusedError(
      `backend ${unread.label} did not answer (${unread.error}); every backend of the fleet must answer to plan a change`,
    );
  const increments = current.map((r) => r.settings!.increment);
  const increment = targetIncrement(increments, readings.length, wantedIncrement);
  const offsets = current.map((r) => r.settings!.offset % increment);
  const own = joining.settings;
  const offset =
    own !== undefined && own.increment === increment && !offsets.includes(own.offset % increment)
      ? own.offset
      : firstFreeOffset(offsets, increment);
  const allLabels = urls.join(',');
  const restriped = current.every((r) => r.settings!.increment === increment);
  const joined =
    own !== undefined &&
    own.increment === increment &&
    own.offset === offset &&
    own.flushLogAtTrxCommit === 1 &&
    own.syncBinlog === 1;
  const seeded = restriped && joined && (await isSeeded(allocator, joining, current));
  const steps: FleetStep[] = [
    {
      title: `every backend at auto_increment_increment=${increment}, its offset unchanged (front ends keep serving: each backend moves into a narrower class inside its own)`,
      state: restriped ? 'done' : 'to do',
      how: current.flatMap((r, i) =>
        r.settings!.increment === increment
          ? []
          : [
              `${backendLetter(i)} ${r.label}: SET GLOBAL auto_increment_increment = ${increment}; and auto_increment_increment = ${increment} in its option file (now ${r.settings!.increment})`,
            ],
      ),
    },
    {
      title:
        'restart every front end, one at a time, with TICKETD_BACKENDS unchanged, so that no session still takes tickets in the wider classes',
      state: 'not visible here',
      how: [],
    },
    {
      title: `the new backend ${joining.label} at auto_increment_increment=${increment}, auto_increment_offset=${offset}, innodb_flush_log_at_trx_commit=1, sync_binlog=1, with its database`,
      state: joined ? 'done' : 'to do',
      how: joined
        ? []
        : [
            `its option file: auto_increment_increment = ${increment}, auto_increment_offset = ${offset}, innodb_flush_log_at_trx_commit = 1, sync_binlog = 1; then CREATE DATABASE (now: ${joining.error ?? describeStripe(own)})`,
          ],
    },
    {
      title:
        'seed it: the schema, every sequence (opaque ones with their keys), each counter above every ticket used anywhere',
      state: seeded ? 'done' : 'to do',
      how: seeded ? [] : [`npx ticketd backends add ${url} --increment ${increment} --seed`],
    },
    {
      title: `restart every front end, one at a time, with TICKETD_BACKENDS=${allLabels}; then npx ticketd check --backends ${allLabels}`,
      state: 'not visible here',
      how: [],
    },
  ];
  return { increment, offset, steps, seedable: restriped && joined };
}

/** Seeds the joining backend (step 4): refuses unless steps 1 and 3 are done. Returns the sequences and where their counters now start. */
export async function seedJoining(
  allocator: Allocator,
  plan: AddPlan,
): Promise<{ sequence: string; nextTicket: bigint }[]> {
  if (!plan.seedable) {
    const open = plan.steps.filter((s, i) => (i === 0 || i === 2) && s.state !== 'done').map((s) => s.title);
    throw new FleetChangeRefusedError(`the new backend is not seeded until these are done: ${open.join('; ')}`);
  }
  const readings = await readFleet(allocator);
  const joining = readings[readings.length - 1]!;
  const newer = union(readings.slice(0, -1)).find((s) => newerNeeded(s) !== undefined);
  if (newer !== undefined)
    throw new FleetChangeRefusedError(
      `sequence ${newer.name} needs ticketd ${newerNeeded(newer)} or later; seed the new backend with that version`,
    );
  await allocator.fleet.applySchemaOn(joining.label);
  const seeded: { sequence: string; nextTicket: bigint }[] = [];
  for (const settings of union(readings.slice(0, -1))) {
    await allocator.createSequence(settings);
    // Its class may hold tickets the others issued under the wider classes: start above them all.
    const next = (await allocator.fleet.highestTicketUsed(settings.name)) + 1n;
    await allocator.fleet.advanceOn(joining.label, settings.name, next);
    seeded.push({
      sequence: settings.name,
      nextTicket: await allocator.fleet.nextTicketOn(joining.label, settings.name),
    });
  }
  return seeded;
}

/** The procedure for removing the allocator's last backend; `urls` name the backends in the printed commands, in the allocator's order. */
export async function planRemove(allocator: Allocator, urls: readonly string[]): Promise<FleetStep[]> {
  const url = urls[urls.length - 1]!;
  const readings = await readFleet(allocator);
  const leaving = readings[readings.length - 1]!;
  const remaining = readings.slice(0, -1);
  const retired = leaving.settings !== undefined && (await floorsCover(allocator, leaving));
  return [
    {
      title: `restart every front end, one at a time, with TICKETD_BACKENDS=${urls.slice(0, -1).join(',')}`,
      state: 'not visible here',
      how: [],
    },
    {
      title: `floors of its class on the other backends at its counters, so its class is never used again below what it issued (tickets it served unclaimed included)`,
      state: retired ? 'done' : 'to do',
      how: retired
        ? []
        : leaving.settings === undefined
          ? [
              `it does not answer (${leaving.error}): its class is held only by its claims on the others; tickets it served unclaimed (TICKETD_CLAIMS=preferred with no peer) are not`,
            ]
          : [`npx ticketd backends remove ${url} --apply (after step 1)`],
    },
    {
      title: `its offset ${leaving.settings?.offset ?? '?'} may be given to a new backend later: npx ticketd backends add seeds it above these floors`,
      state: 'not visible here',
      how:
        remaining.length === 1
          ? [
              'one backend is left: no peer takes claims (TICKETD_CLAIMS=preferred serves on the process marks; required refuses); add another soon',
            ]
          : [],
    },
  ];
}

/** True when a floor of the leaving backend's class reaches its last ticket, for every sequence it has. */
async function floorsCover(allocator: Allocator, leaving: Reading): Promise<boolean> {
  const residue = residueOf(leaving.settings!);
  for (const s of leaving.sequences) {
    const last = (await allocator.fleet.nextTicketOn(leaving.label, s.name)) - 1n;
    const floors = (await allocator.fleet.claimsEverywhere(s.name)).filter(
      (c) => c.increment === leaving.settings!.increment && c.residue === residue,
    );
    if (last > 0n && !floors.some((c) => c.floor !== undefined && c.floor >= last)) return false;
  }
  return true;
}

/** Writes the leaving backend's floors on the others (step 2 of removing). Returns each sequence's floor. */
export async function retireLeaving(allocator: Allocator): Promise<{ sequence: string; floor: bigint }[]> {
  const readings = await readFleet(allocator);
  const leaving = readings[readings.length - 1]!;
  if (leaving.settings === undefined)
    throw new FleetChangeRefusedError(
      `backend ${leaving.label} does not answer (${leaving.error}); its floors are written from its own counters`,
    );
  const cls = { increment: leaving.settings.increment, residue: residueOf(leaving.settings) };
  const floors: { sequence: string; floor: bigint }[] = [];
  for (const s of leaving.sequences) {
    const floor = (await allocator.fleet.nextTicketOn(leaving.label, s.name)) - 1n;
    await allocator.fleet.addFloorEverywhereBut(leaving.label, s.name, cls, floor);
    floors.push({ sequence: s.name, floor });
  }
  return floors;
}

async function readFleet(allocator: Allocator): Promise<Reading[]> {
  return (await allocator.inspect()).map((a) =>
    a.ok
      ? { label: a.backend, settings: a.value.settings, sequences: a.value.sequences }
      : { label: a.backend, sequences: [], error: errorText(a.error) },
  );
}

/**
 * Seeded: it has every sequence, each counter above every claim and floor the fleet holds in a class
 * overlapping its own (tickets the others took under the wider classes before step 1). The others'
 * counters no longer count once their classes are disjoint from its.
 */
async function isSeeded(allocator: Allocator, joining: Reading, current: readonly Reading[]): Promise<boolean> {
  const wanted = union(current);
  if (wanted.some((s) => !joining.sequences.some((j) => j.name === s.name))) return false;
  const own = joining.settings!;
  for (const s of wanted) {
    let highest = 0n;
    for (const c of await allocator.fleet.claimsEverywhere(s.name)) {
      if (!classesOverlap(c, own)) continue;
      for (const t of [c.highest, c.floor]) if (t !== undefined && t > highest) highest = t;
    }
    if ((await allocator.fleet.nextTicketOn(joining.label, s.name)) <= highest) return false;
  }
  return true;
}

function union(readings: readonly Reading[]): SequenceSettings[] {
  const byName = new Map<string, SequenceSettings>();
  for (const r of readings) for (const s of r.sequences) if (!byName.has(s.name)) byName.set(s.name, s);
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function targetIncrement(increments: readonly bigint[], backendsAfter: number, wanted: bigint | undefined): bigint {
  const common = increments.reduce(lcm, 1n);
  if (wanted !== undefined) {
    if (wanted < BigInt(backendsAfter) || increments.some((i) => wanted % i !== 0n)) {
      throw new ConfigError(
        `--increment must be at least ${backendsAfter} and a multiple of every backend's increment (${[...new Set(increments)].join(', ')}); got ${wanted}`,
      );
    }
    return wanted;
  }
  if (common >= BigInt(backendsAfter)) return common;
  const floor = HEADROOM_INCREMENT > BigInt(backendsAfter) ? HEADROOM_INCREMENT : BigInt(backendsAfter);
  return ((floor + common - 1n) / common) * common;
}

function firstFreeOffset(taken: readonly bigint[], increment: bigint): bigint {
  for (let o = 1n; o <= increment; o++) if (!taken.includes(o % increment)) return o;
  throw new FleetChangeRefusedError(`every offset of increment ${increment} is taken: give a larger --increment`);
}

function describeStripe(s: ServerSettings | undefined): string {
  return s === undefined
    ? 'unknown'
    : `increment ${s.increment}, offset ${s.offset}, innodb_flush_log_at_trx_commit=${s.flushLogAtTrxCommit}, sync_binlog=${s.syncBinlog}`;
}

function lcm(a: bigint, b: bigint): bigint {
  let [x, y] = [a, b];
  while (y !== 0n) [x, y] = [y, x % y];
  return (a / x) * b;
}

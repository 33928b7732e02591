/**
 * `ticketd check`, also run by `serve` before it listens: every backend's offsets, increment,
 * durability, Galera, identity, ticket table engines and sequence settings, reported together.
 */
import type { Allocator } from '../allocator/allocator.js';
import { failureKind } from '../allocator/failure-kind.js';
import type { Inspection, PrivilegeProbe } from '../backend/ticket-backend.js';
import { describeSettings, onlyKeyDiffers, sameSettings } from '../core/sequence.js';
import { largestIncrement, serverProblems, stripeProblem, type Stripe } from '../core/stripes.js';
import { BackendTlsError, TicketdError } from '../core/errors.js';
import { gateFor, newerNeeded, THIS_VERSION } from '../core/versions.js';
import { errorText } from '../util/error-text.js';

/**
 * What kind of finding: `misconfigured` can make IDs repeat and stops `serve`; `unreachable` and
 * `incomplete` (a backend lacking a sequence or the schema) only make `check` fail; `info` says how
 * each backend is reached (TLS or plaintext).
 */
export type FindingKind = 'misconfigured' | 'unreachable' | 'incomplete' | 'warning' | 'info';

/** One line of the report, naming the backend and the setting. */
export interface Finding {
  readonly kind: FindingKind;
  readonly message: string;
}

/** How old the newest claim on every backend must be for check to mention the fence. */
export const STALE_CLAIMS_MS = 3_600_000;

type Observed = Inspection & { readonly label: string };

/** Runs every check against every backend, through the allocator; never throws for what it finds. */
export async function runChecks(allocator: Allocator, allowUnsafeDurability: boolean): Promise<Finding[]> {
  const findings: Finding[] = [];
  const up: Observed[] = [];
  for (const answer of await allocator.inspect()) {
    if (answer.ok) {
      up.push({ label: answer.backend, ...answer.value });
      continue;
    }
    const { error } = answer;
    // A server that answered with an error (access denied, unknown database) is not "down".
    const kind = failureKind(error);
    const answered = error instanceof TicketdError || kind !== 'no-answer';
    const reason = errorText(error);
    if (kind === 'unknown-database') {
      findings.push({
        kind: 'incomplete',
        message: `backend ${answer.backend} has no database ${answer.backend.replace(/^.*\//, '')}: create it (CREATE DATABASE), then run npx ticketd init`,
      });
      continue;
    }
    // A refused handshake names the backend and the setting already (TICKETD_BACKEND_TLS).
    const message =
      error instanceof BackendTlsError
        ? reason
        : answered
          ? `backend ${answer.backend} refused the connection: ${reason}`
          : `backend ${answer.backend} did not answer: ${reason}`;
    findings.push({ kind: 'unreachable', message });
  }
  checkTransport(up, findings);
  checkServers(up, allocator.backendCount, allowUnsafeDurability, findings);
  checkSequences(up, findings);
  checkPrivileges(up, findings);
  checkRestoredEverywhere(up, allocator.backendCount, findings);
  checkSharedServers(up, findings);
  return findings;
}

function checkServers(up: Observed[], backendCount: number, allowUnsafeDurability: boolean, findings: Finding[]): void {
  const increments = [...new Set(up.map((o) => o.settings.increment))];
  if (increments.length > 1) {
    // Disjoint classes are safe, but a fleet half re-striped has no room for the backend it is growing for.
    findings.push({
      kind: 'warning',
      message: `backends have different auto_increment_increment values (${increments.join(', ')}): finish moving every backend to ${largestIncrement(up.map((o) => o.settings))} (docs/operating.md, "Growing and shrinking the fleet")`,
    });
  }
  const pinned = new Map<string, Stripe>();
  const identities = new Map<string, string>();
  for (const o of up) {
    const stripe = stripeProblem(o.label, o.settings, pinned, backendCount);
    if (stripe !== undefined) findings.push({ kind: 'misconfigured', message: stripe });
    pinned.set(o.label, o.settings);
    const own = serverProblems(o.label, o.settings, allowUnsafeDurability);
    for (const message of own.fatal) findings.push({ kind: 'misconfigured', message });
    for (const message of own.warnings)
      findings.push({ kind: 'warning', message: `unsafe durability allowed: ${message}` });
    const identity = o.settings.identity;
    if (identity === undefined) {
      findings.push({
        kind: 'incomplete',
        message: `backend ${o.label} has no ticketd schema or identity; run npx ticketd init`,
      });
    } else if (identities.has(identity)) {
      findings.push({
        kind: 'misconfigured',
        message: `backend ${o.label} has identity ${identity}, same as ${identities.get(identity)} (a cloned data directory?)`,
      });
    } else {
      identities.set(identity, o.label);
    }
    const needs = newerNeeded(o.settings);
    if (needs !== undefined)
      findings.push({
        kind: 'misconfigured',
        message: `backend ${o.label} needs ticketd ${needs} or later; this is ${THIS_VERSION}`,
      });
    if (o.missingTables.length > 0) {
      // A backend initialised by an older ticketd: it cannot hold claims until init adds the tables.
      findings.push({
        kind: 'incomplete',
        message: `backend ${o.label} lacks ${o.missingTables.join(', ')} (schema of an older ticketd); run npx ticketd init`,
      });
    }
    for (const [sequence, engine] of o.engines) {
      if (engine.toLowerCase() !== 'innodb') {
        findings.push({
          kind: 'misconfigured',
          message: `backend ${o.label} has ticket table tickets_${sequence} with ENGINE=${engine}; it must be InnoDB (crash-safe)`,
        });
      }
    }
  }
}

/** How each backend is reached; beyond loopback, TLS that verifies nothing (REQUIRED, PREFERRED) and plaintext are warnings. */
function checkTransport(up: Observed[], findings: Finding[]): void {
  for (const o of up) {
    const how = o.transport.tls ? `${o.transport.version} (${o.transport.cipher})` : 'plaintext';
    findings.push({ kind: 'info', message: `backend ${o.label}: ${how}, ${o.tls.described}` });
    if (isLoopback(o.tls.host)) continue;
    if (o.transport.tls && (o.tls.mode === 'REQUIRED' || o.tls.mode === 'PREFERRED')) {
      findings.push({
        kind: 'warning',
        message: `backend ${o.label}: ssl-mode=${o.tls.mode} encrypts but verifies neither the certificate nor the name, so anyone on the path can pose as it; use VERIFY_IDENTITY (with ssl-ca when its CA is not a public one)`,
      });
    }
    if (!o.transport.tls) {
      findings.push({
        kind: 'warning',
        message: `backend ${o.label} is reached in plaintext (${o.tls.described}) beyond loopback: its password exchange and tickets cross the network unencrypted`,
      });
    }
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/**
 * Every backend restored from backups looks like this from inside: the newest claim anywhere is
 * old. An idle fleet looks the same, so it is a warning that names the runbook, not a refusal.
 */
function checkRestoredEverywhere(up: Observed[], backendCount: number, findings: Finding[]): void {
  if (up.length < backendCount) return;
  const ages = up.flatMap((o) => (o.newestClaimAgeMs === undefined ? [] : [o.newestClaimAgeMs]));
  if (ages.length === 0) return;
  const newest = Math.min(...ages);
  if (newest < STALE_CLAIMS_MS) return;
  findings.push({
    kind: 'warning',
    message: `the newest claim on any backend is ${(newest / 3_600_000).toFixed(1)} h old: if every backend was restored from backups, run npx ticketd fence before serving (docs/operating.md, "Restoring every backend")`,
  });
}

/**
 * auto_increment_increment and _offset are server-wide: other applications' AUTO_INCREMENT tables
 * on a backend's server stride by ticketd's increment too. Their IDs stay unique, so it is a warning.
 */
function checkSharedServers(up: Observed[], findings: Finding[]): void {
  for (const o of up) {
    if (o.sharedSchemas.length === 0) continue;
    const schemas = o.sharedSchemas.map(
      (s) => `${s.name} (${s.tables} AUTO_INCREMENT table${s.tables === 1 ? '' : 's'})`,
    );
    findings.push({
      kind: 'warning',
      message: `backend ${o.label} shares its server with other schemas: ${schemas.join(', ')}; auto_increment_increment=${o.settings.increment} and auto_increment_offset=${o.settings.offset} are server-wide, so their new rows stride by ${o.settings.increment} too: give ticketd a server (or an instance) of its own (docs/operating.md, "Topologies")`,
    });
  }
}

function checkSequences(up: Observed[], findings: Finding[]): void {
  const names = [...new Set(up.flatMap((o) => o.sequences.map((s) => s.name)))].sort();
  for (const name of names) {
    const holders = up.flatMap((o) =>
      o.sequences.filter((s) => s.name === name).map((s) => ({ label: o.label, s, engines: o.engines })),
    );
    const first = holders[0]!;
    for (const h of holders.slice(1)) {
      if (!sameSettings(h.s, first.s)) {
        // Never the keys themselves: only that they differ (two keys would permute into each other's IDs).
        findings.push({
          kind: 'misconfigured',
          message: onlyKeyDiffers(h.s, first.s)
            ? `sequence ${name} has another key on ${h.label} than on ${first.label}; their opaque IDs could collide, so neither is used for it until one is corrected`
            : `sequence ${name} has ${describeSettings(h.s)} on ${h.label} but ${describeSettings(first.s)} on ${first.label}`,
        });
      }
    }
    for (const o of up) {
      if (o.settings.identity !== undefined && !holders.some((h) => h.label === o.label)) {
        findings.push({
          kind: 'incomplete',
          message: `sequence ${name} is missing on backend ${o.label}, so it is not used for it; repeat the PUT (or npx ticketd sequences create) to complete it`,
        });
      }
    }
    for (const h of holders) {
      if (h.s.needsVersion === undefined && gateFor(h.s.ids) !== undefined) {
        findings.push({
          kind: 'incomplete',
          message: `sequence ${name} on backend ${h.label} is not gated: ticketd 0.3 and older would serve its IDs unpermuted; run npx ticketd init`,
        });
      }
      const needs = newerNeeded(h.s);
      if (needs !== undefined)
        findings.push({
          kind: 'warning',
          message: `sequence ${name} needs ticketd ${needs} or later; this ticketd (${THIS_VERSION}) refuses it`,
        });
      if (!h.engines.has(name))
        findings.push({
          kind: 'incomplete',
          message: `sequence ${name} has no ticket table tickets_${name} on backend ${h.label}`,
        });
    }
  }
}

/**
 * Each account's refusals, by feature. A feature in use (issuing and schema changes always, strict
 * sequences and worker leases once one exists) fails check; one not in use yet is said, so the grant
 * can come before the first strict sequence or pool.
 */
const FEATURE_WORDS: Record<PrivilegeProbe['feature'], string> = {
  issuing: 'issue IDs',
  'worker leases': 'lease worker IDs',
  'strict sequences': 'serve strict sequences',
  'schema changes': 'make schema changes',
};

function checkPrivileges(up: Observed[], findings: Finding[]): void {
  for (const o of up) {
    const inUse = new Set<string>(['issuing', 'schema changes']);
    if (o.sequences.some((s) => s.ids === 'strict')) inUse.add('strict sequences');
    if (o.workerPools > 0) inUse.add('worker leases');
    const byFeature = new Map<string, PrivilegeProbe[]>();
    for (const p of o.privileges)
      byFeature.set(`${p.account} ${p.feature}`, [...(byFeature.get(`${p.account} ${p.feature}`) ?? []), p]);
    for (const refused of byFeature.values()) {
      const { account, feature } = refused[0]!;
      // Without an admin account, the serving one lacking CREATE and ALTER is the documented setup.
      const documented = feature === 'schema changes' && account === 'serving';
      const used = inUse.has(feature);
      const missing = refused.map((p) => p.needs).join('; ');
      const consequence = documented
        ? ' (without TICKETD_ADMIN_BACKENDS, creating sequences is refused; advancing counters needs only the serving account)'
        : used
          ? ''
          : ' (not in use yet)';
      findings.push({
        kind: used && !documented ? 'incomplete' : 'info',
        message: `backend ${o.label}: the ${account} account cannot ${FEATURE_WORDS[feature]}${consequence}: it lacks ${missing} (${refused[0]!.error}); docs/operating.md, "Accounts and GRANTs"`,
      });
    }
  }
}

/**
 * The connection guard: every new connection to a backend (and every one again after a break or
 * an idle spell) is judged against what the other backends are pinned to, so a backend restarted
 * without its option file, or another server behind its address, is caught before it serves.
 */
import type { Logger } from '../logger.js';
import { judgeConnection, type ServerSettings, type Stripe } from '../core/stripes.js';
import { newerNeeded, THIS_VERSION } from '../core/versions.js';
import { BackendMisconfiguredError, UpgradeRequiredError } from '../core/errors.js';
import type { BackendSlot } from './backend-slot.js';

/** Throws when the connection to `label` may not be used; notes a usable one's settings on its slot. */
export function guardConnection(
  slots: readonly BackendSlot[],
  label: string,
  settings: ServerSettings,
  options: { readonly logger: Logger; readonly allowUnsafeDurability: boolean },
): void {
  const slot = slots.find((s) => s.label === label)!;
  const pinned = new Map<string, Stripe>();
  for (const s of slots) if (s.stripe !== undefined) pinned.set(s.label, s.stripe);
  const verdict = judgeConnection(label, settings, {
    pinned,
    backendCount: slots.length,
    allowUnsafeDurability: options.allowUnsafeDurability,
    knownIdentity: slot.identity,
  });
  if (verdict.problem !== undefined) throw new BackendMisconfiguredError(verdict.problem);
  const needs = newerNeeded(settings);
  if (needs !== undefined) {
    throw new UpgradeRequiredError(
      `backend ${label} needs ticketd ${needs} or later; this process is ${THIS_VERSION}: upgrade it (docs/operating.md, "Upgrades and rollbacks")`,
      'backend',
    );
  }
  if (verdict.identityChanged) {
    // Another server (or a re-initialised one) now answers at this URL: check it against the claims before use.
    options.logger.error({ backend: label, was: slot.identity, now: settings.identity }, 'backend identity changed');
  }
  if (slot.noteConnection(settings, verdict.identityChanged, verdict.warnings.length > 0)) {
    for (const warning of verdict.warnings)
      options.logger.warn({ backend: label }, `unsafe durability allowed: ${warning}`);
  }
}

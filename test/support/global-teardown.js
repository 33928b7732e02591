import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  const shared = globalThis.__ticketdSharedPair;
  if (shared === undefined) return;
  await shared.pair.stop();
  rmSync(shared.dir, { recursive: true, force: true });
}

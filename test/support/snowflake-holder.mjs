// A process that mints Snowflake IDs with ticketd-client's createSnowflake, for the tests that
// pause, kill and skew real processes. Plain JavaScript on the built client, so it runs under
// `faketime` and `kill -9` like any service would.
//
//   node snowflake-holder.mjs <dir> <name> <pool> <url>[,<url>…] [idsPerTick] [sync|next] [leaseWaitMs]
//
// `sync` (the default) mints with nextSync() after ready() (leaseWaitMs 0 unless given); `next` with
// `await next()`, which waits for a lease by itself (up to leaseWaitMs), writing each ID as it comes.
//
// Every lease gets a file of its own, <dir>/<name>.<workerId>.<epoch>.ids, of 8-byte little-endian
// IDs, written synchronously after each batch, so a kill -9 loses nothing it had written. Events
// (leased, lease-ended, skew, clock-back, errors) go to stdout as JSON lines.
import { openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { createSnowflake } from 'ticketd-client';

const [dir, name, pool, urls, perTick = '200', mode = 'sync', leaseWaitMs] = process.argv.slice(2);
const idsPerTick = Number(perTick);
const say = (event) => process.stdout.write(`${JSON.stringify({ name, at: Date.now(), ...event })}\n`);
let file;
const snowflake = createSnowflake({
  urls: urls.split(','),
  pool,
  holder: name,
  // In sync mode ready() tries once (no wait), as before leases were waited for: a holder that
  // cannot lease says so and tries again in 100 ms, and SIGTERM is never held up by a wait.
  leaseWaitMs: leaseWaitMs !== undefined ? Number(leaseWaitMs) : mode === 'sync' ? 0 : undefined,
  onEvent: (event) => {
    if (event.type === 'leased') {
      if (file !== undefined) closeSync(file);
      file = openSync(join(dir, `${name}.${event.workerId}.${event.epoch}.ids`), 'a');
    }
    say(event);
  },
});
let stopping = false;
process.on('SIGTERM', () => {
  stopping = true;
});

const batch = new BigUint64Array(idsPerTick);
while (!stopping) {
  let n = 0;
  let failed = false;
  try {
    if (mode === 'next') {
      // Each ID is written before anything else is awaited: to the file of the lease it came from.
      for (let i = 0; i < idsPerTick; i++) {
        const id = await snowflake.next();
        writeSync(file, new Uint8Array(new BigUint64Array([id]).buffer));
      }
    } else {
      if (snowflake.workerId === undefined) await snowflake.ready();
      for (; n < idsPerTick; n++) batch[n] = snowflake.nextSync();
    }
  } catch (error) {
    failed = true;
    say({
      type: 'error',
      code: error?.code ?? 'unknown',
      message: String(error?.message ?? error),
      causeCodes: error?.cause?.codes ?? [],
    });
  }
  // Written before anything is awaited: a lease changes only while the loop waits, so the batch
  // goes to the file of the lease it was minted on.
  if (n > 0 && file !== undefined) writeSync(file, new Uint8Array(batch.buffer, 0, n * 8));
  await new Promise((done) => setTimeout(done, failed ? 100 : 10));
}
await snowflake.close();
say({ type: 'closed' });

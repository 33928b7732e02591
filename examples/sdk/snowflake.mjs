// Snowflake IDs minted in this process, with a worker ID leased from ticketd. Against the demo:
// `npm run demo` (it creates the pool `web`), then `node examples/sdk/snowflake.mjs`.
import { createSnowflake } from 'ticketd-client';

const urls = [process.env.TICKETD_URL ?? 'http://localhost:8080'];
const ids = createSnowflake({ urls, pool: 'web' });
await ids.ready(); // takes a lease of a free worker ID; it is renewed in the background
const first = ids.nextSync(); // a bigint: no network call, no await
const second = await ids.next();
const { timestampMs, workerId, sequence } = ids.decompose(second);
const at = new Date(timestampMs).toISOString();
console.log(`web: ${first} then ${second} (worker ${workerId}, ${at}, sequence ${sequence})`);
await ids.close(); // gives the worker ID back, with the last timestamp used

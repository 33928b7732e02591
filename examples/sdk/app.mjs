// IDs from ticketd in a Node app (ESM). Against the demo: `npm run demo`, then in another
// shell its export line (for INVOICES_TOKEN), then `node app.mjs`.
import { createTicketClient } from 'ticketd-client';

const urls = [process.env.TICKETD_URL ?? 'http://localhost:8080'];
const ids = createTicketClient({ urls, sequence: 'default' });
const id = await ids.next(); // a bigint; waits for a lease only when no block is buffered
const batch = await ids.nextBatch(3);
console.log(`default: ${id} then ${batch.join(', ')}`);
await ids.close();

// An opaque sequence: its own client token gets blocks and the key; the client permutes IDs itself.
const invoices = createTicketClient({ urls, sequence: 'invoices', token: process.env.INVOICES_TOKEN });
console.log(`invoices: ${await invoices.next()}`);
await invoices.close();

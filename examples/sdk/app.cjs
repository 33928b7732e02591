// The same in CommonJS: `node app.cjs`.
const { createTicketClient } = require('ticketd-client');

const urls = [process.env.TICKETD_URL ?? 'http://localhost:8080'];

async function main() {
  const ids = createTicketClient({ urls, sequence: 'default' });
  const id = await ids.next(); // a bigint; waits for a lease only when no block is buffered
  const batch = await ids.nextBatch(3);
  console.log(`default: ${id} then ${batch.join(', ')}`);
  await ids.close();

  // An opaque sequence: its own client token gets blocks and the key; the client permutes IDs itself.
  const invoices = createTicketClient({ urls, sequence: 'invoices', token: process.env.INVOICES_TOKEN });
  console.log(`invoices: ${await invoices.next()}`);
  await invoices.close();
}

main().catch((error) => {
  console.error(error.message);
  process.exitCode = 1;
});

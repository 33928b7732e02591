export default async function globalTeardown() {
  await globalThis.__ticketdSharedPair?.stop();
}

/** The headline ratios printed at the end of `npm run bench`. */
import type { HttpResult } from './load.js';
import { oneIdRatio } from './one-id.js';
import { meanOf } from './opaque-wrk.js';
import { checkedRows, type BenchResults } from './results.js';
import type { StrictResults } from './strict.js';

/** Mean of strict / ordered IDs/s over the rounds of one comparison of scenario 10. */
function strictRatio(s: StrictResults, what: string): number {
  const pairs = s.pairs.filter((p) => p.what === what);
  return (
    pairs.reduce((sum, p) => sum + p.strict.idsPerSecond / Math.max(1, p.ordered.idsPerSecond), 0) /
    Math.max(1, pairs.length)
  );
}

/** IDs/s of the Snowflake row whose name starts with `prefix`. */
function sfAt(r: BenchResults, prefix: string): number {
  return r.snowflake.generators.find((x) => x.name.startsWith(prefix))?.idsPerSecond ?? 0;
}

/** The headline ratios of a run, as the bench prints them at its end. */
export function renderHeadlines(r: BenchResults): string {
  const [t, naive, bare] = r.single as [HttpResult, HttpResult, HttpResult];
  const [tb, bb] = r.batch as [HttpResult, HttpResult];
  const snowflake = r.inProcess.find((x) => x.name.startsWith('@sapphire/snowflake'));
  const sdk = r.inProcess.find((x) => x.name === 'SDK next() (leases blocks of 1,000,000)');
  const sdkSync = r.inProcess.find((x) => x.name === 'SDK nextSync() (leases blocks of 1,000,000)');
  const ceiling = r.inProcess.find((x) => x.name.startsWith('await of an async function'));
  const opaqueSync = r.inProcess.find((x) => x.name === 'SDK nextSync() (opaque IDs, leases blocks of 1,000,000)');
  const [ob, oo, os, oos, ob100, oo100, ob100b, oo100b] = r.opaque.http as [
    HttpResult,
    HttpResult,
    HttpResult,
    HttpResult,
    HttpResult,
    HttpResult,
    HttpResult,
    HttpResult,
  ];
  const tlsMean = (side: string, what: string, field: 'requestsPerSecond' | 'handshakesPer10kRequests'): number => {
    const rows = r.tls.backends.filter((x) => x.name.startsWith(side) && x.name.includes(what));
    return rows.reduce((sum, x) => sum + (x[field] ?? 0), 0) / Math.max(1, rows.length);
  };
  const clientMean = (side: string): number => {
    const rows = r.tls.clients.filter((x) => x.name.startsWith(side));
    return rows.reduce((sum, x) => sum + x.requestsPerSecond, 0) / Math.max(1, rows.length);
  };
  const rows = (name: string): number =>
    r.opaque.inserts.find((x) => x.name.startsWith(`InnoDB insert rate, ${name}`))?.value ?? 0;
  const ratio = (a: number, b: number): string => (b === 0 ? 'n/a' : `${(a / b).toFixed(2)}×`);
  return `
headline ratios (same run):
  one ID per request / node:http alone (wrk, mean of rounds): next ${oneIdRatio(r.oneId, 'one process', 'next').toFixed(2)}×, ids?count=1 ${oneIdRatio(r.oneId, 'one process', 'ids?count=1').toFixed(2)}× (target ≥ 0.5×); serve --workers 2: next ${oneIdRatio(r.oneId, 'serve --workers 2', 'next').toFixed(2)}×, ids?count=1 ${oneIdRatio(r.oneId, 'serve --workers 2', 'ids?count=1').toFixed(2)}×
  single ID: ticketd / bare Express = ${ratio(t.requestsPerSecond, bare.requestsPerSecond)} (target ≥ 0.9×), ticketd / naive Flickr = ${ratio(t.requestsPerSecond, naive.requestsPerSecond)} (target ≥ 5×)
  batch of 1,000: ticketd / bare Express counter = ${ratio(tb.idsPerSecond, bb.idsPerSecond)} (target ≥ 0.8×), ticketd = ${Math.round(tb.idsPerSecond).toLocaleString('en')} IDs/s (target ≥ 1,000,000)
  refills (blockSize 50): p99 ${r.smallBlocks.p99} ms vs ${t.p99} ms with blockSize 10,000
  in-process (blocks of 1,000,000): SDK next() / @sapphire/snowflake = ${ratio(sdk?.idsPerSecond ?? 0, snowflake?.idsPerSecond ?? 0)} (ceiling for any awaited call: ${ratio(ceiling?.idsPerSecond ?? 0, snowflake?.idsPerSecond ?? 0)}), nextSync() / snowflake = ${ratio(sdkSync?.idsPerSecond ?? 0, snowflake?.idsPerSecond ?? 0)} (target ≥ 1.5×)
  workers: 2 / 1 = ${ratio(r.workers[1]!.requestsPerSecond, r.workers[0]!.requestsPerSecond)} single, ${ratio(r.workers[3]!.idsPerSecond, r.workers[2]!.idsPerSecond)} batch
  opaque IDs (wrk): batch of 1,000 opaque / ordered = ${ratio(meanOf(r.opaque.wrk, 'opaque, count=1000', 'idsPerSecond'), meanOf(r.opaque.wrk, 'ordered (default), count=1000', 'idsPerSecond'))} (target ≥ 0.8×), server CPU per 1,000 IDs ${meanOf(r.opaque.wrk, 'opaque, count=1000', 'cpuMsPer1000Ids').toFixed(3)} ms vs ${meanOf(r.opaque.wrk, 'ordered (default), count=1000', 'cpuMsPer1000Ids').toFixed(3)} ms ordered
  opaque IDs (autocannon): batch of 100 opaque / ordered = ${ratio(oo100.idsPerSecond + oo100b.idsPerSecond, ob100.idsPerSecond + ob100b.idsPerSecond)} (target ≥ 0.9×)
  TLS to the backends / plaintext: next ${ratio(tlsMean('TLS', 'blocks cached', 'requestsPerSecond'), tlsMean('plaintext', 'blocks cached', 'requestsPerSecond'))} (target ≥ 0.95×), a ticket per request ${ratio(tlsMean('TLS', 'a ticket per request', 'requestsPerSecond'), tlsMean('plaintext', 'a ticket per request', 'requestsPerSecond'))}; handshakes per 10,000 requests ${tlsMean('TLS', 'blocks cached', 'handshakesPer10kRequests')} (cached) and ${tlsMean('TLS', 'a ticket per request', 'handshakesPer10kRequests')} (a ticket each)
  strict / ordered (mean of rounds): next through the leader ${strictRatio(r.strict, 'next, through the leader').toFixed(2)}× (target ≥ 0.8×), through a follower ${strictRatio(r.strict, 'next, through a follower').toFixed(2)}× (target ≥ 0.4×), count=100 ${strictRatio(r.strict, 'count=100, through the leader').toFixed(2)}× (target ≥ 0.5×); failover stall after kill -9 of the leader ${r.strict.failoverStallMs.join(' ms, ')} ms (target ≤ 3,000), ${r.strict.failoverRefused} refused
  HTTPS front end / HTTP: next ${ratio(clientMean('HTTPS'), clientMean('HTTP front end'))} (${Math.round(clientMean('HTTPS'))} vs ${Math.round(clientMean('HTTP front end'))} req/s)
  opaque IDs (autocannon): batch of 1,000 opaque / ordered = ${ratio(oo.idsPerSecond, ob.idsPerSecond)}, next ${ratio(oos.requestsPerSecond, os.requestsPerSecond)}, SDK nextSync() opaque / snowflake = ${ratio(opaqueSync?.idsPerSecond ?? 0, snowflake?.idsPerSecond ?? 0)} (target ≥ 1.0×)
  InnoDB inserts, opaque / ordered keys: ${ratio(rows('200,000 rows, opaque'), rows('200,000 rows, ordered'))} at 200,000 rows, ${ratio(rows('1,000,000 rows, opaque'), rows('1,000,000 rows, ordered'))} at 1,000,000 rows
  failover: ${r.failover.failed} failed requests, longest request ${r.failover.maxMs} ms
  claim per chunk of 16 tickets: median ${r.claimCost[1]?.medianMs} ms vs ${r.claimCost[0]?.medianMs} ms for its REPLACEs and ${r.claimCost[2]?.medianMs} ms for the 0.2 mark write
  Snowflake (SDK, same run): nextSync() layout 41/6/16 / @sapphire/snowflake = ${ratio(sfAt(r, 'SDK Snowflake nextSync() (layout 41/6/16)'), sfAt(r, '@sapphire/snowflake'))} (target ≥ 1.0×; with 41/10/12 it is capped at 4,096 IDs per ms: ${ratio(sfAt(r, 'SDK Snowflake nextSync() (layout 41/10/12'), sfAt(r, '@sapphire/snowflake'))}, while sapphire repeated ${r.snowflake.sapphireRepeats} of ${r.snowflake.sapphireChecked.toLocaleString('en')} IDs)
  next() / await ceiling (same run): Snowflake 41/6/16 = ${ratio(sfAt(r, 'SDK Snowflake next() (layout 41/6/16)'), sfAt(r, 'await of an async function'))}, blocks of 1,000,000 = ${ratio(sdk?.idsPerSecond ?? 0, ceiling?.idsPerSecond ?? 0)} (target ≥ 0.9×)
  lease renewal: median ${r.snowflake.renewal.medianMs} ms, p99 ${r.snowflake.renewal.p99Ms} ms
  every ID checked: ${checkedRows(r).every((x) => x.unique !== false) ? 'no duplicates' : 'DUPLICATES'}`;
}

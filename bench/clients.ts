/**
 * Scenario 12: the Java, Python and Go clients beside the Node SDK, in the same run against the
 * same ticketd: IDs/s handed out from buffered blocks and Snowflake IDs/s, each client measured by
 * its own bench program (bench/java-client.ts, bench/python-client.ts, bench/go-client.ts), which
 * checks what it took for repeats, beside its language's in-process baseline (one atomic increment).
 */
import type { InProcessResult } from './in-process.js';
import { runJavaClient, type JavaClientResults } from './java-client.js';
import { runPythonClient } from './python-client.js';
import { runGoClient } from './go-client.js';

/** One client's figures, or why it did not run. */
export type ClientFigures =
  | {
      readonly ran: true;
      readonly runtime: string;
      readonly results: readonly InProcessResult[];
      readonly checked: number;
    }
  | { readonly ran: false; readonly reason: string };

/** What scenario 12 measured. */
export interface ClientsResults {
  readonly java: ClientFigures;
  readonly python: ClientFigures;
  readonly go: ClientFigures;
}

/** Runs both clients against `ticketd` on the bench's sequences (default, large, opaque_large with its client token). */
export async function runClients(ticketd: string, adminToken: string, clientToken: string): Promise<ClientsResults> {
  const java = await runJavaClient(ticketd, adminToken, { sequence: 'opaque_large', token: clientToken }).then(
    javaFigures,
    (error: unknown): ClientFigures => ({ ran: false, reason: String(error) }),
  );
  const python = await runPythonClient(ticketd, adminToken, [
    { name: 'default', blocks: '10,000' },
    { name: 'large', blocks: '1,000,000' },
    { name: 'opaque_large', blocks: '1,000,000', token: clientToken },
  ]).then(
    (p): ClientFigures => ({ ran: true, runtime: p.python, results: p.results, checked: p.checked }),
    (error: unknown): ClientFigures => ({ ran: false, reason: String(error) }),
  );
  const go = await runGoClient(ticketd, adminToken, [
    { name: 'default', blocks: '10,000' },
    { name: 'large', blocks: '1,000,000' },
    { name: 'opaque_large', blocks: '1,000,000', token: clientToken },
  ]).then(
    (g): ClientFigures => ({ ran: true, runtime: g.go, results: g.results, checked: g.checked }),
    (error: unknown): ClientFigures => ({ ran: false, reason: String(error) }),
  );
  return { java, python, go };
}

function javaFigures(j: JavaClientResults): ClientFigures {
  if (!j.ran) return j;
  if (j.repeats > 0) throw new Error(`the Java client bench found ${j.repeats} repeated IDs`);
  return { ran: true, runtime: j.java, results: j.results, checked: j.uniqueChecked };
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en');

/** Each client's next() from a block of 1,000,000 against its language's in-process baseline, in the same run. */
function baselineRatios(c: ClientsResults): string {
  const rows = (
    [
      ['Java', c.java, 'Java next() (leases blocks of 1,000,000)'],
      ['Python', c.python, 'Python TicketClient.next() (leases blocks of 1,000,000)'],
      ['Go', c.go, 'Go Client.Next() (leases blocks of 1,000,000)'],
    ] as const
  ).map(([name, f, row]) => {
    if (!f.ran) return `| ${name} | did not run | | |`;
    const base = f.results.find((r) => r.name.includes('in-process baseline'));
    const next = f.results.find((r) => r.name === row);
    if (base === undefined || next === undefined) return `| ${name} | — | — | |`;
    return `| ${name} | ${fmt(next.idsPerSecond)} | ${fmt(base.idsPerSecond)} | ${(next.idsPerSecond / base.idsPerSecond).toFixed(2)}× |`;
  });
  return `next() from a leased block of 1,000,000 against the language's own in-process baseline (Java
\`AtomicLong.incrementAndGet\`, Python \`next(itertools.count())\` under a lock, Go \`atomic.AddInt64\`), same run:

| client | next() IDs/s | baseline IDs/s | ratio |
|---|---|---|---|
${rows.join('\n')}`;
}

/** Scenario 12's section of docs/benchmarks.md. */
export function clientsSection(c: ClientsResults, node: readonly InProcessResult[]): string {
  const table = (name: string, f: ClientFigures): string =>
    f.ran
      ? `**${name}** (${f.runtime}; ${fmt(f.checked)} IDs checked, 0 repeated):\n\n| generator | IDs/s |\n|---|---|\n${f.results.map((r) => `| ${r.name} | ${fmt(r.idsPerSecond)} |`).join('\n')}`
      : `**${name}**: did not run (${f.reason}).`;
  return `## 12. Clients beyond Node (bench/clients.ts)

Each client in a process of its own against the same ticketd, right after scenario 5's Node SDK rows
(repeated here from this run), on the same sequences: \`default\` (blocks of 10,000), \`large\` (blocks of
1,000,000) and \`opaque_large\` (opaque, blocks of 1,000,000, with its client token).

**Node SDK** (scenario 5, same run):

| generator | IDs/s |
|---|---|
${node.map((r) => `| ${r.name} | ${fmt(r.idsPerSecond)} |`).join('\n')}

${table('Java', c.java)}

${table('Python', c.python)}

${table('Go', c.go)}

${baselineRatios(c)}

Why they differ. An ID from a buffered block is one atomic increment on a \`long\` in Java, JIT-compiled
and allocation-free, where the Node SDK's \`next()\` pays a microtask and a BigInt per ID: with blocks
of 1,000,000 Java is several times Node's figure; with blocks of 10,000 every client waits on leases
(one ticket per 10,000 IDs), so the block size sets the figure, not the client. CPython interprets some
20 bytecodes per ID where V8 compiles \`nextSync()\` to a compare and an add, so Python's hand-out is a
fraction of Node's, still millions per second per process, three orders of magnitude above one HTTP
round trip per ID. Opaque IDs cost ten AES-256 rounds per ID: AES-NI in Java and Node, pure Python in
Python (its standard library has no AES), hundreds of microseconds each; a Python service that needs
opaque IDs by the million asks ticketd for them (\`POST …/ids\`). Snowflake with 41/10/12 is capped at
4,096 IDs per millisecond by its layout in every client. Go's \`Next()\` is an atomic pointer load, one
atomic add and a compare, compiled ahead of time: within a small factor of its own baseline, a bare
\`atomic.AddInt64\`; its opaque IDs use \`crypto/aes\` (AES-NI).
`;
}

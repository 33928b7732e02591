/** The processes the bench starts (ticketd, the baseline servers), each awaited until it says it listens. */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../src/launcher/local-mysql.js';

/** Runs `node <args>` with extra environment; resolves once its stdout matches `ready`, rejects if it exits first. */
export function startProcess(
  args: readonly string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let seen = '';
    let started = false;
    child.stdout.on('data', (chunk: Buffer) => {
      // Only the tail is kept once it runs: enough to say why it stopped.
      seen = (seen + chunk.toString()).slice(started ? -4000 : undefined);
      if (!started && ready.test(seen)) {
        started = true;
        resolve(child);
      }
    });
    child.once('exit', (code, signal) => {
      if (!started) reject(new Error(`${args.join(' ')} exited with ${code}`));
      // A server the bench did not stop: its last lines say why (a later scenario would only see a refused connection).
      else if (signal !== 'SIGKILL' && signal !== 'SIGTERM')
        console.error(
          `bench: ${args.join(' ')} stopped (code ${code}, signal ${signal}); its last output:\n${seen.split('\n').slice(-8).join('\n')}`,
        );
    });
  });
}

/** A `ticketd serve` of the bench's. */
export interface ServedTicketd {
  readonly child: ChildProcess;
  readonly port: number;
  /** http://127.0.0.1:port, or https:// when TICKETD_TLS_CERT is set. */
  readonly url: string;
}

/**
 * `ticketd serve` from the build (dist/), on a free port unless TICKETD_PORT is given; with
 * `--workers N` it resolves once all N workers listen.
 */
export async function serveTicketd(env: Record<string, string>, workers = 1): Promise<ServedTicketd> {
  const port = env.TICKETD_PORT === undefined ? await freePort() : Number(env.TICKETD_PORT);
  const args = ['dist/cli/main.js', 'serve', ...(workers > 1 ? ['--workers', String(workers)] : [])];
  const child = await startProcess(
    args,
    { ...env, TICKETD_PORT: String(port) },
    new RegExp(Array(workers).fill('ticketd listening').join('[\\s\\S]*')),
  );
  return { child, port, url: `${env.TICKETD_TLS_CERT === undefined ? 'http' : 'https'}://127.0.0.1:${port}` };
}

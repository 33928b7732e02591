#!/usr/bin/env node
/** The `ticketd` command. With cli/dev.ts, the only code that reads process.env and argv. */
import cluster from 'node:cluster';
import { Command, Option } from 'commander';
import { Allocator } from '../allocator/allocator.js';
import {
  configInputFromEnv,
  DEFAULT_PORT,
  loadConfig,
  readConfigFile,
  type Config,
  type ConfigInput,
} from '../config/load-config.js';
import { adminTokens } from '../config/secrets.js';
import { parseSequenceSettings, parseUnsigned } from '../core/sequence.js';
import { parseWidening } from '../core/widening.js';
import { ConfigError, TicketdError } from '../core/errors.js';
import { createLogger, silentLogger, type Logger } from '../logger.js';
import { packageVersion } from '../paths.js';
import { startTicketd } from '../server.js';
import { initBackends } from '../service/init.js';
import { runChecks } from '../service/check.js';
import { RETIRE_BOUND_MS } from '../service/sequence-entry.js';
import { TicketService } from '../service/ticket-service.js';
import { isClusterPrimary, runPrimary, workerMetricsSource } from './cluster.js';
import { runDev } from './dev.js';
import { refuseUnknownVariables } from '../config/known-variables.js';
import { secretVariable } from '../config/secrets.js';
import { addFleetCommands } from './fleet-commands.js';
import { addMigrateCommands } from './migrate-commands.js';
import { addWorkerCommands } from './worker-commands.js';
import { errorText } from '../util/error-text.js';

/** How long a graceful shutdown may take before the process exits anyway. */
const SHUTDOWN_TIMEOUT_MS = 10_000;

const env = configInputFromEnv(process.env);
const version = packageVersion();
const program = new Command('ticketd')
  .description('Unique 64-bit IDs from odd/even MySQL ticket servers')
  .version(version, '-V, --version', 'print the version')
  .option('--config <file>', 'JSON config file; environment variables and flags override it (TICKETD_CONFIG)')
  .showHelpAfterError()
  // Before any command runs: a misspelt TICKETD_* variable is refused, not silently left out.
  .hook('preAction', () => refuseUnknownVariables(process.env));

/** The config file's settings, if one is given by --config or TICKETD_CONFIG. */
function fileInput(): ConfigInput {
  const path = program.opts<{ config?: string }>().config ?? process.env.TICKETD_CONFIG;
  return path === undefined || path === '' ? {} : readConfigFile(path);
}

program
  .command('serve')
  .description('serve the HTTP API')
  .option('--port <n>', 'port to listen on (TICKETD_PORT, default 8080)')
  .option(
    '--host <address>',
    "address to listen on, the peer port's too (TICKETD_HOST; default every interface, the peer port loopback)",
  )
  .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
  .option(
    '--admin-backends <urls>',
    'the same servers with an account for schema and counter changes (TICKETD_ADMIN_BACKENDS)',
  )
  .addOption(new Option('--admin-token <token>', 'bearer token for admin routes (TICKETD_ADMIN_TOKEN)').hideHelp())
  .option('--workers <n>', 'worker processes sharing the port (TICKETD_WORKERS, default 1)')
  .option('--max-count <n>', 'largest count per request (TICKETD_MAX_COUNT, default 10000)')
  .option(
    '--rate-limit <n>',
    'requests per second per client token or address on the issuing routes (TICKETD_RATE_LIMIT)',
  )
  .option(
    '--log-level <level>',
    'fatal, error, warn, info, debug (logs every request), trace or silent (TICKETD_LOG_LEVEL, default info)',
  )
  .option(
    '--on-regression <policy>',
    'advance or quarantine a backend whose counter went back (TICKETD_ON_REGRESSION, default advance)',
  )
  .option(
    '--claims <policy>',
    'preferred (serve on the process marks when no peer takes a claim) or required (refuse then) (TICKETD_CLAIMS, default preferred)',
  )
  .option(
    '--allow-unsafe-durability',
    'demos only: accept backends without innodb_flush_log_at_trx_commit=1 and sync_binlog=1',
  )
  .action(async (flags: ConfigInput) => {
    const config = loadConfig(env, flags, fileInput());
    const logger = createLogger(config.logLevel);
    if (isClusterPrimary(config.workers)) {
      const primary = runPrimary(config.workers, logger);
      onShutdown(logger, () => primary.close());
      // Every worker reads the files itself: the primary holds no secret and serves no request.
      process.on('SIGHUP', () => primary.signalWorkers('SIGHUP'));
      return;
    }
    const running = await startTicketd({
      config,
      logger,
      processMetrics: true,
      ...(cluster.isWorker && { metricsSource: workerMetricsSource }),
    });
    onShutdown(logger, () => running.close());
    process.on('SIGHUP', () => running.reload());
  });

program
  .command('check')
  .description(
    "check every backend: offsets, increment, durability, Galera, engines, sequences, and each account's privileges per feature; exit 1 on any problem",
  )
  .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
  .option('--admin-backends <urls>', 'accounts for schema and counter changes, checked too (TICKETD_ADMIN_BACKENDS)')
  .option('--allow-unsafe-durability', 'report durability problems as warnings')
  .action(async (flags: { backends?: string; adminBackends?: string; allowUnsafeDurability?: boolean }) => {
    const { backends, adminBackends } = backendConfig(flags);
    const allocator = new Allocator({ backends, adminBackends, logger: silentLogger });
    const findings = await runChecks(allocator, flags.allowUnsafeDurability ?? false).finally(() => allocator.close());
    for (const f of findings)
      console.log(`${f.kind === 'warning' || f.kind === 'info' ? f.kind : 'problem'}: ${f.message}`);
    const failed = findings.filter((f) => f.kind !== 'warning' && f.kind !== 'info').length;
    console.log(
      failed === 0
        ? `ok: ${backends.length} ${backends.length === 1 ? 'backend' : 'backends'} checked`
        : `${failed} ${failed === 1 ? 'problem' : 'problems'} found`,
    );
    process.exitCode = failed === 0 ? 0 : 1;
  });

program
  .command('init')
  .description('create the schema and the default sequence on every backend (idempotent)')
  .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
  .option('--admin-backends <urls>', 'accounts for schema changes (TICKETD_ADMIN_BACKENDS)')
  .action(async (flags: { backends?: string; adminBackends?: string }) => {
    await withService(flags, async (allocator, service) => {
      for (const r of await initBackends(allocator, service)) {
        const gated = r.gated.length === 0 ? '' : `; now out of reach of ticketd 0.5 and older: ${r.gated.join(', ')}`;
        console.log(`${r.backend}: schema ready, identity ${r.identity}${gated}`);
      }
      console.log('sequence default ready (blockSize 10000)');
    });
  });

const sequences = program.command('sequences').description('create, widen, retire or list sequences');
sequences
  .command('create <name>')
  .description('create a sequence on every backend')
  .requiredOption('--block-size <n>', 'IDs per ticket')
  .option('--start-after <n>', 'every ID is greater than this')
  .option('--max-id <n>', 'no ID is greater than this (default 2^63-1, a signed BIGINT)')
  .option(
    '--ids <mode>',
    'ordered (default), opaque (IDs permuted with a key of the sequence) or strict (in real-time order across front ends); fixed once created',
  )
  .option(
    '--reuse',
    'an ordered sequence takes unused IDs back and serves them again (later IDs are then not always larger); opaque ones always do',
  )
  .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
  .option('--admin-backends <urls>', 'accounts for schema changes (TICKETD_ADMIN_BACKENDS)')
  .action(
    async (
      name: string,
      flags: {
        blockSize: string;
        reuse?: boolean;
        startAfter?: string;
        maxId?: string;
        ids?: string;
        backends?: string;
        adminBackends?: string;
      },
    ) => {
      const settings = parseSequenceSettings(name, {
        blockSize: flags.blockSize,
        ...(flags.startAfter !== undefined && { startAfter: flags.startAfter }),
        ...(flags.maxId !== undefined && { maxId: flags.maxId }),
        ...(flags.ids !== undefined && { ids: flags.ids }),
        ...(flags.reuse === true && { reuse: true }),
      });
      await withService(flags, async (_allocator, service) => {
        const created = await service.createSequence(settings);
        console.log(`sequence ${name} ${created ? 'created' : 'already exists with these settings'}`);
      });
    },
  );
sequences
  .command('set <name>')
  .description("widen a sequence: raise its maxId on every backend (never lower; an opaque sequence's is fixed)")
  .requiredOption('--max-id <n>', 'the new largest ID')
  .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
  .option('--admin-backends <urls>', 'accounts for schema changes (TICKETD_ADMIN_BACKENDS)')
  .action(async (name: string, flags: { maxId: string; backends?: string; adminBackends?: string }) => {
    const maxId = parseWidening({ maxId: flags.maxId });
    await withService(flags, async (_allocator, service) => {
      const settings = await service.widen(name, maxId);
      console.log(
        `sequence ${name} has maxId ${settings.maxId}; running ticketd processes serve up to it from their next refill`,
      );
    });
  });
sequences
  .command('retire <name>')
  .description(
    'retire a sequence for good on every backend: no ticketd issues it again, and its name is never created again',
  )
  .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
  .option('--admin-backends <urls>', 'accounts for schema changes (TICKETD_ADMIN_BACKENDS)')
  .action(async (name: string, flags: { backends?: string; adminBackends?: string }) => {
    await withService(flags, async (_allocator, service) => {
      await service.retire(name);
      console.log(
        `sequence ${name} is retired on every backend: no backend hands out a ticket of it; running ticketd processes stop serving it within ${RETIRE_BOUND_MS / 1000} s`,
      );
    });
  });
sequences
  .command('list')
  .description('list sequences and the backends that have them')
  .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
  .action(async (flags: { backends?: string }) => {
    await withService(flags, async (_allocator, service) => {
      const list = await service.listSequences();
      // A backend that did not answer may have sequences the others lack: say which, and why.
      for (const u of list.unanswered)
        console.error(
          `ticketd: warning: backend ${u.backend} did not answer, so its sequences are not listed: ${u.reason}`,
        );
      for (const s of list.sequences) {
        const { name, blockSize, startAfter, maxId, ids } = s.settings;
        console.log(
          `${name}\tblockSize=${blockSize}\tstartAfter=${startAfter}\tmaxId=${maxId}\tids=${ids}\tbackends=${s.backends.join(',')}${s.settings.retired === true ? '\tretired' : ''}`,
        );
      }
    });
  });

addMigrateCommands(program, withService, () => secretVariable(process.env, 'TICKETD_SOURCE'));
addFleetCommands(program, withService, backendConfig);
addWorkerCommands(program, withService);

program
  .command('ids')
  .description('look into IDs')
  .command('decode <sequence> <id>')
  .description(
    "which ordered ID, ticket and backend an ID of the sequence came from (reads an opaque sequence's key from the backends)",
  )
  .option('--backends <urls>', 'comma-separated mysql:// URLs (TICKETD_BACKENDS)')
  .action(async (sequence: string, id: string, flags: { backends?: string }) => {
    const value = parseUnsigned(id, 'id');
    await withService(flags, async (allocator, service) => {
      // Connecting first tells each backend's residue class, so the ticket can be put to its owner.
      await allocator.probe();
      const d = await service.decode(sequence, value);
      console.log(
        `${d.sequence} ${d.id}: ids=${d.ids} ordered=${d.ordered} ticket=${d.ticket} backend=${d.backend ?? 'none of TICKETD_BACKENDS'}`,
      );
    });
  });

program
  .command('release <sequence> <backend>')
  .description(
    "lift a quarantine: each running ticketd re-checks the backend against its peers' claims (advancing its counter past them if needed) and uses it again",
  )
  .option(
    '--server <urls>',
    'comma-separated base URLs of the running ticketd processes (default http://127.0.0.1:TICKETD_PORT)',
  )
  .action(async (sequence: string, backend: string, flags: { server?: string }) => {
    const servers = (flags.server ?? `http://127.0.0.1:${process.env.TICKETD_PORT ?? DEFAULT_PORT}`)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    // The setting as serve reads it (name=token, several while one is rotated in): the first token is sent.
    const parsed = adminTokens.safeParse(process.env.TICKETD_ADMIN_TOKEN);
    if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message).join('; '));
    const token = parsed.data[0]?.token;
    if (token === undefined)
      throw new ConfigError('TICKETD_ADMIN_TOKEN is not set: release calls the admin route of each running ticketd');
    let failed = 0;
    for (const server of servers) {
      const line = await releaseOn(server, sequence, backend, token);
      if (!line.ok) failed++;
      console.log(`${server}: ${line.text}`);
    }
    process.exitCode = failed === 0 ? 0 : 1;
  });

program
  .command('dev')
  .description('start two local MySQL-compatible servers and serve the HTTP API, for trying ticketd')
  .option('--port <n>', 'HTTP port (TICKETD_PORT, default 8080)')
  .option('--data-dir <dir>', 'where the local servers keep their data (TICKETD_DEV_DIR, default ./.ticketd-dev)')
  .action(async (flags: { port?: string; dataDir?: string }) => {
    const logger = createLogger();
    await runDev({
      port: flags.port ?? process.env.TICKETD_PORT,
      dataDir: flags.dataDir ?? process.env.TICKETD_DEV_DIR ?? '.ticketd-dev',
      adminToken: process.env.TICKETD_ADMIN_TOKEN === '' ? undefined : process.env.TICKETD_ADMIN_TOKEN,
      logger,
      onShutdown: (close) => onShutdown(logger, close),
    });
  });

/** The settings that say how to reach the backends. */
const BACKEND_SETTINGS = [
  'backends',
  'backendsFile',
  'adminBackends',
  'adminBackendsFile',
  'backendSslMode',
  'backendSslCa',
  'backendSslCert',
  'backendSslKey',
] as const;

/** The backends and how to reach them alone (flag, env, then config file), for commands that need nothing else. */
function backendConfig(flags: { backends?: string | undefined; adminBackends?: string | undefined }): Config {
  const file = fileInput();
  const pick = (input: ConfigInput): ConfigInput => Object.fromEntries(BACKEND_SETTINGS.map((k) => [k, input[k]]));
  return loadConfig(pick(env), { backends: flags.backends, adminBackends: flags.adminBackends }, pick(file));
}

async function withService(
  flags: { backends?: string | undefined; adminBackends?: string | undefined },
  fn: (a: Allocator, s: TicketService) => Promise<void>,
  options: { ifConfigured?: boolean } = {},
): Promise<void> {
  if (
    options.ifConfigured === true &&
    [flags.backends, env.backends, env.backendsFile, fileInput().backends, fileInput().backendsFile].every(
      (b) => b === undefined || b === '',
    )
  )
    return;
  const config = backendConfig(flags);
  const allocator = new Allocator({
    backends: config.backends,
    adminBackends: config.adminBackends,
    logger: silentLogger,
  });
  const service = new TicketService({ allocator, logger: silentLogger });
  try {
    await fn(allocator, service);
  } finally {
    await service.close();
  }
}

/** POSTs the release route of one running ticketd; one line of outcome. */
async function releaseOn(
  server: string,
  sequence: string,
  backend: string,
  token: string,
): Promise<{ ok: boolean; text: string }> {
  try {
    const res = await fetch(`${server.replace(/\/$/, '')}/v1/sequences/${encodeURIComponent(sequence)}/release`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ backend }),
      signal: AbortSignal.timeout(SHUTDOWN_TIMEOUT_MS),
    });
    const body = (await res.json()) as {
      detail?: string;
      code?: string;
      wasQuarantined?: boolean;
      nextTicket?: string;
      highestUsed?: string | null;
      advancedTo?: string | null;
    };
    if (!res.ok) return { ok: false, text: `${body.code ?? res.status}: ${body.detail ?? ''}` };
    const advanced =
      body.advancedTo === null ? 'counter already past every claim' : `counter advanced to ${body.advancedTo}`;
    return {
      ok: true,
      text: `released ${backend} for ${sequence} (${body.wasQuarantined === true ? 'was quarantined' : 'was not quarantined'}; next ticket ${body.nextTicket}, highest claimed ${body.highestUsed ?? 'none'}; ${advanced})`,
    };
  } catch (error) {
    return { ok: false, text: `did not answer: ${errorText(error)}` };
  }
}

/** On SIGTERM or SIGINT: close, then exit 0; exit 1 if closing takes too long. */
function onShutdown(log: Logger, close: () => Promise<void>): void {
  let closing = false;
  const stop = (signal: string): void => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), SHUTDOWN_TIMEOUT_MS).unref();
    close().then(
      () => process.exit(process.exitCode ?? 0),
      (error: unknown) => {
        log.error({ err: String(error) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

program.parseAsync(process.argv).catch((error: unknown) => {
  // One line per problem, naming the setting or the backend, with the code docs/reference.md lists;
  // the stack only for what we did not expect.
  if (error instanceof TicketdError)
    for (const line of error.message.split('\n')) console.error(`ticketd: ${line} (${error.code})`);
  else console.error(`ticketd: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});

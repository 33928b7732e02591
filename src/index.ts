/** ticketd's public API. */
export { startTicketd, type RunningTicketd, type TicketdOptions } from './server.js';
export { loadConfig, configInputFromEnv, type Config, type ConfigInput } from './config/load-config.js';
export { createApp, type AppOptions } from './http/app.js';
export { TicketService } from './service/ticket-service.js';
export { Allocator } from './allocator/allocator.js';
export { createLogger, silentLogger, type Logger, type LogLevel } from './logger.js';
export type { IdRange } from './core/blocks.js';
export type { SequenceSettings } from './core/sequence.js';
export * from './core/errors.js';
export { initBackends } from './service/init.js';
// The client lives in its own package (ticketd-client, no dependencies); re-exported for 0.2 users.
export { createTicketClient, type TicketClient, type TicketClientOptions } from 'ticketd-client';

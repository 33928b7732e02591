/** ticketd-client: lease blocks of IDs from ticketd and hand them out in-process. No dependencies. */
export { createTicketClient, type TicketClient, type TicketClientOptions } from './ticket-client.js';
export { LeaseFailedError, NoBufferedIdsError, TicketClientError } from './errors.js';

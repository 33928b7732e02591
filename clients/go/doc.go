// Package ticketd is the Go client of ticketd, a ticket server that hands out unique 64-bit IDs.
//
// A Client leases whole blocks of IDs from ticketd (POST /v1/sequences/{name}/blocks), failing
// over between several ticketd URLs, and hands their IDs out in-process: a block is leased to one
// client and used once, so IDs never repeat within or across processes; a crash only leaves a gap.
// Opaque sequences are decoded and encoded with their keyed permutation (Codec); strict sequences
// get every ID from ticketd, coalescing concurrent calls. A Snowflake generator mints IDs on a
// worker ID leased from one of ticketd's worker pools, under the same fencing and clock rules as
// the Node, Java and Python clients.
//
// Every type is safe for concurrent use; calls that may wait take a context.Context; failures are
// *Error values carrying a stable code (errors.Is(err, ticketd.ErrLeaseFailed)). Standard library only.
package ticketd

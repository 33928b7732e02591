/**
 * A tiny order store, before and after moving its IDs to ticketd. Before, MySQL picked each
 * order's ID through AUTO_INCREMENT; after `ticketd migrate apply`, the app takes IDs from the
 * ticketd SDK and passes them in the INSERT. Everything else about the table stays the same.
 */
import type { Connection, ResultSetHeader } from 'mysql2/promise';
import type { TicketClient } from 'ticketd';

/** The legacy table, as the app created it years ago. */
export const CREATE_ORDERS_TABLE = `CREATE TABLE orders (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer VARCHAR(80) NOT NULL,
  total_cents INT NOT NULL,
  created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
)`;

/** One order as the app sees it. */
export interface Order {
  readonly customer: string;
  readonly totalCents: number;
}

/** Before: MySQL picks the ID. */
export async function placeOrderLegacy(db: Connection, order: Order): Promise<bigint> {
  const [result] = await db.execute<ResultSetHeader>('INSERT INTO orders (customer, total_cents) VALUES (?, ?)', [
    order.customer,
    order.totalCents,
  ]);
  // mysql2 reads the insert ID as a signed 64-bit number: a BIGINT UNSIGNED ID of 2^63 or more arrives negative.
  const id = BigInt(result.insertId);
  return id < 0n ? id + (1n << 64n) : id;
}

/** After: ticketd picks the ID; the insert passes it (as `migrate plan` printed). */
export async function placeOrder(db: Connection, ids: TicketClient, order: Order): Promise<bigint> {
  const id = await ids.next();
  // A decimal string: mysql2 sends it exactly, whatever the ID's size.
  await db.execute('INSERT INTO orders (id, customer, total_cents) VALUES (?, ?, ?)', [
    String(id),
    order.customer,
    order.totalCents,
  ]);
  return id;
}

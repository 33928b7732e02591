/** The accounts docs/operating.md documents ("Accounts and GRANTs"), for tests that run on them alone. */

/** The serving account: SELECT, INSERT and DELETE on the ticketd database. */
export const SERVING_GRANTS = [
  "CREATE USER IF NOT EXISTS 'tk_serve'@'%' IDENTIFIED BY 'serve-pass'",
  "GRANT SELECT, INSERT, DELETE ON ticketd.* TO 'tk_serve'@'%'",
] as const;

/** The admin account: schema and counter changes, and `backends restore`'s staging database (`\_`: a literal underscore). */
export const ADMIN_GRANTS = [
  "CREATE USER IF NOT EXISTS 'tk_admin'@'%' IDENTIFIED BY 'admin-pass'",
  "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER ON ticketd.* TO 'tk_admin'@'%'",
  "GRANT ALL PRIVILEGES ON `ticketd\\_restore`.* TO 'tk_admin'@'%'",
] as const;

/** The same backend URLs (comma-separated) with another account. */
export function withAccount(backends: string, user: string, password: string): string {
  return backends
    .split(',')
    .map((u) => {
      const url = new URL(u);
      url.username = user;
      url.password = password;
      return url.toString();
    })
    .join(',');
}

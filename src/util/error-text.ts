/** An error's message, for one-line reasons (anything thrown, not only errors). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

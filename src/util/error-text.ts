/** An error's message, for one-line reasons (anything thrown, not only errors). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A value as a message shows it: JSON, cut to 80 characters. */
export function shown(value: unknown): string {
  return JSON.stringify(value)?.slice(0, 80) ?? String(value);
}

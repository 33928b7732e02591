/** An error's message, for one-line reasons (anything thrown, not only errors). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A value as a message shows it: JSON, cut to `max` characters. */
export function shown(value: unknown, max = 80): string {
  // JSON.stringify answers undefined (whatever its type says) for undefined, functions and symbols.
  const json = JSON.stringify(value) as string | undefined;
  return json === undefined ? String(value) : json.slice(0, max);
}

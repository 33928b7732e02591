/** Figures as the status page says them to a person: spans, rates, times left, grouped integers. */

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
const YEAR = 365.25 * DAY;
/** Beyond this a time left is said as "over 10,000 years": 2^63 IDs at a few per second is millions. */
const LONGEST_SAID_YEARS = 10_000;

/** How long something has lasted, in one unit (the page's uptime and chart span). */
export function formatSpan(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 2 * 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 2 * 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

/**
 * A time left, to the precision a person acts on: "45 s", "12 min", "5 h 20 min", "3 d 4 h",
 * "400 days", "12 years"; "—" when there is none to tell (no rate), "none" once run out.
 */
export function formatTimeLeft(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds <= 0) return 'none';
  const whole = Math.floor(seconds);
  if (whole < 2 * MINUTE) return `${whole} s`;
  if (whole < HOUR) return `${Math.floor(whole / MINUTE)} min`;
  if (whole < DAY) return `${Math.floor(whole / HOUR)} h ${Math.floor((whole % HOUR) / MINUTE)} min`;
  if (whole < 60 * DAY) return `${Math.floor(whole / DAY)} d ${Math.floor((whole % DAY) / HOUR)} h`;
  if (whole < 2 * YEAR) return `${Math.floor(whole / DAY)} days`;
  const years = Math.floor(whole / YEAR);
  return years >= LONGEST_SAID_YEARS ? `over ${group(LONGEST_SAID_YEARS)} years` : `${group(years)} years`;
}

/** IDs per second: whole above 100, one decimal below. */
export function formatRate(perSecond: number): string {
  return perSecond >= 100 ? Math.round(perSecond).toLocaleString('en') : perSecond.toFixed(1);
}

/** An integer (number, bigint or decimal string) with thousands separators. */
export function group(value: number | bigint | string): string {
  const text = String(value);
  return /^[0-9]+$/.test(text) ? text.replace(/\B(?=(\d{3})+(?!\d))/g, ',') : text;
}

/** Text made safe inside HTML elements and attributes: every value a page shows passes through it. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

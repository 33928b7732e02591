/** SQL text built from validated names only. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SQL_DIR } from '../paths.js';
import { assertSequenceName } from '../core/sequence.js';

/** The quoted ticket table of a sequence. The name is checked against the pattern first. */
export function ticketTable(sequence: string): string {
  assertSequenceName(sequence);
  return `\`tickets_${sequence}\``;
}

/** The statements of sql/schema.sql, in order. */
export function schemaStatements(): string[] {
  return splitStatements(readFileSync(join(SQL_DIR, 'schema.sql'), 'utf8'));
}

/** CREATE TABLE IF NOT EXISTS for a sequence's ticket table, from sql/ticket-table.sql. */
export function createTicketTableStatement(sequence: string): string {
  const template = splitStatements(readFileSync(join(SQL_DIR, 'ticket-table.sql'), 'utf8'));
  if (template.length !== 1 || template[0] === undefined) throw new Error('sql/ticket-table.sql must hold one statement');
  return template[0].replaceAll('{{table}}', ticketTable(sequence));
}

function splitStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

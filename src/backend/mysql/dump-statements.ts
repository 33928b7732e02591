/**
 * The statements of a logical dump (mysqldump, mariadb-dump), as `backends restore` loads them into a
 * staging database of its own. The dump's text is split where the server would split it (a `;`
 * outside quotes and comments), and what would reach past the staging database is left out.
 */

/** Statements that would leave the staging database, or change the server rather than the dump's tables. */
const LEFT_OUT: readonly { readonly pattern: RegExp; readonly why: string }[] = [
  // `--databases` dumps name their database: loading them would write into the live one.
  { pattern: /^(\/\*M?!\d*\s*)?CREATE\s+DATABASE\b/i, why: 'CREATE DATABASE' },
  { pattern: /^USE\b/i, why: 'USE' },
  // MySQL with GTIDs: the server the dump came from refuses it (ERROR 3546), and binary logging is the server's business.
  { pattern: /^(\/\*M?!\d*\s*)?SET\s+@@GLOBAL\.GTID_PURGED\b/i, why: 'SET @@GLOBAL.GTID_PURGED' },
  { pattern: /^(\/\*M?!\d*\s*)?SET\s+@@SESSION\.SQL_LOG_BIN\b/i, why: 'SET @@SESSION.SQL_LOG_BIN' },
  // The staging database is the restore's alone: nothing to lock against (and no LOCK TABLES grant needed).
  { pattern: /^(UN)?LOCK\s+TABLES\b/i, why: 'LOCK TABLES' },
];

/** Splits SQL text into statements at `;` outside quotes, backticks and comments. Comments between statements are dropped. */
export function splitSqlStatements(text: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  const push = (end: number): void => {
    const statement = stripLeadingComments(text.slice(start, end)).trim();
    if (statement !== '') statements.push(statement);
  };
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === "'" || c === '"' || c === '`') {
      i = endOfQuoted(text, i, c);
    } else if (c === '/' && next === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close === -1 ? text.length : close + 2;
    } else if (c === '#' || (c === '-' && next === '-' && /\s/.test(text[i + 2] ?? ' '))) {
      const eol = text.indexOf('\n', i);
      i = eol === -1 ? text.length : eol + 1;
    } else if (c === ';') {
      push(i);
      start = i + 1;
      i += 1;
    } else {
      i += 1;
    }
  }
  push(text.length);
  return statements;
}

/** The dump's statements that load into a staging database, and what was left out (by kind). */
export function restorableStatements(text: string): { statements: string[]; leftOut: string[] } {
  const statements: string[] = [];
  const leftOut = new Set<string>();
  for (const statement of splitSqlStatements(text)) {
    const rule = LEFT_OUT.find((r) => r.pattern.test(statement));
    if (rule === undefined) statements.push(statement);
    else leftOut.add(rule.why);
  }
  return { statements, leftOut: [...leftOut] };
}

/** Index just past the quote that closes the one at `open` (a doubled quote or a backslash escapes, as MySQL reads them). */
function endOfQuoted(text: string, open: number, quote: string): number {
  let i = open + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && quote !== '`') {
      i += 2;
    } else if (c === quote) {
      if (text[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i += 1;
    }
  }
  return text.length;
}

/** Drops `--`, `#` and plain `/* … *\/` comments before a statement; MySQL's executable `/*! … *\/` ones stay. */
function stripLeadingComments(statement: string): string {
  let rest = statement.trimStart();
  for (;;) {
    if (rest.startsWith('--') || rest.startsWith('#')) {
      const eol = rest.indexOf('\n');
      rest = eol === -1 ? '' : rest.slice(eol + 1).trimStart();
    } else if (rest.startsWith('/*') && !rest.startsWith('/*!') && !rest.startsWith('/*M!')) {
      const close = rest.indexOf('*/');
      rest = close === -1 ? '' : rest.slice(close + 2).trimStart();
    } else {
      return rest;
    }
  }
}

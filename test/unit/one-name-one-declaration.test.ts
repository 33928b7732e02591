import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** Every .ts file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The names a file declares with `export` (re-exports declare nothing). */
function exportedDeclarations(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  return source.statements.flatMap((statement) => {
    const exported =
      ts.canHaveModifiers(statement) &&
      (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) return [];
    if (ts.isVariableStatement(statement)) return statement.declarationList.declarations.map((d) => d.name.getText());
    const name = (statement as ts.DeclarationStatement).name;
    return name === undefined ? [] : [name.getText()];
  });
}

/** One name, one thing (docs/style): an exported name is declared in one file of src/. */
it('no exported name is declared in two files of src/', () => {
  const files = new Map<string, string[]>();
  for (const file of sourceFiles('src'))
    for (const name of exportedDeclarations(file)) files.set(name, [...(files.get(name) ?? []), file]);
  expect(files.size).toBeGreaterThan(100);
  const twice = [...files]
    .filter(([, where]) => where.length > 1)
    .map(([name, where]) => `${name}: ${where.join(', ')}`);
  expect(twice).toEqual([]);
});

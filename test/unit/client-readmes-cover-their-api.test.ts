/**
 * Every client's README documents every public type it exports and every field of the events its
 * Snowflake generator reports, read from the code itself: the Node client's index.ts exports and
 * SnowflakeEvent fields, the Python client's __all__ and on_event dicts, and the Java client's public
 * types, record components and interface methods. A name added to the code and not to the README
 * fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The names of `names` that `readme` never mentions as a whole word. */
function unmentioned(readme: string, names: Iterable<string>): string[] {
  return [...new Set(names)].filter(
    (n) => !new RegExp(`(^|[^A-Za-z0-9_])${n.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}($|[^A-Za-z0-9_])`).test(readme),
  );
}

/** The `type`s of a union of event objects declared as `export type NAME =` in `file`, and their other fields. */
function eventsOf(file: string, name: string): { types: string[]; fields: string[] } {
  const declared = readFileSync(file, 'utf8').split(`export type ${name} =`)[1]!.split('\n\n')[0]!;
  return {
    types: [...declared.matchAll(/type: '([a-z-]+)'/g)].map((m) => m[1]!),
    fields: [...declared.matchAll(/readonly (\w+):/g)].map((m) => m[1]!).filter((f) => f !== 'type'),
  };
}

describe("the clients' READMEs cover their public API", () => {
  it('the Node client: every export of its index, and every field of every SnowflakeEvent and TicketClientEvent', () => {
    const index = readFileSync('packages/client/src/index.ts', 'utf8');
    const exported = [...index.matchAll(/export (?:type )?\{([^}]+)\}/g)].flatMap((m) =>
      m[1]!
        .split(',')
        .map((s) => s.trim().replace(/^type\s+/, ''))
        .filter((s) => s !== ''),
    );
    expect(exported.length).toBeGreaterThan(30);
    const snowflake = eventsOf('packages/client/src/lease-keeper.ts', 'SnowflakeEvent');
    expect(snowflake.types).toHaveLength(8);
    // And what close() reports of the blocks it gives back.
    const returns = eventsOf('packages/client/src/give-back.ts', 'TicketClientEvent');
    expect(returns.types).toEqual(['returned', 'return-failed']);
    const readme = readFileSync('packages/client/README.md', 'utf8');
    expect(
      unmentioned(readme, [...exported, ...snowflake.fields, ...snowflake.types, ...returns.fields, ...returns.types]),
    ).toEqual([]);
  });

  it('the Python client: every name of __all__, and every on_event type and field', () => {
    const init = readFileSync('clients/python/src/ticketd_client/__init__.py', 'utf8');
    const all = [
      ...init
        .split('__all__ = [')[1]!
        .split(']')[0]!
        .matchAll(/"(\w+)"/g),
    ].map((m) => m[1]!);
    expect(all.length).toBeGreaterThan(20);
    const source = ['lease_keeper.py', 'snowflake.py']
      .map((f) => readFileSync(join('clients/python/src/ticketd_client', f), 'utf8'))
      .join('\n');
    const emitted = [...source.matchAll(/self\._emit\(\s*(\{[^}]*\})/g)].map((m) => m[1]!);
    const types = emitted.map((e) => /"type": "([a-z-]+)"/.exec(e)![1]!);
    const fields = emitted.flatMap((e) => [...e.matchAll(/"(\w+)":/g)].map((m) => m[1]!)).filter((f) => f !== 'type');
    expect(new Set(types).size).toBe(8);
    const readme = readFileSync('clients/python/README.md', 'utf8');
    expect(unmentioned(readme, [...all, ...types, ...fields])).toEqual([]);
  });

  it('the Java client: every public type, every record component, every method of its public interfaces', () => {
    const dir = 'clients/java/src/main/java/dev/ticketd/client';
    const names: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.java'))) {
      const source = readFileSync(join(dir, file), 'utf8');
      const type = /^public (?:final |abstract |sealed )*(class|interface|record|enum) (\w+)/m.exec(source);
      if (type === null) continue;
      names.push(type[2]!);
      for (const record of source.matchAll(/record (\w+)\(([^)]*)\)/g)) {
        if (record[1] !== type[2]) names.push(record[1]!);
        names.push(
          ...record[2]!
            .split(',')
            .map((c) => c.trim().split(/\s+/).pop()!)
            .filter((c) => c !== ''),
        );
      }
      if (type[1] === 'interface')
        names.push(...[...source.matchAll(/^ {2}(?:default )?[\w<>[\]]+ (\w+)\([^)]*\);/gm)].map((m) => m[1]!));
    }
    expect(names).toEqual(expect.arrayContaining(['SnowflakeParts', 'IdCodec', 'timestampMs', 'encode', 'Leased']));
    const readme = readFileSync('clients/java/README.md', 'utf8');
    expect(unmentioned(readme, names)).toEqual([]);
  });
});

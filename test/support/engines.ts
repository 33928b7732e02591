/**
 * The engines the conformance set runs on: every MySQL-compatible server this machine has (MariaDB
 * from PATH, Oracle MySQL from PATH or from TICKETD_MYSQL_ROOT's root file system). Global setup
 * says once which ones it found; `.ci/run` prepares Oracle MySQL where none is installed.
 */
import { engineName, findServerBinaries, type ServerBinary } from '../../src/launcher/server-binary.js';

/** One engine, as tests name and start it. */
export interface TestEngine {
  /** `MariaDB 10.11.19`, `MySQL 9.7.4`: the name a describe block carries. */
  readonly name: string;
  readonly binary: ServerBinary;
}

let found: TestEngine[] | undefined;

/** Every engine found, the default one (TICKETD_MYSQLD or PATH's) first. */
export function testEngines(): TestEngine[] {
  found ??= findServerBinaries(process.env).map((binary) => ({ name: engineName(binary), binary }));
  return found;
}

/** The engine of one flavor, if this machine has it. */
export function engineOf(flavor: ServerBinary['flavor']): TestEngine | undefined {
  return testEngines().find((e) => e.binary.flavor === flavor);
}

/** A `describe` per engine found, so every case inside runs on MariaDB and on MySQL alike. */
export function describeEachEngine(title: string, body: (engine: TestEngine) => void): void {
  for (const engine of testEngines()) describe(`${title} [${engine.name}]`, () => body(engine));
}

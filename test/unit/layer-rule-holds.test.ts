import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

/**
 * The layer rule (eslint.config.js, docs/development.md "The house") refuses an arrow pointing the
 * wrong way. Each case lints a planted file that is never written to disk, with the project's own
 * configuration (type-aware rules off: the planted file is in no TypeScript project, and the layer
 * rule needs no types).
 */
describe('the layer rule', () => {
  const eslint = new ESLint({
    overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }],
    ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
  });

  async function refusals(filePath: string, source: string): Promise<string[]> {
    const [result] = await eslint.lintText(source, { filePath });
    return result!.messages.map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
  }

  it('refuses src/backend/mysql in src/http', async () => {
    const found = await refusals(
      'src/http/planted.ts',
      "import { Backend } from '../backend/mysql/backend.js';\nexport const planted = Backend;\n",
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^no-restricted-imports: .*backend\/mysql.*belongs to the allocator/);
  });

  it('refuses mysql2 in src/service, and an arrow up from src/service to src/http', async () => {
    const found = await refusals(
      'src/service/planted.ts',
      "import mysql from 'mysql2/promise';\nimport { writeAnswer } from '../http/answer.js';\nexport const planted = [mysql, writeAnswer];\n",
    );
    expect(found).toEqual([
      expect.stringMatching(/mysql2\/promise.*go through the allocator/),
      expect.stringMatching(/http\/answer\.js.*src\/service stands below/),
    ]);
  });

  it('lets src/core and src/util import each other', async () => {
    const source = "import { shown } from '../util/error-text.js';\nexport const s = shown;\n";
    expect(await refusals('src/core/planted.ts', source)).toEqual([]);
    const back = "import { MAX_UINT64 } from '../core/blocks.js';\nexport const m = MAX_UINT64;\n";
    expect(await refusals('src/util/planted.ts', back)).toEqual([]);
  });

  it('refuses anything above the ground floor in src/core', async () => {
    const found = await refusals(
      'src/core/planted.ts',
      "import type { Logger } from '../logger.js';\nexport type Planted = Logger;\n",
    );
    expect(found).toEqual([expect.stringMatching(/ground floor/)]);
    const room = "import { Allocator } from '../allocator/allocator.js';\nexport const a = Allocator;\n";
    expect(await refusals('src/util/planted.ts', room)).toEqual([expect.stringMatching(/ground floor/)]);
  });

  it('lets src/migrate read the legacy table, and nothing else of src/backend/mysql', async () => {
    const legacy =
      "import { quoteIdentifier } from '../backend/mysql/legacy-table.js';\nexport const q = quoteIdentifier;\n";
    expect(await refusals('src/migrate/planted.ts', legacy)).toEqual([]);
    const pool = "import { Pools } from '../backend/mysql/pool.js';\nexport const p = Pools;\n";
    expect(await refusals('src/migrate/planted.ts', pool)).toEqual([expect.stringMatching(/belongs to the allocator/)]);
    expect(await refusals('src/http/planted.ts', legacy)).toEqual([expect.stringMatching(/belongs to the allocator/)]);
  });

  it('lets the allocator own the backends', async () => {
    const source = "import { Backend } from '../backend/mysql/backend.js';\nexport const b = Backend;\n";
    expect(await refusals('src/allocator/planted.ts', source)).toEqual([]);
  });
});

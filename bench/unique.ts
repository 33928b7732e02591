/** Checks that no ID appears twice across every response body a load run received. */

/** Returns true when all IDs are distinct; prints what it checked. */
export function assertUnique(bodies: readonly Buffer[], name: string): boolean {
  // IDs come in runs of consecutive values (one block per response, mostly): compare runs, not IDs.
  const runs: [bigint, bigint][] = [];
  let count = 0;
  for (const body of bodies) {
    const parsed = JSON.parse(body.toString()) as { id?: string; ids?: string[] };
    const ids = parsed.ids ?? (parsed.id === undefined ? [] : [parsed.id]);
    let start: bigint | undefined;
    let prev = 0n;
    for (const text of ids) {
      const id = BigInt(text);
      count++;
      if (start !== undefined && id === prev + 1n) {
        prev = id;
        continue;
      }
      if (start !== undefined) runs.push([start, prev]);
      start = id;
      prev = id;
    }
    if (start !== undefined) runs.push([start, prev]);
  }
  runs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let overlaps = 0;
  for (let i = 1; i < runs.length; i++) if (runs[i]![0] <= runs[i - 1]![1]) overlaps++;
  console.log(
    `  ${name}: ${count.toLocaleString('en')} IDs received, ${overlaps === 0 ? 'all unique' : `${overlaps} overlapping runs: DUPLICATES`}`,
  );
  return overlaps === 0;
}

/** The largest value each MySQL integer column type can hold: a migrated sequence's maxId. */

/** Integer column types, by information_schema DATA_TYPE, with their width in bits. */
const INTEGER_BITS: Readonly<Record<string, bigint>> = Object.freeze({
  tinyint: 8n,
  smallint: 16n,
  mediumint: 24n,
  int: 32n,
  integer: 32n,
  bigint: 64n,
});

/** The largest value of an integer column, or undefined when the type is not an integer type. */
export function maxValueOfColumn(dataType: string, unsigned: boolean): bigint | undefined {
  const bits = INTEGER_BITS[dataType.toLowerCase()];
  if (bits === undefined) return undefined;
  return unsigned ? (1n << bits) - 1n : (1n << (bits - 1n)) - 1n;
}

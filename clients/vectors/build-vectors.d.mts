/** Types of build-vectors.mjs, for the TypeScript test that checks the checked-in vectors. */
export declare function buildVectors(sdk: object, layoutModule: object): Record<string, string>;

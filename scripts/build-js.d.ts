/** Transpiles every .ts file of `root`/src to `root`/dist on its own, after removing dist/. */
export function buildJs(root: string): Promise<void>;

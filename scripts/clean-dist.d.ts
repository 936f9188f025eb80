/** Removes `root`/dist and everything in it. */
export function cleanDist(root: string): void;

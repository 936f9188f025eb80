/** Why `root`'s dist/ must be built again, or null when it is newer than all its inputs. */
export function staleReason(root: string): string | null;

/** The `--store URL` lines of a usage text, one entry per kind of store the registry knows. */
import { STORE_KINDS } from '../store/registry.js';

/** Each kind's URL forms, what it is and, for a kind with optional peers, how to install them. */
export function storeKindsUsage(indent: string): string {
  return STORE_KINDS.map((kind) => {
    const lines = [kind.urlForms.join(', '), `  ${kind.description}`];
    if (kind.packages.length > 0) lines.push(`  needs: npm install ${kind.packages.join(' ')}`);
    return lines.map((line) => `${indent}${line}`).join('\n');
  }).join('\n');
}

/**
 * Sums a V8 CPU profile (`node --cpu-prof`) by component: self time of every sampled function,
 * grouped by the package or source folder it belongs to, then the top functions.
 *
 *   npx tsx bench/profile-summary.ts FILE.cpuprofile [--top N]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The component a source URL belongs to: a package name, a src/ folder, or node's internals. */
export function componentOf(url: string, functionName: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1] !== undefined) return pkg[1];
  const source = /\/(src\/[^/]+(?:\/[^/.]+)?)/.exec(url);
  if (source?.[1] !== undefined)
    return source[1].replace(/\/[^/]+$/, (m) => (m.includes('.') ? '' : m));
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] ?? ''}`;
  if (url === '')
    return functionName === '(garbage collector)' ? '(gc)' : `(${functionName || 'native'})`;
  return 'other';
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' } },
  });
  const file = positionals[0];
  if (file === undefined) throw new Error('usage: profile-summary.ts FILE.cpuprofile');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const byComponent = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const delta = profile.timeDeltas[i] ?? 0;
    if (node === undefined) return;
    total += delta;
    const { url, functionName, lineNumber } = node.callFrame;
    const component = componentOf(url, functionName);
    byComponent.set(component, (byComponent.get(component) ?? 0) + delta);
    const name = `${component} ${functionName || '(anonymous)'}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
  });
  const print = (title: string, entries: Map<string, number>, top: number): void => {
    console.log(title);
    for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`);
    }
  };
  console.log(`profile: ${(total / 1e6).toFixed(1)} s sampled`);
  print('self time by component:', byComponent, 40);
  print('top functions:', byFunction, Number(values.top));
}

main();

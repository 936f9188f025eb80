/**
 * A real Chromium for the dashboard tests: Debian's `chromium` package (the `chromium` on PATH)
 * driven by playwright-core, with a fresh, empty profile per launch. Never a downloaded browser.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { onPath, skipForMissing } from '../helpers/missing.js';

const CHROMIUM = onPath('chromium');

/** For a file of browser tests: true when this machine has no Chromium and they must be skipped. */
export function skipWithoutChromium(): boolean {
  return skipForMissing(
    'the dashboard in Chromium',
    CHROMIUM === null ? 'chromium is not on PATH' : null,
    'apt-get install chromium',
  );
}

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  if (CHROMIUM === null) throw new Error('chromium is not on PATH (apt-get install chromium)');
  const profile = mkdtempSync(join(tmpdir(), 'fencegate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1100, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

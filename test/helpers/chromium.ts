/**
 * Debian's Chromium, headless, as the browser tests drive it (playwright-core; no browser is
 * downloaded). Without the background-networking flags it tries to reach Google's hosts at each
 * start, which this machine's closed network refuses.
 */
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Starts a headless Chromium; the caller closes it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}

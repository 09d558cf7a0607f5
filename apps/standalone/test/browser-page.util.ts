import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { REPO_ROOT, type InitialCredentials } from './app-process';

// Shared by the suites driving posthog-js in headless Chromium.

/** npm test installs Debian's chromium when missing and passes its path. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const POSTHOG_JS = path.join(REPO_ROOT, 'node_modules/posthog-js/dist/array.full.js');

/** Undefined when Chromium answers `--version`; npm test sets CHROMIUM_UNAVAILABLE when it could not install it. */
function chromiumUnavailable(): string | undefined {
  if (process.env.CHROMIUM_UNAVAILABLE) return process.env.CHROMIUM_UNAVAILABLE;
  if (!existsSync(CHROMIUM)) {
    return `${CHROMIUM} is missing: npm test installs Debian's chromium, or set CHROMIUM_PATH`;
  }
  // A binary that cannot start fails here, before any test; a later launch failure is a test failure.
  const probe = spawnSync(CHROMIUM, ['--headless', '--no-sandbox', '--version'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (probe.status !== 0) {
    const output = `${probe.stdout ?? ''}${probe.stderr ?? ''}`.trim() || String(probe.error ?? probe.signal);
    return `${CHROMIUM} --version failed (exit ${String(probe.status)}): ${output}`;
  }
  return undefined;
}

/** `describe.skip` with a warning when Chromium cannot run, so such a machine still runs the other suites. */
export function describeWithChromium(suite: string): jest.Describe {
  const reason = chromiumUnavailable();
  if (reason === undefined) return describe;
  const banner = `\n${'!'.repeat(78)}\n! SKIPPED: ${suite}\n! no headless Chromium: ${reason}\n${'!'.repeat(78)}\n`;
  // stderr: Jest drops the console of a file whose tests were all skipped.
  process.stderr.write(banner);
  return describe.skip;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  // --no-sandbox: the tests run as root, where Chromium refuses its sandbox.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** Each page loads posthog-js from this origin, another than capture's. */
export interface SitePages {
  server: Server;
  url(pagePath?: string): string;
  close(): Promise<void>;
}

export interface SitePage {
  token: string;
  init: Record<string, unknown>;
  body?: string;
}

export async function startSitePages(pages: Record<string, SitePage>): Promise<SitePages> {
  const posthogJs = await readFile(POSTHOG_JS);
  const html = new Map(
    Object.entries(pages).map(([pagePath, { token, init, body = '<p>shop</p>' }]) => [
      pagePath,
      `<!doctype html>
<html><head><title>shop</title><script src="/posthog.js"></script></head>
<body><script>posthog.init(${JSON.stringify(token)}, ${JSON.stringify(init)});</script>
${body}</body></html>`,
    ]),
  );
  const server = createServer((request, response) => {
    const requestPath = new URL(request.url ?? '/', 'http://site').pathname;
    const page = html.get(requestPath);
    if (requestPath === '/posthog.js') {
      response.writeHead(200, { 'Content-Type': 'application/javascript' }).end(posthogJs);
    } else if (page !== undefined) {
      response.writeHead(200, { 'Content-Type': 'text/html' }).end(page);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    server,
    url: (pagePath = '/') => `${origin}${pagePath}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** In a fresh browser context: a new anonymous visitor. */
export async function openPage(
  browser: Browser,
  url: string,
  prepare?: (page: Page) => Promise<void> | void,
): Promise<{ page: Page; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await prepare?.(page);
  await page.goto(url);
  return { page, close: () => context.close() };
}

export interface ListedEvent {
  id: string;
  event: string;
  distinct_id: string;
  timestamp: string;
  properties: Record<string, any>;
  person: { is_identified: boolean; distinct_ids: string[]; properties: Record<string, unknown> } | null;
  elements: { tag_name: string; text?: string; attr_class?: string[]; [key: string]: unknown }[];
  elements_chain: string;
}

/**
 * Polled until at least `count` arrived or `timeoutMs` passed; answers what the last read listed.
 * posthog-js sends its batch on a timer, so read while the page is still open.
 */
export async function listedEvents(
  managementUrl: string,
  credentials: Pick<InitialCredentials, 'personal_api_key' | 'project_id'>,
  query: Record<string, string>,
  count: number,
  timeoutMs = 30_000,
): Promise<ListedEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(
      `${managementUrl}/api/projects/${credentials.project_id}/events/?${new URLSearchParams(query).toString()}`,
      { headers: { Authorization: `Bearer ${credentials.personal_api_key}` } },
    );
    if (response.status !== 200) {
      throw new Error(`listing events answered ${response.status}: ${await response.text()}`);
    }
    const { results } = (await response.json()) as { results: ListedEvent[] };
    if (results.length >= count || Date.now() > deadline) return results;
    await sleep(250);
  }
}

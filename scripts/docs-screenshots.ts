/**
 * The API site as a user sees it: serves the built site (`npm run docs` → docs/api) on 127.0.0.1, opens it in
 * headless Chromium (Debian's `/usr/bin/chromium`, or `CHROMIUM_PATH`) and photographs the landing page and the
 * `CollectionsClient` page (and the testing guide) into docs/api/screenshots/. Fails when a page misses what a newcomer navigates by:
 * the guides and the clients in the navigation, the clients before the errors, every option's default.
 *
 * Run with `npm run docs:screenshots` (after `npm run docs`). Nothing leaves loopback: other hosts are blocked.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';

const site = path.resolve(import.meta.dirname, '../docs/api');
const out = path.join(site, 'screenshots');
if (!existsSync(path.join(site, 'index.html'))) throw new Error('build the site first: npm run docs');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};
const server = createServer((request, response) => {
  const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname);
  const file = path.join(site, pathname.endsWith('/') ? `${pathname}index.html` : pathname);
  if (!file.startsWith(site) || !existsSync(file)) {
    response.writeHead(404).end('not found');
    return;
  }
  response.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
const problems: string[] = [];
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.route('**/*', (route) => (route.request().url().startsWith(origin) ? route.continue() : route.abort()));
  mkdirSync(out, { recursive: true });

  await open(page, '/index.html');
  const startHere = await page.locator('#tsd-sidebar-links a').allTextContents();
  for (const expected of ['TapClient', 'CollectionsClient', 'Errors', 'Simulator for your tests']) {
    if (!startHere.includes(expected)) problems.push(`landing page: the top of the navigation does not link "${expected}"`);
  }
  for (const href of await page
    .locator('#tsd-sidebar-links a')
    .evaluateAll((links) => links.map((link) => (link as HTMLAnchorElement).href))) {
    if ((await fetch(href)).status !== 200) problems.push(`landing page: ${href} is a dead link`);
  }
  // Collapsed folders are in the page, not on screen: read their text content.
  const tree = (await page.locator('#tsd-nav-container').textContent()) ?? '';
  for (const expected of [
    'Guides',
    'Testing your integration',
    'Waiting for a collection to settle',
    'Reliability',
    'Assumptions',
    'Modules',
  ]) {
    if (!tree.includes(expected)) problems.push(`landing page: the navigation does not list "${expected}"`);
  }
  const landing = (await page.locator('.col-content').innerText()).slice(0, 800);
  if (/npm ci|npm test/.test(landing)) problems.push('landing page: opens with contributor commands');
  if ((landing.match(/^tap-collections-sdk$/gm) ?? []).length > 1) problems.push('landing page: the title is repeated');
  await shoot(page, 'landing.png');

  const guide = readdirSync(path.join(site, 'documents')).find((name) => name.startsWith('Testing_your_integration'));
  if (!guide) throw new Error('no page for docs/guide/testing.md in docs/api/documents');
  await open(page, `/documents/${guide}`);
  if (!(await page.locator('.col-content').innerText()).includes('createSimulatorHandlers'))
    problems.push('the testing guide page is empty');
  await shoot(page, 'guide-testing.png');

  const clientPage = readdirSync(path.join(site, 'classes')).find((name) => /(^|\.)CollectionsClient\.html$/.test(name));
  if (!clientPage) throw new Error('no CollectionsClient page in docs/api/classes');
  await open(page, `/classes/${clientPage}`);
  await shoot(page, 'collections-client.png');
  await page.screenshot({ path: path.join(out, 'collections-client-full.png'), fullPage: true });

  const moduleTree = (await page.locator('#tsd-nav-container').textContent()) ?? '';
  const [clients, errors] = [moduleTree.indexOf('Clients'), moduleTree.indexOf('Errors')];
  if (clients < 0 || errors < 0 || clients > errors) problems.push('navigation: the Clients group does not come before the Errors group');
  if (/\bindex\b/.test(moduleTree)) problems.push('navigation: a module is still called "index"');

  // Every optional member of every options type shows its default.
  const OPTIONS = ['ClientOptions', 'CollectionsClientOptions', 'RequestOptions', 'PollOptions', 'CollectionInput', 'CustomerQueryInput'];
  const SIMULATOR_OPTIONS = ['SimulatorOptions', 'StartSimulatorOptions', 'SettlementOptions', 'FaultSpec'];
  for (const options of [...OPTIONS, ...SIMULATOR_OPTIONS]) {
    const file = readdirSync(path.join(site, 'interfaces')).find((name) => name.endsWith(`.${options}.html`));
    if (!file) {
      problems.push(`no ${options} page`);
      continue;
    }
    await open(page, `/interfaces/${file}`);
    const members = await page.locator('section.tsd-member').all();
    if (members.length === 0) problems.push(`${options}: no members found on its page`);
    for (const member of members) {
      const optional = (await member.locator('h3 .tsd-tag').allTextContents()).includes('Optional');
      const name = await member.locator('h3 > span').first().textContent();
      if (optional && !/Default Value/i.test((await member.textContent()) ?? '')) problems.push(`${options}.${name}: no default shown`);
    }
  }
} finally {
  await browser.close();
  server.close();
}

async function open(page: Page, pathname: string): Promise<void> {
  await page.goto(origin + pathname, { waitUntil: 'load' });
  // typedoc keeps the body hidden for up to 500 ms while its script builds the navigation.
  await page.waitForFunction(() => getComputedStyle(document.body).display !== 'none');
  await page.waitForSelector('.site-menu a');
  await page.waitForTimeout(600);
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(out, name) });
  console.log(`wrote ${path.relative(process.cwd(), path.join(out, name))}`);
}

if (problems.length > 0) {
  console.error(`The API site misses what a newcomer navigates by:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
  process.exit(1);
}
console.log('The API site shows the guides and clients in its navigation, clients before errors, and every option default');

// Opens a page in Debian's Chromium (driven by playwright-core, which
// never downloads a browser of its own), waits for the Mermaid diagrams
// the page's own JavaScript draws, and prints what was drawn as JSON:
// per diagram whether it became an SVG, its nodes and edges, and the
// error the page showed instead. Takes a PNG of the element selected by
// the second argument into the file named by the third.
//
// Usage: node page.mjs URL SELECTOR OUT.png
import { chromium } from 'playwright-core';

const [url, selector, out] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  // The closed network refuses Chromium's own background connections.
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 }, deviceScaleFactor: 1 });
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e.message || e)));
  await page.goto(url, { waitUntil: 'load' });
  // Gitea replaces each ```mermaid block with an iframe it fills once
  // Mermaid has drawn it, or with an error; wait for all of them.
  const want = await page.$$eval('code.language-mermaid', (els) => els.length);
  await page.waitForFunction((n) => {
    const done = document.querySelectorAll('.mermaid-block iframe:not(.is-loading)').length;
    const failed = document.querySelectorAll('.markup .ui.message.error, .markup-error').length;
    return done + failed >= n;
  }, want, { timeout: 30000 }).catch(() => problems.push(`timed out waiting for ${want} diagrams`));
  const diagrams = [];
  for (const frame of await page.$$('.mermaid-block iframe')) {
    const doc = await frame.contentFrame();
    const d = await doc.evaluate(() => {
      const svg = document.querySelector('svg');
      return {
        svg: !!svg,
        nodes: svg ? svg.querySelectorAll('g.node').length : 0,
        edges: svg ? svg.querySelectorAll('path.flowchart-link').length : 0,
        text: svg ? svg.textContent : '',
      };
    });
    diagrams.push(d);
  }
  const errors = await page.$$eval('.markup .ui.message.error, .markup-error', (els) => els.map((e) => e.textContent.trim()));
  const el = await page.$(selector);
  if (el) await el.screenshot({ path: out });
  else problems.push(`no element matches ${selector}`);
  process.stdout.write(JSON.stringify({ diagrams, errors, problems }));
} finally {
  await browser.close();
}

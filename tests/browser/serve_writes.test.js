// Browser test for `sparkprof serve`'s writes (started by python/tests/test_serve_page.py with a
// real uvicorn server on loopback and a second server, of another origin, serving a hostile
// page): in Debian's headless Chromium,
// 1. the operator opens the printed address (/?token=...): the token becomes a cookie, the page
//    shows its upload form, and uploading a log through it stores the run (the page's own write);
// 2. the same browser, cookie in hand, then visits the hostile page, which tries the forged
//    writes of issue 33 (a no-cors multipart POST of a forged log with the cookie, a form post,
//    a fetch that sets the token header it does not know): the Python side checks that nothing
//    was stored.
//
// Usage: node serve_writes.test.js BASE_URL TOKEN LOG_PATH APP_ID HOSTILE_PAGE_URL
// Exit codes: 0 pass, 1 fail, 77 skipped (no Chromium or no node_modules: run setup.sh).
'use strict';

const { requireChromium, launch, watchedPage, check, run } = require('./harness');

const [base, token, logPath, appId, hostile] = process.argv.slice(2);
if (!hostile) {
  console.error('usage: node serve_writes.test.js BASE_URL TOKEN LOG_PATH APP_ID HOSTILE_PAGE_URL');
  process.exit(1);
}
const chromium = requireChromium();

run(async () => {
  const browser = await launch(chromium);
  try {
    const { page, watch } = await watchedPage(browser, { width: 1280, height: 900 });
    await page.goto(`${base}/?token=${token}`);
    check(page.url() === `${base}/`, `the token address redirects to the page (${page.url()})`);
    const cookies = await page.context().cookies(base);
    const cookie = cookies.find((c) => c.name === 'sparkprof_token');
    check(cookie && cookie.httpOnly && cookie.sameSite === 'Strict',
      'the token is kept as an HttpOnly, SameSite=Strict cookie');
    check(await page.evaluate(() => document.cookie === ''), 'scripts cannot read the cookie');
    check((await page.$$('#upload')).length === 1, 'the page shows its upload form');

    await page.setInputFiles('#upload input[type=file]', logPath);
    await Promise.all([page.waitForNavigation(), page.click('#upload button')]);
    const rows = await page.$$eval('tr[data-run] a.report', (links) => links.map((a) => a.textContent));
    check(rows.includes(appId), `the page's own upload stored ${appId} (${rows.join(', ')})`);

    // The hostile page, another origin (another port), in the same browser.
    await page.goto(hostile);
    await page.waitForFunction(() => window.attacksDone === true, null, { timeout: 60000 });
    const outcomes = await page.evaluate(() => window.attackOutcomes);
    console.log(`hostile page: ${JSON.stringify(outcomes)}`);
    check(outcomes.headerFetch === 'blocked',
      'a cross-origin fetch that sets the token header is blocked (no CORS preflight granted)');
    const elsewhere = watch.requests.filter((url) => !url.startsWith(base + '/') &&
      !url.startsWith(hostile.replace(/\/[^/]*$/, '/')));
    check(elsewhere.length === 0, `no request leaves the two servers ${elsewhere.join(' ')}`);
  } finally {
    await browser.close();
  }
});

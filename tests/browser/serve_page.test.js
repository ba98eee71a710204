// Browser test for `sparkprof serve`'s page (started by python/tests/test_serve_page.py over a
// store of runs): in Debian's headless Chromium, the page lists each job with a trend line of its
// runs' durations and a table of its runs; every run links its HTML report, which opens (from the
// table and from the trend's points) as the engine's report; hostile job keys stay text; the page
// asks nothing of any other host and logs no console error.
//
// Usage: node serve_page.test.js BASE_URL EXPECTED_JSON
//   EXPECTED_JSON: [{"job": KEY, "runs": [{"id": N, "app_id": ID}, ...] (latest first)}, ...]
// Exit codes: 0 pass, 1 fail, 77 skipped (no Chromium or no node_modules: run setup.sh).
'use strict';

const { requireChromium, launch, watchedPage, check, run } = require('./harness');

const [base, expectedText] = process.argv.slice(2);
if (!base || !expectedText) {
  console.error('usage: node serve_page.test.js BASE_URL EXPECTED_JSON');
  process.exit(1);
}
const chromium = requireChromium();
const expected = JSON.parse(expectedText);

run(async () => {
  const browser = await launch(chromium);
  try {
    const { page, watch } = await watchedPage(browser, { width: 1280, height: 900 });
    const failed = [];
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    const dialogs = [];
    page.on('dialog', async (dialog) => {
      dialogs.push(dialog.message());
      await dialog.dismiss();
    });
    await page.goto(base + '/');
    check((await page.title()) === 'sparkprof runs', 'the runs page loads');

    const jobs = await page.$$eval('section.job', (sections) => sections.map((s) => ({
      heading: s.querySelector('h2').firstChild.textContent.trim(),
      rows: Array.from(s.querySelectorAll('tr[data-run]')).map((r) => ({
        id: Number(r.dataset.run),
        app: r.querySelector('a.report').textContent,
        href: r.querySelector('a.report').getAttribute('href'),
      })),
      points: Array.from(s.querySelectorAll('svg.trend circle.run')).map((c) => ({
        id: Number(c.dataset.run),
        y: Number(c.getAttribute('cy')),
        href: c.parentElement.getAttribute('href'),
      })),
      line: s.querySelector('svg.trend polyline').getAttribute('points').split(' ').length,
      width: s.querySelector('svg.trend').getBoundingClientRect().width,
    })));
    check(jobs.length === expected.length,
      `one section per job (${jobs.length} of ${expected.length})`);
    for (const want of expected) {
      const job = jobs.find((j) => j.heading === want.job);
      check(job !== undefined, `job ${JSON.stringify(want.job)} is listed, as text`);
      if (!job) continue;
      const ids = want.runs.map((r) => r.id);
      check(JSON.stringify(job.rows.map((r) => r.id)) === JSON.stringify(ids),
        `${want.job}: its runs, latest first (${job.rows.map((r) => r.id)})`);
      check(job.rows.every((r, i) => r.app === want.runs[i].app_id &&
        r.href === `/applications/${r.id}/report.html`),
        `${want.job}: each run links its HTML report`);
      check(JSON.stringify(job.points.map((p) => p.id)) === JSON.stringify([...ids].reverse()),
        `${want.job}: one trend point per run, oldest left`);
      check(job.line === ids.length && job.width > 100, `${want.job}: the trend line is drawn`);
      check(job.points.every((p) => p.href === `/applications/${p.id}/report.html`),
        `${want.job}: each trend point links its run's report`);
    }

    // A slower run sits higher: points' y falls as durations grow.
    const trended = expected.find((e) => e.slowest !== undefined);
    if (trended) {
      const job = jobs.find((j) => j.heading === trended.job);
      const slowest = job.points.find((p) => p.id === trended.slowest);
      check(slowest && job.points.every((p) => p.y >= slowest.y),
        `${trended.job}: the slowest run is the highest point`);
    }

    // From the table to a report and back, then from a trend point.
    const first = expected[0].runs[0];
    await Promise.all([page.waitForNavigation(),
      page.click(`tr[data-run="${first.id}"] a.report`)]);
    check(page.url() === `${base}/applications/${first.id}/report.html`,
      `the table link opens run ${first.id}'s report`);
    await page.waitForFunction(() => window.sparkprofReport !== undefined);
    const headings = await page.$$eval('section.application h1',
      (nodes) => nodes.map((n) => n.textContent));
    check(headings.length === 1,
      `the engine's HTML report of one application (${JSON.stringify(headings)})`);
    check((await page.$$('article.finding')).length >= 1, 'the report shows its findings');
    await page.goBack();
    const last = expected[0].runs[expected[0].runs.length - 1];
    await Promise.all([page.waitForNavigation(),
      page.click(`circle.run[data-run="${last.id}"]`)]);
    check(page.url() === `${base}/applications/${last.id}/report.html`,
      `a trend point opens run ${last.id}'s report`);
    await page.waitForFunction(() => window.sparkprofReport !== undefined);

    check(dialogs.length === 0 && await page.evaluate(() => window.__pwned === undefined),
      'no hostile string ran');
    check(failed.length === 0, `every response is a success ${failed.join(' ')}`);
    check(watch.consoleErrors.length === 0, `no console errors ${watch.consoleErrors.join(' | ')}`);
    const elsewhere = watch.requests.filter((url) => !url.startsWith(base + '/'));
    check(elsewhere.length === 0, `no request leaves the server ${elsewhere.join(' ')}`);
  } finally {
    await browser.close();
  }
});

// The sparkprof tab inside a real Spark UI (the live driver's or the History Server's), in
// headless Chromium: the tab in Spark's navigation bar, the figures drawn from data/ (stage rows,
// findings, phases, executors, the timeline), a stage's flame graph in its frame, the live page
// refreshing itself, every request under the tab's own URL prefix (relative links: the tab works
// behind Spark's UI proxy), no console error. Driven by tests/e2e/run_ui_tab.py.
//
// Usage: node spark_ui_tab.test.js URL live|history|no-profile SCREENSHOT.png [PREFIX]
// PREFIX (default: URL's origin): every request the page makes must start with it.
// Prints "render_ms=N" (page navigation to the figures drawn), "reload_render_ms=N" (the same for
// a second view) and exits 77 without Chromium.
'use strict';

const { requireChromium, launch, watchedPage, check, run } = require('./harness');

const [url, mode, screenshot, prefixArgument] = process.argv.slice(2);
if (!url || !['live', 'history', 'no-profile'].includes(mode)) {
  console.error('usage: node spark_ui_tab.test.js URL live|history|no-profile SCREENSHOT.png');
  process.exit(1);
}
const chromium = requireChromium();

run(async () => {
  const browser = await launch(chromium);
  try {
    const { page, watch } = await watchedPage(browser, { width: 1400, height: 1000 });
    const failed = [];
    page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
    const started = Date.now();
    const response = await page.goto(url, { waitUntil: 'load', timeout: 60000 });
    check(response && response.status() === 200, `GET ${url}: HTTP ${response && response.status()}`);
    await page.waitForSelector('#sparkprof-root[data-loaded]', { timeout: 60000 });
    const renderMs = Date.now() - started;
    console.log(`render_ms=${renderMs}`);
    const drawnMs = await page.getAttribute('#sparkprof-root', 'data-rendered-ms');
    console.log(`script_render_ms=${drawnMs}`);

    const navTab = await page.$$eval('a', (links) => links.filter((a) =>
      a.textContent.trim() === 'sparkprof' && /\/sparkprof\/$/.test(a.getAttribute('href') || '')).length);
    check(navTab >= 1, `Spark's navigation bar has the sparkprof tab (${navTab} link(s))`);

    if (mode === 'no-profile') {
      const message = await page.textContent('#sparkprof-message').catch(() => '');
      check(/no sparkprof profile for this application/.test(message || ''),
        `the page says there is no sparkprof profile (${JSON.stringify(message)})`);
      check((await page.$$('tr.sparkprof-stage')).length === 0, 'no stage rows without a profile');
    } else {
      const stageRows = await page.$$eval('tr.sparkprof-stage', (rows) => rows.length);
      check(stageRows >= 1, `stage rows: ${stageRows}`);
      const sparkLinks = await page.$$eval('a.sparkprof-spark-stage', (links) =>
        links.map((a) => a.getAttribute('href')));
      check(sparkLinks.length >= 1 && sparkLinks.every((h) => h.startsWith('../stages/stage/?id=')),
        `each stage links to Spark's own stage page, relatively (${sparkLinks[0]})`);
      const phases = await page.$$eval('#sparkprof-phase-table tbody tr', (rows) => rows.length);
      check(phases >= 4, `phase breakdown rows: ${phases}`);
      const findingsSection = await page.$('#sparkprof-findings');
      check(findingsSection !== null, 'the findings section is drawn');
      const findings = await page.$$eval('li.sparkprof-finding', (items) =>
        items.map((li) => li.getAttribute('data-rule')));
      // run_ui_tab.py compares these with the report the driver wrote (a run may have none).
      console.log(`findings: ${findings.join(', ') || '(none)'}`);
      const executors = await page.$$eval('tr.sparkprof-executor', (rows) => rows.length);
      check(executors >= 1, `executor rows: ${executors}`);
      check((await page.$('#sparkprof-timeline-svg')) !== null, 'the timeline is drawn');

      // The flame graph of a stage with samples, in its frame: sparkprof's viewer loaded there.
      const src = await page.getAttribute('#sparkprof-flamegraph', 'src');
      check(/^flamegraph\/\?stage=\d+&attempt=\d+$/.test(src || ''), `flame graph frame src: ${src}`);
      const frameHandle = await page.$('#sparkprof-flamegraph');
      const frame = frameHandle && await frameHandle.contentFrame();
      let viewer = false;
      for (let i = 0; i < 100 && frame && !viewer; i++) {
        viewer = await frame.evaluate(() => !!(window.sparkprofFlameGraph && document.querySelector('#legend')))
          .catch(() => false);
        if (!viewer) await page.waitForTimeout(200);
      }
      check(viewer, 'the flame graph viewer runs in the frame (window.sparkprofFlameGraph, #legend)');

      // Clicking another stage's "flame graph" link shows that stage.
      const links = await page.$$('a.sparkprof-show-flamegraph');
      if (links.length >= 2) {
        const stage = await links[links.length - 1].getAttribute('data-stage');
        await links[links.length - 1].click();
        const after = await page.getAttribute('#sparkprof-flamegraph', 'src');
        check(after.startsWith(`flamegraph/?stage=${stage}&`), `a click shows stage ${stage}'s graph`);
      }

      if (mode === 'live') {
        const first = await page.getAttribute('#sparkprof-root', 'data-loaded');
        // Polled from here: page.waitForFunction evaluates a string in the page, which Spark 4.2's
        // Content-Security-Policy (no 'unsafe-eval') refuses.
        let second = first;
        for (let i = 0; i < 60 && second === first; i++) {
          await page.waitForTimeout(500);
          second = await page.getAttribute('#sparkprof-root', 'data-loaded');
        }
        const dataRequests = watch.requests.filter((r) => /\/sparkprof\/data\/$/.test(r)).length;
        check(second !== first, `the live page refreshed its figures by itself (${first} -> ${second}, ` +
          `${dataRequests} data/ requests, visibility ${await page.evaluate(() => document.visibilityState)})`);
      }
    }

    // A second view of the page (Spark's static files cached by the browser, the History
    // Server's application UI loaded already): the tab's own cost.
    const reloaded = Date.now();
    await page.goto(url, { waitUntil: 'load', timeout: 60000 });
    await page.waitForSelector('#sparkprof-root[data-loaded]', { timeout: 60000 });
    console.log(`reload_render_ms=${Date.now() - reloaded}`);

    const prefix = prefixArgument || new URL(url).origin + '/';
    const outside = watch.requests.filter((r) => !r.startsWith(prefix) && !r.startsWith('data:'));
    check(outside.length === 0, `every request stays under ${prefix} (${outside.slice(0, 3).join(' ')})`);
    check(watch.consoleErrors.length === 0, `no console errors (${watch.consoleErrors.slice(0, 3).join(' | ')}` +
      `${failed.length ? '; failed: ' + failed.slice(0, 3).join(' ') : ''})`);
    if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
  } finally {
    await browser.close();
  }
});

// The sparkprof tab inside a real Spark UI (the live driver's or the History Server's), in
// headless Chromium: the tab in Spark's navigation bar, the figures drawn from data/ (stage rows,
// findings, phases, executors, the timeline), a stage's flame graph in its frame, the live page
// refreshing itself, every request under the tab's own URL prefix (relative links: the tab works
// behind Spark's UI proxy), no console error. Driven by tests/e2e/run_ui_tab.py.
//
// Usage: node spark_ui_tab.test.js URL live|history|no-profile SCREENSHOT.png [PREFIX]
// no-profile: a History Server application without a stored profile, shown from its event log.
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
      // The event log's analysis may still run: the page says so and asks again by itself.
      let pending = await page.getAttribute('#sparkprof-root', 'data-pending');
      for (let i = 0; i < 240 && pending === 'true'; i++) {
        await page.waitForTimeout(500);
        pending = await page.getAttribute('#sparkprof-root', 'data-pending');
      }
      check(pending === 'false', `the event log's analysis is shown (pending: ${pending})`);
      const message = await page.textContent('#sparkprof-no-profile').catch(() => '');
      check(/No sparkprof profile was stored for this run: below is the analysis of its event log alone/.test(message || '') &&
        /spark\.plugins=io\.sparkprof\.SparkProfPlugin/.test(message || ''),
        `the page says plainly that no profile was stored, and how to get one (${JSON.stringify(message)})`);
      const eventLogProblem = await page.$('#sparkprof-event-log-message');
      check(eventLogProblem === null, `no problem with the event log's analysis (${eventLogProblem &&
        await eventLogProblem.textContent()})`);
      const stageRows = await page.$$eval('tr.sparkprof-stage', (rows) => rows.length);
      check(stageRows >= 1, `stage rows from the event log: ${stageRows}`);
      const sparkLinks = await page.$$eval('a.sparkprof-spark-stage', (links) => links.length);
      check(sparkLinks === stageRows, `each stage links to Spark's stage page (${sparkLinks})`);
      const phases = await page.$$eval('#sparkprof-phase-table tbody tr', (rows) => rows.length);
      check(phases >= 4, `phase breakdown rows from the event log: ${phases}`);
      check((await page.$('#sparkprof-findings')) !== null, 'the findings section is drawn');
      const findings = await page.$$eval('li.sparkprof-finding', (items) =>
        items.map((li) => li.getAttribute('data-rule')));
      console.log(`findings: ${findings.join(', ') || '(none)'}`);
      check((await page.$$('a.sparkprof-show-flamegraph')).length === 0, 'no flame graph links without a profile');
      check(await page.$eval('#sparkprof-flamegraph', (f) => f.style.display === 'none'),
        'the flame graph frame is hidden');
      check((await page.$('#sparkprof-timeline-svg')) !== null, 'the timeline is drawn');
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

      // The diff of two stage attempts with samples: picked in the two selects, drawn in the frame
      // by the flame graph viewer in its diff colours.
      const attempts = await page.$$eval('#sparkprof-diff-before option', (options) => options.map((o) => o.value));
      check(attempts.length >= 2 && await page.$eval('#sparkprof-diff-controls', (p) => p.style.display !== 'none'),
        `the diff controls list the stage attempts with samples (${attempts.length})`);
      if (attempts.length >= 2) {
        await page.selectOption('#sparkprof-diff-before', attempts[0]);
        await page.selectOption('#sparkprof-diff-after', attempts[attempts.length - 1]);
        await page.click('#sparkprof-diff-show');
        const diffSrc = await page.getAttribute('#sparkprof-flamegraph', 'src');
        const [bs, ba] = attempts[0].split(':');
        const [as, aa] = attempts[attempts.length - 1].split(':');
        check(diffSrc === `diff/?before=${bs}&beforeAttempt=${ba}&after=${as}&afterAttempt=${aa}`,
          `the diff is asked for relatively (${diffSrc})`);
        let diff = null;
        for (let i = 0; i < 100 && !diff; i++) {
          const handle = await page.$('#sparkprof-flamegraph');
          const diffFrame = handle && await handle.contentFrame();
          diff = diffFrame && await diffFrame.evaluate(() => window.sparkprofFlameGraph && document.querySelector('#legend') &&
            document.querySelector('select option[value=diff]') ? document.title : null).catch(() => null);
          if (!diff) await page.waitForTimeout(200);
        }
        check(diff && diff.includes(`stage ${bs} (attempt ${ba})`) && diff.includes(`stage ${as} (attempt ${aa})`),
          `the frame shows the differential flame graph, diff colours offered (${diff})`);
        const title = await page.textContent('#sparkprof-flamegraph-title');
        check(/^diff: stage \d+/.test(title || ''), `the frame's title names the diff (${title})`);
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

    if (mode !== 'no-profile') {
      // Spark's own stage page of a stage with samples links to its graph in the tab.
      const row = await page.$('a.sparkprof-show-flamegraph');
      const stage = row && await row.getAttribute('data-stage');
      const attempt = row && await row.getAttribute('data-attempt');
      check(stage !== null, 'a stage with a flame graph to follow from Spark\'s stage page');
      if (stage !== null) {
        const stageUrl = new URL(`../stages/stage/?id=${stage}&attempt=${attempt}`, page.url()).href;
        // Errors of Spark's own page are Spark's (behind the test's proxy, whose path names no
        // application id, its script asks its REST API for an application "sparkapp"): kept apart.
        const errorsBefore = watch.consoleErrors.length, failedBefore = failed.length;
        const stagePage = await page.goto(stageUrl, { waitUntil: 'load', timeout: 60000 });
        const href = await page.getAttribute('#sparkprof-stage-link a', 'href').catch(() => null);
        check(stagePage && stagePage.status() === 200 && href === `../../sparkprof/?stage=${stage}&attempt=${attempt}`,
          `Spark's stage page links to the stage's flame graph in the tab (${href})`);
        const sparkTitle = await page.$$eval('h3', (titles) => titles.map((h) => h.textContent)
          .find((text) => /Details for Stage/.test(text)) || '').catch(() => '');
        check(/Details for Stage/.test(sparkTitle || ''),
          `the rest is Spark's own stage page (${(sparkTitle || '').replace(/\s+/g, ' ').trim()})`);
        await page.waitForLoadState('networkidle', { timeout: 15000 }).catch(() => {});
        const sparkErrors = watch.consoleErrors.splice(errorsBefore).concat(failed.splice(failedBefore));
        if (sparkErrors.length) console.log(`Spark's own stage page: ${sparkErrors.slice(0, 3).join(' | ')}`);
        if (href) {
          await page.click('#sparkprof-stage-link a');
          await page.waitForSelector('#sparkprof-root[data-loaded]', { timeout: 60000 });
          const src = await page.getAttribute('#sparkprof-flamegraph', 'src');
          check(src === `flamegraph/?stage=${stage}&attempt=${attempt}`,
            `the link opens the tab at that stage's flame graph (${src})`);
        }
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

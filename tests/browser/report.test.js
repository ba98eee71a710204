// Browser test for the HTML analysis report: writes two synthetic event logs (the demo, and a copy
// whose application name, SQL text and stage name are hostile markup), renders one HTML report for
// both with the sparkprof CLI, opens it in Debian's headless Chromium through playwright-core (no
// browser download), and checks that it loads without console errors or network requests, that
// the hostile strings stay text, that the timeline SVG, stage table and findings exist, and that
// a screenshot is not blank.
//
// Usage: node report.test.js SPARKPROF_BINARY OUTPUT_DIR
// Exit codes: 0 pass, 1 fail, 77 skipped (no Chromium or no node_modules: run setup.sh).
'use strict';

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { setUp, launch, watchedPage, check, run } = require('./harness');

const { sparkprof, outputDir, chromium } = setUp('report');

const HOSTILE_NAME = '<script>window.__pwned=1</script>etl';
const HOSTILE_SQL = '</script><img src=x onerror="window.__pwned=2"> INSERT';
const HOSTILE_STAGE = '<svg onload="window.__pwned=3">join';

// The demo log with strings replaced at the JSON level (JSON.stringify keeps every line valid).
function writeLogs(dir) {
  const demo = path.join(dir, 'logs', 'application_1700000000000_0042');
  fs.mkdirSync(path.dirname(demo), { recursive: true });
  execFileSync(sparkprof, ['demo-log', '-o', demo], { stdio: 'inherit' });
  const replace = (text, from, to) => text.split(JSON.stringify(from)).join(JSON.stringify(to));
  let hostile = fs.readFileSync(demo, 'utf8');
  hostile = hostile.split('application_1700000000000_0042').join('application_1700000000000_0043');
  hostile = replace(hostile, 'nightly-etl', HOSTILE_NAME);
  hostile = replace(hostile, 'INSERT OVERWRITE TABLE sales_daily SELECT ...', HOSTILE_SQL);
  hostile = replace(hostile, 'join at EnrichSales.scala:88', HOSTILE_STAGE);
  fs.writeFileSync(path.join(dir, 'logs', 'application_1700000000000_0043'), hostile);
  return path.dirname(demo);
}

// Non-blank: the screenshot, scaled down to 96 px wide, has many distinct (coarsely quantised)
// colours; a blank or error page has a handful.
async function distinctColours(page, pngBuffer) {
  return page.evaluate(async (base64) => {
    const image = new Image();
    image.src = 'data:image/png;base64,' + base64;
    await image.decode();
    const width = 96;
    const height = Math.max(1, Math.round(image.height * width / image.width));
    const canvas = new OffscreenCanvas(width, height);
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0, width, height);
    const { data } = context.getImageData(0, 0, width, height);
    const quantised = new Set();
    for (let offset = 0; offset < data.length; offset += 4) {
      quantised.add(((data[offset] >> 4) << 8) | ((data[offset + 1] >> 4) << 4) | (data[offset + 2] >> 4));
    }
    return quantised.size;
  }, pngBuffer.toString('base64'));
}

run(async () => {
  const logs = writeLogs(outputDir);
  const html = path.join(outputDir, 'report.html');
  execFileSync(sparkprof, ['analyze', logs, '--format', 'html', '-o', html], { stdio: 'inherit' });
  const source = fs.readFileSync(html, 'utf8');
  check(!source.includes('<script>window') && !source.includes('<img src=x') &&
        !source.includes('<svg onload'), 'hostile strings are escaped in the file');

  const browser = await launch(chromium);
  try {
    const { page, watch } = await watchedPage(browser, { width: 1280, height: 900 });
    await page.goto('file://' + html);
    await page.waitForFunction(() => window.sparkprofReport !== undefined);

    const report = await page.evaluate(() => window.sparkprofReport);
    check(report.applications === 2, `one section per application (got ${report.applications})`);
    check(report.findings >= 2, `findings are rendered (got ${report.findings})`);
    check(await page.evaluate(() => window.__pwned === undefined), 'hostile strings did not run');
    const headings = await page.$$eval('section.application h1', (nodes) => nodes.map((n) => n.textContent));
    check(headings.includes(HOSTILE_NAME), `hostile application name shown as text: ${JSON.stringify(headings)}`);

    const timeline = await page.evaluate(() => {
      const svg = document.querySelector('#app1-timeline');
      if (!svg) return null;
      const box = svg.getBoundingClientRect();
      return {
        width: box.width,
        bars: svg.querySelectorAll('.stage-bar rect').length,
        executors: svg.querySelector('path.series.executors').getAttribute('d').length,
        tasks: svg.querySelector('path.series.tasks').getTotalLength(),
        titles: Array.from(svg.querySelectorAll('.stage-bar title')).map((t) => t.textContent),
      };
    });
    check(timeline !== null && timeline.width > 800, `timeline SVG is drawn (${timeline && Math.round(timeline.width)} px wide)`);
    check(timeline && timeline.bars === 3, `three stage bars (got ${timeline && timeline.bars})`);
    check(timeline && timeline.executors > 10 && timeline.tasks > 100, 'executor and running-task step charts have shape');
    const hostileTitles = await page.$$eval('#app2-timeline .stage-bar title', (nodes) => nodes.map((n) => n.textContent));
    check(hostileTitles.some((t) => t.includes(HOSTILE_STAGE)), 'hostile stage name is the bar tooltip text');
    const sqlCells = await page.$$eval('#app2-jobs td.name', (cells) => cells.map((c) => c.textContent));
    check(sqlCells.length === 3 && sqlCells.every((t) => t === HOSTILE_SQL), 'hostile SQL text shown as text in the job table');

    const findings = await page.$$eval('#app1 article.finding', (nodes) => nodes.map((n) => ({
      rule: n.dataset.rule,
      evidence: n.querySelectorAll('table.evidence tr').length,
      recommendations: n.querySelectorAll('ul.recommendations li').length,
      impact: n.querySelector('.impact') !== null,
      recipe: (n.querySelector('.recipe a') || {}).textContent,
    })));
    const skew = findings.find((f) => f.rule === 'data-skew');
    check(skew && skew.evidence > 3 && skew.recommendations >= 1 && skew.impact &&
          skew.recipe === 'docs/recipes/troubleshoot/data-skew-diagnosis.md', `data-skew finding is complete: ${JSON.stringify(skew)}`);
    check((await page.$$('#app1 .phase-bar .phase')).length >= 5, 'phase bar has segments');

    await page.screenshot({ path: path.join(outputDir, 'report-top.png') });
    await (await page.$('#app1-timeline')).screenshot({ path: path.join(outputDir, 'timeline.png') });

    // Sorting the stage table by duration, longest first: stage 1 (the skewed join).
    await page.click('#app1-stages th:nth-child(5)');
    const firstStage = await page.textContent('#app1-stages tbody tr:first-child td:first-child');
    check(firstStage === '1', `sorting by duration puts stage 1 first (got ${firstStage})`);

    const screenshot = await page.screenshot({ path: path.join(outputDir, 'report.png'), fullPage: true });
    const blank = await browser.newPage();
    const colours = await distinctColours(blank, screenshot);
    await blank.close();
    check(colours >= 10, `screenshot is not blank (${colours} distinct colours)`);
    check(watch.consoleErrors.length === 0, `no console errors ${watch.consoleErrors.join(' | ')}`);
    check(watch.requests.length === 0, `no network requests ${watch.requests.join(' ')}`);
  } finally {
    await browser.close();
  }
  console.log(`screenshots in ${outputDir}`);
});

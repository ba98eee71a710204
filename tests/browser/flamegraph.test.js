// Browser test for the HTML flame graph: renders a profile with the sparkprof CLI, opens it in
// Debian's headless Chromium through playwright-core (no browser download), and checks that it
// loads without console errors, that search and zoom work, that a screenshot is not blank, and
// that a PySpark worker's subtree is drawn within the wait it overlaps.
//
// Usage: node flamegraph.test.js SPARKPROF_BINARY OUTPUT_DIR
// Exit codes: 0 pass, 1 fail, 77 skipped (no Chromium or no node_modules: run setup.sh).
'use strict';

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const SKIP = 77;
const CHROMIUM = process.env.SPARKPROF_CHROMIUM || '/usr/bin/chromium';
const [sparkprof, outputDir = fs.mkdtempSync('/tmp/sparkprof-browser-')] = process.argv.slice(2);

function skip(reason) {
  console.log(`SKIP: ${reason}`);
  process.exit(SKIP);
}

if (!fs.existsSync(CHROMIUM)) skip(`${CHROMIUM} not found (scripts/install-deps.sh --browser)`);
let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (error) {
  skip('playwright-core is not installed (run tests/browser/setup.sh)');
}
if (!sparkprof || !fs.existsSync(sparkprof)) {
  console.error('usage: node flamegraph.test.js SPARKPROF_BINARY [OUTPUT_DIR]');
  process.exit(1);
}

const failures = [];
function check(condition, message) {
  console.log(`${condition ? 'ok  ' : 'FAIL'} ${message}`);
  if (!condition) failures.push(message);
}

// A small Spark-like profile with categories and a hostile frame name.
function writeProfile(file) {
  const lines = [];
  const run = 'java/lang/Thread.run;org/apache/spark/executor/Executor$TaskRunner.run';
  lines.push(`[category=serialization];${run};com/esotericsoftware/kryo/Kryo.writeClassAndObject;com/esotericsoftware/kryo/serializers/FieldSerializer.write 400`);
  lines.push(`[category=serialization];${run};java/io/ObjectOutputStream.writeObject 100`);
  lines.push(`[category=s3a_write];${run};org/apache/hadoop/fs/s3a/S3ABlockOutputStream.write;java/net/SocketOutputStream.write 250`);
  lines.push(`[category=shuffle_write];${run};org/apache/spark/shuffle/sort/UnsafeShuffleWriter.write 120`);
  lines.push(`[category=compute];${run};org/apache/spark/sql/execution/WholeStageCodegenExec$$anon$1.hasNext;scala/collection/Iterator$$anon$10.next 300`);
  lines.push(`[category=gc];GC_active 60`);
  lines.push(`${run};</script><img src=x onerror="window.__pwned=1"><!-- 20`);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return 1250;  // total samples
}

// A PySpark stage (issue 28): the task thread waited 1,000 samples on its worker in the socket
// read, and the worker's subtree under that read holds 1,500 (python 1,200, python_off_cpu 300).
function writePySparkProfile(file) {
  const read = 'org/apache/spark/executor/Executor$TaskRunner.run;org/apache/spark/api/python/PythonRunner$$anon$3.read;java/net/SocketInputStream.read';
  fs.writeFileSync(file, [
    '[category=compute];org/apache/spark/executor/Executor$TaskRunner.run;scala/collection/Iterator$$anon$10.next 500',
    `[category=python_wait];${read} 1000`,
    `[category=python];${read};[python worker];udf (app.py:3) 1200`,
    `[category=python_off_cpu];${read};[python worker];udf (app.py:3);fetch (app.py:9) 300`,
  ].join('\n') + '\n');
}

// The [python worker] subtree is drawn within the wait it overlaps; tooltips keep real weights.
async function checkPythonWorkerDrawnWithinWait(browser, outputDir) {
  const input = path.join(outputDir, 'pyspark-stage.collapsed');
  const html = path.join(outputDir, 'pyspark-stage.html');
  writePySparkProfile(input);
  execFileSync(sparkprof, ['flamegraph', input, '-o', html], { stdio: 'inherit' });
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto('file://' + html);
  await page.waitForFunction(() => window.sparkprofFlameGraph !== undefined);
  const find = (text) => page.evaluate((t) => window.sparkprofFlameGraph.findFrame(t), text);
  const taskRunner = await find('TaskRunner.run');
  const read = await find('SocketInputStream.read');
  const worker = await find('[python worker]');
  const udf = await find('udf (app.py:3)');
  // The task is 1,500 samples wide (500 compute + 1,000 wait), the read its 1,000 of wait.
  check(Math.abs(read.width / taskRunner.width - 1000 / 1500) < 0.01,
        `the frame that waited is as wide as its wait (${Math.round(read.width)} of ${Math.round(taskRunner.width)} px)`);
  check(worker.width <= read.width + 0.5 && udf.width <= read.width + 0.5 &&
        worker.x - worker.width / 2 >= read.x - read.width / 2 - 0.5,
        `the worker's subtree fits within the wait (${Math.round(worker.width)} px)`);
  await page.mouse.move(worker.x, worker.y);
  const tip = await page.textContent('#tooltip');
  check(tip.includes('1,500 samples') && tip.includes('drawn to scale within the 1,000 samples python_wait'),
        `the worker's tooltip keeps its real time and says it is drawn within the wait: "${tip}"`);
  await page.mouse.move(read.x, read.y);
  const readTip = await page.textContent('#tooltip');
  check(readTip.includes('1,000 samples') && readTip.includes('plus 1,500 samples of Python worker time'),
        `the waiting frame's tooltip names its wait and the worker time within it: "${readTip}"`);
  const legend = await page.textContent('#legend');
  check(legend.includes('python: 1,200 samples') && legend.includes('drawn to scale within the python_wait'),
        `legend keeps the real Python time and says how it is drawn: "${legend}"`);
  check(errors.length === 0, `no page errors ${errors.join(' | ')}`);
  await page.screenshot({ path: path.join(outputDir, 'pyspark-stage.png') });
  await page.close();
}

async function countColours(browser, pngBuffer) {
  const page = await browser.newPage();
  const colours = await page.evaluate(async (base64) => {
    const image = new Image();
    image.src = 'data:image/png;base64,' + base64;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const seen = new Set();
    for (let i = 0; i < pixels.length; i += 4 * 7) seen.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
    return seen.size;
  }, pngBuffer.toString('base64'));
  await page.close();
  return colours;
}

async function main() {
  fs.mkdirSync(outputDir, { recursive: true });
  const input = path.join(outputDir, 'spark-stage.collapsed');
  const html = path.join(outputDir, 'spark-stage.html');
  const total = writeProfile(input);
  execFileSync(sparkprof, ['flamegraph', input, '-o', html, '--title', 'Stage 7 <test>'], { stdio: 'inherit' });

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const consoleErrors = [];
    const requests = [];
    page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()); });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));
    page.on('request', (request) => { if (!request.url().startsWith('file:')) requests.push(request.url()); });
    await page.goto('file://' + html);
    await page.waitForFunction(() => window.sparkprofFlameGraph !== undefined);

    const initial = await page.evaluate(() => window.sparkprofFlameGraph.state());
    check(initial.total === total, `total weight is ${total} (got ${initial.total})`);
    check(initial.zoom === 0, 'starts unzoomed');
    check(await page.title() === 'Stage 7 <test>', 'title shown as text');
    check(await page.evaluate(() => window.__pwned === undefined), 'hostile frame name did not run');
    const legend = await page.textContent('#legend');
    check(legend.includes('serialization') && legend.includes('s3a_write'), `legend lists categories: ${legend}`);

    // Search: Kryo frames hold 400 of 1250 samples = 32%.
    await page.fill('#search', 'kryo');
    await page.waitForFunction(() => document.getElementById('match-info').textContent.includes('Matched'));
    const matchText = await page.textContent('#match-info');
    const afterSearch = await page.evaluate(() => window.sparkprofFlameGraph.state());
    check(afterSearch.matchedWeight === 400, `substring search matched 400 samples (got ${afterSearch.matchedWeight})`);
    check(matchText.includes('32.0%'), `match info shows the share: "${matchText}"`);
    await page.check('#regex');
    await page.fill('#search', 'S3A.*write|Shuffle');
    await page.waitForFunction(() => window.sparkprofFlameGraph.state().matchedWeight === 370);
    check(true, 'regex search matched 370 samples');
    const hostile = await page.evaluate(() => { document.getElementById('search').value = '</script>';
      document.getElementById('search').dispatchEvent(new Event('input')); return window.sparkprofFlameGraph.state().matchedWeight; });
    check(hostile === 20, `hostile frame is data and searchable (matched ${hostile})`);

    // Hover tooltip.
    const taskRunner = await page.evaluate(() => window.sparkprofFlameGraph.findFrame('TaskRunner.run'));
    check(taskRunner !== null, 'TaskRunner frame is drawn');
    await page.mouse.move(taskRunner.x, taskRunner.y);
    const tooltip = await page.textContent('#tooltip');
    check(await page.isVisible('#tooltip') && tooltip.includes('of parent') && tooltip.includes('org.apache.spark.executor'),
          `tooltip shows readable name and shares: "${tooltip.slice(0, 120)}..."`);

    // Zoom into the Kryo frame by clicking it.
    await page.fill('#search', '');
    const kryo = await page.evaluate(() => window.sparkprofFlameGraph.findFrame('Kryo.writeClassAndObject'));
    await page.mouse.click(kryo.x, kryo.y);
    const zoomed = await page.evaluate(() => window.sparkprofFlameGraph.state());
    check(zoomed.zoom !== 0 && zoomed.zoomName.includes('Kryo'), `click zoomed to ${zoomed.zoomName}`);
    check(!(await page.isDisabled('#reset')), 'reset enabled while zoomed');
    check((await page.textContent('#breadcrumb')).includes('Kryo'), 'breadcrumb names the zoomed frame');
    const wide = await page.evaluate(() => window.sparkprofFlameGraph.findFrame('FieldSerializer.write'));
    check(wide !== null && wide.width > 1000, `zoomed child spans the width (${wide && Math.round(wide.width)} px)`);
    await page.screenshot({ path: path.join(outputDir, 'flamegraph-zoomed.png') });
    await page.click('#reset');
    check((await page.evaluate(() => window.sparkprofFlameGraph.state())).zoom === 0, 'reset unzooms');

    await page.check('#inverted');
    check((await page.evaluate(() => window.sparkprofFlameGraph.state())).inverted, 'icicle toggle');
    await page.uncheck('#inverted');

    const screenshot = await page.screenshot({ path: path.join(outputDir, 'flamegraph.png'), fullPage: true });
    const colours = await countColours(browser, screenshot);
    check(colours >= 10, `screenshot is not blank (${colours} distinct colours)`);
    check(consoleErrors.length === 0, `no console errors ${consoleErrors.join(' | ')}`);
    check(requests.length === 0, `no network requests ${requests.join(' ')}`);

    await checkPythonWorkerDrawnWithinWait(browser, outputDir);
  } finally {
    await browser.close();
  }
  console.log(`screenshots in ${outputDir}`);
  if (failures.length) {
    console.log(`${failures.length} check(s) failed`);
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

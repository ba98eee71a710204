// What every sparkprof browser test needs: the command line (SPARKPROF_BINARY [OUTPUT_DIR]),
// skipping with 77 when Debian's Chromium or playwright-core is missing, a headless Chromium that
// never talks to the network, a page that records console errors and non-file requests, and
// ok/FAIL checks that set the exit code. (flamegraph.test.js predates it and has its own copy.)
'use strict';

const fs = require('fs');

const SKIP = 77;
const CHROMIUM = process.env.SPARKPROF_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// Returns { sparkprof, outputDir, chromium } or exits (77 to skip, 1 on a bad command line).
function setUp(scriptName) {
  const [sparkprof, outputDir = fs.mkdtempSync(`/tmp/sparkprof-${scriptName}-`)] = process.argv.slice(2);
  const skipWith = (reason) => {
    console.log(`SKIP: ${reason}`);
    process.exit(SKIP);
  };
  if (!fs.existsSync(CHROMIUM)) skipWith(`${CHROMIUM} not found (scripts/install-deps.sh --browser)`);
  let playwright;
  try {
    playwright = require('playwright-core');
  } catch (error) {
    skipWith('playwright-core is not installed (run tests/browser/setup.sh)');
  }
  if (!sparkprof || !fs.existsSync(sparkprof)) {
    console.error(`usage: node ${scriptName}.test.js SPARKPROF_BINARY [OUTPUT_DIR]`);
    process.exit(1);
  }
  fs.mkdirSync(outputDir, { recursive: true });
  return { sparkprof, outputDir, chromium: playwright.chromium };
}

// Debian's Chromium through playwright-core, or exit 77 (skipped) naming what is missing: for
// tests whose command line is their own (the serve page's tests take a server's URL).
function requireChromium() {
  if (!fs.existsSync(CHROMIUM)) {
    console.log(`SKIP: ${CHROMIUM} not found (scripts/install-deps.sh --browser)`);
    process.exit(SKIP);
  }
  try {
    return require('playwright-core').chromium;
  } catch (error) {
    console.log('SKIP: playwright-core is not installed (run tests/browser/setup.sh)');
    process.exit(SKIP);
  }
}

function launch(chromium) {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

// A page whose console errors, uncaught exceptions and network requests are collected.
async function watchedPage(browser, viewport) {
  const page = await browser.newPage({ viewport });
  const watch = { consoleErrors: [], requests: [] };
  page.on('console', (message) => { if (message.type() === 'error') watch.consoleErrors.push(message.text()); });
  page.on('pageerror', (error) => watch.consoleErrors.push(String(error)));
  page.on('request', (request) => { if (!request.url().startsWith('file:')) watch.requests.push(request.url()); });
  return { page, watch };
}

const failures = [];
function check(condition, message) {
  console.log(`${condition ? 'ok  ' : 'FAIL'} ${message}`);
  if (!condition) failures.push(message);
}

// Runs the test body; exits 1 when it throws or any check failed.
function run(body) {
  body().then(() => {
    if (failures.length) {
      console.log(`${failures.length} check(s) failed`);
      process.exit(1);
    }
  }, (error) => {
    console.error(error);
    process.exit(1);
  });
}

module.exports = { setUp, requireChromium, launch, watchedPage, check, run };

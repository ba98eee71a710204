// sparkprof flame graph viewer. Reads the JSON in #profile-data and draws on a canvas.
// Frame names are data: they only ever reach the page through textContent or canvas fillText.
(function () {
  'use strict';

  var data = JSON.parse(document.getElementById('profile-data').textContent);
  var FRAME_HEIGHT = 18;
  var FONT = '12px Menlo, Consolas, "DejaVu Sans Mono", monospace';
  var MAX_CANVAS_PIXELS = 30000;

  // ---- Rebuild the tree from the compact depth-first encoding -------------------------------
  var flat = data.nodes;
  var count = flat.length / 5;
  var nameOf = new Uint32Array(count);
  var categoryOf = new Uint8Array(count);
  var total = new Float64Array(count);
  var self = new Float64Array(count);
  var parent = new Int32Array(count);
  var depth = new Uint32Array(count);
  var start = new Float64Array(count);      // left edge, in drawn weight units
  // Drawn width, in weight units: the total, except where a Python worker's subtree is drawn
  // within the wait it overlaps (flamegraph/python_worker_layout.h). Tooltips show real weights.
  var drawnWidth = new Float64Array(count);
  var subtreeEnd = new Uint32Array(count);  // one past the last node of the subtree
  var before = data.diff ? data.diff.before : null;
  var maxDepth = 0;
  (function rebuild() {
    var open = [];  // [node, children still to place, next child's left edge]
    var drawnPairs = data.drawn || [];
    for (var i = 0; i < count; i++) {
      var base = i * 5;
      nameOf[i] = flat[base];
      categoryOf[i] = flat[base + 1];
      total[i] = flat[base + 2];
      self[i] = flat[base + 3];
      drawnWidth[i] = total[i];
    }
    for (var p = 0; p < drawnPairs.length; p += 2) drawnWidth[drawnPairs[p]] = drawnPairs[p + 1];
    for (i = 0; i < count; i++) {
      base = i * 5;
      while (open.length && open[open.length - 1][1] === 0) subtreeEnd[open.pop()[0]] = i;
      if (open.length) {
        var top = open[open.length - 1];
        parent[i] = top[0];
        depth[i] = depth[top[0]] + 1;
        start[i] = top[2];
        top[2] += drawnWidth[i];
        top[1]--;
      } else {
        parent[i] = -1;
      }
      if (depth[i] > maxDepth) maxDepth = depth[i];
      open.push([i, flat[base + 4], start[i]]);
    }
    while (open.length) subtreeEnd[open.pop()[0]] = count;
  })();

  var grandTotal = count ? total[0] : 0;
  var names = data.names;

  // ---- Python workers' subtrees -------------------------------------------------------------
  // workerOf[node]: index in data.pythonWorkers (triples: node, parent's wait, 1 drawn within the
  // wait / 0 beside) of the "[python worker]" subtree holding the node, or -1.
  var workers = data.pythonWorkers || [];
  var workerOf = new Int32Array(count).fill(-1);
  for (var w = 0; w < workers.length; w += 3) workerOf[workers[w]] = w;
  for (var v = 1; v < count; v++) if (workerOf[v] < 0) workerOf[v] = workerOf[parent[v]];
  function drawnWithinWait(node) { return workerOf[node] >= 0 && workers[workerOf[node] + 2] === 1; }
  // The time a tooltip names: the real total inside a worker's subtree; elsewhere the frame's
  // own (task thread's) time, which is its drawn width: no worker time drawn within a wait.
  function shownWeight(node) { return workerOf[node] >= 0 ? total[node] : drawnWidth[node]; }
  var taskTotal = count ? drawnWidth[0] : 0;
  var withinWaitTime = 0;
  var besideCount = 0;
  for (w = 0; w < workers.length; w += 3) {
    if (workers[w + 2] === 1) withinWaitTime += total[workers[w]];
    else besideCount++;
  }

  // ---- Formatting -----------------------------------------------------------------------------
  function formatWeight(value) {
    if (data.unit === 'nanoseconds') {
      if (value >= 1e9) return (value / 1e9).toFixed(2) + ' s';
      if (value >= 1e6) return (value / 1e6).toFixed(2) + ' ms';
      if (value >= 1e3) return (value / 1e3).toFixed(1) + ' µs';
      return value + ' ns';
    }
    return value.toLocaleString('en-US') + (value === 1 ? ' sample' : ' samples');
  }
  function percent(part, whole) {
    if (!whole) return '0%';
    var p = 100 * part / whole;
    return (p >= 10 || p === 0 ? p.toFixed(1) : p.toPrecision(2)) + '%';
  }

  // ---- Colours ------------------------------------------------------------------------------
  // One hue per category (same order as the schema enum).
  var CATEGORY_HSL = [
    [28, 85, 60],   // compute: orange
    [275, 55, 62],  // serialization: purple
    [0, 75, 58],    // s3a_write: red
    [330, 65, 66],  // s3a_read: pink
    [215, 70, 60],  // shuffle_write: blue
    [188, 60, 50],  // shuffle_read: teal
    [45, 80, 50],   // spill: amber
    [120, 45, 50],  // file_io: green
    [55, 75, 45],   // gc: olive yellow
    [0, 0, 70],     // other: grey
    [160, 45, 42],  // jit: sea green
    [240, 25, 60],  // vm: slate
    // Off CPU (task threads' waits): cool, desaturated hues, light enough to read as "not running".
    [200, 35, 72],  // python_wait: pale steel blue
    [185, 30, 70],  // shuffle_fetch_wait: pale cyan
    [225, 35, 74],  // io_wait: pale periwinkle
    [260, 25, 74],  // lock_wait: pale lavender
    [170, 20, 78],  // sleep: pale sage
    [345, 35, 74],  // cpu_starved: dusty rose (runnable, no CPU)
    [210, 10, 78],  // off_cpu_other: blue-grey
    [50, 90, 55],   // python: Python yellow
    [50, 40, 76]    // python_off_cpu: pale Python yellow (the worker waiting in its own code)
  ];
  var KIND_HSL = [
    [110, 50, 55],  // java: green
    [180, 55, 55],  // inlined: aqua
    [55, 75, 52],   // c++: yellow
    [28, 85, 58],   // kernel: orange
    [0, 70, 60]     // native: red
  ];
  var SEARCH_COLOUR = 'rgb(230, 0, 230)';
  var nameHash = new Float32Array(names.length);
  for (var n = 0; n < names.length; n++) {
    var h = 0;
    var s = names[n];
    for (var k = 0; k < s.length && k < 40; k++) h = (h * 31 + s.charCodeAt(k)) | 0;
    nameHash[n] = ((h >>> 0) % 1000) / 1000;
  }
  function hsl(triple, variation) {
    return 'hsl(' + triple[0] + ',' + triple[1] + '%,' + (triple[2] - 8 + 16 * variation).toFixed(1) + '%)';
  }
  function diffColour(node) {
    var afterShare = total[node] / grandTotal;
    var beforeShare = data.diff.beforeTotal ? before[node] / data.diff.beforeTotal : 0;
    var delta = afterShare - beforeShare;
    var strength = maxAbsDelta ? Math.min(1, Math.abs(delta) / maxAbsDelta) : 0;
    if (strength < 0.005) return 'rgb(232,232,232)';  // unchanged: neither red nor blue
    var fade = Math.round(235 - 190 * strength);
    return delta > 0 ? 'rgb(250,' + fade + ',' + fade + ')' : 'rgb(' + fade + ',' + fade + ',250)';
  }
  var maxAbsDelta = 0;
  if (data.diff) {
    for (var d = 1; d < count; d++) {
      var change = total[d] / grandTotal - (data.diff.beforeTotal ? before[d] / data.diff.beforeTotal : 0);
      maxAbsDelta = Math.max(maxAbsDelta, Math.abs(change));
    }
  }
  function frameColour(node) {
    if (matched && matched[node]) return SEARCH_COLOUR;
    if (state.colorMode === 'diff' && data.diff) return diffColour(node);
    var variation = nameHash[nameOf[node]];
    if (state.colorMode === 'kind') return hsl(KIND_HSL[data.nameKinds[nameOf[node]]] || KIND_HSL[4], variation);
    return hsl(CATEGORY_HSL[categoryOf[node]] || CATEGORY_HSL[9], variation);
  }

  // ---- State and elements -------------------------------------------------------------------
  var state = { zoom: 0, inverted: false, colorMode: data.colorMode, search: '', matchedWeight: 0 };
  var matched = null;  // Uint8Array: 1 where the frame name matches the search
  var canvas = document.getElementById('flame');
  var context = canvas.getContext('2d');
  var tooltip = document.getElementById('tooltip');
  var resetButton = document.getElementById('reset');
  var searchInput = document.getElementById('search');
  var regexBox = document.getElementById('regex');
  var ignoreCaseBox = document.getElementById('ignore-case');
  var matchInfo = document.getElementById('match-info');
  var colourSelect = document.getElementById('color-mode');
  var drawn = [];  // per depth: flat [node, x, width, ...] of frames drawn last time
  var canvasWidth = 0;
  var charWidth = 7;

  document.getElementById('title').textContent = data.title;
  document.title = data.title;
  document.getElementById('subtitle').textContent = data.subtitle;
  document.getElementById('summary').textContent =
      'Total ' + formatWeight(taskTotal) + ' · ' +
      (withinWaitTime ? 'Python workers ' + formatWeight(withinWaitTime) +
          ' more, drawn within the python_wait they overlap · ' : '') + (count - 1).toLocaleString('en-US') + ' frames shown' +
      (data.prunedNodes ? ' · ' + data.prunedNodes.toLocaleString('en-US') + ' narrower frames hidden' : '') +
      (data.diff ? ' · diff: widths from the new profile, red = more, blue = less (normalised); ' +
          'before total ' + formatWeight(data.diff.beforeTotal) +
          (data.diff.beforeOnly ? ', ' + percent(data.diff.beforeOnly, data.diff.beforeTotal) +
              ' of it under paths not shown here' : '') : '');
  if (!data.diff) colourSelect.querySelector('option[value=diff]').remove();
  colourSelect.value = state.colorMode;

  // ---- Legend -------------------------------------------------------------------------------
  function legendItem(container, colour, text) {
    var item = document.createElement('span');
    item.className = 'legend-item';
    var swatch = document.createElement('span');
    swatch.className = 'swatch';
    swatch.style.background = colour;
    var label = document.createElement('span');
    label.textContent = text;
    item.appendChild(swatch);
    item.appendChild(label);
    container.appendChild(item);
  }
  function buildLegend() {
    var legend = document.getElementById('legend');
    legend.textContent = '';
    if (state.colorMode === 'diff') {
      legendItem(legend, 'rgb(250,45,45)', 'more in the new profile');
      legendItem(legend, 'rgb(45,45,250)', 'less in the new profile');
    } else if (state.colorMode === 'kind') {
      data.kinds.forEach(function (kind, i) { legendItem(legend, hsl(KIND_HSL[i], 0.5), kind); });
    }
    var categoryTotal = data.categoryTotals.reduce(function (a, b) { return a + b; }, 0);
    data.categories.forEach(function (name, i) {
      var weight = data.categoryTotals[i];
      if (!weight) return;
      var text = name + ': ' + formatWeight(weight) + ' (' + percent(weight, categoryTotal) + ')';
      legendItem(legend, state.colorMode === 'category' ? hsl(CATEGORY_HSL[i], 0.5) : 'transparent', text);
    });
    if (workers.length) {
      legendItem(legend, 'transparent', 'python, python_off_cpu: real time; each [python worker] subtree is ' +
          'drawn to scale within the python_wait of the frame above it' +
          (besideCount ? ' (' + besideCount + ' beside it at real width: that frame has no python_wait)' : ''));
    }
  }

  // ---- Drawing ------------------------------------------------------------------------------
  function rowOf(nodeDepth) { return state.inverted ? nodeDepth : maxDepth - nodeDepth; }

  function layout() {
    var ratio = window.devicePixelRatio || 1;
    canvasWidth = Math.max(200, canvas.parentElement.clientWidth);
    var height = Math.min(MAX_CANVAS_PIXELS, (maxDepth + 1) * FRAME_HEIGHT);
    canvas.style.height = height + 'px';
    canvas.width = Math.round(canvasWidth * ratio);
    canvas.height = Math.round(height * ratio);
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.font = FONT;
    charWidth = context.measureText('mmmmmmmmmm').width / 10 || 7;
  }

  function drawFrame(node, x, width, faded) {
    var y = rowOf(depth[node]) * FRAME_HEIGHT;
    context.globalAlpha = faded ? 0.55 : 1;
    context.fillStyle = frameColour(node);
    context.fillRect(x, y, Math.max(width - 1, 0.5), FRAME_HEIGHT - 1);
    if (width > 3 * charWidth) {
      var label = names[nameOf[node]];
      var room = Math.floor((width - 6) / charWidth);
      if (label.length > room) label = label.slice(0, Math.max(room - 2, 1)) + '..';
      context.fillStyle = '#000';
      context.fillText(label, x + 3, y + FRAME_HEIGHT - 5);
    }
    context.globalAlpha = 1;
    (drawn[depth[node]] = drawn[depth[node]] || []).push(node, x, width);
  }

  function render() {
    context.clearRect(0, 0, canvas.width, canvas.height);
    drawn = [];
    if (!count || !grandTotal) return;
    var zoom = state.zoom;
    var left = start[zoom];
    var scale = canvasWidth / drawnWidth[zoom];
    for (var up = parent[zoom]; up !== -1; up = parent[up]) drawFrame(up, 0, canvasWidth, true);
    drawFrame(zoom, 0, canvasWidth, false);
    var end = subtreeEnd[zoom];
    for (var i = zoom + 1; i < end;) {
      var width = drawnWidth[i] * scale;
      if (width < 0.35) {  // too narrow to see, and so is everything above it
        i = subtreeEnd[i];
        continue;
      }
      drawFrame(i, (start[i] - left) * scale, width, false);
      i++;
    }
  }

  function redraw() {
    layout();
    render();
  }

  // ---- Zoom ---------------------------------------------------------------------------------
  function zoomTo(node) {
    state.zoom = node;
    resetButton.disabled = node === 0;
    var path = [];
    for (var up = node; up > 0; up = parent[up]) path.unshift(names[nameOf[up]]);
    document.getElementById('breadcrumb').textContent =
        node === 0 ? '' : 'Zoomed to: ' + path.join(' ▸ ') + ' (' + percent(shownWeight(node), workerOf[node] >= 0 ? grandTotal : taskTotal) + ')';
    document.body.dataset.zoom = node === 0 ? '' : names[nameOf[node]];
    render();
  }

  function nodeAt(clientX, clientY) {
    var rect = canvas.getBoundingClientRect();
    var x = clientX - rect.left;
    var row = Math.floor((clientY - rect.top) / FRAME_HEIGHT);
    var nodeDepth = state.inverted ? row : maxDepth - row;
    var frames = drawn[nodeDepth];
    if (!frames) return -1;
    for (var i = 0; i < frames.length; i += 3) {
      if (x >= frames[i + 1] && x < frames[i + 1] + frames[i + 2]) return frames[i];
    }
    return -1;
  }

  // ---- Tooltip ------------------------------------------------------------------------------
  function tooltipLine(text, className) {
    var line = document.createElement('div');
    if (className) line.className = className;
    line.textContent = text;
    tooltip.appendChild(line);
  }
  function showTooltip(node, clientX, clientY) {
    tooltip.textContent = '';
    tooltipLine(names[nameOf[node]], 'tip-name');
    var weight = shownWeight(node);
    var whole = workerOf[node] >= 0 ? grandTotal : taskTotal;
    var up = parent[node];
    var parentTotal = up < 0 ? weight : workerOf[up] === workerOf[node] ? shownWeight(up) : total[up];
    tooltipLine(formatWeight(weight) + ' — ' + percent(weight, whole) + ' of total, ' +
        percent(weight, parentTotal) + ' of parent');
    tooltipLine('self: ' + formatWeight(self[node]) + ' (' + percent(self[node], whole) + ')');
    if (workerOf[node] >= 0) {
      var top = workers[workerOf[node]];
      var waited = names[nameOf[parent[top]]];
      tooltipLine(drawnWithinWait(node)
          ? 'Python worker: drawn to scale within the ' + formatWeight(workers[workerOf[node] + 1]) +
              ' python_wait of ' + waited + ' it overlaps (the worker\'s ' + formatWeight(total[top]) +
              ' drawn ' + percent(drawnWidth[top], total[top]) + ' wide)'
          : 'Python worker: drawn at its real width beside ' + waited + ', which has no python_wait to draw it within');
    } else if (total[node] !== drawnWidth[node]) {
      tooltipLine('plus ' + formatWeight(total[node] - drawnWidth[node]) +
          ' of Python worker time, drawn within the python_wait it overlaps');
    }
    tooltipLine('category: ' + data.categories[categoryOf[node]] +
        ' · kind: ' + data.kinds[data.nameKinds[nameOf[node]]]);
    if (data.diff) {
      var beforeShare = data.diff.beforeTotal ? before[node] / data.diff.beforeTotal : 0;
      var afterShare = total[node] / grandTotal;
      var change = 100 * (afterShare - beforeShare);
      tooltipLine('before: ' + formatWeight(before[node]) + ' (' + percent(before[node], data.diff.beforeTotal) +
          ') · after: ' + formatWeight(total[node]) + ' (' + percent(total[node], grandTotal) + ')');
      tooltipLine('change: ' + (change >= 0 ? '+' : '') + change.toFixed(2) + ' percentage points of the total');
    }
    tooltip.hidden = false;
    var x = Math.min(clientX + 14, window.innerWidth - tooltip.offsetWidth - 6);
    var y = clientY + 16;
    if (y + tooltip.offsetHeight > window.innerHeight) y = clientY - tooltip.offsetHeight - 10;
    tooltip.style.left = Math.max(0, x) + 'px';
    tooltip.style.top = Math.max(0, y) + 'px';
  }

  // ---- Search -------------------------------------------------------------------------------
  function runSearch() {
    var query = searchInput.value;
    state.search = query;
    matchInfo.classList.remove('error');
    if (!query) {
      matched = null;
      state.matchedWeight = 0;
      matchInfo.textContent = '';
      render();
      return;
    }
    var test;
    if (regexBox.checked) {
      var pattern;
      try {
        pattern = new RegExp(query, ignoreCaseBox.checked ? 'i' : '');
      } catch (error) {
        matchInfo.classList.add('error');
        matchInfo.textContent = 'Invalid regex: ' + error.message;
        return;
      }
      test = function (name) { return pattern.test(name); };
    } else if (ignoreCaseBox.checked) {
      var needle = query.toLowerCase();
      test = function (name) { return name.toLowerCase().indexOf(needle) !== -1; };
    } else {
      test = function (name) { return name.indexOf(query) !== -1; };
    }
    var nameMatches = new Uint8Array(names.length);
    for (var n = 1; n < names.length; n++) nameMatches[n] = test(names[n]) ? 1 : 0;
    matched = new Uint8Array(count);
    // A match inside another match's subtree is already counted in the outer one's total.
    var weight = 0;
    var coveredUntil = 0;
    var frames = 0;
    for (var i = 1; i < count; i++) {
      if (!nameMatches[nameOf[i]]) continue;
      matched[i] = 1;
      frames++;
      if (i >= coveredUntil) {
        weight += total[i];
        coveredUntil = subtreeEnd[i];
      }
    }
    state.matchedWeight = weight;
    matchInfo.textContent = 'Matched: ' + percent(weight, grandTotal) + ' (' + formatWeight(weight) + ', ' +
        frames.toLocaleString('en-US') + ' frames)';
    render();
  }

  // ---- Events -------------------------------------------------------------------------------
  canvas.addEventListener('click', function (event) {
    var node = nodeAt(event.clientX, event.clientY);
    if (node >= 0) zoomTo(node === state.zoom && node !== 0 ? Math.max(parent[node], 0) : node);
  });
  canvas.addEventListener('mousemove', function (event) {
    var node = nodeAt(event.clientX, event.clientY);
    if (node < 0) {
      tooltip.hidden = true;
      return;
    }
    showTooltip(node, event.clientX, event.clientY);
  });
  canvas.addEventListener('mouseleave', function () { tooltip.hidden = true; });
  resetButton.addEventListener('click', function () { zoomTo(0); });
  document.getElementById('inverted').addEventListener('change', function (event) {
    state.inverted = event.target.checked;
    render();
  });
  colourSelect.addEventListener('change', function () {
    state.colorMode = colourSelect.value;
    buildLegend();
    render();
  });
  searchInput.addEventListener('input', runSearch);
  regexBox.addEventListener('change', runSearch);
  ignoreCaseBox.addEventListener('change', runSearch);
  document.addEventListener('keydown', function (event) {
    if ((event.ctrlKey || event.metaKey) && event.key === 'f') {
      event.preventDefault();
      searchInput.focus();
      searchInput.select();
    } else if (event.key === 'Escape') {
      zoomTo(0);
    }
  });
  var resizePending = false;
  window.addEventListener('resize', function () {
    if (resizePending) return;
    resizePending = true;
    window.requestAnimationFrame(function () {
      resizePending = false;
      redraw();
    });
  });

  // For tests and for people poking at the page from the console.
  window.sparkprofFlameGraph = {
    state: function () {
      return { zoom: state.zoom, zoomName: names[nameOf[state.zoom]], inverted: state.inverted,
               colorMode: state.colorMode, search: state.search, matchedWeight: state.matchedWeight,
               total: grandTotal, frames: count };
    },
    // Centre of the first drawn frame whose name contains `text`, in client coordinates.
    findFrame: function (text) {
      var rect = canvas.getBoundingClientRect();
      for (var nodeDepth = 0; nodeDepth < drawn.length; nodeDepth++) {
        var frames = drawn[nodeDepth] || [];
        for (var i = 0; i < frames.length; i += 3) {
          if (names[nameOf[frames[i]]].indexOf(text) !== -1 && frames[i + 2] > 4) {
            return { x: rect.left + frames[i + 1] + frames[i + 2] / 2,
                     y: rect.top + rowOf(nodeDepth) * FRAME_HEIGHT + FRAME_HEIGHT / 2,
                     width: frames[i + 2] };
          }
        }
      }
      return null;
    }
  };

  buildLegend();
  redraw();
  zoomTo(0);
})();

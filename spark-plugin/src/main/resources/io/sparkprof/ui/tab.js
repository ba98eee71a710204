// The sparkprof tab of Spark's UI (live driver and History Server): fetches data/ (the
// sparkprof.ui/v1 document: a sparkprof.report/v1 report, the stage attempts with samples, the
// agents) and draws findings, phases, stages with their flame graph, executors and a timeline.
// Every URL is relative to the tab's page, so it works behind Spark's UI proxy.
(function () {
  'use strict';
  var root = document.getElementById('sparkprof-root');
  if (!root) return;
  var live = root.getAttribute('data-mode') === 'live';
  var REFRESH_MS = 5000;
  var PENDING_MS = 2000;
  var MAX_TIMELINE_STAGES = 300;
  var selected = null;  // {stage, attempt} whose flame graph is shown
  var userSelected = false;
  // Spark's stage page links here with ?stage=N&attempt=M (StagePageLinks): that stage's graph.
  var asked = /[?&]stage=(\d+)(?:&attempt=(\d+))?/.exec(window.location.search);
  var scrollToAsked = false;
  if (asked) {
    selected = { stage: Number(asked[1]), attempt: Number(asked[2] || 0) };
    userSelected = true;
    scrollToAsked = true;
  }

  function esc(value) {
    return String(value === undefined || value === null ? '' : value)
      .replace(/&/g, '&amp;').replace(/\x3c/g, '&lt;').replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  }
  function ms(value) {
    if (value === undefined || value === null || value < 0) return '';
    if (value < 1000) return Math.round(value) + ' ms';
    if (value < 60000) return (value / 1000).toFixed(1) + ' s';
    if (value < 3600000) return (value / 60000).toFixed(1) + ' min';
    return (value / 3600000).toFixed(2) + ' h';
  }
  function bytes(value) {
    if (!value || value < 0) return '';
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0;
    while (value >= 1024 && i < units.length - 1) { value /= 1024; i++; }
    return value.toFixed(i ? 1 : 0) + ' ' + units[i];
  }
  function section(id, title, body) {
    return '<div class="sparkprof-section" id="' + id + '"><h4>' + esc(title) + '</h4>' + body + '</div>';
  }

  function findingsHtml(report) {
    var findings = (report && report.findings) || [];
    if (!findings.length) return '<p class="sparkprof-none">No findings so far.</p>';
    return '<ul class="sparkprof-findings">' + findings.map(function (f) {
      return '<li class="sparkprof-finding sparkprof-' + esc(f.severity) + '" data-rule="' + esc(f.rule) + '">' +
        '<span class="sparkprof-severity">' + esc(f.severity) + '</span> <b>' + esc(f.title) + '</b>' +
        (f.stage_ids && f.stage_ids.length ? ' <span class="sparkprof-stages-of">(stages ' +
          f.stage_ids.slice(0, 10).map(esc).join(', ') + (f.stage_ids.length > 10 ? ', ...' : '') + ')</span>' : '') +
        '<div class="sparkprof-explanation">' + esc(f.explanation) + '</div></li>';
    }).join('') + '</ul>';
  }

  function phasesHtml(report) {
    var phases = report && report.phases;
    if (!phases) return '<p class="sparkprof-none">No phase breakdown yet.</p>';
    var names = ['resource_wait', 'driver_only', 'io_write', 'compute', 'task_wait', 'shuffle', 'gc', 'idle_slots'];
    var bar = '', rows = '';
    names.forEach(function (name, i) {
      var phase = phases[name];
      if (!phase || typeof phase.ms !== 'number') return;
      var pct = Math.max(0, (phase.ratio || 0) * 100);
      if (pct > 0) bar += '<span class="sparkprof-phase sparkprof-phase-' + i + '" style="width:' + pct.toFixed(2) + '%" title="' + esc(name) + ' ' + pct.toFixed(1) + '%"></span>';
      rows += '<tr data-phase="' + esc(name) + '"><td><span class="sparkprof-swatch sparkprof-phase-' + i + '"></span>' + esc(name) + '</td><td>' + ms(phase.ms) + '</td><td>' + pct.toFixed(1) + '%</td></tr>';
    });
    return '<div class="sparkprof-phasebar">' + bar + '</div><table class="table table-bordered table-sm sparkprof-table" id="sparkprof-phase-table"><thead><tr><th>phase</th><th>time</th><th>share of wall</th></tr></thead><tbody>' + rows + '</tbody></table>';
  }

  function profiledMap(data) {
    var map = {};
    (data.profiled_stages || []).forEach(function (s) { map[s.stage_id + ':' + s.attempt] = s; });
    return map;
  }

  function stagesHtml(report, data) {
    var stages = (report && report.stages) || [];
    var profiled = profiledMap(data);
    var seen = {};
    var rows = [];
    stages.forEach(function (s) { seen[s.stage_id + ':' + s.attempt] = true; });
    // Running first, then the latest stages first.
    var ordered = stages.slice().sort(function (a, b) {
      var ra = a.status === 'active' ? 0 : 1, rb = b.status === 'active' ? 0 : 1;
      if (ra !== rb) return ra - rb;
      return b.stage_id - a.stage_id || b.attempt - a.attempt;
    });
    ordered.forEach(function (s) {
      var key = s.stage_id + ':' + s.attempt;
      var p = profiled[key];
      var sampled = p && typeof p.sampled_ms === 'number' ? ms(p.sampled_ms) : (p ? 'yes' : '');
      var d = s.task_duration_ms || {};
      rows.push('<tr class="sparkprof-stage sparkprof-status-' + esc(s.status) + '" data-stage-id="' + esc(s.stage_id) + '" data-attempt="' + esc(s.attempt) + '">' +
        '<td>' + esc(s.stage_id) + (s.attempt ? ' (attempt ' + esc(s.attempt) + ')' : '') + '</td>' +
        '<td class="sparkprof-name">' + esc(s.name) + '</td><td>' + esc(s.status === 'active' ? 'running' : s.status) + '</td>' +
        '<td>' + esc(s.task_attempts) + ' / ' + esc(s.num_tasks) + '</td><td>' + ms(s.duration_ms) + '</td>' +
        '<td>' + ms(d.p50) + ' / ' + ms(d.max) + '</td><td>' + esc(sampled) + '</td>' +
        '<td>' + (p ? '<a href="#" class="sparkprof-show-flamegraph" data-stage="' + esc(s.stage_id) + '" data-attempt="' + esc(s.attempt) + '">flame graph</a> ' : '') +
        '<a class="sparkprof-spark-stage" href="../stages/stage/?id=' + encodeURIComponent(s.stage_id) + '&amp;attempt=' + encodeURIComponent(s.attempt) + '">Spark stage</a></td></tr>');
    });
    // Stage attempts with samples that the report does not list (a live model behind the samples).
    Object.keys(profiled).forEach(function (key) {
      if (seen[key]) return;
      var p = profiled[key];
      rows.push('<tr class="sparkprof-stage" data-stage-id="' + esc(p.stage_id) + '" data-attempt="' + esc(p.attempt) + '"><td>' + esc(p.stage_id) + '</td><td></td><td></td><td></td><td></td><td></td><td>' + (typeof p.sampled_ms === 'number' ? ms(p.sampled_ms) : 'yes') + '</td>' +
        '<td><a href="#" class="sparkprof-show-flamegraph" data-stage="' + esc(p.stage_id) + '" data-attempt="' + esc(p.attempt) + '">flame graph</a></td></tr>');
    });
    if (!rows.length) return '<p class="sparkprof-none">No stages yet.</p>';
    return '<table class="table table-bordered table-sm sparkprof-table" id="sparkprof-stage-table"><thead><tr><th>stage</th><th>name</th><th>status</th><th>tasks ended / total</th><th>duration</th><th>task p50 / max</th><th>sampled</th><th></th></tr></thead><tbody>' + rows.join('') + '</tbody></table>';
  }

  function executorsHtml(report, data) {
    var list = (report && report.executors && report.executors.list) || [];
    var agents = {};
    (data.agents || []).forEach(function (a) { agents[a.executor_id] = a; });
    var ids = {};
    var rows = list.map(function (e) {
      ids[e.id] = true;
      var a = agents[e.id] || {};
      var peaks = e.peaks || {};
      var memory = e.memory && e.memory.peaks ? e.memory.peaks.rss_bytes : undefined;
      return '<tr class="sparkprof-executor" data-executor-id="' + esc(e.id) + '"><td>' + esc(e.id) + '</td><td>' + esc(e.host) + '</td><td>' + esc(e.cores) + '</td>' +
        '<td>' + esc(a.samples_taken === undefined ? '' : a.samples_taken) + '</td><td>' + bytes(peaks.jvm_heap_memory_bytes) + '</td><td>' + bytes(memory) + '</td>' +
        '<td>' + bytes(a.native_memory_bytes) + '</td><td>' + (e.removed_ms >= 0 ? 'removed: ' + esc(e.removed_reason) : 'alive') + '</td></tr>';
    });
    Object.keys(agents).forEach(function (id) {
      if (ids[id]) return;
      var a = agents[id];
      rows.push('<tr class="sparkprof-executor" data-executor-id="' + esc(id) + '"><td>' + esc(id) + '</td><td></td><td></td><td>' + esc(a.samples_taken) + '</td><td></td><td></td><td>' + bytes(a.native_memory_bytes) + '</td><td></td></tr>');
    });
    if (!rows.length) return '<p class="sparkprof-none">No executors yet.</p>';
    return '<table class="table table-bordered table-sm sparkprof-table" id="sparkprof-executor-table"><thead><tr><th>executor</th><th>host</th><th>cores</th><th>samples taken</th><th>JVM heap peak</th><th>RSS peak</th><th>agent memory</th><th>state</th></tr></thead><tbody>' + rows.join('') + '</tbody></table>';
  }

  // Executors alive (rows) and stages (bars) over the run; the resource wait at the start shaded.
  function timelineHtml(report) {
    var app = report && report.application;
    if (!app || !(app.start_ms > 0)) return '<p class="sparkprof-none">No timeline yet.</p>';
    var start = app.start_ms;
    var end = app.end_ms > start ? app.end_ms : Date.now();
    var stages = ((report.stages) || []).filter(function (s) { return s.submission_ms > 0; });
    stages.forEach(function (s) { if (s.completion_ms > end) end = s.completion_ms; });
    var executors = (report.executors && report.executors.list) || [];
    var shown = stages.slice(-MAX_TIMELINE_STAGES);
    var width = 1000, row = 12, top = 18;
    var height = top + (executors.length + shown.length + 2) * row + 10;
    var x = function (t) { return Math.max(0, Math.min(width, (t - start) / Math.max(1, end - start) * width)); };
    var svg = '<svg id="sparkprof-timeline-svg" viewBox="0 0 ' + width + ' ' + height + '" width="100%" preserveAspectRatio="none" style="height:' + Math.min(height, 600) + 'px">';
    var wait = report.phases && report.phases.resource_wait ? report.phases.resource_wait.ms : 0;
    if (wait > 0) svg += '<rect class="sparkprof-resource-wait" x="0" y="0" width="' + x(start + wait).toFixed(1) + '" height="' + height + '"><title>resource wait ' + esc(ms(wait)) + '</title></rect>';
    svg += '<text x="2" y="12" class="sparkprof-axis">0</text><text x="' + (width - 2) + '" y="12" text-anchor="end" class="sparkprof-axis">' + esc(ms(end - start)) + '</text>';
    var y = top;
    executors.forEach(function (e) {
      var a = e.added_ms > 0 ? e.added_ms : start, r = e.removed_ms > 0 ? e.removed_ms : end;
      svg += '<rect class="sparkprof-executor-bar" x="' + x(a).toFixed(1) + '" y="' + y + '" width="' + Math.max(1, x(r) - x(a)).toFixed(1) + '" height="' + (row - 2) + '"><title>executor ' + esc(e.id) + '</title></rect>';
      y += row;
    });
    y += row;
    shown.forEach(function (s) {
      var c = s.completion_ms > 0 ? s.completion_ms : end;
      svg += '<rect class="sparkprof-stage-bar sparkprof-status-' + esc(s.status) + '" x="' + x(s.submission_ms).toFixed(1) + '" y="' + y + '" width="' + Math.max(1, x(c) - x(s.submission_ms)).toFixed(1) + '" height="' + (row - 2) + '"><title>stage ' + esc(s.stage_id) + ' ' + esc(s.name) + ' ' + esc(ms(c - s.submission_ms)) + '</title></rect>';
      y += row;
    });
    svg += '</svg>';
    return svg + '<p class="sparkprof-legend"><span class="sparkprof-swatch sparkprof-resource-wait"></span>resource wait (no executor yet: ' + esc(ms(wait)) + ') <span class="sparkprof-swatch sparkprof-executor-bar"></span>executors alive <span class="sparkprof-swatch sparkprof-stage-bar"></span>stages' +
      (stages.length > shown.length ? ' (the latest ' + shown.length + ' of ' + stages.length + ')' : '') + '</p>';
  }

  function pickDefault(report, data) {
    var profiled = data.profiled_stages || [];
    if (!profiled.length) return null;
    var running = {};
    ((report && report.stages) || []).forEach(function (s) { if (s.status === 'active') running[s.stage_id + ':' + s.attempt] = true; });
    var best = null;
    profiled.forEach(function (p) {
      var score = (running[p.stage_id + ':' + p.attempt] ? 1e15 : 0) + (p.sampled_ms || 0) + p.stage_id;
      if (!best || score > best.score) best = { stage: p.stage_id, attempt: p.attempt, score: score };
    });
    return best;
  }

  function showFlameGraph(stage, attempt, reload) {
    var frame = document.getElementById('sparkprof-flamegraph');
    var title = document.getElementById('sparkprof-flamegraph-title');
    if (!frame) return;
    var src = 'flamegraph/?stage=' + encodeURIComponent(stage) + '&attempt=' + encodeURIComponent(attempt);
    if (reload || frame.getAttribute('src') !== src) frame.setAttribute('src', src);
    if (title) title.textContent = 'stage ' + stage + (attempt ? ' attempt ' + attempt : '');
    selected = { stage: stage, attempt: attempt };
  }

  // An application without a stored profile in the History Server: what the page shows instead,
  // and how to get a profile next time.
  function noProfileHtml(data) {
    var html = '<div id="sparkprof-no-profile" class="sparkprof-message"><p><b>No sparkprof profile was stored for this run</b>' +
      (data.report ? ': below is the analysis of its event log alone (findings, phase breakdown, stages), without flame graphs.' : '.') +
      (data.event_log ? ' Event log: <code>' + esc(data.event_log) + '</code>' + (data.analysis_ms ? ' (analysed in ' + ms(data.analysis_ms) + ')' : '') + '.' : '') + '</p>';
    if (data.event_log_message) html += '<p id="sparkprof-event-log-message">' + esc(data.event_log_message) + '</p>';
    html += '<p>To get flame graphs and the profile-aware findings next time, run the application with the plugin and the event log on: ' +
      '<code>--jars sparkprof-spark.jar --conf spark.plugins=io.sparkprof.SparkProfPlugin --conf spark.eventLog.enabled=true</code>; ' +
      'the driver then stores its profile beside the event log, where this tab reads it.' +
      (data.searched && data.searched.length ? ' (Looked for a profile in: ' + data.searched.map(esc).join(', ') + '.)' : '') + '</p></div>';
    return html;
  }

  function render(data) {
    var report = data.report;
    if (report && report.applications && report.applications.length) report = report.applications[0];
    var app = (report && report.application) || {};
    var fromEventLog = data.report_source === 'event_log' || data.report_source === 'none';
    var header = '<p id="sparkprof-summary">' + (live ? (data.application_finished ? 'Live driver, application ended.' : 'Live driver: figures so far, refreshed every ' + (REFRESH_MS / 1000) + ' s while this page is visible.') :
      (fromEventLog ? (data.pending ? 'History Server: analysing the event log...' : 'History Server: the analysis of the event log.') : 'History Server: the report the driver wrote at the end.')) +
      (app.id ? ' Application <b>' + esc(app.id) + '</b> ' + esc(app.name || '') : '') + '</p>';
    if (fromEventLog) {
      header += noProfileHtml(data);
    } else if (data.message) {
      header += '<p id="sparkprof-message" class="sparkprof-message">' + esc(data.message) +
        (data.searched && data.searched.length ? ' (looked in: ' + data.searched.map(esc).join(', ') + ')' : '') + '</p>';
    }
    var top = header;
    if (report) {
      top += section('sparkprof-findings', 'Findings' + (live && !data.application_finished ? ' so far' : ''), findingsHtml(report));
      top += section('sparkprof-phases', 'Phase breakdown', phasesHtml(report));
    }
    top += section('sparkprof-stages', 'Stages', stagesHtml(report, data));
    var bottom = '';
    if (report) {
      bottom += section('sparkprof-executors', 'Executors: sampled time and memory', executorsHtml(report, data));
      bottom += section('sparkprof-timeline', 'Timeline: resource wait, executors, stages', timelineHtml(report));
    }
    // The flame graph's section is made once and kept: a refresh redraws the figures around it,
    // so a finished stage's graph stays as the user zoomed it; a running stage's is reloaded.
    if (!document.getElementById('sparkprof-flamegraph-section')) {
      root.innerHTML = '<div id="sparkprof-top"></div>' +
        section('sparkprof-flamegraph-section', 'Flame graph',
          '<p id="sparkprof-diff-controls" style="display:none">Compare two stage attempts: before <select id="sparkprof-diff-before"></select> ' +
          'after <select id="sparkprof-diff-after"></select> <button type="button" id="sparkprof-diff-show">Show the diff</button> ' +
          '<span class="sparkprof-legend">(the after attempt\'s call tree; red: a larger share of its time than before, blue: smaller)</span></p>' +
          '<p><span id="sparkprof-flamegraph-title"></span></p><iframe id="sparkprof-flamegraph" title="flame graph" class="sparkprof-flamegraph"></iframe>') +
        '<div id="sparkprof-bottom"></div>';
    }
    document.getElementById('sparkprof-top').innerHTML = top;
    document.getElementById('sparkprof-bottom').innerHTML = bottom;
    updateDiffControls(data);
    var frame = document.getElementById('sparkprof-flamegraph');
    var choice = userSelected && selected ? selected : pickDefault(report, data);
    if (choice && choice.diff) {
      frame.style.display = '';  // the diff the user asked for stays
    } else if (choice) {
      var running = ((report && report.stages) || []).some(function (s) {
        return s.stage_id === choice.stage && s.attempt === choice.attempt && s.status === 'active';
      });
      frame.style.display = '';
      showFlameGraph(choice.stage, choice.attempt, running);
    } else {
      frame.style.display = 'none';
      document.getElementById('sparkprof-flamegraph-title').textContent = fromEventLog
        ? 'No flame graphs: no profile was stored for this run.' : 'No stage has samples yet.';
    }
  }

  // The two selects of the diff: every stage attempt with samples, the user's choice kept
  // across refreshes; by default the two with the most samples, the later one as "after".
  function updateDiffControls(data) {
    var controls = document.getElementById('sparkprof-diff-controls');
    var profiled = (data.profiled_stages || []).slice().sort(function (a, b) {
      return a.stage_id - b.stage_id || a.attempt - b.attempt;
    });
    controls.style.display = profiled.length >= 2 ? '' : 'none';
    var options = profiled.map(function (p) {
      return '<option value="' + esc(p.stage_id + ':' + p.attempt) + '">stage ' + esc(p.stage_id) +
        (p.attempt ? ' attempt ' + esc(p.attempt) : '') + (typeof p.sampled_ms === 'number' ? ' (' + esc(ms(p.sampled_ms)) + ')' : '') + '</option>';
    }).join('');
    var busiest = profiled.slice().sort(function (a, b) { return (b.sampled_ms || 0) - (a.sampled_ms || 0); }).slice(0, 2)
      .sort(function (a, b) { return a.stage_id - b.stage_id || a.attempt - b.attempt; });
    ['sparkprof-diff-before', 'sparkprof-diff-after'].forEach(function (id, i) {
      var select = document.getElementById(id);
      var value = select.value || (busiest[i] ? busiest[i].stage_id + ':' + busiest[i].attempt : '');
      if (select.getAttribute('data-options') !== options) {
        select.innerHTML = options;
        select.setAttribute('data-options', options);
      }
      select.value = value;
    });
  }

  function showDiff() {
    var before = document.getElementById('sparkprof-diff-before').value.split(':');
    var after = document.getElementById('sparkprof-diff-after').value.split(':');
    var frame = document.getElementById('sparkprof-flamegraph');
    var title = document.getElementById('sparkprof-flamegraph-title');
    if (before.length !== 2 || after.length !== 2 || !frame) return;
    frame.setAttribute('src', 'diff/?before=' + encodeURIComponent(before[0]) + '&beforeAttempt=' + encodeURIComponent(before[1]) +
      '&after=' + encodeURIComponent(after[0]) + '&afterAttempt=' + encodeURIComponent(after[1]));
    frame.style.display = '';
    title.textContent = 'diff: stage ' + before[0] + (before[1] !== '0' ? ' attempt ' + before[1] : '') +
      ' \u2192 stage ' + after[0] + (after[1] !== '0' ? ' attempt ' + after[1] : '');
    userSelected = true;
    selected = { diff: true };
  }

  root.addEventListener('click', function (event) {
    if (event.target.id === 'sparkprof-diff-show') { showDiff(); return; }
    var link = event.target.closest ? event.target.closest('.sparkprof-show-flamegraph') : null;
    if (!link) return;
    event.preventDefault();
    userSelected = true;
    showFlameGraph(Number(link.getAttribute('data-stage')), Number(link.getAttribute('data-attempt')), true);
    var frame = document.getElementById('sparkprof-flamegraph');
    if (frame) { frame.style.display = ''; frame.scrollIntoView(); }
  });

  var inFlight = false;
  function load() {
    if (inFlight) return;
    inFlight = true;
    fetch('data/', { credentials: 'same-origin', cache: 'no-store' }).then(function (response) {
      if (!response.ok) throw new Error('data/: HTTP ' + response.status);
      return response.json();
    }).then(function (data) {
      inFlight = false;
      var t0 = performance.now();
      render(data);
      root.setAttribute('data-rendered-ms', (performance.now() - t0).toFixed(1));
      root.setAttribute('data-pending', data.pending ? 'true' : 'false');
      if (scrollToAsked) {
        scrollToAsked = false;
        var section = document.getElementById('sparkprof-flamegraph-section');
        if (section) section.scrollIntoView();
      }
      root.setAttribute('data-loaded', String(Date.now()));
      if (live && !data.application_finished) schedule();
      else if (data.pending) schedule(PENDING_MS);  // the event log's analysis is not done yet
    }, function (error) {
      inFlight = false;
      root.innerHTML = '<p id="sparkprof-message" class="sparkprof-message">Cannot load sparkprof\'s figures: ' + esc(error.message) + '</p>';
      if (live) schedule();
    });
  }
  function schedule(delayMs) {
    setTimeout(function () {
      if (document.visibilityState === 'hidden') { schedule(delayMs); return; }
      load();
    }, delayMs || REFRESH_MS);
  }
  load();
})();

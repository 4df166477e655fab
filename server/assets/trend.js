// The trend page's chart: a series over a branch's runs, the band of each
// run's rounds around it, changes of configuration, environment or tandem
// marked; clicking a point opens its run.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('trend-data').textContent);
  var host = document.getElementById('trend-plot');
  if (!host || !data.points.length) return;
  var dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
  var ink = dark ? '#d8d8d8' : '#333', rule = dark ? '#3a3a3a' : '#e4e4e4';
  var xs = [], val = [], lo = [], hi = [], marks = [];
  data.points.forEach(function (p) {
    xs.push(Date.parse(p.created_at) / 1000);
    val.push(p.value); lo.push(p.lo); hi.push(p.hi);
    marks.push(p.changed && p.changed.length ? p.value : null);
  });
  // fmt writes a value with its unit: durations in their unit, shares as
  // percentages, other numbers with k/M/G; digits is its precision
  function fmt(v, digits) {
    digits = digits || 6;
    if (v == null || !isFinite(v)) return '–';
    var a = Math.abs(v);
    if (data.unit === 'ns') {
      if (a >= 1e9) return +(v / 1e9).toPrecision(digits) + ' s';
      if (a >= 1e6) return +(v / 1e6).toPrecision(digits) + ' ms';
      if (a >= 1e3) return +(v / 1e3).toPrecision(digits) + ' µs';
      return +v.toPrecision(digits) + ' ns';
    }
    if (data.unit === 'share') return +(v * 100).toPrecision(digits) + ' %';
    if (data.unit === 'bytes') {
      if (a >= 1 << 30) return +(v / (1 << 30)).toPrecision(digits) + ' GiB';
      if (a >= 1 << 20) return +(v / (1 << 20)).toPrecision(digits) + ' MiB';
      if (a >= 1 << 10) return +(v / (1 << 10)).toPrecision(digits) + ' KiB';
      return +v.toPrecision(digits) + ' B';
    }
    var n = a >= 1e9 ? +(v / 1e9).toPrecision(digits) + 'G' : a >= 1e6 ? +(v / 1e6).toPrecision(digits) + 'M' :
      a >= 1e4 ? +(v / 1e3).toPrecision(digits) + 'k' : String(+v.toPrecision(digits));
    return n + (data.unit ? ' ' + data.unit : '');
  }
  // tick labels are short: the number and a compact unit, so that the
  // number is never cut off the axis
  function tick(v) {
    var t = fmt(v, 3);
    return t.replace(/ requests\/s$/, '/s').replace(/ (instructions|allocations)$/, '');
  }
  var unitLabel = data.unit === 'ns' ? 'time' : data.unit === 'share' ? 'share of requests (%)' : data.unit === 'bytes' ? 'size' : (data.unit || 'value');
  var changes = data.changes || [];
  var changeAt = {};
  changes.forEach(function (c) { changeAt[c.run] = c; });
  var line = '#0072b2', band = 'rgba(0,114,178,0.15)';
  var plot = new uPlot({
    width: Math.max(host.clientWidth, 240), height: 320,
    series: [
      // the legend names the run under the cursor: its time and commit
      { label: 'run', value: function (u, v, si, i) {
        var p = i == null ? null : data.points[i];
        if (!p) return '–';
        var when = p.created_at.slice(0, 16).replace('T', ' ');
        return p.commit ? when + ' · ' + p.commit.slice(0, 12) : when;
      } },
      { label: 'value', stroke: line, width: 1.6, points: { show: true, size: 5 }, value: function (u, v) { return fmt(v); } },
      { label: 'rounds: lowest', stroke: band, value: function (u, v) { return fmt(v); } },
      { label: 'rounds: highest', stroke: band, value: function (u, v) { return fmt(v); } },
      { label: 'configuration, environment or tandem changed', stroke: '#d55e00', width: 0,
        points: { show: true, size: 11, fill: '#d55e00' }, value: function (u, v) { return v == null ? '–' : 'yes'; } }
    ],
    bands: [{ series: [3, 2], fill: band }],
    axes: [{ stroke: ink, grid: { stroke: rule } },
      { stroke: ink, grid: { stroke: rule }, size: 80, label: unitLabel, values: function (u, vs) { return vs.map(tick); } }],
    // the value axis starts at zero, so that a small wiggle looks small,
    // unless the page was asked to zoom to the data
    scales: { y: { range: function (u, min, max) {
      if (data.zoom || !(min >= 0)) { var pad = (max - min) * 0.05 || Math.abs(max) * 0.05 || 1; return [min - pad, max + pad]; }
      return [0, max > 0 ? max * 1.08 : 1];
    } } },
    hooks: { draw: [function (u) {
      // change points: a dashed line before the first run after each,
      // labelled with its size
      var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
      ctx.save();
      ctx.font = Math.round(11 * devicePixelRatio) + 'px sans-serif';
      data.points.forEach(function (p, i) {
        var c = changeAt[p.run];
        if (!c || i === 0) return;
        var x = (xs[i - 1] + xs[i]) / 2;
        var px = Math.round(u.valToPos(x, 'x', true)) + 0.5;
        if (px < u.bbox.left || px > u.bbox.left + u.bbox.width) return;
        ctx.strokeStyle = ctx.fillStyle = c.kind === 'regression' ? '#d55e00' : '#009e73';
        ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
        ctx.lineWidth = devicePixelRatio;
        ctx.beginPath(); ctx.moveTo(px, top); ctx.lineTo(px, top + h); ctx.stroke();
        ctx.fillText(c.label, px + 3 * devicePixelRatio, top + 12 * devicePixelRatio);
      });
      ctx.restore();
      // the value axis' tick labels, drawn on the canvas, said on the element
      if (u.axes[1] && u.axes[1]._values) host.dataset.yticks = u.axes[1]._values.join('|');
    }] },
    cursor: { drag: { x: true, y: false } }
  }, [xs, val, lo, hi, marks], host);
  // the axes and marks are drawn on the canvas: the element says what
  host.dataset.ylabel = unitLabel;
  host.dataset.changes = changes.map(function (c) { return c.label; }).join('; ');
  // the run under the cursor, said on the element too
  plot.over.addEventListener('mousemove', function () {
    var i = plot.cursor.idx, p = i == null ? null : data.points[i];
    host.dataset.hover = p ? p.run + (p.commit ? ' ' + p.commit : '') : '';
  });
  plot.over.addEventListener('click', function () {
    var i = plot.cursor.idx;
    if (i != null && data.points[i]) window.location.href = '/runs/' + data.points[i].run;
  });
  if (window.ResizeObserver) {
    new ResizeObserver(function () { plot.setSize({ width: Math.max(host.clientWidth, 240), height: 320 }); }).observe(host);
  }
})();

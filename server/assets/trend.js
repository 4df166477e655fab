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
  function fmt(v) {
    if (v == null || !isFinite(v)) return '–';
    if (data.unit === 'ns') {
      var a = Math.abs(v);
      if (a >= 1e9) return +(v / 1e9).toPrecision(4) + ' s';
      if (a >= 1e6) return +(v / 1e6).toPrecision(4) + ' ms';
      if (a >= 1e3) return +(v / 1e3).toPrecision(4) + ' µs';
      return +v.toPrecision(4) + ' ns';
    }
    return +v.toPrecision(6) + (data.unit ? ' ' + data.unit : '');
  }
  var line = '#0072b2', band = 'rgba(0,114,178,0.15)';
  var plot = new uPlot({
    width: Math.max(host.clientWidth, 240), height: 320,
    series: [
      {},
      { label: 'value', stroke: line, width: 1.6, points: { show: true, size: 5 }, value: function (u, v) { return fmt(v); } },
      { label: 'rounds: lowest', stroke: band, value: function (u, v) { return fmt(v); } },
      { label: 'rounds: highest', stroke: band, value: function (u, v) { return fmt(v); } },
      { label: 'configuration, environment or tandem changed', stroke: '#d55e00', width: 0,
        points: { show: true, size: 11, fill: '#d55e00' }, value: function (u, v) { return v == null ? '–' : 'yes'; } }
    ],
    bands: [{ series: [3, 2], fill: band }],
    axes: [{ stroke: ink, grid: { stroke: rule } },
      { stroke: ink, grid: { stroke: rule }, size: 80, values: function (u, vs) { return vs.map(fmt); } }],
    cursor: { drag: { x: true, y: false } }
  }, [xs, val, lo, hi, marks], host);
  plot.over.addEventListener('click', function () {
    var i = plot.cursor.idx;
    if (i != null && data.points[i]) window.location.href = '/runs/' + data.points[i].run;
  });
  if (window.ResizeObserver) {
    new ResizeObserver(function () { plot.setSize({ width: Math.max(host.clientWidth, 240), height: 320 }); }).observe(host);
  }
})();

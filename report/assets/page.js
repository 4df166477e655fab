// The report's charts and downloads. Every chart is drawn by uPlot from
// the figures embedded in the page; nothing is fetched.
(function () {
  'use strict';
  var doc = document;
  function data(id) {
    var el = doc.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }
  var dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
  var ink = dark ? '#d8d8d8' : '#333';
  var rule = dark ? '#3a3a3a' : '#e4e4e4';
  var palette = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#888888'];

  // sig prints v with n significant figures, thousands grouped.
  function sig(v, n) {
    var s = String(Number(v.toPrecision(n)));
    if (s.indexOf('e') >= 0) return s;
    var p = s.split('.');
    p[0] = p[0].replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    return p.join('.');
  }
  function scaled(v, n, steps) {
    for (var i = 0; i < steps.length; i++) {
      if (Math.abs(v) >= steps[i][0]) return sig(v / steps[i][0], n) + steps[i][1];
    }
    return sig(v, n) + steps[steps.length - 1][1];
  }
  var durations = [[1e9, ' s'], [1e6, ' ms'], [1e3, ' µs'], [1, ' ns']];
  var sizes = [[1 << 30, ' GiB'], [1 << 20, ' MiB'], [1 << 10, ' KiB'], [1, ' B']];
  function nines(q) { return -Math.log10(1 - q / 100); }
  function percentile(x) { return String(Number((100 * (1 - Math.pow(10, -x))).toFixed(4))) + '%'; }
  // fmt prints a value in its unit: n significant figures (3 on an axis,
  // 6 where the cursor reads an exact value).
  function fmt(v, unit, n) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    switch (unit) {
      case 'ns': return v === 0 ? '0' : scaled(v, n, durations);
      case 'B': return v === 0 ? '0 B' : scaled(v, n, sizes);
      case '/s': return sig(v, n) + '/s';
      case 's': return sig(v, n) + ' s';
      case '%': return percentile(v);
    }
    return sig(v, n);
  }
  var spectrumTicks = [0, nines(50), nines(90), nines(99), nines(99.9), nines(99.99), nines(99.999)];

  function draw(f, host) {
    var series = [{ label: f.x, value: function (u, v) { return fmt(v, f.xunit, 6); } }];
    f.series.forEach(function (s) {
      var c = palette[s.color % palette.length];
      series.push({
        label: s.label, stroke: c, width: 1.6, dash: s.dash ? [6, 4] : undefined, spanGaps: true,
        points: { show: true, size: 5, fill: c, stroke: c },
        value: function (u, v) { return fmt(v, f.yunit, 6); }
      });
    });
    var x = {
      label: f.x, stroke: ink, grid: { stroke: rule }, ticks: { stroke: rule },
      values: function (u, vs) { return vs.map(function (v) { return fmt(v, f.xunit, 3); }); }
    };
    if (f.xint) x.incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
    if (f.kind === 'spectrum') {
      x.splits = function (u) {
        var lo = u.scales.x.min, hi = u.scales.x.max;
        return spectrumTicks.filter(function (v) { return v >= lo - 1e-9 && v <= hi + 1e-9; });
      };
    }
    var y = {
      label: f.y, stroke: ink, grid: { stroke: rule }, ticks: { stroke: rule }, size: 72,
      values: function (u, vs) { return vs.map(function (v) { return fmt(v, f.yunit, 3); }); }
    };
    // marks: events (perturbations) as vertical lines, labelled at the top
    var marks = f.marks || [];
    var hooks = {};
    if (marks.length) {
      host.dataset.marks = String(marks.length);
      hooks.draw = [function (u) {
        var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
        ctx.save();
        ctx.font = Math.round(11 * devicePixelRatio) + 'px sans-serif';
        marks.forEach(function (m) {
          var px = Math.round(u.valToPos(m.x, 'x', true)) + 0.5;
          if (px < u.bbox.left || px > u.bbox.left + u.bbox.width) return;
          ctx.strokeStyle = ctx.fillStyle = palette[m.color % palette.length];
          ctx.setLineDash([2 * devicePixelRatio, 3 * devicePixelRatio]);
          ctx.lineWidth = devicePixelRatio;
          ctx.beginPath();
          ctx.moveTo(px, top);
          ctx.lineTo(px, top + h);
          ctx.stroke();
          ctx.fillText(m.label, px + 3 * devicePixelRatio, top + 12 * devicePixelRatio);
        });
        ctx.restore();
      }];
    }
    // the axis is drawn on the canvas: say on the element what it is
    host.dataset.ylabel = f.y;
    host.dataset.yscale = f.logy ? 'log' : 'linear';
    var opts = {
      width: Math.max(host.clientWidth, 240), height: 300, series: series, hooks: hooks,
      scales: { x: { time: false }, y: f.logy ? { distr: 3 } : {} },
      axes: [x, y],
      cursor: { drag: { x: true, y: false } }, // drag to zoom, double-click to reset
      legend: { live: true }
    };
    var cols = [f.xs].concat(f.series.map(function (s) { return s.ys; }));
    var plot = new uPlot(opts, cols, host);
    if (window.ResizeObserver) {
      new ResizeObserver(function () {
        var w = Math.max(host.clientWidth, 240);
        if (w !== plot.width) plot.setSize({ width: w, height: 300 });
      }).observe(host);
    }
  }

  var figs = data('tandem-figures') || [];
  figs.forEach(function (f) {
    var fig = doc.getElementById('fig-' + f.id);
    var host = fig && fig.querySelector('.plot');
    if (host) draw(f, host);
  });

  // save offers text as a file, made in the page (no request).
  function save(name, text, type) {
    var url = URL.createObjectURL(new Blob([text], { type: type }));
    var a = doc.createElement('a');
    a.href = url;
    a.download = name;
    doc.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  }
  doc.addEventListener('click', function (e) {
    var b = e.target.closest && e.target.closest('button[data-download]');
    if (!b) return;
    var r = data('tandem-results');
    if (!r) return;
    if (b.dataset.download === 'results') {
      save('results.json', JSON.stringify(r, null, 2), 'application/json');
      return;
    }
    var f = (r.findings || [])[Number(b.dataset.finding)];
    if (f && f.evidence && b.dataset.key in f.evidence) {
      var name = (f.id + '-' + b.dataset.key).replace(/[^A-Za-z0-9._-]+/g, '_');
      save(name + '.txt', f.evidence[b.dataset.key], 'text/plain');
    }
  });
})();

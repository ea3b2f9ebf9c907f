/* iolayer --html: draws the page from the JSON in #data. Every name goes in through
 * textContent or an attribute, never as markup. Errors are shown in #errors (and kept in
 * the DOM for tests); body[data-ready] is set once everything is drawn. */
"use strict";
(function () {
  var errs = [];
  function fail(msg) {
    errs.push(String(msg));
    var e = document.getElementById("errors");
    if (e) { e.hidden = false; e.textContent = "page error: " + errs.join("\n"); e.setAttribute("data-count", errs.length); }
  }
  window.onerror = function (msg, src, line) { fail(msg + " (line " + line + ")"); };

  /* Text as iolayer's text output shows names: control characters (C0, DEL, C1) as \n, \t,
   * \r or \xhh, a backslash doubled (the JSON holds the exact name). */
  function shown(s, escaped) {
    /* escaped: a sentence iolayer wrote, its names escaped already: its backslashes stay */
    return String(s).replace(escaped ? /[\u0000-\u001f\u007f-\u009f]/g : /[\u0000-\u001f\u007f-\u009f\\]/g, function (c) {
      var n = c.charCodeAt(0);
      return c === "\\" ? "\\\\" : c === "\n" ? "\\n" : c === "\t" ? "\\t" : c === "\r" ? "\\r" :
        "\\x" + (n < 16 ? "0" : "") + n.toString(16);
    });
  }
  function el(tag, attrs, text, escaped) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, shown(attrs[k]));
    if (text !== undefined && text !== null) e.textContent = shown(text, escaped);
    return e;
  }
  function ms(ns) { return (ns / 1e6).toFixed(3) + " ms"; }
  function dur(ns) {
    if (ns < 1e3) return ns + " ns";
    if (ns < 1e6) return +(ns / 1e3).toPrecision(3) + " us";
    if (ns < 1e9) return +(ns / 1e6).toPrecision(3) + " ms";
    return +(ns / 1e9).toPrecision(3) + " s";
  }
  function bytes(b) {
    var u = ["B", "KB", "MB", "GB", "TB"], i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : b) + " " + u[i];
  }
  /* slot i of a log2 histogram: [2^i, 2^(i+1)) ns, slot 0 holds 0 and 1 */
  function slotRange(i) { return i ? dur(Math.pow(2, i)) + " to " + dur(Math.pow(2, i + 1)) : "0 to 2 ns"; }

  var D = JSON.parse(document.getElementById("data").textContent);
  var R = D.report || {};
  var procsByPid = {};
  (R.processes || []).forEach(function (p) { procsByPid[p.pid] = p; });

  function header() {
    var s = (R.duration_s || 0) + " s traced" + (R.pid ? ", process " + R.pid + " (its threads, not its children)" : ", all processes");
    if (D.host) s += " on " + D.host;
    if (D.generated) s += ", " + D.generated;
    document.getElementById("run").textContent = s;
    document.getElementById("foot").textContent = "iolayer " + (D.version || "") + ": this file is self-contained and fetches nothing.";
  }

  function verdict() {
    var v = R.verdict || {}, p = document.getElementById("verdict");
    p.appendChild(el("span", { "class": "layer", id: "verdict-layer" }, v.layer || "none"));
    p.appendChild(document.createTextNode(" \u2014 " + shown(v.reason || "", true)));
    var ul = document.getElementById("evidence");
    (D.evidence || []).forEach(function (l) { ul.appendChild(el("li", {}, l, true)); });
  }

  var PARTS = [["on_cpu_us", "on CPU", "#e8a33d"], ["runq_us", "run queue", "#d94f3d"],
               ["iowait_block_us", "I/O wait (its block I/O)", "#3d7bd9"],
               ["iowait_task_us", "I/O wait (ended by a task)", "#7f5fd0"], ["other_us", "other waits", "#9a9a9a"]];
  function split() {
    var box = document.getElementById("split"), leg = document.getElementById("split-legend");
    PARTS.forEach(function (p) { var s = el("span"); s.appendChild(el("i", { style: "background:" + p[2] })); s.appendChild(document.createTextNode(p[1])); leg.appendChild(s); });
    var rows = ((D.split || {}).processes || []).map(function (r) {
      var t = 0; PARTS.forEach(function (p) { t += r[p[0]] || 0; }); return { r: r, t: t };
    }).filter(function (x) { return x.t > 0; }).sort(function (a, b) { return b.t - a.t; });
    if (!D.split) { box.appendChild(el("p", { "class": "note" }, "The time split was not traced (no filesystem layer, or the kernel lacks its tracepoints).")); return; }
    if (!rows.length) { box.appendChild(el("p", { "class": "note" }, "No traced call in the window: nothing to split.")); return; }
    var max = rows[0].t, shown = rows.slice(0, 30);
    shown.forEach(function (x) {
      var r = x.r, p = procsByPid[r.pid], row = el("div", { "class": "srow", "data-pid": r.pid, "data-op": r.op });
      row.appendChild(el("div", { "class": "lab" }, (r.comm || (p ? p.comm : "process")) + " (" + r.pid + ") " + r.op + " x" + r.calls));
      var bar = el("div", { "class": "bar" }), at = 0;
      PARTS.forEach(function (q) {
        var v = r[q[0]] || 0; if (!v) return;
        var w = 100 * v / max, d = el("div", { style: "left:" + at + "%;width:" + w + "%;background:" + q[2], title: q[1] + ": " + (v / 1000).toFixed(3) + " ms (" + (100 * v / x.t).toFixed(1) + "%)" });
        at += w; bar.appendChild(d);
      });
      row.appendChild(bar);
      row.appendChild(el("div", { "class": "tot" }, (x.t / 1000).toFixed(3) + " ms"));
      box.appendChild(row);
    });
    if (rows.length > shown.length) box.appendChild(el("p", { "class": "note" }, (rows.length - shown.length) + " more process/operation rows not shown."));
  }

  /* ---- heat maps ---- */
  var tip = document.getElementById("tip");
  /* white to dark red on a log scale: [r, g, b] */
  function heatColour(n, max) {
    var f = Math.log(1 + n) / Math.log(1 + max);
    return [Math.round(255 - 40 * f), Math.round(235 - 200 * f), Math.round(170 - 150 * f)];
  }
  function heat() {
    var H = D.heat || { t: [], layers: [] }, box = document.getElementById("heat"), t = H.t || [];
    var W = 1100, LM = 70; /* the cells' width; the left margin with the buckets' labels */
    box.setAttribute("data-columns", t.length);
    (H.layers || []).forEach(function (L) {
      /* more seconds than pixels: a cell sums the seconds of its pixel (first[b] to last[b]) */
      var ncol = Math.max(t.length, 1), nb = Math.min(ncol, W), first = [], last = [];
      var sec = el("div", { "class": "heat", "data-key": L.key }), sum = 0, lo = 64, hi = -1, max = 0;
      var grid = new Float64Array(nb * 64);
      for (var col = 0; col < ncol; col++) {
        var b = Math.floor(col * nb / ncol);
        if (first[b] === undefined) first[b] = col;
        last[b] = col;
      }
      L.cells.forEach(function (c) {
        sum += c[2]; if (c[1] < lo) lo = c[1]; if (c[1] > hi) hi = c[1];
        var k = Math.floor(c[0] * nb / ncol) * 64 + c[1]; grid[k] += c[2]; if (grid[k] > max) max = grid[k];
      });
      sec.setAttribute("data-sum", sum);
      var unit = L.key === "iowait" ? "sleeps" : L.key.indexOf("syscall.") === 0 ? "calls" : "I/Os";
      var title = el("h3", {}, L.name + ": ");
      title.appendChild(el("span", { "class": "sum" }, sum));
      title.appendChild(document.createTextNode(" " + unit));
      sec.appendChild(title);
      box.appendChild(sec);
      if (!L.traced) { sec.setAttribute("data-state", "untraced"); sec.appendChild(el("p", { "class": "note" }, "Not traced on this system (see iolayer -v).")); return; }
      if (!sum) { sec.setAttribute("data-state", "empty"); sec.appendChild(el("p", { "class": "note" }, "None seen in the window.")); return; }
      lo = Math.max(0, lo - 1); hi = Math.min(63, hi + 1);
      var rows = hi - lo + 1, ch = Math.max(6, Math.min(14, Math.floor(160 / rows))), HH = rows * ch;
      var cw = W / nb, cv = el("canvas", { width: W + LM, height: HH }), g = cv.getContext("2d");
      var img = g.createImageData(W, HH), px = img.data, colOf = new Int32Array(W), rgb = {};
      for (var x = 0; x < W; x++) colOf[x] = Math.min(nb - 1, Math.floor(x / cw));
      for (var y = 0; y < HH; y++) {
        var base = (hi - Math.floor(y / ch));
        for (x = 0; x < W; x++) {
          var n = grid[colOf[x] * 64 + base];
          if (!n) continue;
          var c = rgb[n] || (rgb[n] = heatColour(n, max)), o = (y * W + x) * 4;
          px[o] = c[0]; px[o + 1] = c[1]; px[o + 2] = c[2]; px[o + 3] = 255;
        }
      }
      g.putImageData(img, LM, 0);
      g.fillStyle = "#555"; g.font = "10px sans-serif"; g.textBaseline = "middle";
      for (var sl = hi, step = Math.ceil(12 / ch); sl >= lo; sl -= step)
        g.fillText(sl ? dur(Math.pow(2, sl)) : "0", 2, (hi - sl + 0.5) * ch);
      cv.onmousemove = function (ev) {
        var r = cv.getBoundingClientRect(), b = Math.floor((ev.clientX - r.left - LM) / cw), slot = hi - Math.floor((ev.clientY - r.top) / ch);
        if (b < 0 || b >= nb || slot < lo || slot > hi) { tip.hidden = true; return; }
        var n = grid[b * 64 + slot] || 0, t0 = first[b] ? t[first[b] - 1] : 0, t1 = t[last[b]] !== undefined ? t[last[b]] : t0;
        tip.textContent = "t " + t0 + " to " + t1 + " s, " + slotRange(slot) + ": " + n + " " + unit;
        tip.style.left = (ev.clientX + 12) + "px"; tip.style.top = (ev.clientY + 12) + "px"; tip.hidden = false;
        sec.setAttribute("data-hover", tip.textContent);
      };
      cv.onmouseleave = function () { tip.hidden = true; };
      sec.appendChild(cv);
      sec.appendChild(el("div", { "class": "axis" }, "x: 0 to " + (t.length ? t[t.length - 1] : 0) + " s (" + t.length + " seconds" + (nb < ncol ? ", " + (ncol / nb).toFixed(1) + " to a column" : "") + "); y: log2 buckets, each labelled with its lower bound, " + slotRange(lo) + " (bottom) up to " + slotRange(hi) + "; darkest: " + max + " in a cell"));
      sec._probe = function () { /* the busiest cell's centre, for the self-test */
        var best = -1, bk = 0; for (var k = 0; k < grid.length; k++) if (grid[k] > best) { best = grid[k]; bk = k; }
        var r = cv.getBoundingClientRect();
        return { x: r.left + LM + (Math.floor(bk / 64) + 0.5) * cw, y: r.top + (hi - bk % 64 + 0.5) * ch, n: best };
      };
    });
  }

  /* ---- flame graph: root at the bottom, click to zoom ---- */
  var F = D.flame, fbox = document.getElementById("flame"), RH = 16, MINW = 0.001;
  function depthOf(n) { var d = 0; (n.c || []).forEach(function (k) { d = Math.max(d, depthOf(k)); }); return d + 1; }
  function fcolour(s) { var h = 2166136261; for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; } return "rgb(" + (205 + h % 50) + "," + (80 + (h >>> 8) % 130) + "," + (40 + (h >>> 16) % 40) + ")"; }
  function flame(zoom, path) {
    fbox.textContent = "";
    if (!F || !F.v) { fbox.appendChild(el("p", { "class": "note" }, D.flame === null ? "The I/O-wait layer was not traced." : "No I/O wait with a kernel stack in the window.")); fbox.style.height = "auto"; return; }
    var depth = path.length + depthOf(zoom) - 1, total = zoom.v, drawn = 0, hidden = 0;
    fbox.style.height = (depth * RH + 4) + "px";
    function frame(n, x, w, d, above) {
      var f = el("div", { "class": "f" + (above ? " above" : ""), title: n.n + " (" + ms(n.v) + ", " + (100 * n.v / F.v).toFixed(2) + "% of all)" }, n.n);
      f.style.left = (100 * x) + "%"; f.style.width = (100 * w) + "%";
      f.style.top = ((depth - d - 1) * RH) + "px"; f.style.background = fcolour(n.n);
      f.onclick = function (ev) { ev.stopPropagation(); zoomTo(n); };
      fbox.appendChild(f); drawn++;
    }
    path.forEach(function (n, i) { frame(n, 0, 1, i, true); });
    (function walk(n, x, d) {
      var w = n.v / total;
      if (w < MINW) { hidden++; return; }
      frame(n, x, w, d, false);
      var at = x; (n.c || []).forEach(function (k) { walk(k, at, d + 1); at += k.v / total; });
    })(zoom, 0, path.length);
    fbox.setAttribute("data-frames", drawn); fbox.setAttribute("data-hidden", hidden);
    fbox.setAttribute("data-zoom", zoom.n); fbox.setAttribute("data-total", F.v);
  }
  function findPath(n, target, path) {
    if (n === target) return path;
    for (var i = 0; i < (n.c || []).length; i++) { var p = findPath(n.c[i], target, path.concat([n])); if (p) return p; }
    return null;
  }
  function zoomTo(n) { flame(n, findPath(F, n, []) || []); }

  /* ---- tables ---- */
  function table(id, cols, rows, none) {
    var box = document.getElementById(id);
    if (!rows.length) { box.appendChild(el("p", { "class": "note" }, none)); return; }
    var t = el("table", { "data-rows": rows.length }), tr = el("tr");
    cols.forEach(function (c) { tr.appendChild(el("th", {}, c[0])); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var tr = el("tr");
      cols.forEach(function (c) { var v = c[1](r); tr.appendChild(el("td", c[2] ? { "class": "name" } : {}, v === undefined || v === null ? "-" : v)); });
      t.appendChild(tr);
    });
    box.appendChild(t);
  }
  function opsNs(p) { var t = 0; for (var k in p.ops || {}) t += p.ops[k].total_ns || 0; return t; }
  function tables() {
    table("procs", [["process", function (p) { return p.comm; }, 1], ["pid", function (p) { return p.pid; }],
      ["cgroup", function (p) { return p.cgroup; }, 1], ["read", function (p) { return bytes(p.read_bytes || 0); }],
      ["written", function (p) { return bytes(p.write_bytes || 0); }], ["to disk", function (p) { return bytes(p.disk_bytes || 0); }],
      ["time in calls", function (p) { return ms(opsNs(p)); }], ["I/O wait", function (p) { return ms(p.iowait_ns || 0); }]],
      R.processes || [], "No process did traced I/O in the window.");
    table("files", [["file", function (f) { return f.path; }, 1], ["pids", function (f) { return (f.pids || []).join(" ") + (f.more_pids ? " ..." : ""); }],
      ["read", function (f) { return bytes(f.read_bytes || 0); }], ["written", function (f) { return bytes(f.write_bytes || 0); }],
      ["fsyncs", function (f) { return f.fsyncs; }], ["time in calls", function (f) { return ms(f.total_ns || 0); }]],
      R.files || [], "No file operation traced in the window (ext4, xfs and btrfs only).");
    var cg = {}, list = [];
    (R.processes || []).forEach(function (p) {
      var k = p.cgroup || "(unknown)", c = cg[k];
      if (!c) { c = cg[k] = { cgroup: k, procs: 0, disk: 0, ns: 0, iow: 0 }; list.push(c); }
      c.procs++; c.disk += p.disk_bytes || 0; c.ns += opsNs(p); c.iow += p.iowait_ns || 0;
    });
    list.sort(function (a, b) { return b.ns + b.iow - a.ns - a.iow; });
    table("cgroups", [["cgroup", function (c) { return c.cgroup; }, 1], ["processes shown", function (c) { return c.procs; }],
      ["to disk", function (c) { return bytes(c.disk); }], ["time in calls", function (c) { return ms(c.ns); }],
      ["I/O wait", function (c) { return ms(c.iow); }]], list, "No cgroup: no process in the window.");
  }

  /* ---- self-test (#selftest): hover each heat map's busiest cell, zoom the flame graph ---- */
  function selftest() {
    document.querySelectorAll(".heat").forEach(function (s) {
      if (!s._probe) return;
      var p = s._probe(), cv = s.querySelector("canvas");
      window.scrollTo(0, 0);
      p = s._probe();
      cv.onmousemove({ clientX: p.x, clientY: p.y });
      s.setAttribute("data-probe", p.n);
    });
    tip.hidden = true;
    var kid = F && F.c && F.c[0];
    if (kid) { zoomTo(kid); fbox.setAttribute("data-zoom-test", fbox.getAttribute("data-zoom")); flame(F, []); }
  }

  var t0 = Date.now();
  var times = [];
  [header, verdict, split, heat, function () { flame(F, []); }, tables].forEach(function (f) {
    var t1 = Date.now();
    try { f(); } catch (e) { fail((e && e.stack) || e); }
    times.push(Date.now() - t1);
  });
  document.body.setAttribute("data-part-ms", times.join(" "));
  try { if (location.hash === "#selftest") selftest(); } catch (e) { fail((e && e.stack) || e); }
  document.body.setAttribute("data-draw-ms", Date.now() - t0);
  document.body.setAttribute("data-errors", errs.length);
  document.body.setAttribute("data-ready", "1");
})();

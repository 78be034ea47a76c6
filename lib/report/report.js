// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// kinstr report --html: draws what the page carries (script.kinstr-data blocks, each a saved kinstr
// output) with no network: folded stacks as flame graphs (d3-flame-graph, inlined beside this file),
// profile and span histograms as bar charts, count tables. Every chart names what it shows in data-*
// attributes, which the tests read from the DOM.
(function () {
  'use strict';

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgEl(tag, attrs) {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  function ns(v) {
    if (v >= 1e9) return (v / 1e9).toFixed(2) + ' s';
    if (v >= 1e6) return (v / 1e6).toFixed(2) + ' ms';
    if (v >= 1e3) return (v / 1e3).toFixed(1) + ' us';
    return v + ' ns';
  }

  // "a;b;c N" lines into the tree d3-flame-graph draws: each node's value its subtree's total.
  function foldedTree(text) {
    const root = { name: 'all', value: 0, children: [] };
    for (const line of text.split('\n')) {
      const m = /^(.*\S)\s+(\d+)$/.exec(line.trim());
      if (!m) continue;
      const n = Number(m[2]);
      let node = root;
      root.value += n;
      for (const frame of m[1].split(';')) {
        let child = node.children.find(c => c.name === frame);
        if (!child) {
          child = { name: frame, value: 0, children: [] };
          node.children.push(child);
        }
        child.value += n;
        node = child;
      }
    }
    return root;
  }

  function flame(section, name, text) {
    const tree = foldedTree(text);
    const width = Math.max(600, Math.min(1400, document.body.clientWidth - 40));
    const box = el('div', { class: 'flame', 'data-source': name, 'data-total': String(tree.value) });
    section.appendChild(box);
    const chart = flamegraph().width(width).cellHeight(18).transitionDuration(0).tooltip(false)
      .minFrameSize(1).title('');
    d3.select(box).datum(tree).call(chart);
    section.appendChild(el('p', { class: 'note' },
      tree.value + ' in all; click a frame to zoom, again on the bottom one to zoom out'));
  }

  // log2 buckets as bars: buckets [[lo_ns, count], ...] of the non-empty ones, in order
  function histogram(section, label, buckets) {
    const h = 120, bw = 56, gap = 6, top = 16;
    const max = Math.max(1, ...buckets.map(b => b[1]));
    const box = el('div', { class: 'hist', 'data-name': label, 'data-bars': String(buckets.length) });
    box.appendChild(el('h3', {}, label));
    const svg = svgEl('svg', { width: String(buckets.length * (bw + gap) + 10), height: String(top + h + 24) });
    buckets.forEach((b, i) => {
      const bh = Math.max(1, Math.round(h * b[1] / max));
      const x = 5 + i * (bw + gap);
      const r = svgEl('rect', { class: 'bar', x: String(x), y: String(top + h - bh), width: String(bw), height: String(bh),
                                'data-lo-ns': String(b[0]), 'data-count': String(b[1]) });
      const t = svgEl('title', {});
      t.textContent = '>= ' + ns(b[0]) + ': ' + b[1];
      r.appendChild(t);
      svg.appendChild(r);
      const c = svgEl('text', { x: String(x + bw / 2), y: String(top + h - bh - 3), 'text-anchor': 'middle', class: 'count' });
      c.textContent = String(b[1]);
      svg.appendChild(c);
      const l = svgEl('text', { x: String(x + bw / 2), y: String(top + h + 14), 'text-anchor': 'middle', class: 'lo' });
      l.textContent = ns(b[0]);
      svg.appendChild(l);
    });
    box.appendChild(svg);
    section.appendChild(box);
  }

  function table(section, head, rows) {
    const t = el('table');
    const tr = el('tr');
    head.forEach(h => tr.appendChild(el('th', {}, h)));
    t.appendChild(tr);
    rows.forEach(r => {
      const row = el('tr');
      r.forEach(c => row.appendChild(el('td', {}, String(c))));
      t.appendChild(row);
    });
    section.appendChild(t);
  }

  function profile(section, d) {
    table(section, ['function', 'calls', 'mean', 'min', 'max', 'wall', 'on CPU'],
      d.functions.map(f => [f.function, f.calls, ns(f.mean_ns), ns(f.min_ns), ns(f.max_ns), ns(f.wall_ns), ns(f.oncpu_ns)]));
    for (const f of d.functions) {
      const b = [];
      (f.hist_log2_ns || []).forEach((c, i) => { if (c) b.push([i ? 2 ** i : 0, c]); });
      histogram(section, f.function, b);
    }
  }

  function span(section, d) {
    table(section, ['from', 'to', 'spans', 'mean', 'min', 'max', 'unmatched starts', 'unmatched stops'],
      [[d.from, d.to, d.total.count, ns(d.total.mean_ns), ns(d.total.min_ns), ns(d.total.max_ns),
        d.unmatched_starts, d.unmatched_stops]]);
    const b = Object.entries(d.total.hist || {}).map(([k, v]) => [Number(k), v]).sort((x, y) => x[0] - y[0]);
    histogram(section, d.from + ' -> ' + d.to, b);
  }

  function stacks(section, d) {
    // count --by stack --json: the same flame graph, leaf last
    flame(section, 'stacks', d.stacks.map(s => s.frames.slice().reverse().join(';') + ' ' + s.hits).join('\n'));
  }

  function count(section, d) {
    table(section, ['probe', 'class', 'hits'], d.probes.map(p => [p.probe, p.class, p.hits]));
  }

  function render() {
    const main = document.getElementById('kinstr-report');
    for (const blob of document.querySelectorAll('script.kinstr-data')) {
      const name = blob.getAttribute('data-name');
      const section = el('section', { 'data-source': name });
      section.appendChild(el('h2', {}, name));
      main.appendChild(section);
      const v = JSON.parse(blob.textContent);
      if (blob.getAttribute('data-kind') === 'folded') flame(section, name, v);
      else if (v.functions) profile(section, v);
      else if (v.stacks && v.by === 'stack') stacks(section, v);
      else if (v.total && v.from) span(section, v);
      else if (v.probes) count(section, v);
      else section.appendChild(el('p', {}, 'nothing kinstr report --html knows how to draw'));
    }
    document.body.setAttribute('data-rendered', 'yes');
  }

  document.addEventListener('DOMContentLoaded', render);
})();

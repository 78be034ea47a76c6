// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// kinstr report --html: draws what the page carries (script.kinstr-data blocks, each a saved kinstr
// output) with no network: folded stacks as flame graphs (d3-flame-graph, inlined beside this file),
// profile and span histograms as bar charts, count tables, cover's blocks per function, a trace's
// events on a time line per CPU. Every chart names what it shows in data-* attributes, which the
// tests read from the DOM.
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

  // cover --json: a table of the functions, then each function's blocks in address order, hit or not
  function cover(section, d) {
    const pct = (a, b) => b ? (100 * a / b).toFixed(1) + '%' : '-';
    section.appendChild(el('p', { class: 'note' }, 'covered ' + d.functions_covered + ' of ' +
      (d.functions_total !== undefined ? d.functions_total : d.functions.length) + ' functions, ' +
      d.blocks_covered + ' of ' + d.blocks_total + ' blocks (' + pct(d.blocks_covered, d.blocks_total) + ')'));
    table(section, ['function', 'blocks', 'covered', 'share'],
      d.functions.map(f => [f.function, f.blocks, f.covered, pct(f.covered, f.blocks)]));
    for (const f of d.functions) {
      const box = el('div', { class: 'cover-fn', 'data-function': f.function, 'data-blocks': String(f.blocks),
                              'data-covered': String(f.covered) });
      box.appendChild(el('h3', {}, f.function + ' ' + f.covered + '/' + f.blocks));
      const row = el('div', { class: 'blocks' });
      for (const b of f.counts || []) {
        const n = b.count !== undefined ? b.count : b.hit;
        const hit = n > 0;
        const cell = el('span', { class: 'block ' + (b.probed === 0 ? 'unprobed' : hit ? 'hit' : 'miss'),
                                  'data-offset': String(b.offset), 'data-hit': hit ? '1' : '0', 'data-count': String(n) });
        cell.title = '+0x' + b.offset.toString(16) + ': ' + (b.count !== undefined ? b.count + ' passes' :
          b.probed === 0 ? 'no probe' : hit ? 'hit' : 'not hit') + (b.source ? ' (' + b.source + ':' + b.line + ')' : '');
        row.appendChild(cell);
      }
      box.appendChild(row);
      section.appendChild(box);
    }
  }

  // a trace: one lane per CPU, a tick per event (every step-th when there are many), zoom by wheel or drag
  function timeline(section, t) {
    const left = 150, laneH = 26, top = 8;
    const width = Math.max(700, Math.min(1400, document.body.clientWidth - 40));
    const span = Math.max(1, t.end_ns - t.begin_ns);
    const color = d3.scaleOrdinal(d3.schemeTableau10).domain(t.classes.map((c, i) => i));
    const box = el('div', { class: 'timeline', 'data-trace': t.trace, 'data-events': String(t.events),
                            'data-shown': String(t.shown), 'data-cpus': String(t.cpus.length) });
    section.appendChild(box);
    const legend = el('div', { class: 'legend' });
    t.classes.forEach((c, i) => {
      if (!c.events) return;	// a class the trace declares but never recorded
      const item = el('span', { class: 'legend-item', 'data-class': c.name, 'data-events': String(c.events) });
      const sw = el('span', { class: 'swatch' });
      sw.style.background = color(i);
      item.appendChild(sw);
      item.appendChild(document.createTextNode(c.name + ' ' + c.events));
      legend.appendChild(item);
    });
    box.appendChild(legend);
    const lane = new Map(t.cpus.map((c, i) => [c.cpu, i]));
    const h = top + t.cpus.length * laneH + 30;
    const svg = d3.select(box).append('svg').attr('width', width).attr('height', h);
    const x = d3.scaleLinear().domain([0, span]).range([left, width - 10]);
    t.cpus.forEach((c, i) => {
      const g = svg.append('g').attr('class', 'lane').attr('data-cpu', c.cpu).attr('data-events', c.events)
        .attr('data-lost', c.lost);
      g.append('rect').attr('class', 'lane-bg').attr('x', left).attr('y', top + i * laneH)
        .attr('width', width - 10 - left).attr('height', laneH - 4);
      g.append('text').attr('class', 'lane-label').attr('x', 4).attr('y', top + i * laneH + 16)
        .text('CPU ' + c.cpu + ': ' + c.events + (c.lost ? ', ' + c.lost + ' lost' : ''));
    });
    const clip = 'kinstr-clip-' + Math.random().toString(36).slice(2);
    svg.append('clipPath').attr('id', clip).append('rect').attr('x', left).attr('y', 0)
      .attr('width', width - 10 - left).attr('height', h);
    const ticks = svg.append('g').attr('clip-path', 'url(#' + clip + ')').selectAll('rect.ev').data(t.ev).join('rect')
      .attr('class', 'ev').attr('y', e => top + lane.get(e[0]) * laneH + 2).attr('width', 1.5).attr('height', laneH - 8)
      .attr('fill', e => color(e[1])).attr('data-cpu', e => e[0]).attr('data-class', e => t.classes[e[1]].name);
    const axis = svg.append('g').attr('class', 'axis').attr('transform', 'translate(0,' + (h - 26) + ')');
    const draw = sx => {
      ticks.attr('x', e => sx(e[2]));
      axis.call(d3.axisBottom(sx).ticks(8).tickFormat(v => ns(Math.round(v))));
    };
    draw(x);
    svg.call(d3.zoom().scaleExtent([1, 1e6]).translateExtent([[left, 0], [width - 10, h]])
      .extent([[left, 0], [width - 10, h]]).on('zoom', ev => draw(ev.transform.rescaleX(x))));
    section.appendChild(el('p', { class: 'note' }, t.events + ' events on ' + t.cpus.length + ' CPUs over ' +
      ns(span) + ' (' + t.clock + ' clock)' + (t.step > 1 ? '; every ' + t.step + 'th drawn (' + t.shown + ')' : '') +
      '; wheel or drag to zoom'));
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
      else if (v.timeline) timeline(section, v.timeline);
      else if (v.functions && v.blocks_total !== undefined) cover(section, v);
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

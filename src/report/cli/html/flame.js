/* lockblame report --format html: draws the flame graphs (icicles, callers
 * above callees) from the JSON in the element #lb-data. Embedded in the page
 * by html_assets.c; it must never contain a closing script tag.
 *
 * Data: {effort, names: [[function, where], ...], idleness: G, work: G} with
 * G = {metric, total, nodes: [[parent, name, inclusive, exclusive], ...]} in
 * preorder (parents first; the root has parent -1). Siblings with the same
 * function name are merged. Every name reaches the DOM as textContent or an
 * attribute value set through the DOM, never as markup. */
(function () {
  'use strict';
  var ROW = 18;          /* px per frame row */
  var MIN_FRAC = 0.002;  /* frames narrower than this share of the view are not drawn */
  var data = JSON.parse(document.getElementById('lb-data').textContent);

  function build(g) {
    var made = [], root = null;
    for (var i = 0; i < g.nodes.length; i++) {
      var e = g.nodes[i], par = e[0] >= 0 ? made[e[0]] : null;
      var nm = e[1] >= 0 ? data.names[e[1]][0] : (par ? '[unknown]' : 'all');
      var where = e[1] >= 0 ? data.names[e[1]][1] : '';
      var t = par ? par.kids.get(nm) : null;
      if (!t) {
        t = { name: nm, where: [], value: 0, self: 0, kids: new Map(), list: null,
              parent: par, depth: par ? par.depth + 1 : 0 };
        if (par) par.kids.set(nm, t); else root = t;
      }
      t.value += e[2];
      t.self += e[3];
      if (where && t.where.length < 4 && t.where.indexOf(where) < 0) t.where.push(where);
      made.push(t);
    }
    (function sort(t) {
      t.list = Array.from(t.kids.values()).sort(function (a, b) {
        return b.value - a.value || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      });
      t.list.forEach(sort);
    })(root);
    return root;
  }

  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }

  function color(metric, t) {
    if (!t.parent) return 'hsl(0, 0%, 80%)';
    var h = hash(t.name);
    if (metric === 'work')
      return 'hsl(' + (190 + h % 40) + ', ' + (45 + (h >>> 8) % 25) + '%, ' + (62 + (h >>> 16) % 14) + '%)';
    return 'hsl(' + (h % 42) + ', ' + (70 + (h >>> 8) % 20) + '%, ' + (58 + (h >>> 16) % 14) + '%)';
  }

  function fmt(v) {
    return v.toFixed(v >= 100 ? 1 : v >= 0.1 ? 3 : 6).replace(/(\.\d*?[1-9])0+$|\.0+$/, '$1');
  }
  function pct(v, whole) { return whole > 0 ? (100 * v / whole).toFixed(1) + '%' : '-'; }

  function describe(metric, g, t) {
    var lines = [t.parent ? t.name : 'all ' + metric];
    if (t.where.length) lines.push(t.where.join(', '));
    lines.push(fmt(t.value) + ' s ' + (metric === 'work' ? 'work' : 'idleness blame') + ', ' +
               pct(t.value, g.total) + ' of total ' + metric + ', ' + pct(t.value, data.effort) + ' of effort');
    if (t.self > 0) lines.push('self ' + fmt(t.self) + ' s (' + pct(t.self, g.total) + ')');
    return lines.join('\n');
  }

  function Graph(metric) {
    this.metric = metric;
    this.g = data[metric];
    this.el = document.getElementById('flame-' + metric);
    this.info = document.getElementById('info-' + metric);
    this.crumbs = document.getElementById('crumbs-' + metric);
    this.root = this.g && this.g.nodes.length ? build(this.g) : null;
  }

  Graph.prototype.frame = function (t, x, w, cls) {
    var self = this, d = document.createElement('div');
    d.className = 'frame' + (cls ? ' ' + cls : '');
    d.style.left = (100 * x) + '%';
    d.style.width = (100 * w) + '%';
    d.style.top = (t.depth * ROW) + 'px';
    d.style.background = color(this.metric, t);
    d.textContent = t.parent ? t.name : 'all ' + this.metric;
    var text = describe(this.metric, this.g, t);
    d.setAttribute('title', text);
    d.addEventListener('mouseenter', function () { self.info.textContent = text; });
    d.addEventListener('click', function () { self.zoom(t === self.focus && t.parent ? t.parent : t); });
    this.el.appendChild(d);
  };

  Graph.prototype.zoom = function (focus) {
    var self = this;
    this.focus = focus;
    this.el.textContent = '';
    if (!this.root || !(this.root.value > 0)) {
      var p = document.createElement('div');
      p.className = 'empty';
      p.textContent = '(no ' + this.metric + ' recorded)';
      this.el.appendChild(p);
      this.el.style.height = 'auto';
      return;
    }
    var maxDepth = focus.depth, path = [];
    for (var a = focus.parent; a; a = a.parent) path.unshift(a);
    path.forEach(function (t) { self.frame(t, 0, 1, 'anc'); });
    (function draw(t, x, w) {
      self.frame(t, x, w, t === focus && t.parent ? 'focus' : '');
      if (t.depth > maxDepth) maxDepth = t.depth;
      var cx = x;
      t.list.forEach(function (k) {
        var kw = w * k.value / t.value;
        if (kw >= MIN_FRAC && k.value > 0) draw(k, cx, kw);
        cx += Math.max(kw, 0);
      });
    })(focus, 0, 1);
    this.el.style.height = ((maxDepth + 1) * ROW) + 'px';
    this.crumbs.textContent = '';
    if (focus.parent) {
      var b = document.createElement('button');
      b.textContent = 'reset zoom';
      b.addEventListener('click', function () { self.zoom(self.root); });
      this.crumbs.appendChild(b);
      this.crumbs.appendChild(document.createTextNode(
        path.concat([focus]).map(function (t) { return t.parent ? t.name : 'all'; }).join(' \u203a ')));
    } else {
      this.crumbs.textContent = 'click a frame to zoom';
    }
    this.info.textContent = describe(this.metric, this.g, focus);
  };

  ['idleness', 'work'].forEach(function (m) {
    var gr = new Graph(m);
    if (gr.el) gr.zoom(gr.root);
  });
})();

// Layout checks run inside the page by tests/viewer/test_layout.py. Each function
// returns a list of problems in words (empty when the page is right).
({
  /**
   * Every table's columns are shown, and each header cell is inside its nearest
   * clipping box, or (unless `strict`) that box scrolls sideways far enough to
   * show it; no box and no page overflows the window sideways, and no element
   * cuts off its content sideways without scrolling (or an ellipsis).
   */
  tables(strict) {
    const problems = [];
    const name = (node) => (node.id ? `#${node.id}` : `${node.tagName.toLowerCase()}.${[...node.classList].join(".")}`);
    const shown = (node) => node.getClientRects().length > 0 && node.getBoundingClientRect().width >= 1;
    const root = document.documentElement;
    if (root.scrollWidth > innerWidth) problems.push(`the page scrolls sideways: ${root.scrollWidth} > ${innerWidth}`);
    // Nothing cuts its content off sideways without a way to scroll to it (an ellipsis says so).
    for (const node of document.body.querySelectorAll("*")) {
      const style = getComputedStyle(node);
      if (["hidden", "clip"].includes(style.overflowX) && style.textOverflow !== "ellipsis"
          && node.scrollWidth > node.clientWidth + 1) {
        problems.push(`${name(node)} cuts its content: ${node.scrollWidth} > ${node.clientWidth}`);
      }
    }
    for (const table of document.querySelectorAll("table")) {
      if (!table.getClientRects().length) continue; // in a hidden panel
      const label = name(table);
      let box = table.parentElement;
      while (box !== document.body && getComputedStyle(box).overflowX === "visible") box = box.parentElement;
      const scrolls = ["auto", "scroll"].includes(getComputedStyle(box).overflowX);
      const view = () => {
        if (box === document.body) return { left: 0, right: innerWidth };
        const outer = box.getBoundingClientRect();
        const left = outer.left + box.clientLeft;
        return { left, right: left + box.clientWidth };
      };
      const edges = view();
      if (edges.left < -1 || edges.right > innerWidth + 1) {
        problems.push(`${label}: its box ${name(box)} (${edges.left}-${edges.right}) overflows the window`);
      }
      const heads = [...table.rows[0].cells];
      for (const cell of heads) {
        const what = `${label} column "${cell.textContent.trim()}"`;
        if (!shown(cell)) {
          problems.push(`${what} is hidden`);
          continue;
        }
        const inside = () => {
          const r = cell.getBoundingClientRect();
          const v = view();
          return r.left >= v.left - 1 && r.right <= v.right + 1;
        };
        if (inside()) continue;
        if (strict) {
          const r = cell.getBoundingClientRect();
          problems.push(`${what} is cut: ${Math.round(r.left)}-${Math.round(r.right)} in ${name(box)} ${Math.round(edges.left)}-${Math.round(edges.right)}`);
        } else if (!scrolls) {
          problems.push(`${what} is cut and ${name(box)} does not scroll`);
        } else {
          const saved = box.scrollLeft;
          box.scrollLeft += cell.getBoundingClientRect().right - view().right;
          if (!inside()) problems.push(`${what} cannot be scrolled into view in ${name(box)}`);
          box.scrollLeft = saved;
        }
      }
      for (const row of table.tBodies[0]?.rows ?? []) {
        const count = [...row.cells].filter(shown).length;
        if (count !== heads.length) problems.push(`${label}: a row shows ${count} of ${heads.length} cells`);
      }
    }
    return problems;
  },

  /**
   * Every chart matching `selector`: both axes titled, every text inside the chart
 * and at least 10 px high on screen,
   * no two texts overlapping, no line passing through a text, and the band (if any)
   * drawn inside the plot frame rather than cut by it.
   */
  charts(selector) {
    const problems = [];
    const charts = [...document.querySelectorAll(selector)];
    if (!charts.length) problems.push(`no chart matches ${selector}`);
    for (const chart of charts) {
      const outer = chart.getBoundingClientRect();
      const texts = [...chart.querySelectorAll("text")].map((node) => ({ node, box: node.getBoundingClientRect() }));
      for (const axis of ["x", "y"]) {
        const title = chart.querySelector(`text.axis-title.${axis}`);
        if (!title || !title.textContent.trim()) problems.push(`${selector}: the ${axis} axis has no title`);
      }
      for (const { node, box } of texts) {
        if (box.height < 10) problems.push(`${selector}: "${node.textContent}" is ${box.height.toFixed(1)} px high`);
        if (box.left < outer.left - 1 || box.right > outer.right + 1 || box.top < outer.top - 1 || box.bottom > outer.bottom + 1) {
          problems.push(`${selector}: "${node.textContent}" sticks out of the chart`);
        }
      }
      texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
        const overlap = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left) > 1
          && Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top) > 1;
        if (overlap) problems.push(`${selector}: "${a.node.textContent}" overlaps "${b.node.textContent}"`);
      }));
      // Lines, polylines and line paths (not the band's filled area): sample every 2 px.
      for (const shape of chart.querySelectorAll("line, polyline, path:not(.band)")) {
        const matrix = shape.getScreenCTM();
        const length = shape.getTotalLength();
        let hit = null;
        for (let along = 0; along <= length && !hit; along += 2) {
          const p = shape.getPointAtLength(along).matrixTransform(matrix);
          hit = texts.find(({ box }) => p.x > box.left && p.x < box.right && p.y > box.top && p.y < box.bottom);
        }
        if (hit) problems.push(`${selector}: the ${shape.tagName}.${shape.getAttribute("class")} crosses "${hit.node.textContent}"`);
      }
      const band = chart.querySelector("path.band");
      const frame = chart.querySelector("rect.chart-frame");
      if (band && frame) {
        const b = band.getBBox();
        const f = frame.getBBox();
        if (b.y < f.y - 0.5 || b.y + b.height > f.y + f.height + 0.5) {
          problems.push(`${selector}: the band (${b.y.toFixed(0)}-${(b.y + b.height).toFixed(0)}) is clipped by the plot (${f.y}-${f.y + f.height})`);
        }
      }
    }
    return problems;
  },
})

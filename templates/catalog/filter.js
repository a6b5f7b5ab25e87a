// Filter the tools as the reader types: a tool shows when every word of the query occurs in
// its name, title or description (case-insensitive); a group with no tool left is hidden
// with its entry in the list of servers. Tool text is only read (textContent); the script
// writes numbers and its own words only. Without this script every tool shows.
(() => {
  "use strict";
  const box = document.getElementById("filter");
  const query = document.getElementById("filter-query");
  const shown = document.getElementById("filter-count");
  if (!box || !query || !shown) return;
  const text = (root, selector) => {
    const found = root.querySelector(selector);
    return found ? found.textContent : "";
  };
  const plural = (count) => (count === 1 ? " tool" : " tools");
  const entries = new Map();
  for (const link of document.querySelectorAll("nav a[href^='#']")) {
    entries.set(link.getAttribute("href").slice(1), link.closest("li"));
  }
  const groups = [];
  let total = 0;
  for (const group of document.querySelectorAll("main > .group")) {
    const tools = [];
    for (const section of group.querySelectorAll("section")) {
      const words = [":scope > :first-child", ".title", ".description"].map((s) => text(section, s));
      tools.push({
        section,
        entry: entries.get(section.id),
        words: words.join("\n").toLowerCase(),
      });
    }
    const entry = entries.get(group.id);
    groups.push({ group, entry, tools, count: entry && entry.querySelector(".count") });
    total += tools.length;
  }
  const apply = () => {
    const words = query.value.toLowerCase().split(/\s+/).filter((word) => word !== "");
    let matched = 0;
    for (const { group, entry, tools, count } of groups) {
      let inGroup = 0;
      for (const tool of tools) {
        const hit = words.every((word) => tool.words.includes(word));
        tool.section.hidden = !hit;
        if (tool.entry) tool.entry.hidden = !hit;
        if (hit) inGroup += 1;
      }
      group.hidden = inGroup === 0;
      if (entry) entry.hidden = group.hidden;
      if (count) {
        count.textContent = words.length
          ? inGroup + " of " + tools.length + plural(tools.length)
          : tools.length + plural(tools.length);
      }
      matched += inGroup;
    }
    shown.textContent = words.length
      ? matched + " of " + total + plural(total)
      : total + plural(total);
  };
  query.addEventListener("input", apply);
  box.hidden = false;
  apply();
})();

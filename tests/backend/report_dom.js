// `tacit compile --report` pages in a browser's DOM (jsdom): each parses without an error and
// holds its pictures — a memory timeline per buffer with one rectangle per value whose data
// attributes are numbers, the instruction graph with a box per call, the e-graph chart — and
// its tables. Usage: node report_dom.js TACIT SOURCE_DIR OUT_DIR (CTest runs it).
"use strict";
const { JSDOM, VirtualConsole } = require("jsdom");
const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");

const [tacit, source, out] = process.argv.slice(2);
fs.mkdirSync(out, { recursive: true });
const gemm = path.join(source, "examples/gemmini/gemm_128x128x128.hlo");
const cases = [
  ["qkv attention", "isa/qkv.taidl", path.join(source, "examples/attention/attention.hlo")],
  ["amx k5", "isa/amx.taidl", path.join(source, "examples/amx/k5_int8_gemm_requantize.hlo")],
  ["gemmini tiled 128^3", "isa/gemmini.taidl", gemm],
];
let failures = 0;
function check(name, ok, what) {
  if (!ok) {
    console.error(`FAIL ${name}: ${what}`);
    failures++;
  }
}
for (const [name, spec, hlo] of cases) {
  const html = path.join(out, name.replace(/[^a-z0-9]+/gi, "_") + ".html");
  execFileSync(tacit, ["compile", "--isa", path.join(source, spec), hlo, "-o",
                       html + ".tasm", "--report", html]);
  const errors = [];
  const console_ = new VirtualConsole();
  console_.on("error", (e) => errors.push(String(e)));
  console_.on("jsdomError", (e) => errors.push(String(e)));
  const dom = new JSDOM(fs.readFileSync(html, "utf8"), { virtualConsole: console_ });
  const doc = dom.window.document;
  check(name, errors.length === 0, "errors: " + errors.join("; "));
  check(name, doc.title.startsWith("tacit compile report"), "title " + doc.title);
  for (const id of ["summary", "costs", "candidates", "timeline", "graph", "egraph", "kernel",
                    "program"])
    check(name, doc.getElementById(id) !== null, "no section #" + id);
  const timelines = doc.querySelectorAll("#timeline svg.timeline");
  check(name, timelines.length >= 1, "no timeline picture");
  const rects = doc.querySelectorAll("#timeline rect.value");
  check(name, rects.length >= 1, "no value in the timeline");
  for (const r of rects) {
    for (const a of ["data-begin", "data-end", "data-start", "data-extent", "width", "height"])
      check(name, Number.isFinite(Number(r.getAttribute(a))), `rect ${a}=${r.getAttribute(a)}`);
    check(name, Number(r.getAttribute("data-begin")) <= Number(r.getAttribute("data-end")),
          "a live range that ends before it begins");
  }
  const calls = doc.querySelectorAll("#graph svg g.call");
  // A whole compile's candidates, or a piecewise program's parts.
  const rows = doc.querySelectorAll("#candidates tr.candidate, #candidates tr.part");
  check(name, calls.length >= 1, "no call in the instruction graph");
  check(name, rows.length >= 1, "no candidate or part row");
  check(name, doc.querySelectorAll("#egraph rect.iteration, #egraph rect.part").length >= 1,
        "no e-graph bar");
  console.log(`${name}: ${timelines.length} buffers, ${rects.length} values, ${calls.length} ` +
              `calls, ${rows.length} candidates`);
}
process.exit(failures === 0 ? 0 : 1);

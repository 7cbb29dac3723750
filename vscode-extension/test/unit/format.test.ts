import * as assert from "node:assert/strict";
import { test } from "node:test";

import { formatBytes, formatShare } from "../../src/common/format";
import { mapPath } from "../../src/common/paths";

// Expected strings are what analyzer/units.py prints for the same numbers.
test("formatBytes matches analyzer.units.format_bytes", () => {
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(999), "999 B");
  assert.equal(formatBytes(4096), "4.1 KB");
  assert.equal(formatBytes(4194304), "4.2 MB");
  assert.equal(formatBytes(1250), "1.2 KB"); // exact tie: Python rounds to even
  assert.equal(formatBytes(1350), "1.4 KB");
  assert.equal(formatBytes(2e15), "2000.0 TB");
});

test("formatShare matches analyzer.units.format_share", () => {
  assert.equal(formatShare(0.12), "12%");
  assert.equal(formatShare(0.004), "0.4%");
  assert.equal(formatShare(0.125), "12%"); // 12.5 is an exact tie: to even
  assert.equal(formatShare(0), "0%");
});

test("mapPath rewrites the longest whole-component prefix", () => {
  const map = { "/build": "/ws", "/build/app": "/ws/src", "/b": "/nope" };
  assert.equal(mapPath("/build/app/k.cu", map), "/ws/src/k.cu");
  assert.equal(mapPath("/build/other/k.cu", map), "/ws/other/k.cu");
  assert.equal(mapPath("/buildx/k.cu", map), "/buildx/k.cu");
  assert.equal(mapPath("/build/app", map), "/ws/src");
  assert.equal(mapPath("/x/../y/k.cu", {}), "/y/k.cu");
  assert.equal(mapPath("/build/k.cu", { "/build/": "${workspaceFolder}" }, "/home/u/p"), "/home/u/p/k.cu");
  assert.equal(mapPath("/build/k.cu", { "/build": "src" }, "/home/u/p"), "/home/u/p/src/k.cu");
  assert.equal(mapPath("/build/k.cu", { "/build": "." }, "/home/u/p"), "/home/u/p/k.cu");
});

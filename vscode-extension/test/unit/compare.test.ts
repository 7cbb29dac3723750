import * as assert from "node:assert/strict";
import { test } from "node:test";

import { compareMarkdown } from "../../src/common/compare";

test("findings added, resolved and changed, and traffic per kernel, as Markdown tables", () => {
  const text = compareMarkdown({
    previous: "/ws/run1/report.json", current: "/ws/run2/report.json",
    added: [],
    resolved: [{ id: "k0:bank-conflict:3", pattern: "bank-conflict", kernel: "transpose", message: "a | b",
                 waste: 3968, waste_unit: "wavefronts" }],
    changed: [{ id: "k1:rar:1", pattern: "redundant-rar", kernel: "row_sum", message: "m", waste: 1000,
                waste_unit: "bytes", waste_before: 12582912 }],
    kernels: [{ kernel: "transpose", mangled: "_Z9t", bytes_before: 16777216, bytes_after: null }],
  });
  assert.match(text, /^# ReuseLens: compare runs\n\n- previous: `\/ws\/run1\/report.json`\n- current: `\/ws\/run2\/report.json`/);
  assert.match(text, /## Resolved \(1\)\n\n\| kernel \| pattern \| waste \| message \|\n\|---\|---\|---\|---\|\n\| transpose \| bank-conflict \| 3,968 wavefronts \| a \\\| b \|/);
  assert.match(text, /## Added \(0\)\n\nnone\n/);
  assert.match(text, /\| row_sum \| redundant-rar \| 12\.6 MB \| 1\.0 KB \| m \|/);
  assert.match(text, /\| transpose \| 16\.8 MB \| — \|/);
});

test("no previous run, and an error answer", () => {
  assert.match(compareMarkdown({ previous: null, current: "/r.json", added: [], resolved: [], changed: [], kernels: [] }),
               /No previous run in this session/);
  assert.equal(compareMarkdown({ error: "no run loaded yet" }),
               "# ReuseLens: compare runs\n\nNothing to compare: no run loaded yet.\n");
});

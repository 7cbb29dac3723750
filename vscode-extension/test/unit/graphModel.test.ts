import * as assert from "node:assert/strict";
import { test } from "node:test";

import { buildGraphView, edgeWidth, labelColor, sassOpcode } from "../../src/common/graphModel";

// A transpose kernel as docs/report-format.md writes it: LDG -> STS -> (barrier) -> LDS -> STG.
function node(id: number, pc: number, space: string, type: string, line: number, sass: string | null) {
  return { id, function: "_Z9transposePKfPfi", pc, space, type, size: 4, executions: 32768, bytes: 4194304,
           source: { file: "/build/app/stencil.cu", line, column: 4, inline: [] }, sass };
}
const answer = {
  kernel: { id: "k0", name: "transpose(const float*, float*, int)" },
  nodes: [
    { id: 0, function: null, pc: null, space: null, type: "read", size: 0, bytes: 0, source: null, sass: null },
    node(1, 0x90, "global", "read", 11, "LDG.E R3, desc[UR4][R2.64]"),
    node(2, 0xc0, "shared", "write", 11, "@P0 STS [R5], R3"),
    node(3, 0x120, "shared", "read", 15, "LDS R7, [R6]"),
    node(4, 0x150, "global", "write", 15, null),
  ],
  edges: [
    { from: 1, to: 0, label: "cold", bytes: 4194304, accesses: 1048576 },
    { from: 3, to: 2, label: "block", bytes: 4194304, accesses: 1048576 },
    { from: 4, to: 0, label: "cold", bytes: 64, accesses: 16 },
    { from: 3, to: 3, label: "thread", bytes: 1024, accesses: 256 },
  ],
  subgraphs: [{ nodes: [2, 3], closed: true, footprint_bytes: 4096, reuse_intensity: 4.0 },
              { nodes: [1], closed: false }],
};

test("nodes are labelled file:line and SASS opcode; the cold node is the untracked-memory node", () => {
  const view = buildGraphView(answer);
  const byId = new Map(view.nodes.map((n) => [n.id, n]));
  assert.equal(view.title, "transpose(const float*, float*, int)");
  assert.equal(byId.get("1")!.label, "stencil.cu:11\nLDG.E");
  assert.equal(byId.get("2")!.label, "stencil.cu:11\nSTS");
  assert.equal(byId.get("4")!.label, "stencil.cu:15\nwrite global 4B");
  assert.equal(byId.get("0")!.cold, true);
  assert.match(byId.get("0")!.label, /cold miss/);
  assert.deepEqual([byId.get("3")!.file, byId.get("3")!.line, byId.get("3")!.column], ["/build/app/stencil.cu", 15, 4]);
  assert.deepEqual(byId.get("1")!.details.slice(0, 3),
                   ["PC 0x90 (_Z9transposePKfPfi)", "read global 4B", "4.2 MB in 32768 warp instructions"]);
});

test("closed subgraphs become groups and columns; the cold node sits on top", () => {
  const view = buildGraphView(answer);
  assert.deepEqual(view.groups, [{ id: "subgraph-0", label: "closed subgraph 1: footprint 4.1 KB, reuse intensity 4.0" }]);
  const byId = new Map(view.nodes.map((n) => [n.id, n]));
  assert.equal(byId.get("2")!.parent, "subgraph-0");
  assert.equal(byId.get("3")!.parent, "subgraph-0");
  assert.equal(byId.get("1")!.parent, undefined, "a subgraph that is not closed is not boxed");
  assert.equal(byId.get("2")!.x, byId.get("3")!.x);
  assert.ok(byId.get("3")!.y > byId.get("2")!.y);
  assert.notEqual(byId.get("1")!.x, byId.get("2")!.x);
  assert.ok(byId.get("0")!.y < Math.min(...view.nodes.filter((n) => !n.cold).map((n) => n.y)));
  assert.equal(new Set(view.nodes.map((n) => `${n.x},${n.y}`)).size, view.nodes.length, "no two nodes overlap");
});

test("edge colour is the Topological Distance label, width grows with log(bytes), self-loops kept", () => {
  const view = buildGraphView(answer);
  const [cold, block, small, loop] = view.edges;
  assert.equal(cold.color, labelColor("cold"));
  assert.equal(block.color, "#e45756");
  assert.equal(loop.source, loop.target);
  assert.equal(cold.width, 6);
  assert.ok(small.width < loop.width && loop.width < block.width);
  assert.equal(small.width, 1 + 5 * Math.log1p(64) / Math.log1p(4194304));
  assert.equal(block.details, "intra-block: 4.2 MB, 1048576 accesses");
  assert.deepEqual(view.legend.map((entry) => entry.label), ["cold", "thread", "block"]);
});

test("parallel labels/weights arrays and [from, to] pairs are accepted", () => {
  const view = buildGraphView({ nodes: answer.nodes, edges: [[1, 0], [3, 2]], labels: ["cold", "grid"],
                                weights: [10, 1000], subgraphs: [] });
  assert.deepEqual(view.edges.map((e) => [e.source, e.target, e.label, e.bytes]), [["1", "0", "cold", 10],
                                                                                   ["3", "2", "grid", 1000]]);
  assert.equal(view.title, "PCDepGraph");
});

test("source paths go through reuselens.pathPrefixMap; a uri from the server is used as is", () => {
  const view = buildGraphView(answer, { pathPrefixMap: { "/build/app/": "${workspaceFolder}/src" },
                                        workspaceFolder: "/home/u/proj" });
  assert.equal(view.nodes.find((n) => n.id === "1")!.file, "/home/u/proj/src/stencil.cu");
  const withUri = buildGraphView({ nodes: [{ ...node(1, 0x90, "global", "read", 3, null),
    source: { file: "/build/x.cu", uri: "file:///home/u/a%20b/x.cu", line: 3 } }], edges: [] });
  assert.equal(withUri.nodes[0].file, "/home/u/a b/x.cu");
});

test("edges to unknown nodes are dropped and a cold node is added when edges need it", () => {
  const view = buildGraphView({ nodes: [node(5, 0x10, "global", "read", 1, null)],
                                edges: [{ from: 5, to: 0, label: "cold", bytes: 4 }, { from: 5, to: 9, label: "grid", bytes: 4 }] });
  assert.deepEqual(view.nodes.map((n) => n.id).sort(), ["0", "5"]);
  assert.equal(view.edges.length, 1);
});

test("an answer without nodes/edges is refused with one sentence", () => {
  assert.throws(() => buildGraphView(null), /has no nodes\/edges lists\.$/);
  assert.throws(() => buildGraphView({ nodes: [] }), /has no nodes\/edges lists/);
});

test("helpers", () => {
  assert.equal(sassOpcode("@!P1 LDG.E.128 R4, desc[UR6][R2.64]"), "LDG.E.128");
  assert.equal(sassOpcode(null), undefined);
  assert.equal(edgeWidth(0, 100), 1);
  assert.equal(edgeWidth(100, 100), 6);
  assert.equal(labelColor("something-new"), "#888888");
});

// What lsp_server/graph.py pc_dep_graph answers for tests/vscode/fixture_run.py (pathPrefixMap applied).
const serverAnswer = {
  kernel: "k0", name: "row_sum(const float*, float*, int, int)", mangled: "_Z7row_sumPKfPfii",
  nodes: [
    { id: 0, label: "Cold Miss", file: null, line: null, bytes: 0, closed_subgraphs: [] },
    { id: 1, label: "LD.G32 0x01a0 kernel.cu:8", pc: 416, space: "global", type: "read", bytes: 16777216,
      file: "/home/u/ws/src/kernel.cu", line: 8, closed_subgraphs: [0] },
    { id: 2, label: "ST.G32 0x0260 kernel.cu:11", pc: 608, space: "global", type: "write", bytes: 4096,
      file: "/home/u/ws/src/kernel.cu", line: 11, closed_subgraphs: [1] },
  ],
  edges: [{ from: 1, to: 0, label: "cold", bytes: 4194304, weight: 0.25 },
          { from: 1, to: 1, label: "thread", bytes: 12582912, weight: 0.75 },
          { from: 2, to: 0, label: "cold", bytes: 4096, weight: 1.0 }],
  subgraphs: [{ id: 0, nodes: [1], closed: true, bytes: 16777216, reuse_intensity: 4.0 },
              { id: 1, nodes: [2], closed: true, bytes: 4096, reuse_intensity: 1.0 }],
};

test("the server's showGraph answer: mapped file/line used as is, its op label kept, bytes not the share", () => {
  const view = buildGraphView(serverAnswer, { pathPrefixMap: { "/home/u": "/elsewhere" } });
  const byId = new Map(view.nodes.map((n) => [n.id, n]));
  assert.equal(view.title, "row_sum(const float*, float*, int, int)");
  assert.equal(byId.get("1")!.label, "kernel.cu:8\nLD.G32 0x01a0");
  assert.equal(byId.get("1")!.file, "/home/u/ws/src/kernel.cu");
  assert.equal(byId.get("2")!.line, 11);
  assert.equal(byId.get("0")!.cold, true);
  assert.deepEqual(view.edges.map((e) => e.bytes), [4194304, 12582912, 4096]);
  assert.equal(view.groups.length, 2);
  assert.match(view.groups[0].label, /reuse intensity 4\.0/);
  assert.deepEqual(byId.get("1")!.details, ["PC 0x1a0", "read global", "16.8 MB", "/home/u/ws/src/kernel.cu:8"]);
});

test("with SASS on the node the opcode is shown", () => {
  const nodes = serverAnswer.nodes.map((n) => (n.id === 1 ? { ...n, sass: "LDG.E R9, desc[UR4][R4.64]" } : n));
  const view = buildGraphView({ ...serverAnswer, nodes });
  assert.equal(view.nodes.find((n) => n.id === "1")!.label, "kernel.cu:8\nLDG.E");
});

test("an error answer from the server becomes its sentence", () => {
  assert.throws(() => buildGraphView({ error: "no run loaded yet" }), /^Error: no reuse graph: no run loaded yet\.$/);
});

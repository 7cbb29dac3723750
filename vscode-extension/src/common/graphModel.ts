// The view model of the reuse graph webview, built from the server's `reuselens.showGraph` answer
// (lsp_server/graph.py: {kernel, name, nodes, edges, subgraphs}, nodes with `file`/`line` already mapped onto the
// workspace) or from a report.json kernel (docs/report-format.md: nodes with `source` and `sass`).
// Drawn like Figure 1 of the cuVein paper (section 3.2): nodes are memory PCs, the Cold Miss node
// ("untracked memory", section 3.2.1) on top, an edge points from an access to its reuse origin, its colour is
// the Topological Distance label (section 3.1) and its width grows with the log of its bytes w(e); closed
// subgraphs (section 3.2.3) are drawn as boxes, one column each. Pure: no `vscode` import.
import { formatBytes } from "./format";
import { mapPath } from "./paths";

/** Topological Distance labels, nearest scope first, with the colours of analyzer/reporters/graph_html.py. */
export const LABELS: ReadonlyArray<{ label: string; text: string; color: string }> = [
  { label: "cold", text: "cold miss", color: "#4c78a8" },
  { label: "thread", text: "intra-thread", color: "#54a24b" },
  { label: "warp_same_inst", text: "intra-warp-same-inst", color: "#eeca3b" },
  { label: "warp_diff_inst", text: "intra-warp-diff-inst", color: "#f58518" },
  { label: "block", text: "intra-block", color: "#e45756" },
  { label: "grid", text: "intra-grid", color: "#b279a2" },
];
const UNKNOWN_COLOR = "#888888";

export interface GraphNodeView {
  id: string;
  /** Two lines: "file:line" and the SASS opcode (or type/space/size when there is no SASS). */
  label: string;
  details: string[];
  cold: boolean;
  space: string | null;
  file?: string;
  line?: number;
  column?: number;
  parent?: string;
  x: number;
  y: number;
}

export interface GraphEdgeView {
  id: string;
  source: string;
  target: string;
  label: string;
  color: string;
  width: number;
  bytes: number;
  details: string;
}

export interface GraphGroupView {
  id: string;
  label: string;
}

export interface GraphView {
  title: string;
  nodes: GraphNodeView[];
  edges: GraphEdgeView[];
  groups: GraphGroupView[];
  legend: Array<{ label: string; text: string; color: string }>;
  notes: string[];
}

type Json = Record<string, unknown>;

const COLUMN_WIDTH = 280;
const ROW_HEIGHT = 90;
const TOP = 150;

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

function asNumber(value: unknown, fallback = 0): number {
  const number = typeof value === "number" ? value : Number(value);
  return Number.isFinite(number) ? number : fallback;
}

function basename(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts[parts.length - 1];
}

/** "LDG.E R3, desc[UR4][R2.64]" -> "LDG.E"; predicates such as "@P0" are skipped. */
export function sassOpcode(sass: unknown): string | undefined {
  if (typeof sass !== "string") {
    return undefined;
  }
  const words = sass.trim().split(/\s+/).filter((word) => word !== "" && !word.startsWith("@"));
  return words[0];
}

export function labelText(label: string): string {
  return LABELS.find((entry) => entry.label === label)?.text ?? label;
}

export function labelColor(label: string): string {
  return LABELS.find((entry) => entry.label === label)?.color ?? UNKNOWN_COLOR;
}

/** Edge width in pixels: 1 + 5 * log(1 + bytes) / log(1 + largest bytes), as in the HTML export. */
export function edgeWidth(bytes: number, maxBytes: number): number {
  if (maxBytes <= 0 || bytes <= 0) {
    return 1;
  }
  return 1 + (5 * Math.log1p(bytes)) / Math.log1p(maxBytes);
}

function nodeView(node: Json, prefixMap: Record<string, string>, workspaceFolder?: string):
    Omit<GraphNodeView, "x" | "y" | "parent"> {
  const id = String(asNumber(node.id, -1));
  if (id === "0" || node.space === null || node.space === undefined) {
    return { id, label: "untracked memory\n(cold miss)", details: ["Cold Miss node: data not touched before"],
             cold: true, space: null };
  }
  const source = asObject(node.source);
  const pc = asNumber(node.pc);
  const size = node.size !== undefined ? ` ${asNumber(node.size)}B` : "";
  const kind = `${String(node.type ?? "?")} ${String(node.space)}${size}`;
  let where = "no line info";
  let file: string | undefined;
  let line: number | undefined;
  let column: number | undefined;
  if (typeof node.file === "string" && node.file !== "") {
    // The server's answer: already mapped through reuselens.pathPrefixMap.
    file = node.file;
    line = asNumber(node.line, 0) || undefined;
  } else if (source && typeof source.file === "string" && source.file !== "") {
    file = typeof source.uri === "string" ? uriToPath(source.uri) : mapPath(source.file, prefixMap, workspaceFolder);
    line = asNumber(source.line, 0) || undefined;
    column = asNumber(source.column, 0);
  }
  if (file !== undefined) {
    where = line ? `${basename(file)}:${line}` : basename(file);
  }
  // Second label line: the SASS opcode when the answer has the instruction, else the server's own label
  // (e.g. "LD.G32 0x01a0 kernel.cu:8", without the location repeated), else type/space/size.
  const serverLabel = typeof node.label === "string" ? node.label.replace(` ${where}`, "").trim() : "";
  const opcode = sassOpcode(node.sass) ?? (serverLabel || kind);
  const executions = node.executions !== undefined ? ` in ${asNumber(node.executions)} warp instructions` : "";
  const details = [
    `PC 0x${pc.toString(16)}${node.function ? ` (${String(node.function)})` : ""}`,
    `${kind}${node.async_copy ? " (cp.async)" : ""}`,
    `${formatBytes(asNumber(node.bytes))}${executions}`,
  ];
  if (typeof node.sass === "string") {
    details.push(node.sass);
  }
  if (file) {
    details.push(line ? `${file}:${line}` : file);
  }
  return { id, label: `${where}\n${opcode}`, details, cold: false, space: String(node.space), file, line,
           column };
}

function uriToPath(uri: string): string {
  return uri.startsWith("file://") ? decodeURIComponent(uri.slice("file://".length)) : uri;
}

/** Closed subgraphs (section 3.2.3) as groups of node ids; nodes in no closed subgraph get their own column. */
export function columns(nodeIds: string[], subgraphs: unknown[]): { columns: string[][]; parents: Map<string, string>;
                                                                   groups: GraphGroupView[] } {
  const placed = new Set<string>();
  const result: string[][] = [];
  const parents = new Map<string, string>();
  const groups: GraphGroupView[] = [];
  const known = new Set(nodeIds);
  subgraphs.forEach((raw, index) => {
    const subgraph = asObject(raw);
    const members = (Array.isArray(subgraph?.nodes) ? subgraph!.nodes as unknown[] : [])
      .map((value) => String(asNumber(value, -1)))
      .filter((id) => id !== "0" && known.has(id) && !placed.has(id))
      .sort((a, b) => Number(a) - Number(b));
    if (members.length === 0) {
      return;
    }
    members.forEach((id) => placed.add(id));
    result.push(members);
    if (subgraph!.closed !== false) {
      const groupId = `subgraph-${index}`;
      members.forEach((id) => parents.set(id, groupId));
      const parts = [`closed subgraph ${groups.length + 1}:`];
      if (subgraph!.footprint_bytes !== undefined) {
        parts.push(`footprint ${formatBytes(asNumber(subgraph!.footprint_bytes))}`);
      }
      if (subgraph!.reuse_intensity !== undefined) {
        parts.push(`reuse intensity ${asNumber(subgraph!.reuse_intensity).toFixed(1)}`);
      }
      groups.push({ id: groupId, label: parts.length > 1 ? `${parts[0]} ${parts.slice(1).join(", ")}` : parts[0].slice(0, -1) });
    }
  });
  for (const id of nodeIds) {
    if (id !== "0" && !placed.has(id)) {
      result.push([id]);
    }
  }
  return { columns: result, parents, groups };
}

/** Edges with their label and weight, whether the answer carries them on each edge (report format) or in the
 * parallel `labels`/`weights` arrays. */
function edgeList(answer: Json): Array<{ from: string; to: string; label: string; bytes: number; edge: Json }> {
  const edges = Array.isArray(answer.edges) ? answer.edges : [];
  const labels = Array.isArray(answer.labels) ? answer.labels : [];
  const weights = Array.isArray(answer.weights) ? answer.weights : [];
  return edges.map((raw, index) => {
    const edge = asObject(raw) ?? {};
    const pair = Array.isArray(raw) ? raw : undefined;
    const from = String(asNumber(edge.from ?? edge.source ?? pair?.[0], -1));
    const to = String(asNumber(edge.to ?? edge.target ?? pair?.[1], -1));
    const label = String(edge.label ?? labels[index] ?? "cold");
    const bytes = asNumber(edge.bytes ?? edge.weight ?? weights[index], 0);
    return { from, to, label, bytes, edge };
  });
}

export interface GraphOptions {
  pathPrefixMap?: Record<string, string>;
  workspaceFolder?: string;
}

/** Builds the view model; throws an Error with one sentence when the answer is not a graph. */
export function buildGraphView(answer: unknown, options: GraphOptions = {}): GraphView {
  const graph = asObject(answer);
  if (graph && typeof graph.error === "string") {
    throw new Error(`no reuse graph: ${graph.error}.`);
  }
  if (!graph || !Array.isArray(graph.nodes) || !Array.isArray(graph.edges)) {
    throw new Error("The server's reuselens.showGraph answer has no nodes/edges lists.");
  }
  const prefixMap = options.pathPrefixMap ?? {};
  const views = new Map<string, Omit<GraphNodeView, "x" | "y" | "parent">>();
  for (const raw of graph.nodes) {
    const node = asObject(raw);
    if (node) {
      const view = nodeView(node, prefixMap, options.workspaceFolder);
      views.set(view.id, view);
    }
  }
  const allEdges = edgeList(graph);
  if (!views.has("0") && allEdges.some((edge) => edge.to === "0" || edge.from === "0")) {
    views.set("0", nodeView({ id: 0, space: null }, prefixMap));
  }
  const edges = allEdges.filter((edge) => views.has(edge.from) && views.has(edge.to));
  const layout = columns([...views.keys()], Array.isArray(graph.subgraphs) ? graph.subgraphs : []);
  const nodes: GraphNodeView[] = [];
  const width = Math.max(1, layout.columns.length) * COLUMN_WIDTH;
  if (views.has("0")) {
    nodes.push({ ...views.get("0")!, x: width / 2, y: 0 });
  }
  layout.columns.forEach((members, column) => {
    members.forEach((id, row) => {
      nodes.push({ ...views.get(id)!, parent: layout.parents.get(id), x: COLUMN_WIDTH / 2 + column * COLUMN_WIDTH,
                   y: TOP + row * ROW_HEIGHT });
    });
  });
  const maxBytes = Math.max(0, ...edges.map((edge) => edge.bytes));
  const edgeViews = edges.map((edge, index): GraphEdgeView => {
    const accesses = edge.edge.accesses !== undefined ? `, ${asNumber(edge.edge.accesses)} accesses` : "";
    return {
      id: `e${index}`, source: edge.from, target: edge.to, label: edge.label, color: labelColor(edge.label),
      width: edgeWidth(edge.bytes, maxBytes), bytes: edge.bytes,
      details: `${labelText(edge.label)}: ${formatBytes(edge.bytes)}${accesses}`,
    };
  });
  const kernel = asObject(graph.kernel);
  const title = String(graph.title ?? kernel?.name ?? graph.name ?? kernel?.mangled ?? "PCDepGraph");
  const used = new Set(edges.map((edge) => edge.label));
  const notes = Array.isArray(graph.notes) ? graph.notes.map(String) : [];
  return {
    title, nodes, edges: edgeViews, groups: layout.groups,
    legend: LABELS.filter((entry) => used.has(entry.label)), notes,
  };
}

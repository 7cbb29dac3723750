// Runs inside the reuse graph webview (browser context). Receives the GraphView built by the extension and
// draws it with cytoscape (bundled; nothing is fetched). Clicking a node asks the extension to open its line.
import cytoscape from "cytoscape";

import type { GraphNodeView, GraphView } from "../common/graphModel";

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

const vscode = acquireVsCodeApi();
let cy: cytoscape.Core | undefined;

function element(id: string): HTMLElement {
  const found = document.getElementById(id);
  if (found === null) {
    throw new Error(`missing #${id}`);
  }
  return found;
}

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

function open(node: GraphNodeView): void {
  if (node.file) {
    vscode.postMessage({ type: "open", file: node.file, line: node.line, column: node.column });
  }
}

function showDetails(lines: string[]): void {
  element("details").textContent = lines.join("\n");
}

function renderLegend(graph: GraphView): void {
  const legend = element("legend");
  legend.replaceChildren(...graph.legend.map((entry) => {
    const key = document.createElement("span");
    key.className = "key";
    const swatch = document.createElement("span");
    swatch.className = `swatch swatch-${entry.label}`;
    key.append(swatch, entry.text);
    return key;
  }));
  element("notes").textContent = graph.notes.join(" ");
}

function renderList(graph: GraphView): void {
  element("list").replaceChildren(...graph.nodes.filter((node) => !node.cold).map((node) => {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.textContent = `${node.label.replace("\n", "  ")}  —  ${node.details[0]}`;
    button.disabled = !node.file;
    button.addEventListener("click", () => open(node));
    item.append(button);
    return item;
  }));
}

function style(): cytoscape.StylesheetJson {
  const foreground = cssVar("--vscode-editor-foreground", "#333333");
  const background = cssVar("--vscode-editor-background", "#ffffff");
  return [
    {
      selector: "node",
      style: {
        shape: "round-rectangle", width: 170, height: 46, label: "data(label)", "text-wrap": "wrap",
        "text-valign": "center", "text-halign": "center", "font-family": "monospace", "font-size": 12,
        color: foreground, "background-color": background, "border-width": 1, "border-color": foreground,
      },
    },
    { selector: "node[space = 'global']", style: { "background-color": "#fff5e6", color: "#222222" } },
    { selector: "node[space = 'shared']", style: { "background-color": "#eaf7ea", color: "#222222" } },
    { selector: "node[space = 'local']", style: { "background-color": "#f3e8f7", color: "#222222" } },
    { selector: "node.cold", style: { shape: "ellipse", width: 190, "background-color": "#dbe8f6", color: "#222222",
                                      "border-color": "#4c78a8" } },
    {
      selector: ":parent",
      style: {
        shape: "round-rectangle", "background-opacity": 0.06, "border-style": "dashed", "border-color": foreground,
        label: "data(label)", "text-valign": "top", "text-halign": "center", "font-size": 11, padding: "18px",
        "text-wrap": "wrap", "text-max-width": "210px", color: foreground,
      },
    },
    {
      selector: "edge",
      style: {
        width: "data(width)", "line-color": "data(color)", "target-arrow-color": "data(color)",
        "target-arrow-shape": "triangle", "curve-style": "bezier", "control-point-step-size": 40,
        opacity: 0.85,
      },
    },
    {
      // Self-loops (a PC re-reading its own data): out of the right side of the wide node, far enough to show.
      selector: "edge:loop",
      style: { "loop-direction": "90deg", "loop-sweep": "-50deg", "control-point-step-size": 125 },
    },
    { selector: "node:selected", style: { "border-width": 3 } },
  ];
}

function render(graph: GraphView): void {
  element("title").textContent = `PCDepGraph: ${graph.title}`;
  renderLegend(graph);
  renderList(graph);
  const byId = new Map(graph.nodes.map((node) => [node.id, node]));
  const elements: cytoscape.ElementDefinition[] = [
    ...graph.groups.map((group) => ({ group: "nodes" as const, data: { id: group.id, label: group.label } })),
    ...graph.nodes.map((node) => ({
      group: "nodes" as const,
      data: { id: node.id, label: node.label, parent: node.parent, space: node.space ?? "none" },
      position: { x: node.x, y: node.y },
      classes: node.cold ? "cold" : "",
    })),
    ...graph.edges.map((edge) => ({
      group: "edges" as const,
      data: { id: edge.id, source: edge.source, target: edge.target, color: edge.color, width: edge.width,
              details: edge.details },
    })),
  ];
  cy?.destroy();
  cy = cytoscape({
    container: element("graph"), elements, style: style(), layout: { name: "preset", fit: true, padding: 30 },
    wheelSensitivity: 0.3, minZoom: 0.1, maxZoom: 4,
  });
  cy.on("tap", "node", (event) => {
    const node = byId.get(event.target.id());
    if (node) {
      showDetails(node.details);
      open(node);
    }
  });
  cy.on("mouseover", "node", (event) => {
    const node = byId.get(event.target.id());
    if (node) {
      showDetails(node.details);
    }
  });
  cy.on("mouseover", "edge", (event) => showDetails([event.target.data("details") as string]));
  document.body.dataset.nodes = String(graph.nodes.length);
  document.body.dataset.edges = String(graph.edges.length);
  document.body.dataset.groups = String(graph.groups.length);
}

/** For tests driving the webview in a browser: where each node is drawn, in pixels from the top left corner
 * of #graph. */
function nodePositions(): Array<{ id: string; label: string; x: number; y: number }> {
  if (cy === undefined) {
    return [];
  }
  return cy.nodes().filter((node) => !node.isParent()).map((node: cytoscape.NodeSingular) => {
    const position = node.renderedPosition();
    return { id: node.id(), label: String(node.data("label")), x: position.x, y: position.y };
  });
}
(window as unknown as { reuselensGraph: unknown }).reuselensGraph = { nodePositions };

window.addEventListener("message", (event: MessageEvent) => {
  const message = event.data as { type?: string; graph?: GraphView };
  if (message.type === "graph" && message.graph) {
    try {
      render(message.graph);
    } catch (error) {
      element("graph").textContent = `Cannot draw the graph: ${String(error)}`;
      element("graph").className = "error";
      vscode.postMessage({ type: "error", text: String(error) });
    }
  }
});
vscode.postMessage({ type: "ready" });

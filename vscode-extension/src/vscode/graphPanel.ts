// The reuse graph webview: one panel, re-used, showing the PCDepGraph of the current kernel.
// Strict content security policy: only our own bundled script (with a nonce) and stylesheet load; no network.
import * as crypto from "crypto";
import * as vscode from "vscode";

import { buildGraphView, GraphView } from "../common/graphModel";

/** Messages from the webview: "ready" once it listens, "open" on a node click, "error" if drawing failed. */
interface WebviewMessage {
  type?: string;
  file?: unknown;
  line?: number;
  column?: number;
  text?: unknown;
}

export class GraphPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private view: GraphView | undefined;
  private ready = false;

  constructor(private readonly extensionUri: vscode.Uri, private readonly log: vscode.LogOutputChannel) {}

  /** Shows the server's showGraph answer; an answer that is not a graph becomes one error message. */
  show(answer: unknown, options: { pathPrefixMap?: Record<string, string>; workspaceFolder?: string },
       reveal = true): void {
    let view: GraphView;
    try {
      view = buildGraphView(answer, options);
    } catch (error) {
      const message = answer === null || answer === undefined
        ? "ReuseLens: no reuse graph for this file yet (no kernel of the current run has code here). Profile first."
        : `ReuseLens: ${(error as Error).message}`;
      void vscode.window.showWarningMessage(message);
      return;
    }
    this.view = view;
    if (this.panel === undefined) {
      this.panel = this.createPanel();
    } else if (reveal) {
      this.panel.reveal(undefined, true);
    }
    this.panel.title = `Reuse graph: ${shortTitle(view.title)}`;
    this.post();
  }

  isOpen(): boolean {
    return this.panel !== undefined;
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private createPanel(): vscode.WebviewPanel {
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    const panel = vscode.window.createWebviewPanel("reuselens.graph", "Reuse graph",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [media, dist] });
    this.ready = false;
    panel.webview.html = this.html(panel.webview, media, dist);
    panel.webview.onDidReceiveMessage((message) => this.onMessage(message));
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
    });
    return panel;
  }

  private post(): void {
    if (this.panel !== undefined && this.ready && this.view !== undefined) {
      void this.panel.webview.postMessage({ type: "graph", graph: this.view });
    }
  }

  private onMessage(message: WebviewMessage): void {
    if (message.type === "ready") {
      this.ready = true;
      this.post();
    } else if (message.type === "open" && typeof message.file === "string") {
      void openSource(message.file, message.line, message.column);
    } else if (message.type === "error" && typeof message.text === "string") {
      this.log.error(`graph view: ${message.text}`);
    }
  }

  private html(webview: vscode.Webview, media: vscode.Uri, dist: vscode.Uri): string {
    const nonce = crypto.randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, "graph.css"));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<!-- The id tells cytoscape its container rule is already there (graph.css), so it injects no inline <style>
     that this CSP would block. -->
<link id="__________cytoscape_stylesheet" rel="stylesheet" href="${style}">
<title>Reuse graph</title>
</head>
<body>
<header>
  <h1 id="title">Reuse graph</h1>
  <p class="hint">Nodes are memory instructions (file:line, then the SASS opcode, or the access and PC when the
  run has no SASS); an edge points from an access to its reuse origin, colour = Topological Distance,
  width = log(bytes); boxes are closed subgraphs.
  Click a node to open its source line.</p>
  <div id="legend"></div>
  <div id="notes"></div>
</header>
<main>
  <div id="graph" role="img" aria-label="PCDepGraph"></div>
  <aside id="details" aria-live="polite"></aside>
</main>
<details id="list-box"><summary>Nodes as a list</summary><ul id="list"></ul></details>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }
}

function shortTitle(title: string): string {
  const head = title.split("(")[0];
  return head.length > 40 ? head.slice(0, 39) + "…" : head;
}

/** Opens `file` at a 1-based line (column 0-based, as in report.json) in the editor group beside the graph. */
export async function openSource(file: string, line?: number, column?: number): Promise<void> {
  try {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), Math.max(0, column ?? 0));
    await vscode.window.showTextDocument(document, {
      viewColumn: vscode.ViewColumn.One,
      selection: new vscode.Range(position, position),
    });
  } catch (error) {
    void vscode.window.showErrorMessage(`ReuseLens: cannot open ${file}: ${(error as Error).message}`);
  }
}

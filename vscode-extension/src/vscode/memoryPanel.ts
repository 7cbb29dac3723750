// The memory timeline webview: one panel, re-used, showing the server's reuselens.memoryTimeline page for the
// loaded run (src/common/memoryPage.ts adds the policy that keeps it offline). The page needs no extension
// file and posts no message, so the panel has no local resource roots and no message handler.
import * as vscode from "vscode";

import { errorPage, readMemoryAnswer, withContentSecurityPolicy } from "../common/memoryPage";

export class MemoryTimelinePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;

  /** Shows the server's answer. An error goes to a warning when the user asked (`reveal`), and into an open
   * panel in any case, so that it never keeps showing the timeline of a run that is no longer loaded. */
  show(answer: unknown, reveal = true): void {
    const page = readMemoryAnswer(answer);
    if (page.kind === "error" && reveal) {
      void vscode.window.showWarningMessage(`ReuseLens: no memory timeline: ${page.message}.`);
    }
    if (page.kind === "error" && this.panel === undefined) {
      return;
    }
    if (this.panel === undefined) {
      this.panel = this.createPanel();
    } else if (reveal) {
      this.panel.reveal(undefined, true);
    }
    this.panel.title = page.kind === "page" ? `Memory timeline: run ${page.run.slice(0, 8)}` : "Memory timeline";
    this.panel.webview.html = page.kind === "page" ? withContentSecurityPolicy(page.html) : errorPage(page.message);
  }

  isOpen(): boolean {
    return this.panel !== undefined;
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private createPanel(): vscode.WebviewPanel {
    // Scripts on for the page's own hover highlighting (its one inline script, allowed by hash).
    const panel = vscode.window.createWebviewPanel("reuselens.memoryTimeline", "Memory timeline",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: [] });
    panel.onDidDispose(() => {
      this.panel = undefined;
    });
    return panel;
  }
}

// "Compare with previous run" as a read-only virtual document: an untitled document would be dirty, so
// closing it would ask to save a page nobody wrote. The content provider owns the text; VS Code shows it
// read-only and reopening the same URI shows the latest comparison.
import * as vscode from "vscode";

export const COMPARE_SCHEME = "reuselens-compare";

export class CompareDocument implements vscode.TextDocumentContentProvider, vscode.Disposable {
  readonly uri = vscode.Uri.from({ scheme: COMPARE_SCHEME, path: "/Compare runs.md" });
  private text = "";
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(): string {
    return this.text;
  }

  /** Replaces the page and shows it beside the current editor. */
  async show(markdown: string): Promise<void> {
    this.text = markdown;
    this.changed.fire(this.uri);
    const document = await vscode.workspace.openTextDocument(this.uri);
    await vscode.window.showTextDocument(document, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  }

  dispose(): void {
    this.changed.dispose();
  }
}

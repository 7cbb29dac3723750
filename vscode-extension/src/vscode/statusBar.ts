// The status bar item: profiling progress (click to cancel) and, between runs, the number of findings shown.
import * as vscode from "vscode";

import { CLIENT_COMMANDS, DIAGNOSTIC_SOURCE } from "../common/constants";
import { StatusModel } from "../common/status";

export class StatusBar implements vscode.Disposable {
  readonly model = new StatusModel();
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor() {
    this.item = vscode.window.createStatusBarItem("reuselens.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "ReuseLens";
    this.subscriptions.push(vscode.languages.onDidChangeDiagnostics(() => this.countFindings()));
    this.countFindings();
    this.item.show();
  }

  /** Re-draws the item from the model; call after every model change. */
  update(): void {
    const view = this.model.view();
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = view.click === "cancel" ? CLIENT_COMMANDS.cancelProfiling
      : view.click === "log" ? CLIENT_COMMANDS.showLog : CLIENT_COMMANDS.statusMenu;
    this.item.backgroundColor = view.kind === "error"
      ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  dispose(): void {
    this.subscriptions.forEach((subscription) => subscription.dispose());
    this.item.dispose();
  }

  private countFindings(): void {
    let count = 0;
    for (const [, diagnostics] of vscode.languages.getDiagnostics()) {
      count += diagnostics.filter((diagnostic) => diagnostic.source === DIAGNOSTIC_SOURCE).length;
    }
    this.model.setFindings(count);
    this.update();
  }
}

// The extension's commands. Each one that needs the server runs the server's command through VS Code (see
// ServerManager.execute); what comes back is shown by `showCommandResult`, also for code lens clicks.
import * as vscode from "vscode";

import { CLIENT_COMMANDS, SECTION, SERVER_COMMANDS } from "../common/constants";
import { GraphPanel, openSource } from "./graphPanel";
import { primaryFolder, ServerManager } from "./server";
import { StatusBar } from "./statusBar";

/** The argument our commands send to server commands: where the user is. */
export function editorContext(): Array<Record<string, unknown>> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    return [];
  }
  const { line, character } = editor.selection.active;
  return [{ uri: editor.document.uri.toString(), position: { line, character } }];
}

export class Commands {
  constructor(private readonly server: ServerManager, private readonly graph: GraphPanel,
              private readonly status: StatusBar, private readonly log: vscode.LogOutputChannel) {}

  register(context: vscode.ExtensionContext): void {
    const register = (id: string, run: () => Promise<unknown> | void) =>
      context.subscriptions.push(vscode.commands.registerCommand(id, async () => {
        try {
          await run();
        } catch (error) {
          void vscode.window.showErrorMessage(`ReuseLens: ${(error as Error).message}`);
        }
      }));
    register(CLIENT_COMMANDS.profileNow, () => this.profileNow());
    register(CLIENT_COMMANDS.restartServer, () => this.server.restart("restart command"));
    register(CLIENT_COMMANDS.showReuseGraph, () => this.server.execute(SERVER_COMMANDS.showGraph, editorContext()));
    register(CLIENT_COMMANDS.goToNextHotSpot,
             () => this.server.execute(SERVER_COMMANDS.nextHotSpot, editorContext()));
    register(CLIENT_COMMANDS.compareWithPrevious,
             () => this.server.execute(SERVER_COMMANDS.compare, editorContext()));
    register(CLIENT_COMMANDS.cancelProfiling, () => this.cancel());
    register(CLIENT_COMMANDS.showLog, () => this.log.show());
    register("reuselens.statusMenu", () => this.menu());
  }

  /** Shows what a server command returned (called for every server command, whoever ran it). */
  showCommandResult(command: string, result: unknown): void {
    if (command === SERVER_COMMANDS.showGraph) {
      const folder = primaryFolder();
      const prefixMap = vscode.workspace.getConfiguration(SECTION, folder?.uri).get<Record<string, string>>(
        "pathPrefixMap") ?? {};
      this.graph.show(result, { pathPrefixMap: prefixMap, workspaceFolder: folder?.uri.fsPath });
    } else if (command === SERVER_COMMANDS.nextHotSpot) {
      void this.revealHotSpot(result);
    } else if (command === SERVER_COMMANDS.compare) {
      void this.showComparison(result);
    } else if (command === SERVER_COMMANDS.profile && typeof result === "string" && result !== "") {
      void vscode.window.showInformationMessage(`ReuseLens: ${result}`);
    }
  }

  private async profileNow(): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      const choice = await vscode.window.showErrorMessage(
        "ReuseLens: profiling runs the build and profile commands configured in this workspace, so it needs a " +
        "trusted workspace.", "Manage Workspace Trust");
      if (choice !== undefined) {
        await vscode.commands.executeCommand("workbench.trust.manage");
      }
      return;
    }
    await this.server.execute(SERVER_COMMANDS.profile, editorContext());
  }

  private cancel(): void {
    const token = this.status.model.cancellableToken();
    if (token === undefined) {
      void vscode.window.showInformationMessage("ReuseLens: no profiling run to cancel.");
      return;
    }
    this.log.info(`cancelling progress ${token}`);
    this.server.cancelProgress(token);
  }

  private async revealHotSpot(result: unknown): Promise<void> {
    const location = asLocation(result);
    if (location !== undefined) {
      await openSource(location.file, location.line + 1, location.character);
    } else if (result === null || result === undefined) {
      void vscode.window.showInformationMessage("ReuseLens: no hot spot (no findings in the current run).");
    }
  }

  private async showComparison(result: unknown): Promise<void> {
    if (result === null || result === undefined) {
      return;
    }
    const record = result as Record<string, unknown>;
    const text = typeof result === "string" ? result
      : typeof record.markdown === "string" ? record.markdown
        : typeof record.text === "string" ? record.text
          : "```json\n" + JSON.stringify(result, null, 2) + "\n```\n";
    const document = await vscode.workspace.openTextDocument({ language: "markdown", content: text });
    await vscode.window.showTextDocument(document, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  }

  private async menu(): Promise<void> {
    const entries: Array<vscode.QuickPickItem & { command: string }> = [
      { label: "$(play) Profile now", command: CLIENT_COMMANDS.profileNow },
      { label: "$(type-hierarchy) Show reuse graph", command: CLIENT_COMMANDS.showReuseGraph },
      { label: "$(arrow-down) Next hot spot", command: CLIENT_COMMANDS.goToNextHotSpot },
      { label: "$(diff) Compare with previous run", command: CLIENT_COMMANDS.compareWithPrevious },
      { label: "$(debug-restart) Restart server", command: CLIENT_COMMANDS.restartServer },
      { label: "$(output) Show log", command: CLIENT_COMMANDS.showLog },
    ];
    const choice = await vscode.window.showQuickPick(entries, { placeHolder: "ReuseLens" });
    if (choice) {
      await vscode.commands.executeCommand(choice.command);
    }
  }
}

/** A Location ({uri, range}) or LocationLink ({targetUri, targetSelectionRange}) as file + 0-based position. */
export function asLocation(value: unknown): { file: string; line: number; character: number } | undefined {
  if (value === null || typeof value !== "object") {
    return undefined;
  }
  const record = value as Record<string, any>;
  const uri = record.uri ?? record.targetUri;
  const range = record.range ?? record.targetSelectionRange ?? record.targetRange;
  if (typeof uri !== "string" || range?.start === undefined) {
    return undefined;
  }
  return { file: vscode.Uri.parse(uri).fsPath, line: Number(range.start.line) || 0,
           character: Number(range.start.character) || 0 };
}

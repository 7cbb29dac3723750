// The extension's commands. Each one that needs the server runs the server's command through VS Code (see
// ServerManager.execute); what comes back is shown by `showCommandResult`, also for code lens clicks.
import * as vscode from "vscode";

import { compareMarkdown } from "../common/compare";
import { CLIENT_COMMANDS, SECTION, SERVER_COMMANDS } from "../common/constants";
import { COMPARE_SCHEME, CompareDocument } from "./compareDocument";
import { GraphPanel, openSource } from "./graphPanel";
import { MemoryTimelinePanel } from "./memoryPanel";
import { primaryFolder, ServerManager } from "./server";
import { StatusBar } from "./statusBar";

/** Where the user is, as the server's showGraph and nextHotSpot take it: (uri, 0-based line); no arguments
 * when no text editor is active (the server then starts from the heaviest finding). */
export function editorContext(): unknown[] {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    return [];
  }
  return [editor.document.uri.toString(), editor.selection.active.line];
}

export class Commands {
  /** Arguments of the last showGraph, so the open graph can follow a new run. */
  private graphArgs: unknown[] = [];
  private refreshing = false;
  /** Apart from `refreshing`: the server may hold a memory refresh until the run's analysis ends. */
  private refreshingMemory = false;
  private readonly comparison = new CompareDocument();

  constructor(private readonly server: ServerManager, private readonly graph: GraphPanel,
              private readonly memory: MemoryTimelinePanel, private readonly status: StatusBar,
              private readonly log: vscode.LogOutputChannel) {}

  register(context: vscode.ExtensionContext): void {
    context.subscriptions.push(this.comparison,
                               vscode.workspace.registerTextDocumentContentProvider(COMPARE_SCHEME, this.comparison));
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
    register(CLIENT_COMMANDS.showMemoryTimeline, () => this.showMemoryTimeline());
    register(CLIENT_COMMANDS.goToNextHotSpot,
             () => this.server.execute(SERVER_COMMANDS.nextHotSpot, editorContext()));
    register(CLIENT_COMMANDS.compareWithPrevious, () => this.server.execute(SERVER_COMMANDS.compare, []));
    register(CLIENT_COMMANDS.cancelProfiling, () => this.cancel());
    register(CLIENT_COMMANDS.showLog, () => this.log.show());
    register(CLIENT_COMMANDS.statusMenu, () => this.menu());
  }

  /** Shows what a server command returned (called for every server command, whoever ran it). */
  showCommandResult(command: string, args: unknown[], result: unknown): void {
    if (command === SERVER_COMMANDS.showGraph) {
      const folder = primaryFolder();
      const prefixMap = vscode.workspace.getConfiguration(SECTION, folder?.uri).get<Record<string, string>>(
        "pathPrefixMap") ?? {};
      this.graphArgs = args;
      this.graph.show(result, { pathPrefixMap: prefixMap, workspaceFolder: folder?.uri.fsPath }, !this.refreshing);
    } else if (command === SERVER_COMMANDS.memoryTimeline) {
      this.memory.show(result, !this.refreshingMemory);
    } else if (command === SERVER_COMMANDS.nextHotSpot) {
      void this.revealHotSpot(result);
    } else if (command === SERVER_COMMANDS.compare) {
      void this.showComparison(result);
    }
  }

  /** After a run ends, redraws an open graph for the same place (without bringing it to the front). */
  async refreshGraph(): Promise<void> {
    if (!this.graph.isOpen() || !this.server.isRunning()) {
      return;
    }
    this.refreshing = true;
    try {
      await this.server.execute(SERVER_COMMANDS.showGraph, this.graphArgs);
    } catch (error) {
      this.log.warn(`graph refresh: ${(error as Error).message}`);
    } finally {
      this.refreshing = false;
    }
  }

  /** After the memory analysis of a new run ends, shows that run's timeline in an open panel (not in front). */
  async refreshMemoryTimeline(): Promise<void> {
    if (!this.memory.isOpen() || !this.server.isRunning()) {
      return;
    }
    this.refreshingMemory = true;
    try {
      await this.server.execute(SERVER_COMMANDS.memoryTimeline, []);
    } catch (error) {
      this.log.warn(`memory timeline refresh: ${(error as Error).message}`);
    } finally {
      this.refreshingMemory = false;
    }
  }

  /** The server waits for the run's memory analysis when it is still running: say so meanwhile. */
  private async showMemoryTimeline(): Promise<void> {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: "ReuseLens: memory timeline" },
      () => this.server.execute(SERVER_COMMANDS.memoryTimeline, []));
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
    await this.server.execute(SERVER_COMMANDS.profile, []);
  }

  private async cancel(): Promise<void> {
    const token = this.status.model.cancellableToken();
    if (token !== undefined) {
      this.log.info(`cancelling progress ${token}`);
      this.server.cancelProgress(token);
      return;
    }
    // No progress seen (e.g. a run started before this window): ask the server directly.
    const answer = await this.server.execute(SERVER_COMMANDS.cancel, []) as { cancelled?: boolean } | undefined;
    if (!answer?.cancelled) {
      void vscode.window.showInformationMessage("ReuseLens: no profiling run to cancel.");
    }
  }

  /** The server shows the hot spot itself (window/showDocument); open it here only if it did not. */
  private async revealHotSpot(result: unknown): Promise<void> {
    const location = asLocation(result);
    if (location === undefined) {
      void vscode.window.showInformationMessage("ReuseLens: no hot spot (no findings in the current run).");
      return;
    }
    const editor = vscode.window.activeTextEditor;
    if (editor?.document.uri.fsPath !== location.file || editor.selection.active.line !== location.line) {
      await openSource(location.file, location.line + 1, location.character);
    }
  }

  private async showComparison(result: unknown): Promise<void> {
    await this.comparison.show(compareMarkdown(result));
  }

  private async menu(): Promise<void> {
    const entries: Array<vscode.QuickPickItem & { command: string }> = [
      { label: "$(play) Profile now", command: CLIENT_COMMANDS.profileNow },
      { label: "$(type-hierarchy) Show reuse graph", command: CLIENT_COMMANDS.showReuseGraph },
      { label: "$(graph-line) Show memory timeline", command: CLIENT_COMMANDS.showMemoryTimeline },
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

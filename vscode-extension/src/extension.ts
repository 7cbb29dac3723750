// ReuseLens for VS Code: starts the ReuseLens language server for CUDA files and adds the commands, the status
// bar item, the reuse graph view and the memory timeline. Everything else lives in src/common (no vscode import, unit-tested) and
// src/vscode (the VS Code side).
import * as vscode from "vscode";

import { RESTART_SETTINGS, SECTION } from "./common/constants";
import { PackageJson, serverInfo } from "./common/settings";
import { Commands } from "./vscode/commands";
import { GraphPanel } from "./vscode/graphPanel";
import { MemoryTimelinePanel } from "./vscode/memoryPanel";
import { onPythonInterpreterChanged } from "./vscode/python";
import { ServerManager } from "./vscode/server";
import { StatusBar } from "./vscode/statusBar";

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("ReuseLens", { log: true });
  const status = new StatusBar();
  const graph = new GraphPanel(context.extensionUri, log);
  const memory = new MemoryTimelinePanel();
  let commands: Commands | undefined;
  const redraw = (change: () => void) => {
    change();
    status.update();
  };
  manager = new ServerManager(log, serverInfo(context.extension.packageJSON as PackageJson), {
    starting: () => redraw(() => status.model.serverStarting()),
    running: (server) => redraw(() => status.model.serverRunning(server.origin)),
    failed: (problem) => redraw(() => status.model.serverFailed(problem)),
    stopped: () => redraw(() => status.model.serverStopped()),
    progress: (token, value) => {
      redraw(() => status.model.progress(token, value));
      if (value.kind === "end") {
        void commands?.refreshGraph();
      }
    },
    commandResult: (command, args, result) => commands?.showCommandResult(command, args, result),
    memoryAnalysisDone: () => void commands?.refreshMemoryTimeline(),
  });
  commands = new Commands(manager, graph, memory, status, log);
  commands.register(context);
  context.subscriptions.push(log, status, graph, memory, manager);

  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((event) => {
    if (RESTART_SETTINGS.some((name) => event.affectsConfiguration(`${SECTION}.${name}`))) {
      void manager?.restart("server setting changed");
    }
  }));
  // The server learns whether it may run workspace commands at initialize, so granting trust restarts it.
  context.subscriptions.push(vscode.workspace.onDidGrantWorkspaceTrust(() => {
    void manager?.restart("workspace trusted");
  }));
  const interpreterWatch = await onPythonInterpreterChanged(() => void manager?.restart("Python interpreter changed"));
  if (interpreterWatch) {
    context.subscriptions.push(interpreterWatch);
  }
  await manager.restart("activation");
}

export async function deactivate(): Promise<void> {
  await manager?.stop();
  manager = undefined;
}

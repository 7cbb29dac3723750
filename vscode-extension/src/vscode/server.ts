// Starting, restarting and talking to the language server (vscode-languageclient 9).
import * as path from "path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  WorkDoneProgressCancelNotification,
} from "vscode-languageclient/node";

import { CLIENT_ID, CLIENT_NAME, SECTION, SERVER_NOTIFICATIONS } from "../common/constants";
import { failureMessage, findServer, runProbe, ServerCommand } from "../common/serverLookup";
import { expandPath, readClientSettings, ServerInfo } from "../common/settings";
import { ProgressValue } from "../common/status";
import { pythonExtensionInterpreter } from "./python";

export interface ServerEvents {
  starting(): void;
  running(server: ServerCommand): void;
  failed(problem: string): void;
  stopped(): void;
  progress(token: string, value: ProgressValue): void;
  /** A server command ran (from our commands or from a code lens); the result is to be shown. */
  commandResult(command: string, args: unknown[], result: unknown): void;
  /** The memory analysis of a newly loaded run ended (reuselens/memoryAnalysisDone). */
  memoryAnalysisDone(): void;
}

/** The first workspace folder, which is where the server runs and what ${workspaceFolder} means. */
export function primaryFolder(): vscode.WorkspaceFolder | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  return (active && vscode.workspace.getWorkspaceFolder(active)) || vscode.workspace.workspaceFolders?.[0];
}

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly log: vscode.LogOutputChannel, private readonly info: ServerInfo,
              private readonly events: ServerEvents) {}

  /** Stops any running client, then looks the server up again and starts it. Calls are serialized. */
  restart(reason: string): Promise<void> {
    this.pending = this.pending.then(() => this.doRestart(reason), () => this.doRestart(reason));
    return this.pending;
  }

  isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  async dispose(): Promise<void> {
    await this.stop();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.log.warn(`stopping the server: ${String(error)}`);
      }
      client.dispose();
    }
  }

  /** Runs a server command through VS Code's command (registered by the client), so that code lenses and our
   * own commands take the same path and the result always reaches `events.commandResult`. */
  async execute(command: string, args: unknown[]): Promise<unknown> {
    if (this.client === undefined || !this.isRunning()) {
      throw new Error("The ReuseLens language server is not running; see \"ReuseLens: Show log\".");
    }
    return vscode.commands.executeCommand(command, ...args);
  }

  cancelProgress(token: string): void {
    this.client?.sendNotification(WorkDoneProgressCancelNotification.type, { token }).catch((error) =>
      this.log.warn(`cancel: ${String(error)}`));
  }

  private async doRestart(reason: string): Promise<void> {
    this.log.info(`starting the language server (${reason})`);
    this.events.starting();
    await this.stop();
    const folder = primaryFolder();
    const config = vscode.workspace.getConfiguration(SECTION, folder?.uri);
    const { settings, problems } = readClientSettings((name) => config.get(name));
    problems.forEach((problem) => this.log.warn(problem));
    const folderPath = folder?.uri.fsPath;
    const lookup = await findServer({
      serverPython: expandPath(settings.serverPython, folderPath),
      serverPath: expandPath(settings.serverPath, folderPath),
      pythonExtensionInterpreter: () => pythonExtensionInterpreter(folder?.uri),
      envPath: process.env.PATH ?? "",
      pythonArgs: this.info.pythonArgs,
      executableArgs: this.info.executableArgs,
      module: this.info.module,
    }, (argv) => runProbe(argv), (line) => this.log.info(`server lookup: ${line}`));
    if (lookup.server === undefined) {
      this.fail(failureMessage(lookup.attempts));
      return;
    }
    const configuredButBroken = lookup.attempts.find((a) => !a.ok && a.origin.startsWith("reuselens.server."));
    if (configuredButBroken) {
      void vscode.window.showWarningMessage(`ReuseLens: ${configuredButBroken.origin} does not work ` +
        `(${configuredButBroken.reason}); using ${lookup.server.origin} instead.`);
    }
    await this.startClient(lookup.server, folderPath);
  }

  private async startClient(server: ServerCommand, cwd: string | undefined): Promise<void> {
    this.log.info(`server command: ${[server.command, ...server.args].join(" ")} (from ${server.origin})`);
    const serverOptions: ServerOptions = {
      command: server.command,
      args: server.args,
      // No `transport`: with TransportKind.stdio the client would append "--stdio", which `reuselens lsp` refuses.
      options: { cwd: cwd ?? path.dirname(server.command), env: { ...process.env } },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, this.clientOptions());
    client.onNotification(SERVER_NOTIFICATIONS.memoryAnalysisDone, () => this.events.memoryAnalysisDone());
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped && this.client === client) {
        this.events.stopped();
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.fail(`The ReuseLens language server (${server.command}) did not start: ${String(error)}. ` +
        "See \"ReuseLens: Show log\" for its output.");
      return;
    }
    this.events.running(server);
  }

  private clientOptions(): LanguageClientOptions {
    const languages = this.info.documentLanguages.map((language) => ({ scheme: "file", language }));
    return {
      // cuda-cpp is VS Code's id for .cu/.cuh; some users map them to "cuda" (an extension) or to "cpp".
      documentSelector: [...languages, { scheme: "file", language: "cpp", pattern: this.info.cudaFilePattern }],
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // The server reads `settings` before its first workspace/configuration pull (lsp_server/handlers.py).
      initializationOptions: {
        workspaceTrusted: vscode.workspace.isTrusted,
        settings: JSON.parse(JSON.stringify(vscode.workspace.getConfiguration(SECTION, primaryFolder()?.uri))),
      },
      synchronize: { configurationSection: SECTION },
      middleware: {
        handleWorkDoneProgress: (token, params, next) => {
          this.events.progress(String(token), params as ProgressValue);
          next(token, params);
        },
        executeCommand: async (command, args, next) => {
          const result = await next(command, args);
          this.events.commandResult(command, args, result);
          return result;
        },
      },
    };
  }

  private fail(problem: string): void {
    this.log.error(problem);
    this.events.failed(problem);
    void vscode.window.showErrorMessage(problem, "Open Settings", "Show Log").then((choice) => {
      if (choice === "Open Settings") {
        void vscode.commands.executeCommand("workbench.action.openSettings", "reuselens.server");
      } else if (choice === "Show Log") {
        this.log.show();
      }
    });
  }
}

// Identifiers shared by the extension modules. Nothing here imports `vscode`, so unit tests can load it.

/** Configuration section; every setting is `reuselens.<name>` (docs/settings.md). */
export const SECTION = "reuselens";

/** Client id: vscode-languageclient also reads `reuselens.trace.server` under this id. */
export const CLIENT_ID = "reuselens";
export const CLIENT_NAME = "ReuseLens";

/** Commands the language server implements (workspace/executeCommand). */
export const SERVER_COMMANDS = {
  profile: "reuselens.profile",
  showGraph: "reuselens.showGraph",
  nextHotSpot: "reuselens.nextHotSpot",
  compare: "reuselens.compare",
  cancel: "reuselens.cancel",
  memoryTimeline: "reuselens.memoryTimeline",
} as const;

/** Notifications the language server sends besides LSP's own (docs/lsp.md). */
export const SERVER_NOTIFICATIONS = {
  /** The memory analysis of the loaded run ended: `{run, status: "ready" | "none" | "failed"}`. */
  memoryAnalysisDone: "reuselens/memoryAnalysisDone",
} as const;

/** Commands the extension contributes (package.json `contributes.commands`). They must differ from the
 * server's ids: vscode-languageclient registers every server command as a VS Code command itself. */
export const CLIENT_COMMANDS = {
  profileNow: "reuselens.profileNow",
  restartServer: "reuselens.restartServer",
  showReuseGraph: "reuselens.showReuseGraph",
  showMemoryTimeline: "reuselens.showMemoryTimeline",
  goToNextHotSpot: "reuselens.goToNextHotSpot",
  compareWithPrevious: "reuselens.compareWithPrevious",
  cancelProfiling: "reuselens.cancelProfiling",
  showLog: "reuselens.showLog",
  /** Internal (status bar click between runs): a quick pick of the commands above. */
  statusMenu: "reuselens.statusMenu",
} as const;

/** Settings that only the client reads; changing one restarts the server. */
export const RESTART_SETTINGS = ["server.path", "server.python"] as const;

/** `source` of the server's diagnostics, used to count the findings shown in the status bar. */
export const DIAGNOSTIC_SOURCE = "reuselens";

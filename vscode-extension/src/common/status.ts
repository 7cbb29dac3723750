// What the status bar item says. A pure state machine fed with the server's work-done progress
// ($/progress begin/report/end, LSP 3.15) and with the number of findings currently shown.

export interface ProgressValue {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
  cancellable?: boolean;
}

export type StatusKind = "starting" | "idle" | "running" | "error" | "stopped";

export interface StatusView {
  text: string;
  tooltip: string;
  /** Which client command a click runs. */
  click: "cancel" | "menu" | "log";
  kind: StatusKind;
}

interface Run {
  token: string;
  title: string;
  message: string;
  percentage?: number;
  cancellable: boolean;
}

export class StatusModel {
  private runs = new Map<string, Run>();
  private lastResult = "";
  private findings = 0;
  private state: StatusKind = "starting";
  private problem = "";
  private serverOrigin = "";

  serverStarting(): void {
    this.state = "starting";
    this.problem = "";
  }

  serverRunning(origin: string): void {
    this.state = "idle";
    this.problem = "";
    this.serverOrigin = origin;
  }

  serverFailed(problem: string): void {
    this.state = "error";
    this.problem = problem;
    this.runs.clear();
  }

  serverStopped(): void {
    this.state = "stopped";
    this.runs.clear();
  }

  setFindings(count: number): void {
    this.findings = count;
  }

  progress(token: string, value: ProgressValue): void {
    if (value.kind === "begin") {
      this.runs.set(token, { token, title: value.title ?? "profiling", message: value.message ?? "",
                             percentage: value.percentage, cancellable: value.cancellable ?? false });
      return;
    }
    const run = this.runs.get(token);
    if (run === undefined) {
      return;
    }
    if (value.kind === "report") {
      run.message = value.message ?? run.message;
      run.percentage = value.percentage ?? run.percentage;
      run.cancellable = value.cancellable ?? run.cancellable;
      return;
    }
    this.runs.delete(token);
    this.lastResult = value.message ? `${run.title}: ${value.message}` : `${run.title}: done`;
  }

  /** The token of the most recent cancellable run, if any. */
  cancellableToken(): string | undefined {
    const runs = [...this.runs.values()].filter((run) => run.cancellable);
    return runs.length > 0 ? runs[runs.length - 1].token : undefined;
  }

  isRunning(): boolean {
    return this.runs.size > 0;
  }

  view(): StatusView {
    if (this.state === "error") {
      return { text: "$(error) ReuseLens", tooltip: `${this.problem}\nClick to show the log.`, click: "log",
               kind: "error" };
    }
    if (this.state === "starting") {
      return { text: "$(loading~spin) ReuseLens", tooltip: "Starting the ReuseLens language server", click: "log",
               kind: "starting" };
    }
    if (this.state === "stopped") {
      return { text: "$(circle-slash) ReuseLens", tooltip: "The language server is stopped. Click for the log.",
               click: "log", kind: "stopped" };
    }
    const runs = [...this.runs.values()];
    if (runs.length > 0) {
      const run = runs[runs.length - 1];
      const percent = run.percentage !== undefined ? ` ${Math.round(run.percentage)}%` : "";
      const message = run.message ? ` ${run.message}` : "";
      return {
        text: `$(sync~spin) ReuseLens:${percent}${message || " " + run.title}`,
        tooltip: `${run.title}${message}${run.cancellable ? "\nClick to cancel." : ""}`,
        click: run.cancellable ? "cancel" : "menu",
        kind: "running",
      };
    }
    const count = `${this.findings} finding${this.findings === 1 ? "" : "s"}`;
    const tooltipLines = [this.lastResult ? `Last run: ${this.lastResult}` : "No profile run in this session yet.",
                          `${count} shown.`];
    if (this.serverOrigin) {
      tooltipLines.push(`Server: ${this.serverOrigin}.`);
    }
    tooltipLines.push("Click for ReuseLens commands.");
    return { text: `$(pulse) ReuseLens: ${count}`, tooltip: tooltipLines.join("\n"), click: "menu", kind: "idle" };
  }
}

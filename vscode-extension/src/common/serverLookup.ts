// Finding the language server, in this order (each step is logged, the first that works wins):
//   1. reuselens.server.python  - a configured interpreter: `<python> -m reuselens lsp`
//   2. reuselens.server.path    - a configured `reuselens` executable: `<path> lsp`
//   3. the Python extension's interpreter for this workspace, when that extension is installed
//   4. `python3` on PATH
//   5. `reuselens` on PATH (e.g. installed with pipx)
// An interpreter counts only when `<python> -c "import reuselens.lsp_server"` succeeds; an executable only when
// `<path> --version` succeeds. When nothing works, `failureMessage` says what was tried and how to fix it.
// No `vscode` import: the steps that need VS Code (reading settings, asking the Python extension) are passed in.
import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Which lookup step found it, for the log and the status bar tooltip. */
  origin: string;
}

export interface Attempt {
  origin: string;
  /** What was tried, e.g. "/usr/bin/python3 -c 'import reuselens.lsp_server'". */
  tried: string;
  ok: boolean;
  /** Why it was rejected (empty when ok). */
  reason: string;
}

export interface ProbeResult {
  ok: boolean;
  /** Short reason on failure: the last line of stderr, "exit code 1", "not found", "timed out". */
  reason: string;
}

export type Probe = (argv: string[]) => Promise<ProbeResult>;

export interface LookupInputs {
  /** reuselens.server.python after ${workspaceFolder} expansion; "" when unset, undefined when unexpandable. */
  serverPython: string | undefined;
  /** reuselens.server.path after expansion, same conventions. */
  serverPath: string | undefined;
  /** Asks the Python extension for its interpreter (argv, e.g. ["/venv/bin/python"]); undefined if absent. */
  pythonExtensionInterpreter: () => Promise<string[] | undefined>;
  /** PATH to search for python3 and reuselens. */
  envPath: string;
  pythonArgs: string[];
  executableArgs: string[];
  module: string;
}

export interface LookupResult {
  server?: ServerCommand;
  attempts: Attempt[];
}

/** Search `envPath` for an executable file called `name`, like the shell does. */
export function which(name: string, envPath: string, isExecutable: (file: string) => boolean = isExecutableFile):
    string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (dir === "") {
      continue;
    }
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) {
      return candidate;
    }
  }
  return undefined;
}

export function isExecutableFile(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) {
      return false;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Runs argv with a time limit; success means exit code 0. */
export function runProbe(argv: string[], timeoutMs = 20000): Promise<ProbeResult> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { timeout: timeoutMs, windowsHide: true }, (error, _stdout, stderr) => {
      if (!error) {
        resolve({ ok: true, reason: "" });
        return;
      }
      resolve({ ok: false, reason: probeFailureReason(error, String(stderr)) });
    });
  });
}

export function probeFailureReason(error: { code?: unknown; killed?: boolean; message: string }, stderr: string): string {
  if (error.code === "ENOENT") {
    return "not found";
  }
  if (error.code === "EACCES") {
    return "not executable";
  }
  if (error.killed) {
    return "timed out";
  }
  const lines = stderr.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "");
  if (lines.length > 0) {
    return lines[lines.length - 1];
  }
  return typeof error.code === "number" ? `exit code ${error.code}` : error.message;
}

function quote(argv: string[]): string {
  return argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`)).join(" ");
}

/** Walks the lookup order; `log` receives one line per step. */
export async function findServer(inputs: LookupInputs, probe: Probe, log: (line: string) => void,
                                 isExecutable: (file: string) => boolean = isExecutableFile): Promise<LookupResult> {
  const attempts: Attempt[] = [];

  const tryPython = async (origin: string, interpreter: string[]): Promise<ServerCommand | undefined> => {
    const check = [...interpreter, "-c", `import ${inputs.module}`];
    const result = await probe(check);
    attempts.push({ origin, tried: quote(check), ok: result.ok, reason: result.reason });
    log(`${origin}: ${quote(check)} -> ${result.ok ? "ok" : result.reason}`);
    if (!result.ok) {
      return undefined;
    }
    return { command: interpreter[0], args: [...interpreter.slice(1), ...inputs.pythonArgs], origin };
  };
  const tryExecutable = async (origin: string, file: string): Promise<ServerCommand | undefined> => {
    const check = [file, "--version"];
    const result = await probe(check);
    attempts.push({ origin, tried: quote(check), ok: result.ok, reason: result.reason });
    log(`${origin}: ${quote(check)} -> ${result.ok ? "ok" : result.reason}`);
    return result.ok ? { command: file, args: [...inputs.executableArgs], origin } : undefined;
  };
  const skip = (origin: string, reason: string): void => {
    attempts.push({ origin, tried: "", ok: false, reason });
    log(`${origin}: ${reason}`);
  };

  const configured: Array<[string, string | undefined, (value: string) => Promise<ServerCommand | undefined>]> = [
    ["reuselens.server.python", inputs.serverPython, (v) => tryPython("reuselens.server.python", [v])],
    ["reuselens.server.path", inputs.serverPath, (v) => tryExecutable("reuselens.server.path", v)],
  ];
  for (const [name, value, attempt] of configured) {
    if (value === undefined) {
      skip(name, "uses ${workspaceFolder} but no folder is open");
    } else if (value === "") {
      log(`${name}: not set`);
    } else {
      const found = await attempt(value);
      if (found) {
        return { server: found, attempts };
      }
    }
  }

  let extensionInterpreter: string[] | undefined;
  try {
    extensionInterpreter = await inputs.pythonExtensionInterpreter();
  } catch (error) {
    skip("Python extension", `could not be asked for its interpreter (${String(error)})`);
  }
  if (extensionInterpreter !== undefined && extensionInterpreter.length > 0) {
    const found = await tryPython("Python extension interpreter", extensionInterpreter);
    if (found) {
      return { server: found, attempts };
    }
  } else {
    log("Python extension: not installed or no interpreter selected");
  }

  const python3 = which("python3", inputs.envPath, isExecutable);
  if (python3 === undefined) {
    skip("python3 on PATH", "no python3 on PATH");
  } else {
    const found = await tryPython("python3 on PATH", [python3]);
    if (found) {
      return { server: found, attempts };
    }
  }

  const executable = which("reuselens", inputs.envPath, isExecutable);
  if (executable === undefined) {
    log("reuselens on PATH: not found");
  } else {
    const found = await tryExecutable("reuselens on PATH", executable);
    if (found) {
      return { server: found, attempts };
    }
  }
  return { attempts };
}

/** One clear error: what was tried, why each failed, and the fix. */
export function failureMessage(attempts: Attempt[]): string {
  const tried = attempts
    .filter((attempt) => !attempt.ok)
    .map((attempt) => `${attempt.origin} (${attempt.reason})`)
    .join("; ");
  return "ReuseLens could not start its language server: no Python environment with ReuseLens installed was found" +
    (tried ? ` (tried ${tried})` : "") +
    ". Fix: install ReuseLens into a Python >= 3.11 environment (`pip install .` in the ReuseLens source tree), " +
    "set reuselens.server.python to that environment's python (or reuselens.server.path to its `reuselens` " +
    "executable), then run \"ReuseLens: Restart server\".";
}

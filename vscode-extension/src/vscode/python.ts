// The Python extension's interpreter for a workspace folder, when that extension is installed. It is
// optional: ReuseLens users write CUDA and may not have it, so nothing here is a hard dependency.
import * as vscode from "vscode";

interface ResolvedEnvironment {
  executable?: { uri?: vscode.Uri };
}

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(environment: { path: string } | string): Promise<ResolvedEnvironment | undefined>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] };
  };
}

const PYTHON_EXTENSION = "ms-python.python";

/** argv of the selected interpreter (e.g. ["/proj/.venv/bin/python"]), or undefined. */
export async function pythonExtensionInterpreter(resource?: vscode.Uri): Promise<string[] | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
  if (extension === undefined) {
    return undefined;
  }
  const api = extension.isActive ? extension.exports : await extension.activate();
  if (api?.environments) {
    const active = api.environments.getActiveEnvironmentPath(resource);
    const resolved = await api.environments.resolveEnvironment(active);
    const executable = resolved?.executable?.uri?.fsPath;
    if (executable) {
      return [executable];
    }
  }
  const command = api?.settings?.getExecutionDetails?.(resource)?.execCommand;
  return command && command.length > 0 ? command : undefined;
}

/** Fires when the user picks another interpreter in the Python extension (if it is installed). */
export async function onPythonInterpreterChanged(listener: () => void): Promise<vscode.Disposable | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi & {
    environments?: { onDidChangeActiveEnvironmentPath?: vscode.Event<unknown> };
  }>(PYTHON_EXTENSION);
  if (extension === undefined) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments?.onDidChangeActiveEnvironmentPath?.(() => listener());
  } catch {
    return undefined;
  }
}

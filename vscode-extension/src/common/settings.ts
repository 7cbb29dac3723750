// Settings as contributed in package.json, which is their one source of truth (docs/settings.md).
// Pure functions: the VS Code side passes in the values it reads from `workspace.getConfiguration`.
import * as os from "os";
import * as path from "path";

export interface PackageJson {
  contributes?: { configuration?: { properties?: Record<string, { default?: unknown }> } };
  serverInfo?: ServerInfo;
}

/** How the server is started; read from package.json so the Python side and the tests see the same. */
export interface ServerInfo {
  name: string;
  module: string;
  pythonArgs: string[];
  executableArgs: string[];
  documentLanguages: string[];
  cudaFilePattern: string;
}

/** `reuselens.<name>` defaults from package.json, keyed by the name without the prefix. */
export function settingDefaults(pkg: PackageJson, section: string): Map<string, unknown> {
  const properties = pkg.contributes?.configuration?.properties ?? {};
  const defaults = new Map<string, unknown>();
  for (const [key, schema] of Object.entries(properties)) {
    if (key.startsWith(section + ".")) {
      defaults.set(key.slice(section.length + 1), schema.default);
    }
  }
  return defaults;
}

export function serverInfo(pkg: PackageJson): ServerInfo {
  const info = pkg.serverInfo;
  if (!info || !Array.isArray(info.pythonArgs) || !Array.isArray(info.executableArgs)) {
    throw new Error("package.json has no complete serverInfo block");
  }
  return info;
}

/**
 * Expands `${workspaceFolder}`, `${userHome}` and a leading `~` in a path-like setting. With no workspace
 * folder open, `${workspaceFolder}` cannot be expanded: the result is undefined so callers can say so.
 */
export function expandPath(value: string, workspaceFolder: string | undefined, home: string = os.homedir()):
    string | undefined {
  let text = value.trim();
  if (text === "") {
    return "";
  }
  if (text.includes("${workspaceFolder}")) {
    if (workspaceFolder === undefined) {
      return undefined;
    }
    text = text.split("${workspaceFolder}").join(workspaceFolder);
  }
  text = text.split("${userHome}").join(home);
  if (text === "~" || text.startsWith("~/")) {
    text = path.join(home, text.slice(1));
  }
  return text;
}

/** The client-only settings: where the server comes from. */
export interface ClientSettings {
  serverPath: string;
  serverPython: string;
}

/** Reads the client settings through `get` (a `WorkspaceConfiguration.get` bound to section `reuselens`);
 * a value of the wrong type counts as unset and is reported in `problems`. */
export function readClientSettings(get: (name: string) => unknown): { settings: ClientSettings; problems: string[] } {
  const problems: string[] = [];
  const text = (name: string): string => {
    const value = get(name);
    if (value === undefined || value === null) {
      return "";
    }
    if (typeof value !== "string") {
      problems.push(`Setting reuselens.${name} must be a string; ignoring it.`);
      return "";
    }
    return value;
  };
  return { settings: { serverPath: text("server.path"), serverPython: text("server.python") }, problems };
}

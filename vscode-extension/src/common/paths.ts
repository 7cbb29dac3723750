// Build-tree paths in a report -> workspace paths, with the same rule as the server
// (lsp_server/paths.py): the longest prefix of reuselens.pathPrefixMap that matches whole path components;
// ${workspaceFolder} in a target is expanded and a relative target is taken from the workspace folder.
import * as path from "path";

export function mapPath(file: string, prefixMap: Record<string, string>, workspaceFolder?: string): string {
  let best: [string, string] | undefined;
  for (const [prefix, target] of Object.entries(prefixMap)) {
    const stripped = prefix.replace(/\/+$/, "") || "/";
    const matches = file === stripped || file.startsWith(stripped === "/" ? "/" : stripped + "/");
    if (matches && (best === undefined || stripped.length > best[0].length)) {
      best = [stripped, target];
    }
  }
  let result = file;
  if (best !== undefined) {
    const [prefix, target] = best;
    let expanded = workspaceFolder === undefined ? target : target.split("${workspaceFolder}").join(workspaceFolder);
    // A relative target is a path in the workspace folder (as on the server, lsp_server/settings.py).
    if (workspaceFolder !== undefined && !path.posix.isAbsolute(expanded)) {
      expanded = path.posix.join(workspaceFolder, expanded);
    }
    const rest = prefix === "/" ? file.slice(1) : file.slice(prefix.length).replace(/^\//, "");
    result = rest === "" ? expanded : path.posix.join(expanded, rest);
  }
  return path.posix.normalize(result);
}

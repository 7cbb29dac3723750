// "Compare with previous run": the server's reuselens.compare answer (lsp_server/graph.py `compare`) as a
// Markdown page. Pure.
import { formatBytes } from "./format";

type Json = Record<string, unknown>;

function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((item): item is Json => item !== null && typeof item === "object") : [];
}

function bytes(value: unknown): string {
  return typeof value === "number" ? formatBytes(value) : "—";
}

// A finding's waste in its own unit: bytes, or shared-memory wavefronts (bank conflicts).
function waste(f: Json, value: unknown): string {
  if (typeof value !== "number") {
    return "—";
  }
  return f.waste_unit === "wavefronts" ? `${value.toLocaleString("en-US")} wavefronts` : formatBytes(value);
}

function cell(value: unknown): string {
  return String(value ?? "").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function findingRows(findings: Json[], withBefore: boolean): string[] {
  if (findings.length === 0) {
    return ["none", ""];
  }
  const header = withBefore ? ["| kernel | pattern | waste before | waste now | message |", "|---|---|---|---|---|"]
    : ["| kernel | pattern | waste | message |", "|---|---|---|---|"];
  const rows = findings.map((f) => withBefore
    ? `| ${cell(f.kernel)} | ${cell(f.pattern)} | ${waste(f, f.waste_before)} | ${waste(f, f.waste)} | ${cell(f.message)} |`
    : `| ${cell(f.kernel)} | ${cell(f.pattern)} | ${waste(f, f.waste)} | ${cell(f.message)} |`);
  return [...header, ...rows, ""];
}

export function compareMarkdown(answer: unknown): string {
  const result = (answer !== null && typeof answer === "object" ? answer : {}) as Json;
  if (typeof result.error === "string") {
    return `# ReuseLens: compare runs\n\nNothing to compare: ${result.error}.\n`;
  }
  const lines = ["# ReuseLens: compare runs", ""];
  if (result.previous === null || result.previous === undefined) {
    lines.push("No previous run in this session: every finding of the current run is listed as added.", "");
  } else {
    lines.push(`- previous: \`${cell(result.previous)}\``);
  }
  lines.push(`- current: \`${cell(result.current)}\``, "");
  const resolved = list(result.resolved);
  const added = list(result.added);
  const changed = list(result.changed);
  lines.push(`## Resolved (${resolved.length})`, "", ...findingRows(resolved, false));
  lines.push(`## Added (${added.length})`, "", ...findingRows(added, false));
  lines.push(`## Changed waste (${changed.length})`, "", ...findingRows(changed, true));
  const kernels = list(result.kernels);
  lines.push("## Memory traffic per kernel (bytes accessed)", "");
  if (kernels.length === 0) {
    lines.push("none", "");
  } else {
    lines.push("| kernel | before | after |", "|---|---|---|");
    for (const k of kernels) {
      lines.push(`| ${cell(k.kernel ?? k.mangled)} | ${bytes(k.bytes_before)} | ${bytes(k.bytes_after)} |`);
    }
    lines.push("");
  }
  return lines.join("\n");
}

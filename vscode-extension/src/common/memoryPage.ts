// The server's reuselens.memoryTimeline answer as a webview page. The page is the one `reuselens memory --html`
// writes (analyzer/reporters/memory_html.py): self-contained, with one inline <style> and one inline <script>.
// Nothing here redraws it; this only adds a Content-Security-Policy that lets exactly those inline blocks run
// (by their SHA-256) and nothing else load: no network, no other script, not even a changed copy of its own.
import * as crypto from "crypto";

export type MemoryPage = { kind: "page"; run: string; html: string } | { kind: "error"; message: string };

/** What the server answered: `{run, html}` or `{error}`; anything else is a protocol error. */
export function readMemoryAnswer(answer: unknown): MemoryPage {
  const record = (answer !== null && typeof answer === "object" ? answer : {}) as Record<string, unknown>;
  if (typeof record.error === "string") {
    return { kind: "error", message: record.error };
  }
  if (typeof record.html === "string" && typeof record.run === "string") {
    return { kind: "page", run: record.run, html: record.html };
  }
  return { kind: "error", message: "the server's answer is not a memory timeline (is the server older than the extension?)" };
}

/** The bodies of every inline `<tag>…</tag>` (no `src`): what a CSP hash source is computed over. */
export function inlineBlocks(html: string, tag: "script" | "style"): string[] {
  const pattern = new RegExp(`<${tag}(\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, "gi");
  const blocks: string[] = [];
  for (const match of html.matchAll(pattern)) {
    if (!/\ssrc\s*=/i.test(match[1] ?? "")) {
      blocks.push(match[2]);
    }
  }
  return blocks;
}

function hashSources(blocks: string[]): string {
  const hashes = [...new Set(blocks.map((text) =>
    `'sha256-${crypto.createHash("sha256").update(text, "utf8").digest("base64")}'`))];
  return hashes.length > 0 ? hashes.join(" ") : "'none'";
}

/** The policy for `html`: its own inline styles and scripts by hash, images only inline (data:), nothing else. */
export function contentSecurityPolicy(html: string): string {
  return [
    "default-src 'none'",
    `style-src ${hashSources(inlineBlocks(html, "style"))}`,
    `script-src ${hashSources(inlineBlocks(html, "script"))}`,
    "img-src data:",
  ].join("; ");
}

/** `html` with its policy as the first element of <head>, so that it covers every block after it. */
export function withContentSecurityPolicy(html: string): string {
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head === null) {
    throw new Error("the memory timeline page has no <head>");
  }
  const at = head.index + head[0].length;
  const meta = `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(html)}"/>`;
  return html.slice(0, at) + meta + html.slice(at);
}

/** A page saying why there is no timeline, under the same policy (no script at all). */
export function errorPage(message: string): string {
  const text = message.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return withContentSecurityPolicy(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>Memory timeline</title></head>
<body><h1>No memory timeline</h1><p>${text}.</p></body></html>`);
}

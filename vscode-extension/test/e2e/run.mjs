// End-to-end test of the packaged extension in a real VS Code (code-server) driven by Chromium.
//
//   node test/e2e/run.mjs SPEC.json
//
// SPEC (written by tests/vscode/test_e2e.py): {codeServer, nodeBin, chromium, vsix, workspace, file, artifacts,
// loadLine, storeLine, hoverColumn}. The script installs the .vsix into a fresh user-data and extensions dir,
// opens the workspace, and records what a user sees into ARTIFACTS/results.json: the squiggle, the code lenses,
// the hover, the quick fixes, the Problems panel, the status bar item and the reuse graph view (including a click
// on a node). Screenshots go next to it. The Python side asserts on results.json; this script only fails on its
// own errors (exit code 2), so each check is reported separately there.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { chromium } from "playwright-core";

const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const artifacts = spec.artifacts;
fs.mkdirSync(artifacts, { recursive: true });
const results = { steps: {}, console: [], timings: {} };
const started = Date.now();
const env = { ...process.env, PATH: `${spec.nodeBin}${path.delimiter}${process.env.PATH}` };
const userData = path.join(artifacts, "user-data");
const extensions = path.join(artifacts, "extensions");

function save() {
  results.timings.total_s = (Date.now() - started) / 1000;
  fs.writeFileSync(path.join(artifacts, "results.json"), JSON.stringify(results, null, 2));
}

/** Runs one step; its value (or error) lands in results.steps[name]. Later steps still run. */
async function step(name, run) {
  const t0 = Date.now();
  try {
    results.steps[name] = { ok: true, value: await run() };
  } catch (error) {
    results.steps[name] = { ok: false, error: String(error?.stack ?? error) };
  }
  results.timings[name] = (Date.now() - t0) / 1000;
  save();
  return results.steps[name];
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`code-server did not answer ${url} within ${timeoutMs / 1000} s`);
}

function writeUserSettings() {
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.writeFileSync(path.join(userData, "User", "settings.json"), JSON.stringify({
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "telemetry.telemetryLevel": "off",
    "editor.hover.delay": 100,
    "window.commandCenter": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.disableAIFeatures": true,
    "security.workspace.trust.startupPrompt": "never",
    "security.workspace.trust.banner": "never",
  }, null, 2));
}

function installExtension() {
  const result = spawnSync(spec.codeServer, ["--user-data-dir", userData, "--extensions-dir", extensions,
    "--install-extension", spec.vsix, "--force"], { env, encoding: "utf8", timeout: 120000 });
  const output = `${result.stdout}\n${result.stderr}`.trim();
  if (result.status !== 0) {
    throw new Error(`install failed (${result.status}): ${output}`);
  }
  return output.split("\n").slice(-2).join(" ");
}

async function texts(page, selector) {
  return page.locator(selector).evaluateAll((elements) => elements.map((e) => e.textContent.trim()).filter(Boolean));
}

async function runCommand(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 10000 });
  await input.fill(`>${title}`);
  await page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first()
    .waitFor({ state: "visible", timeout: 10000 });
  await page.keyboard.press("Enter");
}

async function goToLine(page, line, column) {
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 10000 });
  await input.fill(`:${line}:${column}`);
  await page.keyboard.press("Enter");
  await page.waitForTimeout(300);
}

async function cursorStatus(page) {
  return (await page.locator('[id="status.editor.selection"]').first().textContent({ timeout: 5000 }))?.trim();
}

/** The webview frame showing the graph: the one whose body carries data-nodes. */
async function graphFrame(page, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      try {
        if (await frame.evaluate(() => document.body?.dataset?.nodes !== undefined)) {
          return frame;
        }
      } catch {
        // frame detached or not ready
      }
    }
    await page.waitForTimeout(250);
  }
  throw new Error("no webview frame with a drawn graph");
}

const restricted = spec.mode === "restricted";
let server;
let browser;
try {
  writeUserSettings();
  const install = await step("install", async () => installExtension());
  if (!install.ok) {
    throw new Error("the .vsix did not install");
  }
  const port = await freePort();
  const log = fs.openSync(path.join(artifacts, "code-server.log"), "w");
  // Trusted mode: workspace trust is off, so the folder is trusted. Restricted mode: trust is on and the
  // startup prompt is off (user settings), so the folder opens untrusted.
  const trustFlags = restricted ? [] : ["--disable-workspace-trust"];
  server = spawn(spec.codeServer, ["--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry",
    "--disable-update-check", ...trustFlags, "--disable-getting-started-override",
    "--user-data-dir", userData, "--extensions-dir", extensions, spec.workspace],
  { env, stdio: ["ignore", log, log], detached: true });
  await step("start", async () => {
    await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60000);
    return port;
  });
  browser = await chromium.launch({ executablePath: spec.chromium, args: ["--no-sandbox", "--disable-gpu",
    "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--disable-dev-shm-usage"] });
  const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: `http://127.0.0.1:${port}` });
  const page = await context.newPage();
  page.on("console", (message) => {
    const text = message.text();
    if (/Content Security Policy|Refused to|reuselens/i.test(text)) {
      results.console.push(`${message.type()}: ${text}`.slice(0, 500));
    }
  });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(spec.workspace)}`);

  await step("open", async () => {
    await page.locator(".monaco-workbench").waitFor({ timeout: 90000 });
    await page.locator(".explorer-folders-view").first().waitFor({ timeout: 60000 });
    // Quick Open finds files only once the workbench's file search is up, which takes a while on a loaded
    // 2-core machine: retry instead of waiting once.
    const name = path.basename(spec.file);
    for (let attempt = 1; ; attempt++) {
      await page.keyboard.press("Control+P");
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible", timeout: 10000 });
      await input.fill(name);
      try {
        await page.locator(".quick-input-widget .monaco-list-row", { hasText: name }).first().waitFor({ timeout: 8000 });
        break;
      } catch (error) {
        await page.keyboard.press("Escape");
        if (attempt === 8) {
          throw error;
        }
        await page.waitForTimeout(2000);
      }
    }
    await page.keyboard.press("Enter");
    await page.locator(".monaco-editor .view-lines", { hasText: "row_sum" }).first().waitFor({ timeout: 30000 });
    return await page.locator(".tab.active").first().textContent();
  });
  await step("squiggle", async () => {
    await page.locator(".squiggly-warning").first().waitFor({ state: "attached", timeout: 90000 });
    return await page.locator(".squiggly-warning").count();
  });
  if (restricted) {
    await restrictedSteps(page);
  } else {
    await step("codelens", async () => {
      await page.locator(".codelens-decoration a", { hasText: "%" }).first().waitFor({ timeout: 30000 });
      return await texts(page, ".codelens-decoration");
    });
    await step("hover", async () => {
      await goToLine(page, spec.loadLine, spec.hoverColumn);
      await page.keyboard.press("Control+K");
      await page.keyboard.press("Control+I");
      await page.locator(".monaco-hover-content").first().waitFor({ state: "visible", timeout: 15000 });
      await page.waitForTimeout(500);
      await page.screenshot({ path: path.join(artifacts, "hover.png") });
      return await texts(page, ".monaco-hover-content");
    });
    await step("quickfix", async () => {
      // The code-action request can race the editor settling on a loaded machine: ask again, up to 3 times.
      for (let attempt = 1; ; attempt++) {
        await page.keyboard.press("Escape");
        await goToLine(page, spec.loadLine, spec.hoverColumn);
        await page.keyboard.press("Control+.");
        try {
          await page.locator(".action-widget .monaco-list-row").first().waitFor({ state: "visible", timeout: 15000 });
          break;
        } catch (error) {
          if (attempt === 3) {
            throw error;
          }
        }
      }
      await page.waitForTimeout(300);
      await page.screenshot({ path: path.join(artifacts, "quickfix.png") });
      const rows = await texts(page, ".action-widget .monaco-list-row");
      await page.keyboard.press("Escape");
      return rows;
    });
    await step("problems", async () => {
      await page.keyboard.press("Control+Shift+M");
      await page.locator(".markers-panel .monaco-list-row").first().waitFor({ state: "visible", timeout: 15000 });
      await page.waitForTimeout(300);
      return await texts(page, ".markers-panel .monaco-list-row");
    });
    await step("statusbar", async () => {
      const item = page.locator(".statusbar-item", { hasText: "ReuseLens" }).first();
      await item.waitFor({ timeout: 10000 });
      return (await item.textContent()).trim();
    });
    // With no text editor open, "Next hot spot" and "Show reuse graph" take the server's no-argument form.
    await step("hotspot_no_editor", async () => {
      await runCommand(page, "View: Close All Editors");
      await page.waitForTimeout(500);
      const editors = await page.locator(".monaco-editor .view-lines").count();
      await runCommand(page, "ReuseLens: Next hot spot");
      await page.locator(".monaco-editor .view-lines", { hasText: "row_sum" }).first().waitFor({ timeout: 15000 });
      let after = await cursorStatus(page);
      for (let i = 0; i < 50 && !(after ?? "").startsWith(`Ln ${spec.loadLine},`); i++) {
        await page.waitForTimeout(200);
        after = await cursorStatus(page);
      }
      return { editorsBefore: editors, after, errors: await texts(page, ".notification-toast") };
    });
    await step("graph_no_editor", async () => {
      await runCommand(page, "View: Close All Editors");
      await page.waitForTimeout(500);
      await runCommand(page, "ReuseLens: Show reuse graph");
      const frame = await graphFrame(page, 30000);
      const graph = await frame.evaluate(() => ({ title: document.getElementById("title").textContent,
                                                  nodes: Number(document.body.dataset.nodes) }));
      await page.screenshot({ path: path.join(artifacts, "graph_no_editor.png") });
      await runCommand(page, "View: Close All Editors");
      await page.waitForTimeout(500);
      await page.keyboard.press("Control+P");
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible", timeout: 10000 });
      await input.fill(path.basename(spec.file));
      await page.locator(".quick-input-widget .monaco-list-row", { hasText: path.basename(spec.file) }).first()
        .waitFor({ timeout: 10000 });
      await page.keyboard.press("Enter");
      await page.locator(".monaco-editor .view-lines", { hasText: "row_sum" }).first().waitFor({ timeout: 15000 });
      return graph;
    });
    await step("lens_click", async () => {
      await goToLine(page, 1, 1);
      const before = await cursorStatus(page);
      const lens = page.locator(".codelens-decoration a", { hasText: "thread" }).first();
      await lens.waitFor({ timeout: 15000 });
      const title = (await lens.textContent()).trim();
      await lens.click();
      const toast = page.locator(".notification-toast", { hasText: "reuse" }).first();
      await toast.waitFor({ timeout: 15000 });
      const text = (await toast.textContent()).trim();
      await page.waitForTimeout(500);
      const after = await cursorStatus(page);
      await page.keyboard.press("Escape");
      await runCommand(page, "Notifications: Clear All Notifications");
      return { title, toast: text, before, after };
    });
    await step("hotspot", async () => {
      await page.locator(".monaco-editor .view-lines", { hasText: "row_sum" }).first().click();
      await goToLine(page, 1, 1);
      const before = await cursorStatus(page);
      await runCommand(page, "ReuseLens: Next hot spot");
      let after = before;
      for (let i = 0; i < 50 && after === before; i++) {
        await page.waitForTimeout(200);
        after = await cursorStatus(page);
      }
      return { before, after };
    });
    await step("graph", async () => {
      await page.locator(".monaco-editor .view-lines", { hasText: "row_sum" }).first().click();
      await goToLine(page, spec.loadLine, 1);
      await runCommand(page, "ReuseLens: Show reuse graph");
      const frame = await graphFrame(page, 30000);
      await page.waitForTimeout(800);
      await page.screenshot({ path: path.join(artifacts, "graph.png") });
      return await frame.evaluate(() => ({
        title: document.getElementById("title").textContent,
        nodes: Number(document.body.dataset.nodes),
        edges: Number(document.body.dataset.edges),
        groups: Number(document.body.dataset.groups),
        legend: Array.from(document.querySelectorAll("#legend .key")).map((e) => e.textContent),
        positions: window.reuselensGraph.nodePositions(),
        canvases: document.querySelectorAll("#graph canvas").length,
        // VS Code itself injects a script and default styles ahead of our CSP meta tag; ours are the rest.
        cytoscapeStylesheet: document.getElementById("__________cytoscape_stylesheet")?.tagName,
        styleTags: Array.from(document.querySelectorAll("style")).map((s) => s.id),
        scripts: Array.from(document.scripts).map((s) => ({ src: s.src, nonce: Boolean(s.nonce) })),
        csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute("content"),
      }));
    });
    await step("graph_click", async () => {
      const frame = await graphFrame(page, 5000);
      const before = await cursorStatus(page);
      const positions = await frame.evaluate(() => window.reuselensGraph.nodePositions());
      const target = positions.find((p) => p.label.startsWith(`${path.basename(spec.file)}:${spec.storeLine}\n`));
      if (!target) {
        throw new Error(`no node labelled ${spec.storeLine}: ${JSON.stringify(positions)}`);
      }
      await frame.locator("#graph").click({ position: { x: target.x, y: target.y } });
      const deadline = Date.now() + 10000;
      let after = before;
      while (Date.now() < deadline && !(after ?? "").startsWith(`Ln ${spec.storeLine},`)) {
        await page.waitForTimeout(200);
        after = await cursorStatus(page);
      }
      await page.screenshot({ path: path.join(artifacts, "graph_click.png") });
      const details = await frame.evaluate(() => document.getElementById("details").textContent);
      return { before, after, clicked: target.label, details };
    });
    const statusItem = page.locator(".statusbar-item", { hasText: "ReuseLens" }).first();
    const statusText = async () => ((await statusItem.textContent({ timeout: 5000 })) ?? "").trim();
    /** Polls the status bar item until `done(text)`; returns every distinct text seen, in order. */
    const watchStatus = async (done, timeoutMs) => {
      const seen = [];
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = await statusText();
        if (seen[seen.length - 1] !== text) {
          seen.push(text);
        }
        if (done(text)) {
          return seen;
        }
        if (Date.now() > deadline) {
          throw new Error(`status bar never matched; seen ${JSON.stringify(seen)}`);
        }
        await page.waitForTimeout(100);
      }
    };
    const statusTooltip = async () => {
      await page.mouse.move(5, 500); // off the item first, or hovering again shows nothing
      await page.waitForTimeout(800);
      await statusItem.hover();
      const hover = page.locator(".workbench-hover, .monaco-hover", { hasText: "Last run" }).first();
      await hover.waitFor({ state: "visible", timeout: 5000 });
      const text = (await hover.textContent()).trim();
      await page.mouse.move(5, 500);
      return text;
    };
    await step("profile", async () => {
      fs.writeFileSync(path.join(spec.workspace, "delay.txt"), String(spec.profileSeconds));
      await page.locator(".monaco-editor .view-lines", { hasText: "row_sum" }).first().click();
      const t0 = Date.now();
      await runCommand(page, "ReuseLens: Profile now");
      const texts = await watchStatus((text) => /ReuseLens: \d+ findings?$/.test(text) && Date.now() - t0 > 1000 &&
                                                  !/^ReuseLens: 2 findings$/.test(text), 60000);
      await page.screenshot({ path: path.join(artifacts, "after_profile.png") });
      // The graph view opened earlier follows the new run (the fixed kernel has no intra-thread loop).
      const frame = await graphFrame(page, 10000);
      const readGraph = () => frame.evaluate(() => ({
        edges: Number(document.body.dataset.edges),
        legend: Array.from(document.querySelectorAll("#legend .key")).map((e) => e.textContent),
      }));
      let graph = await readGraph();
      for (let i = 0; i < 50 && graph.edges === 3; i++) {
        await page.waitForTimeout(200);
        graph = await readGraph();
      }
      return { texts, seconds: (Date.now() - t0) / 1000, squiggles: await page.locator(".squiggly-warning").count(),
               tooltip: await statusTooltip(), graph };
    });
    await step("compare", async () => {
      await runCommand(page, "ReuseLens: Compare with previous run");
      const editor = page.locator(".monaco-editor .view-lines", { hasText: "compare runs" }).first();
      await editor.waitFor({ timeout: 15000 });
      await page.screenshot({ path: path.join(artifacts, "compare.png") });
      // The editor renders only the visible, wrapped lines: read the whole document through the clipboard.
      await editor.click();
      await page.keyboard.press("Control+A");
      await page.keyboard.press("Control+C");
      await page.waitForTimeout(300);
      const text = await page.evaluate(() => navigator.clipboard.readText());
      await page.keyboard.press("Escape");
      // A read-only virtual document: its tab (in the focused group) is never dirty.
      const tab = page.locator(".editor-group-container.active .tab.active").first();
      return { text, tabTitle: (await tab.textContent()).trim(), tabClass: await tab.getAttribute("class") };
    });
    await step("cancel", async () => {
      fs.writeFileSync(path.join(spec.workspace, "delay.txt"), "120");
      await page.locator(".monaco-editor .view-lines", { hasText: "row_sum" }).first().click();
      await runCommand(page, "ReuseLens: Profile now");
      const running = await watchStatus((text) => /ReuseLens: \d+% run/.test(text), 30000);
      await page.screenshot({ path: path.join(artifacts, "profiling.png") });
      const t0 = Date.now();
      await statusItem.click();
      const after = await watchStatus((text) => /ReuseLens: \d+ findings?$/.test(text), 30000);
      return { running, after, seconds: (Date.now() - t0) / 1000, tooltip: await statusTooltip() };
    });
  }
} catch (error) {
  results.fatal = String(error?.stack ?? error);
} finally {
  save();
  await browser?.close().catch(() => {});
  if (server?.pid) {
    // code-server was started in its own process group: it, its extension host and our language server.
    for (const signal of ["SIGTERM", "SIGKILL"]) {
      try {
        process.kill(-server.pid, signal);
      } catch {
        break; // the group is gone
      }
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
  }
  for (const logFile of findLogs(path.join(userData, "logs"))) {
    fs.copyFileSync(logFile, path.join(artifacts, `log-${path.basename(path.dirname(logFile))}-${path.basename(logFile)}`));
  }
}
process.exit(results.fatal ? 2 : 0);

function findLogs(dir) {
  const found = [];
  if (!fs.existsSync(dir)) {
    return found;
  }
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    if (entry.isFile() && /ReuseLens|exthost\.log|remoteagent\.log/.test(entry.name)) {
      found.push(full);
    }
  }
  return found;
}

/** Restricted mode (untrusted folder): the workspace's server settings are ignored, results still show, and
 * "Profile now" refuses with the reason instead of running the workspace's commands. */
async function restrictedSteps(page) {
  await step("restricted_mode", async () => {
    const item = page.locator(".statusbar-item", { hasText: "Restricted Mode" }).first();
    await item.waitFor({ timeout: 10000 });
    return (await item.textContent()).trim();
  });
  await step("lookup_log", async () => {
    const deadline = Date.now() + 20000;
    for (;;) {
      const logFile = findLogs(path.join(userData, "logs")).find((file) => file.endsWith("ReuseLens.log"));
      const text = logFile ? fs.readFileSync(logFile, "utf8") : "";
      if (text.includes("server command:") || Date.now() > deadline) {
        return text.split("\n").filter((line) => /server lookup|server command/.test(line))
          .map((line) => line.replace(/^\S+ \S+ \[\w+\] /, ""));
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  });
  await step("profile_refused", async () => {
    const statusItem = page.locator(".statusbar-item", { hasText: "ReuseLens" }).first();
    await statusItem.click();
    await page.locator(".quick-input-widget .monaco-list-row", { hasText: "Profile now" }).first().click();
    const toast = page.locator(".notification-toast", { hasText: "trusted workspace" }).first();
    await toast.waitFor({ timeout: 10000 });
    await page.screenshot({ path: path.join(artifacts, "restricted.png") });
    const seen = new Set();
    for (let i = 0; i < 20; i++) {
      seen.add(((await statusItem.textContent()) ?? "").trim());
      await page.waitForTimeout(150);
    }
    return { toast: (await toast.textContent()).trim(), status: [...seen],
             appRan: fs.existsSync(path.join(spec.workspace, "app-ran")) };
  });
}

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { RESTART_SETTINGS, SECTION } from "../../src/common/constants";
import { expandPath, PackageJson, readClientSettings, serverInfo, settingDefaults } from "../../src/common/settings";

const packageJsonPath = path.join(__dirname, "..", "..", "..", "package.json");
const pkg = JSON.parse(fs.readFileSync(packageJsonPath, "utf8")) as PackageJson & Record<string, any>;

test("every contributed setting has a default, a scope and a description", () => {
  const properties = pkg.contributes!.configuration!.properties!;
  for (const [name, schema] of Object.entries(properties as Record<string, Record<string, unknown>>)) {
    assert.ok(name.startsWith("reuselens."), name);
    assert.ok("default" in schema, `${name} has no default`);
    assert.ok(typeof schema.scope === "string", `${name} has no scope`);
    assert.ok(typeof schema.markdownDescription === "string", `${name} has no description`);
  }
});

test("settingDefaults strips the section and keeps the package.json values", () => {
  const defaults = settingDefaults(pkg, SECTION);
  assert.deepEqual(defaults.get("runDirectory"), "${workspaceFolder}/.reuselens/run");
  assert.deepEqual(defaults.get("thresholds.delta"), 0.8);
  assert.deepEqual(defaults.get("profile.command"), []);
  assert.equal(defaults.get("server.python"), "");
  assert.equal(defaults.has("reuselens.runDirectory"), false);
});

test("settings that restart the server and restricted settings exist", () => {
  const defaults = settingDefaults(pkg, SECTION);
  for (const name of RESTART_SETTINGS) {
    assert.ok(defaults.has(name), name);
  }
  const restricted: string[] = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, "limited");
  for (const name of restricted) {
    assert.ok(defaults.has(name.slice(SECTION.length + 1)), `${name} is restricted but not contributed`);
  }
  for (const name of ["profile.command", "build.command", "profiler.command", "server.python", "server.path",
                      "profile.env"]) {
    assert.ok(restricted.includes(`${SECTION}.${name}`), `${name} must be ignored in untrusted workspaces`);
  }
});

test("the commands the extension registers are contributed, and differ from the server's", () => {
  const contributed = (pkg.contributes as any).commands.map((entry: { command: string }) => entry.command);
  const source = fs.readFileSync(path.join(__dirname, "..", "..", "..", "src", "common", "constants.ts"), "utf8");
  for (const id of ["reuselens.profileNow", "reuselens.restartServer", "reuselens.showReuseGraph",
                    "reuselens.goToNextHotSpot", "reuselens.compareWithPrevious"]) {
    assert.ok(contributed.includes(id), id);
    assert.ok(source.includes(`"${id}"`), id);
  }
  for (const id of ["reuselens.profile", "reuselens.showGraph", "reuselens.nextHotSpot", "reuselens.compare"]) {
    assert.equal(contributed.includes(id), false, `${id} is registered by vscode-languageclient`);
  }
});

test("serverInfo describes how to start the server", () => {
  const info = serverInfo(pkg);
  assert.deepEqual(info.pythonArgs, ["-m", "reuselens", "lsp"]);
  assert.deepEqual(info.executableArgs, ["lsp"]);
  assert.equal(info.module, "reuselens.lsp_server");
  assert.ok(info.documentLanguages.includes("cuda-cpp"));
  assert.throws(() => serverInfo({}), /serverInfo/);
});

test("expandPath expands workspace folder, home and ~", () => {
  assert.equal(expandPath("${workspaceFolder}/.venv/bin/python", "/ws", "/home/u"), "/ws/.venv/bin/python");
  assert.equal(expandPath("~/venv/bin/python", "/ws", "/home/u"), "/home/u/venv/bin/python");
  assert.equal(expandPath("${userHome}/x", undefined, "/home/u"), "/home/u/x");
  assert.equal(expandPath("  /usr/bin/python3 ", undefined, "/home/u"), "/usr/bin/python3");
  assert.equal(expandPath("", undefined), "");
  assert.equal(expandPath("${workspaceFolder}/x", undefined), undefined);
  assert.equal(expandPath("a~/b", "/ws", "/home/u"), "a~/b");
});

test("readClientSettings reports values of the wrong type and ignores them", () => {
  const values: Record<string, unknown> = { "server.path": 42, "server.python": "/venv/bin/python" };
  const { settings, problems } = readClientSettings((name) => values[name]);
  assert.deepEqual(settings, { serverPath: "", serverPython: "/venv/bin/python" });
  assert.deepEqual(problems, ["Setting reuselens.server.path must be a string; ignoring it."]);
  assert.deepEqual(readClientSettings(() => undefined).settings, { serverPath: "", serverPython: "" });
});

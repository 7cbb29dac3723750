import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import {
  failureMessage, findServer, LookupInputs, Probe, probeFailureReason, runProbe, which,
} from "../../src/common/serverLookup";

const base: LookupInputs = {
  serverPython: "",
  serverPath: "",
  pythonExtensionInterpreter: async () => undefined,
  envPath: "/opt/bin:/usr/bin",
  pythonArgs: ["-m", "reuselens", "lsp"],
  executableArgs: ["lsp"],
  module: "reuselens.lsp_server",
};

/** A probe that succeeds only for the listed executables and records what it ran. */
function fakeProbe(working: string[], calls: string[][]): Probe {
  return async (argv) => {
    calls.push(argv);
    return working.includes(argv[0]) ? { ok: true, reason: "" }
      : { ok: false, reason: "ModuleNotFoundError: No module named 'lsp_server'" };
  };
}

const onPath = (files: string[]) => (file: string) => files.includes(file);

test("a configured interpreter wins and is checked with import reuselens.lsp_server", async () => {
  const calls: string[][] = [];
  const lines: string[] = [];
  const result = await findServer({ ...base, serverPython: "/venv/bin/python" },
    fakeProbe(["/venv/bin/python", "/usr/bin/python3"], calls), (line) => lines.push(line), onPath(["/usr/bin/python3"]));
  assert.deepEqual(result.server, { command: "/venv/bin/python", args: ["-m", "reuselens", "lsp"],
                                    origin: "reuselens.server.python" });
  assert.deepEqual(calls, [["/venv/bin/python", "-c", "import reuselens.lsp_server"]]);
  assert.match(lines[0], /^reuselens\.server\.python: \/venv\/bin\/python -c 'import reuselens.lsp_server' -> ok$/);
});

test("a configured executable is used with 'lsp' when no interpreter is configured", async () => {
  const calls: string[][] = [];
  const result = await findServer({ ...base, serverPath: "/opt/reuselens/bin/reuselens" },
    fakeProbe(["/opt/reuselens/bin/reuselens"], calls), () => {}, onPath([]));
  assert.deepEqual(result.server, { command: "/opt/reuselens/bin/reuselens", args: ["lsp"],
                                    origin: "reuselens.server.path" });
  assert.deepEqual(calls, [["/opt/reuselens/bin/reuselens", "--version"]]);
});

test("a broken configured interpreter falls through, in order, to python3 on PATH", async () => {
  const calls: string[][] = [];
  const lines: string[] = [];
  const result = await findServer({ ...base, serverPython: "/broken/python",
                                    pythonExtensionInterpreter: async () => ["/conda/bin/python"] },
    fakeProbe(["/usr/bin/python3"], calls), (line) => lines.push(line), onPath(["/usr/bin/python3"]));
  assert.equal(result.server?.origin, "python3 on PATH");
  assert.equal(result.server?.command, "/usr/bin/python3");
  assert.deepEqual(calls.map((argv) => argv[0]), ["/broken/python", "/conda/bin/python", "/usr/bin/python3"]);
  assert.deepEqual(result.attempts.map((a) => [a.origin, a.ok]), [
    ["reuselens.server.python", false], ["Python extension interpreter", false], ["python3 on PATH", true]]);
  assert.ok(lines.some((line) => line === "reuselens.server.path: not set"), lines.join("\n"));
});

test("the Python extension's interpreter argv is kept before the server arguments", async () => {
  const calls: string[][] = [];
  const result = await findServer({ ...base, pythonExtensionInterpreter: async () => ["conda", "run", "-n", "x", "python"] },
    async (argv) => { calls.push(argv); return { ok: true, reason: "" }; }, () => {}, onPath([]));
  assert.deepEqual(result.server?.args, ["run", "-n", "x", "python", "-m", "reuselens", "lsp"]);
  assert.deepEqual(calls[0], ["conda", "run", "-n", "x", "python", "-c", "import reuselens.lsp_server"]);
});

test("a Python extension that throws is logged and skipped", async () => {
  const lines: string[] = [];
  const result = await findServer({ ...base, pythonExtensionInterpreter: async () => { throw new Error("boom"); } },
    fakeProbe(["/usr/bin/python3"], []), (line) => lines.push(line), onPath(["/usr/bin/python3"]));
  assert.equal(result.server?.origin, "python3 on PATH");
  assert.ok(lines.some((line) => line.includes("Error: boom")), lines.join("\n"));
});

test("reuselens on PATH is the last resort", async () => {
  const result = await findServer(base, fakeProbe(["/opt/bin/reuselens"], []), () => {},
    onPath(["/usr/bin/python3", "/opt/bin/reuselens"]));
  assert.deepEqual(result.server, { command: "/opt/bin/reuselens", args: ["lsp"], origin: "reuselens on PATH" });
});

test("when nothing works the message lists every attempt and the fix", async () => {
  const result = await findServer({ ...base, serverPython: undefined },
    fakeProbe([], []), () => {}, onPath(["/usr/bin/python3"]));
  assert.equal(result.server, undefined);
  const message = failureMessage(result.attempts);
  assert.match(message, /^ReuseLens could not start its language server/);
  assert.match(message, /reuselens\.server\.python \(uses \$\{workspaceFolder\} but no folder is open\)/);
  assert.match(message, /python3 on PATH \(ModuleNotFoundError: No module named 'lsp_server'\)/);
  assert.match(message, /Fix: install ReuseLens .* set reuselens\.server\.python .* Restart server/);
});

test("no python3 on PATH is reported as such", async () => {
  const result = await findServer(base, fakeProbe([], []), () => {}, onPath([]));
  assert.match(failureMessage(result.attempts), /python3 on PATH \(no python3 on PATH\)/);
});

test("which finds the first executable file on PATH", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reuselens-which-"));
  const first = path.join(dir, "a");
  const second = path.join(dir, "b");
  fs.mkdirSync(first);
  fs.mkdirSync(second);
  fs.writeFileSync(path.join(first, "python3"), "not executable");
  fs.mkdirSync(path.join(second, "reuselens"));
  fs.writeFileSync(path.join(second, "python3"), "#!/bin/sh\n", { mode: 0o755 });
  const envPath = ["", first, second].join(path.delimiter);
  assert.equal(which("python3", envPath), path.join(second, "python3"));
  assert.equal(which("reuselens", envPath), undefined);
  fs.rmSync(dir, { recursive: true });
});

test("runProbe: success, the last stderr line, a missing program", async () => {
  assert.deepEqual(await runProbe([process.execPath, "-e", "process.exit(0)"]), { ok: true, reason: "" });
  const failed = await runProbe([process.execPath, "-e",
    "console.error('Traceback (most recent call last):\\nModuleNotFoundError: No module named \\'lsp_server\\''); process.exit(1)"]);
  assert.deepEqual(failed, { ok: false, reason: "ModuleNotFoundError: No module named 'lsp_server'" });
  assert.deepEqual(await runProbe(["/nonexistent/python3", "-c", "pass"]), { ok: false, reason: "not found" });
  assert.deepEqual(await runProbe([process.execPath, "-e", "setTimeout(() => {}, 5000)"], 200),
                   { ok: false, reason: "timed out" });
});

test("probeFailureReason falls back to the exit code", () => {
  assert.equal(probeFailureReason({ code: 3, message: "Command failed" }, "\n  \n"), "exit code 3");
  assert.equal(probeFailureReason({ code: "EACCES", message: "x" }, ""), "not executable");
});

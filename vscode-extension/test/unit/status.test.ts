import * as assert from "node:assert/strict";
import { test } from "node:test";

import { StatusModel } from "../../src/common/status";

test("starting, then idle with the number of findings", () => {
  const model = new StatusModel();
  assert.equal(model.view().kind, "starting");
  model.serverRunning("python3 on PATH");
  model.setFindings(3);
  const view = model.view();
  assert.equal(view.text, "$(pulse) ReuseLens: 3 findings");
  assert.equal(view.click, "menu");
  assert.match(view.tooltip, /No profile run in this session yet\.\n3 findings shown\.\nServer: python3 on PATH\./);
  model.setFindings(1);
  assert.equal(model.view().text, "$(pulse) ReuseLens: 1 finding");
});

test("a cancellable run shows its progress and a click cancels it; its end becomes the last result", () => {
  const model = new StatusModel();
  model.serverRunning("x");
  model.progress("t1", { kind: "begin", title: "Profiling", cancellable: true, percentage: 0 });
  assert.equal(model.view().text, "$(sync~spin) ReuseLens: 0% Profiling");
  model.progress("t1", { kind: "report", message: "building", percentage: 12.6 });
  const running = model.view();
  assert.equal(running.text, "$(sync~spin) ReuseLens: 13% building");
  assert.equal(running.click, "cancel");
  assert.match(running.tooltip, /Click to cancel\./);
  assert.equal(model.cancellableToken(), "t1");
  model.progress("t1", { kind: "end", message: "5 findings in 2 kernels" });
  assert.equal(model.isRunning(), false);
  assert.equal(model.cancellableToken(), undefined);
  assert.match(model.view().tooltip, /^Last run: Profiling: 5 findings in 2 kernels/);
});

test("reports for unknown tokens are ignored; a run that cannot be cancelled opens the menu", () => {
  const model = new StatusModel();
  model.serverRunning("x");
  model.progress("nope", { kind: "report", message: "?" });
  model.progress("nope", { kind: "end" });
  assert.equal(model.view().kind, "idle");
  model.progress("t2", { kind: "begin", title: "Loading report" });
  assert.equal(model.view().click, "menu");
  assert.equal(model.cancellableToken(), undefined);
});

test("a failed server shows the problem and links to the log; progress is dropped", () => {
  const model = new StatusModel();
  model.progress("t", { kind: "begin", title: "Profiling", cancellable: true });
  model.serverFailed("ReuseLens could not start its language server.");
  const view = model.view();
  assert.equal(view.kind, "error");
  assert.equal(view.click, "log");
  assert.match(view.tooltip, /could not start/);
  assert.equal(model.isRunning(), false);
  model.serverStopped();
  assert.equal(model.view().kind, "stopped");
});

import * as assert from "node:assert/strict";
import { test } from "node:test";

import {
  contentSecurityPolicy,
  errorPage,
  inlineBlocks,
  readMemoryAnswer,
  withContentSecurityPolicy,
} from "../../src/common/memoryPage";

// The shape of analyzer/reporters/memory_html.py's page: one inline style in <head>, one inline script at the end.
const PAGE = '<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8"/>' +
  "<title>t</title><style>body { color: red; }</style></head><body><svg></svg><script>alert(1)</script></body></html>\n";
// Known answers: base64(SHA-256) of the two block bodies (Python: hashlib.sha256(text.encode()).digest()).
const STYLE_HASH = "'sha256-XeYlw2NVzOfB1UCIJqCyGr+0n7bA4fFslFpvKu84IAw='";
const SCRIPT_HASH = "'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='";

test("the server's answer: a page, an error, or a clear protocol error", () => {
  assert.deepEqual(readMemoryAnswer({ run: "abc", html: PAGE }), { kind: "page", run: "abc", html: PAGE });
  assert.deepEqual(readMemoryAnswer({ error: "the memory analysis is off" }),
                   { kind: "error", message: "the memory analysis is off" });
  for (const odd of [null, undefined, "text", { html: 3 }, { run: "abc" }]) {
    assert.equal(readMemoryAnswer(odd).kind, "error");
  }
});

test("the policy allows exactly the page's inline style and script, by hash, and nothing from anywhere", () => {
  const policy = contentSecurityPolicy(PAGE);
  assert.equal(policy,
               `default-src 'none'; style-src ${STYLE_HASH}; script-src ${SCRIPT_HASH}; img-src data:`);
  assert.doesNotMatch(policy, /unsafe|https?:|\*/);
});

test("a page without scripts allows none; external scripts are not hashed", () => {
  assert.match(contentSecurityPolicy("<html><head></head><body></body></html>"), /script-src 'none'/);
  assert.deepEqual(inlineBlocks('<script src="x.js"></script><script type="module">a()</script>', "script"),
                   ["a()"]);
});

test("the policy is the first element of <head>, and the page is otherwise unchanged", () => {
  const secured = withContentSecurityPolicy(PAGE);
  const meta = `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(PAGE)}"/>`;
  assert.equal(secured, PAGE.replace("<head>", `<head>${meta}`));
  assert.throws(() => withContentSecurityPolicy("<p>no head</p>"), /no <head>/);
});

test("the error page says why, escaped, and runs no script", () => {
  const page = errorPage("no run <loaded> & more");
  assert.match(page, /<p>no run &lt;loaded&gt; &amp; more\.<\/p>/);
  assert.match(page, /script-src 'none'/);
  assert.doesNotMatch(page, /<script/);
});

// proto/asyncapi.json read by the AsyncAPI initiative's own parser (the one its
// generators use): no error or warning, every message of the protocol resolved.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Parser } from "@asyncapi/parser";

test("proto/asyncapi.json is a valid AsyncAPI 3 document", async () => {
  const text = readFileSync(new URL("../../../../proto/asyncapi.json", import.meta.url), "utf8");
  const { document, diagnostics } = await new Parser().parse(text);
  // Severity 0 is an error, 1 a warning (2 and 3 are hints, e.g. "a newer AsyncAPI exists").
  const problems = diagnostics.filter((d) => d.severity <= 1);
  assert.deepEqual(problems.map((d) => `${d.code}: ${d.message} at ${d.path.join("/")}`), []);
  assert.ok(document);
  assert.equal(document.version(), "3.0.0");
  const names = document.allMessages().all().map((m) => m.name()).sort();
  // Every message the document lists (21 when written: the emote added two), resolved.
  const listed = Object.keys(JSON.parse(text).components.messages).length;
  assert.ok(listed >= 21, `${listed} messages listed`);
  assert.equal(names.length, listed);
  for (const name of ["join", "resume", "play", "welcome", "event", "your_turn", "closing"]) {
    assert.ok(names.includes(name), `message ${name}`);
  }
  const channel = document.channels().get("play");
  assert.equal(channel?.address(), "/ws");
});

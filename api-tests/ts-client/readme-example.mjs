// Copies the TypeScript example of README.md's "Building an app client" into
// generated/readme-example.ts, next to the generated schema.d.ts it imports, so that
// `npm run build` type-checks the README's example against the document.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const section = readme.split("## Building an app client")[1]?.split("\n## ")[0] ?? "";
const example = section.match(/```ts\n([\s\S]*?)```/)?.[1];
if (!example) {
  console.error("README.md: no ```ts block under \"## Building an app client\"");
  process.exit(1);
}
mkdirSync(new URL("generated/", import.meta.url), { recursive: true });
writeFileSync(
  new URL("generated/readme-example.ts", import.meta.url),
  "// Generated from README.md by readme-example.mjs: type-checked, never run.\n" + example,
);

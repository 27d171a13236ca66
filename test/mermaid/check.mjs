// Parses Mermaid diagrams with Mermaid's own parser, under Node with a
// jsdom window (Mermaid's sanitizer wants a DOM even to parse). Reads a
// JSON array of diagram texts on stdin (with or without the ```mermaid
// fence) and prints a JSON array of the same length: "" for a diagram that
// parses, else the parser's first line of error.
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');

let input = '';
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (let text of JSON.parse(input)) {
  text = text.replace(/^```mermaid\n/, '').replace(/```\s*$/, '');
  try {
    await mermaid.parse(text);
    out.push('');
  } catch (e) {
    out.push(String((e && e.message) || e).split('\n').slice(0, 3).join(' '));
  }
}
process.stdout.write(JSON.stringify(out));

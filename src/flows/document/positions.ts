/**
 * Where things are in a YAML or JSON document: the line of the node at a path (or of the
 * nearest part of it that exists), and the lines of scalars with a given value under a node,
 * so every problem in a flow document is reported as `file:line`.
 */
import type { Document, LineCounter, Node, ParsedNode } from 'yaml';
import { yaml } from './yaml.js';

/** A path into a document: keys and list indexes. */
export type DocPath = readonly PropertyKey[];

/** Finds lines in one parsed document. */
export class Positions {
  constructor(
    private readonly doc: Document.Parsed,
    private readonly lines: LineCounter,
  ) {}

  /** The line of the node at `path`; with `atKey`, of its key. Falls back to the nearest parent. */
  line(path: DocPath, atKey = false): number {
    const { isMap, isScalar, isSeq } = yaml();
    let node: Node | null | undefined = this.doc.contents;
    let best = node?.range?.[0] ?? 0;
    for (let i = 0; i < path.length; i++) {
      const key = path[i];
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(key));
        if (!pair) break;
        const keyNode = pair.key as ParsedNode;
        if (last && atKey && keyNode.range) return this.at(keyNode.range[0]);
        node = pair.value as Node | null;
        const start = node?.range?.[0] ?? keyNode.range?.[0];
        if (start !== undefined) best = start;
      } else if (isSeq(node) && typeof key === 'number') {
        const item = node.items[key] as Node | undefined;
        if (!item) break;
        node = item;
        if (item.range) best = item.range[0];
      } else {
        break;
      }
    }
    return this.at(best);
  }

  /** Lines of the scalars equal to `value` under the node at `path`, in document order. */
  linesOf(path: DocPath, value: string): number[] {
    const { isMap, isScalar, isSeq } = yaml();
    const out: number[] = [];
    const visit = (node: unknown) => {
      if (isScalar(node)) {
        if (String(node.value) === value && node.range) out.push(this.at(node.range[0]));
      } else if (isMap(node)) {
        for (const pair of node.items) visit(pair.value);
      } else if (isSeq(node)) {
        for (const item of node.items) visit(item);
      }
    };
    visit(this.node(path));
    return out;
  }

  private node(path: DocPath): unknown {
    const { isMap, isScalar, isSeq } = yaml();
    let node: unknown = this.doc.contents;
    for (const key of path) {
      if (isMap(node)) {
        node = node.items.find(
          (p) => isScalar(p.key) && String(p.key.value) === String(key),
        )?.value;
      } else if (isSeq(node) && typeof key === 'number') {
        node = node.items[key];
      } else {
        return undefined;
      }
    }
    return node;
  }

  private at(offset: number): number {
    return this.lines.linePos(offset).line;
  }
}

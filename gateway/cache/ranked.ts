// Items kept in order of a number, largest first, so the first few can be read without looking at
// the rest: the status page and the summary show the largest prefixes and objects of a cache that
// may hold millions. A treap (a binary search tree balanced by random priorities): adding and
// removing cost O(log n) expected, reading the first k costs O(k + log n). Pure.

interface Node<T> {
  readonly id: string;
  readonly value: number;
  readonly item: T;
  readonly prio: number;
  left?: Node<T>;
  right?: Node<T>;
}

export interface RankedItem<T> {
  readonly id: string;
  readonly value: number;
  readonly item: T;
}

/** Whether (av, aid) comes before (bv, bid): larger values first, ties by id. */
const precedes = (av: number, aid: string, bv: number, bid: string): boolean => av > bv || (av === bv && aid < bid);

/** Joins two trees where every node of a comes before every node of b. */
function merge<T>(a: Node<T> | undefined, b: Node<T> | undefined): Node<T> | undefined {
  if (!a) return b;
  if (!b) return a;
  if (a.prio > b.prio) {
    a.right = merge(a.right, b);
    return a;
  }
  b.left = merge(a, b.left);
  return b;
}

export class Ranked<T> {
  #root?: Node<T>;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds an item under (value, id); the pair must not be present already. */
  add(id: string, value: number, item: T): void {
    const node: Node<T> = { id, value, item, prio: Math.random() };
    // Down to where the new node's priority belongs; the subtree found there is split around it.
    let parent: Node<T> | undefined;
    let t = this.#root;
    while (t && t.prio > node.prio) {
      parent = t;
      t = precedes(value, id, t.value, t.id) ? t.left : t.right;
    }
    if (!parent) this.#root = node;
    else if (precedes(value, id, parent.value, parent.id)) parent.left = node;
    else parent.right = node;
    // Iterative split, no allocation: `before` collects what precedes the node, `after` the rest.
    const before = { right: undefined } as { right?: Node<T> };
    const after = { left: undefined } as { left?: Node<T> };
    let b = before;
    let a = after;
    while (t) {
      if (precedes(t.value, t.id, value, id)) {
        b.right = t;
        b = t;
        t = t.right;
      } else {
        a.left = t;
        a = t;
        t = t.left;
      }
    }
    b.right = undefined;
    a.left = undefined;
    node.left = before.right;
    node.right = after.left;
    this.#size++;
  }

  /** Removes the item added under (value, id); false when there is none. */
  remove(id: string, value: number): boolean {
    let parent: Node<T> | undefined;
    let n = this.#root;
    while (n && (n.id !== id || n.value !== value)) {
      parent = n;
      n = precedes(value, id, n.value, n.id) ? n.left : n.right;
    }
    if (!n) return false;
    const joined = merge(n.left, n.right);
    if (!parent) this.#root = joined;
    else if (parent.left === n) parent.left = joined;
    else parent.right = joined;
    this.#size--;
    return true;
  }

  /** The first `k` items, largest value first. */
  first(k: number): RankedItem<T>[] {
    const out: RankedItem<T>[] = [];
    const stack: Node<T>[] = [];
    let n = this.#root;
    while (out.length < k && (n || stack.length > 0)) {
      while (n) {
        stack.push(n);
        n = n.left;
      }
      const top = stack.pop()!;
      out.push({ id: top.id, value: top.value, item: top.item });
      n = top.right;
    }
    return out;
  }
}

// The 채점 결과 side panel: the last attempt's result, then every attempt so far.
// Built with DOM calls and textContent only: nothing the server sends is read as markup.
import { Widget } from '@lumino/widgets';

import { Attempt, FunctionRow, Reply, Summary, Words } from './api';
import { drawPicture } from './pictures';

function element(
  tag: string,
  className: string,
  text?: string,
  parent?: HTMLElement
): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  parent?.appendChild(node);
  return node;
}

export function points(score: number | null | undefined, max: number): string {
  return `${score ?? 0} / ${max}`;
}

export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key) => values[key] ?? whole);
}

// The hints given so far for a function the learner is stuck on, in the order written.
export function hintLines(row: FunctionRow, w: Words, parent: HTMLElement): void {
  (row.hints ?? []).forEach((hint, i) => {
    element('div', 'ck-hint', `${fill(w.hint ?? '{n}', { n: String(i + 1) })}: ${hint}`, parent);
  });
}

export class ResultPanel extends Widget {
  private words: Words = {};
  openPage: (path: string) => void = () => undefined;

  constructor() {
    super();
    this.id = 'coursekit-result-panel';
    this.addClass('ck-panel');
    this.title.closable = true;
  }

  setWords(words: Words): void {
    this.words = words;
    this.title.label = words.title ?? '';
    this.title.caption = words.title ?? '';
  }

  /** A line while nothing else is known (submitting, an error). */
  showStatus(text: string, isError = false): void {
    this.node.replaceChildren();
    element('h2', 'ck-heading', this.words.title, this.node);
    element('p', isError ? 'ck-status ck-error' : 'ck-status', text, this.node);
  }

  showReply(reply: Reply): void {
    const w = this.words;
    const node = this.node;
    node.replaceChildren();
    element('h2', 'ck-heading', w.title, node);
    if (reply.assignment_id) {
      element('p', 'ck-assignment', reply.assignment_id, node);
    }
    if (reply.error) {
      element('p', 'ck-status ck-error', reply.error, node);
    }
    const attempts = reply.attempts ?? [];
    if (attempts.length === 0) {
      if (!reply.error) {
        element('p', 'ck-status', w.none_yet, node);
      }
      return;
    }
    const last = attempts[attempts.length - 1];
    const section = element('section', 'ck-last', undefined, node);
    element('p', 'ck-time', last.timestamp, section);
    if (last.state === 'waiting') {
      element('p', 'ck-status ck-waiting', w.grading, section);
    } else if (last.state === 'unreadable' || !last.summary) {
      element('p', 'ck-status', w.unreadable, section);
    } else if (last.state === 'held_back') {
      this.heldBack(last.summary, section);
    } else {
      this.graded(last.summary, section);
    }
    if (last.page) {
      this.pageButton(last.page, section);
    }
    this.history(attempts, node);
  }

  private heldBack(summary: Summary, parent: HTMLElement): void {
    const w = this.words;
    element('p', 'ck-status ck-held', w.held_back, parent);
    const why =
      summary.held_back === 'too_many'
        ? w.too_many
        : fill(w.too_soon, { time: summary.next_graded_at ?? '' });
    element('p', 'ck-status', why, parent);
  }

  private graded(summary: Summary, parent: HTMLElement): void {
    const w = this.words;
    if (summary.total) {
      const total = element('p', 'ck-total', `${w.total} `, parent);
      element('b', '', points(summary.total.score, summary.total.max), total);
    }
    const list = element('div', 'ck-functions', undefined, parent);
    for (const row of summary.functions ?? []) {
      this.functionRow(row, list);
    }
    const answers = summary.answers ?? [];
    if (answers.length) {
      element('h3', 'ck-heading', w.answers, parent);
      for (const answer of answers) {
        const block = element('div', `ck-answer ck-${answer.state}`, undefined, parent);
        const line = element('div', 'ck-line', undefined, block);
        element('span', 'ck-name', answer.grade_id, line);
        const shown =
          answer.state === 'waiting' ? w.waiting : points(answer.score, answer.max);
        element('span', 'ck-points', shown, line);
        if (answer.state !== 'waiting') {
          element('div', 'ck-fact', w[answer.state] ?? answer.state, block);
        }
      }
    }
  }

  private functionRow(row: FunctionRow, list: HTMLElement): void {
    const w = this.words;
    const passed = row.message === null;
    const cell = element('div', passed ? 'ck-function ck-passed' : 'ck-function ck-failed');
    list.appendChild(cell);
    const line = element('div', 'ck-line', undefined, cell);
    element('span', 'ck-name', row.name, line);
    element('span', 'ck-points', points(row.score, row.max), line);
    if (passed) {
      element('div', 'ck-ok', w.passed, cell);
      return;
    }
    element('div', 'ck-message', row.message ?? '', cell);
    if (row.misconception) {
      const { key, title } = row.misconception;
      const line = `${w.mistake} [${key}]: ${title}`;
      if (line !== row.message) {
        element('div', 'ck-mistake', line, cell); // as the page: not the message twice
      }
    }
    const facts: [string, string | null][] = [
      [w.seed, row.seed === null ? null : String(row.seed)],
      [w.expected, row.expected],
      [w.received, row.received]
    ];
    for (const [label, value] of facts) {
      if (value) {
        element('div', 'ck-fact', `${label}: ${value}`, cell);
      }
    }
    drawPicture(row.picture, w, cell);
    hintLines(row, this.words, cell);
  }

  private pageButton(page: string, parent: HTMLElement): void {
    const button = element('button', 'jp-Button ck-open', this.words.open_page, parent);
    button.addEventListener('click', () => this.openPage(page));
  }

  private history(attempts: Attempt[], parent: HTMLElement): void {
    element('h3', 'ck-heading', this.words.attempts, parent);
    const list = element('ol', 'ck-attempts', undefined, parent);
    for (const attempt of [...attempts].reverse()) {
      const total = attempt.summary?.total;
      let result = this.words[attempt.state] ?? '';
      if (attempt.state === 'graded' && total) {
        result = points(total.score, total.max);
      } else if (attempt.state === 'waiting') {
        result = this.words.grading;
      } else if (attempt.state === 'held_back') {
        result = this.words.held_back;
      }
      const item = element('li', `ck-attempt ck-${attempt.state}`, undefined, list);
      element('span', 'ck-time', attempt.timestamp, item);
      element('span', 'ck-result', result, item);
    }
  }
}

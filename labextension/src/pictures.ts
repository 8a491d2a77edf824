// A failed function on the page's seeded example, as the feedback page draws it
// (coursekit/core/templates/feedback_picture.html.j2): expected and received tables per
// head as heatmaps, or the shape flow with the step where the learner's array left it.
// Drawn from numbers and labels with DOM calls and textContent only, never markup.
import { Picture, PicturePanel, Words } from './api';

const SHADES = 9;

function add(
  parent: HTMLElement,
  tag: string,
  className: string,
  text?: string
): HTMLElement {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  parent.appendChild(node);
  return node;
}

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key) => values[key] ?? whole);
}

function shape(numbers: number[]): string {
  return numbers.length === 1 ? `(${numbers[0]},)` : `(${numbers.join(', ')})`;
}

function formatted(value: number, isBool: boolean): string {
  if (isBool) {
    return value ? 'True' : 'False';
  }
  const text = value.toFixed(2);
  return text === '-0.00' ? '0.00' : text;
}

/** ck-b0..ck-b9 from 0 to `scale` (the page's blues), ck-r1..ck-r9 below zero. */
function shade(value: number, scale: number, isWeight: boolean): string {
  if (!(scale > 0)) {
    return 'ck-b0';
  }
  const level = Math.min(SHADES, Math.round((Math.abs(value) / scale) * SHADES));
  if (value < 0 && !isWeight) {
    return level ? `ck-r${level}` : 'ck-b0';
  }
  return `ck-b${level}`;
}

function table(
  panel: PicturePanel,
  values: number[][],
  label: string,
  scale: number,
  isWeight: boolean,
  parent: HTMLElement
): void {
  const node = add(parent, 'table', 'ck-heat');
  add(node, 'caption', '', `${panel.title} — ${label}`);
  const head = add(node, 'tr', '');
  add(head, 'th', '');
  for (const column of panel.columns) {
    add(head, 'th', '', column).setAttribute('scope', 'col');
  }
  panel.rows.forEach((row, i) => {
    const line = add(node, 'tr', '');
    add(line, 'th', '', row).setAttribute('scope', 'row');
    values[i].forEach((value, j) => {
      const off = panel.outside[i][j] ? ' ck-off' : '';
      add(line, 'td', shade(value, scale, isWeight) + off, formatted(value, panel.bool));
    });
  });
}

function panels(picture: Picture, words: Words, parent: HTMLElement): void {
  const box = add(parent, 'div', 'ck-panels');
  for (const panel of picture.panels ?? []) {
    const all = [...panel.expected.flat(), ...panel.got.flat()];
    const isWeight = panel.bool || all.every(v => v >= 0 && v <= 1);
    const scale = isWeight ? 1 : Math.max(...all.map(Math.abs));
    const pair = add(box, 'div', 'ck-pair');
    table(panel, panel.expected, words.picture_expected ?? '', scale, isWeight, pair);
    table(panel, panel.got, words.picture_received ?? '', scale, isWeight, pair);
  }
}

function flow(picture: Picture, words: Words, parent: HTMLElement): void {
  const box = add(parent, 'div', 'ck-flow');
  (picture.steps ?? []).forEach((step, i) => {
    if (i > 0) {
      add(box, 'span', 'ck-arrow', '→').setAttribute('aria-hidden', 'true');
    }
    const left = i === picture.left_at;
    const node = add(box, 'span', left ? 'ck-step ck-left' : 'ck-step');
    add(node, 'span', 'ck-label', step.label);
    add(node, 'span', 'ck-shape', shape(step.shape));
    if (left) {
      const got = shape(picture.got_shape ?? []);
      add(node, 'span', 'ck-got', fill(words.picture_left_here ?? '{shape}', { shape: got }));
    }
  });
}

/** The picture of one function row, appended to `parent` (nothing when there is none). */
export function drawPicture(
  picture: Picture | null | undefined,
  words: Words,
  parent: HTMLElement
): void {
  if (!picture) {
    return;
  }
  const box = add(parent, 'div', 'ck-picture');
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', words.picture_title ?? '');
  if (picture.kind === 'omitted') {
    const reason = fill(words.picture_none ?? '{reason}', { reason: picture.reason ?? '' });
    add(box, 'p', 'ck-alt ck-no-picture', reason);
    return;
  }
  add(box, 'p', 'ck-caption', picture.caption);
  if (picture.kind === 'flow') {
    flow(picture, words, box);
  } else if (picture.kind === 'tables') {
    panels(picture, words, box);
  }
}

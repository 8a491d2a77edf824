// Requests to coursekit.learner.panel_server, which runs in the learner's own server.
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

export type Words = Record<string, string>;

export interface FunctionRow {
  name: string;
  score: number;
  max: number;
  cell: string | null;
  message: string | null;
  misconception: { key: string; title: string } | null;
  seed: number | null;
  expected: string | null;
  received: string | null;
  hints?: string[]; // the hints given so far when the learner is stuck on it
  picture?: Picture | null;
}

// coursekit.checks.picture's record, as coursekit.learner.pictures checked it.
export interface PicturePanel {
  title: string;
  rows: string[];
  columns: string[];
  expected: number[][];
  got: number[][];
  outside: number[][];
  bool: boolean;
}

export interface Picture {
  kind: 'tables' | 'flow' | 'omitted';
  caption: string;
  caption_key: string;
  reason?: string;
  panels?: PicturePanel[];
  steps?: { label: string; shape: number[] }[];
  left_at?: number;
  got_shape?: number[];
}

export interface AnswerRow {
  grade_id: string;
  score: number | null;
  max: number;
  state: string;
}

export interface Summary {
  schema: number;
  total?: { score: number; max: number } | null;
  late_penalty?: number;
  functions?: FunctionRow[];
  answers?: AnswerRow[];
  held_back?: string;
  next_graded_at?: string;
}

export interface Attempt {
  timestamp: string;
  page: string | null;
  state: 'waiting' | 'graded' | 'held_back' | 'unreadable';
  summary: Summary | null;
}

export interface Reply {
  words: Words;
  poll_seconds: number;
  error?: string;
  course_id?: string;
  assignment_id?: string;
  attempts?: Attempt[];
}

/** The panel's words, or null when the course turned the panel off (404). */
export async function words(): Promise<Reply | null> {
  return request('words', {}, true);
}

/**
 * The notebook's attempts. With `answered`, the server holds the request up to `wait`
 * seconds until that many attempts are listed and the newest is answered (a long poll).
 */
export async function attempts(path: string, answered = 0, wait = 0): Promise<Reply> {
  const query = URLExt.objectToQueryString(
    answered > 0 ? { path, answered: String(answered), wait: String(wait) } : { path }
  );
  return (await request(`attempts${query}`, {}, false)) as Reply;
}

export async function submit(path: string): Promise<Reply> {
  const init = { method: 'POST', body: JSON.stringify({ path }) };
  return (await request('submit', init, false)) as Reply;
}

async function request(
  endpoint: string,
  init: RequestInit,
  missingIsNull: boolean
): Promise<Reply | null> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'coursekit', 'panel', endpoint);
  const response = await ServerConnection.makeRequest(url, init, settings);
  if (missingIsNull && response.status === 404) {
    return null;
  }
  if (!response.ok) {
    throw new ServerConnection.ResponseError(response);
  }
  return (await response.json()) as Reply;
}

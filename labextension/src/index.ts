// The course's submit button on notebooks and its 채점 결과 panel (issue: the learner sees
// each graded attempt where they work). Words come from the server, in the course's language.
import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification, ToolbarButton } from '@jupyterlab/apputils';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { INotebookModel, INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import * as api from './api';
import { fill, points, ResultPanel } from './panel';

const POLL_LIMIT_MS = 15 * 60 * 1000; // stop asking after this long without a result
// Each ask is held by the server until the result is released (it watches the exchange's
// feedback folder) or this many seconds pass; then the panel asks again at once.
const HOLD_SECONDS = 15;

class Session {
  private polling = 0; // generation of the running poll; a new submit replaces it

  constructor(
    private readonly app: JupyterFrontEnd,
    private readonly panel: ResultPanel,
    private readonly pollSeconds: number
  ) {}

  showPanel(): void {
    if (!this.panel.isAttached) {
      this.app.shell.add(this.panel, 'right', { rank: 600 });
    }
    this.app.shell.activateById(this.panel.id);
  }

  async refresh(path: string): Promise<void> {
    try {
      this.panel.showReply(await api.attempts(path));
    } catch (error) {
      this.panel.showStatus(String(error), true);
    }
  }

  async submit(context: DocumentRegistry.IContext<INotebookModel>): Promise<void> {
    this.showPanel();
    this.panel.showStatus(this.wordsOf('submitting'));
    let reply: api.Reply;
    try {
      await context.save();
      reply = await api.submit(context.path);
    } catch (error) {
      this.panel.showStatus(String(error), true);
      return;
    }
    this.panel.showReply(reply);
    const count = reply.attempts?.length ?? 0;
    if (!reply.error && count > 0) {
      void this.poll(context.path, count);
    }
  }

  words: api.Words = {};

  private wordsOf(key: string): string {
    return this.words[key] ?? key;
  }

  /** Ask until the newest attempt is answered, then show it (and say so if hidden). */
  private async poll(path: string, count: number): Promise<void> {
    const generation = ++this.polling;
    const deadline = Date.now() + POLL_LIMIT_MS;
    const pause = () => new Promise(resolve => setTimeout(resolve, this.pollSeconds * 1000));
    while (generation === this.polling && Date.now() < deadline) {
      const asked = Date.now();
      let reply: api.Reply;
      try {
        reply = await api.attempts(path, count, HOLD_SECONDS);
      } catch {
        await pause(); // the server restarts or is busy: ask again in a while
        continue;
      }
      if (generation !== this.polling) {
        return;
      }
      this.panel.showReply(reply);
      if (reply.error) {
        return; // said in the panel; another ask would say it again
      }
      const attempts = reply.attempts ?? [];
      const last = attempts[attempts.length - 1];
      if (attempts.length >= count && last && last.state !== 'waiting') {
        if (!this.panel.isVisible) {
          const total = last.summary?.total;
          const score = total ? points(total.score, total.max) : this.wordsOf(last.state);
          Notification.info(fill(this.wordsOf('arrived'), { score }), {
            autoClose: 8000,
            actions: [{ label: this.wordsOf('title'), callback: () => this.showPanel() }]
          });
        }
        return;
      }
      if (Date.now() - asked < 1000) {
        await pause(); // answered at once without the result: wait, do not spin
      }
    }
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: '@coursekit/learner-panel:plugin',
  description: 'Submit a notebook and read its graded attempts beside it.',
  autoStart: true,
  requires: [INotebookTracker, ILabShell],
  activate: async (app: JupyterFrontEnd, tracker: INotebookTracker, shell: ILabShell) => {
    let first: api.Reply | null;
    try {
      first = await api.words();
    } catch (error) {
      console.warn('coursekit: the result panel is not available', error);
      return;
    }
    if (first === null) {
      return; // the course turned the panel off
    }
    const panel = new ResultPanel();
    panel.setWords(first.words);
    panel.openPage = path =>
      void app.commands.execute('docmanager:open', { path, factory: 'HTML Viewer' });
    const session = new Session(app, panel, first.poll_seconds || 2);
    session.words = first.words;

    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: (
        notebook: NotebookPanel,
        context: DocumentRegistry.IContext<INotebookModel>
      ) => {
        const button = new ToolbarButton({
          className: 'ck-submit',
          label: first!.words.submit,
          tooltip: first!.words.submit,
          onClick: () => void session.submit(context)
        });
        notebook.toolbar.insertAfter('cellType', 'coursekit-submit', button);
        return button;
      }
    });
    // The panel shows the attempts of the notebook in front whenever it comes into view.
    const showCurrent = () => {
      const current = tracker.currentWidget;
      if (panel.isVisible && current) {
        void session.refresh(current.context.path);
      }
    };
    tracker.currentChanged.connect(showCurrent);
    shell.currentChanged.connect(showCurrent);
  }
};

export default plugin;

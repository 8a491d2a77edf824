"""What the hub browser test does on the pages: log in, click formgrader's buttons,
work in a learner's JupyterLab. Each step waits for what a person would wait for.

A learner's JupyterLab speaks Korean: its menus and dialogs are found by the labels
of the installed language pack (`Labels`), nbgrader's own labels stay English."""

from __future__ import annotations

import importlib
import json
import re
import time
from pathlib import Path

from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

# The HTML viewer of the tab in front (the other tabs' widgets carry lm-mod-hidden).
VISIBLE_VIEWER = ".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-HTMLViewer iframe"
LONG = 240_000  # ms: a step that starts a server, a kernel or grading on a loaded machine


class Shots:
    """Numbered screenshots, one per step, paths printed as they are taken."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.taken: list[Path] = []

    def __call__(self, page: Page, name: str, full_page: bool = False) -> Path:
        path = self.folder / f"{len(self.taken) + 1:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        self.taken.append(path)
        print(f"screenshot: {path}", flush=True)
        return path


class Labels:
    """JupyterLab's labels in one language, from the installed language pack's catalogue
    (English, the labels themselves, without a locale)."""

    def __init__(self, locale: str | None = None):
        self.locale, self.catalog = locale, {}
        if locale:
            pack = importlib.import_module(f"jupyterlab_language_pack_{locale}")
            folder = Path(pack.__file__).parent / "locale" / locale / "LC_MESSAGES"
            self.catalog = json.loads((folder / "jupyterlab.json").read_text(encoding="utf-8"))

    def __call__(self, text: str, context: str | None = None) -> str:
        key = f"{context}\x04{text}" if context else text
        return self.catalog.get(key, [text])[0]


_LABELS: dict[int, Labels] = {}  # id(page) -> the language its JupyterLab speaks
_CONSOLE: dict[int, list[str]] = {}  # id(page) -> the browser's console errors, for failures


def labels(page: Page) -> Labels:
    return _LABELS.get(id(page), Labels())


def menu_bar(page: Page) -> list[str]:
    return page.locator(".lm-MenuBar-itemLabel").all_inner_texts()


def new_page(browser, **options) -> Page:
    """A page in a browser context of its own (its own cookies), as a person in Korea opens."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, locale="ko-KR", **options
    )
    context.set_default_timeout(60_000)
    return context.new_page()


def submit_login(page: Page, user: str, password: str) -> None:
    """The hub's login form, filled and sent."""
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    page.click("#login_submit")


def log_in_to_service(browser, base: str, path: str, user: str, password: str) -> Page:
    """A browser context of its own opening a hub service's page (`path`, e.g. a bookmark
    of the TA board): the hub's login, then its OAuth back to the page; no server of the
    account's own is started."""
    page = new_page(browser, timezone_id="Asia/Seoul")
    page.goto(f"{base}{path}")
    page.wait_for_url(re.compile(r".*/hub/login.*"))
    submit_login(page, user, password)
    page.wait_for_url(re.compile(f"{re.escape(base + path)}(\\?.*)?$"), timeout=LONG)
    return page


def open_clean_lab(page: Page, base: str, user: str) -> None:
    """JupyterLab with a clean workspace (`lab?reset`): no document the account's last
    session left open. (Closing them instead races the workspace's restore: a notebook
    restored after the click stays open.)"""
    page.goto(f"{base}/user/{user}/lab?reset")
    # JupyterLab clears the workspace, then takes `?reset` out of the address.
    page.wait_for_url(re.compile(r".*/user/[^/]+/lab$"), timeout=LONG)
    page.locator("#jp-main-dock-panel").wait_for(timeout=LONG)


def log_in(
    browser, base: str, user: str, password: str, locale: str | None = None, clean: bool = False
) -> Page:
    """A browser context of its own (its own cookies), logged in, JupyterLab loaded.
    `locale`: the language this account's JupyterLab is set up to speak; `clean`: then
    `open_clean_lab`."""
    page = new_page(browser)
    _LABELS[id(page)] = Labels(locale)
    errors = _CONSOLE.setdefault(id(page), [])
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.goto(f"{base}/hub/login")
    submit_login(page, user, password)
    page.wait_for_url(re.compile(r".*/user/[^/]+/lab.*"), timeout=LONG)
    if clean:  # at once: the lab the login opened need not finish loading
        open_clean_lab(page, base, user)
    page.locator("#jp-main-dock-panel").wait_for(timeout=LONG)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=LONG)
    return page


# --- formgrader (the instructor) ---------------------------------------------------------


def formgrader_row(page: Page, assignment: str):
    return page.locator("#main-table tr", has_text=assignment)


def formgrader_button(page: Page, row, cell: str, timeout: int = LONG) -> str:
    """Click the button in one of formgrader's table cells; return the success dialog's text.

    formgrader answers every action with a dialog: "Success" with nbgrader's log, or an
    error dialog with its traceback (raised here)."""
    try:
        row.locator(f"td.{cell} a").first.click()
    except PlaywrightTimeout as error:
        console = "\n".join(_CONSOLE.get(id(page), [])[-10:])
        message = f"no {cell} button on {page.url}; console errors:\n{console}"
        raise AssertionError(message) from error
    dialog = page.locator("#success-modal, #error-modal").first
    dialog.wait_for(state="visible", timeout=timeout)
    text = dialog.inner_text()
    failed = dialog.get_attribute("id") == "error-modal"
    dialog.locator(".modal-footer button").click()
    dialog.wait_for(state="detached")
    assert not failed, f"formgrader {cell} failed:\n{text}"
    return text


# --- JupyterLab (a learner) --------------------------------------------------------------


def open_assignment_list(page: Page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").click()
    page.locator(".lm-Menu-itemLabel", has_text="Assignment List").click()
    page.locator("#released_assignments_list, .assignment-list").first.wait_for()


def menu(page: Page, top: str, command: str) -> None:
    """JupyterLab's menu `top` (in English, clicked in the page's language) → the item
    that runs `command` (its label may be composed of several translated phrases)."""
    page.locator(".lm-MenuBar-itemLabel", has_text=labels(page)(top, "menu")).click()
    page.locator(f".lm-Menu-content .lm-Menu-item[data-command='{command}']").first.click()


def wait_for_kernel_idle(page: Page, timeout: int = LONG) -> None:
    """Run All has finished when the status bar says Idle and no cell shows [*], twice
    in a row (between two cells the kernel is briefly idle)."""
    deadline = time.monotonic() + timeout / 1000
    quiet = 0
    while time.monotonic() < deadline:
        busy = page.locator(".jp-InputPrompt", has_text="[*]").count()
        idle = labels(page)("Idle") in page.locator("#jp-main-statusbar").inner_text()
        quiet = quiet + 1 if idle and not busy else 0
        if quiet >= 3:
            return
        time.sleep(0.5)
    raise AssertionError("the notebook's cells did not finish running")


def find_cell(page: Page, marker: str, kind: str = ".jp-Cell"):
    """The one cell showing `marker`, scrolling down as a person would: JupyterLab
    renders only the cells near the visible part of a long notebook."""
    cell = page.locator(f".jp-Notebook {kind}", has_text=marker)
    for _ in range(80):
        if cell.count() == 1:
            cell.scroll_into_view_if_needed()
            return cell
        page.locator(".jp-NotebookPanel .jp-Notebook").hover()
        page.mouse.wheel(0, 600)
        time.sleep(0.2)
    raise AssertionError(f"no cell shows {marker!r}")


def show_tab(page: Page, title: str) -> None:
    """Bring the main area's tab `title` (a notebook's file name) to the front."""
    page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text=title).first.click()
    page.locator(".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-Notebook").wait_for()


def replace_cell_text(page: Page, marker: str, text: str) -> None:
    """Select everything in the code cell whose editor shows `marker` and type `text`."""
    cell = find_cell(page, marker, ".jp-CodeCell")
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)  # as typed, without the editor's auto-indent
    page.keyboard.press("Escape")


def fetch_and_open(page: Page, assignment: str, notebook: str) -> None:
    """Assignments tab: Fetch, then open the notebook from the fetched list."""
    open_assignment_list(page)
    released = page.locator("#released_assignments_list .list_item", has_text=assignment)
    released.locator("button", has_text="Fetch").click()
    fetched = page.locator("#fetched_assignments_list .list_item", has_text=assignment).first
    fetched.wait_for(timeout=LONG)
    fetched.locator("a.assignment-notebooks-link").click()  # shows the notebooks
    fetched.locator(f"a:text-is('{notebook}')").click()
    page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for(timeout=LONG)


def write_markdown_answer(page: Page, placeholder: str, text: str) -> None:
    cell = find_cell(page, placeholder, ".jp-MarkdownCell")
    cell.dblclick()
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(text)
    page.keyboard.press("Control+Enter")  # render it in place


def restart_and_run_all(page: Page) -> None:
    menu(page, "Run", "runmenu:restart-and-run-all")  # Restart Kernel and Run All Cells…
    page.locator(".jp-Dialog button", has_text=labels(page)("Restart")).click()
    time.sleep(2)  # the restart has begun before the cells are queued
    wait_for_kernel_idle(page)


def validate(page: Page) -> str:
    """The notebook toolbar's Validate button; returns the dialog's text (dialog left open)."""
    page.locator(".jp-NotebookPanel .validate-button").click()
    dialog = page.locator(".jp-Dialog").first
    dialog.wait_for(timeout=LONG)
    return dialog.inner_text()


def close_dialog(page: Page) -> None:
    page.locator(".jp-Dialog .jp-Dialog-footer button").last.click()
    page.locator(".jp-Dialog").wait_for(state="detached")


def save(page: Page) -> None:
    menu(page, "File", "docmanager:save")  # Save Notebook
    page.locator(".jp-NotebookPanel-toolbar, .jp-Toolbar").first.wait_for()
    time.sleep(1)


def submissions(page: Page, assignment: str):
    """The Assignments tab's rows of the assignment's submissions (a timestamp each, and
    its "(view feedback)" once fetched), oldest first."""
    submitted = page.locator("#submitted_assignments_list .list_item", has_text=assignment)
    return submitted.first.locator(".nested_list_item")


def submit(page: Page, assignment: str) -> None:
    """Assignments tab: Submit, until the list shows one submission more."""
    open_assignment_list(page)
    before = submissions(page, assignment).count()
    fetched = page.locator("#fetched_assignments_list .list_item", has_text=assignment).first
    fetched.locator("button", has_text="Submit").click()
    submissions(page, assignment).nth(before).wait_for(timeout=LONG)


def autograde_in_formgrader(page: Page, fg: str, assignment: str, student: str) -> str:
    """Manage Submissions → the learner's autograde button; returns formgrader's log."""
    page.goto(f"{fg}/manage_submissions/{assignment}")
    row = page.locator("#main-table tr", has_text=student)
    return formgrader_button(page, row, "autograde")


def open_submission(page: Page, fg: str, assignment: str, notebook: str, shown: str) -> None:
    """Manual Grading → assignment → notebook → the learner's submission, by the name
    formgrader shows ("Last, First" for a learner the gradebook has names for)."""
    page.goto(f"{fg}/gradebook/{assignment}/{notebook}")
    link = page.locator("a.name-shown", has_text=re.compile(f"^{re.escape(shown)}$"))
    link.wait_for(state="attached")
    href = link.get_attribute("href")
    page.goto(href if href.startswith("http") else fg.split("/user/")[0] + href)
    page.wait_for_load_state("networkidle")  # formgrader's scripts have bound the inputs
    # Once MathJax has started, formgrader focuses its first score box and scrolls there
    # (a 500 ms animation): a scroll made before that is undone.
    page.wait_for_function(
        "() => window.MathJax && MathJax.loaded === true && !jQuery('html, body').is(':animated')",
        timeout=60_000,
    )


def give_manual_points(page: Page, cell_id: str, points: str) -> None:
    """Type the points; formgrader saves them (PUT to its grade API) when the box loses focus."""
    score = page.locator(f"input#{cell_id}")
    saved = lambda r: "/api/grade/" in r.url and r.request.method == "PUT"  # noqa: E731
    with page.expect_response(saved, timeout=60_000):
        score.fill(points)
        score.press("Tab")
    score.scroll_into_view_if_needed()


def fetch_feedback(page: Page, assignment: str) -> None:
    """Assignments tab: Fetch Feedback on the submitted assignment, until "(view feedback)"."""
    open_assignment_list(page)
    submitted = page.locator("#submitted_assignments_list .list_item", has_text=assignment).first
    submitted.locator("button", has_text="Fetch Feedback").click()
    page.locator("#submitted_assignments_list a", has_text="view feedback").first.wait_for(
        timeout=LONG
    )


def menu_items(page: Page, top: str, while_open=None) -> list[str]:
    """The items of JupyterLab's menu `top` (English, shown in the page's language)."""
    return _open_menu_items(page, labels(page)(top, "menu"), while_open)


def nbgrader_menu_items(page: Page, while_open=None) -> list[str]:
    """The items of the Nbgrader menu (`while_open` runs with the menu open, for a screenshot)."""
    return _open_menu_items(page, "Nbgrader", while_open)


def _open_menu_items(page: Page, label: str, while_open=None, tries: int = 3) -> list[str]:
    # A click on a menu bar label right after another menu closed can be taken by Lumino
    # as closing it (seen once in CI on a loaded machine): the click is tried again.
    items = page.locator(".lm-Menu-content .lm-Menu-itemLabel")
    for attempt in range(tries):
        page.locator(".lm-MenuBar-itemLabel", has_text=label).click()
        try:
            items.first.wait_for(timeout=20_000)
            break
        except PlaywrightTimeout:
            if attempt == tries - 1:
                raise
            page.keyboard.press("Escape")
    texts = items.all_inner_texts()
    if while_open:
        while_open()
    page.keyboard.press("Escape")
    return texts


def disabled_lab_extensions(page: Page) -> set[str]:
    """The extensions this JupyterLab was told not to load (its page config)."""
    disabled = json.loads(page.locator("#jupyter-config-data").text_content()).get(
        "disabledExtensions", []
    )
    if isinstance(disabled, dict):  # {name: true/false} in some versions
        return {name for name, off in disabled.items() if off}
    return set(disabled)


def open_feedback(page: Page, nth: int = 0, assignment: str | None = None):
    """Assignments tab's "(view feedback)" (of the `nth` submission, of `assignment`'s when
    given) takes the file browser to that submission's feedback folder, named by its
    timestamp; opening the page there shows it in JupyterLab's HTML viewer. Returns the
    viewer's frame."""
    open_assignment_list(page)  # an earlier page's viewer may have taken its place
    rows = (
        submissions(page, assignment)
        if assignment
        else page.locator("#submitted_assignments_list .nested_list_item")
    )
    link = page.locator("a", has_text="view feedback")
    row = rows.filter(has=link).nth(nth)
    stamp = row.locator(".item_name").inner_text().split("(view feedback)")[0].strip()
    row.locator("a", has_text="view feedback").click()
    # Until the new folder is listed the browser still shows the last one, with its page of
    # the same name selected (CI once opened the first submission's page for the second).
    page.locator(".jp-FileBrowser .jp-BreadCrumbs", has_text=stamp).wait_for(timeout=LONG)
    selected = page.locator(".jp-DirListing-item.jp-mod-selected", has_text=".html")
    selected.wait_for(timeout=LONG)
    selected.dblclick()
    # The tab in front is the page of this folder: its tooltip names the file's path.
    page.locator(f"#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current[title*='{stamp}']").wait_for(
        timeout=LONG
    )
    frame = page.frame_locator(VISIBLE_VIEWER).first
    # The viewer's frame holds an empty document until the page's text is put in (CI once
    # read '' there): wait for text, not only for a body.
    expect(frame.locator("body")).to_contain_text(re.compile(r"\S"), timeout=LONG)
    return frame

"""The lean cell runner (`SandboxedExecute.cell_runner = "lean"`), in both launch ways.

Each notebook here runs through SandboxedExecute in a sandbox (a warm fork
as root, or one bwrap per kernel): the outputs a cell gets, and what the
guards make of a runner that dies, floods, loops past its interrupt or
sends what is not a frame.
"""

from __future__ import annotations

import re
import struct
from collections import Counter

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from coursekit.autograde.execute import SandboxedExecute
from coursekit.core import cells, incidents
from coursekit.sandbox import runner_client, warm
from coursekit.sandbox.runner_client import Dropped, RunnerBrokenError, RunnerClient
from tests.support.authored_notebooks import nbgrader_cell, python_notebook

pytestmark = [pytest.mark.sandbox]


@pytest.fixture(scope="module", params=["bwrap", "warm"])
def launch(request):
    if request.param == "warm" and not warm.supported():
        pytest.skip("warm kernels need root and user namespaces (warm.supported)")
    return request.param


def run(sources: list[str], launch: str, tmp_path, runner: str = "lean", **traits):
    notebook = new_notebook(cells=[new_code_cell(source) for source in sources])
    notebook.metadata.kernelspec = {"name": "python3", "display_name": "Python 3"}
    traits.setdefault("timeout", 10)
    execute = SandboxedExecute(cell_runner=runner, warm_kernels=launch == "warm", **traits)
    execute.preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    nbformat.validate(notebook)
    return notebook.cells


def enames(cell) -> list[str]:
    return [out["ename"] for out in cell.outputs if out["output_type"] == "error"]


def recorded(cell) -> list[str]:
    return [record["ename"] for record in cell.metadata.get(incidents.INCIDENTS_KEY, [])]


def test_outputs_are_jupyters(launch, tmp_path):
    cells = run(
        [
            "import sys\nprint('하나')\nprint('err', file=sys.stderr)\nprint('둘')",
            "1 + 1",
            "from IPython.display import HTML, display\n"
            "display(HTML('<b>x</b>'))\nHTML('<i>y</i>')",
            "h = display('처음', display_id=True)\nh.update('나중')",
            "raise ValueError('틀림')",
            "get_ipython().run_line_magic('time', 'x = 3')\nx",
            "input('?')",
        ],
        launch,
        tmp_path,
    )
    assert [c.execution_count for c in cells] == [1, 2, 3, 4, 5, 6, 7]
    assert [(o.name, o.text) for o in cells[0].outputs] == [
        ("stdout", "하나\n둘\n"),
        ("stderr", "err\n"),
    ]
    result = cells[1].outputs[0]
    assert result.output_type == "execute_result" and result.execution_count == 2
    assert result.data == {"text/plain": "2"}
    shown, returned = cells[2].outputs
    assert shown.output_type == "display_data" and shown.data["text/html"] == "<b>x</b>"
    assert returned.output_type == "execute_result" and returned.data["text/html"] == "<i>y</i>"
    assert cells[3].outputs[0].data["text/plain"] == "'나중'"  # the display id's update
    error = cells[4].outputs[0]
    assert (error.ename, error.evalue) == ("ValueError", "틀림")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.traceback))
    assert "In[5], line 1" in plain and "raise ValueError('틀림')" in plain
    assert "Wall time" in cells[5].outputs[0].text
    assert cells[5].outputs[-1].data["text/plain"] == "3"
    assert enames(cells[6]) == ["StdinNotImplementedError"]


def test_the_same_outputs_as_ipykernel(launch, tmp_path):
    sources = [
        "import sys\nprint('a')\nprint('b', file=sys.stderr)",
        "{'k': [1, 2]}",
        "from IPython.display import Markdown\nMarkdown('**굵게**')",
        "1 / 0",
        "import numpy as np\nnp.arange(3)",
        "import warnings\nwarnings.warn('조심')",  # names the cell's code as ipykernel does
        "import os\nos.write(1, '기술자 1\\n'.encode())",  # descriptors 1 and 2 are captured
        "import subprocess\nsubprocess.run(['echo', '하위'])",
    ]

    def fields(cell):
        # Tracebacks differ by design: the lean runner's are IPython's "Plain" ones.
        keep = ("output_type", "name", "text", "data", "ename", "evalue", "execution_count")
        return cell.execution_count, [{k: o[k] for k in keep if k in o} for o in cell.outputs]

    lean = run(sources, launch, tmp_path / "lean")
    ipykernel = run(sources, launch, tmp_path / "ipykernel", runner="ipykernel")
    assert [fields(c) for c in lean[:-2]] == [fields(c) for c in ipykernel[:-2]]
    # What descriptors 1 and 2 get (the last two cells) the lean runner drains at the
    # cell's end: all of it, in its own cell, before the result.
    assert [fields(c) for c in lean[-2:]] == [
        (7, [stdout("기술자 1\n"), result(7, "12")]),
        (8, [stdout("하위\n"), result(8, "CompletedProcess(args=['echo', '하위'], returncode=0)")]),
    ]
    # ipykernel hands it to the cell from a thread that nothing waits for: before the
    # result, after it, in a later cell, or, if the thread comes after the cell's idle
    # status, nowhere. It guarantees the rest: the same, and no other text.
    assert [without_streams(c) for c in lean[-2:]] == [without_streams(c) for c in ipykernel[-2:]]
    theirs = "".join(o.text for c in ipykernel[-2:] for o in c.outputs if o.output_type == "stream")
    assert not Counter(theirs.splitlines(keepends=True)) - Counter(["기술자 1\n", "하위\n"])


def stdout(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text}


def result(count: int, plain: str) -> dict:
    data = {"text/plain": plain}
    return {"output_type": "execute_result", "execution_count": count, "data": data}


def without_streams(cell) -> tuple:
    outputs = [{k: o[k] for k in ("output_type", "data") if k in o} for o in cell.outputs]
    return cell.execution_count, [o for o in outputs if o["output_type"] != "stream"]


def test_threads_printing_at_once_lose_nothing_and_figures_are_images(launch, tmp_path):
    printing, figure = run(
        [
            "import threading\n"
            "def say():\n    for _ in range(2000):\n        print('t' * 99)\n"
            "ts = [threading.Thread(target=say) for _ in range(4)]\n"
            "[t.start() for t in ts]\n[t.join() for t in ts]\nprint('끝')",
            "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3]);",
        ],
        launch,
        tmp_path,
    )
    text = "".join(o.text for o in printing.outputs)
    # print writes a line and its end apart: threads interleave those, but nothing is lost
    assert text.count("t") == 8000 * 99 and text.count("\n") == 8001 and text.endswith("끝\n")
    assert [sorted(o.data) for o in figure.outputs] == [["image/png", "text/plain"]]


def test_an_interrupted_cell_and_a_loop_ignoring_it(launch, tmp_path):
    cells = run(
        [
            "x = 1",
            "import time\nwhile True:\n    time.sleep(0.01)",
            "x += 1\nx",
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
            "x",
        ],
        launch,
        tmp_path,
        timeout=2,
    )
    assert enames(cells[1])[0] == "KeyboardInterrupt"  # then nbgrader's CellTimeoutError
    assert cells[2].outputs[0].data["text/plain"] == "2"  # the runner went on
    assert incidents.KERNEL_STUCK in recorded(cells[3])
    assert recorded(cells[4]) == [incidents.NOT_RUN] and not enames(cells[4])[1:]


@pytest.mark.parametrize("runner", ["lean", "ipykernel"])
def test_a_test_cell_stopped_at_its_time_limit_is_not_run_again_by_the_grader(
    launch, runner, tmp_path, monkeypatch
):
    """Its points are 0 whatever the grader's own run says; that run would wait the limit out
    a second time. The time-out is its recorded reason; the next test cell is judged."""
    judged, judge = [], SandboxedExecute._judge

    def counted_judge(self, cell, hidden):
        judged.append(cell)
        return judge(self, cell, hidden)

    monkeypatch.setattr(SandboxedExecute, "_judge", counted_judge)
    notebook = python_notebook(
        [
            new_code_cell("import time\ndef answer():\n    while True:\n        time.sleep(0.01)"),
            nbgrader_cell("test", "answer()", "loops", points=1),
            nbgrader_cell("test", "assert 1 + 1 == 2", "after", points=1),
        ]
    )
    execute = SandboxedExecute(cell_runner=runner, warm_kernels=launch == "warm", timeout=2)
    execute.preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    _, loops, after = notebook.cells
    assert recorded(loops) == [incidents.CALL_TIME_LIMIT]
    (record,) = loops.metadata[incidents.INCIDENTS_KEY]
    assert "시간 제한(2초)" in record["reason"] and "멈췄습니다" in record["reason"], record
    assert not cells.passed(loops)
    assert judged == [after] and cells.passed(after) and not recorded(after)


def test_a_runner_that_exits_and_a_flood(launch, tmp_path):
    cells = run(
        [
            "for _ in range(20_000):\n    print('넘치는 출력 ' * 30)",
            "print('다음 칸')",
            "import os\nos._exit(3)",
            "print('못 감')",
        ],
        launch,
        tmp_path,
        output_limit_kb=64,
    )
    assert recorded(cells[0]) == [incidents.OUTPUT_LIMIT]
    assert sum(len(o.get("text", "")) for o in cells[0].outputs) <= 64 * 1024
    assert cells[1].outputs[0].text == "다음 칸\n" and not recorded(cells[1])
    assert incidents.KERNEL_DIED in recorded(cells[2])
    assert recorded(cells[3]) == [incidents.NOT_RUN]


def test_a_runner_writing_garbage_on_its_socket_breaks_only_the_bridge(launch, tmp_path):
    cells = run(
        [
            "print('앞')",
            "import os\nfor fd in range(3, 64):\n"
            "    try:\n        os.write(fd, b'\\x00\\x00\\x00\\x05{{{{{')\n"
            "    except OSError:\n        pass",
            "print('뒤')",
        ],
        launch,
        tmp_path,
    )
    assert cells[0].outputs[0].text == "앞\n"
    assert incidents.BRIDGE_BROKEN in recorded(cells[1])
    assert recorded(cells[2]) == [incidents.NOT_RUN]


class _Socket:
    """Stands for the runner's socket: hands out the bytes it was given."""

    def __init__(self, data: bytes):
        self.data = data

    def settimeout(self, _):
        pass

    def recv(self, size):
        chunk, self.data = self.data[:size], self.data[size:]
        return chunk


def _frames(data: bytes) -> list:
    client = RunnerClient(_Socket(data), -1)
    client._take(data)
    found = []
    while (frame := client._parse()) is not None:
        found.append(frame)
    return found


def frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


def test_frames_are_parsed_only_within_their_bounds():
    ok = frame(b'{"op": "stream", "name": "stdout", "text": "x", "blobs": []}')
    long = struct.pack(">I", runner_client.MAX_FRAME_BYTES + 1) + b"x" * 100
    (parsed,) = _frames(ok)
    assert parsed["text"] == "x"
    dropped = _frames(long)
    assert len(dropped) == 1 and isinstance(dropped[0], Dropped)
    for bad in (b"[1, 2]", b'{"op": 3, "blobs": []}', b'{"op": "x", "blobs": [5]}', b"{{"):
        with pytest.raises(RunnerBrokenError):
            _frames(frame(bad))
    with pytest.raises(RunnerBrokenError):
        runner_client.as_message({"op": "stream", "name": "stdin", "text": "x"}, "id")
    with pytest.raises(RunnerBrokenError):
        runner_client.as_message({"op": "error", "ename": 1, "evalue": "", "traceback": []}, "id")
    message = runner_client.as_message(
        {"op": "display", "data": {"text/plain": 5, "text/html": "<b>", "application/json": {}}},
        "id",
    )
    assert message["content"]["data"] == {"text/html": "<b>", "application/json": {}}

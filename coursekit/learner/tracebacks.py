"""nbgrader preprocessors that this course adds through nbgrader_config.py."""

from nbgrader.preprocessors import NbGraderPreprocessor

from coursekit.core import cells

# ANSI red, as IPython colours an exception name.
_RED, _RESET = "\x1b[0;31m", "\x1b[0m"


class SanitizeHiddenTracebacks(NbGraderPreprocessor):
    """Reduce each failing test cell's traceback to its message, for feedback.

    A traceback shows the source lines of every frame it passes through: the
    hidden test lines of the cell and the grader's own modules. The message
    (ename: evalue) is all a learner needs, and the checks write it in the course's
    language with the expected and received values.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        if cells.is_test(cell):
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    output.traceback = [f"{_RED}{output.ename}{_RESET}: {output.evalue}"]
        return cell, resources

"""Where a statement written over several lines starts (analyzer/statements.py); the rules' one finding for it is in
tests/patterns/test_pattern_rules.py."""

from __future__ import annotations

from reuselens.analyzer.statements import MAX_LINES, statement_line

SOURCE = """\
__global__ void first_layer(const float* in, const float* w, float* out) {
    float product = 0;
    for (int j = 0; j < 11; j++)
    {
        product +=        ((in[j * 3]     * w[j])
                + (in[j * 3 + 1] * w[j + 121])   // green
                + (in[j * 3 + 2] * w[j + 242]));
    }
    for (int k = 0; k < 4; k++)
        product += in[k];
    if (product < 0) /* ReLU */
        product = 0;
    out[0] = call(in[0],
                  in[1]);
#pragma unroll
    out[1] = in[2];
    switch (k) {
    case 1:
        out[2] = in[3];
    }
    // a comment
    out[3] = in[4];
    else
        out[4] = in[5];
}
"""


def _reader(text: str):
    lines = text.splitlines()
    return lambda path, n: lines[n - 1] if path == "k.cu" and 0 < n <= len(lines) else None


def test_a_statement_over_three_lines_starts_at_its_first():
    get = _reader(SOURCE)
    assert [statement_line(get, "k.cu", n) for n in (5, 6, 7)] == [5, 5, 5]
    assert statement_line(get, "k.cu", 14) == 13  # a call's arguments over two lines


def test_control_headers_comments_directives_and_labels_end_a_statement():
    get = _reader(SOURCE)
    assert statement_line(get, "k.cu", 10) == 10  # the body of a brace-less for
    assert statement_line(get, "k.cu", 12) == 12  # after `if (...) /* comment */`
    assert statement_line(get, "k.cu", 16) == 16  # after #pragma
    assert statement_line(get, "k.cu", 19) == 19  # after `case 1:`
    assert statement_line(get, "k.cu", 22) == 22  # after a comment line
    assert statement_line(get, "k.cu", 24) == 24  # after `else`
    assert statement_line(get, "k.cu", 2) == 2  # after the `{` of the signature


def test_an_unreadable_line_or_a_long_run_goes_no_further():
    assert statement_line(_reader(SOURCE), "other.cu", 5) is None
    long = "x = a\n" + "".join(f"  + b{i}\n" for i in range(2 * MAX_LINES)) + "  ;\n"
    start = statement_line(_reader(long), "k.cu", 2 * MAX_LINES + 1)
    assert start == 2 * MAX_LINES + 1 - MAX_LINES


def test_the_pipeline_marks_only_continued_lines(tmp_path):
    from reuselens.analyzer.pipeline import _mark_statement, _SourceLines

    path = tmp_path / "k.cu"
    path.write_text(SOURCE)
    lines = _SourceLines()
    sources = [{"file": str(path), "line": n} for n in (5, 6, 7, 10)]
    sources.append({"file": str(tmp_path / "missing.cu"), "line": 6})
    for source in sources:
        _mark_statement(source, lines)
    assert [s.get("statement_line") for s in sources] == [None, 5, 5, None, None]
    _mark_statement(None, lines)  # a PC without line info


def test_a_brace_line_begins_a_statement_and_a_string_hides_no_comment():
    text = 'void host(const char* name,\n          int n)\n{\n    if (strcmp(name, "///") == 0) {\n        n = a[0];\n'
    get = _reader(text)
    assert statement_line(get, "k.cu", 2) == 1  # a signature over two lines (no loads there, but one statement)
    assert statement_line(get, "k.cu", 3) == 3  # the body's brace
    assert statement_line(get, "k.cu", 5) == 5  # after an `if (...) {` whose string holds a "//"

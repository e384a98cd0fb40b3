"""Tool calls written as text (workbench/engine/calls_in_text.py): pure parsing, no I/O."""

from __future__ import annotations

import json

import pytest

from workbench.engine.calls_in_text import MAX_CALLS, UNREADABLE, TextCall, find_calls, result_notes
from workbench.engine.stray_quotes import escape_stray_quotes

TOOLS = ["read_file", "write_file", "edit_file", "bash", "ls"]


def args(call: TextCall) -> dict[str, object]:
    return json.loads(call.arguments)


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"name": "read_file", "arguments": {"path": "auth.go"}}\n```',
        '```\n{"name": "read_file", "arguments": {"path": "auth.go"}}\n```',
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "auth.go"}}\n</tool_call>',
        '<tool_call>{"name": "read_file", "arguments": {"path": "auth.go"}}',  # unclosed tag at the end
        '{"name": "read_file", "arguments": {"path": "auth.go"}}',
        '{"name": "read_file", "parameters": {"path": "auth.go"}}',
        '{"name": "read_file", "arguments": "{\\"path\\": \\"auth.go\\"}"}',  # arguments as a JSON string
        '{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": \\"auth.go\\"}"}}',
        '{"function": "read_file", "arguments": {"path": "auth.go"}}',
        '```\n<tool_call>\n{"name": "read_file", "arguments": {"path": "auth.go"}}\n</tool_call>\n```',
        '<tool_call>\n```json\n{"name": "read_file", "arguments": {"path": "auth.go"}}\n```\n</tool_call>',
    ],
)
def test_each_form_is_one_call_and_no_text_is_left(text: str) -> None:
    found, prose = find_calls(text, TOOLS)
    assert found == [TextCall("read_file", '{"path": "auth.go"}')]
    assert prose == ""


def test_prose_around_a_block_stays_as_the_reply_text() -> None:
    block = '```json\n{"name": "read_file", "arguments": {"path": "a.go"}}\n```'
    text = f"I will read the file first.\n\n{block}\n\nThen fix it."
    found, prose = find_calls(text, TOOLS)
    assert [c.name for c in found] == ["read_file"]
    assert prose == "I will read the file first.\n\nThen fix it."


def test_several_calls_in_order_across_forms_and_a_list() -> None:
    text = (
        'First:\n{"name": "ls", "arguments": {"path": "."}}\n'
        '<tool_call>{"name": "bash", "arguments": {"command": "go test"}}</tool_call>\n'
        '```json\n[{"name": "read_file", "arguments": {"path": "a"}},\n'
        ' {"name": "read_file", "arguments": {"path": "b"}}]\n```'
    )
    found, prose = find_calls(text, TOOLS)
    assert [(c.name, args(c)) for c in found] == [
        ("ls", {"path": "."}),
        ("bash", {"command": "go test"}),
        ("read_file", {"path": "a"}),
        ("read_file", {"path": "b"}),
    ]
    assert prose == "First:"


def test_raw_newlines_inside_strings_are_read() -> None:
    text = '{"name": "write_file", "arguments": {"path": "a.py", "content": "x = 1\nprint(x)\n"}}'
    (found,), _ = find_calls(text, TOOLS)
    assert args(found) == {"path": "a.py", "content": "x = 1\nprint(x)\n"}


@pytest.mark.parametrize(
    "text",
    [
        "The answer is 42.",
        '```json\n{"name": "my-package", "version": "1.0.0", "scripts": {}}\n```',  # a package.json
        '```js\nconst user = {"name": name};\n```',
        'Use the {"name": value} form in the config.',
        '```python\nprint({"name": "ls", "arguments": {}})\n```',
        '{"name": "Alice", "age": 3}',
        "",
    ],
)
def test_text_without_a_call_is_an_answer(text: str) -> None:
    assert find_calls(text, TOOLS) == ([], text)


def test_a_call_to_a_tool_not_offered_is_an_error_naming_the_tools() -> None:
    (found,), prose = find_calls('```json\n{"name": "delete_all", "arguments": {}}\n```', TOOLS)
    assert found.name == UNREADABLE and found.arguments == "{}"
    assert "'delete_all'" in found.error and "not one of the offered tools" in found.error
    assert "read_file, write_file" in found.error and '{"name": "<tool>", "arguments": {...}}' in found.error
    (found,), _ = find_calls('```json\n{"name": "pytset", "arguments": {"q": ""}}\n```', TOOLS)
    assert "To run the program pytset, call bash with its whole command line (pytset and its arguments)." in (
        found.error
    )
    assert prose == ""


def test_a_block_that_does_not_parse_is_an_error_quoting_it() -> None:
    text = 'Reading:\n```json\n{"name": "read_file", "arguments": {"path": "a"}\n```'
    (found,), prose = find_calls(text, TOOLS)
    assert found.name == "read_file" and found.arguments == "{}"  # the name it gave, arguments that parse
    assert "not valid JSON" in found.error and "line 1 column" in found.error and '"path"' in found.error
    assert prose == "Reading:"


def test_a_tag_without_a_call_object_is_an_error() -> None:
    (found,), _ = find_calls("<tool_call>read the file</tool_call>", TOOLS)
    assert found.name == UNREADABLE and '"name" and "arguments"' in found.error


def test_bare_text_that_starts_like_a_call_but_breaks_is_an_error() -> None:
    text = 'Let me look.\n{"name": "read_file", "arguments": {"path": "a"\n\nThanks.'
    (found,), prose = find_calls(text, TOOLS)
    assert found.name == "read_file" and "not valid JSON" in found.error
    assert prose == "Let me look.\n\nThanks."


def test_arguments_that_are_not_an_object_are_an_error() -> None:
    (found,), _ = find_calls('{"name": "bash", "arguments": ["ls"]}', TOOLS)
    assert found.name == "bash" and "not a JSON object" in found.error
    (found,), _ = find_calls('{"name": "bash", "arguments": "ls -la"}', TOOLS)
    assert found.name == "bash" and "not valid JSON" in found.error


def test_a_long_block_is_quoted_shortened() -> None:
    text = '<tool_call>{"name": "write_file", "arguments": {"content": "' + "x" * 50_000 + "</tool_call>"
    (found,), _ = find_calls(text, TOOLS)
    assert len(found.error) < 1000 and "characters)" in found.error


def test_calls_in_one_reply_are_capped() -> None:
    text = "\n".join('{"name": "ls", "arguments": {}}' for _ in range(MAX_CALLS + 5))
    found, _ = find_calls(text, TOOLS)
    assert len(found) == MAX_CALLS


def test_deep_nesting_is_not_a_crash() -> None:
    text = '{"name": "ls", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (found,), _ = find_calls(text, TOOLS)
    assert found.error


# --- read leniently (a model litellm does not know; issue 28 item 3) -------------------------

SCHEMAS = {
    "read_file": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
    "grep": {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"}},
        "required": ["pattern"],
    },
    "bash": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
}
LENIENT_TOOLS = [*TOOLS, "grep"]
COMMENTED = (  # the issue's block: the model's corrected call, with a comment inside
    '```json\n{\n  "name": "grep",\n  "arguments": {\n    "pattern": "def login\\\\(",  // Corrected pattern\n'
    '    "glob": "*.py"\n  }\n}\n```'
)


def lenient(text: str) -> tuple[list[TextCall], str]:
    return find_calls(text, LENIENT_TOOLS, schemas=SCHEMAS, lenient=True)


@pytest.mark.parametrize(
    "text",
    [
        COMMENTED,
        "```json\n{'name': 'grep', 'arguments': {'pattern': 'def login\\\\(', 'glob': '*.py',},}\n```",
        '{"name": "grep", "arguments": {"pattern": "def login\\\\(", /* escaped */ "glob": "*.py",}}',
        "<tool_call>{name: 'grep', arguments: {pattern: 'def login\\\\(', glob: '*.py'}}</tool_call>",
        "{\"name\": \"grep\", \"arguments\": \"{'pattern': 'def login\\\\\\\\(', 'glob': '*.py'}\"}",
    ],
)
def test_comments_trailing_commas_and_single_quotes_are_read_as_a_repaired_call(text: str) -> None:
    (found,), prose = lenient(text)
    assert found == TextCall("grep", '{"pattern": "def login\\\\(", "glob": "*.py"}', repaired=True)
    assert prose == ""


def test_strict_json_is_not_marked_repaired() -> None:
    (found,), _ = lenient('```json\n{"name": "ls", "arguments": {"path": "."}}\n```')
    assert found == TextCall("ls", '{"path": "."}')


def test_without_lenient_a_comment_is_an_error_showing_the_spot_and_the_call_written_right() -> None:
    (found,), _ = find_calls(COMMENTED, LENIENT_TOOLS, schemas=SCHEMAS)
    assert found.name == "grep" and found.arguments == "{}" and not found.repaired
    assert "It stops being readable at line 4, column 33:\n" in found.error
    assert '    "pattern": "def login\\\\(",  // Corrected pattern\n' + " " * 32 + "^\n" in found.error
    assert found.error.endswith(
        "Write the call as strict JSON: double quotes, no comments, no trailing commas, for example "
        '{"name": "grep", "arguments": {"pattern": "...", "glob": "..."}} (optional arguments: path, glob).'
    )


def test_a_block_json5_cannot_read_either_gets_json5s_spot() -> None:
    (found,), _ = lenient('```json\n{"name": "read_file", "arguments": {"path": src/auth.py}}\n```')
    assert found.name == "read_file" and not found.repaired
    assert "It stops being readable at line 1, column 45:" in found.error
    assert '{"name": "read_file", "arguments": {"path": "..."}}' in found.error


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ('<read_file path="src/auth.py" limit="1000" />', {"path": "src/auth.py", "limit": 1000}),
        ("<read_file path='a.py'></read_file>", {"path": "a.py"}),
        (
            "<read_file>\n<path>src/auth.py</path>\n<offset>3</offset>\n</read_file>",
            {"path": "src/auth.py", "offset": 3},
        ),
        ('<tool name="read_file"><parameter name="path">a.py</parameter></tool>', {"path": "a.py"}),
        ('<invoke name="read_file">{"path": "a.py", "limit": 5,}</invoke>', {"path": "a.py", "limit": 5}),
        (
            "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/auth.py\n</parameter>\n</function>\n</tool_call>",
            {"path": "src/auth.py"},
        ),
        ('<bash command="grep -n &quot;x&quot; a &amp;&amp; ls"/>', {"command": 'grep -n "x" a && ls'}),
        # a JSON object in an arguments attribute is the call's arguments (issue 38: a 1.5B model's edits)
        ("""<function name="read_file" arguments='{"path": "a.py", "limit": 5}'/>""", {"path": "a.py", "limit": 5}),
        ('<function name="read_file" arguments="{"path": "a.py", "limit": 5}"/>', {"path": "a.py", "limit": 5}),
        ('<tool name="read_file" arguments="{&quot;path&quot;: &quot;a.py&quot;}"></tool>', {"path": "a.py"}),
        ("""<invoke arguments='{"path": "it's.py"}' name="read_file"/>""", {"path": "it's.py"}),
    ],
)
def test_xml_style_calls_are_read_with_typed_arguments(text: str, arguments: dict[str, object]) -> None:
    (found,), prose = lenient(f"Reading it.\n<tools>\n{text}\n</tools>")
    name = "bash" if "bash" in text else "read_file"
    assert (found.name, args(found), found.repaired) == (name, arguments, True)
    assert prose == "Reading it."  # the wrapper left empty goes too


def test_the_issues_reply_is_a_call_that_wrote_its_own_result() -> None:
    text = (
        '<tools>\n<read_file path="src/auth.py" limit="1000" />\n</tools>\n'
        "<result>\ndef login(self, username, password):\n    return True\n</result>"
    )
    (found,), _ = lenient(text)
    assert (found.name, args(found), found.wrote_result) == ("read_file", {"path": "src/auth.py", "limit": 1000}, True)


def test_an_edit_in_an_arguments_attribute_keeps_its_text_and_a_broken_one_is_unreadable() -> None:
    text = (
        '<function name="edit_file" arguments=\'{"path": "shapes.py", "old_text": "def area_of(r):", '
        '"new_text": "def circle_area(r):"}\'/>\n<function name="grep" arguments=\'{"pattern": "area_of"}\'/>'
    )
    edit, grep = lenient(text)[0]
    assert (edit.name, args(edit)) == (
        "edit_file",
        {"path": "shapes.py", "old_text": "def area_of(r):", "new_text": "def circle_area(r):"},
    )
    assert (grep.name, args(grep)) == ("grep", {"pattern": "area_of"})
    (broken,), _ = lenient("""<function name="read_file" arguments='{"path": a.py'/>""")
    assert broken.name == "read_file" and "its arguments cannot be read" in broken.error


def test_leniently_a_call_with_its_arguments_beside_its_name_is_read() -> None:
    """Issue 38: a 1.5B model wrote {"type": "bash", "command": ...} in <tools> tags, unread, and
    the run ended with it as the answer. Leniently the other keys are the arguments of an offered tool."""
    text = '<tools>\n{\n  "type": "bash",\n  "command": "sed -i \'s/a/b/\' x.py {} \\;"\n}\n</tools>'
    (found,), _ = lenient(text)
    assert (found.name, args(found), found.repaired) == ("bash", {"command": "sed -i 's/a/b/' x.py {} \\;"}, True)
    (found,), _ = lenient('{"name": "read_file", "path": "a.py", "limit": 3}')
    assert (found.name, args(found)) == ("read_file", {"path": "a.py", "limit": 3})
    for prose in ['{"type": "module", "main": "index.js"}', '{"name": "my-package", "version": "1.0"}']:
        assert lenient(prose) == ([], prose)  # a type or name that is no offered tool: not a call
    flat = '{"name": "read_file", "path": "a.py"}'
    assert find_calls(flat, LENIENT_TOOLS) == ([], flat)  # strictly, as before


def test_xml_calls_are_read_only_leniently_and_code_is_not_a_call() -> None:
    text = '<read_file path="a.py"/>'
    assert find_calls(text, LENIENT_TOOLS) == ([], text)  # a model litellm knows: its text stays text
    for prose in ['<div class="x">hi</div>', '<function name="parse">body</function>', "a <b>bold</b> word"]:
        assert lenient(prose) == ([], prose)


def test_a_tag_naming_a_tool_that_no_form_reads_is_an_error_not_an_answer() -> None:
    (found,), _ = lenient("Reading it.\n<read_file path=src/auth.py>")
    assert found.name == "read_file" and "not written in a form that can be read" in found.error
    assert '{"name": "read_file", "arguments": {"path": "..."}}' in found.error
    (found,), _ = lenient('<tool name="cat"><parameter name="path">a</parameter></tool>')
    assert found.name == UNREADABLE and "'cat'" in found.error and "not one of the offered tools" in found.error


def test_a_program_written_as_a_tool_is_read_leniently_as_its_bash_call() -> None:
    block = '<tools>\n{"type": "function", "function": {"name": "mkdir", "arguments": {"path": "build"}}}\n</tools>'
    (found,), _ = lenient(block)
    assert (found.name, args(found), found.program, found.repaired) == (
        "bash",
        {"command": "mkdir build"},
        "mkdir",
        True,
    )
    (copy,), _ = lenient('{"name": "cp", "arguments": {"source": "app.ini", "destination": "build/my app.ini"}}')
    assert args(copy) == {"command": "cp app.ini 'build/my app.ini'"}
    assert result_notes(copy) == [
        "cp is a program, not one of the offered tools: your cp call ran with bash as the command line "
        "`cp app.ini 'build/my app.ini'`. To run a program, call bash with its command line."
    ]
    # strictly read, without bash, a made-up tool, or arguments that are no command line: the error stays
    strict, _ = find_calls(block, LENIENT_TOOLS, schemas=SCHEMAS)
    no_bash, _ = find_calls(block, ["read_file"], lenient=True)
    made_up, _ = lenient('{"name": "rename_function", "arguments": {"old": "a", "new": "b"}}')
    unclear, _ = lenient('{"name": "cp", "arguments": {"recursive": true, "source": "a"}}')
    for (call,) in (strict, no_bash, made_up, unclear):
        assert call.name == UNREADABLE and call.error and not call.program


def test_a_python_triple_quoted_string_is_read_leniently_as_a_string() -> None:
    block = (
        '<tools>\n{"name": "edit_file", "arguments": {"path": "s.py", "new_text": """\nx = \'a\'\n""", '
        '"old_text": "y"}}\n</tools>'
    )
    (found,), _ = lenient(block)
    assert (found.name, args(found), found.repaired) == (
        "edit_file",
        {"path": "s.py", "new_text": "\nx = 'a'\n", "old_text": "y"},
        True,
    )
    (single,), _ = lenient('{"name": "bash", "arguments": {"command": \'\'\'echo "hi"\'\'\'}}')
    assert args(single) == {"command": 'echo "hi"'}
    (strict,), _ = find_calls(block, LENIENT_TOOLS, schemas=SCHEMAS)
    assert strict.error and "not valid JSON" in strict.error


def test_quotes_left_unescaped_inside_a_string_are_read_leniently_as_text() -> None:
    """Seen (2026-12-07, fix_from_check): a docstring's three quotes written into new_text as they
    are, the same block sent four times to the loop stop."""
    block = (
        '```json\n{"name": "edit_file", "arguments": {"path": "slug.py", "old_text": "    return title.lower()", '
        '"new_text": "    """A slug."""\\n    return "-".join(title.lower().split())"}}\n```'
    )
    (found,), _ = lenient(block)
    assert (found.name, args(found), found.repaired) == (
        "edit_file",
        {
            "path": "slug.py",
            "old_text": "    return title.lower()",
            "new_text": '    """A slug."""\n    return "-".join(title.lower().split())',
        },
        True,
    )
    toml = '{"name": "write_file", "arguments": {"path": "net.toml", "content": "host = "example.org"\\n"}}'
    (written,), _ = lenient(toml)
    assert args(written) == {"path": "net.toml", "content": 'host = "example.org"\n'}
    (items,), _ = lenient('{"name": "grep", "arguments": {"pattern": "say "hi"", "path": "."}}')
    assert args(items) == {"pattern": 'say "hi"', "path": "."}
    (strict,), _ = find_calls(block, LENIENT_TOOLS, schemas=SCHEMAS)
    assert strict.error and "not valid JSON" in strict.error
    assert escape_stray_quotes('{"a": ["x", "y"], "b": "ok"}') == ""  # nothing to escape: nothing to try


def test_a_backslash_json_does_not_escape_is_kept_leniently() -> None:
    """Seen (2026-12-07, rename_across_files): `{} \\;` of find -exec read by JSON5 as `{} ;`, and
    find failed four times to the loop stop with "missing argument to `-exec'"."""
    block = '{"name": "bash", "arguments": {"command": "find . -name \'*.py\' -exec sed -i \'s/a\\.b/c/\' {} \\;"}}'
    (found,), _ = lenient(block)
    assert (args(found), found.repaired) == ({"command": "find . -name '*.py' -exec sed -i 's/a\\.b/c/' {} \\;"}, True)
    (commented,), _ = lenient('{"name": "bash", "arguments": {"command": "echo \\$HOME",}} // a comment')
    assert args(commented) == {"command": "echo \\$HOME"}
    (strict,), _ = find_calls(block, LENIENT_TOOLS, schemas=SCHEMAS)
    assert strict.error and "not valid JSON" in strict.error


def test_braces_doubled_as_in_a_format_string_are_read_leniently_once() -> None:
    block = '{{"name": "edit_file", "arguments": {"path": "net.toml", "old_text": "a", "new_text": "b"}}}'
    (found,), _ = lenient(block)
    assert (found.name, args(found), found.repaired) == (
        "edit_file",
        {"path": "net.toml", "old_text": "a", "new_text": "b"},
        True,
    )
    (strict,), _ = find_calls(block, LENIENT_TOOLS, schemas=SCHEMAS)
    assert strict.error


def test_a_call_wrapped_in_a_results_tag_inside_a_block_is_read_leniently() -> None:
    """Seen (2026-12-07, claimed_change): turned back, the 1.5B model wrote its right edit as
    "You can now run `edit_file`:" and a ```python block holding <tool_response>{call}</tool_response>,
    left unclosed; it was read as prose and the run ended with nothing changed."""
    edit = '{"name": "edit_file", "arguments": {"path": "greet.py", "old_text": "Hello", "new_text": "Howdy"}}'
    reply = f"You can now run `edit_file`:\n\n```python\n<tool_response>\n    {edit}\n</tool_response>"
    (found,), prose = lenient(reply)
    assert (found.name, args(found), found.repaired) == (
        "edit_file",
        {"path": "greet.py", "old_text": "Hello", "new_text": "Howdy"},
        True,
    )
    assert prose == "You can now run `edit_file`:"
    assert find_calls(reply, LENIENT_TOOLS, schemas=SCHEMAS) == ([], reply)  # strictly: prose
    # a result the model wrote (numbered lines) in such a tag is no call
    shown = "```python\n<tool_response>\n     1\tMESSAGE = 'Howdy'\n</tool_response>\n```"
    assert lenient(shown) == ([], shown)


def test_a_block_of_one_call_a_line_is_those_calls() -> None:
    """Seen (2026-12-07, one_command): two write_file calls on consecutive lines of one ```json
    block were refused as one unreadable call, four times, to the loop stop."""
    text = (
        "Here is the result:\n\n```json\n"
        '{"name": "write_file", "arguments": {"content": "a", "path": "build/a.ini"}}\n'
        '{"name": "ls", "arguments": {"path": "build"}}\n```\n\nThis creates the file.'
    )
    for lenient in (False, True):
        calls, prose = find_calls(text, TOOLS, lenient=lenient)
        assert [(c.name, args(c), c.error) for c in calls] == [
            ("write_file", {"content": "a", "path": "build/a.ini"}, ""),
            ("ls", {"path": "build"}, ""),
        ]
        assert prose == "Here is the result:\n\nThis creates the file."
    # a line that is no call: the block stays one unreadable call, with its spot
    broken = text.replace('{"name": "ls", "arguments": {"path": "build"}}', '{"name": "ls", "arguments": {"path": ')
    (call,) = find_calls(broken, TOOLS)[0]
    assert call.error and "not valid JSON" in call.error


def test_leniently_a_call_written_twice_in_one_reply_runs_once() -> None:
    """Seen (2026-12-07, one_command): each call written in a numbered step and again at the
    reply's end ran twice; the second edit failed on the first's result and the model repeated."""
    edit = '{"name": "edit_file", "arguments": {"path": "a.ini", "old_text": "x", "new_text": "y"}}'
    text = f"1. Edit it:\n   ```json\n   {edit}\n   ```\n\n2. Done.\n\n```json\n{edit}\n```"
    assert [c.name for c in find_calls(text, TOOLS, lenient=True)[0]] == ["edit_file"]
    assert [c.name for c in find_calls(text, TOOLS)[0]] == ["edit_file", "edit_file"]  # strict: as written
    other = text.replace('"new_text": "y"}}\n```', '"new_text": "z"}}\n```')
    assert len(find_calls(other, TOOLS, lenient=True)[0]) == 2
